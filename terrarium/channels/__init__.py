"""Typed channels: envelopes, specs, the transport interface, the hub, the durable log,
and the event bus. The events themselves are ground: import them from terrarium.events."""

from terrarium.channels.bus import DEFAULT_EVENT_CAPACITY, EventBus, EventSubscription
from terrarium.channels.envelope import Envelope, new_message_id
from terrarium.channels.hub import ChannelHub
from terrarium.channels.local import LocalReceiver, LocalTransport
from terrarium.channels.log import (
    DurableLog,
    RefusalRecord,
    RunInfo,
    TimelineEntry,
    TurnRecord,
    format_timeline,
)
from terrarium.channels.payload import compile_validator, describe_validation_error
from terrarium.channels.spec import (
    DEFAULT_CAPACITY,
    ChannelKind,
    ChannelMap,
    ChannelSpec,
    CreatureWiring,
    SendResult,
    wiring_from_mapping,
)
from terrarium.channels.transport import Lane, Receiver, Transport
from terrarium.channels.writer import LogWriter

__all__ = [
    "DEFAULT_CAPACITY",
    "DEFAULT_EVENT_CAPACITY",
    "ChannelHub",
    "ChannelKind",
    "ChannelMap",
    "ChannelSpec",
    "CreatureWiring",
    "DurableLog",
    "Envelope",
    "EventBus",
    "EventSubscription",
    "Lane",
    "LocalReceiver",
    "LocalTransport",
    "LogWriter",
    "Receiver",
    "RefusalRecord",
    "RunInfo",
    "SendResult",
    "TimelineEntry",
    "Transport",
    "TurnRecord",
    "compile_validator",
    "describe_validation_error",
    "format_timeline",
    "new_message_id",
    "wiring_from_mapping",
]
