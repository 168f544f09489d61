"""From a validated team to one creature's parts: prompt inputs, tools, calls and format.

This is the only place where config facts become prompt facts, so the prompt, the parser
and the grammar are all fed from the same registry (tools + channel sends + outputs). It is
also the one route of every config key the controller loop reads: :class:`LoopSettings`,
built here once; the loop never reads the creature's config itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from terrarium.config import CreatureDef, Team
from terrarium.config.creature import parse_skill
from terrarium.config.models import ChoiceRule, ReplyGuardSpec
from terrarium.controller.jobs import with_background
from terrarium.formats import CallFormat, CallSpec, get_format, output_call_name, send_call_name
from terrarium.llm.settings import ModelSettings
from terrarium.prompt.cache import PromptCache
from terrarium.prompt.inputs import (
    ChannelView,
    FieldView,
    NamedOutputView,
    PromptInputs,
    Skill,
    StaticPlugin,
    TeamMember,
)
from terrarium.prompt.tail import StatusSpec
from terrarium.tools.base import Tool
from terrarium.tools.delegate import subagent_tool
from terrarium.tools.registry import ToolRegistry
from terrarium.tools.team import KT_TEAM_ALIASES, TEAM_TOOLS

__all__ = [
    "ANY_CHANNEL",
    "CHANNEL_CALL",
    "DEFAULT_PERSONA",
    "CreatureParts",
    "LoopSettings",
    "TextMessage",
    "assemble",
    "loop_settings",
    "without_fields",
]

DEFAULT_PERSONA = "You are {{ creature }}, a creature in a terrarium team.\n"
CHANNEL_CALL = "send_channel"  # KohakuTerrarium's one call for every channel (channel_call)
ANY_CHANNEL = "*"  # in CreatureParts.sends: the channel is the call's `channel` argument


class TextMessage(BaseModel):
    """The payload of an untyped channel or a non-default named output."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The text to send.")


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopSettings:
    """The config keys the controller loop reads, read once from the validated config.

    No defaults here: every default lives in the pydantic config models
    (:class:`~terrarium.config.models.CreatureConfig`, ``ModelSettings``).
    """

    max_iterations: int
    history_turns: int | None
    memory_recall: int
    memory_recent: int
    memory_record: bool
    memory_in_prompt: bool
    memory_facts: int
    memory_notes: int
    choice_rules: tuple[ChoiceRule, ...]  # values decided without the model
    reply_guard: ReplyGuardSpec | None  # fixed replies by intent, no echo (controller/guard.py)
    spoken_sentences: int | None  # the spoken default output stops after this many sentences
    prompt_status: bool | StatusSpec  # True: the default spec (the date, by the day)
    message_templates: Mapping[str, str]  # channel -> Jinja source
    tool_choice: Literal["auto", "required"]
    use_grammar: bool
    cwd: Path
    readable: tuple[Path, ...]  # the writable roots are readable too
    writable: tuple[Path, ...]
    workspace: Path | None  # where file and shell tools act (None: the creature folder)
    tool_options: Mapping[str, Mapping[str, Any]]  # tool name -> its options, unvalidated
    approve: frozenset[str]  # tools whose calls wait for a human's yes ("*": every tool)
    keep_reasoning: bool  # a reasoning model's thinking stays in the history


def _spoken_sentences(cfg: Any) -> int | None:
    """``max_sentences`` of the creature's default output, when that output is spoken."""
    out = cfg.output.named_outputs.get(cfg.output.default or "")
    return out.max_sentences if out is not None and out.type == "tts" else None


