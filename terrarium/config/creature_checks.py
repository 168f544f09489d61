"""A loaded creature's own checks, the ones that need its merged config: files exist, tools
and sub-agents resolve, outputs and memory options make sense. Each check appends located
errors; none raises, so one run of ``validate`` shows every mistake."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from pydantic import ValidationError

from terrarium import secrecy
from terrarium.config.loaded_creature import LoadedCreature, Origin, config_file
from terrarium.config.located import did_you_mean, from_validation_error, unknown_hint
from terrarium.config.models import EnvValue
from terrarium.config.yamlio import utf8_problem
from terrarium.errors import ConfigError


def check_creature(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """Checks that need the merged config: files exist, names are known, outputs are sane.
    Each check appends its located errors, in this order (the order the user reads them)."""
    for check in _CHECKS:
        check(lc, errors)


def not_a_file(what: str, path: str | Path) -> str:
    """Why ``path`` is not the file a config names: missing, a folder, or not a regular
    file (a pipe would block its read); "not found" alone misled for the last two."""
    p = Path(path)
    if p.is_dir():
        return f"{what} is a folder, not a file: {path}"
    if p.exists():
        return f"{what} is not a regular file (a pipe, socket or device): {path}"
    return f"{what} not found: {path}"


def _check_files(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """The persona and skill files exist."""
    cfg = lc.config
    if cfg.system_prompt_file and not Path(cfg.system_prompt_file).is_file():
        errors.append(lc.where("system_prompt_file").error(
            not_a_file("prompt file", cfg.system_prompt_file),
            "create the file or fix the path (relative to the config that names it)"))
    for i, skill in enumerate(cfg.skills):
        if not Path(skill).is_file():
            errors.append(lc.where("skills", i).error(not_a_file("skill file", skill)))


def _check_readable_paths(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """A readable path must exist (a writable one may be created by the creature)."""
    for i, p in enumerate(lc.config.readable_paths):
        if not Path(p).exists():
            errors.append(lc.where("readable_paths", i).error(f"readable path does not exist: {p}"))


def _check_tools(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """Each tool is listed once and resolves (a built-in name or an importable class)."""
    from terrarium.tools.registry import known_tool_names, resolve_tool

    seen: set[str] = set()
    for i, tool in enumerate(lc.config.tools):
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


def _check_outputs(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """The default output is a named one; named outputs are identifiers; files have a path."""
    outs = lc.config.output
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


def _check_hint_overrides(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """Each ``framework_hint_overrides`` key names a hint the prompt has."""
    for key in lc.config.framework_hint_overrides:
        if problem := unknown_hint(key):
            errors.append(lc.where("framework_hint_overrides", key).error(*problem))


def _check_prompt_plugins(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """Prompt plugins: unique names, exactly one of text or file, the file exists."""
    plugins = lc.config.prompt_plugins
    names = [p.name for p in plugins]
    for i, p in enumerate(plugins):
        if names.count(p.name) > 1 and names.index(p.name) != i:
            errors.append(lc.where("prompt_plugins", i).error(
                f"prompt plugin {p.name!r} is declared twice"))
        if (p.text is None) == (p.file is None):
            errors.append(lc.where("prompt_plugins", i).error(
                f"prompt plugin {p.name!r} needs exactly one of `text` or `file`"))
        elif p.file and not Path(p.file).is_file():
            errors.append(lc.where("prompt_plugins", i, "file").error(
                not_a_file("plugin file", p.file)))


def _check_subagents(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """Sub-agents are callable names clear of the tools, with a config that exists; the
    compaction summarizer, if any, is one of them."""
    cfg = lc.config
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


def _check_script(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """A scripted controller names a script file that exists."""
    ctl = lc.config.controller
    if ctl is not None and ctl.provider == "scripted":
        if not ctl.script:
            errors.append(lc.where("controller").error(
                "a scripted controller needs `script`", "add `script: path/to/script.yaml`"))
        elif not Path(ctl.script).is_file():
            errors.append(lc.where("controller", "script").error(
                not_a_file("script file", ctl.script)))


def _check_memory(lc: LoadedCreature, errors: list[ConfigError]) -> None:
    """Memory options that would always come out empty: notes without recording, a
    ``send_fill`` source whose count is 0."""
    cfg = lc.config
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
                origin.doc, exc, cls.options_model, raw, base=origin.key_path))


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


_CHECKS = (_check_files, _check_utf8, _check_readable_paths, _check_tools, _check_tool_options,
           _check_mcp_servers, _check_approve, _check_outputs, _check_hint_overrides,
           _check_prompt_plugins, _check_subagents, _check_script, _check_memory)


__all__ = ["check_creature", "command_exists", "not_a_file"]
