"""``terrarium migrate KT_PATH OUT_DIR``: a KohakuTerrarium package, terrarium or creature
rewritten as a terrarium one, with a report of every change and every dropped feature.

The folder is copied whole (prompts, skills, code), then each ``kohaku.yaml``,
``terrarium.yaml`` and creature ``config.yaml`` is rewritten with the same translations
validation applies (:mod:`terrarium.config.kohaku_compat`), plus the few a loader cannot
make silently: an inline ``system_prompt`` becomes a prompt file, ``max_messages`` and
``ephemeral`` become ``history_turns``, channel names lose their ``-``, a channel written
without ``type`` gets the kind it has in KohakuTerrarium, a team gets one shared workspace,
and ``{% include "NAME" %}`` of a package prompt names its file. YAML files are rewritten
round-trip (ruamel.yaml), so their comments stay.

The result then goes through the same full check as ``terrarium validate`` (prompt assembly
included); ``MIGRATION.md`` says "passes" only when it does, and lists what was changed,
what was dropped and which behaviour differs.
"""

from __future__ import annotations

import argparse
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from terrarium.cli.options import folder_problem
from terrarium.config.kohaku_compat import (
    ENTRY_UNSUPPORTED,
    TERRARIUM_UNSUPPORTED,
    WIRING_UNSUPPORTED,
    Finding,
    kt_channel_kinds,
    normalize_creature,
    normalize_package,
    not_supported,
)
from terrarium.errors import ConfigErrors, TerrariumError

__all__ = ["REPORT_FILE", "cmd_migrate", "migrate"]

REPORT_FILE = "MIGRATION.md"
_CREATURE_FILES = ("config.yaml", "config.yml")
_TEXT_SUFFIXES = (".md", ".txt", ".j2", ".jinja", ".jinja2")
_INCLUDE = re.compile(r"""(\{%-?\s*include\s+)(["'])([^"']+)\2""")


@dataclass(slots=True)
class Report:
    """Every change, every dropped feature and every behaviour that differs, by file."""

    root: Path
    changed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    behaviour: list[str] = field(default_factory=list)

    def add(self, path: Path, findings: list[Finding], prefix: tuple[Any, ...] = ()) -> None:
        rel = path.relative_to(self.root)
        for f in findings:
            where = ".".join(str(k) for k in (*prefix, *f.key_path))
            (self.dropped if f.kind == "unsupported" else self.changed).append(
                f"{rel}: {where}: {f.text}")

    def change(self, path: Path, text: str) -> None:
        self.changed.append(f"{path.relative_to(self.root)}: {text}")

    def drop(self, path: Path, where: str, text: str) -> None:
        self.dropped.append(f"{path.relative_to(self.root)}: {where}: {text}")

    def differs(self, path: Path | None, text: str) -> None:
        line = f"{path.relative_to(self.root)}: {text}" if path is not None else text
        if line not in self.behaviour:
            self.behaviour.append(line)

    def render(self, validated: str) -> str:
        lines = ["# Migration from KohakuTerrarium", "",
                 "YAML files were rewritten in place (their comments are kept); every other "
                 "file was copied unchanged, except prompt files whose `{% include %}` was "
                 "rewritten (listed below).", "",
                 f"## Changed ({len(self.changed)})", ""]
        lines += [f"- {c}" for c in self.changed] or ["- nothing"]
        lines += ["", f"## Dropped: not supported by terrarium ({len(self.dropped)})", ""]
        lines += [f"- {d}" for d in self.dropped] or ["- nothing"]
        lines += ["", f"## Behaviour that differs from KohakuTerrarium ({len(self.behaviour)})",
                  ""]
        lines += [f"- {b}" for b in self.behaviour] or ["- nothing"]
        lines += ["", "## Validation", "", validated, ""]
        return "\n".join(lines)


def _yaml() -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096  # never fold a long line the author wrote on one
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def _load(path: Path) -> Any:
    from ruamel.yaml import YAMLError

    try:
        return _yaml().load(path.read_text(encoding="utf-8"))
    except (YAMLError, UnicodeDecodeError):
        return None


def _dump(path: Path, data: Any) -> None:
    with path.open("w", encoding="utf-8") as f:
        _yaml().dump(data, f)


def _known_tool(name: str) -> bool:
    from terrarium.tools.registry import known_tool_names

    return name in known_tool_names()


