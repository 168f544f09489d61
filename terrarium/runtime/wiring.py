"""From a validated team and the run's options to running parts: the channel hub, the
embedded model server and its slots, each creature's output sinks and its controller.

Wiring decides who is connected to what, once, at start; it does not run turns (the
supervisor does) nor keep records (the recorder does), but it hands each controller the
recorder's ``emit`` and each voice the recorder's transcript.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from terrarium.channels.bus import EventBus
from terrarium.channels.hub import ChannelHub
from terrarium.channels.log import DurableLog
from terrarium.channels.payload import describe_validation_error
from terrarium.channels.spec import ChannelSpec, CreatureWiring
from terrarium.channels.transport import Transport
from terrarium.config import Team
from terrarium.config.models import NamedOutput
from terrarium.controller.assembly import CreatureParts
from terrarium.controller.guard import START_WORDS
from terrarium.controller.loop import Controller
from terrarium.controller.subagent import Subagents
from terrarium.errors import TerrariumError
from terrarium.events import (
    Event,
    McpStarted,
    McpStarting,
    ModelLoaded,
    ModelLoading,
    ModelRetry,
    SpeechCut,
    UtteranceWritten,
)
from terrarium.llm.base import ChatModel
from terrarium.llm.embedded import MODEL_NAME, EmbeddedServer
from terrarium.llm.factory import make_model
from terrarium.llm.prefix_cache import prefix_cache_dir
from terrarium.llm.settings import ModelSettings
from terrarium.llm.shared_server import SharedEmbeddedServer, can_share, share_env
from terrarium.llm.slots import (
    EmbeddedPlan,
    SlotLeasingModel,
    SlotPool,
    assign_slots,
    plan_embedded,
)
from terrarium.runtime.creature import RunningCreature
from terrarium.runtime.distributed import team_hash
from terrarium.runtime.options import ROOT, TRIGGER, USER, RuntimeOptions
from terrarium.runtime.preflight import DryStart, dry_start
from terrarium.runtime.recording import Recorder
from terrarium.store import MemoryStore
from terrarium.tools.ask import bind_answerer
from terrarium.tools.base import Tool
from terrarium.tools.delegate import STATE_SUBAGENTS
from terrarium.tools.team import STATE_TEAM, TeamControl
from terrarium.voice.sink import FileOutput, OutputSink, PrintOutput

__all__ = ["LogJournal", "Wiring", "assemble_team", "build_hub", "connect_team_mcp", "hosted",
           "payload_problem", "share_model", "team_layout"]


def assemble_team(team: Team, extra_tools: Mapping[str, Sequence[type[Tool]]] | None = None,
                  checked: DryStart | None = None) -> dict[str, RunningCreature]:
    """Every creature's parts (the root last), from the dry start every way in shares
    (``runtime/preflight.py``): ONE prompt cache for the whole team, and the same refusals
    as ``terrarium validate`` (``ConfigErrors``). ``extra_tools`` are each creature's tools
    from its MCP servers (see :func:`connect_team_mcp`); ``checked``: the dry start the
    command line already made, whose creatures without such tools are not checked again."""
    dry = dry_start(team, window=False, extra_tools=extra_tools, checked=checked)
    return {name: RunningCreature(name, parts) for name, parts in dry.raise_errors().parts.items()}


async def connect_team_mcp(team: Team, stack: AsyncExitStack,
                           tell: Callable[[Event], None] | None = None
                           ) -> Mapping[str, Sequence[type[Tool]]]:
    """Start every MCP server the team's creatures list, kept up (and reconnected) by an
    ``McpConnections`` on ``stack``; returns each creature's tools from them. A team without MCP
    servers starts none and loads nothing of the MCP SDK. ``tell`` hears when the servers
    start and when they are up (a start can take seconds: it is shown as progress)."""
    servers = tuple(f"{n}/{s}" for n, d in sorted(team.everyone.items())
                    for s in sorted(d.config.mcp_servers))
    if not servers:
        return {}
    # the MCP modules (~3 % of a start's imports) load only for a team that lists a server
    from terrarium.controller.mcp import connect_mcp
    from terrarium.tools.mcp.connections import McpConnections

    began = time.perf_counter()
    if tell is not None:
        tell(McpStarting(servers=servers))
    mcp = await stack.enter_async_context(McpConnections())
    tools = await connect_mcp(team, mcp)
    if tell is not None:
        tell(McpStarted(seconds=time.perf_counter() - began))
    return tools


def hosted(creatures: dict[str, RunningCreature], options: RuntimeOptions
           ) -> dict[str, RunningCreature]:
    """The creatures this process runs: all, or (past one machine) ``options.host``.

    The root operates the team from the process that starts the run, never from a worker.
    """
    if options.host is None and options.join is None:
        return creatures
    return {n: c for n, c in creatures.items()
            if (n == ROOT and options.join is None)
            or (n != ROOT and (options.host is None or n in options.host))}


def build_hub(team: Team, options: RuntimeOptions, log: DurableLog | None, run_id: str,
              bus: EventBus, transport: Transport | None = None) -> ChannelHub:
    """The team's channels and who may listen and send on each (not yet started).

    ``transport``: where envelopes travel (None: in this process; a ``NatsTransport``
    from ``distributed.open_transport`` for a run past one machine)."""
    specs = [
        ChannelSpec(name=c.name, kind=c.type, description=c.description,
                    schema_name=c.message_type.name if c.message_type else "",
                    validator=c.message_type.model if c.message_type else None,
                    capacity=c.capacity, max_bytes=c.max_bytes)
        for c in team.channels.values()
    ]
    wirings = [
        CreatureWiring(name=c.name, listen=c.listen,
                       can_send=tuple(dict.fromkeys([*c.can_send, *c.output_wiring])))
        for c in team.creatures.values()
    ]
    # the user may type into the input channel and compose messages to any channel
    wirings.append(CreatureWiring(name=USER, can_send=tuple(sorted(team.channels))))
    # triggers with a `channel:` send on it as the sender `trigger`
    triggered = sorted({t.channel for c in team.creatures.values()
                        for t in c.config.triggers if t.channel})
    if triggered:
        wirings.append(CreatureWiring(name=TRIGGER, can_send=tuple(triggered)))
    observers: dict[str, tuple[str, ...]] = {}
    if team.root is not None:  # the operator may send on any channel too
        # it listens where nobody else does (a channel for it); elsewhere it observes: a copy
        # of each message without taking a queue message from the creature it is meant for
        heard = {ch: any(ROOT != n for n in team.channels[ch].listeners)
                 for ch in team.root.listen}
        if transport is not None and transport.brokered:  # observers are in-process only
            heard = {ch: others for ch, others in heard.items() if not others}
        wirings.append(CreatureWiring(name=ROOT, can_send=tuple(sorted(team.channels)),
                                      listen=tuple(ch for ch, o in heard.items() if not o)))
        observers[ROOT] = tuple(ch for ch, others in heard.items() if others)
    return ChannelHub(specs, wirings, transport=transport, log=log, run_id=run_id,
                      terrarium_name=team.name, bus=bus, send_timeout=options.send_timeout,
                      observers=observers,
                      log_writer=options.log_writer if log is options.log else None)


def payload_problem(team: Team, channel: str, payload: Mapping[str, Any]) -> str | None:
    """Why ``payload`` would be refused on ``channel`` as the user, or None if it is fine."""
    ch = team.channels.get(channel)
    if ch is None:
        return f"There is no channel {channel!r}."
    if not ch.listeners:
        return f"Nobody listens on {channel!r}."
    if ch.message_type is None:
        return None
    try:
        ch.message_type.model.model_validate(dict(payload))
    except ValidationError as exc:
        return (f"The payload does not match the schema {ch.message_type.name!r}: "
                f"{describe_validation_error(exc)}.")
    return None


def share_model(options: RuntimeOptions, brokered: bool) -> bool:
    """Whether this process shares the embedded server with the team's other processes
    on this machine: ``options.share_model`` if set (``--no-share-model``), else
    ``TERRARIUM_SHARE_MODEL`` if set, else yes for a run on a broker (the processes of a
    team run past one machine), no for a run in one process (nothing to share with)."""
    if not can_share():
        return False
    if options.share_model is not None:
        return options.share_model
    env = share_env()
    return brokered if env is None else env


def team_layout(team: Team, hosted_subagents: Mapping[str, Subagents],
                count: Callable[[str, Subagents], int],
                make_subagents: Callable[[str], Subagents]) -> tuple[EmbeddedPlan, dict[str, int]]:
    """The embedded server's slots for the WHOLE team, whichever creatures this process
    hosts: each embedded creature's slot (in team order, as ``assemble_team``: sorted
    creatures, then the root), then its sub-agents' pools. A pure function of the team's
    config, so every process of the team computes the same one; ``hosted_subagents`` are
    the sub-agents of the creatures hosted here, ``make_subagents`` builds the others'."""
    names = sorted(team.creatures) + ([ROOT] if team.root is not None else [])
    embedded = [n for n in names
                if (team.everyone[n].config.controller or ModelSettings()).provider
                == "embedded"]
    counts: dict[str, int] = {}
    for n in names:
        if team.everyone[n].config.subagents:
            subs = hosted_subagents.get(n) or make_subagents(n)
            counts[n] = count(n, subs)
    return plan_embedded(len(embedded), counts), {n: i for i, n in enumerate(embedded)}


