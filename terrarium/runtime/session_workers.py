"""A worker for every session of a served team: ``terrarium worker PATH --broker URL --sessions``.

``terrarium serve PATH --broker URL --remote bot`` leaves ``bot`` to workers. Each loaded
session is a run on the broker whose runs record names the session and its remote
creatures; a session worker follows those records and joins each running session's run
(a ``TeamRuntime`` with ``join``), hosting the remote creatures it may host, until the
server unloads the session (its record says it ended). The server unloads idle sessions,
so what a worker holds is bounded by what the server has loaded.

Per session and creature, one worker at a time: a worker first claims the creature for the
session (``channels/nats/sessions.Claims``, a key that expires ``ack_wait`` seconds after
its owner stops refreshing it). So a creature's conversation in a session is one line of
turns: the claimant takes it from the log stream as whoever ran it before left it
(``runtime/remote.import_history``) and goes on from there. A worker killed in a turn stops
refreshing; another worker takes the claim once it expires, and the broker hands it the
unacked message once the ack wait is over: the turn is done again, its sends under the same
ids (dropped by the broker as copies), its message consumed once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from terrarium.config import Team
from terrarium.runtime.distributed import team_hash
from terrarium.runtime.options import RuntimeOptions
from terrarium.runtime.runtime import TeamRuntime

if TYPE_CHECKING:
    from nats.js import JetStreamContext

    from terrarium.channels.nats.sessions import Claims
    from terrarium.runtime.preflight import DryStart

__all__ = ["SessionWorker"]


@dataclasses.dataclass(slots=True)
class _Joined:
    """One session this worker is in (or trying to get into)."""

    session: str
    stop: anyio.Event = dataclasses.field(default_factory=anyio.Event)
    again: bool = False  # loaded again while this worker was still leaving it


class SessionWorker:
    """Host ``creatures`` (None: any) of every loaded session of ``team`` on the broker."""

    def __init__(self, team: Team, options: RuntimeOptions, *,
                 creatures: Collection[str] | None = None, name: str = "worker",
                 checked: DryStart | None = None,
                 say: Callable[[str], None] = lambda line: None) -> None:
        self.team = team
        self.options = options
        self.creatures = frozenset(creatures) if creatures is not None else None
        self.name = name
        self.checked = checked
        self.say = say
        self.joined: dict[str, _Joined] = {}
        self.turns = 0
        self._claims: dict[float, Claims] = {}
        self._hash = team_hash(team)
        self._refused: set[str] = set()

    async def run(self) -> None:
        """Serve sessions until cancelled."""
        from terrarium.channels.nats import connect_broker
        from terrarium.channels.nats.sessions import watch_runs

        assert self.options.broker is not None
        nc = await connect_broker(self.options.broker, name=f"terrarium {self.name}")
        js = nc.jetstream(timeout=10)
        try:
            async with anyio.create_task_group() as tg:
                async for rec in watch_runs(js, self.team.name):
                    if rec is not None and rec.get("session"):
                        self._seen(rec, js, tg)
        finally:
            await nc.close()

    def _seen(self, rec: dict[str, Any], js: JetStreamContext,
              tg: anyio.abc.TaskGroup) -> None:
        """A session's runs record: join a session that runs, leave one that ended."""
        run_id = str(rec["run_id"])
        joined = self.joined.get(run_id)
        if rec.get("status") != "running":
            if joined is not None:
                joined.stop.set()
            return
        if joined is not None:
            if joined.stop.is_set():  # unloaded and loaded again before we had left
                joined.again = True
            return
        if rec.get("config_hash") != self._hash:
            if run_id not in self._refused:
                self._refused.add(run_id)
                self.say(f"not joining session {rec['session']}: its team's config hash "
                         f"differs from this copy's (use the same terrarium folder)")
            return
        mine = [c for c in rec.get("remote", ())
                if c in self.team.creatures and (self.creatures is None or c in self.creatures)]
        if not mine:
            return
        joined = self.joined[run_id] = _Joined(str(rec["session"]))
        tg.start_soon(self._host, js, run_id, mine, float(rec.get("ack_wait") or 30.0),
                      joined)

    async def _host(self, js: JetStreamContext, run_id: str, wanted: list[str], ttl: float,
                    joined: _Joined) -> None:
        """Claim what this worker may host of the session and run it, until the session
        ends; a claim held elsewhere is tried again as it may expire."""
        claims = await self._claims_for(js, ttl)
        try:
            while not joined.stop.is_set() or self._again(joined):
                mine: dict[str, int] = {}
                for c in wanted:
                    rev = await claims.take(run_id, c, self.name)
                    if rev is not None:
                        mine[c] = rev
                if mine:
                    try:
                        await self._run(run_id, mine, wanted, claims, joined)
                    except Exception as exc:  # one session's trouble never ends the worker
                        cause: BaseException = exc
                        while isinstance(cause, BaseExceptionGroup) and cause.exceptions:
                            cause = cause.exceptions[0]
                        self.say(f"session {joined.session}: could not host it: "
                                 f"{getattr(cause, 'message', cause)}")
                        with anyio.move_on_after(max(0.2, ttl / 3)):
                            await joined.stop.wait()  # then try again, unless it ended
                    finally:
                        with anyio.CancelScope(shield=True):
                            for c, rev in mine.items():
                                await claims.release(run_id, c, rev)
                else:
                    with anyio.move_on_after(max(0.2, ttl / 3)):
                        await joined.stop.wait()
        finally:
            self.joined.pop(run_id, None)

    @staticmethod
    def _again(joined: _Joined) -> bool:
        """The session ended here but was loaded again meanwhile: take it up again."""
        if not joined.again:
            return False
        joined.again = False
        joined.stop = anyio.Event()
        return True

    async def _run(self, run_id: str, mine: dict[str, int], wanted: list[str],
                   claims: Claims, joined: _Joined) -> None:
        """Run the claimed creatures of one session while the claims hold; returns to claim
        again when a claim was lost, or when one this worker lacked can be had."""
        opts = dataclasses.replace(
            self.options, join=run_id, host=frozenset(mine), keep_history=True,
            keep_results=False, log_output_text=True, session=joined.session, resume=None,
            ack_wait=claims.ttl)
        hosting = ", ".join(sorted(mine))
        async with anyio.create_task_group() as tg:
            # refreshed from the start: a slow start (a model to load) must not let them lapse
            tg.start_soon(self._keep, run_id, mine, wanted, claims, tg.cancel_scope)
            async with TeamRuntime(self.team, opts, checked=self.checked) as rt:
                self.say(f"session {joined.session}: hosting {hosting} (run {run_id})")
                try:
                    await joined.stop.wait()
                finally:
                    self.turns += rt.turns_total
                    self.say(f"session {joined.session}: left ({rt.turns_total} turn(s) "
                             "here)")
            tg.cancel_scope.cancel()

    async def _keep(self, run_id: str, mine: dict[str, int], wanted: list[str],
                    claims: Claims, scope: anyio.CancelScope) -> None:
        """Refresh the claims (a third of their TTL apart); a lost one ends the run here
        at once (another worker has the creature now). A wanted creature this worker did
        not get is tried too: once free, the session is joined again with it."""
        while True:
            await anyio.sleep(claims.ttl / 3)
            for c in list(mine):
                rev = await claims.refresh(run_id, c, self.name, mine[c])
                if rev is None:
                    self.say(f"lost the claim on {c} in run {run_id}; leaving it")
                    del mine[c]
                    scope.cancel()
                    return
                mine[c] = rev
            for c in wanted:
                if c not in mine:
                    rev = await claims.take(run_id, c, self.name)
                    if rev is not None:
                        mine[c] = rev
                        scope.cancel()  # join again, hosting it too
                        return

    async def _claims_for(self, js: JetStreamContext, ttl: float) -> Claims:
        from terrarium.channels.nats.sessions import Claims

        claims = self._claims.get(ttl)
        if claims is None:
            claims = self._claims[ttl] = await Claims.open(js, ttl)
        return claims
