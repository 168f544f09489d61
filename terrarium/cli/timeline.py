"""``terrarium log``: the list of runs, and one run's timeline, for people and for scripts.

A person reads local clock times, durations in milliseconds, one event per line and
payloads folded to one short line; a script reads ``--json`` (one JSON object per line,
nothing folded). ``--creature``, ``--kind`` and ``--since`` narrow either. The list of
runs shows when each started, how long it took, how it ended, and whether a run still
marked ``running`` has a live process (its pid is recorded at start) or was killed.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from terrarium.channels.log import DurableLog, RunInfo
from terrarium.errors import TerrariumError, closest_name

__all__ = [
    "ROW_KINDS",
    "Row",
    "check_kinds",
    "creatures_seen",
    "format_rows",
    "format_runs",
    "parse_since",
    "run_rows",
    "runs_json",
    "timeline_rows",
]

# events whose content another line of the timeline already shows (`--kind` still gets them)
_SAME_AS: dict[str, str] = {"message_sent": "message", "message_delivered": "message",
                            "turn_started": "turn", "turn_ended": "turn",
                            # a served session's reply, piece by piece (its turn has it whole)
                            "output_text": "turn"}
_FOLD = 140  # characters of a folded payload


@dataclass(frozen=True, slots=True)
class Row:
    """One timeline line: when, what kind, who, on which channel, and its data."""

    ts: float
    kind: str
    creature: str
    channel: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"ts": self.ts, "time": datetime.fromtimestamp(self.ts).isoformat(
            timespec="milliseconds"), "kind": self.kind, "creature": self.creature,
            "channel": self.channel, "data": dict(self.data)}


# ------------------------------------------------------------------ the run's rows
def timeline_rows(log: DurableLog, run_id: str) -> list[Row]:
    """Every recorded thing of the run as rows, in time order."""
    rows: list[Row] = []
    for env, receivers in log.messages(run_id):
        rows.append(Row(env.ts, "message", env.sender, env.channel,
                        {"id": env.id, "to": list(receivers), "payload": env.payload}))
    for e in log.timeline(run_id):  # consumption rows are only in the joined timeline
        if e.kind == "consumed":
            rows.append(Row(e.ts, "consumed", e.actor, e.channel, {"message": e.detail}))
    for ref in log.refusals(run_id):
        rows.append(Row(ref.ts, "refused", ref.sender, ref.channel,
                        {"reason": ref.reason, "payload": ref.payload}))
    for t in log.turns(run_id):
        data: dict[str, Any] = {"turn": t.turn_index, "prompt_tokens": t.prompt_tokens,
                                "cached_tokens": t.cached_tokens,
                                "completion_tokens": t.completion_tokens,
                                "calls": [c.get("name") for c in t.calls if isinstance(c, dict)]}
        if t.ended is not None:
            data["ms"] = round((t.ended - t.started) * 1000, 1)
        if t.error:
            data["error"] = t.error
        rows.append(Row(t.started, "turn", t.creature, None, data))
    for d in log.events(run_id):
        kind = str(d.get("kind", "?"))
        data = {k: v for k, v in d.items() if k not in ("kind", "ts", "creature")}
        rows.append(Row(float(d.get("ts", 0.0)), kind, str(d.get("creature") or "-"),
                        data.get("channel") if isinstance(data.get("channel"), str) else None,
                        data))
    rows.sort(key=lambda r: r.ts)
    return rows


ROW_KINDS = frozenset({"message", "consumed", "refused", "turn"})
"""The timeline's own kinds of line, beside the recorded events' and transcript entries'."""


def check_kinds(kinds: Sequence[str], rows: Sequence[Row]) -> None:
    """``--kind`` names only kinds there are: one that no event, transcript entry or
    timeline line has, and that this run never recorded either, is a typo to be told, not
    a silent "(nothing recorded that matches)"."""
    from typing import get_args

    from terrarium.events import EntryKind
    from terrarium.events.codec import EVENT_TYPES

    known = ROW_KINDS | set(EVENT_TYPES) | set(get_args(EntryKind))
    seen = {r.kind for r in rows} | {_entry_kind(r) for r in rows}
    for k in (k.strip() for spec in kinds for k in spec.split(",")):
        if k and k not in known and k not in seen:
            close = closest_name(k, sorted(known))
            raise TerrariumError(f"--kind {k!r} is not a kind of event",
                                 suggestion=f"did you mean {close!r}?" if close else
                                 "e.g. message, turn, refused, error, transcript, "
                                 "tool_call, tool_result, notice, job_started")


