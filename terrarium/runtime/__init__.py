"""Wiring, supervision and recording of a running team; ``TeamRuntime`` is the facade.

    options      RuntimeOptions, Supervision: how a run is set up
    creature     RunningCreature: one creature's running state
    recording    Recorder: the durable log, statuses, transcripts
    wiring       team + options → hub, embedded server, sinks, controllers
    supervision  Supervisor: creature loops, backoff, restart, start/stop
    runtime      TeamRuntime: the facade the command line, the monitor and the API use
    api          CreatureStatus, TeamHandle: what watchers see

The names below load on first use (PEP 562), as in ``terrarium/__init__.py``: the monitor
imports ``terrarium.runtime.api`` to replay a log, which must not load the whole runtime.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from terrarium.runtime.api import CreatureStatus, TeamHandle
    from terrarium.runtime.options import RuntimeOptions, Supervision
    from terrarium.runtime.recording import LOG_FILE
    from terrarium.runtime.runtime import TeamRuntime

_EXPORTS: dict[str, str] = {
    "LOG_FILE": "terrarium.runtime.recording",
    "CreatureStatus": "terrarium.runtime.api",
    "RuntimeOptions": "terrarium.runtime.options",
    "Supervision": "terrarium.runtime.options",
    "TeamHandle": "terrarium.runtime.api",
    "TeamRuntime": "terrarium.runtime.runtime",
}

__all__ = ["LOG_FILE", "CreatureStatus", "RuntimeOptions", "Supervision", "TeamHandle",
           "TeamRuntime"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
