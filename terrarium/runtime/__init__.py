"""Wiring, supervision and recording of a running team; ``TeamRuntime`` is the facade.

    options      RuntimeOptions, Supervision: how a run is set up
    creature     RunningCreature: one creature's running state
    recording    Recorder: the durable log, statuses, transcripts
    wiring       team + options → hub, embedded server, sinks, controllers
    supervision  Supervisor: creature loops, backoff, restart, start/stop
    runtime      TeamRuntime: the facade the command line, the monitor and the API use
    api          CreatureStatus, TeamHandle: what watchers see

The names below load on first use (``terrarium/lazy.py``): the monitor imports
``terrarium.runtime.api`` to replay a log, which must not load the whole runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from terrarium.lazy import lazy_exports

if TYPE_CHECKING:  # the public names: each loaded from its module on first use
    from terrarium.runtime.api import CreatureStatus as CreatureStatus
    from terrarium.runtime.api import TeamHandle as TeamHandle
    from terrarium.runtime.options import RuntimeOptions as RuntimeOptions
    from terrarium.runtime.options import Supervision as Supervision
    from terrarium.runtime.recording import LOG_FILE as LOG_FILE
    from terrarium.runtime.runtime import TeamRuntime as TeamRuntime

__getattr__, __dir__ = lazy_exports(__name__, __file__)