def _write_prompt(folder: Path, stem: str, data: dict[str, Any], report: Report,
                  where: Path) -> None:
    """An inline ``system_prompt`` (appended last in KohakuTerrarium) → a prompt file."""
    inline = data.pop("system_prompt", None)
    if not isinstance(inline, str):
        return
    parts = []
    own = data.get("system_prompt_file")
    if isinstance(own, str) and (folder / own).is_file():
        parts.append((folder / own).read_text(encoding="utf-8"))
    parts.append(inline)
    target = folder / "prompts" / f"{stem}_inline.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n\n".join(parts), encoding="utf-8")
    data["system_prompt_file"] = str(target.relative_to(folder))
    report.change(where, f"inline system_prompt written to {target.relative_to(report.root)}")


def _history(data: dict[str, Any], report: Report, where: Path) -> None:
    """``max_messages``/``ephemeral`` (on the creature or in its controller, as
    KohakuTerrarium allows) → the creature's ``history_turns``, never a controller key."""
    ctl = data.get("controller")
    for owner, prefix in ((data, ""), (ctl, "controller.")):
        if not isinstance(owner, dict):
            continue
        if "max_messages" in owner:
            n = owner.pop("max_messages")
            if isinstance(n, int) and n > 0:
                data.setdefault("history_turns", n)
                report.change(where, f"{prefix}max_messages {n} is history_turns {n}")
        if "ephemeral" in owner and owner.pop("ephemeral") is True:
            data["history_turns"] = 0
            report.change(where, f"{prefix}ephemeral: true is history_turns: 0")


_ENTRY_ONLY = ("name", "config", "base_config", "channels", "output_wiring", "listen")


def _creature(data: dict[str, Any], folder: Path, stem: str, report: Report, where: Path,
              prefix: tuple[Any, ...] = (), *, root: bool = False,
              package_tools: dict[str, str] | None = None, entry_done: bool = False) -> None:
    if prefix and not entry_done:  # a terrarium entry: its wiring keys are not creature keys
        wiring = {k: data.pop(k) for k in _ENTRY_ONLY if k in data}
        _creature(data, folder, stem, report, where, prefix, root=root,
                  package_tools=package_tools, entry_done=True)
        for k, v in reversed(list(wiring.items())):  # wiring first again, as written
            if hasattr(data, "insert"):  # a ruamel mapping keeps the order and comments
                data.insert(0, k, v)
            else:
                data[k] = v
        return
    _write_prompt(folder, stem, data, report, where)
    _history(data, report, where)
    report.add(where, normalize_creature(data, known_tool=_known_tool,
                                         package_tools=package_tools, root=root), prefix)
    rounds = data.get("max_iterations")
    if isinstance(rounds, int) and not isinstance(rounds, bool):  # KT's kept in range
        report.differs(where, f"{'.'.join(map(str, (*prefix, 'max_iterations')))}: "
                       f"{rounds} is terrarium's model rounds in one turn; in "
                       "KohakuTerrarium it was a budget of model calls for the whole run, "
                       "shared with sub-agents (`terrarium run --max-turns N` bounds a run)")
    if isinstance(data.get("controller"), dict) and not data["controller"]:
        data.pop("controller")  # emptied (its keys moved up): an empty block reads as a mistake


def _rename(names: Any, renamed: dict[str, str]) -> Any:
    if isinstance(names, list):
        for i, n in enumerate(names):
            if isinstance(n, str) and n in renamed:
                names[i] = renamed[n]
        return names
    return renamed.get(names, names) if isinstance(names, str) else names


def _channel_kinds(spec: dict[str, Any], path: Path, report: Report) -> None:
    """A channel written without ``type`` gets the kind it has in KohakuTerrarium, written
    out (see :func:`kt_channel_kinds`)."""
    for cname, kind, why in kt_channel_kinds(spec):
        report.change(path, f"channel {cname!r} had no type: written `type: {kind}` ({why})")


def _wiring(entry: dict[str, Any], kp: tuple[Any, ...], renamed: dict[str, str], path: Path,
            report: Report) -> None:
    """``output_wiring`` entries → their targets: a content-free ping is dropped, a
    ``prompt`` template is dropped but its text is still delivered."""
    wires = entry.get("output_wiring")
    if not isinstance(wires, list):
        return
    for j in reversed(range(len(wires))):
        w = wires[j]
        where = ".".join(map(str, (*kp, "output_wiring", j)))
        if isinstance(w, dict) and w.get("with_content") is False:
            report.drop(path, where, not_supported(*WIRING_UNSUPPORTED["with_content"]))
            del wires[j]
            continue
        if isinstance(w, dict) and w.get("prompt"):
            report.drop(path, f"{where}.prompt", not_supported(*WIRING_UNSUPPORTED["prompt"]))
        wires[j] = _rename(w.get("to") if isinstance(w, dict) else w, renamed)