class Wiring:
    """Builds each creature's sinks and controller; what it starts goes on the caller's
    exit stack, so it stops with the run."""

    def __init__(self, options: RuntimeOptions, bus: EventBus, recorder: Recorder,
                 run_dir: Path, memory: MemoryStore, *, team: Team | None = None) -> None:
        self.options = options
        self.team = team  # the whole team: the shared server's slots are laid out team-wide
        self.bus = bus
        self.recorder = recorder
        self.run_dir = run_dir
        self.memory = memory
        self.sinks: dict[str, dict[str, OutputSink]] = {}
        self.tts: list[Any] = []
        self.embedded: EmbeddedServer | None = None
        self.slot_pools: dict[str, SlotPool] = {}  # team creature -> its sub-agents' slots

    async def wire(self, creatures: Mapping[str, RunningCreature], hub: ChannelHub,
                   stack: AsyncExitStack, *, operator: TeamControl | None) -> None:
        """Start the embedded server if a creature or a sub-agent needs it (one slot per
        creature, and per sub-agent that may run on it at once), then give every creature
        its sinks and controller; the root creature's team tools get ``operator``, the
        running team they act on."""
        opts = self.options
        subagents = {c.name: Subagents.for_parts(c.parts, make_model=self._subagent_model,
                                                 emit=self.bus.publish)
                     for c in creatures.values() if c.parts.cdef.config.subagents}
        needs_embedded = [
            c for c in creatures.values()
            if c.parts.settings.provider == "embedded"
            and not (opts.models and c.name in opts.models)
        ]
        plan = plan_embedded(len(needs_embedded),
                             {n: self._embedded_subagents(n, s) for n, s in subagents.items()})
        # one llama.cpp slot per creature, on the embedded server and on external ones
        slot_of = assign_slots({c.name: c.parts.settings for c in creatures.values()
                                if not (opts.models and c.name in opts.models)})
        if plan.total and opts.embedded is not None:  # the caller's server (serve's sessions)
            self.embedded = opts.embedded
            self.slot_pools = plan.pools()
        elif plan.total:
            team = self.team if share_model(opts, hub.transport.brokered) else None
            if team is not None:
                # every process of the team computes the same slots for ALL its creatures
                # (not only the ones it hosts), so processes sharing one server never
                # pin two creatures to one slot
                plan, embedded_slots = team_layout(
                    team, subagents, partial(self._embedded_subagents, overrides=False),
                    self._team_subagents)
                slot_of.update({n: s for n, s in embedded_slots.items() if n in slot_of})
            await self._start_embedded(plan.total, stack,
                                       team=team_hash(team) if team is not None else None)
            self.slot_pools = plan.pools()
        if opts.prestart is not None:  # a head start the team did not take: stopped now
            opts.prestart.close()
        for c in creatures.values():
            sinks = await self._make_sinks(c, stack)
            self.sinks[c.name] = sinks
            c.controller = self._make_controller(c, sinks, slot_of.get(c.name), hub)
            if c.name == ROOT and operator is not None:
                c.controller.tool_ctx.state[STATE_TEAM] = operator
            if c.name in subagents:  # they ask whom their creature asks, and work beside it
                subagents[c.name].approver = opts.approver
                subagents[c.name].workspace_root = self.run_dir / "workspace"
                c.controller.tool_ctx.state[STATE_SUBAGENTS] = subagents[c.name]

    async def _start_embedded(self, slots: int, stack: AsyncExitStack, *,
                              team: str | None = None) -> None:
        """Start the embedded server (slot saving on: warm-up keeps prompt prefixes);
        with ``team`` (its config hash), attach to the one this team's processes on this
        machine share, or start that one (``llm/shared_server.py``)."""
        if team is not None:
            self.embedded = SharedEmbeddedServer(team=team, slots=slots,
                                                 slot_save_dir=prefix_cache_dir())
        else:
            self.embedded = EmbeddedServer(slots=slots, slot_save_dir=prefix_cache_dir())
        prestart = self.options.prestart if team is None else None
        if prestart is not None:  # the server loading since the command began, if it fits
            self.embedded.process = prestart.take()
        self.bus.publish(ModelLoading(model=MODEL_NAME, slots=slots))
        began = time.perf_counter()
        await stack.enter_async_context(self.embedded)
        self.bus.publish(ModelLoaded(model=MODEL_NAME, seconds=time.perf_counter() - began))
        if prestart is not None and self.embedded.loaded_model is not None:
            prestart.remember(self.embedded.shape(self.embedded.loaded_model))

    def _team_subagents(self, creature: str) -> Subagents:
        """The sub-agents of a team creature not hosted here (only to count them)."""
        assert self.team is not None
        cfg = self.team.everyone[creature].config
        return Subagents(cfg.subagents, label=creature, make_model=self._subagent_model,
                         emit=self.bus.publish, max_depth=cfg.subagent_depth,
                         concurrency=cfg.subagent_concurrency)

    def _embedded_subagents(self, creature: str, subs: Subagents, *,
                            overrides: bool = True) -> int:
        """How many of ``creature``'s sub-agents may run on the embedded model at once:
        one slot per such sub-agent, at most its concurrency limit. A sub-agent that does
        not load is left out here; calling it reports why. ``overrides``: leave out the
        ones this process's ``options.models`` replace (not for a team-wide layout)."""
        models = (self.options.models or {}) if overrides else {}
        count = 0
        for name in subs.entries:
            if f"{creature}/{name}" in models or name in models:
                continue
            try:
                if subs.parts(name).settings.provider == "embedded":
                    count += 1
            except (TerrariumError, OSError, ValueError):
                continue
        return min(count, int(subs.limiter.total_tokens))

    def _tell_retries(self, model: ChatModel, creature: str) -> None:
        """A model that retries says so on the bus (``ModelRetry``: why, where, when)."""
        if hasattr(model, "on_retry"):
            bus = self.bus

            def told(attempt: int, delay: float, reason: str, url: str) -> None:
                bus.publish(ModelRetry(creature=creature, url=url, attempt=attempt,
                                       delay=delay, reason=reason))

            model.on_retry = told

    def _subagent_model(self, parts: CreatureParts, label: str) -> ChatModel:
        """A sub-agent's model: the run's override for its label (``lead/researcher``) or
        name, else its own config's (embedded: a slot leased from its team creature's
        pool for each call, so it never evicts its parent's cached prompt)."""
        models = self.options.models or {}
        for key in (label, parts.name):
            if key in models:
                return models[key]
        model = make_model(parts.settings, embedded=self.embedded, slot=None,
                           base_dir=parts.cdef.folder)
        self._tell_retries(model, label)
        pool = self.slot_pools.get(label.split("/", 1)[0])
        if pool is not None and parts.settings.provider == "embedded":
            return SlotLeasingModel(model, pool, label)
        return model

    async def _make_sinks(self, c: RunningCreature, stack: AsyncExitStack
                          ) -> dict[str, OutputSink]:
        out: dict[str, OutputSink] = {}
        for oname, spec in sorted(c.parts.cdef.config.output.named_outputs.items()):
            if spec.type == "tts":
                out[oname] = await self._make_tts(c, oname, spec, stack)
            elif spec.type == "file":
                out[oname] = FileOutput(Path(str(spec.path)))
            else:
                out[oname] = PrintOutput(self.options.stdout, prefix=f"{c.name}> ")
        return out

    async def _make_tts(self, c: RunningCreature, oname: str, spec: NamedOutput,
                        stack: AsyncExitStack) -> Any:
        """The ``tts`` output ``spec`` describes, started on ``stack``."""
        from terrarium.voice import SegmenterConfig, TTSOutput, default_audio_sink
        from terrarium.voice.audio import NullAudioSink, WavFileSink
        from terrarium.voice.metrics import speech_summary

        opts = self.options
        audio_dir = self.run_dir / "audio"
        if opts.audio_sink is not None:
            sink: Any = opts.audio_sink(c.name)
        elif opts.audio == "none":
            sink = NullAudioSink()
        elif opts.audio == "device":
            sink = default_audio_sink(audio_dir)
        else:
            sink = WavFileSink(audio_dir)
        synth = opts.synthesizer
        if synth is None and spec.voice:
            from terrarium.voice.synth import PiperSynthesizer

            synth = PiperSynthesizer(Path(spec.voice))
        creature = c.name

        def observe(ev: Event) -> None:
            """The voice part's events, published as they come (its SpeechCut is not:
            ``barge_in`` publishes the cuts of every output); an utterance's figures also
            go in the transcript."""
            if isinstance(ev, SpeechCut):
                return
            self.bus.publish(ev)
            if isinstance(ev, UtteranceWritten):
                where = f"{ev.path} " if ev.path else ""
                cut = " (cut)" if ev.aborted else ""
                self.recorder.entry(
                    creature, "output", f"audio {where}{ev.duration:.2f} s{cut}; "
                    f"{speech_summary(ev.utterance_id, ev.metrics)}", c.turns)

        segmenter = SegmenterConfig(first_clause_chars=spec.first_clause_chars,
                                    first_piece_max_chars=spec.first_piece_max_chars)
        tts = TTSOutput(synth, sink, segmenter=segmenter, observer=observe,
                        yield_first_audio=spec.yield_first_audio,
                        synthesize_early=spec.synthesize_early,
                        # the guard lets a start it can judge through after START_WORDS
                        # complete words: early synthesis waits one more, for the replies
                        # it goes on holding (voice/early.py)
                        early_after_words=START_WORDS + 1, creature=creature,
                        output=oname)
        await stack.enter_async_context(tts)
        self.tts.append(tts)
        return tts

    def _make_controller(self, c: RunningCreature, sinks: Mapping[str, OutputSink],
                         slot: int | None, hub: ChannelHub) -> Controller:
        """A creature's controller. Token budgets use the documented estimate: exact counts
        (``EmbeddedServer.tokenizer()``) cost an HTTP round trip per new text, which would
        sit on every step's critical path."""
        opts = self.options
        if opts.models and c.name in opts.models:
            model = opts.models[c.name]
        else:
            model = make_model(c.parts.settings, embedded=self.embedded, slot=slot,
                               base_dir=c.parts.cdef.folder)
        name = c.name
        self._tell_retries(model, name)
        run_id = self.recorder.run_id

        async def send(channel: str, payload: dict[str, Any], key: str | None = None) -> int:
            # one exactly-once id per send of a turn: message id, log dedupe key, Nats-Msg-Id
            mid = c.send_id(run_id, key)
            res = await hub.send(name, channel, payload, key=mid or key, message_id=mid)
            return res.count

        log = self.recorder.log
        ctl = Controller(
            c.parts, model, sinks=sinks, send=send, memory=self.memory,
            emit=self.recorder.emitter(name), slot=slot,
            clock=opts.clock or datetime.now,
            journal=LogJournal(log, self.recorder.run_id) if log is not None else None,
            approver=opts.approver,
            answerer=bind_answerer(opts.answerer, name) if opts.answerer else None,
        )
        if ctl.tool_ctx.workspace is None and WORKSPACE_TOOLS & set(c.parts.registry.names()):
            # a creature that runs commands or edits files and names no workspace works in
            # a folder of its own in the run directory, never in its config folder
            # (or, when the team declares one, in the team's shared workspace)
            shared = self.team.workspace if self.team is not None else None
            ctl.tool_ctx.workspace = (self.run_dir / "workspace" if shared == "shared"
                                      else Path(shared) if shared
                                      else self.run_dir / "workspace" / name)
            ctl.tool_ctx.workspace.mkdir(parents=True, exist_ok=True)
        return ctl


WORKSPACE_TOOLS = frozenset({"shell", "edit", "multi_edit", "grep", "glob", "tree"})
"""The built-in tools that act in a workspace (read_file/write_file keep to their paths)."""


class LogJournal:
    """The durable log as the tools' effect journal (``tools.base.EffectJournal``)."""

    def __init__(self, log: DurableLog, run_id: str) -> None:
        self.log = log
        self.run_id = run_id

    def recorded(self, key: str) -> tuple[bool, str] | None:
        return self.log.effect(self.run_id, key)

    def record(self, key: str, creature: str, tool: str, ok: bool, result: str) -> None:
        self.log.record_effect(self.run_id, key, creature, tool, ok, result)