def loop_settings(cdef: CreatureDef, settings: ModelSettings) -> LoopSettings:
    """The loop's settings for one creature."""
    cfg = cdef.config
    return LoopSettings(
        max_iterations=cfg.max_iterations,
        history_turns=cfg.history_turns,
        memory_recall=cfg.memory_recall,
        memory_recent=cfg.memory_recent,
        memory_record=cfg.memory_record,
        memory_in_prompt=cfg.memory_in_prompt,
        memory_facts=cfg.memory_facts,
        memory_notes=cfg.memory_notes,
        choice_rules=tuple(cfg.choice_rules),
        reply_guard=cfg.reply_guard,
        spoken_sentences=_spoken_sentences(cfg),
        prompt_status=cfg.prompt_status,
        message_templates=MappingProxyType(dict(cfg.message_templates)),
        tool_choice=cfg.tool_choice,
        use_grammar=settings.use_grammar,
        cwd=cdef.folder,
        readable=tuple(Path(p) for p in [*cfg.readable_paths, *cfg.writable_paths]),
        writable=tuple(Path(p) for p in cfg.writable_paths),
        workspace=Path(cfg.workspace) if cfg.workspace else None,
        tool_options=MappingProxyType({k: dict(v) for k, v in cfg.tool_options.items()}),
        approve=frozenset(cfg.approve),
        keep_reasoning=settings.keep_reasoning,
    )


@dataclass(slots=True)
class CreatureParts:
    """Everything a creature's controller needs that comes from configuration."""

    name: str
    cdef: CreatureDef
    settings: ModelSettings
    registry: ToolRegistry
    fmt: CallFormat
    inputs: PromptInputs
    sends: dict[str, str]  # call name -> channel
    outputs: dict[str, str]  # call name -> named output (non-default ones)
    default_output: str | None
    loop: LoopSettings  # the config keys the controller loop reads
    fills: dict[str, dict[str, str]] = field(default_factory=dict)  # send call -> field -> source
    # the memos it was assembled with; its PromptBuilder and the next creature share them
    cache: AssemblyCache = field(default_factory=lambda: AssemblyCache())
    # decisions made for the creature that its config does not spell out (shown by `prompt`)
    notes: tuple[str, ...] = ()

    @property
    def specs(self) -> dict[str, CallSpec]:
        return dict(self.fmt.specs)


def channel_call_model(channels: tuple[str, ...]) -> type[BaseModel]:
    """The arguments of ``send_channel``: one of the creature's channels and the text."""
    return create_model(
        "SendChannel", __config__=ConfigDict(extra="forbid"),
        channel=(Literal[channels], Field(description="the channel to send on")),  # type: ignore[valid-type]
        message=(str, Field(description="the text to send")))


def without_fields(model: type[BaseModel], names: frozenset[str]) -> type[BaseModel]:
    """``model`` minus the fields the runtime fills in: what the model itself must write.

    The prompt's example, the parser and the grammar all read the call's args model, so none
    of them asks for a filled field; the full message is checked against ``model`` at send.
    A new class each call: :class:`AssemblyCache` memoizes it, so creatures share one.
    """
    kept = {n: (f.annotation, f) for n, f in model.model_fields.items() if n not in names}
    return create_model(f"{model.__name__}Written", __config__=ConfigDict(extra="forbid"),
                        **kept)


def _channel_views(team: Team, cdef: CreatureDef) -> tuple[ChannelView, ...]:
    views = []
    for cname in sorted(set(cdef.listen) | set(cdef.can_send)):
        ch = team.channels[cname]
        mt = ch.message_type
        fill = cdef.config.send_fill.get(cname, {}) if cname in cdef.can_send else {}
        fields = tuple(
            FieldView(f.name, f.type_label, f.required, f.description, f.default,
                      fill.get(f.name, ""), f.example)
            for f in (mt.fields if mt else ())
        ) or (FieldView("text", "str", True, "The text to send.", None, fill.get("text", "")),)
        views.append(ChannelView(
            name=cname, type=ch.type, description=ch.description,
            schema_name=mt.name if mt else "text", fields=fields,
            listen=cname in cdef.listen, can_send=cname in cdef.can_send,
            listeners=ch.listeners, senders=ch.senders,
            templated=cname in cdef.listen and cname in cdef.config.message_templates,
        ))
    return tuple(views)


