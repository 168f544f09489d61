"""Typed events: the one currency between the runtime, its watchers and the durable log.

One frozen dataclass per thing that happens; ``kind`` names its type in the log and in
JSON. Watchers read fields, never parse text. Plain dataclasses rather than pydantic
models: they are built on the hot path. ``event_to_dict`` gives the JSON-ready form the log
stores and ``event_from_dict`` rebuilds the event from it (``EVENT_TYPES`` maps each
``kind`` to its class), so a recorded run replays as the same typed events.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

__all__ = [
    "EVENT_TYPES",
    "INCOMING_HEADER",
    "ApprovalDecided",
    "ApprovalRequested",
    "CreatureState",
    "CreatureStateName",
    "CreatureWaiting",
    "CreatureWarmed",
    "CreatureWarming",
    "EntryKind",
    "ErrorEvent",
    "Event",
    "FoldSummarized",
    "JobEnded",
    "JobStarted",
    "McpStarted",
    "McpStarting",
    "MessageConsumed",
    "MessageDelivered",
    "MessageRefused",
    "MessageSent",
    "Missed",
    "ModelLoaded",
    "ModelLoading",
    "ModelRetry",
    "OutputText",
    "PluginFailed",
    "PrefixCacheProblem",
    "PrefixProgress",
    "PrefixRestored",
    "PromptBuilt",
    "PromptSectionInfo",
    "Reasoning",
    "Restart",
    "RunEnded",
    "RunStarted",
    "RunStatus",
    "SentenceQueued",
    "SentenceSynthesized",
    "SpeechCut",
    "SpeechMetrics",
    "SubagentEnded",
    "SubagentStarted",
    "TeamReady",
    "TranscriptAppended",
    "TranscriptEntry",
    "TriggerFired",
    "TurnEnded",
    "TurnStarted",
    "UtteranceWritten",
    "event_from_dict",
    "event_json",
    "event_to_dict",
]

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
    kind: ClassVar[str] = "message_refused"
    sender: str
    channel: str
    reason: str


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
class SpeechCut(Event):
    """A barge-in stopped one of a creature's spoken outputs; what the user did not hear."""

    kind: ClassVar[str] = "speech_cut"
    creature: str
    output: str
    utterance_id: str
    spoken_text: str = ""
    interrupted_sentence: str | None = None
    cut_text: tuple[str, ...] = ()
    also_cut: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SentenceQueued(Event):
    """A complete, speakable sentence of a creature's reply entered the synthesis queue."""

    kind: ClassVar[str] = "sentence_queued"
    creature: str
    utterance_id: str
    index: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SentenceSynthesized(Event):
    """A queued sentence became audio."""

    kind: ClassVar[str] = "sentence_synthesized"
    creature: str
    utterance_id: str
    index: int
    text: str
    synth_ms: float
    audio_seconds: float


@dataclass(frozen=True, slots=True)
class SpeechMetrics:
    """How fast one reply turned into audio; times are seconds after the reply began."""

    time_to_first_token: float | None = None
    time_to_first_sentence: float | None = None
    time_to_first_audio: float | None = None
    synth_seconds: float = 0.0
    audio_seconds: float = 0.0
    sentences: int = 0
    sentences_played: int = 0
    interrupted: bool = False

    @property
    def real_time_factor(self) -> float | None:
        """Synthesis seconds per audio second (below 1 is faster than real time)."""
        return self.synth_seconds / self.audio_seconds if self.audio_seconds > 0 else None


@dataclass(frozen=True, slots=True, kw_only=True)
class UtteranceWritten(Event):
    """An utterance is finished (or was cut); its audio is where ``path`` says."""

    kind: ClassVar[str] = "utterance_written"
    creature: str
    utterance_id: str
    path: str | None
    duration: float
    aborted: bool
    metrics: SpeechMetrics = field(default_factory=SpeechMetrics)


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
class ModelLoading(Event):
    """The embedded model started loading: nothing can answer until it has."""

    kind: ClassVar[str] = "model_loading"
    model: str
    slots: int


