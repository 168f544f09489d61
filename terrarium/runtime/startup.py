"""Starting a team run, in order: the transport (past one machine), the channel hub, the
run's task group, the wiring (embedded server, sinks, controllers), the supervisor with one
loop per creature, background jobs (on resume: the jobs the crash cut off, reported lost)
and triggers. Each step may use the ones before it.

Each creature's loop takes messages at once; warm-up (``runtime/warmup.py``) restores the
prompt prefixes the cache holds, says ``TeamReady``, then loads the voices and evaluates the
other prefixes while the team listens (a round that needs the model waits for its prefix).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from terrarium.channels.bus import EventBus
from terrarium.channels.hub import ChannelHub
from terrarium.config import Team
from terrarium.controller.jobs import STATE_JOB_HOST, STATE_JOBS
from terrarium.events import RunStarted, TeamReady
from terrarium.runtime.creature import RunningCreature
from terrarium.runtime.distributed import (
    announce,
    check_join,
    open_transport,
    session_fields,
    watch_broker,
)
from terrarium.runtime.options import RuntimeOptions
from terrarium.runtime.recording import Recorder
from terrarium.runtime.remote import RemoteCreatures, import_history
from terrarium.runtime.supervision import Supervisor
from terrarium.runtime.triggers import Triggers
from terrarium.runtime.warmup import WarmUp
from terrarium.runtime.wiring import Wiring, build_hub
from terrarium.store import MemoryStore
from terrarium.tools.team import TeamControl

if TYPE_CHECKING:  # nats-py loads only for a run on a broker
    from terrarium.channels.nats import NatsTransport

__all__ = ["JobHost", "Started", "start_team"]


@dataclass(slots=True)
class Started:
    """What a started run is made of; the facade keeps these."""

    hub: ChannelHub
    tg: anyio.abc.TaskGroup
    wiring: Wiring
    supervisor: Supervisor
    transport: NatsTransport | None
    resumed: dict[str, int]
    warm: WarmUp | None = None
    remote: RemoteCreatures | None = None  # the creatures in workers, followed from here


class JobHost:
    """Where a creature's background jobs run (the run's task group) and how a job's result
    reaches it (``Supervisor.wake``: channel ``job``, sender the job id)."""

    def __init__(self, tg: anyio.abc.TaskGroup, supervisor: Supervisor) -> None:
        self.tg = tg
        self.supervisor = supervisor

    def start_soon(self, func: Callable[..., Awaitable[Any]], *args: Any) -> None:
        self.tg.start_soon(func, *args)

    async def deliver(self, creature: str, job_id: str, payload: dict[str, Any]) -> None:
        await self.supervisor.wake(creature, "job", job_id, payload)


def _report_lost_jobs(recorder: Recorder, creatures: Mapping[str, RunningCreature],
                      host: JobHost, tg: anyio.abc.TaskGroup) -> None:
    """Jobs the crash cut off (started in the log, never ended): each is recorded ended
    ``lost`` and its creature gets a message saying so, like any job's end."""
    for name, (started, ended) in sorted(recorder.jobs_in_log().items()):
        c = creatures.get(name)
        manager = c.controller.tool_ctx.state.get(STATE_JOBS) if c and c.controller else None
        if manager is None:
            continue
        for job in manager.resume(started, ended):
            tg.start_soon(host.deliver, name, job.id, job.payload())


def _follow_remote(team: Team, options: RuntimeOptions,
                   creatures: Mapping[str, RunningCreature], recorder: Recorder,
                   transport: NatsTransport | None, tg: anyio.abc.TaskGroup,
                   ) -> RemoteCreatures | None:
    """The team's creatures that run in workers, followed from here (their events into this
    run's log) when the run asks for it; None when every creature runs here."""
    remote = frozenset(team.creatures) - frozenset(creatures)
    if transport is None or options.remote_events is None or not remote:
        return None
    assert recorder.log is not None  # the creatures in workers, seen from here
    followed = RemoteCreatures(
        transport, recorder.log, recorder.run_id, remote, options.remote_events,
        wait=options.remote_wait, ack_wait=options.ack_wait,
        team_path=str(team.folder))
    tg.start_soon(followed.run)
    return followed


def _warm_up(options: RuntimeOptions, creatures: Mapping[str, RunningCreature],
             recorder: Recorder, bus: EventBus, started_at: float,
             wiring: Wiring) -> WarmUp | None:
    """The run's warm-up (None when the options turn it off), told the sinks whose voices
    to load and, with an embedded server, which prefixes its cache can restore."""
    if not options.warm_up:
        return None
    warm = WarmUp(creatures, recorder=recorder, bus=bus, started_at=started_at)
    warm.sinks = wiring.sinks
    if wiring.embedded is not None:
        warm.cache = wiring.embedded.prefix_cache()
        api = wiring.embedded.api_base
        warm.cached = lambda model: getattr(model, "base_url", None) == api
    return warm


