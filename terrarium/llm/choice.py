"""Choosing one of a few fixed values by the model's own likelihood, instead of sampling one.

A 135M model asked to write an intent samples its favourite label most of the time. Reading
the probability it gives each allowed value at the point where the value starts, and taking
the most likely one, uses everything the model knows in one forward step and never writes a
wrong or partial value. Values whose first tokens coincide ("good" in both "goodbye" and
"good") are told apart one token further on.

The scores are calibrated: a small model prefers some labels whatever the input, so the
log-probability each value gets for a content-free input (the same request with the user's
words left empty) is subtracted ("contextual calibration"). That reference depends only on
the rest of the request, so it is asked once per distinct prompt and cached.

A creature may ask in its own words (``choice_ask`` in the request body, set from the
creature's ``controller.extra_body``): instead of the value's place in the call, the reply is
started with a short natural sentence ("The user is") and each value is scored by phrases
that continue it (" asking a question", " saying goodbye"), the best phrase counting. A
135M model continues plain English far better than it fills a field of a call syntax it has
seen only in its prompt: model-only on bench/router_intent.py's held-out set 30 -> 45 of
79 right (the issue's 18: 8 -> 12); one or two scoring requests more per turn, each a
few tokens, and the router's turn took no longer (median ~180 vs 192 ms).
The reference for calibration is then the mean over several content-free inputs ("", "N/A").

llama.cpp (the embedded model) answers ``/v1/chat/completions`` with ``logprobs`` and
``top_logprobs``, scored on the raw distribution (before any grammar), and continues a
trailing assistant message, so the value's position is exactly where the model would write
it. ``/tokenize`` gives each value's tokens.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from terrarium.errors import ModelError
from terrarium.llm.types import ChatRequest, Usage

__all__ = ["ASK_KEY", "Ask", "ChoiceScorer", "Scored"]

ASK_KEY = "choice_ask"
"""The request-body key of an :class:`Ask` (never sent to the server)."""

TOP_LOGPROBS = 100
"""How many of the most likely next tokens the server lists; a value outside them scores
below the least likely listed one."""


@dataclass(frozen=True, slots=True)
class Scored:
    """The chosen value, every value's calibrated score, and the raw scores."""

    best: str
    scores: dict[str, float]
    raw: dict[str, float]
    usage: Usage


