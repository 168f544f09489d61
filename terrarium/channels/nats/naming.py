"""Names on the broker: every run has its own streams, named from the run id and channel.

Stream names allow only ``[A-Za-z0-9_-]`` and subject tokens no dots or wildcards, so a
channel or creature name with other characters is spelled in hex (still unique, still
readable for the common names).
"""

from __future__ import annotations

import re

__all__ = [
    "QUEUE_CONSUMER",
    "RUNS_STREAM",
    "broadcast_consumer",
    "channel_stream",
    "channel_subject",
    "control_subject",
    "log_stream",
    "log_subject",
    "run_subject",
    "token",
]

RUNS_STREAM = "TERRARIUM_RUNS"  # one record per run (and status updates), all runs
QUEUE_CONSUMER = "work"  # the one durable consumer every listener of a queue shares

_SAFE = re.compile(r"[A-Za-z0-9_-]+")


def token(name: str) -> str:
    """``name`` as a stream-name and subject-safe token (``x`` + hex when it must)."""
    return name if _SAFE.fullmatch(name) else "x" + name.encode().hex()


def channel_stream(run_id: str, channel: str) -> str:
    return f"TRM_{run_id}_{token(channel)}"


def channel_subject(run_id: str, channel: str) -> str:
    return f"trm.{run_id}.ch.{token(channel)}"


def broadcast_consumer(creature: str) -> str:
    return f"l_{token(creature)}"


def log_stream(run_id: str) -> str:
    return f"TRM_{run_id}__LOG"


def log_subject(run_id: str) -> str:
    return f"trm.{run_id}.log"


def run_subject(terrarium: str, run_id: str) -> str:
    return f"trm.runs.{token(terrarium)}.{run_id}"


def control_subject(run_id: str) -> str:
    return f"trm.{run_id}.ctl"
