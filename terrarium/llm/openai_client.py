"""The one OpenAI-compatible streaming chat client, used for every HTTP backend.

Hosted APIs, Ollama, vLLM, LM Studio, a llama.cpp server and the embedded default all speak
``POST {base_url}/chat/completions`` with server-sent events, so one careful client (bounded
retries, clear errors for broken streams, per-call usage) serves them all.
"""

from __future__ import annotations

import functools
import json
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx

from terrarium import secrecy
from terrarium.errors import ModelError
from terrarium.llm.choice import ChoiceScorer, Scored
from terrarium.llm.retry import RetryPolicy, is_retryable_status, parse_retry_after
from terrarium.llm.sse import SSEDecoder
from terrarium.llm.types import ChatRequest, StreamDelta, ToolCallDelta, Usage

Sleep = Callable[[float], Awaitable[None]]
_ERROR_TEXT_LIMIT = 500


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every request of the process.

    Building one loads the CA bundle, about 35 ms of blocking work on this machine; a fresh
    ``httpx.AsyncClient`` per request would pay it each time, stalling the event loop (and
    the voice pipeline on it) before every model call.
    """
    return httpx.create_ssl_context()


class _EarlyDisconnect(Exception):
    """The connection broke before any byte of the body was consumed: safe to retry."""


@dataclass(slots=True)
class _StreamState:
    """What the client learns while reading one stream."""

    consumed: bool = False
    done: bool = False
    finish_reason: str | None = None
    first_token_at: float | None = None
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None


class _EchoStrip:
    """Drops a server's echo of a continuation's prefill, so callers get only new text.

    llama.cpp streams only the new tokens, but answers a non-streamed request with prefill
    plus continuation; text is held back only while it could still be that echo.
    """

    def __init__(self, prefill: str) -> None:
        self.prefill = prefill
        self.held = ""
        self.deciding = True

    def feed(self, text: str) -> str:
        if not self.deciding:
            return text
        self.held += text
        if self.held.startswith(self.prefill):
            self.deciding = False
            rest, self.held = self.held[len(self.prefill) :], ""
            return rest
        if self.prefill.startswith(self.held):
            return ""
        return self.flush()

    def flush(self) -> str:
        self.deciding = False
        out, self.held = self.held, ""
        return out

    def apply(self, delta: StreamDelta) -> StreamDelta | None:
        """The delta without echoed text; None when nothing of it is left to pass on."""
        text = self.feed(delta.text)
        if delta.tool_calls or delta.finish_reason:
            text += self.flush()
        elif not text and not delta.reasoning:
            return None
        return delta.model_copy(update={"text": text})


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) \
            else v
    return out


class OpenAIClient:
    """Streams chat completions from an OpenAI-compatible endpoint.

    ``base_url`` is the API root including ``/v1`` (e.g. ``http://127.0.0.1:8080/v1``).
    The API key is read from the environment variable named by ``api_key_env`` at call time
    and is never stored in reprs, errors or usage records. With ``llama_cpp=True`` the
    llama.cpp extensions (``id_slot``, ``cache_prompt``, ``grammar``) go into the body.

    ``continuation=True`` declares that the server continues a reply from a trailing
    assistant message (llama.cpp does; the factory sets it for the embedded model only):
    such a request streams only the new text, and with ``llama_cpp`` the stream carries
    per-token timings, so a stream the caller closes early still reports its usage.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str = "",
        api_key_env: str | None = None,
        temperature: float = 0.2,
        max_tokens: int = 256,
        frequency_penalty: float | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        max_retries: int = 4,
        max_retry_time: float = 60.0,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
        llama_cpp: bool = False,
        id_slot: int | None = None,
        continuation: bool = False,
        extra_body: dict[str, Any] | None = None,
        extra_headers: dict[str, str] | None = None,
        name: str | None = None,
        sleep: Sleep | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # a password in the URL (http://user:pass@host) is masked wherever text is redacted
        secrecy.register(urlsplit(self.base_url).password)
        self.model = model
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.frequency_penalty = frequency_penalty
        self.timeout = httpx.Timeout(
            connect=connect_timeout, read=read_timeout, write=read_timeout, pool=connect_timeout
        )
        self.retry = retry_policy or RetryPolicy(
            max_retries=max_retries,
            max_total_s=max_retry_time,
            base_s=backoff_base,
            cap_s=backoff_cap,
        )
        self.llama_cpp = llama_cpp
        self.id_slot = id_slot
        self.continuation = continuation
        self.extra_body = dict(extra_body or {})
        self.extra_headers = dict(extra_headers or {})
        self.name = name or (model or "openai")
        self.last_usage: Usage | None = None
        self.last_choice: Scored | None = None  # the scores of the latest chosen value
        self._sleep: Sleep = sleep or anyio.sleep
        self._scorer: ChoiceScorer | None = None
        # told (attempt, delay, reason, url) before each wait for a retry, so whoever
        # watches can say a server is failing instead of waiting in silence
        self.on_retry: Callable[[int, float, str, str], None] | None = None
        # told (tokens evaluated, prompt tokens) as a llama.cpp server evaluates a prompt,
        # batch by batch (its `return_progress`): a long warm-up shows how far it is
        self.on_progress: Callable[[int, int], None] | None = None

    # -- description -------------------------------------------------------------------

    def describe(self) -> str:
        """Backend, model and slot; the key's variable name at most, never the key."""
        text = (f"openai-compatible {secrecy.redact_url(self.base_url)} "
                f"model={self.model or '(server default)'}")
        if self.llama_cpp:
            text += " (llama.cpp)"
        if self.id_slot is not None:
            text += f" slot={self.id_slot}"
        if self.api_key_env:
            text += f" key from ${self.api_key_env}"
        return text

    def __repr__(self) -> str:
        return f"OpenAIClient({self.describe()!r})"

    @property
    def supports_continuation(self) -> bool:
        """See :class:`terrarium.llm.base.ChatModel`: set by ``continuation=``."""
        return self.continuation

    @property
    def tokenizes(self) -> bool:
        """Whether :meth:`token_pieces` works: a llama.cpp server has ``/tokenize``."""
        return self.llama_cpp

    async def token_pieces(self, texts: Sequence[str]) -> list[list[tuple[int, str]]]:
        """The model's tokens of each of ``texts`` (id and piece, no special tokens), for a
        request's ``logit_bias``; kept per text. Only for a llama.cpp server
        (:attr:`tokenizes`)."""
        return await self._scoring().pieces(texts)

    def _scoring(self) -> ChoiceScorer:
        """The server's scorer (and tokenizer), made on first use."""
        if self._scorer is None:
            self._scorer = ChoiceScorer(self.base_url.removesuffix("/v1"), timeout=self.timeout)
        return self._scorer

    # -- request building ----------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _api_key(self) -> str | None:
        if not self.api_key_env:
            return None
        key = secrecy.env(self.api_key_env)
        if not key:
            raise ModelError(
                f"the environment variable {self.api_key_env} (named by api_key_env) is not "
                "set, so there is no API key to send",
                suggestion=f"export {self.api_key_env}=... before running",
            )
        return key

    def build_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body for one request; request values override the client's defaults."""
        body: dict[str, Any] = {
            "model": self.model or "default",
            "messages": [m.to_wire() for m in request.messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": (
                self.temperature if request.temperature is None else request.temperature
            ),
            "max_tokens": request.max_tokens or self.max_tokens,
        }
        if self.frequency_penalty is not None:
            body["frequency_penalty"] = self.frequency_penalty
        if request.stop:
            body["stop"] = list(request.stop)
        if request.seed is not None:
            body["seed"] = request.seed
        if request.logit_bias:  # OpenAI's shape: token ids as strings (llama.cpp reads it)
            body["logit_bias"] = {str(t): b for t, b in request.logit_bias.items()}
        if request.presence_penalty is not None:
            body["presence_penalty"] = request.presence_penalty
        if request.tools:
            body["tools"] = request.tools
        if request.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": request.json_schema},
            }
        if self.llama_cpp:
            slot = request.id_slot if request.id_slot is not None else self.id_slot
            if slot is not None:
                body["id_slot"] = slot
            body["cache_prompt"] = request.cache_prompt
            if request.grammar is not None:
                body["grammar"] = request.grammar
            if self.continuation:
                body["timings_per_token"] = True  # usage even for a stream closed early
            if self.on_progress is not None:
                body["return_progress"] = True
        if self.extra_body:  # reasoning_effort, service_tier, extra_body: the config's word wins
            body = _deep_merge(body, self.extra_body)
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json",
                   **self.extra_headers}
        key = self._api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _scrub(self, text: str) -> str:
        """Remove the API key from any text that may reach a user or a log."""
        if self.api_key_env:
            key = secrecy.env(self.api_key_env)
            if key:
                text = text.replace(key, "***")
        for value in self.extra_headers.values():  # may hold a token taken from ${VAR}
            if len(value) >= 8:
                text = text.replace(value, "***")
        return secrecy.redact(text)  # and a password in the URL

    def _error(self, message: str, **kw: Any) -> ModelError:
        return ModelError(self._scrub(message), **kw)

    # -- streaming -----------------------------------------------------------------------

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        """Stream one completion; retries only before any byte of the answer was read.

        A request with ``choices`` to a llama.cpp server answers with the most likely of
        them (scored, not sampled; see :mod:`terrarium.llm.choice`)."""
        self.last_usage = None
        body = self.build_body(request)
        if request.choices and self.llama_cpp:
            self.last_choice = await self._scoring().choose(body, request, request.choices)
            self.last_usage = self.last_choice.usage
            yield StreamDelta(text=self.last_choice.best, finish_reason="stop")
            return
        headers = self._headers()
        start = time.monotonic()
        attempt = 0
        # plain HTTP (the embedded server, any local one) needs no TLS context: building
        # one loads the CA bundle, tens of ms of CPU a start would spend for nothing
        tls = _tls_context() if self.base_url.startswith("https:") else False
        async with httpx.AsyncClient(timeout=self.timeout, verify=tls) as http:
            while True:
                attempt += 1
                problem: str
                retry_after: float | None = None
                try:
                    async with http.stream("POST", self.url, json=body, headers=headers) as resp:
                        if resp.status_code >= 400:
                            detail = await self._error_text(resp)
                            problem = f"HTTP {resp.status_code}: {detail}"
                            if not is_retryable_status(resp.status_code):
                                raise self._error(
                                    f"the model server at {self.url} refused the request with "
                                    f"{problem}", permanent=True,
                                )
                            retry_after = parse_retry_after(resp.headers.get("retry-after"))
                        else:
                            state = _StreamState()
                            strip = self._echo_strip(request)
                            try:
                                async for delta in self._deltas(resp, state, start):
                                    if strip is not None:
                                        kept = strip.apply(delta)
                                        if kept is None:
                                            continue
                                        delta = kept
                                    yield delta
                            except GeneratorExit:
                                # the caller stopped reading: what was used so far
                                self.last_usage = self._usage(state, start, attempt)
                                raise
                            if strip is not None and (tail := strip.flush()):
                                yield StreamDelta(text=tail)
                            self.last_usage = self._usage(state, start, attempt)
                            return
                except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                    problem = f"could not connect ({type(exc).__name__}: {exc})"
                except _EarlyDisconnect as exc:
                    problem = str(exc)
                except httpx.ReadTimeout as exc:
                    raise self._error(
                        f"the model server at {self.url} sent nothing for "
                        f"{self.timeout.read} s (read timeout) before the response began"
                    ) from exc
                except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                    problem = f"the connection broke ({type(exc).__name__}: {exc})"
                await self._wait_or_give_up(attempt, start, problem, retry_after)

    def _echo_strip(self, request: ChatRequest) -> _EchoStrip | None:
        """For a continuation (a trailing assistant message): drop an echoed prefill."""
        if not self.continuation or not request.messages:
            return None
        last = request.messages[-1]
        if last.role != "assistant" or not last.content:
            return None
        return _EchoStrip(last.content)

    async def _wait_or_give_up(
        self, attempt: int, start: float, problem: str, retry_after: float | None
    ) -> None:
        if attempt > self.retry.max_retries:
            raise self._error(
                f"gave up on {self.url} after {attempt} attempt{'s' if attempt != 1 else ''}; "
                f"the last one failed with {problem}", suggestion=_server_hint(problem, self.url),
            )
        delay = self.retry.delay(attempt, retry_after)
        spent = time.monotonic() - start
        if spent + delay > self.retry.max_total_s:
            raise self._error(
                f"gave up on {self.url} after {attempt} attempt{'s' if attempt != 1 else ''} "
                f"because waiting {delay:.2f} s more would exceed the retry time budget of "
                f"{self.retry.max_total_s:g} s; the last one failed with {problem}",
                suggestion=_server_hint(problem, self.url),
            )
        if self.on_retry is not None:
            self.on_retry(attempt, delay, problem, self.url)
        await self._sleep(delay)

    async def _error_text(self, resp: httpx.Response) -> str:
        """The server's own error message, shortened, for the error a user reads."""
        try:
            raw = await resp.aread()
        except httpx.HTTPError:
            return "(no error text)"
        text = raw.decode("utf-8", errors="replace").strip()
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            err = obj.get("error", obj)
            if isinstance(err, dict) and "message" in err:
                text = str(err["message"])
            elif isinstance(err, str):
                text = err
        text = text[:_ERROR_TEXT_LIMIT] or "(no error text)"
        return self._scrub(text)

    async def _deltas(
        self, resp: httpx.Response, state: _StreamState, start: float
    ) -> AsyncIterator[StreamDelta]:
        ctype = resp.headers.get("content-type", "")
        if "text/event-stream" not in ctype and "application/json" in ctype:
            # Some servers ignore ``stream``: accept one whole JSON response as well.
            raw = await resp.aread()
            state.consumed = True
            for delta in self._parse_whole(raw, state, start):
                yield delta
            return
        decoder = SSEDecoder()
        lines = resp.aiter_lines()
        while True:
            try:
                line = await lines.__anext__()
            except StopAsyncIteration:
                break
            except httpx.ReadTimeout as exc:
                raise self._error(
                    f"the model server at {self.url} went silent for {self.timeout.read} s "
                    "(read timeout) in the middle of a response"
                ) from exc
            except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                if not state.consumed:
                    raise _EarlyDisconnect(
                        f"the connection broke before the response began ({exc})"
                    ) from exc
                raise self._error(
                    f"the stream from {self.url} was cut off mid-response ({exc})"
                ) from exc
            state.consumed = True
            event = decoder.feed_line(line)
            if event is not None:
                for delta in self._handle_event(event[1], state, start):
                    yield delta
                if state.done:
                    return
        event = decoder.flush()
        if event is not None:
            for delta in self._handle_event(event[1], state, start):
                yield delta
        if not state.done and state.finish_reason is None:
            raise self._error(
                f"the stream from {self.url} ended before the model finished "
                "(no finish_reason and no [DONE]); the response is truncated"
            )

    def _handle_event(self, data: str, state: _StreamState, start: float) -> list[StreamDelta]:
        if data.strip() == "[DONE]":
            state.done = True
            return []
        try:
            obj = json.loads(data)
        except ValueError as exc:
            raise self._error(
                f"the stream from {self.url} carried malformed JSON: {data[:120]!r}"
            ) from exc
        if not isinstance(obj, dict):
            raise self._error(f"the stream from {self.url} carried a non-object: {data[:120]!r}")
        progress = obj.get("prompt_progress")
        if isinstance(progress, dict) and self.on_progress is not None:
            try:
                self.on_progress(int(progress.get("processed", 0)),
                                 int(progress.get("total", 0)))
            except (TypeError, ValueError):  # a figure we cannot read is only not shown
                pass
        return self._chunk_deltas(obj, state, start, delta_key="delta")

    def _parse_whole(self, raw: bytes, state: _StreamState, start: float) -> list[StreamDelta]:
        try:
            obj = json.loads(raw)
        except ValueError as exc:
            raise self._error(f"the response from {self.url} is malformed JSON") from exc
        out = self._chunk_deltas(obj, state, start, delta_key="message")
        state.done = True
        return out

    def _chunk_deltas(
        self, obj: dict[str, Any], state: _StreamState, start: float, *, delta_key: str
    ) -> list[StreamDelta]:
        if "error" in obj:
            err = obj["error"]
            msg = err.get("message", err) if isinstance(err, dict) else err
            raise self._error(f"the model server at {self.url} reported an error: {msg}")
        if isinstance(obj.get("usage"), dict):
            state.usage = obj["usage"]
        if isinstance(obj.get("timings"), dict):
            state.timings = obj["timings"]
        out: list[StreamDelta] = []
        for choice in obj.get("choices") or []:
            delta = choice.get(delta_key) or {}
            text = delta.get("content") or ""
            # a reasoning model's thinking: DeepSeek, vLLM and llama.cpp say reasoning_content,
            # OpenRouter says reasoning
            thought = delta.get("reasoning_content") or delta.get("reasoning") or ""
            if not isinstance(thought, str):
                thought = ""
            calls = [
                ToolCallDelta(
                    index=int(tc.get("index", i)),
                    id=tc.get("id"),
                    name=(tc.get("function") or {}).get("name"),
                    arguments=(tc.get("function") or {}).get("arguments") or "",
                )
                for i, tc in enumerate(delta.get("tool_calls") or [])
            ]
            finish = choice.get("finish_reason")
            if finish:
                state.finish_reason = finish
            if (text or calls or thought) and state.first_token_at is None:
                state.first_token_at = time.monotonic()
            if text or calls or finish or thought:
                out.append(StreamDelta(text=text, tool_calls=calls, finish_reason=finish,
                                       reasoning=thought))
        return out

    def _usage(self, state: _StreamState, start: float, attempts: int) -> Usage:
        u = state.usage or {}
        t = state.timings or {}
        details = u.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens")
        if cached is None:
            cached = t.get("cache_n", 0)
        prompt_tokens = u.get("prompt_tokens")
        if prompt_tokens is None and "prompt_n" in t:
            prompt_tokens = int(t["prompt_n"]) + int(t.get("cache_n", 0))
        completion = u.get("completion_tokens", t.get("predicted_n", 0))
        return Usage(
            prompt_tokens=int(prompt_tokens or 0),
            completion_tokens=int(completion or 0),
            cached_tokens=int(cached or 0),
            prompt_n=int(t["prompt_n"]) if "prompt_n" in t else None,
            prompt_ms=float(t["prompt_ms"]) if "prompt_ms" in t else None,
            predicted_ms=float(t["predicted_ms"]) if "predicted_ms" in t else None,
            ttft_ms=((state.first_token_at - start) * 1000.0 if state.first_token_at else None),
            total_ms=(time.monotonic() - start) * 1000.0,
            attempts=attempts,
        )


__all__ = [
    "OpenAIClient",
    "Sleep",
]


def _server_hint(problem: str, url: str) -> str:
    """What to check when the retries ran out: the server, named by its URL."""
    root = url.removesuffix("/chat/completions")
    if problem.startswith("could not connect"):
        return (f"is the model server at {root} running? start it, or fix `base_url` in the "
                "creature's controller")
    if problem.startswith("HTTP 429"):
        return f"the server at {root} is rate-limiting: wait, or lower the request rate"
    return f"check the model server at {root} (its own log says more)"
