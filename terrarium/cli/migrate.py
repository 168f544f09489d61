"""``terrarium migrate KT_PATH OUT_DIR``: a KohakuTerrarium package, terrarium or creature
rewritten as a terrarium one, with a report of every change and every dropped feature.

The folder is copied whole (prompts, skills, code), then each ``kohaku.yaml``,
``terrarium.yaml`` and creature ``config.yaml`` is rewritten with the same translations
validation applies (:mod:`terrarium.config.kohaku_compat`), plus the few a loader cannot
make silently: an inline ``system_prompt`` becomes a prompt file, ``max_messages`` and
``ephemeral`` become ``history_turns``, channel names lose their ``-``. What has no
equivalent is dropped and listed in ``MIGRATION.md``; the result is then validated.
"""

from __future__ import annotations

import argparse
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from terrarium.config import load_any
from terrarium.config.kohaku_compat import (
    ENTRY_UNSUPPORTED,
    Finding,
    normalize_creature,
    normalize_package,
    not_supported,
)
from terrarium.errors import ConfigErrors, TerrariumError
from terrarium.runtime.preflight import check_loaded

__all__ = ["REPORT_FILE", "cmd_migrate", "migrate"]

REPORT_FILE = "MIGRATION.md"
_CREATURE_FILES = ("config.yaml", "config.yml")


@dataclass(slots=True)
class Report:
    """Every change and every dropped feature, by file."""

    root: Path
    changed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

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

    def render(self, validated: str) -> str:
        lines = ["# Migration from KohakuTerrarium", "",
                 "YAML files were rewritten, so their comments are gone; every other file "
                 "was copied unchanged.", "", f"## Changed ({len(self.changed)})", ""]
        lines += [f"- {c}" for c in self.changed] or ["- nothing"]
        lines += ["", f"## Dropped: not supported by terrarium ({len(self.dropped)})", ""]
        lines += [f"- {d}" for d in self.dropped] or ["- nothing"]
        lines += ["", "## Validation", "", validated, ""]
        return "\n".join(lines)


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
    if "max_messages" in data:
        n = data.pop("max_messages")
        if isinstance(n, int) and n > 0:
            data.setdefault("history_turns", n)
            report.change(where, f"max_messages {n} is history_turns {n}")
    if "ephemeral" in data:
        if data.pop("ephemeral") is True:
            data["history_turns"] = 0
            report.change(where, "ephemeral: true is history_turns: 0")


_ENTRY_ONLY = ("name", "config", "base_config", "channels", "output_wiring", "listen")


def _creature(data: dict[str, Any], folder: Path, stem: str, report: Report, where: Path,
              prefix: tuple[Any, ...] = (), *, root: bool = False,
              package_tools: dict[str, str] | None = None) -> None:
    if prefix:  # a terrarium entry: its wiring keys are not creature keys
        wiring = {k: data.pop(k) for k in _ENTRY_ONLY if k in data}
        _creature(data, folder, stem, report, where, (), root=root,
                  package_tools=package_tools)
        data.update(wiring)
        return
    _write_prompt(folder, stem, data, report, where)
    _history(data, report, where)
    ctl = data.get("controller")
    if isinstance(ctl, dict):
        _history(ctl, report, where)
    report.add(where, normalize_creature(data, known_tool=_known_tool,
                                         package_tools=package_tools, root=root), prefix)


def _rename(names: Any, renamed: dict[str, str]) -> Any:
    if isinstance(names, list):
        return [renamed.get(n, n) if isinstance(n, str) else n for n in names]
    return renamed.get(names, names) if isinstance(names, str) else names


def _terrarium(data: dict[str, Any], path: Path, report: Report,
               package_tools: dict[str, str]) -> None:
    spec = data.get("terrarium")
    if not isinstance(spec, dict):
        return
    folder = path.parent
    renamed: dict[str, str] = {}
    channels = spec.get("channels")
    if isinstance(channels, dict):
        for cname in list(channels):
            decl = channels.pop(cname)
            new = cname.replace("-", "_") if isinstance(cname, str) else cname
            if new != cname:
                renamed[cname] = new
                report.change(path, f"channel {cname!r} renamed {new!r}")
            channels[new] = {"description": decl} if isinstance(decl, str) else decl
    if "input_channel" in spec:
        spec["input_channel"] = _rename(spec["input_channel"], renamed)
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
        kept = []
        for j, w in enumerate(entry.get("output_wiring") or []):
            if isinstance(w, dict) and (w.get("with_content") is False or w.get("prompt")):
                what = "content-free pings" if w.get("with_content") is False else \
                    "`prompt` templates"
                report.drop(path, ".".join(map(str, (*kp, "output_wiring", j))),
                            not_supported(f"output_wiring {what}",
                                          "channels and `message_templates`"))
                continue
            kept.append(_rename(w.get("to") if isinstance(w, dict) else w, renamed))
        if "output_wiring" in entry:
            entry["output_wiring"] = kept
        _creature(entry, folder, f"{name}", report, path, kp, package_tools=package_tools)
    root = spec.get("root")
    if isinstance(root, dict):
        _creature(root, folder, "root", report, path, ("terrarium", "root"), root=True,
                  package_tools=package_tools)
        if root.get("listen") not in (None, "*"):
            root["listen"] = _rename(root["listen"], renamed)


def migrate(source: Path, out_dir: Path) -> tuple[Report, str, bool]:
    """Copy and rewrite; returns the report, the validation text and whether it passed."""
    source = source.resolve()
    if not source.is_dir():
        raise TerrariumError(f"{source} is not a folder",
                             suggestion="give a KohakuTerrarium package, terrarium or creature "
                             "folder")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise TerrariumError(f"{out_dir} exists and is not empty",
                             suggestion="give a new folder for the migrated package")
    shutil.copytree(source, out_dir, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".git", "__pycache__"))
    out_dir = out_dir.resolve()
    report = Report(out_dir)
    package_tools: dict[str, str] = {}
    files = sorted(p for p in out_dir.rglob("*.y*ml") if p.is_file())
    for path in files:  # packages first: their tools are named by creatures
        if path.name == "kohaku.yaml":
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
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
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue  # not ours to judge: copied as it was
        if not isinstance(data, dict):
            continue
        if path.name == "terrarium.yaml" or "terrarium" in data:
            _terrarium(data, path, report, package_tools)
        elif path.name in _CREATURE_FILES:
            _creature(data, path.parent, "system", report, path, package_tools=package_tools)
        else:
            continue
        _dump(path, data)
    try:  # what `terrarium validate` checks: loading, then the dry start
        if errors := check_loaded(load_any(out_dir)):
            raise ConfigErrors(errors)
        text, ok = "`terrarium validate` passes.", True
    except ConfigErrors as exc:
        text, ok = "`terrarium validate` still reports:\n\n```\n" + exc.render() + "\n```", False
    (out_dir / REPORT_FILE).write_text(report.render(text), encoding="utf-8")
    return report, text, ok


def _dump(path: Path, data: Any) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def cmd_migrate(args: argparse.Namespace) -> int:
    report, text, ok = migrate(Path(args.kt_path), Path(args.out_dir))
    print(f"migrated {args.kt_path} → {args.out_dir}: {len(report.changed)} changes, "
          f"{len(report.dropped)} features dropped (see {Path(args.out_dir) / REPORT_FILE})")
    for line in report.dropped:
        print(f"  dropped: {line}")
    print(text)
    return 0 if ok else 2