def creatures_seen(rows: Iterable[Row]) -> list[str]:
    """The creatures a run's lines name (sub-agents as their parent), for a ``--creature``
    that matched none of them."""
    return sorted({r.creature.split("/")[0] for r in rows} - {"-", ""})


def select(rows: Iterable[Row], *, creature: str | None = None,
           kinds: Sequence[str] = (), since: float | None = None,
           everything: bool = False) -> list[Row]:
    """The rows ``--creature`` (a creature and its sub-agents), ``--kind`` and ``--since``
    keep; without ``--kind``, lines another line repeats are left out unless ``everything``."""
    wanted = {k.strip() for spec in kinds for k in spec.split(",") if k.strip()}
    out: list[Row] = []
    for r in rows:
        if creature and not (r.creature == creature or r.creature.startswith(creature + "/")):
            continue
        if wanted and r.kind not in wanted and not (r.kind == "transcript"
                                                     and _entry_kind(r) in wanted):
            continue
        if not wanted and not everything and r.kind in _SAME_AS:
            continue
        if since is not None and r.ts < since:
            continue
        out.append(r)
    return out


def format_rows(rows: Sequence[Row], run: RunInfo | None) -> str:
    """The readable timeline: a header, then ``HH:MM:SS.mmm +N ms kind creature detail``."""
    lines: list[str] = []
    if run is not None:
        lines.append(_run_header(run))
    start = run.started if run is not None else (rows[0].ts if rows else 0.0)
    for r in rows:
        clock = datetime.fromtimestamp(r.ts).strftime("%H:%M:%S.%f")[:-3]
        offset = _ms(r.ts - start)
        who = r.creature + (f" [{r.channel}]" if r.channel else "")
        lines.append(f"{clock} {offset:>10}  {r.kind:<18} {who:<18} {_detail(r)}".rstrip())
    if not rows:
        lines.append("(nothing recorded" + (" that matches)" if run is not None else ")"))
    return "\n".join(lines)


def _run_header(run: RunInfo) -> str:
    started = datetime.fromtimestamp(run.started).strftime("%Y-%m-%d %H:%M:%S")
    took = f", took {_duration(run.ended - run.started)}" if run.ended else ""
    return f"run {run.run_id}  {run.terrarium}  started {started}{took}  status {run.status}"


def _entry_kind(r: Row) -> str:
    entry = r.data.get("entry")
    return str(entry.get("kind")) if isinstance(entry, Mapping) else ""


def _detail(r: Row) -> str:
    d = r.data
    if r.kind == "message":
        return f"{d.get('id')} → {', '.join(d.get('to') or []) or '-'}: {_fold(d.get('payload'))}"
    if r.kind == "consumed":
        return str(d.get("message", ""))
    if r.kind == "refused":
        return _fold(d.get("reason"))
    if r.kind == "turn":
        calls = ", ".join(c for c in d.get("calls") or [] if c) or "no calls"
        took = f", {d['ms']:.0f} ms" if "ms" in d else ""
        error = f"; error: {_fold(d['error'])}" if d.get("error") else ""
        return (f"#{d.get('turn')} {d.get('prompt_tokens')} tokens in "
                f"({d.get('cached_tokens')} cached), {d.get('completion_tokens')} out; "
                f"{calls}{took}{error}")
    if r.kind == "transcript":
        e = d.get("entry") if isinstance(d.get("entry"), Mapping) else {}
        name = f" {e.get('name')}" if e.get("name") and e.get("kind") != "tool_call" else ""
        text = e.get("text", "")
        if e.get("kind") == "tool_call" and e.get("detail"):
            text = f"{text} {e.get('detail')}"
        data = e.get("data") if isinstance(e.get("data"), Mapping) else {}
        bad = " (failed)" if e.get("kind") == "tool_result" and data.get("ok") is False else ""
        return f"{e.get('kind')}{name}{bad}: {_fold(text)}"
    if r.kind == "prompt":
        return (f"{d.get('tokens')} tokens, prefix {str(d.get('prefix_hash', ''))[:12]}, "
                f"{len(d.get('sections') or [])} sections")
    return " ".join(f"{k}={_value(k, v)}" for k, v in d.items() if v not in (None, "", [], {}))


