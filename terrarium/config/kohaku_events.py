"""What wakes a KohakuTerrarium creature, read as terrarium's: its ``triggers:`` entries,
``startup_trigger`` and ``input:``.

KohakuTerrarium's timer is ``{type: timer, prompt, interval, immediate}`` (the numbers
either beside ``type`` or under ``options:``); terrarium's is ``{type: timer, every,
text}`` and fires first after ``every`` seconds, so ``immediate: true`` is one more
``startup`` trigger with the same text. ``startup_trigger: {prompt}`` is terrarium's
``startup`` trigger. KohakuTerrarium's terminal inputs (``cli``, ``tui``, ``none``) are how
``terrarium run`` already talks to a creature, so they are read, not refused; its channel,
context and class triggers and its input modules get one plain line each.
"""

from __future__ import annotations

from typing import Any

from terrarium.config.kohaku_finding import Finding, not_supported
from terrarium.config.yamlio import KeyPath

__all__ = ["normalize_input", "normalize_triggers"]

_TERRARIUM_KINDS = ("timer", "cron", "idle", "startup")
_KT_TRIGGER_KEYS = ("prompt", "options", "interval", "immediate", "module", "class",
                    "class_name")
# KohakuTerrarium's trigger kinds terrarium does not have → what to use instead
_KT_TRIGGER_INSTEAD: dict[str, str] = {
    "channel": "`channels.listen` on the creature's entry in terrarium.yaml (a message on a "
               "channel it listens to wakes it)",
    "context": "an `idle` trigger (`{type: idle, after: SECONDS, text: ...}`) or messages on "
               "a channel",
    "custom": "terrarium's `triggers` (`type:` timer, cron, idle or startup)",
    "package": "terrarium's `triggers` (`type:` timer, cron, idle or startup)",
}
# KohakuTerrarium's terminal inputs → what terrarium does instead (always the same thing)
_KT_INPUTS: dict[str, str] = {
    "cli": "`terrarium run` reads the terminal (or `--input TEXT`)",
    "cli_nonblocking": "`terrarium run` reads the terminal (or `--input TEXT`)",
    "tui": "`terrarium run --tui` is the full-screen monitor",
    "none": "a creature with no user input is woken by its triggers and channels; "
            "`terrarium run` without `--input` just waits for them",
}


def _unsupported(kp: KeyPath, feature: str, instead: str) -> Finding:
    return Finding("unsupported", kp, not_supported(feature, instead))


def _kt_timer(entry: dict[str, Any], kp: KeyPath, out: list[Finding],
              extra: list[dict[str, Any]]) -> dict[str, Any]:
    opts = entry.get("options") if isinstance(entry.get("options"), dict) else {}
    interval = entry.get("interval", opts.get("interval"))
    immediate = entry.get("immediate", opts.get("immediate", False))
    text = entry.get("prompt")
    timer: dict[str, Any] = {"type": "timer"}
    if isinstance(entry.get("name"), str):
        timer["name"] = entry["name"]
    if interval is not None:
        timer["every"] = interval
    if isinstance(text, str):
        timer["text"] = text
    said = f"timer every {interval} s" if interval is not None else "timer"
    if immediate is True:
        extra.append({k: v for k, v in timer.items() if k != "every"} | {"type": "startup"})
        said += " and a startup trigger (KohakuTerrarium's `immediate: true`)"
    out.append(Finding("changed", kp, f"KohakuTerrarium's timer is terrarium's {said}"
                        + (" with `text:` its prompt" if isinstance(text, str) else "")))
    return timer


def normalize_triggers(data: dict[str, Any], out: list[Finding]) -> None:
    """Rewrite ``triggers:`` entry by entry and ``startup_trigger`` in place."""
    triggers = data.get("triggers")
    extra: list[dict[str, Any]] = []
    if isinstance(triggers, list):
        kept: list[Any] = []
        for i, entry in enumerate(triggers):
            kind = entry.get("type") if isinstance(entry, dict) else None
            kp: KeyPath = ("triggers", i)
            if not isinstance(entry, dict) or "type" not in entry or (
                    kind in _TERRARIUM_KINDS and not set(_KT_TRIGGER_KEYS) & set(entry)):
                kept.append(entry)  # terrarium's form, or a mistake the schema names
            elif kind == "timer":
                kept.append(_kt_timer(entry, kp, out, extra))
            elif isinstance(kind, str) and kind in _KT_TRIGGER_INSTEAD:
                out.append(_unsupported(kp, f"{kind} trigger (`type: {kind}`)",
                                        _KT_TRIGGER_INSTEAD[kind]))
            else:
                kept.append(entry)  # not KohakuTerrarium's either: the schema names it
        data["triggers"] = kept
    startup = data.get("startup_trigger")
    if "startup_trigger" in data:
        if isinstance(startup, dict) and set(startup) <= {"prompt"}:
            data.pop("startup_trigger")
            text = startup.get("prompt")
            extra.append({"type": "startup", **({"text": text} if isinstance(text, str)
                                                else {})})
            out.append(Finding("changed", ("startup_trigger",),
                                "startup_trigger is a `startup` trigger (`triggers:`)"))
        else:
            data.pop("startup_trigger")
            out.append(_unsupported(("startup_trigger",), "`startup_trigger` other than "
                                    "`{prompt: TEXT}`", "`triggers: [{type: startup, text: "
                                    "TEXT}]`"))
    if extra:
        if not isinstance(data.get("triggers"), list):
            data["triggers"] = []
        data["triggers"].extend(extra)  # after the written ones, whose places errors name


def normalize_input(data: dict[str, Any], out: list[Finding]) -> None:
    """``input:``: a terminal input is read (it is what ``terrarium run`` does); an input
    module is one plain line."""
    if "input" not in data:
        return
    spec = data.pop("input")
    kind = spec.get("type", "cli") if isinstance(spec, dict) else None
    if isinstance(kind, str) and kind in _KT_INPUTS and not {"module", "class",
                                                            "class_name"} & set(spec):
        out.append(Finding("changed", ("input",), f"input.type {kind} dropped: "
                            f"{_KT_INPUTS[kind]}"))
        return
    out.append(_unsupported(("input",) if not isinstance(spec, dict) or "type" not in spec
                            else ("input", "type"), "input modules (`input:`)",
                            "`terrarium.input_channel` or `terrarium run --input TEXT`"))
