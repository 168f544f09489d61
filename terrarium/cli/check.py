"""Every check ``run`` and ``prompt`` would make at start, made without starting anything.

Loading a config checks each file on its own; this goes one step further, the way a run's
start does: each creature (and the root, and every sub-agent) is assembled and its prompt
prefix built, its lifecycle plugins loaded and its persona's example calls checked against
the calls it can really make. MCP servers are not started: a creature with servers may
show calls to tools nobody can know yet, so those are not checked.

Every problem becomes a located :class:`ConfigError`, so ``validate`` and ``prompt`` can
report them all at once and exit 2.
"""

from __future__ import annotations

from pathlib import Path

from terrarium.config import CreatureDef, Team, load_any, load_single_creature
from terrarium.config.models import CreatureConfig, SubagentConfig
from terrarium.config.packages import PackageIndex
from terrarium.controller.assembly import AssemblyCache, CreatureParts, assemble
from terrarium.controller.plugins import load_plugins
from terrarium.controller.subagent import load_subagent
from terrarium.errors import ConfigError, ConfigErrors, Location, TerrariumError, did_you_mean
from terrarium.prompt.builder import PromptBuilder
from terrarium.prompt.templates import template_calls

__all__ = ["check_creature_start", "check_path", "check_team_start", "delegation_lines",
           "raise_start_errors"]

_WINDOW_PROBLEM = "The prefix of "  # PromptBuilder: the prefix leaves no room in the window
_MAX_SUBAGENT_DEPTH = 8  # a cycle of sub-agents referring to each other stops here


def _relocate(exc: TerrariumError, cdef: CreatureDef, *key_path: str | int) -> ConfigError:
    """``exc`` as a ConfigError; one without a place gets the creature's config key."""
    if exc.location.file is not None and exc.location.line:
        loc = exc.location
    else:
        origin = cdef.loaded.where(*key_path) if key_path else None
        loc = (origin.doc.location(origin.key_path) if origin is not None
               else Location(file=cdef.loaded.path, line=1))
    return ConfigError(exc.message, location=loc, suggestion=exc.suggestion)


def _check_calls(parts: CreatureParts, errors: list[ConfigError]) -> None:
    """``{{ call("name", ...) }}`` in the persona must name a call this creature can make."""
    cdef = parts.cdef
    if cdef.config.mcp_servers:  # their tools are known only once the servers run
        return
    source = parts.inputs.persona_source
    file = str(parts.inputs.persona_file) if parts.inputs.persona_file else "<persona>"
    known = sorted(parts.fmt.specs)
    for name, line in template_calls(source, file):
        if name not in known:
            errors.append(ConfigError(
                f"the persona shows an example call {name!r}, which this creature cannot make "
                f"(it is neither one of its tools nor a channel it may send on)",
                location=Location(file=Path(file), line=line),
                suggestion=did_you_mean(name, known) or f"known calls: {', '.join(known)}"))


def check_creature_start(team: Team, name: str, errors: list[ConfigError], *,
                         cache: AssemblyCache | None = None, window: bool = True
                         ) -> AssemblyCache | None:
    """Assemble ``name`` and build its prompt prefix as a start would; append problems.
    ``window=False`` leaves out a prefix too big for the context window (``run`` reports
    that one itself, as a team that cannot start)."""
    cdef = team.everyone[name]
    n = len(errors)
    for i, plugin in enumerate(cdef.config.plugins):
        try:
            load_plugins([plugin])
        except TerrariumError as exc:
            errors.append(_relocate(exc, cdef, "plugins", i))
        except Exception as exc:  # a user's plugin module may raise anything when imported
            errors.append(_relocate(TerrariumError(
                f"plugin {plugin.module!r} cannot be loaded: {type(exc).__name__}: {exc}"),
                cdef, "plugins", i))
    try:
        parts = assemble(team, name, cache=cache)
    except TerrariumError as exc:
        errors.append(_relocate(exc, cdef))
        return cache
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(_relocate(TerrariumError(f"cannot read a file: {exc}"), cdef))
        return cache
    _check_calls(parts, errors)
    if len(errors) == n:
        try:
            PromptBuilder(parts.inputs, parts.fmt, cache=parts.cache)
        except TerrariumError as exc:
            if not window and exc.message.startswith(_WINDOW_PROBLEM):
                return parts.cache
            key = "system_prompt_file"
            if "skill_mode" in exc.message:  # point at what was written: the mode or the tools
                key = "skill_mode" if ("skill_mode",) in cdef.loaded.doc.marks else "tools"
            errors.append(_relocate(exc, cdef, key))
    _check_subagents(cdef, errors, depth=1)
    return parts.cache