@dataclass(frozen=True, slots=True)
class Ask:
    """Where and in which words to ask: the reply's start, and phrases per value."""

    prefix: str
    phrases: dict[str, tuple[str, ...]]
    content_free: tuple[str, ...] = ("", "N/A")

    @classmethod
    def from_body(cls, raw: Any, choices: Sequence[str]) -> Ask:
        """Read ``{"prefix": ..., "phrases": {value: [phrase, ...]}, "content_free": [...]}``;
        a value without phrases is scored by its own words."""
        if not isinstance(raw, dict) or not isinstance(raw.get("prefix"), str):
            raise ModelError(f"{ASK_KEY} needs a 'prefix' text and 'phrases' per value")
        given = raw.get("phrases") or {}
        phrases = {c: tuple(given.get(c) or (" " + c,)) for c in choices}
        free = tuple(raw.get("content_free") or ("", "N/A"))
        return cls(raw["prefix"], phrases, free)

    def messages(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The request's messages with the reply started by ``prefix`` instead."""
        messages = [dict(m) for m in body["messages"]]
        if messages and messages[-1].get("role") == "assistant":
            messages[-1]["content"] = self.prefix
        else:
            messages.append({"role": "assistant", "content": self.prefix})
        return messages


@dataclass(slots=True)
class ChoiceScorer:
    """Scores fixed values for one llama.cpp server (``server_base`` without ``/v1``)."""

    server_base: str
    timeout: httpx.Timeout | float = 60.0
    calibrate: bool = True
    transport: httpx.AsyncBaseTransport | None = None  # tests: a fake server
    _tokens: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    _priors: dict[str, dict[str, float]] = field(default_factory=dict)

    async def choose(self, body: dict[str, Any], request: ChatRequest,
                     choices: Sequence[str]) -> Scored:
        """Score ``choices`` as continuations of ``request`` (whose wire ``body`` is given)."""
        start = time.monotonic()
        ask: Ask | None = None
        if ASK_KEY in body:
            ask = Ask.from_body(body[ASK_KEY], choices)
            body = {k: v for k, v in body.items() if k != ASK_KEY}
        async with httpx.AsyncClient(base_url=self.server_base, timeout=self.timeout,
                                     transport=self.transport) as http:
            if ask is not None:
                raw, scores, usage = await self._ask(http, body, ask)
            else:
                await self._learn_tokens(http, choices)
                raw, usage = await self._score(http, body, choices)
                scores = dict(raw)
                if self.calibrate:
                    prior = await self._prior(http, body, choices)
                    scores = {c: raw[c] - prior[c] for c in choices}
        best = max(choices, key=lambda c: (scores[c], raw[c]))
        usage = usage.model_copy(update={"total_ms": (time.monotonic() - start) * 1000.0})
        return Scored(best, scores, raw, usage)

    async def _ask(self, http: httpx.AsyncClient, body: dict[str, Any],
                   ask: Ask) -> tuple[dict[str, float], dict[str, float], Usage]:
        """Raw and calibrated scores per value: its best phrase after the ask's prefix."""
        phrases = sorted({p for ps in ask.phrases.values() for p in ps})
        await self._learn_tokens(http, phrases)
        asked = {**body, "messages": ask.messages(body)}
        raw, usage = await self._score(http, asked, phrases)
        calibrated = dict(raw)
        if self.calibrate:
            priors = [await self._prior(http, asked, phrases, free) for free in ask.content_free]
            calibrated = {p: raw[p] - sum(pr[p] for pr in priors) / len(priors)
                          for p in phrases}
        scores = {c: max(calibrated[p] for p in ps) for c, ps in ask.phrases.items()}
        raw_best = {c: max(raw[p] for p in ps) for c, ps in ask.phrases.items()}
        return raw_best, scores, usage

    async def pieces(self, texts: Sequence[str]) -> list[list[tuple[int, str]]]:
        """The tokens of each of ``texts`` (id, piece), kept once learnt: those not known
        yet asked for over one connection."""
        if any(t not in self._tokens for t in texts):
            async with httpx.AsyncClient(base_url=self.server_base, timeout=self.timeout,
                                         transport=self.transport) as http:
                await self._learn_tokens(http, texts)
        return [self._tokens[t] for t in texts]

    async def _learn_tokens(self, http: httpx.AsyncClient, texts: Sequence[str]) -> None:
        """Tokenize each text not seen before (once per scorer)."""
        for t in texts:
            if t not in self._tokens:
                self._tokens[t] = await self._tokenize(http, t)

    async def _tokenize(self, http: httpx.AsyncClient, text: str) -> list[tuple[int, str]]:
        resp = await http.post("/tokenize", json={"content": text, "with_pieces": True})
        if resp.status_code != 200:
            raise ModelError(f"the model server could not tokenize {text!r} "
                             f"(HTTP {resp.status_code})")
        out = []
        for t in resp.json()["tokens"]:
            piece = t["piece"] if isinstance(t["piece"], str) else bytes(t["piece"]).decode(
                "utf-8", "replace")
            out.append((int(t["id"]), piece))
        return out

    async def _next(self, http: httpx.AsyncClient, body: dict[str, Any],
                    written: str) -> tuple[dict[int, float], dict[str, Any]]:
        """The next-token log-probabilities after the request's reply so far + ``written``."""
        messages = [dict(m) for m in body["messages"]]
        if messages and messages[-1].get("role") == "assistant":
            messages[-1]["content"] = (messages[-1].get("content") or "") + written
        elif written:
            messages.append({"role": "assistant", "content": written})
        ask = {k: v for k, v in body.items()
               if k not in ("stream", "stream_options", "grammar", "timings_per_token")}
        ask.update(messages=messages, max_tokens=1, temperature=0.0, logprobs=True,
                   top_logprobs=TOP_LOGPROBS, stream=False)
        resp = await http.post("/v1/chat/completions", json=ask)
        if resp.status_code != 200:
            raise ModelError(f"the model server refused a scoring request "
                             f"(HTTP {resp.status_code}: {resp.text[:200]})")
        data = resp.json()
        content = data["choices"][0].get("logprobs", {}).get("content") or []
        if not content:
            raise ModelError("the model server returned no log-probabilities; it needs "
                             "llama.cpp's logprobs support")
        top = {int(p["id"]): float(p["logprob"]) for p in content[0]["top_logprobs"]}
        return top, data

    async def _score(self, http: httpx.AsyncClient, body: dict[str, Any],
                     choices: Sequence[str]) -> tuple[dict[str, float], Usage]:
        """Each choice's log-probability, looked at token by token only while choices share
        their tokens so far (usually one request)."""
        scores = dict.fromkeys(choices, 0.0)
        usage = Usage()
        # groups of choices still sharing their first ``depth`` tokens
        pending: list[tuple[int, str, list[str]]] = [(0, "", list(choices))]
        while pending:
            depth, written, group = pending.pop(0)
            top, data = await self._next(http, body, written)
            if not written:
                usage = _usage(data)
            floor = min(top.values()) - 1.0
            by_token: dict[int, list[str]] = {}
            for c in group:
                toks = self._tokens[c]
                if depth >= len(toks):
                    continue
                tid, _ = toks[depth]
                scores[c] += top.get(tid, floor)
                by_token.setdefault(tid, []).append(c)
            for same in by_token.values():
                if len(same) > 1:  # tell them apart one token further on
                    piece = self._tokens[same[0]][depth][1]
                    pending.append((depth + 1, written + piece, same))
        return scores, usage

    async def _prior(self, http: httpx.AsyncClient, body: dict[str, Any],
                     choices: Sequence[str], free: str = "") -> dict[str, float]:
        """The choices' scores for a content-free input: the newest user message replaced
        by ``free`` (empty by default)."""
        messages = [dict(m) for m in body["messages"]]
        for m in reversed(messages):
            if m.get("role") == "user":
                m["content"] = free
                break
        key = hashlib.sha256(json.dumps([messages, list(choices)], sort_keys=True)
                             .encode()).hexdigest()
        if key not in self._priors:
            self._priors[key], _ = await self._score(http, {**body, "messages": messages},
                                                     choices)
        return self._priors[key]


def _usage(data: dict[str, Any]) -> Usage:
    u = data.get("usage") or {}
    t = data.get("timings") or {}
    return Usage(
        prompt_tokens=int(u.get("prompt_tokens") or 0),
        completion_tokens=0,
        cached_tokens=int(t.get("cache_n") or 0),
        prompt_n=int(t["prompt_n"]) if "prompt_n" in t else None,
        prompt_ms=float(t["prompt_ms"]) if "prompt_ms" in t else None,
    )