def _value(key: str, v: Any) -> str:
    if key == "seconds" and isinstance(v, (int, float)):
        return f"{float(v) * 1000:,.0f} ms"
    if key in ("ms", "synth_ms") and isinstance(v, (int, float)):
        return f"{v:.0f} ms"
    if isinstance(v, float):
        return f"{v:.3g}"
    return _fold(v, 80)


def _fold(value: Any, limit: int = _FOLD) -> str:
    """A payload on one short line: ``key: value; ...`` (long text cut with …)."""
    if isinstance(value, Mapping):
        text = "; ".join(f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                         for k, v in value.items())
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    text = " ⏎ ".join(p.strip() for p in text.strip().splitlines() if p.strip())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ms(seconds: float) -> str:
    return f"{'+' if seconds >= 0 else '-'}{abs(seconds) * 1000:,.0f} ms"


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    return f"{minutes // 60} h {minutes % 60} min"


# ------------------------------------------------------------------ the list of runs
def _alive(pid: int) -> bool | None:
    """Whether process ``pid`` exists on this machine (None: not recorded)."""
    if pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    except OSError:
        return None
    return True


def run_rows(log: DurableLog, since: float | None = None) -> list[dict[str, Any]]:
    """Each run as a record: id, terrarium, start, end, duration, status, pid, alive."""
    pids = log.run_pids()
    out: list[dict[str, Any]] = []
    for run in log.runs():
        if since is not None and run.started < since:
            continue
        pid = pids.get(run.run_id, 0)
        alive = _alive(pid) if run.status == "running" else None
        end = run.ended if run.ended is not None else (time.time() if alive else None)
        out.append({"run_id": run.run_id, "terrarium": run.terrarium,
                    "started": run.started, "ended": run.ended,
                    "seconds": None if end is None else round(end - run.started, 3),
                    "status": run.status, "pid": pid or None, "alive": alive})
    return out


def format_runs(records: Sequence[Mapping[str, Any]]) -> str:
    """The runs as aligned columns: id, started, duration, status, terrarium."""
    if not records:
        return "(no runs recorded)"
    lines = [f"{'RUN':<30}  {'STARTED':<19}  {'DURATION':>10}  {'STATUS':<28}  TERRARIUM"]
    for r in records:
        started = datetime.fromtimestamp(r["started"]).strftime("%Y-%m-%d %H:%M:%S")
        took = "-" if r["seconds"] is None else _duration(r["seconds"])
        status = r["status"]
        if status == "running":
            if r["alive"] is True:
                status = f"running (pid {r['pid']})"
            elif r["alive"] is False:
                status = f"running? pid {r['pid']} is gone"
                took = "-"
            else:
                status = "running? (pid unknown)"
        lines.append(f"{r['run_id']:<30}  {started}  {took:>10}  {status:<28}  "
                     f"{r['terrarium']}")
    return "\n".join(lines)


def runs_json(records: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(json.dumps(dict(r), ensure_ascii=False) for r in records)


# ------------------------------------------------------------------ --since
_AGO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d)\s*$", re.IGNORECASE)
_UNIT = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


def parse_since(text: str, now: datetime | None = None) -> float:
    """``--since``: a time ago (``90s``, ``10m``, ``2h``, ``1d``), a local time today
    (``14:05``, ``14:05:30``) or a local date and time (``2026-12-01 14:05``)."""
    now = now or datetime.now()
    if not text.strip():
        raise TerrariumError("--since is empty", suggestion="e.g. --since 10m, --since 14:05, "
                             "--since '2026-12-01 14:05'; or leave it out")
    if m := _AGO.match(text):
        try:
            return (now - timedelta(seconds=float(m.group(1)) * _UNIT[m.group(2).lower()])
                    ).timestamp()
        except (OverflowError, ValueError):  # before the year 1: no run is that old
            raise TerrariumError(f"--since {text!r} is further back than a date can be",
                                 suggestion="leave --since out to see everything") from None
    for fmt in ("%H:%M", "%H:%M:%S"):
        try:
            t = datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
        return now.replace(hour=t.hour, minute=t.minute, second=t.second,
                           microsecond=0).timestamp()
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except ValueError:
        raise TerrariumError(f"--since {text!r} is neither a time ago, a time of day nor a "
                             "date", suggestion="e.g. --since 10m, --since 14:05, "
                             "--since '2026-12-01 14:05'") from None