def _check_subagents(cdef: CreatureDef, errors: list[ConfigError], *, depth: int) -> None:
    if depth > _MAX_SUBAGENT_DEPTH:
        return
    for sname, sub in sorted(cdef.config.subagents.items()):
        key = ("subagents", sname) if isinstance(sub, str) else ("subagents", sname, "config")
        try:
            parts = load_subagent(sname, sub)
            PromptBuilder(parts.inputs, parts.fmt, cache=parts.cache)
        except ConfigErrors as exc:
            errors.extend(exc.errors)
            continue
        except TerrariumError as exc:
            errors.append(_relocate(exc, cdef, *key))
            continue
        _check_subagents(parts.cdef, errors, depth=depth + 1)


def check_team_start(team: Team, *, window: bool = True) -> list[ConfigError]:
    """Every creature's start checks (the root last), with one shared assembly cache."""
    errors: list[ConfigError] = []
    cache: AssemblyCache | None = None
    names = sorted(team.creatures) + (["root"] if team.root is not None else [])
    for name in names:
        cache = check_creature_start(team, name, errors, cache=cache, window=window)
    return errors


def check_path(path: Path) -> tuple[Team | tuple[PackageIndex, list[Team]], list[ConfigError]]:
    """What ``terrarium validate PATH`` checks, the one full check (``migrate`` says
    "passes" only when this finds nothing): load the terrarium, creature or package (raises
    ConfigErrors), then every start check of every team, each problem once."""
    result = load_any(path)
    teams = [result] if isinstance(result, Team) else result[1]
    errors = [e for team in teams for e in check_team_start(team)]
    seen: set[str] = set()  # a creature shared by two terrariums of a package: once
    return result, [e for e in errors if not (e.render() in seen or seen.add(e.render()))]


def raise_start_errors(team: Team, *, window: bool = True) -> None:
    """Raise every start problem of ``team`` together (exit 2 on the command line)."""
    if errors := check_team_start(team, window=window):
        raise ConfigErrors(errors)


def delegation_lines(cdef: CreatureDef, indent: str = "") -> list[str]:
    """The creature's sub-agents as a tree for ``validate``'s summary: who it can hand a
    task to, how deep each sits (the depth limit is this creature's ``subagent_depth``,
    counted from it), and each one's limits, so the delegation is visible before a run."""
    cfg = cdef.config
    if not cfg.subagents:
        return []
    lines = [f"{indent}sub-agents (depth limit {cfg.subagent_depth}, "
             f"at most {cfg.subagent_concurrency} at once):"]
    _tree(cfg, lines, indent + "  ", depth=1, limit=cfg.subagent_depth, seen=())
    return lines


def _limits(entry: SubagentConfig, sub: CreatureConfig | None, background: bool | None) -> str:
    rounds = entry.max_iterations or (sub.max_iterations if sub is not None else None)
    tokens = entry.max_tokens or (sub.controller.max_tokens if sub is not None
                                  and sub.controller is not None else None)
    parts = [f"max_iterations {rounds}" if rounds else "",
             f"max_tokens {tokens}" if tokens else "", f"timeout {entry.timeout:g}s"]
    if background is not None:
        parts.append("background by default" if background else "may run in the background")
    return ", ".join(p for p in parts if p)


def _tree(cfg: CreatureConfig, lines: list[str], indent: str, *, depth: int, limit: int,
          seen: tuple[str, ...]) -> None:
    for sname, raw in sorted(cfg.subagents.items()):
        entry = SubagentConfig(config=raw) if isinstance(raw, str) else raw
        head = f"{indent}└ {sname} (depth {depth}"
        if depth > limit:
            lines.append(f"{head}): beyond the depth limit, its calls are refused")
            continue
        key = str(entry.config)
        sub: CreatureConfig | None = None
        try:
            team = load_single_creature(entry.config)
            sub = next(iter(team.creatures.values())).config
        except TerrariumError:  # reported by the checks; the summary shows what it can
            pass
        lines.append(f"{head}; {_limits(entry, sub, cfg.background.get(sname))})")
        if sub is None or key in seen:
            continue
        _tree(sub, lines, indent + "  ", depth=depth + 1, limit=limit, seen=(*seen, key))
