"""An OpenAI-compatible face: ``POST /v1/chat/completions`` and ``GET /v1/models``.

``model`` names the team. Only the newest user message is sent (to the input channel):
the session already holds the conversation, so any OpenAI client continues one by naming
its session in ``user`` (or the ``X-Terrarium-Session`` header: a session id or a name,
made on first use). The reply is what the team's output creatures write (their named
outputs' text) until the team is quiet again.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from terrarium.serve.live import LiveSession
from terrarium.serve.manager import SessionManager
from terrarium.serve.problems import Problem
from terrarium.serve.routes import read_model

__all__ = ["ChatCompletionRequest", "openai_routes", "reply_deltas"]

SESSION_HEADER = "X-Terrarium-Session"


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    role: str
    content: str | list[dict[str, Any]] | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    include_usage: bool | None = False


class ChatCompletionRequest(BaseModel):
    """The fields terrarium reads; the others OpenAI clients send are accepted and ignored
    (a team has its own models, tools and settings), but for ``n``: one reply is all a
    team gives, so asking for more is refused rather than answered with one."""

    model_config = ConfigDict(extra="allow", strict=True)
    model: str
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: bool | None = False  # (None, as some clients send an unset field: False)
    stream_options: StreamOptions | None = None
    user: str | None = None
    n: int | None = Field(default=1, ge=1, le=1, description="Always 1: a team gives one reply.")


# roles that set up a conversation rather than take part in it (OpenAI's "developer" is the
# newer name of "system")
_SETUP = frozenset({"system", "developer"})


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) for p in content or () if p.get("type") == "text")


def _user_text(messages: list[ChatMessageIn]) -> str:
    """The text the team is sent: the newest message's, which must be the user's and
    have text (422 otherwise: a team answers a user, and reads text only)."""
    said = [(i, m) for i, m in enumerate(messages) if m.role not in _SETUP]
    if not said:
        raise Problem(422, "there is no user message to send", slug="invalid-body",
                      errors=[{"field": "messages", "message": "needs a user message"}])
    i, last = said[-1]
    if last.role != "user":
        raise Problem(422, f"the newest message is the {last.role}'s; the team is sent the "
                      "user's newest message, so end messages with the user's",
                      slug="invalid-body", errors=[{"field": f"messages.{i}.role",
                                                    "message": "must be 'user'"}])
    text = _text(last.content)
    if not text.strip():
        other = isinstance(last.content, list) and any(
            p.get("type") != "text" for p in last.content)
        why = ("has no text part (a team reads text only: its image, audio or file parts "
               "are not sent)" if other else "is empty")
        raise Problem(422, f"the user's newest message {why}", slug="invalid-body",
                      errors=[{"field": f"messages.{i}.content", "message": "needs text"}])
    return text


async def reply_deltas(live: LiveSession, after: int, outputs: tuple[str, ...], *,
                       within: float, usage: dict[str, int] | None = None
                       ) -> AsyncIterator[str]:
    """The output creatures' text written after event ``after``, until the team is quiet."""
    events = live.events
    deadline = time.monotonic() + within
    pos, quiet = after, 0
    while time.monotonic() < deadline:
        rows = await events.wait(pos, patience=0.01)
        for seq, kind, data in rows:
            pos = seq
            if kind == "output_text":
                d = json.loads(data)
                if d.get("creature") in outputs and d.get("text"):
                    yield d["text"]
            elif kind == "turn_ended" and usage is not None:
                d = json.loads(data)
                usage["prompt_tokens"] += int(d.get("prompt_tokens") or 0)
                usage["completion_tokens"] += int(d.get("completion_tokens") or 0)
        if rows:
            quiet = 0
            continue
        rt = live.rt
        if rt is None:
            return
        quiet = 0 if rt.busy() else quiet + 1
        if quiet >= 3 and pos >= events.last_seq:
            return


def _model(m: SessionManager) -> dict[str, Any]:
    return {"id": m.team.name, "object": "model", "created": int(m.started),
            "owned_by": "terrarium"}


async def models(request: Request) -> JSONResponse:
    """The team, as the one model this server has."""
    m: SessionManager = request.app.state.manager
    return JSONResponse({"object": "list", "data": [_model(m)]})


async def model(request: Request) -> JSONResponse:
    """One model: the team (``client.models.retrieve``)."""
    m: SessionManager = request.app.state.manager
    name = request.path_params["model"]
    if name != m.team.name:
        raise Problem(404, f"there is no model {name!r}; this server has {m.team.name!r}",
                      slug="model-not-found")
    return JSONResponse(_model(m))


async def chat_completions(request: Request) -> Any:
    """The newest user message to the team; its output as the assistant's reply."""
    m: SessionManager = request.app.state.manager
    body = await read_model(request, ChatCompletionRequest)
    if body.model != m.team.name:
        raise Problem(404, f"there is no model {body.model!r}; this server has "
                      f"{m.team.name!r}", slug="model-not-found",
                      errors=[{"field": "model", "message": f"use {m.team.name!r}"}])
    text = _user_text(body.messages)
    header = request.headers.get(SESSION_HEADER)
    key = header or body.user
    info = m.by_user(key, SESSION_HEADER if header else "user") if key else m.create(None)
    live = await m.load(info.id, hold=True)
    try:
        after = await m.send(live, text=text)
    except BaseException:
        live.inputs -= 1
        raise
    cid = "chatcmpl-" + secrets.token_hex(12)
    created = int(time.time())
    headers = {SESSION_HEADER: info.id}
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    deltas = reply_deltas(live, after, m.output_creatures,
                          within=m.settings.reply_timeout, usage=usage)
    if not body.stream:
        try:
            reply = "".join([d async for d in deltas])
        finally:
            live.inputs -= 1
            live.touch()
        return JSONResponse({
            "id": cid, "object": "chat.completion", "created": created, "model": body.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                         "finish_reason": "stop"}],
            "usage": {**usage, "total_tokens": sum(usage.values())}}, headers=headers)

    def chunk(delta: dict[str, Any], finish: Literal["stop"] | None = None) -> str:
        return "data: " + json.dumps({
            "id": cid, "object": "chat.completion.chunk", "created": created,
            "model": body.model, "choices": [{"index": 0, "delta": delta,
                                              "finish_reason": finish}]},
            ensure_ascii=False) + "\n\n"

    async def stream() -> AsyncIterator[str]:
        try:
            yield chunk({"role": "assistant", "content": ""})
            async for d in deltas:
                yield chunk({"content": d})
            yield chunk({}, "stop")
            if body.stream_options is not None and body.stream_options.include_usage:
                yield "data: " + json.dumps({  # as OpenAI: a last chunk with no choices
                    "id": cid, "object": "chat.completion.chunk", "created": created,
                    "model": body.model, "choices": [],
                    "usage": {**usage, "total_tokens": sum(usage.values())}}) + "\n\n"
            yield "data: [DONE]\n\n"
        finally:
            live.inputs -= 1
            live.touch()

    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


def openai_routes() -> list[Route]:
    return [Route("/v1/models", models, methods=["GET"]),
            Route("/v1/models/{model}", model, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"])]
