"""A scripted model: replays written responses and records every request it was given.

Tests and deterministic demos need a model whose answers are known in advance and whose
inputs (the exact prompts) can be inspected afterwards; this one streams like a real backend,
including native tool calls, usage with cached tokens, and injected faults.

Script file format (YAML), either a list of steps or a mapping::

    default_reply: "I have nothing more to say."   # optional; else running out is an error
    chunk: 8                                       # characters per streamed delta
    chunk_delay: 0.0                               # seconds between deltas
    continuation: false                            # continue replies from a prefill
    steps:
      - reply: "Hello!"                            # no match: taken in order
      - match: "weather"                           # substring of the latest user/tool message
        reply: "It is sunny."
      - match: {regex: "^\\d+$"}                   # or a regular expression
        reply: "That is a number."
      - tool_calls: [{name: get_time, arguments: {tz: UTC}}]
      - fault: error                               # this call raises ModelError
      - fault: refused                             # ... one no retry can fix (an HTTP 400)
      - {reply: "cut short", fault: truncate}      # streams part, then raises ModelError
      - {reply: "slow", delay: 0.5, chunk: 2, repeat: true}  # repeat: never used up
      - {reasoning: "The user greets.", reply: "Hi!"}     # thinking apart, as reasoning_content

A call takes the first unused step (in file order) whose ``match`` accepts the latest
user or tool message; a step without ``match`` accepts anything.

Continuation (as llama.cpp does it; only with ``continuation: true``): a request ending
with an assistant message whose text begins the step's reply gets only the rest of it.
A continuation of the previous request (same messages plus the prefill) reuses that
request's step instead of taking the next, so pausing a reply does not advance the script.

Tokens (``token_pieces``): a word with the space before it, or a sign, each with an id of
its own (a checksum of its text). A request's ``logit_bias`` of ``BANNED`` or less bans a
token: the step then chosen is the first unused one (matching, continuing the prefill) that
writes none of the banned tokens, as a model steered away from them would; the step itself
when none does.
"""

from __future__ import annotations

import functools
import json
import re
import zlib
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from terrarium.errors import ConfigError, Location, ModelError
from terrarium.llm.types import ChatMessage, ChatRequest, StreamDelta, ToolCallDelta, Usage

_TOKEN = re.compile(r"\w+|[^\w\s]")
_PIECE = re.compile(r" ?\w+| ?[^\w\s]|\s+")
BANNED = -50.0
"""A ``logit_bias`` at or below this bans its token (the scripted model never writes it)."""


def token_id(piece: str) -> int:
    """The scripted model's id of a token (see :func:`pieces`)."""
    return zlib.crc32(piece.encode("utf-8")) & 0x7FFFFFFF


def pieces(text: str) -> list[tuple[int, str]]:
    """The scripted model's tokens of ``text``: a word with the space before it, a sign."""
    return [(token_id(p), p) for p in _PIECE.findall(text)]


class MatchSpec(BaseModel):
    """How a step recognises its input: a substring, or a regular expression (search)."""

    model_config = ConfigDict(extra="forbid")

    contains: str | None = Field(default=None, description="Substring of the latest message.")
    regex: str | None = Field(default=None, description="Regular expression searched for.")

    @field_validator("regex")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"the regex {v!r} does not compile: {exc}") from exc
        return v

    def accepts(self, text: str) -> bool:
        if self.contains is not None and self.contains not in text:
            return False
        return not (self.regex is not None and re.search(self.regex, text) is None)


