"""The terrarium runtime's facade: ``TeamRuntime`` runs a validated team.

One task group holds everything: the channel hub (with its log writer), the recorder's
event writer, each TTS output's workers, and one supervised loop per creature. A creature
wakes on its inbox; the user speaks through the input channel (or to the optional root
creature, which operates the team with team tools). Every message is logged before
delivery and marked consumed when the turn that read it ends, so a run killed at any point
can be resumed with ``RuntimeOptions(resume=RUN_ID)`` (``terrarium run --resume``) and each
message is consumed exactly once.

The work is done by parts this class only starts and delegates to: ``wiring`` (team →
hub, sinks, controllers), ``supervision`` (creature loops, backoff, restart) and
``recording`` (log, statuses, transcripts).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from terrarium.channels.bus import EventBus
from terrarium.channels.hub import ChannelHub
from terrarium.channels.log import DurableLog, RunStatus
from terrarium.channels.payload import Checked
from terrarium.config import Team
from terrarium.controller.loop import Incoming, TurnResult
from terrarium.errors import RuntimeFailure
from terrarium.events import Event, TranscriptEntry
from terrarium.llm.embedded import EmbeddedServer
from terrarium.prompt.built_prompt import BuiltPrompt
from terrarium.runtime.api import CreatureStatus
from terrarium.runtime.creature import RunningCreature
from terrarium.runtime.distributed import announce_end, session_fields
from terrarium.runtime.options import ROOT, USER, RuntimeOptions, Supervision
from terrarium.runtime.preflight import DryStart
from terrarium.runtime.recording import LOG_FILE, Recorder
from terrarium.runtime.remote import RemoteCreatures
from terrarium.runtime.startup import start_team
from terrarium.runtime.supervision import Supervisor
from terrarium.runtime.warmup import WarmUp
from terrarium.runtime.wiring import (
    assemble_team,
    connect_team_mcp,
    hosted,
    payload_problem,
)
from terrarium.store import MemoryStore
from terrarium.voice.sink import OutputSink

if TYPE_CHECKING:  # nats-py loads only for a run on a broker
    from terrarium.channels.nats import NatsTransport

# RuntimeOptions, Supervision and LOG_FILE are re-exported: callers import them from here
__all__ = ["LOG_FILE", "RuntimeOptions", "Supervision", "TeamRuntime"]

WARM_SAVE_LIMIT = 600.0
"""Seconds a run that ended normally still waits for a prompt prefix being evaluated in the
background, so that it is saved for the next start (an interrupted run does not wait)."""


class TeamRuntime:
    """Run a validated team: ``async with TeamRuntime(team) as rt: await rt.send_user(...)``."""

    def __init__(self, team: Team, options: RuntimeOptions | None = None, *,
                 checked: DryStart | None = None) -> None:
        """``checked``: the team's dry start made already (the command line's), so its
        creatures are not assembled and checked twice; without it the start makes one and
        refuses what ``terrarium validate`` refuses (``ConfigErrors``)."""
        self.team = team
        self._checked = checked
        self.options = options or RuntimeOptions()
        self.options.runs_dir = Path(self.options.runs_dir)
        self.bus = EventBus()
        self.run_id = ""
        self.log_path: Path | None = None
        self.run_dir: Path | None = None
        self.log: DurableLog | None = None
        self.hub: ChannelHub | None = None
        self.memory: MemoryStore | None = None
        self.embedded: EmbeddedServer | None = None
        self.sinks: dict[str, dict[str, OutputSink]] = {}
        self.tts: list[Any] = []
        self.resumed: dict[str, int] = {}
        self.status: RunStatus = "running"  # the run's final status once it has ended
        self._timed_out = False
        self._degraded = False
        self._recorder = Recorder(self.bus, self.options)
        self._creatures: dict[str, RunningCreature] = {}
        self._supervisor: Supervisor | None = None
        self._stack: AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self.transport: NatsTransport | None = None
        self._started = 0.0
        self._warm: WarmUp | None = None
        self._remote: RemoteCreatures | None = None  # the creatures in workers, followed

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> TeamRuntime:
        opts, rec = self.options, self._recorder
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            # MCP servers are up before assembly, which lists their tools with the others
            mcp_tools = await connect_team_mcp(self.team, stack, self._tell)
            self._creatures = hosted(assemble_team(self.team, mcp_tools, self._checked), opts)
            for c in self._creatures.values():
                s = c.parts.settings  # a scripted creature's `model:` names no model it uses
                rec.add(c.name, s.provider if s.provider == "scripted" else s.model or s.provider)
            rec.open(Path(opts.runs_dir), self.team, opts.resume, join=opts.join)
        except BaseException:
            await stack.__aexit__(None, None, None)
            raise
        self._started = time.time()
        self.run_id, self.log_path, self.log = rec.run_id, rec.log_path, rec.log
        self.run_dir = Path(opts.runs_dir) / self.run_id
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.memory = MemoryStore(self.run_dir / "memory.sqlite3", lazy=True)  # opened if used
        try:
            st = await start_team(
                self.team, opts, self._creatures, recorder=rec, bus=self.bus,
                run_dir=self.run_dir, memory=self.memory, started_at=self._started, stack=stack,
                operator=self if self.team.root is not None else None)
        except BaseException as exc:
            await stack.__aexit__(None, None, None)
            # Ctrl-C in the start is an interruption, as after it (``__aexit__``)
            self.status = ("interrupted" if isinstance(
                exc, (KeyboardInterrupt, anyio.get_cancelled_exc_class())) else "failed")
            rec.fail(self.status)
            self.memory.close()
            raise
        self.hub, self._tg, self._supervisor = st.hub, st.tg, st.supervisor
        self.transport, self.resumed = st.transport, st.resumed
        self._warm = st.warm
        self._remote = st.remote
        self.sinks, self.tts, self.embedded = st.wiring.sinks, st.wiring.tts, st.wiring.embedded
        self._stack = stack
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        stack, self._stack = self._stack, None
        if stack is None:
            return None
        status: RunStatus = self._recorder.outcome(
            self._creatures, timed_out=self._timed_out, degraded=self._degraded
        ) if e is None else (
            "interrupted" if isinstance(e, (KeyboardInterrupt, anyio.get_cancelled_exc_class()))
            else "failed")
        if self._supervisor is not None:
            # background jobs still running are cancelled and recorded so; a run that lost
            # a job's work (or a result nobody got) did not complete
            cut, unread = self._supervisor.end_jobs()
            self._recorder.jobs_cut(cut, unread)
            if (cut or unread) and status == "completed":
                status = "degraded"
        self.status = status
        if self._warm is not None and e is None:  # the next start restores what this saved
            await self._warm.wait_saved(WARM_SAVE_LIMIT)
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        if (self.transport is not None and not self.options.join
                and not self.transport.lost_for()):  # a lost broker hears nothing
            with anyio.CancelScope(shield=True):  # tell the workers the run is over
                await announce_end(self.transport, self.team, status, self._started,
                                   self._recorder, session_fields(self.team, self.options))
        try:
            # never swallow the body's exception, whatever an inner context manager says
            await stack.__aexit__(et, e, tb)
        finally:
            self._recorder.close(status)
            if self.memory is not None:
                self.memory.close()
        return None

    def stopped_by_timeout(self) -> None:
        """The caller's deadline (``--timeout``) ended the run: it is recorded as ``timeout``
        (unless creatures failed, which ``failed``/``degraded`` report first)."""
        self._timed_out = True

    def _tell(self, event: Event) -> None:
        """An event from before the log is open: to the bus, and to ``on_event`` (which
        otherwise hears events as the log writes them)."""
        self.bus.publish(event)
        if self.options.on_event is not None:
            self.options.on_event(event)

    def mark_degraded(self) -> None:
        """The caller saw the run lose work no creature failure shows (a refusal never made
        good): it is recorded as ``degraded`` unless it ended worse."""
        self._degraded = True

    # ------------------------------------------------------------------ records (TeamHandle)
    @property
    def failed_creatures(self) -> dict[str, str]:
        """Each creature that ended failed, with its last error."""
        return self._recorder.failed_creatures()

    @property
    def lost_jobs(self) -> list[str]:
        """Background work the end of the run cut off, one sentence each (none: nothing)."""
        return list(self._recorder.lost_jobs)

    @property
    def statuses(self) -> Mapping[str, CreatureStatus]:
        return self._recorder.statuses

    @property
    def turns_total(self) -> int:
        return self._recorder.turns_total

    @property
    def results(self) -> list[tuple[str, TurnResult]]:
        return self._recorder.results

    def transcript(self, creature: str) -> Sequence[TranscriptEntry]:
        return tuple(self._recorder.transcripts.get(creature, ()))

    def prompt(self, creature: str) -> BuiltPrompt | None:
        c = self._creatures.get(creature)
        return c.controller.last_prompt if c and c.controller else None

    def check_payload(self, channel: str, payload: Mapping[str, Any]) -> str | None:
        return payload_problem(self.team, channel, payload)

    # ------------------------------------------------------------------ talking to the team
    async def send(self, channel: str, payload: Mapping[str, Any]) -> None:
        if self.hub is None:
            raise RuntimeFailure("the team is not running")
        # (a body the hub checked already, ``hub.check``, goes as it is: not checked twice)
        await self.hub.send(USER, channel, payload if type(payload) is Checked else dict(payload))

    async def send_user(self, text: str) -> None:
        """User input: barge in on any speech, then send on the input channel.

        A team with a root creature and no input channel gives the text to the root.
        """
        if not self.team.input_channel and self.team.root is not None:
            await self.ask(ROOT, text)
            return
        if not self.team.input_channel:
            raise RuntimeFailure(
                f"terrarium {self.team.name!r} has no input_channel, so user text has "
                "nowhere to go", suggestion="set terrarium.input_channel in terrarium.yaml")
        await self.barge_in()
        await self.send(self.team.input_channel, {"text": text})

    async def ask(self, creature: str, text: str) -> TurnResult | None:
        """Give ``creature`` user text directly (single-creature runs, the root creature)."""
        assert self._supervisor is not None
        c = self._creatures[creature]
        result = await self._supervisor.turn(c, [Incoming(text=text)])
        self._recorder.save_history(c.name, None, c.controller)  # a session keeps it
        if result is not None and result.refused:  # never a silent empty answer
            self._supervisor.refused(c, USER, "", "the input", result.refused)
        return result

    async def barge_in(self) -> None:
        """Stop current speech, clear what is queued, and cut the speaking turns short."""
        if self._supervisor is not None:
            await self._supervisor.barge_in()

    async def wake(self, creature: str, label: str, sender: str,
                   payload: dict[str, Any]) -> None:
        """Give ``creature`` a message from the framework (a trigger, a job's end)."""
        assert self._supervisor is not None
        await self._supervisor.wake(creature, label, sender, payload)

    # ------------------------------------------------------------------ the root's team tools
    async def send_as_root(self, channel: str, payload: Mapping[str, Any]) -> int:
        """A send by the root creature (team tool); returns how many listeners it reached."""
        if self.hub is None:
            raise RuntimeFailure("the team is not running")
        return (await self.hub.send(ROOT, channel, dict(payload))).count

    async def start_creature(self, name: str) -> None:
        """Start a stopped or failed creature again; its unread messages are still there."""
        assert self._supervisor is not None
        self._supervisor.start(name)

    async def stop_creature(self, name: str) -> None:
        assert self._supervisor is not None
        self._supervisor.stop(name)

    # ------------------------------------------------------------------ waiting
    def busy(self) -> bool:
        """Whether anything is still moving: a turn, a restart backoff, or an unread message.

        Speech still being synthesized is waited for by :meth:`wait_idle` (``drain``).
        """
        if self._supervisor is not None and self._supervisor.busy():
            return True
        # a run past one machine: messages still unacked in the broker (other processes),
        # or whose consumption by a creature in a worker is not read back here yet
        if self.transport is not None and self.transport.outstanding() > 0:
            return True
        return self._remote is not None and self._remote.pending()

    async def wait_idle(self, *, poll: float = 0.01, settle: int = 3) -> None:
        """Return once the team has been quiet for ``settle`` polls in a row (its speech
        synthesized and its events written)."""
        quiet = 0
        while quiet < settle:
            await anyio.sleep(poll)
            quiet = 0 if self.busy() else quiet + 1
        for t in self.tts:
            await t.drain()
        await self._recorder.events_written()

