"""Loading one creature: ``base_config`` inheritance, merge rules, and its own checks.

Merge rules (parent first, then child):
- scalars (``name``, ``skill_mode``, ``tool_format``, ``system_prompt_file``…): child wins;
- mappings (``controller``, ``output``, ``framework_hint_overrides``, ``variables``):
  merged key by key, recursively, child wins;
- ``tools``, ``skills``, ``readable_paths``, ``writable_paths``: union, parent's order first;
- ``prompt_plugins``: merged by plugin ``name``, child wins.
Relative paths are resolved against the folder of the file that wrote them, before merging.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from terrarium.config.located import did_you_mean, from_validation_error, unknown_hint
from terrarium.config.models import CreatureConfig
from terrarium.config.packages import PackageIndex
from terrarium.config.yamlio import KeyPath, YamlDoc, load_yaml
from terrarium.errors import ConfigError

CONFIG_FILE = "config.yaml"
_UNION_LISTS = ("tools", "skills", "readable_paths", "writable_paths")


@dataclass(frozen=True, slots=True)
class SkillDoc:
    name: str
    summary: str
    body: str
    source: Path


@dataclass(slots=True)
class Origin:
    """Where a value was written, so later checks can point at the right file and line."""

    doc: YamlDoc
    key_path: KeyPath

    def error(self, message: str, suggestion: str | None = None) -> ConfigError:
        return self.doc.error(self.key_path, message, suggestion)


@dataclass(slots=True)
class LoadedCreature:
    """A creature config after inheritance, with the provenance of its path-valued keys."""

    config: CreatureConfig
    path: Path
    doc: YamlDoc
    chain: list[Path]
    origins: dict[KeyPath, Origin] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        return self.path.parent

    def where(self, *key_path: str | int) -> Origin:
        return self.origins.get(tuple(key_path), Origin(self.doc, tuple(key_path)))


def config_file(path: Path) -> Path:
    """A creature reference may name its folder or its config file."""
    return path / CONFIG_FILE if path.is_dir() else path


def _absolutize(data: dict[str, Any], doc: YamlDoc, origins: dict[KeyPath, Origin]) -> None:
    base = doc.path.parent

    def fix(value: Any, kp: KeyPath) -> Any:
        if isinstance(value, str) and value:
            origins[kp] = Origin(doc, kp)
            return str((base / value).resolve()) if not value.startswith("@") else value
        return value

    if "system_prompt_file" in data:
        data["system_prompt_file"] = fix(data["system_prompt_file"], ("system_prompt_file",))
    for key in ("skills", "readable_paths", "writable_paths"):
        if isinstance(data.get(key), list):
            data[key] = [fix(v, (key, i)) for i, v in enumerate(data[key])]
    if isinstance(data.get("tools"), list):
        for i, v in enumerate(data["tools"]):
            origins[("tools", i, str(v))] = Origin(doc, ("tools", i))
    ctl = data.get("controller")
    if isinstance(ctl, dict) and isinstance(ctl.get("script"), str):
        ctl["script"] = fix(ctl["script"], ("controller", "script"))
    outs = data.get("output", {})
    named = outs.get("named_outputs") if isinstance(outs, dict) else None
    if isinstance(named, dict):
        for oname, spec in named.items():
            if isinstance(spec, dict):
                for k in ("path", "voice"):
                    if isinstance(spec.get(k), str):
                        spec[k] = fix(spec[k], ("output", "named_outputs", oname, k))
    fill = data.get("send_fill")
    if isinstance(fill, dict):  # checked against the team's wiring later: remember the file
        for cname, fields in fill.items():
            origins[("send_fill", cname)] = Origin(doc, ("send_fill", cname))
            for fname in fields if isinstance(fields, dict) else ():
                origins[("send_fill", cname, fname)] = Origin(doc, ("send_fill", cname, fname))
    templates = data.get("message_templates")
    if isinstance(templates, dict):  # checked against the channel schemas later
        for cname in templates:
            origins[("message_templates", cname)] = Origin(doc, ("message_templates", cname))
    plugins = data.get("prompt_plugins")
    if isinstance(plugins, list):
        for i, p in enumerate(plugins):
            if isinstance(p, dict) and isinstance(p.get("file"), str):
                p["file"] = fix(p["file"], ("prompt_plugins", i, "file"))


def _deep_merge(parent: Any, child: Any) -> Any:
    if isinstance(parent, dict) and isinstance(child, dict):
        out = dict(parent)
        for k, v in child.items():
            out[k] = _deep_merge(parent[k], v) if k in parent else v
        return out
    return child


def merge_configs(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """Apply the documented merge rules (see module docstring)."""
    out = dict(parent)
    for key, value in child.items():
        if key == "base_config":
            continue
        if key in _UNION_LISTS and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "prompt_plugins" and isinstance(value, list) and isinstance(out.get(key), list):
            merged = {p.get("name"): p for p in out[key] if isinstance(p, dict)}
            merged.update({p.get("name"): p for p in value if isinstance(p, dict)})
            out[key] = list(merged.values())
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    out.pop("base_config", None)
    return out


def _load_raw(
    path: Path, index: PackageIndex, chain: list[Path], errors: list[ConfigError],
    origins: dict[KeyPath, Origin],
) -> tuple[dict[str, Any], YamlDoc] | None:
    try:
        doc = load_yaml(path)
    except ConfigError as exc:
        errors.append(exc)
        return None
    data: dict[str, Any] = doc.data
    try:
        CreatureConfig.model_validate(data)
    except ValidationError as exc:
        errors.extend(from_validation_error(doc, exc, CreatureConfig, data))
        return None
    _absolutize(data, doc, origins)
    base_ref = data.get("base_config")
    if not base_ref:
        return data, doc
    loc = doc.location(("base_config",))
    try:
        parent_path = config_file(index.resolve_ref(base_ref, doc.path.parent, loc))
    except ConfigError as exc:
        errors.append(exc)
        return None
    if parent_path.resolve() in chain:
        names = [*chain[chain.index(parent_path.resolve()):], parent_path.resolve()]
        cycle = " → ".join(str(p) for p in names)
        errors.append(doc.error(("base_config",), f"base_config cycle: {cycle}",
                                "remove base_config from one of these files"))
        return None
    if not parent_path.is_file():
        errors.append(doc.error(("base_config",), f"base_config {base_ref!r} not found "
                                f"(looked for {parent_path})",
                                "point base_config at a creature folder or its config.yaml"))
        return None
    parent_origins: dict[KeyPath, Origin] = {}
    parent = _load_raw(parent_path, index, [*chain, parent_path.resolve()], errors, parent_origins)
    if parent is None:
        return None
    for kp, o in parent_origins.items():
        origins.setdefault(kp, o)
    return merge_configs(parent[0], data), doc


def parse_skill(path: Path) -> SkillDoc:
    """A skill is markdown with optional ``---`` front matter giving ``name`` and ``summary``."""
    import yaml

    text = path.read_text(encoding="utf-8")
    meta: dict[str, Any] = {}
    body = text
    if text.startswith("---\n"):
        head, sep, rest = text[4:].partition("\n---")
        if sep:
            loaded = yaml.safe_load(head) or {}
            meta = loaded if isinstance(loaded, dict) else {}
            body = rest.lstrip("-").lstrip("\n")
    first = next((ln.strip("# ").strip() for ln in body.splitlines() if ln.strip()), "")
    return SkillDoc(
        name=str(meta.get("name") or path.stem),
        summary=str(meta.get("summary") or first),
        body=body.strip() + "\n",
        source=path,
    )


def load_creature(
    path: Path, index: PackageIndex, errors: list[ConfigError]
) -> LoadedCreature | None:
    """Load ``path`` (folder or config.yaml) with its base chain; append problems to errors."""
    path = config_file(path.resolve())
    origins: dict[KeyPath, Origin] = {}
    n_before = len(errors)
    raw = _load_raw(path, index, [path], errors, origins)
    if raw is None:
        return None
    data, doc = raw
    try:
        cfg = CreatureConfig.model_validate(data)
    except ValidationError as exc:
        errors.extend(from_validation_error(doc, exc, CreatureConfig, data))
        return None
    loaded = LoadedCreature(cfg, path, doc, [path], origins)
    check_creature(loaded, errors)
    return loaded if len(errors) == n_before else None


def check_creature(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """Checks that need the merged config: files exist, names are known, outputs are sane."""
    cfg = lc.config
    if cfg.system_prompt_file and not Path(cfg.system_prompt_file).is_file():
        errors.append(lc.where("system_prompt_file").error(
            f"prompt file not found: {cfg.system_prompt_file}",
            "create the file or fix the path (relative to the config that names it)"))
    for i, skill in enumerate(cfg.skills):
        if not Path(skill).is_file():
            errors.append(lc.where("skills", i).error(f"skill file not found: {skill}"))
    for key in ("readable_paths", "writable_paths"):
        for i, p in enumerate(getattr(cfg, key)):
            if key == "readable_paths" and not Path(p).exists():
                errors.append(lc.where(key, i).error(f"readable path does not exist: {p}"))
    from terrarium.tools.registry import known_tool_names, resolve_tool

    seen: set[str] = set()
    for i, tool in enumerate(cfg.tools):
        origin = lc.origins.get(("tools", i, tool), Origin(lc.doc, ("tools", i)))
        if tool in seen:
            errors.append(origin.error(f"tool {tool!r} is listed twice"))
        seen.add(tool)
        try:
            resolve_tool(tool)
        except Exception as exc:  # resolve_tool explains itself; keep the location here
            errors.append(origin.error(
                getattr(exc, "message", str(exc)),
                getattr(exc, "suggestion", None)
                or did_you_mean(tool, known_tool_names())
                or f"known tools: {', '.join(known_tool_names())}"))
    outs = cfg.output
    if outs.default is not None and outs.default not in outs.named_outputs:
        errors.append(lc.where("output", "default").error(
            f"default output {outs.default!r} is not one of the named outputs",
            did_you_mean(outs.default, list(outs.named_outputs))
            or "declare it under output.named_outputs"))
    for oname, spec in outs.named_outputs.items():
        if not oname.isidentifier():
            errors.append(lc.where("output", "named_outputs", oname).error(
                f"named output {oname!r} must be an identifier (letters, digits, _)"))
        if spec.type == "file" and not spec.path:
            errors.append(lc.where("output", "named_outputs", oname).error(
                f"file output {oname!r} needs a `path`"))
    for key in cfg.framework_hint_overrides:
        if problem := unknown_hint(key):
            errors.append(lc.where("framework_hint_overrides", key).error(*problem))
    names = [p.name for p in cfg.prompt_plugins]
    for i, p in enumerate(cfg.prompt_plugins):
        if names.count(p.name) > 1 and names.index(p.name) != i:
            errors.append(lc.where("prompt_plugins", i).error(
                f"prompt plugin {p.name!r} is declared twice"))
        if (p.text is None) == (p.file is None):
            errors.append(lc.where("prompt_plugins", i).error(
                f"prompt plugin {p.name!r} needs exactly one of `text` or `file`"))
        elif p.file and not Path(p.file).is_file():
            errors.append(lc.where("prompt_plugins", i, "file").error(
                f"plugin file not found: {p.file}"))
    ctl = cfg.controller
    if ctl is not None and ctl.provider == "scripted":
        if not ctl.script:
            errors.append(lc.where("controller").error(
                "a scripted controller needs `script`", "add `script: path/to/script.yaml`"))
        elif not Path(ctl.script).is_file():
            errors.append(lc.where("controller", "script").error(
                f"script file not found: {ctl.script}"))
    limits = {"recalled": ("memory_recall", cfg.memory_recall),
              "recent": ("memory_recent", cfg.memory_recent),
              "facts": ("memory_facts", cfg.memory_facts)}
    for cname, fields in cfg.send_fill.items():
        for fname, source in fields.items():
            key, limit = limits.get(source, ("", 1))
            if not limit:  # the field would always be empty: surely not what was meant
                errors.append(lc.where("send_fill", cname, fname).error(
                    f"send_fill source {source!r} needs {key} > 0, or {fname!r} is always empty",
                    f"set `{key}: N` (how many facts to fill in)"))