class ScriptedToolCall(BaseModel):
    """A native tool call the scripted model emits."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, sort_keys=True)


class ScriptStep(BaseModel):
    """One scripted response."""

    model_config = ConfigDict(extra="forbid")

    match: MatchSpec | None = Field(
        default=None, description="Substring (or {contains, regex}) the latest message needs."
    )
    reply: str = Field(default="", description="Text streamed back.")
    reasoning: str = Field(default="", description="Thinking streamed first, apart from the "
                           "reply (as a reasoning model's `reasoning_content`).")
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    fault: Literal["error", "truncate", "refused"] | None = Field(
        default=None, description="error: raise ModelError; truncate: stream half, then raise; "
        "refused: raise a permanent ModelError (as an HTTP 400 would)."
    )
    delay: float = Field(default=0.0, ge=0, description="Seconds before the first delta.")
    chunk: int | None = Field(default=None, ge=1, description="Characters per delta.")
    chunk_delay: float | None = Field(default=None, ge=0, description="Seconds between deltas.")
    repeat: bool = Field(default=False, description="Keep the step after use.")

    @field_validator("match", mode="before")
    @classmethod
    def _plain_string_is_substring(cls, v: Any) -> Any:
        return {"contains": v} if isinstance(v, str) else v

    def accepts(self, text: str) -> bool:
        return self.match is None or self.match.accepts(text)


class ScriptFile(BaseModel):
    """The whole script file."""

    model_config = ConfigDict(extra="forbid")

    steps: list[ScriptStep] = Field(default_factory=list)
    default_reply: str | None = None
    chunk: int = Field(default=8, ge=1)
    chunk_delay: float = Field(default=0.0, ge=0)
    continuation: bool = False


# parsed scripts by (path, mtime, size): a script file is read and checked once while unchanged
_SCRIPTS: dict[tuple[str, int, int], ScriptFile] = {}


StepLike = str | ScriptStep | dict[str, Any]


def latest_input(messages: Sequence[ChatMessage]) -> str:
    """The text a step is matched against: the newest user or tool message."""
    for msg in reversed(messages):
        if msg.role in ("user", "tool"):
            return msg.content or ""
    return ""


@functools.lru_cache(maxsize=256)  # (a few prompts' texts; each entry may be large)
def _text_tokens(text: str) -> tuple[str, ...]:
    """One text's pseudo tokens, kept: a request repeats its prefix and history every turn
    (byte-stable by design), which were split again on every call."""
    return tuple(_TOKEN.findall(text))


@functools.lru_cache(maxsize=256)
def _role_and_text(role: str, text: str) -> tuple[str, ...]:
    """A message's pseudo tokens without its calls, kept (the same tuple every request)."""
    return (f"<{role}>", *_text_tokens(text))


def _message_tokens(m: ChatMessage) -> tuple[str, ...]:
    """One message's pseudo tokens: a deterministic stand-in for tokenization, so usage
    and caching figures are testable."""
    tokens = _role_and_text(m.role, m.content or "")
    for call in m.tool_calls or []:
        tokens += _text_tokens(call.function.name + call.function.arguments)
    return tokens


def _common_prefix(now: list[tuple[str, ...]], before: list[tuple[str, ...]]) -> int:
    """How many pseudo tokens two requests' token lists (given message by message) begin
    with alike: whole messages first (the prefix and history are the same tuples), then
    token by token from the first message that differs."""
    same = i = 0
    for a, b in zip(now, before, strict=False):
        if a is not b and a != b:
            break
        same += len(a)
        i += 1
    rest = (t for m in now[i:] for t in m)
    for a, b in zip(rest, (t for m in before[i:] for t in m), strict=False):
        if a != b:
            break
        same += 1
    return same


KEEP_REQUESTS = 256  # requests a scripted model keeps for inspection (the newest)


