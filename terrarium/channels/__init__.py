"""Typed channels: envelopes, specs, the transport interface, the hub, the durable log,
and the event bus."""

from terrarium.channels.bus import DEFAULT_EVENT_CAPACITY, EventBus, EventSubscription
from terrarium.channels.envelope import Envelope, new_message_id
from terrarium.channels.hub import ChannelHub, compile_validator, describe_validation_error
from terrarium.channels.local import LocalReceiver, LocalTransport
from terrarium.channels.log import (
    DurableLog,
    RefusalRecord,
    RunInfo,
    TimelineEntry,
    TurnRecord,
    format_timeline,
)
from terrarium.channels.spec import (
    DEFAULT_CAPACITY,
    ChannelKind,
    ChannelSpec,
    CreatureWiring,
    SendResult,
    wiring_from_mapping,
)
from terrarium.channels.transport import Receiver, Transport
from terrarium.channels.writer import LogWriter
from terrarium.events import (
    CreatureState,
    CreatureStateName,
    ErrorEvent,
    Event,
    GenericEvent,
    MessageDelivered,
    MessageRefused,
    MessageSent,
    Missed,
    OutputText,
    Restart,
    TurnEnded,
    TurnStarted,
    event_to_dict,
)

__all__ = [
    "DEFAULT_CAPACITY",
    "DEFAULT_EVENT_CAPACITY",
    "ChannelHub",
    "ChannelKind",
    "ChannelSpec",
    "CreatureState",
    "CreatureStateName",
    "CreatureWiring",
    "DurableLog",
    "Envelope",
    "ErrorEvent",
    "Event",
    "EventBus",
    "EventSubscription",
    "GenericEvent",
    "LocalReceiver",
    "LocalTransport",
    "LogWriter",
    "MessageDelivered",
    "MessageRefused",
    "MessageSent",
    "Missed",
    "OutputText",
    "Receiver",
    "RefusalRecord",
    "Restart",
    "RunInfo",
    "SendResult",
    "TimelineEntry",
    "Transport",
    "TurnEnded",
    "TurnRecord",
    "TurnStarted",
    "compile_validator",
    "describe_validation_error",
    "event_to_dict",
    "format_timeline",
    "new_message_id",
    "wiring_from_mapping",
]