class AssemblyCache(PromptCache):
    """The prompt's memos plus assembly's own; one per team run, shared by all its creatures.

    Pass the cache of one creature's parts to the next ``assemble`` call (the runtime does),
    so the creatures of a team share one roster, one written-args class per send and every
    prompt memo (their channel views, hints and skills overlap).
    """

    def __init__(self) -> None:
        super().__init__()
        # per (model, filled fields): one written-args class, shared by every creature
        self.without_fields = lru_cache(maxsize=256)(without_fields)
        # the team's roster as TeamMembers, one entry: keyed by the identity of the creature map
        self.members: tuple[Mapping[str, CreatureDef], tuple[TeamMember, ...]] | None = None
        # per set of channels: one `send_channel` args class (channel_call)
        self.channel_call_model = lru_cache(maxsize=256)(channel_call_model)

    def all_members(self, team: Team) -> tuple[TeamMember, ...]:
        """Every creature as a TeamMember, built once per team and shared by all its creatures.

        Each creature lists its N-1 teammates; building fresh objects for each made a team of
        1,000 creatures hold a million of them (~46 KB per creature). A one-entry memo keyed
        by the identity of the team's creature map is enough: teams are assembled in one pass.
        """
        if self.members is not None:
            creatures, members = self.members
            if creatures is team.creatures and len(members) == len(creatures):
                return members
        members = tuple(TeamMember(c.name, c.config.description) for c in team.creatures.values())
        self.members = (team.creatures, members)
        return members


def assemble(team: Team, name: str, *, cache: AssemblyCache | None = None,
             extra_tools: Sequence[type[Tool]] = ()) -> CreatureParts:
    """Build a creature's parts; raises TerrariumError subclasses on inconsistencies.

    ``cache`` (else a fresh one) is used and returned as ``parts.cache``: hand it to the next
    creature's ``assemble`` and to the controller's PromptBuilder to share their work.
    ``extra_tools`` are tools known only at start, the creature's MCP tools (see
    :func:`terrarium.controller.mcp.connect_mcp`); a name clash with a configured tool is a
    RegistryError naming both.
    """
    cache = AssemblyCache() if cache is None else cache
    cdef = team.everyone[name]
    cfg = cdef.config
    settings = cfg.controller or ModelSettings()
    registry = _registry(team, cdef, extra_tools)
    notes = _info_for_dynamic(cfg, registry, cdef)
    specs: list[CallSpec] = list(registry.specs())  # the order the format lists the calls
    sends, fills = _send_specs(team, cdef, cache, specs)
    outputs, views = _output_specs(cfg, specs)
    fmt = get_format(cfg.tool_format, specs)
    inputs = _prompt_inputs(team, cdef, settings, registry, views, cache)
    return CreatureParts(cdef.name, cdef, settings, registry, fmt, inputs, sends, outputs,
                         cfg.output.default, loop_settings(cdef, settings), fills, cache, notes)


def _registry(team: Team, cdef: CreatureDef, extra_tools: Sequence[type[Tool]]) -> ToolRegistry:
    """The creature's tools: its config's, the team tools for the root creature, the MCP
    tools known at start, a call per sub-agent, and the job tools of ``background``."""
    cfg = cdef.config
    registry = ToolRegistry.from_refs(list(cfg.tools), owner=f"{cdef.loaded.path}",
                                      base=cdef.folder)
    if team.root is not None and cdef is team.root:
        for tool in TEAM_TOOLS:
            registry.register(tool, owner="the terrarium (root creature)")
        if cdef.inline:  # a KohakuTerrarium-form root: its prompts name KT's group_* tools
            for tool in KT_TEAM_ALIASES:
                registry.register(tool, owner="the terrarium (KohakuTerrarium's names)")
    for tool in extra_tools:
        server = getattr(tool, "server", "")
        registry.register(tool, owner=f"MCP server {server!r} of {cdef.loaded.path}"
                          if server else "the runtime")
    for sname, sub in sorted(cfg.subagents.items()):  # each sub-agent is a call
        desc, inputs = ("", {}) if isinstance(sub, str) else (sub.description, sub.inputs)
        registry.register(subagent_tool(sname, desc, inputs), owner=f"{cdef.loaded.path}")
    return with_background(registry, cfg.background)  # the `background` flag, job tools


