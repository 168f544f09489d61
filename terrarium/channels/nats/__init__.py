"""Channels past one machine: the NATS JetStream transport, broker connection settings,
and the broker's records of runs (runs records, the run's log stream)."""

from terrarium.channels.nats.connect import CREDENTIAL_VARIABLES, connect_broker, connect_options
from terrarium.channels.nats.runs import (
    latest_run,
    materialize_log,
    publish_run,
    run_record,
    run_records,
    wait_run_end,
)
from terrarium.channels.nats.transport import NatsReceiver, NatsTransport

__all__ = [
    "CREDENTIAL_VARIABLES",
    "NatsReceiver",
    "NatsTransport",
    "connect_broker",
    "connect_options",
    "latest_run",
    "materialize_log",
    "publish_run",
    "run_record",
    "run_records",
    "wait_run_end",
]
