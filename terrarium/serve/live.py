"""One loaded session: its team runtime, and the approvals and questions it waits on.

The runtime runs inside a task of the server's task group (structured: unloading a
session ends its task, and the server's lifespan ends them all). Approvals and
``ask_user`` questions wait for an answer over the API; with none within the configured
time they are denied (``by: timeout``), which the runtime records like any decision.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from terrarium.config import Team
from terrarium.runtime.gate import TurnGate
from terrarium.runtime.options import RuntimeOptions
from terrarium.runtime.preflight import DryStart
from terrarium.runtime.runtime import TeamRuntime
from terrarium.runtime.sessions import SessionInfo
from terrarium.serve.audio import SessionAudio
from terrarium.serve.events import SessionEvents
from terrarium.tools.approval import Approval

if TYPE_CHECKING:
    from terrarium.serve.settings import ServeSettings

__all__ = ["LiveSession", "Pending"]

logger = logging.getLogger("terrarium.serve")


@dataclass(slots=True)
class Pending:
    """An approval or a question waiting for its answer over the API."""

    id: str
    kind: str  # approval | question
    creature: str
    tool: str | None = None
    args: dict[str, Any] | None = None
    question: str | None = None
    choices: tuple[str, ...] = ()
    created: float = field(default_factory=time.time)
    answered: anyio.Event = field(default_factory=anyio.Event)
    approved: bool = False
    answer: str | None = None

    def public(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "creature": self.creature,
                "tool": self.tool, "args": self.args, "question": self.question,
                "choices": list(self.choices),
                "created_at": datetime.fromtimestamp(self.created, UTC).isoformat()}


class _Discard:
    """Where a creature's ``stdout`` output goes in a server: nowhere (clients read it as
    ``output_text`` events)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