class ScriptedModel:
    """Replays scripted responses; ``requests`` holds copies of the newest requests received
    (at most ``keep_requests``, so a long run on a script does not grow without end);
    ``calls`` counts them all."""

    def __init__(
        self,
        steps: Iterable[StepLike] = (),
        *,
        default_reply: str | None = None,
        chunk_size: int = 8,
        chunk_delay: float = 0.0,
        fail_on: Iterable[int] = (),
        name: str = "scripted",
        source: Path | None = None,
        continuation: bool = False,
        keep_requests: int = KEEP_REQUESTS,
    ) -> None:
        self.steps: list[ScriptStep] = [self._coerce(s) for s in steps]
        self._used = [False] * len(self.steps)
        self.default_reply = default_reply
        self.chunk_size = max(1, chunk_size)
        self.chunk_delay = chunk_delay
        self.fail_on = frozenset(fail_on)
        self.name = name
        self.source = source
        self.requests: list[ChatRequest] = []
        self.keep_requests = max(1, keep_requests)
        self._calls = 0
        self.last_usage: Usage | None = None
        self.supports_continuation = continuation
        self._previous_tokens: list[tuple[str, ...]] = []  # the last request's, a message each
        self._last_pick: tuple[list[ChatMessage], ScriptStep] | None = None
        self._default: ScriptStep | None = None

    @staticmethod
    def _coerce(step: StepLike) -> ScriptStep:
        if isinstance(step, ScriptStep):
            return step
        if isinstance(step, str):
            return ScriptStep(reply=step)
        return ScriptStep.model_validate(step)

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> ScriptedModel:
        """Load a script file (format in the module docstring); errors name the file and key."""
        path = Path(path)
        try:
            stat = path.stat()
        except OSError as exc:
            raise ConfigError(
                f"the model script cannot be read ({exc.strerror})",
                location=Location(file=path),
            ) from exc
        key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
        script = _SCRIPTS.get(key)
        if script is None:
            script = cls._parse(path)
            if len(_SCRIPTS) >= 64:
                _SCRIPTS.clear()
            _SCRIPTS[key] = script
        kwargs: dict[str, Any] = {
            "default_reply": script.default_reply,
            "chunk_size": script.chunk,
            "chunk_delay": script.chunk_delay,
            "continuation": script.continuation,
            "name": f"scripted:{path.name}",
            "source": path,
        }
        kwargs.update(overrides)
        return cls(list(script.steps), **kwargs)

    @staticmethod
    def _parse(path: Path) -> ScriptFile:
        """The script file read and checked (``from_file`` keeps it while the file is
        unchanged: a server loads a scripted team for every session)."""
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(
                f"the model script cannot be read ({exc.strerror})",
                location=Location(file=path),
            ) from exc
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise ConfigError(
                f"the model script is not valid YAML: {getattr(exc, 'problem', exc)}",
                location=Location(
                    file=path,
                    line=mark.line + 1 if mark else 0,
                    column=mark.column + 1 if mark else 0,
                ),
            ) from exc
        if raw is None:
            raw = {}
        if isinstance(raw, list):
            raw = {"steps": raw}
        if isinstance(raw, dict) and isinstance(raw.get("steps"), list):
            raw["steps"] = [{"reply": s} if isinstance(s, str) else s for s in raw["steps"]]
        try:
            script = ScriptFile.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ConfigError(
                f"the model script is invalid: {first['msg']}",
                location=Location(file=path, key_path=tuple(first["loc"])),
            ) from exc
        return script

    def describe(self) -> str:
        where = f" from {self.source}" if self.source else ""
        left = self._used.count(False)
        return f"scripted model{where} ({left} of {len(self.steps)} steps left)"

    @property
    def calls(self) -> int:
        """How many requests this model has received (all, not only the kept ones)."""
        return self._calls

    def _pick(self, text: str) -> ScriptStep:
        for i, step in enumerate(self.steps):
            if not self._used[i] and step.accepts(text):
                if not step.repeat:
                    self._used[i] = True
                return step
        if self.default_reply is not None:
            if self._default is None or self._default.reply != self.default_reply:
                self._default = ScriptStep(reply=self.default_reply)  # made once, not per call
            return self._default
        where = f" (script {self.source})" if self.source else ""
        if any(not used for used in self._used):
            raise ModelError(
                f"no scripted step matches call {self.calls}{where}; the latest message "
                f"was {text[:80]!r}",
                suggestion="add a step whose match accepts it, or set default_reply",
            )
        raise ModelError(
            f"the scripted model ran out of steps at call {self.calls}{where}",
            suggestion="add a step to the script, or set default_reply",
        )

    def _prefill(self, request: ChatRequest) -> str:
        """The text this request asks to continue (a trailing assistant message), if any."""
        last = request.messages[-1] if request.messages else None
        if not self.supports_continuation or last is None or last.role != "assistant":
            return ""
        return last.content or ""

    def _choose(self, request: ChatRequest, prefill: str) -> ScriptStep:
        """The step for this call: the previous call's step when this one continues it."""
        if prefill and self._last_pick is not None:
            messages, step = self._last_pick
            if messages == request.messages[:-1] and step.reply.startswith(prefill):
                return step
        step = self._pick(latest_input(request.messages))
        self._last_pick = (list(request.messages), step)
        return step

    def _steered(self, request: ChatRequest, prefill: str, step: ScriptStep) -> ScriptStep:
        """``step``, or, when its continuation writes a token the request's ``logit_bias``
        bans, the first unused step that continues ``prefill`` without one (and matches)."""
        banned = {t for t, b in (request.logit_bias or {}).items() if b <= BANNED}
        def writes_banned(s: ScriptStep) -> bool:
            return any(t in banned for t, _ in pieces(s.reply[len(prefill):]))
        if not banned or not writes_banned(step):
            return step
        text = latest_input(request.messages)
        for i, other in enumerate(self.steps):
            if (not self._used[i] and other.reply.startswith(prefill) and other.accepts(text)
                    and not writes_banned(other)):
                self._used[i] = not other.repeat
                self._last_pick = (list(request.messages[:-1]) if prefill
                                   else list(request.messages), other)
                return other
        return step

    @property
    def tokenizes(self) -> bool:
        """Its tokens are known (:meth:`token_pieces`)."""
        return True

    async def token_pieces(self, texts: Sequence[str]) -> list[list[tuple[int, str]]]:
        """The tokens of each of ``texts`` (id, piece): see :func:`pieces`."""
        return [pieces(t) for t in texts]

    def _usage(self, request: ChatRequest, completion: str, already: str = "") -> Usage:
        """Pseudo-token usage; ``already`` is a continued prefill, not counted as output."""
        tokens = [_message_tokens(m) for m in request.messages]
        cached = _common_prefix(tokens, self._previous_tokens)
        self._previous_tokens = tokens
        prompt = sum(map(len, tokens))
        return Usage(
            prompt_tokens=prompt,
            completion_tokens=max(
                0, len(_text_tokens(completion)) - len(_text_tokens(already))
            ),
            cached_tokens=cached,
            prompt_n=prompt - cached,
        )

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        """Stream the chosen step in chunks; faults and delays happen as scripted."""
        self.last_usage = None
        self._calls += 1
        # a copy of the request and its list of messages; the messages themselves are
        # shared (nothing changes a ChatMessage once made), which spares a deep copy of
        # the whole conversation on every call (most of a served scripted turn's CPU)
        self.requests.append(request.model_copy(update={"messages": list(request.messages)}))
        if len(self.requests) > self.keep_requests:
            del self.requests[: len(self.requests) - self.keep_requests]
        if self.calls in self.fail_on:
            raise ModelError(f"the scripted model failed on call {self.calls}, as scripted")
        prefill = self._prefill(request)
        step = self._steered(request, prefill, self._choose(request, prefill))
        if step.fault == "error":
            raise ModelError(f"the scripted model failed on call {self.calls}, as scripted")
        if step.fault == "refused":
            raise ModelError(f"the scripted model refused call {self.calls} (HTTP 400, as "
                             "scripted)", permanent=True)
        if step.delay:
            await anyio.sleep(step.delay)
        size = step.chunk or self.chunk_size
        pause = self.chunk_delay if step.chunk_delay is None else step.chunk_delay
        text = step.reply
        if step.fault == "truncate":
            text = text[: len(text) // 2]
        if prefill and step.reply.startswith(prefill):
            text = text[len(prefill) :]
        else:
            prefill = ""
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        sent = prefill
        for i in range(0, len(step.reasoning), size):
            yield StreamDelta(reasoning=step.reasoning[i : i + size])
        try:
            for n, piece in enumerate(pieces):
                if n and pause:
                    await anyio.sleep(pause)
                sent += piece
                yield StreamDelta(text=piece)
        except GeneratorExit:
            # the caller stopped reading: usage of what was streamed so far
            self.last_usage = self._usage(request, sent, prefill)
            raise
        if step.fault == "truncate":
            raise ModelError(
                f"the scripted stream was cut off mid-response on call {self.calls}, as scripted"
            )
        for idx, call in enumerate(step.tool_calls):
            call_id = call.id or f"call_{self.calls}_{idx}"
            yield StreamDelta(tool_calls=[ToolCallDelta(index=idx, id=call_id, name=call.name)])
            args = call.arguments_json()
            for i in range(0, len(args), size):
                yield StreamDelta(
                    tool_calls=[ToolCallDelta(index=idx, arguments=args[i : i + size])]
                )
        finish = "tool_calls" if step.tool_calls else "stop"
        yield StreamDelta(finish_reason=finish)
        self.last_usage = self._usage(request, step.reply, prefill)


__all__ = [
    "BANNED",
    "MatchSpec",
    "ScriptFile",
    "ScriptStep",
    "ScriptedModel",
    "ScriptedToolCall",
    "StepLike",
    "latest_input",
    "pieces",
    "token_id",
]