def _input_channel(spec: dict[str, Any], interface: Any, renamed: dict[str, str], path: Path,
                   report: Report) -> None:
    """A team without a root takes user text on its ``input_channel``. KohakuTerrarium's
    ``--seed`` goes to the channel ``seed`` (or ``--seed-channel``), its interface's
    ``inject_to`` names channels the user writes on: the first that exists is it."""
    channels = spec.get("channels") if isinstance(spec.get("channels"), dict) else {}
    inject = interface.get("inject_to") if isinstance(interface, dict) else None
    for name, why in [("seed", "KohakuTerrarium's `--seed` channel"),
                      *[(renamed.get(c, c), "the first channel of `interface.inject_to`")
                        for c in (inject if isinstance(inject, list) else [])
                        if isinstance(c, str)]]:
        if name in channels:
            spec["input_channel"] = name
            report.change(path, f"terrarium.input_channel: {name} ({why}): "
                          "`terrarium run --input TEXT` sends TEXT there")
            return
    report.differs(path, "the team has no root and no `input_channel`, so `terrarium run "
                   "--input TEXT` has nowhere to send TEXT (KohakuTerrarium's `--seed TEXT "
                   "--seed-channel C`): set `terrarium.input_channel: C` to the channel that "
                   "starts the work")


def _terrarium(data: dict[str, Any], path: Path, report: Report,
               package_tools: dict[str, str]) -> None:
    spec = data.get("terrarium")
    if not isinstance(spec, dict):
        return
    folder = path.parent
    interface = spec.get("interface")
    for key, (feature, instead) in TERRARIUM_UNSUPPORTED.items():
        if key in spec:
            spec.pop(key)
            report.drop(path, f"terrarium.{key}", not_supported(feature, instead))
    renamed: dict[str, str] = {}
    channels = spec.get("channels")
    if isinstance(channels, dict):
        for cname in list(channels):
            decl = channels[cname]
            if isinstance(decl, str) or decl is None:
                channels[cname] = {"description": decl or ""}
            new = cname.replace("-", "_") if isinstance(cname, str) else cname
            if new != cname:
                renamed[cname] = new
                channels[new] = channels.pop(cname)
                report.change(path, f"channel {cname!r} renamed {new!r}")
    if "input_channel" in spec:
        spec["input_channel"] = _rename(spec["input_channel"], renamed)
    elif spec.get("root") is None:
        _input_channel(spec, interface, renamed, path, report)
    for i, entry in enumerate(spec.get("creatures") or []):
        if not isinstance(entry, dict):
            continue
        kp = ("terrarium", "creatures", i)
        name = entry.get("name", str(i))
        for key, (feature, instead) in ENTRY_UNSUPPORTED.items():
            if key in entry:
                entry.pop(key)
                report.drop(path, ".".join(map(str, (*kp, key))), not_supported(feature, instead))
        wiring = entry.get("channels")
        if isinstance(wiring, dict):
            for role in ("listen", "can_send"):
                if role in wiring:
                    wiring[role] = _rename(wiring[role], renamed)
            if wiring.get("can_send") and "base_config" in entry \
                    and "channel_call" not in entry:
                entry["channel_call"] = True  # KohakuTerrarium gives every creature send_channel
                report.change(path, f"creature {name!r}: `channel_call: true` (its "
                              "`send_channel(channel, message)` call)")
        _wiring(entry, kp, renamed, path, report)
        _creature(entry, folder, f"{name}", report, path, kp, package_tools=package_tools)
    root = spec.get("root")
    if isinstance(root, dict):
        _creature(root, folder, "root", report, path, ("terrarium", "root"), root=True,
                  package_tools=package_tools)
        if root.get("listen") not in (None, "*"):
            root["listen"] = _rename(root["listen"], renamed)
        report.differs(path, "the root creature operates the team with terrarium's team tools "
                       "(team_status, team_send, start_creature, stop_creature), also named "
                       "group_status, group_start_node and group_stop_node; KohakuTerrarium's "
                       "other group_* tools (group_send, group_channel, group_add_node, "
                       "group_wire, ...) and its terrarium_*/creature_* tools do not exist "
                       "here, so a prompt naming them names calls the root cannot make")
    _channel_kinds(spec, path, report)
    if "workspace" not in spec:
        spec["workspace"] = "shared"
        report.change(path, "terrarium.workspace: shared (one folder for every creature)")
        report.differs(path, "the creatures share one workspace, runs/RUN_ID/workspace, "
                       "as in KohakuTerrarium (not the current folder: give `workspace: "
                       "PATH` to work in a folder of yours)")
    if any(isinstance(e, dict) and e.get("channel_call") for e in spec.get("creatures") or []):
        report.differs(path, "KohakuTerrarium's send_channel(channel, message) sends "
                       "`{text: message}`; a channel with a schema refuses it (use its "
                       "`send_<channel>` call)")