def _send_specs(team: Team, cdef: CreatureDef, cache: AssemblyCache,
                specs: list[CallSpec]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """Append a send call per channel the creature may send on (and the one
    ``channel_call``) to ``specs``; return call → channel and the ``send_fill`` fields."""
    cfg = cdef.config
    sends: dict[str, str] = {}
    fills: dict[str, dict[str, str]] = {}
    for cname in sorted(cdef.can_send):
        mt = team.channels[cname].message_type
        call = send_call_name(cname)
        desc = team.channels[cname].description or f"Send a message on {cname}."
        model = mt.model if mt else TextMessage
        if fill := cfg.send_fill.get(cname):
            fills[call] = dict(fill)
            model = cache.without_fields(model, frozenset(fill))
        specs.append(CallSpec(call, desc, model))
        sends[call] = cname
    if cfg.channel_call and cdef.can_send and CHANNEL_CALL not in sends:
        specs.append(CallSpec(CHANNEL_CALL, "Send a text message on one of your channels.",
                              cache.channel_call_model(tuple(sorted(cdef.can_send)))))
        sends[CHANNEL_CALL] = ANY_CHANNEL
    return sends, fills


def _output_specs(cfg: Any, specs: list[CallSpec]) -> tuple[dict[str, str],
                                                             list[NamedOutputView]]:
    """Append a call per named output but the default one to ``specs``; return call →
    output and every named output as the prompt shows it."""
    outputs: dict[str, str] = {}
    views = []
    for oname, out in sorted(cfg.output.named_outputs.items()):
        is_default = oname == cfg.output.default
        views.append(NamedOutputView(oname, out.type, out.description, is_default))
        if not is_default:
            call = output_call_name(oname)
            specs.append(CallSpec(call, out.description or f"Write to {oname}.", TextMessage))
            outputs[call] = oname
    return outputs, views


def _prompt_inputs(team: Team, cdef: CreatureDef, settings: ModelSettings,
                   registry: ToolRegistry, views: list[NamedOutputView],
                   cache: AssemblyCache) -> PromptInputs:
    """Everything the prompt is built from, read from the creature's config and team."""
    cfg = cdef.config
    if cfg.system_prompt_file:
        persona_file: Path | None = Path(cfg.system_prompt_file)
        persona = cdef.loaded.persona_text() or ""  # the prompt files along base_config
    else:
        persona_file, persona = None, DEFAULT_PERSONA
    skills = []
    for path in cfg.skills:
        doc = parse_skill(Path(path))
        skills.append(Skill(doc.name, doc.summary, doc.body, str(doc.source)))
    plugins = tuple(
        StaticPlugin(p.name, p.priority,
                     p.text if p.text is not None else Path(str(p.file)).read_text("utf-8"))
        for p in cfg.prompt_plugins
    )
    members = tuple(m for m in cache.all_members(team) if m.name != cdef.name)
    model_label = settings.model or (
        "SmolLM2-135M-Instruct" if settings.provider == "embedded" else settings.provider
    )
    return PromptInputs(
        creature=cdef.name,
        persona_source=persona,
        persona_file=persona_file,
        persona_files=tuple(cdef.loaded.prompt_files) if persona_file is not None else (),
        skill_mode=cfg.skill_mode,
        tools=tuple(registry.tools()),
        skills=tuple(skills),
        channels=_channel_views(team, cdef),
        team=members,
        hint_overrides=dict(cdef.hint_overrides),
        named_outputs=tuple(views),
        plugins=plugins,
        skill_index_budget_bytes=cfg.skill_index_budget_bytes,
        model=model_label,
        context_window=settings.effective_context_window,
        cwd=cdef.folder,
        extra_variables=dict(cfg.variables),
    )


def _info_for_dynamic(cfg: Any, registry: ToolRegistry, cdef: CreatureDef) -> tuple[str, ...]:
    """``skill_mode: dynamic`` lists each tool by one line and leaves the details to an
    ``info`` call; a creature that lists tools but not ``info`` (KohakuTerrarium's
    ``tools: [bash, read, write]``) gets it added, so the default mode works as written."""
    from terrarium.tools.info import InfoTool

    if cfg.skill_mode != "dynamic" or not registry.names() or InfoTool.name in registry.names():
        return ()
    registry.register(InfoTool, owner="skill_mode dynamic (added: the tools list has no info)")
    return (f"skill_mode dynamic: the {InfoTool.name!r} tool was added because `tools` does not "
            "list it (full tool docs come from an info call); list it yourself or set "
            "`skill_mode: static` to change this",)
