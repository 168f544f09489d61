"""The server's sessions: stored in the log, loaded on their next input, unloaded when idle.

One task group (the app's lifespan) holds the log writer every session shares (their
messages, consumptions, turns and numbered events: one commit for many sessions), the
event writer of runs on a broker, the reaper that unloads idle
sessions, the shared embedded model server (one for all sessions: their creatures use its
slots) and one task per loaded session. At start, sessions a crash left running (their
run is still ``running`` in the log) are loaded again, so what they had not finished is
redelivered at once, exactly once.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Iterator, Mapping
from contextlib import AsyncExitStack, contextmanager, nullcontext
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.abc

from terrarium.channels.log import DurableLog
from terrarium.channels.payload import PayloadRefused
from terrarium.channels.writer import LogWriter, commit_at_once
from terrarium.config import Team
from terrarium.errors import ChannelRefusal, RuntimeFailure
from terrarium.llm.settings import ModelSettings
from terrarium.runtime.gate import TurnGate
from terrarium.runtime.options import USER
from terrarium.runtime.preflight import DryStart, dry_start
from terrarium.runtime.recording import LOG_FILE
from terrarium.runtime.sessions import SessionInfo, SessionStore
from terrarium.runtime.wiring import payload_problem
from terrarium.serve.events import EventWriter, SessionEvents
from terrarium.serve.live import LiveSession
from terrarium.serve.problems import Problem
from terrarium.serve.settings import ServeSettings

__all__ = ["SessionManager", "iso"]


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


class SessionManager:
    """Create, find, load, feed and unload the sessions of one team."""

    def __init__(self, team: Team, settings: ServeSettings, *,
                 models: Mapping[str, Any] | None = None, synthesizer: Any = None) -> None:
        self.team = team
        self.synthesizer = synthesizer
        self.settings = settings
        self.models = models  # per-creature model overrides (tests, benches)
        settings.runs_dir.mkdir(parents=True, exist_ok=True)
        self.log = DurableLog(settings.runs_dir / LOG_FILE)
        self.store = SessionStore(self.log)
        self.writer = EventWriter(self.log)
        # every session's turns share it: requests are served between turns' steps, not
        # after one step of every turn that is ready
        self.gate = TurnGate(settings.turns_at_once) if settings.turns_at_once else None
        # every session's writes but a broker run's (which keeps its own connection)
        self.log_writer = None if settings.broker else LogWriter(
            self.log, busy=self.gate.busy if self.gate is not None else None)
        self.loaded: dict[str, LiveSession] = {}
        self.deleting: set[str] = set()  # sessions being deleted: already gone (404)
        self.events: dict[str, SessionEvents] = {}
        self.embedded: Any = None
        self.ready = False
        self.started = time.time()
        self._tg: anyio.abc.TaskGroup | None = None
        self.output_creatures = tuple(sorted(
            n for n, c in team.creatures.items() if c.config.output.named_outputs))
        self.clock = time.monotonic  # the sessions' rate limit reads it (tests move it)
        self.loads = 0
        self.unloads = 0
        self.listeners: list[Any] = []  # told each event as it is published (metrics)
        self._checked: DryStart | None = None

    @property
    def checked(self) -> DryStart | None:
        """The team's dry start, made once and lent to every session's runtime: a session
        loads without assembling its creatures and building their prompt prefixes again
        (the parts are configuration only; each runtime makes its own controllers). With
        problems it is not lent, so each load refuses the team as a start would."""
        if self._checked is None:
            self._checked = dry_start(self.team, window=False)
        return None if self._checked.errors else self._checked

    # ------------------------------------------------------------------ lifecycle
    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
                  ) -> None:
        """Serve until cancelled: writer, reaper, model server, crashed sessions back."""
        async with AsyncExitStack() as stack, anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self.writer.run)
            if self.log_writer is not None:
                await tg.start(self.log_writer.run)
            await self._start_embedded(stack)
            tg.start_soon(self._reaper)
            for info in self.store.list(self.team.name):
                if self.log.run(info.run_id).status == "running":  # a crash left it so
                    await self.load(info.id)
            self.ready = True
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                with anyio.CancelScope(shield=True):
                    await self.stop_all()
                tg.cancel_scope.cancel()
        self.log.close()

    async def _start_embedded(self, stack: AsyncExitStack) -> None:
        """One embedded server for every session (a slot per embedded creature)."""
        names = [n for n, c in self.team.everyone.items()
                 if (c.config.controller or ModelSettings()).provider == "embedded"
                 and not (self.models and n in self.models)]
        if not names:
            return
        from terrarium.llm.embedded import EmbeddedServer
        from terrarium.llm.prefix_cache import prefix_cache_dir

        server = EmbeddedServer(slots=len(names), slot_save_dir=prefix_cache_dir())
        await stack.enter_async_context(server)
        self.embedded = server

    async def stop_all(self, grace: float = 5.0) -> None:
        """Stop every session, letting turns in progress end first (up to ``grace``
        seconds); what is cut is redelivered when the session is loaded again."""
        with anyio.move_on_after(grace):
            for live in list(self.loaded.values()):
                while live.rt is not None and live.rt.busy():  # noqa: ASYNC110
                    await anyio.sleep(0.02)
        for live in list(self.loaded.values()):
            live.stop()
        for live in list(self.loaded.values()):
            await live.stopped.wait()
        await self.flush()

    async def flush(self) -> None:
        """Commit every write queued now."""
        self.writer.flush()
        if self.log_writer is not None:
            await self.log_writer.flush()

    def close_streams(self) -> None:
        """The server is shutting down: end every event stream and audio socket, so no
        open connection keeps it waiting (clients reconnect with the last seq they saw)."""
        for ev in self.events.values():
            ev.close()
        for live in self.loaded.values():
            for s in list(live.audio.sockets):
                s.close()

    async def _reaper(self) -> None:
        s = self.settings
        while True:
            await anyio.sleep(s.reap_every)
            now = time.monotonic()
            for live in list(self.loaded.values()):  # (the cheap test first: many are)
                if (now - live.last_active >= s.idle_unload and live.rt is not None
                        and not live.busy() and not self._unread(live.info.run_id)):
                    live.stop()

    def _unread(self, run_id: str) -> bool:
        """Whether a message of the run is still to be consumed: one handed to a creature
        that has not yet started its turn is in no inbox buffer, so ``busy`` misses it."""
        return bool(self.log.query(
            "SELECT 1 FROM messages m, json_each(m.receivers) r WHERE m.run_id=? AND NOT"
            " EXISTS (SELECT 1 FROM consumptions c WHERE c.message_id=m.id AND"
            " c.receiver=r.value) LIMIT 1", (run_id,)))

    # ------------------------------------------------------------------ sessions
    def info(self, session_id: str) -> SessionInfo:
        live = self.loaded.get(session_id)
        if live is not None and session_id not in self.deleting:
            return live.info  # loaded: known without a query (the hot path of input)
        info = self.store.get(session_id) if _plausible(session_id) else None
        if info is None or info.terrarium != self.team.name or session_id in self.deleting:
            raise Problem(404, f"there is no session {session_id!r}", slug="no-session")
        return info

    def public(self, info: SessionInfo) -> dict[str, Any]:
        live = self.loaded.get(info.id)
        return {"id": info.id, "name": info.name, "created_at": iso(info.created),
                "updated_at": iso(info.updated), "loaded": live is not None and
                live.rt is not None, "status": live.status if live is not None else "unloaded",
                "turns": info.turns}

    def create(self, name: str | None, field: str = "name") -> SessionInfo:
        if name is not None:
            _check_name(name, field)
        try:
            return self.store.create(self.team, name)
        except RuntimeFailure as exc:
            raise Problem(409, exc.message, slug="session-exists") from None

    def by_user(self, key: str, field: str = "user") -> SessionInfo:
        """An OpenAI client's ``user`` (or X-Terrarium-Session): a session id, else a name
        (the session is made on first use; 32 hex digits that are no session's id are a
        name too: clients send a hash of their user there, an MD5 among them)."""
        if _plausible(key):
            info = self.store.get(key)
            if info is not None and info.terrarium == self.team.name:
                return info
        return self.store.by_name(self.team.name, key) or self.create(key, field)

    def events_of(self, session_id: str) -> SessionEvents:
        """The session's numbered events: one object while the session is loaded or a
        stream is open on it (``stream``), made again from the log after (``_release``)."""
        ev = self.events.get(session_id)
        if ev is None:
            ev = self.events[session_id] = SessionEvents(
                session_id, self.info(session_id).run_id, self.log, self.writer,
                self.log_writer)
            for fn in self.listeners:
                ev.listen(fn)
        return ev

    @contextmanager
    def stream(self, session_id: str, after: int) -> Iterator[SessionEvents]:
        """The session's events for one stream resuming ``after`` (kept while it is open).
        422 when ``after`` is past the session's last event: this server never gave that
        number (a client's bug, or an id from another server), and a stream from it would
        wait in silence, then skip the events numbered up to it."""
        ev = self.events_of(session_id)
        if after > ev.last_seq:
            self._release(session_id, ev)
            last = ev.last_seq
            raise Problem(422, f"after (or Last-Event-ID) is {after}, past the last event of "
                          f"this session, {last}: resume from a seq this server sent (at "
                          f"most {last}), or from 0 for every event", slug="after-past-last",
                          errors=[{"field": "after",
                                   "message": f"at most {last}, the last event's seq"}])
        ev.streams += 1
        try:
            yield ev
        finally:
            ev.streams -= 1
            self._release(session_id, ev)

    def _release(self, session_id: str, ev: SessionEvents) -> None:
        """Forget a session's events object once nothing holds it: not loaded, no stream
        open, every event it numbered committed (else once they are: a new object numbers
        on from the log's last event, so an uncommitted one would be numbered twice). A
        server whose clients stream from many sessions keeps only the live ones'."""
        if ev.streams or session_id in self.loaded or self.events.get(session_id) is not ev:
            return
        if not ev.settled:
            ev.on_settled = lambda: self._release(session_id, ev)
            return
        del self.events[session_id]

    async def delete(self, session_id: str) -> None:
        """Stop and forget a session. It is gone (404) from the moment this starts: an
        input arriving while its runtime stops would load it again, a runtime with no
        session left to own it, and be accepted after the delete was."""
        self.info(session_id)
        self.deleting.add(session_id)
        try:
            live = self.loaded.get(session_id)
            if live is not None:
                live.stop()
                await live.stopped.wait()
            await self.flush()
            self.store.delete(session_id)
            ev = self.events.pop(session_id, None)
            if ev is not None:
                ev.close()
        finally:
            self.deleting.discard(session_id)

    async def load(self, session_id: str, *, hold: bool = False) -> LiveSession:
        """The session running, started if it was not (its next input wakes it).
        ``hold``: count an input in progress from now on (the caller takes it back with
        ``live.inputs -= 1``), so the session is not unloaded between start and input."""
        while True:
            live = self.loaded.get(session_id)
            if live is None or not live._stop.is_set():
                break
            await live.stopped.wait()  # being unloaded: let it finish, then start again
        if live is None:
            info = self.info(session_id)
            if self._tg is None:
                raise Problem(503, "the server is not running yet", slug="not-ready")
            live = LiveSession(info, self.team, self.settings, self.events_of(session_id),
                               embedded=self.embedded, models=self.models,
                               synthesizer=self.synthesizer, log=self.log,
                               checked=self.checked, gate=self.gate, clock=self.clock)
            self.loaded[session_id] = live
            self.loads += 1
            self._tg.start_soon(self._host, live)
        if hold:
            live.inputs += 1
        if not live.ready.is_set():  # (loaded: no wait, not even a trip round the loop)
            with anyio.move_on_after(self.settings.load_timeout):
                await live.ready.wait()
        if live.error or live.rt is None:
            if hold:
                live.inputs -= 1
            why = live.error or "it did not start in time"
            raise Problem(503, f"the session could not start: {why}", slug="session-failed")
        live.touch()
        return live

    async def _host(self, live: LiveSession) -> None:
        try:
            await live.run()
        finally:
            if self.loaded.get(live.info.id) is live:
                del self.loaded[live.info.id]
                self.unloads += 1
            live.events.recent.clear()
            self._release(live.info.id, live.events)

    # ------------------------------------------------------------------ input
    def check_input(self, live: LiveSession, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The body to send, checked once, by the session's hub as its send would check it
        (then sent unchecked): 422 with each field's complaint and the channel's own
        sentence; 413 past the channel's ``max_bytes``."""
        channel = self.team.input_channel
        if not channel:
            raise Problem(409, f"terrarium {self.team.name!r} has no input_channel, so input "
                          "has nowhere to go", slug="no-input-channel")
        rt = live.rt
        if rt is None or rt.hub is None:
            raise Problem(503, "the session is stopping; send again", slug="session-stopping")
        try:
            return rt.hub.check(USER, channel, payload)
        except PayloadRefused as r:
            if not r.errors:  # (the schema took it: its size did not fit)
                raise Problem(413, r.reason, slug="too-large") from None
            detail = payload_problem(self.team, channel, payload) or r.reason
            raise Problem(422, detail, slug="invalid-input", errors=r.errors) from None

    async def send(self, live: LiveSession, *, text: str | None = None,
                   payload: Mapping[str, Any] | None = None) -> int:
        """Give the session its input; returns the seq of the last event before it (read
        the events ``after`` it to see everything the input caused)."""
        body = self.check_input(live, payload if payload is not None else {"text": text or ""})
        wait = live.take_token()
        if wait:
            raise Problem(429, f"too many inputs for this session; try again in {wait:.2f} s",
                          slug="rate-limited",
                          headers={"Retry-After": str(max(1, round(wait + 0.5)))})
        rt = live.rt
        if rt is None:
            raise Problem(503, "the session is stopping; send again", slug="session-stopping")
        seq = live.events.last_seq
        live.touch()
        # the turns wait while inputs are handled: a burst of inputs is taken whole, then
        # its turns run (bounded: runtime/gate.py)
        first = self.gate.inputs_first() if self.gate is not None else nullcontext()
        try:
            # the message commits before it is delivered, and the events it caused before
            # the answer (the first event is streamable at once): in one transaction when
            # the inbox can take the message at once (ChannelHub._send_at_once), after one
            # trip round the loop, with every input's rows of that trip (a burst of a
            # hundred inputs: two commits, not two hundred; writer.py)
            held = self.log_writer.held() if self.log_writer is not None else nullcontext()
            with first, commit_at_once(together=True), held:
                await rt.barge_in()  # (as send_user: the team has an input channel)
                await rt.send(self.team.input_channel or "", body)
                if self.log_writer is not None:
                    await self.log_writer.commit_soon(together=True)
        except ChannelRefusal as exc:
            status = 413 if "max_bytes" in exc.message else 422
            raise Problem(status, exc.message, slug="refused") from None
        return seq


NAME_MAX = 200  # characters of a session name (NewSession's max_length)


def _check_name(name: str, field: str) -> None:
    """A session name is shown in lists and logs and typed again to find the session: 422
    for one that is empty, long or holds control characters."""
    why = None
    if not name.strip():
        why = "is empty"
    elif len(name) > NAME_MAX:
        why = f"is {len(name)} characters long; at most {NAME_MAX}"
    elif any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in name):
        why = "holds a control character"
    if why:
        raise Problem(422, f"the session name {why}: give a short name of visible characters",
                      slug="invalid-name", errors=[{"field": field, "message": f"the name {why}"}])


def _plausible(session_id: str) -> bool:
    return len(session_id) == 32 and all(c in "0123456789abcdef" for c in session_id)