def _package_prompts(data: dict[str, Any], out_dir: Path, pkg_dir: Path,
                     report: Report, where: Path) -> dict[str, str]:
    """KohakuTerrarium's named prompt fragments (``prompts:``/``templates:``) → the file
    name an ``{% include %}`` finds in the package's ``prompts/`` folder (copied there
    when it lives elsewhere). Returns name → include name."""
    names: dict[str, str] = {}
    for key in ("prompts", "templates"):
        entries = data.get(key)
        if not isinstance(entries, list):
            continue
        keep = []
        for e in entries:
            name, rel = (e.get("name"), e.get("path")) if isinstance(e, dict) else (None, None)
            src = (pkg_dir / rel).resolve() if isinstance(rel, str) else None
            if not isinstance(name, str) or src is None or not src.is_file():
                keep.append(e)
                continue
            prompts = pkg_dir / "prompts"
            if not src.is_relative_to(prompts.resolve()):
                prompts.mkdir(exist_ok=True)
                shutil.copyfile(src, prompts / src.name)
                src = prompts / src.name
            names[name] = str(src.relative_to(prompts.resolve()))
            report.change(where, f"{key}: fragment {name!r} is included as "
                          f"{names[name]!r} (prompts/{names[name]})")
        if keep:
            data[key] = keep
        else:
            data.pop(key)
    return names


def _outer_fragments(source: Path) -> dict[str, Path]:
    """The named fragments of the KohakuTerrarium package that holds ``source`` (a creature
    or terrarium folder migrated alone): name → file."""
    for up in source.parents:
        manifest = up / "kohaku.yaml"
        if not manifest.is_file():
            continue
        data = _load(manifest)
        out: dict[str, Path] = {}
        for key in ("prompts", "templates"):
            for e in data.get(key) or [] if isinstance(data, dict) else []:
                if isinstance(e, dict) and isinstance(e.get("name"), str) \
                        and isinstance(e.get("path"), str) and (up / e["path"]).is_file():
                    out[e["name"]] = (up / e["path"]).resolve()
        return out
    return {}


def _rewrite_includes(out_dir: Path, fragments: dict[str, str], outer: dict[str, Path],
                      report: Report) -> None:
    """``{% include "git-safety" %}`` (a fragment by its package name) → its file name. A
    fragment of a package left outside (a folder migrated alone) is copied beside the file
    that includes it."""
    from terrarium.prompt.templates import prompt_dirs

    if not fragments and not outer:
        return
    for path in sorted(out_dir.rglob("*")):
        if path.suffix not in _TEXT_SUFFIXES or not path.is_file():
            continue
        try:  # bytes, not text mode: a CRLF file keeps its line ends
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        copied: list[str] = []

        def name_of(m: re.Match[str], path: Path = path, copied: list[str] = copied) -> str:
            name = m.group(3)
            if name in fragments:
                return fragments[name]
            src = outer.get(name)
            if src is None:
                return name
            if not any((d / src.name).is_file() for d in prompt_dirs(str(path))):
                shutil.copyfile(src, path.parent / src.name)
                copied.append(src.name)
            return src.name

        new = _INCLUDE.sub(lambda m: m.group(1) + m.group(2) + name_of(m) + m.group(2), text)
        if new != text:
            path.write_bytes(new.encode("utf-8"))
            report.change(path, "`{% include %}` of a package fragment names its file"
                          + (f" (copied beside it: {', '.join(copied)})" if copied else ""))


_CREATURE_KEYS = ("name", "base_config", "controller", "system_prompt", "system_prompt_file",
                  "tools")


def _kt_config_files(out_dir: Path, report: Report) -> None:
    """KohakuTerrarium also reads a creature from config.yml, config.json or config.toml;
    terrarium reads config.yaml only, so each such file (holding a creature's keys, with no
    config.yaml beside it) is written as config.yaml."""
    import json
    import tomllib

    from terrarium.config.loaded_creature import CONFIG_FILE, KT_CONFIG_FILES

    for name in KT_CONFIG_FILES:
        for path in sorted(out_dir.rglob(name)):
            target = path.with_name(CONFIG_FILE)
            if not path.is_file() or target.exists():
                continue
            try:
                text = path.read_text(encoding="utf-8")
                data = (json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
                        if path.suffix == ".toml" else _yaml().load(text))
            except Exception:  # not ours to judge: the final check reports the folder
                continue
            if not isinstance(data, dict) or not any(k in data for k in _CREATURE_KEYS):
                continue
            _dump(target, data)
            path.unlink()
            report.change(target, f"written from {name} (terrarium reads a creature's config "
                          f"from {CONFIG_FILE} only)")


