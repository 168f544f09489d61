"""The ways to run the monitor: over a handle in the foreground, on a recorded run
(replay), following a distributed run live, and beside a team it starts in the same event
loop (``terrarium run --tui``)."""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio

from terrarium.channels.mirror import LogBatch
from terrarium.config import Team
from terrarium.runtime.api import TeamHandle
from terrarium.tui.app import MonitorApp
from terrarium.tui.human import MonitorHuman
from terrarium.tui.live import LiveRunHandle
from terrarium.tui.replay import ReplayHandle


def run_monitor(handle: TeamHandle, *, read_only: bool = False) -> int:
    """Run the monitor in the foreground over an existing handle (e.g. a ReplayHandle)."""
    result = MonitorApp(handle, read_only=read_only).run()
    return result or 0


def monitor_replay(log_path: Any, run_id: str) -> int:
    """``terrarium monitor RUN_ID``: replay a recorded run read-only."""
    return run_monitor(ReplayHandle(log_path, run_id), read_only=True)


async def run_live_monitor(handle: LiveRunHandle, batches: AsyncIterable[LogBatch], *,
                           app: MonitorApp | None = None) -> int:
    """``terrarium monitor RUN_ID --broker URL`` on a running run: follow it live.

    The follow feeds ``handle`` in this event loop while the app runs; quitting the app
    stops the follow. After the run ends the app stays open (read-only) until quit.
    """
    app = app or MonitorApp(handle, read_only=True)
    async with anyio.create_task_group() as tg:
        tg.start_soon(handle.follow, batches)
        result = await app.run_async()
        tg.cancel_scope.cancel()
    return result or 0


RuntimeFactory = Callable[[Team], AbstractAsyncContextManager[TeamHandle]]


async def run_team_with_monitor(team: Team, runtime_factory: RuntimeFactory, *,
                                human: MonitorHuman | None = None) -> int:
    """``terrarium run PATH --tui``: run the team and the monitor in one event loop.

    ``runtime_factory(team)`` must give an async context manager yielding a TeamHandle
    (``TeamRuntime`` does). When the context manager is itself the handle (its ``bus`` and
    ``team`` exist before it starts, as a TeamRuntime's do), the monitor opens at once and
    shows the model loading and the creatures warming; the team starts in a task of its
    own (which also leaves the context: a runtime's task group must end in the task that
    began it). Quitting the app stops the team. ``human``, when the runtime's approver and
    answerer are its methods, is served by the app's dialogs.
    """
    made = runtime_factory(team)
    if not (hasattr(made, "bus") and hasattr(made, "team") and hasattr(made, "statuses")):
        async with made as handle:
            app = MonitorApp(handle, human=human)
            result = await app.run_async()
        return result or 0
    app = MonitorApp(made, human=human, starting=True)  # type: ignore[arg-type]
    quit_ = anyio.Event()
    failure: list[BaseException] = []

    async def run_team() -> None:
        try:
            async with made:
                app.call_later(app.started)
                await quit_.wait()
        except Exception as exc:  # shown in the app, then raised when it closes
            failure.append(exc)
            why = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            app.call_later(app.start_failed, str(why))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_team)
        try:
            result = await app.run_async()
        finally:
            quit_.set()
    if failure:
        raise failure[0]
    return result or 0


__all__ = ["RuntimeFactory", "monitor_replay", "run_live_monitor", "run_monitor",
           "run_team_with_monitor"]
