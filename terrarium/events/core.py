"""The ``Event`` base and the events of a team at work: creature states, messages sent,
delivered, refused and consumed, turns, output, prompts, runs, approvals, plugins,
triggers, sub-agents, folds and jobs; and ``TranscriptEntry``, a line of a creature's
transcript. Speech and start-up events are in their own modules beside this one."""

from __future__ import annotations

import re
import time
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

CreatureStateName = Literal[
    "idle", "thinking", "calling_tool", "speaking", "restarting", "failed", "stopped"
]


RunStatus = Literal["running", "completed", "degraded", "failed", "interrupted", "timeout"]
"""A run's status in the log's ``runs`` table: the one set of outcome values (``timeout``:
ended by ``--timeout``, exit 124). Here in the ground layer so that events carry it too."""

_RUN_STATUSES: frozenset[str] = frozenset(typing.get_args(RunStatus))


EntryKind = Literal[
    "user", "message_in", "assistant", "tool_call", "tool_result", "notice", "output", "error",
    "reasoning",
]


@dataclass(slots=True)
class TranscriptEntry:
    """One line of a creature's transcript; ``detail`` holds collapsible extra text."""

    kind: EntryKind
    text: str
    ts: float
    turn: int = 0
    name: str | None = None  # tool or channel name
    detail: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


# A ``message_in`` entry's text starts as the model saw it, with the line that says where
# the message came from (``[channel from sender]``, written by the controller): a watcher
# that shows the text without it reads the sender from ``data`` or, in older logs, here.
INCOMING_HEADER = re.compile(r"^\[([A-Za-z_][A-Za-z0-9_]*) from ([^\]\n]*)\]\n?")


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of every event; ``kind`` names the type in logs and JSON."""

    kind: ClassVar[str] = "event"
    ts: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatureState(Event):
    kind: ClassVar[str] = "creature_state"
    creature: str
    state: CreatureStateName


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageSent(Event):
    kind: ClassVar[str] = "message_sent"
    message_id: str
    channel: str
    sender: str
    delivered_to: tuple[str, ...]
    payload: dict[str, Any] = field(default_factory=dict)  # what was sent (for watchers)


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageDelivered(Event):
    kind: ClassVar[str] = "message_delivered"
    message_id: str
    channel: str
    receiver: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageRefused(Event):
    """A send the channel refused (``receiver`` empty), or a message ``receiver`` could
    not take (too big for its context window): told apart, because the first is the
    sender's to make good and the second is lost to that creature."""

    kind: ClassVar[str] = "message_refused"
    sender: str
    channel: str
    reason: str
    receiver: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted(Event):
    kind: ClassVar[str] = "turn_started"
    creature: str
    turn_index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnded(Event):
    kind: ClassVar[str] = "turn_ended"
    creature: str
    turn_index: int
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent(Event):
    kind: ClassVar[str] = "error"
    creature: str | None
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Restart(Event):
    kind: ClassVar[str] = "restart"
    creature: str
    attempt: int
    delay: float


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputText(Event):
    """A delta of text a creature wrote to one of its named outputs (streamed)."""

    kind: ClassVar[str] = "output_text"
    creature: str
    output: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Reasoning(Event):
    """A delta of a reasoning model's thinking (``reasoning_content`` or a ``<think>``
    block), streamed: for the monitor and the log only, never a channel, output or voice."""

    kind: ClassVar[str] = "reasoning"
    creature: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriptAppended(Event):
    """A line was added to a creature's transcript (by its controller or the runtime)."""

    kind: ClassVar[str] = "transcript"
    creature: str
    entry: TranscriptEntry


