"""The dry start: every check a start makes, made without starting anything.

Loading a config checks each file on its own; this goes one step further, the way a run's
start does: each creature (and the root, and every sub-agent) is assembled and its prompt
prefix built, its lifecycle plugins loaded and its persona's example calls checked against
the calls it can really make. One function, :func:`dry_start`, used by every way in:
``validate``, ``prompt``, ``tools``, ``run``, ``migrate`` and :class:`TeamRuntime` itself,
so a library user gets the same refusals as the command line.

MCP servers are not started here: a creature with servers may show calls to tools nobody
can know yet, so those are not checked (the runtime and ``tools`` pass the servers' tools
in as ``extra_tools`` once they run). Every problem becomes a located :class:`ConfigError`,
so they are all reported at once (exit 2 on the command line).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from terrarium.config import CreatureDef, Team, load_any
from terrarium.config.packages import PackageIndex
from terrarium.controller.assembly import AssemblyCache, CreatureParts, assemble
from terrarium.controller.plugins import load_plugins
from terrarium.controller.subagent import load_subagent
from terrarium.errors import ConfigError, ConfigErrors, Location, TerrariumError, did_you_mean
from terrarium.prompt.builder import PromptBuilder
from terrarium.prompt.templates import template_calls
from terrarium.tools.base import Tool

__all__ = ["DryStart", "check_loaded", "check_path", "check_team_start", "dry_start",
           "raise_start_errors", "team_names"]

_WINDOW_PROBLEM = "The prefix of "  # PromptBuilder: the prefix leaves no room in the window
_MAX_SUBAGENT_DEPTH = 8  # a cycle of sub-agents referring to each other stops here


@dataclass
class DryStart:
    """What a dry start found: each creature's assembled parts (those that assembled) and
    every problem, located."""

    team: Team
    parts: dict[str, CreatureParts] = field(default_factory=dict)
    errors: list[ConfigError] = field(default_factory=list)

    def raise_errors(self) -> DryStart:
        """Raise every problem together (``ConfigErrors``); else return self."""
        if self.errors:
            raise ConfigErrors(self.errors)
        return self


def team_names(team: Team) -> list[str]:
    """The team's creatures in start order: sorted, the root (``root``) last."""
    return sorted(team.creatures) + (["root"] if team.root is not None else [])


def dry_start(team: Team, *, names: Iterable[str] | None = None, window: bool = True,
              extra_tools: Mapping[str, Sequence[type[Tool]]] | None = None,
              checked: DryStart | None = None) -> DryStart:
    """Assemble and check ``names`` (default: everyone, in start order) with ONE assembly
    cache for the team, as a start does. ``window=False`` leaves out a prefix too big for
    the context window (a run reports that one itself, as a team that cannot start).
    ``checked``: an earlier dry start of the same team without errors; a creature it holds
    and that gets no ``extra_tools`` is taken from it, not assembled and checked again."""
    out = DryStart(team)
    cache: AssemblyCache | None = None
    extra = extra_tools or {}
    done = checked.parts if checked is not None and not checked.errors else {}
    for name in (team_names(team) if names is None else names):
        if name in done and not extra.get(name):
            out.parts[name] = done[name]
            cache = done[name].cache
            continue
        parts = _check_creature(team, name, out.errors, cache, window, extra.get(name, ()))
        if parts is not None:
            out.parts[name] = parts
            cache = parts.cache
    return out


def check_team_start(team: Team, *, window: bool = True) -> list[ConfigError]:
    """Every creature's start problems (the root last)."""
    return dry_start(team, window=window).errors


def raise_start_errors(team: Team, *, window: bool = True) -> DryStart:
    """Raise every start problem of ``team`` together; else the dry start's result."""
    return dry_start(team, window=window).raise_errors()


def check_path(path: Path) -> tuple[Team | tuple[PackageIndex, list[Team]], list[ConfigError]]:
    """What ``terrarium validate PATH`` checks, the one full check (``migrate`` says
    "passes" only when this finds nothing): load the terrarium, creature or package (raises
    ConfigErrors), then the dry start of every team, each problem once."""
    result = load_any(path)
    return result, check_loaded(result)


def check_loaded(result: Team | tuple[PackageIndex, list[Team]]) -> list[ConfigError]:
    """The start problems of what ``load_any`` returned: one team, or every terrarium of a
    package (a creature shared by two of them reported once)."""
    teams = [result] if isinstance(result, Team) else result[1]
    errors = [e for team in teams for e in check_team_start(team)]
    seen: set[str] = set()
    return [e for e in errors if not (e.render() in seen or seen.add(e.render()))]


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


def _check_plugins(cdef: CreatureDef, errors: list[ConfigError]) -> None:
    for i, plugin in enumerate(cdef.config.plugins):
        try:
            load_plugins([plugin])
        except TerrariumError as exc:
            errors.append(_relocate(exc, cdef, "plugins", i))
        except Exception as exc:  # a user's plugin module may raise anything when imported
            errors.append(_relocate(TerrariumError(
                f"plugin {plugin.module!r} cannot be loaded: {type(exc).__name__}: {exc}"),
                cdef, "plugins", i))


def _check_creature(team: Team, name: str, errors: list[ConfigError],
                    cache: AssemblyCache | None, window: bool,
                    extra_tools: Sequence[type[Tool]]) -> CreatureParts | None:
    """Assemble ``name`` and build its prompt prefix as a start would; append problems.
    Returns its parts (None: it did not assemble)."""
    cdef = team.everyone[name]
    n = len(errors)
    _check_plugins(cdef, errors)
    try:
        parts = assemble(team, name, cache=cache, extra_tools=extra_tools)
    except TerrariumError as exc:
        errors.append(_relocate(exc, cdef))
        return None
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(_relocate(TerrariumError(f"cannot read a file: {exc}"), cdef))
        return None
    _check_calls(parts, errors)
    if len(errors) == n:
        try:
            PromptBuilder(parts.inputs, parts.fmt, cache=parts.cache)
        except TerrariumError as exc:
            if not window and exc.message.startswith(_WINDOW_PROBLEM):
                return parts
            key = "system_prompt_file"
            if "skill_mode" in exc.message:  # point at what was written: the mode or the tools
                key = "skill_mode" if ("skill_mode",) in cdef.loaded.doc.marks else "tools"
            errors.append(_relocate(exc, cdef, key))
    _check_subagents(cdef, errors, depth=1)
    return parts


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