class LiveSession:
    """A session whose runtime is running (or starting, or stopping)."""

    def __init__(self, info: SessionInfo, team: Team, settings: ServeSettings,
                 events: SessionEvents, embedded: Any = None,
                 models: Mapping[str, Any] | None = None, synthesizer: Any = None,
                 log: Any = None, checked: DryStart | None = None,
                 gate: TurnGate | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.info = info
        self.team = team
        self.settings = settings
        self.events = events
        self.embedded = embedded
        self.models = models
        self.synthesizer = synthesizer  # the voice (tests and benches give a fake)
        self.log = log  # the server's one connection to the log, lent to the runtime
        self.checked = checked  # the server's dry start of the team, lent to the runtime
        self.gate = gate  # the server's turn gate, shared by every session's turns
        self.clock = clock  # the rate limit's clock (tests give one they move by hand)
        self.audio = SessionAudio()  # the audio sockets the session's voices play into
        self.rt: TeamRuntime | None = None
        self.ready = anyio.Event()
        self.stopped = anyio.Event()
        self._stop = anyio.Event()
        self.error: str | None = None
        self.last_active = time.monotonic()
        self.pending: dict[str, Pending] = {}
        self.sockets = 0  # audio sockets: a session someone talks to stays loaded
        self.inputs = 0  # inputs being handled (a reply being collected keeps it loaded)
        self.tokens: tuple[float, float] | None = None  # the rate limit's bucket: (tokens, when)

    # ------------------------------------------------------------------ lifecycle
    def options(self) -> RuntimeOptions:
        s = self.settings
        opts = RuntimeOptions(runs_dir=Path(s.runs_dir), resume=self.info.run_id,
                              audio="none", keep_history=True, keep_results=False,
                              embedded=self.embedded,
                              approver=self.approve, answerer=self.answer,
                              models=self.models, warm_up=s.warm_up, stdout=_Discard(),
                              audio_sink=self.audio.sink, synthesizer=self.synthesizer,
                              log=self.log, log_writer=self.events.shared,
                              log_events=self.events.shared is None, turn_gate=self.gate)
        if s.broker:
            opts.broker = s.broker
            opts.host = None
            opts.log = None  # a run on a broker mirrors its own log connection's writes
            opts.ack_wait = s.ack_wait
            if s.remote:  # those run in workers; what they do comes back as the session's
                opts.host = frozenset(self.team.creatures) - frozenset(s.remote)
                opts.session = self.info.id
                opts.worker_name = f"serve {self.info.id}"  # the same after a restart
                opts.remote_events = self.events.offer
                opts.remote_wait = s.remote_wait
        return opts

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
                  ) -> None:
        """Run the session's team until ``stop``; ``ready`` once it takes input."""
        started = False
        self.events.listen(self.audio.observe)
        try:
            runtime = TeamRuntime(self.team, self.options(), checked=self.checked)
            # subscribed before start: the start-up events (warm-up, ready) are numbered too
            sub = runtime.bus.tap(self.events.offer)
            try:
                async with runtime as rt:
                    self.rt = rt
                    self.touch()  # idle from now, not from when loading began
                    self.ready.set()
                    task_status.started()
                    started = True
                    try:
                        await self._stop.wait()
                    finally:
                        self.rt = None
                        for p in self.pending.values():  # nobody will answer them now
                            p.answered.set()
            finally:
                sub.close()  # after the run's end (RunEnded) was numbered
        except Exception as exc:
            cause: BaseException = exc
            while isinstance(cause, BaseExceptionGroup) and cause.exceptions:
                cause = cause.exceptions[0]
            logger.error("session %s failed", self.info.id, exc_info=exc)
            self.error = f"{type(cause).__name__}: {getattr(cause, 'message', cause)}"
            if not started:
                self.ready.set()
                task_status.started()
        finally:
            self.events.unlisten(self.audio.observe)
            self.ready.set()
            self.stopped.set()
            self.audio.close()  # its sockets end with it, not wait for a voice that is gone

    def stop(self) -> None:
        self._stop.set()

    def touch(self) -> None:
        self.last_active = time.monotonic()

    def busy(self) -> bool:
        rt = self.rt
        return bool(self.inputs or self.sockets or self.pending
                    or (rt is not None and rt.busy()))

    @property
    def status(self) -> str:
        if self.error:
            return "failed"
        if self.rt is None:
            return "loading" if not self.ready.is_set() else "stopping"
        return "busy" if self.busy() else "idle"

    def take_token(self) -> float:
        """The rate limit: 0 when an input may go now, else seconds until one may."""
        rate = self.settings.rate
        burst = max(1.0, 2 * rate)
        now = self.clock()
        if self.tokens is None:
            tokens = burst
        else:
            tokens, when = self.tokens
            tokens = min(burst, tokens + (now - when) * rate)
        if tokens < 1.0:
            self.tokens = (tokens, now)
            return (1.0 - tokens) / rate
        self.tokens = (tokens - 1.0, now)
        return 0.0

    # ------------------------------------------------------------------ the human, over the API
    async def _wait(self, p: Pending) -> bool:
        self.pending[p.id] = p
        try:
            with anyio.move_on_after(self.settings.approval_timeout):
                await p.answered.wait()
                return True
            return False
        finally:
            self.pending.pop(p.id, None)
            self.touch()

    async def approve(self, creature: str, tool: str, args: Mapping[str, Any]) -> Approval:
        p = Pending(id=secrets.token_hex(8), kind="approval", creature=creature, tool=tool,
                    args=dict(args))
        if not await self._wait(p):
            return Approval(False, f"nobody answered within {self.settings.approval_timeout:g} s",
                            by="timeout")
        if p.answer is None and not p.approved and self.rt is None:
            return Approval(False, "the session was unloaded", by="server")
        return Approval(p.approved, p.answer or "", by="api")

    async def answer(self, creature: str, question: str, choices: Sequence[str]) -> str | None:
        p = Pending(id=secrets.token_hex(8), kind="question", creature=creature,
                    question=question, choices=tuple(choices))
        if not await self._wait(p):
            return None
        return p.answer
