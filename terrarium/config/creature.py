"""Loading one creature: ``base_config`` inheritance and merge rules (its checks:
:mod:`terrarium.config.creature_checks`).

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
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from terrarium.config.creature_checks import check_creature, command_exists
from terrarium.config.kohaku_compat import findings_to_errors, normalize_creature
from terrarium.config.loaded_creature import (
    CONFIG_FILE,
    LoadedCreature,
    Origin,
    SkillDoc,
    config_file,
    kt_config_hint,
)
from terrarium.config.located import did_you_mean, from_validation_error
from terrarium.config.models import CreatureConfig
from terrarium.config.packages import PackageIndex
from terrarium.config.yamlio import KeyPath, YamlDoc, load_yaml
from terrarium.errors import ConfigError

_UNION_LISTS = ("tools", "skills", "readable_paths", "writable_paths")


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
            origins.setdefault(("tool_options", tname), Origin(doc, ("tool_options", tname)))
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
    base = data.get("base_config")
    if isinstance(base, str) and base.startswith("@"):  # read a lazy package before its
        index.get(base[1:].partition("/")[0])           # tools are looked up by name
    sources: dict[str, KeyPath] = {}
    findings = normalize_creature(data, known_tool=_known_tool, package_tools=index.tools(),
                                  root=root, option_sources=sources)
    for tname, kp in sources.items():  # options written on a KohakuTerrarium tool entry
        origins[("tool_options", tname)] = Origin(doc, kp)
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
                                kt_config_hint(parent_path.parent) or
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
                  {kp[n:]: t for kp, t in doc.scalars.items() if kp[:n] == key_path},
                  env={kp[n:]: t for kp, t in doc.env.items() if kp[:n] == key_path})
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
    if isinstance(ctl, dict) and isinstance(ctl.get("model"), str) and not any(
            k in ctl for k in _MODEL_KEYS if k != "model"):
        # a bare `model` names no server: KohakuTerrarium looks it up among its presets,
        # and terrarium's embedded model ignores it, so it is a preset or a mistake
        model = ctl["model"]
        if index.profile(model, path) is None and resolve_preset(model) is None:
            origin = origins.get(("controller", "model"), Origin(doc, ("controller", "model")))
            errors.append(origin.error(
                f"controller.model {model!r} is not a model preset, and with no `base_url` "
                "or `provider` beside it no server would be asked (the embedded model "
                "would run instead)",
                did_you_mean(model, index.profile_names() + preset_names()) or
                "add `base_url:` (an OpenAI-compatible server) beside `model:`, or name a "
                f"preset with `llm:` (known: {', '.join(preset_names()[:6])}, ...)"))
            return
        ctl["llm"] = ctl.pop("model")
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