@dataclass(frozen=True, slots=True)
class PromptSectionInfo:
    """One section of a built prompt as a watcher sees it: no text, only its measures."""

    name: str
    zone: str
    bytes: int
    tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptBuilt(Event):
    """A creature's prompt was built for a model call (its section map, not its text)."""

    kind: ClassVar[str] = "prompt"
    creature: str
    prefix_hash: str
    tokens: int
    sections: tuple[PromptSectionInfo, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(Event):
    """The team is wired and its creatures are starting (a resumed run starts again)."""

    kind: ClassVar[str] = "run_started"
    run_id: str
    terrarium: str
    path: str
    pid: int = 0  # the process that runs it: `terrarium log` tells a dead "running" run


@dataclass(frozen=True, slots=True, kw_only=True)
class RunEnded(Event):
    """The run is over; ``status`` is what the log's runs table records for it."""

    kind: ClassVar[str] = "run_ended"
    run_id: str
    status: RunStatus

    def __post_init__(self) -> None:
        # the runs table only knows these; a misspelt status would be shown as the outcome
        if self.status not in _RUN_STATUSES:
            raise ValueError(f"{self.status!r} is not a run status "
                             f"(one of {', '.join(sorted(_RUN_STATUSES))})")


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageConsumed(Event):
    """The turn that read a message has ended: ``creature`` will not be given it again."""

    kind: ClassVar[str] = "message_consumed"
    message_id: str
    creature: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequested(Event):
    """A creature wants to call a tool that needs a human's yes (its config's ``approve``)."""

    kind: ClassVar[str] = "approval_requested"
    creature: str
    tool: str
    request_id: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalDecided(Event):
    """The decision on an ``ApprovalRequested``: ``by`` names who decided (``terminal``,
    ``monitor``, ``--yes``, ``nobody``), ``reason`` what they said."""

    kind: ClassVar[str] = "approval_decided"
    creature: str
    tool: str
    request_id: str
    approved: bool
    reason: str = ""
    by: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Missed(Event):
    """Told to a subscriber whose buffer was full: ``count`` events were dropped for it."""

    kind: ClassVar[str] = "missed"
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginFailed(Event):
    """A lifecycle plugin raised in one of its hooks; it was skipped and the turn went on."""

    kind: ClassVar[str] = "plugin_failed"
    creature: str
    plugin: str
    hook: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerFired(Event):
    """A trigger woke a creature: its message went to the inbox, or on ``channel``."""

    kind: ClassVar[str] = "trigger_fired"
    creature: str
    trigger: str
    trigger_type: str
    text: str
    channel: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStarted(Event):
    """``creature`` handed ``task`` to its sub-agent; the sub-agent's own events carry the
    creature name ``f"{creature}/{subagent}"`` and ``run_id`` ties them together."""

    kind: ClassVar[str] = "subagent_started"
    creature: str
    subagent: str
    run_id: str
    depth: int
    task: str
    parent_run: str | None = None  # the sub-agent run this one was started from, if any


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentEnded(Event):
    """A sub-agent run finished: ``ok`` and its final answer (or what went wrong)."""

    kind: ClassVar[str] = "subagent_ended"
    creature: str
    subagent: str
    run_id: str
    ok: bool
    result: str
    rounds: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class FoldSummarized(Event):
    """``compaction: summarize`` asked for the fold line of ``turns`` folded turns, once
    per fold block: ``ok`` with the summary ``text``, or not (``error``), and then the
    deterministic fold line stands in. ``by``: ``model`` or ``subagent:NAME``."""

    kind: ClassVar[str] = "fold_summarized"
    creature: str
    turns: int
    by: str
    ok: bool
    text: str
    error: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class JobStarted(Event):
    """A call went to the background: the creature got ``job_id`` at once."""

    kind: ClassVar[str] = "job_started"
    creature: str
    job_id: str
    call: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class JobEnded(Event):
    """A background job ended: ``status`` is done, failed or cancelled."""

    kind: ClassVar[str] = "job_ended"
    creature: str
    job_id: str
    call: str
    status: str
    result: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatureWaiting(Event):
    """A message for a creature that runs in another process (a ``terrarium worker``) has
    waited ``seconds`` without that process taking it: no worker runs the creature now
    (none was started, or the one that was died). ``message`` says what to do."""

    kind: ClassVar[str] = "creature_waiting"
    creature: str
    seconds: float
    message: str


__all__ = [
    "INCOMING_HEADER",
    "ApprovalDecided",
    "ApprovalRequested",
    "CreatureState",
    "CreatureStateName",
    "CreatureWaiting",
    "EntryKind",
    "ErrorEvent",
    "Event",
    "FoldSummarized",
    "JobEnded",
    "JobStarted",
    "MessageConsumed",
    "MessageDelivered",
    "MessageRefused",
    "MessageSent",
    "Missed",
    "OutputText",
    "PluginFailed",
    "PromptBuilt",
    "PromptSectionInfo",
    "Reasoning",
    "Restart",
    "RunEnded",
    "RunStarted",
    "RunStatus",
    "SubagentEnded",
    "SubagentStarted",
    "TranscriptAppended",
    "TranscriptEntry",
    "TriggerFired",
    "TurnEnded",
    "TurnStarted",
]
