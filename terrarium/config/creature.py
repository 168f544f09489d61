"""Loading one creature: ``base_config`` inheritance, merge rules, and its own checks.

Merge rules (parent first, then child):
- scalars (``name``, ``skill_mode``, ``tool_format``, ``system_prompt_file``…): child wins;
- mappings (``controller``, ``output``, ``framework_hint_overrides``, ``variables``):
  merged key by key, recursively, child wins;
- ``tools``, ``skills``, ``readable_paths``, ``writable_paths``: union, parent's order first;
- ``prompt_plugins``: merged by plugin ``name``, child wins;
- ``no_inherit: [key, ...]`` drops the inherited value of those keys (KohakuTerrarium's rule).
The persona is every ``system_prompt_file`` along the chain, parent first, joined by a blank
line, as KohakuTerrarium joins them (``prompt_mode: concat``, the default); ``prompt_mode:
replace`` keeps only the file's own. KohakuTerrarium's forms are translated first
(:mod:`terrarium.config.kohaku_compat`).
Relative paths are resolved against the folder of the file that wrote them, before merging.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from terrarium import secrecy
from terrarium.config.kohaku_compat import findings_to_errors, normalize_creature
from terrarium.config.located import did_you_mean, from_validation_error, unknown_hint
from terrarium.config.models import CreatureConfig, EnvValue
from terrarium.config.packages import PackageIndex
from terrarium.config.yamlio import KeyPath, YamlDoc, load_yaml, utf8_problem
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
    prompt_files: list[Path] = field(default_factory=list)  # the persona, joined in order

    @property
    def folder(self) -> Path:
        return self.path.parent

    def persona_text(self) -> str | None:
        """The persona template: the prompt files joined by a blank line (None: default)."""
        files = self.prompt_files or (
            [Path(self.config.system_prompt_file)] if self.config.system_prompt_file else [])
        if not files:
            return None
        return "\n\n".join(f.read_text(encoding="utf-8") for f in files)

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

    for key in ("system_prompt_file", "workspace"):
        if key in data:
            data[key] = fix(data[key], (key,))
    opts = data.get("tool_options")
    if isinstance(opts, dict):  # checked against each tool's options model later
        for tname in opts:
            origins[("tool_options", tname)] = Origin(doc, ("tool_options", tname))
    if isinstance(data.get("skills"), list):  # `*` and package skill names stay as written
        data["skills"] = [v if _skill_name(v, base) else fix(v, ("skills", i))
                          for i, v in enumerate(data["skills"])]
        for i in range(len(data["skills"])):
            origins.setdefault(("skills", i), Origin(doc, ("skills", i)))
    for key in ("readable_paths", "writable_paths"):
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
    servers = data.get("mcp_servers")
    if isinstance(servers, dict):  # started (and checked) later: remember where each was
        for sname, spec in servers.items():
            origins[("mcp_servers", sname)] = Origin(doc, ("mcp_servers", sname))
            if not isinstance(spec, dict):
                continue
            for key in ("command", "cwd", "url"):
                if key in spec:
                    origins[("mcp_servers", sname, key)] = Origin(doc, ("mcp_servers", sname, key))
            for key in ("env", "headers"):
                for var in spec.get(key) or () if isinstance(spec.get(key), dict) else ():
                    kp = ("mcp_servers", sname, key, var)
                    origins[kp] = Origin(doc, kp)
            command = spec.get("command")
            if isinstance(command, str) and "/" in command and not command.startswith("/"):
                spec["command"] = str((base / command).resolve())
            if isinstance(spec.get("cwd"), str):
                spec["cwd"] = fix(spec["cwd"], ("mcp_servers", sname, "cwd"))
            elif isinstance(command, str):  # relative arguments mean the declaring folder
                spec["cwd"] = str(base.resolve())
    subs = data.get("subagents")
    if isinstance(subs, dict):  # a sub-agent's config path is relative to this file
        for sname, sub in subs.items():
            if isinstance(sub, str):
                subs[sname] = fix(sub, ("subagents", sname))
            elif isinstance(sub, dict) and isinstance(sub.get("config"), str):
                sub["config"] = fix(sub["config"], ("subagents", sname, "config"))
    plugins = data.get("prompt_plugins")
    if isinstance(plugins, list):
        for i, p in enumerate(plugins):
            if isinstance(p, dict) and isinstance(p.get("file"), str):
                p["file"] = fix(p["file"], ("prompt_plugins", i, "file"))


def _check_prompt_paths(data: dict[str, Any], doc: YamlDoc, index: PackageIndex,
                        errors: list[ConfigError]) -> None:
    """A prompt file (persona or prompt plugin) must lie inside the folder of the config
    that names it, or inside that config's package: a config from elsewhere cannot make
    a creature read, and send to a model, any file on the machine. Paths are already
    resolved (symlinks followed) by :func:`_absolutize`; ``allow_outside_paths: true`` in
    the same config allows it."""
    if data.get("allow_outside_paths") is True:
        return
    folder = doc.path.parent.resolve()
    pkg = index.owning(doc.path)
    roots = [folder, *([pkg.root] if pkg is not None else [])]
    named: list[tuple[KeyPath, Any]] = [(("system_prompt_file",), data.get("system_prompt_file"))]
    plugins = data.get("prompt_plugins")
    for i, p in enumerate(plugins if isinstance(plugins, list) else []):
        if isinstance(p, dict):
            named.append((("prompt_plugins", i, "file"), p.get("file")))
    for kp, value in named:
        if not isinstance(value, str) or value.startswith("@"):
            continue
        path = Path(value)
        if any(path.is_relative_to(r) for r in roots):
            continue
        inside = " or ".join(str(r) for r in roots)
        errors.append(doc.error(kp, f"prompt file {path} is outside the creature's folder "
                                f"and its package ({inside})",
                                "move the file inside, or set `allow_outside_paths: true` in "
                                "this config to allow it"))


def _deep_merge(parent: Any, child: Any) -> Any:
    if isinstance(parent, dict) and isinstance(child, dict):
        out = dict(parent)
        for k, v in child.items():
            out[k] = _deep_merge(parent[k], v) if k in parent else v
        return out
    return child


def _skill_name(value: Any, base: Path) -> bool:
    """``*`` or a bare package skill name, not a path (a path that exists wins)."""
    if not isinstance(value, str) or (base / value).exists():
        return False
    return value == "*" or ("/" not in value and not value.endswith(".md"))


_PER_FILE = ("no_inherit", "prompt_mode")  # directives about one file, never inherited


def merge_configs(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """Apply the documented merge rules (see module docstring)."""
    out = {k: v for k, v in parent.items() if k not in _PER_FILE}
    for key in child.get("no_inherit") or ():
        out.pop(key, None)
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
) -> tuple[dict[str, Any], YamlDoc, list[Path]] | None:
    try:
        doc = load_yaml(path)
    except ConfigError as exc:
        errors.append(exc)
        return None
    return _load_data(doc.data, doc, index, chain, errors, origins)


def _known_tool(name: str) -> bool:
    from terrarium.tools.registry import known_tool_names

    return name in known_tool_names()


def _load_data(
    data: dict[str, Any], doc: YamlDoc, index: PackageIndex, chain: list[Path],
    errors: list[ConfigError], origins: dict[KeyPath, Origin], *, root: bool = False,
) -> tuple[dict[str, Any], YamlDoc, list[Path]] | None:
    """One creature mapping (a file's, or an inline override) with its base chain merged in;
    also the persona's prompt files in order."""
    findings = normalize_creature(data, known_tool=_known_tool, package_tools=index.tools(),
                                  root=root)
    errors.extend(findings_to_errors(doc, findings))
    try:
        CreatureConfig.model_validate(data)
    except ValidationError as exc:
        errors.extend(from_validation_error(doc, exc, CreatureConfig, data))
        return None
    _absolutize(data, doc, origins)
    _check_prompt_paths(data, doc, index, errors)
    own = [Path(data["system_prompt_file"])] if data.get("system_prompt_file") else []
    base_ref = data.get("base_config")
    if not base_ref:
        return data, doc, own
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
    replace = data.get("prompt_mode") == "replace" or \
        "system_prompt_file" in (data.get("no_inherit") or ())
    merged = merge_configs(parent[0], data)
    if replace:
        prompts = own
        if not own:
            merged.pop("system_prompt_file", None)
    else:
        prompts = list(dict.fromkeys([*parent[2], *own]))
    return merged, doc, prompts


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
    stem = path.parent.name if path.name == "SKILL.md" else path.stem
    return SkillDoc(
        name=str(meta.get("name") or stem),
        summary=str(meta.get("summary") or meta.get("description") or first),
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
    return _finish(raw, path, index, errors, origins, n_before)


def load_inline_creature(
    inline: dict[str, Any], doc: YamlDoc, key_path: KeyPath, index: PackageIndex,
    errors: list[ConfigError], *, root: bool = False,
) -> LoadedCreature | None:
    """A creature written inside a terrarium.yaml entry: ``base_config`` (or ``config``) plus
    creature keys that override it there (KohakuTerrarium's form). Errors point into the
    terrarium file."""
    n = len(key_path)
    sub = YamlDoc(doc.path, inline, {kp[n:]: m for kp, m in doc.marks.items()
                                     if kp[:n] == key_path},
                  {kp[n:]: t for kp, t in doc.scalars.items() if kp[:n] == key_path})
    origins: dict[KeyPath, Origin] = {}
    n_before = len(errors)
    raw = _load_data(inline, sub, index, [doc.path.resolve()], errors, origins, root=root)
    return _finish(raw, doc.path.resolve(), index, errors, origins, n_before)


def _finish(
    raw: tuple[dict[str, Any], YamlDoc, list[Path]] | None, path: Path, index: PackageIndex,
    errors: list[ConfigError], origins: dict[KeyPath, Origin], n_before: int,
) -> LoadedCreature | None:
    if raw is None:
        return None
    data, doc, prompts = raw
    _use_profile(data, doc, path, index, origins, errors)
    _expand_skills(data, index, origins, doc, errors)
    try:
        cfg = CreatureConfig.model_validate(data)
    except ValidationError as exc:
        errors.extend(from_validation_error(doc, exc, CreatureConfig, data))
        return None
    loaded = LoadedCreature(cfg, path, doc, [path], origins, prompts)
    check_creature(loaded, errors)
    return loaded if len(errors) == n_before else None


DEFAULT_LLM_ENV = "TERRARIUM_LLM"
# controller keys that choose a model: a controller with none of them takes the default
_MODEL_KEYS = ("provider", "llm", "base_url", "model", "script", "api_key_env")


def _use_profile(data: dict[str, Any], doc: YamlDoc, path: Path, index: PackageIndex,
                 origins: dict[KeyPath, Origin], errors: list[ConfigError]) -> None:
    """``controller.llm: NAME``: a kohaku.yaml profile, else a model preset
    (:mod:`terrarium.llm.presets`), under this controller's own keys. A controller that
    names no model takes ``TERRARIUM_LLM`` when it is set (KohakuTerrarium's default model)."""
    from terrarium.llm.presets import preset_names, resolve_preset

    ctl = data.get("controller")
    if ctl is None or (isinstance(ctl, dict) and not any(k in ctl for k in _MODEL_KEYS)):
        default = os.environ.get(DEFAULT_LLM_ENV, "").strip()
        if default:
            ctl = data["controller"] = {**(ctl or {}), "llm": default}
            origins.setdefault(("controller", "llm"), Origin(doc, ()))
    name = ctl.get("llm") if isinstance(ctl, dict) else None
    if not isinstance(name, str):
        return
    profile = index.profile(name, path)
    if profile is None:
        profile = resolve_preset(name)
    if profile is None and name.startswith("scripted:"):  # a test's or a demo's script
        # a scripted model has no window of its own: do not let the default 4K refuse a prompt
        profile = {"provider": "scripted", "script": str(Path(name[9:]).expanduser().resolve()),
                   "context_window": 131_072}
    if profile is None:
        known = index.profile_names()
        origin = origins.get(("controller", "llm"), Origin(doc, ("controller", "llm")))
        from_env = origin.key_path == () and name == os.environ.get(DEFAULT_LLM_ENV, "").strip()
        errors.append(origin.error(
            f"unknown model profile or preset {name!r}"
            + (f" (from {DEFAULT_LLM_ENV})" if from_env else ""),
            did_you_mean(name, known + preset_names()) or
            f"declare it under `llm_profiles:` in kohaku.yaml (known: {', '.join(known) or 'none'})"
            f", or name a preset: {', '.join(preset_names())}"))
        return
    data["controller"] = _deep_merge(profile, ctl)


def _expand_skills(data: dict[str, Any], index: PackageIndex, origins: dict[KeyPath, Origin],
                   doc: YamlDoc, errors: list[ConfigError]) -> None:
    """``*`` → every package skill; a name → that package skill; a folder → its SKILL.md,
    or each skill inside it. Files stay as they are (checked later)."""
    skills = data.get("skills")
    if not isinstance(skills, list):
        return
    offered = index.skills()
    out: list[str] = []
    for i, entry in enumerate(skills):
        if not isinstance(entry, str):
            out.append(entry)
            continue
        p = Path(entry)
        if entry == "*":
            out.extend(str(f) for f in offered.values() if f.is_file())
        elif p.is_absolute() and p.is_dir():
            found = [p / "SKILL.md"] if (p / "SKILL.md").is_file() else sorted(
                [*p.glob("*/SKILL.md"), *p.glob("*.md")])
            out.extend(str(f) for f in found)
        elif not p.is_absolute():
            if entry in offered:
                out.append(str(offered[entry]))
            else:
                origin = origins.get(("skills", i), Origin(doc, ("skills", i)))
                errors.append(origin.error(
                    f"unknown skill {entry!r} (not a file, and no package offers it)",
                    did_you_mean(entry, list(offered))
                    or f"package skills: {', '.join(sorted(offered)) or 'none'}"))
        else:
            out.append(entry)
    data["skills"] = list(dict.fromkeys(out))


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
    _check_utf8(lc, errors)
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
            resolve_tool(tool, lc.folder)
        except Exception as exc:  # resolve_tool explains itself; keep the location here
            errors.append(origin.error(
                getattr(exc, "message", str(exc)),
                getattr(exc, "suggestion", None)
                or did_you_mean(tool, known_tool_names())
                or f"known tools: {', '.join(known_tool_names())}"))
    _check_tool_options(lc, errors)
    _check_mcp_servers(lc, errors)
    _check_approve(lc, errors)
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
    for sname, sub in cfg.subagents.items():
        ref = sub if isinstance(sub, str) else sub.config
        where = ("subagents", sname) if isinstance(sub, str) else ("subagents", sname, "config")
        if not sname.isidentifier():
            errors.append(lc.where("subagents", sname).error(
                f"sub-agent {sname!r} must be an identifier (letters, digits, _): it is a call"))
        elif sname in cfg.tools:
            errors.append(lc.where("subagents", sname).error(
                f"sub-agent {sname!r} has the name of a tool this creature uses"))
        if not ref.startswith("@") and not config_file(Path(ref)).is_file():
            errors.append(lc.where(*where).error(f"sub-agent config not found: {ref}"))
    summarizer = getattr(cfg.compaction, "subagent", None)
    if summarizer is not None and summarizer not in cfg.subagents:
        errors.append(lc.where("compaction", "subagent").error(
            f"compaction names the sub-agent {summarizer!r}, which is not one of this "
            f"creature's subagents",
            did_you_mean(summarizer, list(cfg.subagents)) or f"add {summarizer!r} to `subagents:`"))
    ctl = cfg.controller
    if ctl is not None and ctl.provider == "scripted":
        if not ctl.script:
            errors.append(lc.where("controller").error(
                "a scripted controller needs `script`", "add `script: path/to/script.yaml`"))
        elif not Path(ctl.script).is_file():
            errors.append(lc.where("controller", "script").error(
                f"script file not found: {ctl.script}"))
    if cfg.memory_notes and not cfg.memory_record:
        errors.append(lc.where("memory_notes").error(
            "memory_notes recalls what the creature recorded, and it records nothing",
            "add `memory_record: true`"))
    limits = {"recalled": ("memory_recall", cfg.memory_recall),
              "recent": ("memory_recent", cfg.memory_recent),
              "facts": ("memory_facts", cfg.memory_facts),
              "notes": ("memory_notes", cfg.memory_notes)}
    for cname, fields in cfg.send_fill.items():
        for fname, source in fields.items():
            key, limit = limits.get(source, ("", 1))
            if not limit:  # the field would always be empty: surely not what was meant
                errors.append(lc.where("send_fill", cname, fname).error(
                    f"send_fill source {source!r} needs {key} > 0, or {fname!r} is always empty",
                    f"set `{key}: N` (how many facts to fill in)"))


def _check_utf8(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """Every text file the creature will read: persona files, skills, plugins, a script."""
    cfg = lc.config
    files = list(lc.prompt_files) or (
        [Path(cfg.system_prompt_file)] if cfg.system_prompt_file else [])
    files += [Path(s) for s in cfg.skills]
    files += [Path(p.file) for p in cfg.prompt_plugins if p.file]
    if cfg.controller is not None and cfg.controller.script:
        files.append(Path(cfg.controller.script))
    for f in dict.fromkeys(files):
        if f.is_file() and (problem := utf8_problem(f)):
            errors.append(problem)


def _check_tool_options(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """Each ``tool_options`` entry names a listed tool that takes options, with known keys."""
    from terrarium.tools.registry import resolve_tool

    cfg = lc.config
    classes = {}
    for ref in cfg.tools:
        try:
            cls = resolve_tool(ref, lc.folder)
        except Exception:  # reported by the tools check
            continue
        classes[cls.name] = cls
    for tname, raw in cfg.tool_options.items():
        origin = lc.where("tool_options", tname)
        cls = classes.get(tname)
        if cls is None:
            errors.append(origin.error(
                f"tool_options names {tname!r}, which is not one of this creature's tools",
                did_you_mean(tname, list(classes)) or f"add {tname!r} to `tools:`"))
            continue
        if cls.options_model is None:
            errors.append(origin.error(f"the tool {tname!r} takes no options"))
            continue
        try:
            cls.options_model.model_validate(raw)
        except ValidationError as exc:
            errors.extend(from_validation_error(
                origin.doc, exc, cls.options_model, raw, base=("tool_options", tname)))


_SERVER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def _check_mcp_servers(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """What can be checked without starting a server: its name, that its command exists,
    its folder exists, and that every ``{env: NAME}`` it needs is set."""
    for sname, spec in lc.config.mcp_servers.items():
        if not _SERVER_NAME.fullmatch(sname):
            errors.append(lc.where("mcp_servers", sname).error(
                f"MCP server name {sname!r} must start with a letter and hold only letters, "
                "digits, '_' and '-' (it prefixes the server's tool names)"))
        where = lc.where("mcp_servers", sname)
        if (spec.command is None) == (spec.url is None):
            errors.append(where.error(
                f"MCP server {sname!r} needs exactly one of `command` (a program started "
                "over stdio) or `url` (streamable HTTP)"))
            continue
        wrong = ("headers",) if spec.kind == "stdio" else ("args", "env", "cwd")
        for key in wrong:
            if key in spec.model_fields_set:
                errors.append(where.error(
                    f"MCP server {sname!r}: `{key}` is for "
                    f"{'HTTP' if key == 'headers' else 'stdio'} servers, and this one is "
                    f"{'a stdio' if spec.kind == 'stdio' else 'an HTTP'} server"))
        if spec.command is not None:
            if not command_exists(spec.command):
                errors.append(lc.where("mcp_servers", sname, "command").error(
                    f"MCP server {sname!r}: command not found: {spec.command}",
                    "install it, put it on PATH, or give its path (relative to this file)"))
            if spec.cwd and not Path(spec.cwd).is_dir():
                errors.append(lc.where("mcp_servers", sname, "cwd").error(
                    f"MCP server {sname!r}: folder not found: {spec.cwd}"))
        values, key = (spec.env, "env") if spec.kind == "stdio" else (spec.headers, "headers")
        for var, value in values.items():
            if isinstance(value, EnvValue) and secrecy.env(value.env) is None:
                errors.append(lc.where("mcp_servers", sname, key, var).error(
                    f"MCP server {sname!r}: {'header' if key == 'headers' else 'variable'} {var!r} "
                    f"comes from the environment variable {value.env}, which is not set",
                    f"export {value.env}=... before starting terrarium"))


def command_exists(command: str) -> bool:
    """A command given as a path exists and is executable; a bare name is on PATH."""
    if os.sep in command or "/" in command:
        return Path(command).is_file() and os.access(command, os.X_OK)
    return shutil.which(command) is not None
def _check_approve(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """Each ``approve`` entry names one of the creature's tools (or is ``*``)."""
    from terrarium.tools.registry import resolve_tool

    names = []
    for ref in lc.config.tools:
        try:
            names.append(resolve_tool(ref, lc.folder).name)
        except Exception:  # reported by the tools check
            continue
    for i, tname in enumerate(lc.config.approve):
        if tname != "*" and tname not in names:
            errors.append(lc.where("approve", i).error(
                f"approve names {tname!r}, which is not one of this creature's tools",
                did_you_mean(tname, names) or f"add {tname!r} to `tools:`"))


__all__ = [
    "CONFIG_FILE",
    "LoadedCreature",
    "Origin",
    "SkillDoc",
    "check_creature",
    "command_exists",
    "config_file",
    "load_creature",
    "load_inline_creature",
    "merge_configs",
    "parse_skill",
]