@dataclass(frozen=True, slots=True, kw_only=True)
class McpStarting(Event):
    """The team's MCP servers are starting (``servers``: ``creature/server`` names);
    nothing runs until they are up and have listed their tools."""

    kind: ClassVar[str] = "mcp_starting"
    servers: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class McpStarted(Event):
    """The team's MCP servers are up, ``seconds`` after they began starting."""

    kind: ClassVar[str] = "mcp_started"
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRetry(Event):
    """A model call failed and is tried again after ``delay`` seconds: ``reason`` says
    why, ``url`` where (so a server that is down is named, never a silent wait)."""

    kind: ClassVar[str] = "model_retry"
    creature: str
    url: str
    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelLoaded(Event):
    """The embedded model is loaded and serving, ``seconds`` after it started loading."""

    kind: ClassVar[str] = "model_loaded"
    model: str
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatureWaiting(Event):
    """A message for a creature that runs in another process (a ``terrarium worker``) has
    waited ``seconds`` without that process taking it: no worker runs the creature now
    (none was started, or the one that was died). ``message`` says what to do."""

    kind: ClassVar[str] = "creature_waiting"
    creature: str
    seconds: float
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatureWarming(Event):
    """A creature's prompt prefix and voice are being made ready for its first turn."""

    kind: ClassVar[str] = "creature_warming"
    creature: str
    prefix_tokens: int = 0  # the prompt prefix to evaluate (an estimate; 0: none)


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixRestored(Event):
    """The creature's evaluated prompt prefix came back from the cache of a previous run."""

    kind: ClassVar[str] = "prefix_restored"
    creature: str
    tokens: int
    ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixProgress(Event):
    """A creature's prompt prefix is being evaluated: ``done`` of ``total`` tokens so far
    (as the model server reports it, batch by batch)."""

    kind: ClassVar[str] = "prefix_progress"
    creature: str
    done: int
    total: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixCacheProblem(Event):
    """A saved prompt prefix could not be used or written; the prefix is evaluated as
    without a cache (``problem`` says what happened; never fatal)."""

    kind: ClassVar[str] = "prefix_cache_problem"
    creature: str
    problem: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatureWarmed(Event):
    """A creature is ready: ``prefix`` tells how its prompt prefix got into its slot
    (``restored`` from the cache, ``evaluated`` now, or ``none`` for a model without a
    prompt cache); ``saved``: the evaluated prefix was saved for the next start."""

    kind: ClassVar[str] = "creature_warmed"
    creature: str
    seconds: float
    prefix: Literal["restored", "evaluated", "none"] = "none"
    tokens: int = 0
    saved: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TeamReady(Event):
    """The team takes input: ``seconds`` since the run started. Prompt prefixes the cache
    held are in their slots; voices and prefixes evaluated anew follow while it listens
    (each creature's ``CreatureWarmed`` says when)."""

    kind: ClassVar[str] = "team_ready"
    seconds: float


def _event_types() -> dict[str, type[Event]]:
    """Every event class of this module by its ``kind``; two classes may not share one."""
    found: dict[str, type[Event]] = {}
    for obj in list(globals().values()):
        if isinstance(obj, type) and issubclass(obj, Event) and obj is not Event:
            if obj.kind in found:
                raise TypeError(f"{obj.__name__} and {found[obj.kind].__name__} share the "
                                f"event kind {obj.kind!r}")
            found[obj.kind] = obj
    return found


EVENT_TYPES: Mapping[str, type[Event]] = types.MappingProxyType(_event_types())


def event_to_dict(event: Event) -> dict[str, Any]:
    """JSON-ready form with the ``kind`` included (for the log's events table)."""
    data = dataclasses.asdict(event)
    data["kind"] = event.kind
    return data


def _nested(o: Any) -> Any:
    """What JSON cannot hold as is: a nested dataclass (a transcript entry, speech
    figures, prompt sections) as its fields; anything else as its text."""
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}
    return str(o)


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_nested).encode
_FIELDS: dict[type, tuple[str, ...]] = {}


def event_json(event: Event, seq: int | None = None) -> str:
    """``event_to_dict(event)`` as JSON (plus ``seq`` when given), without its deep copy:
    the same keys in the same order, encoded straight from the event's fields. Every event
    of every run is written through this (the log's events table, the server's stream)."""
    cls = type(event)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    data = {n: getattr(event, n) for n in names}
    data["kind"] = event.kind
    if seq is not None:
        data["seq"] = seq
    return _dumps(data)


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from its ``event_to_dict`` form (lists back to tuples, nested
    dataclasses rebuilt). Unknown keys are ignored; an unknown ``kind`` or a missing
    field raises ``ValueError``."""
    cls = EVENT_TYPES.get(str(data.get("kind")))
    if cls is None:
        raise ValueError(f"unknown event kind {data.get('kind')!r}")
    try:
        return _builder(cls)(data)
    except (TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"a {data.get('kind')!r} event could not be rebuilt: {exc}") from exc


_Convert = Callable[[Any], Any]
_BUILDERS: dict[type, Callable[[Mapping[str, Any]], Any]] = {}


def _builder(cls: type) -> Callable[[Mapping[str, Any]], Any]:
    """A function rebuilding ``cls`` from a mapping; worked out once per class."""
    build = _BUILDERS.get(cls)
    if build is None:
        hints = typing.get_type_hints(cls)
        convert = {f.name: _converter(hints[f.name]) for f in dataclasses.fields(cls) if f.init}

        def build(data: Mapping[str, Any]) -> Any:
            return cls(**{k: conv(data[k]) for k, conv in convert.items() if k in data})

        _BUILDERS[cls] = build
    return build


def _converter(tp: Any) -> _Convert:
    """How to turn a JSON value back into a field of type ``tp``."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return lambda v: _builder(tp)(v)  # type: ignore[arg-type]
    if origin is tuple:
        args = typing.get_args(tp)
        item = _converter(args[0]) if args else (lambda v: v)
        return lambda v: tuple(item(x) for x in v)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(inner) == 1:
            conv = _converter(inner[0])
            return lambda v: None if v is None else conv(v)
    return lambda v: v