def _model_note(report: Report) -> None:
    import os

    from terrarium.config.creature import DEFAULT_LLM_ENV

    default = os.environ.get(DEFAULT_LLM_ENV, "").strip()
    report.differs(None, "a creature that names no model uses the model preset in "
                   f"{DEFAULT_LLM_ENV} (KohakuTerrarium's default model; e.g. "
                   f"`{DEFAULT_LLM_ENV}=claude-sonnet-4.5`), else the embedded 135M model with "
                   "a 4096-token window" + (f"; this check used {DEFAULT_LLM_ENV}={default}"
                                            if default else "; it was unset for this check"))


def migrate(source: Path, out_dir: Path) -> tuple[Report, str, bool]:
    """Copy and rewrite; returns the report, the validation text and whether it passed."""
    source = source.resolve()
    if not source.is_dir():
        raise TerrariumError(f"{source} is not a folder",
                             suggestion="give a KohakuTerrarium package, terrarium or creature "
                             "folder")
    if problem := folder_problem(out_dir):
        raise TerrariumError(f"cannot write the migrated package there: {problem}",
                             suggestion="give a new folder for the migrated package")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise TerrariumError(f"{out_dir} exists and is not empty",
                             suggestion="give a new folder for the migrated package")
    try:
        shutil.copytree(source, out_dir, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".git", "__pycache__"))
    except shutil.Error as exc:  # every file that would not copy, as one long list
        failed = exc.args[0] if exc.args and isinstance(exc.args[0], list) else []
        first = f", first {failed[0][0]}: {failed[0][2]}" if failed else ""
        raise TerrariumError(f"{len(failed) or 'some'} file(s) of {source} could not be "
                             f"copied{first}", suggestion="remove or fix them (a dangling "
                             "symlink, a named pipe) and migrate again into a new "
                             "folder") from None
    out_dir = out_dir.resolve()
    report = Report(out_dir)
    _kt_config_files(out_dir, report)
    package_tools: dict[str, str] = {}
    fragments: dict[str, str] = {}
    files = sorted(p for p in out_dir.rglob("*.y*ml") if p.is_file())
    for path in files:  # packages first: their tools are named by creatures
        if path.name == "kohaku.yaml":
            data = _load(path)
            if not isinstance(data, dict):
                continue
            fragments.update(_package_prompts(data, out_dir, path.parent, report, path))
            findings, tools = normalize_package(data)
            package_tools.update(tools)
            report.add(path, findings)
            if tools:
                data["tools"] = [{"name": n, "module": r.partition(":")[0],
                                  "class": r.partition(":")[2]} for n, r in tools.items()]
            _dump(path, data)
    for path in files:
        if path.name == "kohaku.yaml":
            continue
        data = _load(path)
        if not isinstance(data, dict):
            continue  # not ours to judge: copied as it was
        if path.name == "terrarium.yaml" or "terrarium" in data:
            _terrarium(data, path, report, package_tools)
        elif path.name in _CREATURE_FILES:
            _creature(data, path.parent, "system", report, path, package_tools=package_tools)
        else:
            continue
        _dump(path, data)
    _rewrite_includes(out_dir, fragments, _outer_fragments(source), report)
    _model_note(report)
    text, ok = _full_check(out_dir)
    (out_dir / REPORT_FILE).write_text(report.render(text), encoding="utf-8")
    return report, text, ok


def _full_check(out_dir: Path) -> tuple[str, bool]:
    """``terrarium validate``'s own check on the result: load, then every start check."""
    from terrarium.runtime.preflight import check_path

    try:
        _, errors = check_path(out_dir)
    except ConfigErrors as exc:
        errors = exc.errors
    if not errors:
        return "`terrarium validate` passes (the same full check, prompt assembly included).", \
            True
    return ("`terrarium validate` does not pass; it reports:\n\n```\n"
            + ConfigErrors(errors).render() + "\n```"), False


def cmd_migrate(args: argparse.Namespace) -> int:
    report, text, ok = migrate(Path(args.kt_path), Path(args.out_dir))
    print(f"migrated {args.kt_path} → {args.out_dir}: {len(report.changed)} changes, "
          f"{len(report.dropped)} features dropped, {len(report.behaviour)} behaviour "
          f"differences (see {Path(args.out_dir) / REPORT_FILE})")
    for line in report.dropped:
        print(f"  dropped: {line}")
    print(text)
    return 0 if ok else 2