async def start_team(
    team: Team, options: RuntimeOptions, creatures: Mapping[str, RunningCreature], *,
    recorder: Recorder, bus: EventBus, run_dir: Path, memory: MemoryStore,
    started_at: float, operator: TeamControl | None, stack: AsyncExitStack,
) -> Started:
    """Start everything on ``stack``; the root creature's team tools act on ``operator``."""
    transport = open_transport(team, options, recorder.run_id)
    if transport is not None:  # a run past one machine: channels on NATS JetStream
        await stack.enter_async_context(transport)
        if options.join:
            await check_join(transport, team)
    hub = build_hub(team, options, recorder.log, recorder.run_id, bus, transport)
    await stack.enter_async_context(hub)
    if transport is not None:
        await transport.start()
        assert recorder.log is not None
        recorder.log.on_write = transport.mirror
        if not options.join:
            await announce(transport, team, "running", started_at,
                           extra=session_fields(team, options))
    tg = await stack.enter_async_context(anyio.create_task_group())
    try:
        if options.log_events or options.on_event is not None:
            tg.start_soon(recorder.write_events, bus.subscribe(capacity=4096))
        if transport is not None:  # a broker gone for good ends the run, saying so
            tg.start_soon(watch_broker, transport, options.broker_give_up)
        wiring = Wiring(options, bus, recorder, run_dir, memory, team=team)
        await wiring.wire(creatures, hub, stack, operator=operator)
        if transport is not None and options.join and options.keep_history:
            # a session's creature in a worker: its conversation as whoever ran it left it
            assert recorder.log is not None
            await import_history(transport, recorder.log, recorder.run_id, list(creatures))
        recorder.restore_histories(creatures)  # a session: what each creature heard before
        followed = _follow_remote(team, options, creatures, recorder, transport, tg)
        warm = _warm_up(options, creatures, recorder, bus, started_at, wiring)
        # a broker redelivers what it still holds; the log replays only what it lost
        resumed = hub.resume(await hub.transport.kept_ids()) if options.resume else {}
        # the loops below warm their creatures first (WarmUp), not the supervisor
        sup = Supervisor(creatures, hub=hub, recorder=recorder, bus=bus, sinks=wiring.sinks,
                         options=dataclasses.replace(options, warm_up=False), tg=tg,
                         members=sorted(team.creatures))
        jobs = JobHost(tg, sup)  # background jobs run in the run's task group
        for c in creatures.values():
            if c.parts.cdef.config.background and c.controller is not None:
                c.controller.tool_ctx.state[STATE_JOB_HOST] = jobs
        if warm is not None:  # prefixes in cache restored, then ready; the rest meanwhile
            order = warm_order(team, creatures)
            warm.hold(order)
            tg.start_soon(warm.run, order)
        for c in creatures.values():
            tg.start_soon(sup.loop, c)
        if options.resume:
            _report_lost_jobs(recorder, creatures, jobs, tg)
        Triggers({c.name: c.parts.cdef.config.triggers for c in creatures.values()},
                 sup.deliver_trigger, bus=bus, clock=options.trigger_time).start(tg)
    except BaseException:
        # the recorder's task runs until cancelled: without this, a creature that fails to
        # wire would leave startup waiting on it for ever
        tg.cancel_scope.cancel()
        raise
    # the started team's objects move out of the collector's view until the run ends, so a
    # full collection during the run scans only what the run made (1,000 creatures: 4 ms
    # instead of 160 ms, a stall every receiver of a broadcast would feel)
    gc.freeze()
    stack.callback(gc.unfreeze)
    bus.publish(RunStarted(run_id=recorder.run_id, terrarium=team.name, path=str(team.path),
                           pid=os.getpid()))
    if warm is None or not warm.pending:
        bus.publish(TeamReady(seconds=max(0.0, time.time() - started_at)))
    return Started(hub, tg, wiring, sup, transport, resumed, warm, followed)


def warm_order(team: Team, creatures: Mapping[str, RunningCreature]
               ) -> list[RunningCreature]:
    """The order creatures are warmed in: the one that hears the user first (its turn
    comes first), then the rest as the team lists them."""
    entry = team.entry
    return sorted(creatures.values(), key=lambda c: c.name != entry)
