"""Typed events: the one currency between the runtime, its watchers and the durable log.

One frozen dataclass per thing that happens; ``kind`` names its type in the log and in
JSON. Watchers read fields, never parse text. Plain dataclasses rather than pydantic
models: they are built on the hot path. ``event_to_dict`` gives the JSON-ready form the log
stores and ``event_from_dict`` rebuilds the event from it (``EVENT_TYPES`` maps each
``kind`` to its class), so a recorded run replays as the same typed events.
"""

from terrarium.events import codec, core, speech, startup
from terrarium.events.codec import *  # noqa: F403
from terrarium.events.core import *  # noqa: F403
from terrarium.events.speech import *  # noqa: F403
from terrarium.events.startup import *  # noqa: F403

# every public name of the four modules: a name added to one of them is exported here too
__all__ = [*core.__all__, *speech.__all__, *startup.__all__, *codec.__all__]
