"""The /v1 session API (see docs/serve.md): sessions, input, events, transcripts,
approvals, prompts and the team's topology. Bodies are pydantic models; every error is a
problem (``problems.py``); no route takes a file path."""

from __future__ import annotations

from typing import Any, TypeVar

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from terrarium.channels.payload import field_errors
from terrarium.serve.events import SessionEvents
from terrarium.serve.manager import SessionManager
from terrarium.serve.problems import Problem, refuse_socket
from terrarium.serve.security import TOO_BIG
from terrarium.serve.transcripts import transcript_window

__all__ = ["AFTER_QUERY", "ApprovalAnswer", "EventsSSE", "InputBody", "NewSession",
           "PostInput", "api_routes", "parse_model", "read_model"]

KEEPALIVE = 15.0  # seconds between SSE comments on a quiet stream (proxies close idle ones)


# strict: a JSON body says what it means ("yes" is not true, 5 is not "5"), so an approval
# is given only by a JSON true
API_MODEL = ConfigDict(extra="forbid", strict=True)


class NewSession(BaseModel):
    model_config = API_MODEL
    name: str | None = Field(default=None, min_length=1, max_length=200,
                             description="A name to find the session by (unique per team).")


class InputBody(BaseModel):
    """Plain user text (as stdin), or the fields of the input channel's schema."""

    model_config = API_MODEL
    text: str | None = Field(default=None, description="What the user says.")
    payload: dict[str, Any] | None = Field(default=None,
                                           description="Fields of the input channel's schema.")


class ApprovalAnswer(BaseModel):
    model_config = API_MODEL
    approved: bool | None = Field(default=None, description="The decision on an approval.")
    answer: str | None = Field(default=None, description="The answer to a question, or the "
                               "reason given with an approval's decision.")


M = TypeVar("M", bound=BaseModel)


async def read_model(request: Request, model: type[M]) -> M:
    """The body as ``model``; 422 naming each field that is wrong."""
    return parse_model(await _body(request.scope, request.receive), model)


def parse_model(raw: bytes, model: type[M]) -> M:
    """``raw`` (JSON) as ``model``: 400 when it is not JSON, 422 naming each wrong field."""
    try:  # parsed and checked in one pass (pydantic's own JSON parser)
        return model.model_validate_json(raw or b"{}")
    except ValidationError as exc:
        found = exc.errors(include_url=False)
        bad = [e for e in found if e["type"] == "json_invalid"]
        if bad:  # where and why (a trailing comma; nested too deep; a number too big)
            why = (bad[0].get("ctx") or {}).get("error")
            raise Problem(400, "the body is not valid JSON" + (f": {why}" if why else ""),
                          slug="bad-json") from None
        errors = field_errors(found, "body")
        raise Problem(422, "the body does not match: " + "; ".join(
            f"{e['field']}: {e['message']}" for e in errors), slug="invalid-body",
            errors=errors) from None


def _mgr(request: Request | WebSocket) -> SessionManager:
    return request.app.state.manager  # type: ignore[no-any-return]


# ---------------------------------------------------------------------- health
async def healthz(request: Request) -> JSONResponse:
    """Liveness: the process answers."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> JSONResponse:
    """Readiness: the model server is up and crashed sessions are back."""
    ready = _mgr(request).ready
    return JSONResponse({"ready": ready}, status_code=200 if ready else 503)


async def team(request: Request) -> JSONResponse:
    """The team's topology: creatures, channels and schemas (for a client's forms), and
    ``layout``, where the page draws each box and arrow (the layout ``terrarium graph``
    draws: one source, so the two pictures agree)."""
    from terrarium.config.topology import team_topology
    from terrarium.config.topology_layout import layout

    topo = team_topology(_mgr(request).team)
    return JSONResponse({**topo.model_dump(mode="json"), "layout": layout(topo).model_dump()})


# ---------------------------------------------------------------------- sessions
async def list_sessions(request: Request) -> JSONResponse:
    """Every stored session of the team."""
    m = _mgr(request)
    return JSONResponse({"sessions": [m.public(i) for i in m.store.list(m.team.name)]})


async def create_session(request: Request) -> JSONResponse:
    """A new session (not loaded until its first input)."""
    body = await read_model(request, NewSession)
    m = _mgr(request)
    return JSONResponse(m.public(m.create(body.name)), status_code=201)


async def get_session(request: Request) -> JSONResponse:
    """One session."""
    m = _mgr(request)
    info = m.info(request.path_params["session_id"])
    return JSONResponse(m.public(m.store.get(info.id) or info))  # its turns as of now


async def delete_session(request: Request) -> Response:
    """Stop and forget a session (its run stays in the log)."""
    await _mgr(request).delete(request.path_params["session_id"])
    return Response(status_code=204)


class PostInput:
    """Input to the team's input channel: ``text`` or a ``payload`` of its schema."""

    # The hot route (every input a client sends): a bare ASGI app rather than a
    # request/response function, so that it costs no Request, JSONResponse or exception
    # wrapper of its own (errors are raised as problems and answered by the app's handler,
    # as every route's). Same checks and answers as a plain route would give.

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        m: SessionManager = scope["app"].state.manager
        sid = scope["path_params"]["session_id"]
        m.info(sid)  # 404 before the body is read
        body = parse_model(await _body(scope, receive), InputBody)
        if (body.text is None) == (body.payload is None):
            raise Problem(422, "give exactly one of text or payload", slug="invalid-body",
                          errors=[{"field": "text", "message": "give text or payload"}])
        live = await m.load(sid, hold=True)
        try:
            seq = await m.send(live, text=body.text, payload=body.payload)
        finally:
            live.inputs -= 1
        answer = b'{"accepted":true,"seq":%d}' % seq
        await send({"type": "http.response.start", "status": 202, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", b"%d" % len(answer))]})
        await send({"type": "http.response.body", "body": answer})


async def _body(scope: Scope, receive: Receive) -> bytes:
    """The whole request body (the app's body limit has bounded it: 413 past it), which
    must say it is JSON: 415 otherwise. A browser sends a form or ``text/plain`` to any
    site without asking first (no CORS preflight), so a body of another type is refused
    rather than read as JSON; an empty body needs no type."""
    kind = None
    for k, v in scope["headers"]:
        if k == b"content-type":
            kind = v
            break
    chunks = []
    while True:
        msg = await receive()
        if msg["type"] != "http.request":  # the client went away
            raise Problem(400, "the request ended before its body", slug="no-body")
        chunks.append(msg.get("body", b""))
        if not msg.get("more_body", False):
            break
    limit = scope.get(TOO_BIG)
    if limit:
        raise Problem(413, f"the request body is larger than {limit} bytes", slug="too-large")
    raw = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if raw and not _is_json(kind):
        given = "no Content-Type" if kind is None else f"Content-Type {kind.decode('latin-1')!r}"
        raise Problem(415, f"the body must be JSON, sent with Content-Type: application/json "
                      f"(this request has {given})", slug="not-json")
    return raw


def _is_json(kind: bytes | None) -> bool:
    if kind is None:
        return False
    media = kind.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (media.startswith(b"application/")
                                            and media.endswith(b"+json"))


# ---------------------------------------------------------------------- events
def _after(request: HTTPConnection) -> int:
    """``Last-Event-ID`` or ``?after=``: a whole number in ASCII digits (not Python's
    idea of one: no sign, no ``1_000``, no other script's digits), 422 otherwise."""
    raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
    if raw.isascii() and raw.isdigit() and len(raw) <= 20:
        return int(raw)
    raise Problem(422, f"after (or Last-Event-ID) must be the seq of an event, a whole number "
                  f"of at most 20 digits, not {raw[:40]!r}", slug="invalid-query",
                  errors=[{"field": "after", "message": "must be a whole number"}])


AFTER_QUERY = [{"name": "after", "in": "query", "required": False,
                "description": "the seq of the last event seen (or the Last-Event-ID "
                               "header): the stream starts after it; at most the session's "
                               "last event's seq (422 past it); default 0",
                "schema": {"type": "integer", "minimum": 0}}]

_SSE_HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-store"), (b"x-accel-buffering", b"no")]


class EventsSSE:
    """The session's events as Server-Sent Events, from ``Last-Event-ID``/``after``."""

    # A bare ASGI app, as ``PostInput``: every event of every session goes out through it
    # (a StreamingResponse added an async generator and its wrappers to each chunk).

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        m: SessionManager = scope["app"].state.manager
        sid = scope["path_params"]["session_id"]
        m.info(sid)
        after = _after(HTTPConnection(scope))
        with m.stream(sid, after) as events:  # (422 past the last event)
            await send({"type": "http.response.start", "status": 200,
                        "headers": _SSE_HEADERS})
            if scope["method"] == "HEAD":  # the headers only: a HEAD has no stream to wait on
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            async with anyio.create_task_group() as tg:
                tg.start_soon(_until_gone, receive, tg.cancel_scope)
                await _stream(events, after, send)
                tg.cancel_scope.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _until_gone(receive: Receive, scope: anyio.CancelScope) -> None:
    """Ends the stream when the client goes away."""
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


async def _stream(events: SessionEvents, pos: int, send: Send) -> None:
    """Committed events after ``pos`` as SSE chunks (a comment when quiet for a while,
    as proxies close idle connections), until the session is closed."""
    await send({"type": "http.response.body", "body": b": terrarium events\n\n",
                "more_body": True})
    while not events.closed:
        rows = await events.wait(pos, patience=KEEPALIVE)
        if rows:
            body = "".join([f"id: {seq}\nevent: {kind}\ndata: {data}\n\n"
                            for seq, kind, data in rows]).encode()
            pos = rows[-1][0]
        else:
            body = b": keepalive\n\n"
        await send({"type": "http.response.body", "body": body, "more_body": True})


async def events_ws(ws: WebSocket) -> None:
    """The session's events over a WebSocket, one JSON object per text frame."""
    m = _mgr(ws)
    sid = ws.path_params["session_id"]
    try:
        m.info(sid)
        pos = _after(ws)
        with m.stream(sid, pos) as events:  # (422 past the last event)
            await _events_socket(ws, events, pos)
    except Problem as p:
        await refuse_socket(ws, p)


async def _events_socket(ws: WebSocket, events: SessionEvents, pos: int) -> None:
    """Send the events after ``pos``, one JSON text frame each, until either side ends."""
    await ws.accept()

    async def watch_close() -> None:
        # the client has nothing to say here: what it sends (text or binary) is dropped;
        # this notices it leave
        while (await ws.receive())["type"] != "websocket.disconnect":
            pass
        tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch_close)
        try:
            while not events.closed:
                for seq, _, data in await events.wait(pos, patience=KEEPALIVE):
                    await ws.send_text(data)
                    pos = seq
        except (WebSocketDisconnect, RuntimeError):
            pass
        tg.cancel_scope.cancel()
    if events.closed:
        await ws.close(code=1000)


# ---------------------------------------------------------------------- views
def _creature(m: SessionManager, name: str) -> str:
    if name not in m.team.everyone:
        raise Problem(404, f"there is no creature {name!r} in {m.team.name!r}",
                      slug="no-creature")
    return name


async def transcript(request: Request) -> JSONResponse:
    """A creature's transcript in this session: its newest entries (?limit=&before= page back)."""
    m = _mgr(request)
    info = m.info(request.path_params["session_id"])
    name = _creature(m, request.path_params["creature"])
    if info.id in m.loaded:
        await m.flush()  # what it has done so far is in the log, read below
    return JSONResponse(await transcript_window(m.log, info.run_id, name,
                                                request.query_params))


async def approvals(request: Request) -> JSONResponse:
    """Approvals and questions waiting for an answer."""
    m = _mgr(request)
    info = m.info(request.path_params["session_id"])
    live = m.loaded.get(info.id)
    pending = [p.public() for p in live.pending.values()] if live is not None else []
    return JSONResponse({"pending": pending})


async def answer_approval(request: Request) -> JSONResponse:
    """Approve or deny a call, or answer a question."""
    m = _mgr(request)
    info = m.info(request.path_params["session_id"])
    live = m.loaded.get(info.id)
    aid = request.path_params["approval_id"]
    p = live.pending.get(aid) if live is not None else None
    if p is None:
        raise Problem(404, f"there is no pending approval or question {aid!r}",
                      slug="no-approval")
    body = await read_model(request, ApprovalAnswer)
    if p.answered.is_set():  # answered a moment ago (its creature has not woken yet)
        raise Problem(409, f"{aid!r} has already been answered", slug="already-answered")
    if p.kind == "approval":
        if body.approved is None:
            raise Problem(422, "an approval needs approved: true or false",
                          slug="invalid-body",
                          errors=[{"field": "approved", "message": "Field required"}])
        p.approved = body.approved
        p.answer = body.answer
    else:
        if body.answer is None:
            raise Problem(422, "a question needs an answer", slug="invalid-body",
                          errors=[{"field": "answer", "message": "Field required"}])
        p.answer = body.answer
    p.answered.set()
    return JSONResponse({"id": p.id, "kind": p.kind, "answered": True})


async def prompt(request: Request) -> JSONResponse:
    """A creature's assembled prompt: its last one in this session, else its first."""
    m = _mgr(request)
    info = m.info(request.path_params["session_id"])
    name = _creature(m, request.path_params["creature"])
    live = m.loaded.get(info.id)
    built = live.rt.prompt(name) if live is not None and live.rt is not None else None
    if built is None:
        from terrarium.controller.assembly import assemble
        from terrarium.prompt.builder import PromptBuilder
        from terrarium.prompt.tail import TailState

        parts = assemble(m.team, name)
        built = PromptBuilder(parts.inputs, parts.fmt).build(
            TailState(step=0, status=parts.cdef.config.prompt_status))
    d = built.to_dict()
    return JSONResponse({"creature": name, "prefix_hash": d["prefix_hash"],
                         "tokens": d["tokens"], "sections": d["sections"],
                         "text": built.render_text()})


def api_routes() -> list[Route | WebSocketRoute]:
    sid = "/v1/sessions/{session_id}"
    return [  # the hot routes first (the router tries them in order)
        Route(sid + "/input", PostInput(), methods=["POST"], name="post_input"),
        Route(sid + "/events", EventsSSE(), methods=["GET"], name="events_sse"),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/v1/team", team, methods=["GET"]),
        Route("/v1/sessions", list_sessions, methods=["GET"]),
        Route("/v1/sessions", create_session, methods=["POST"]),
        Route(sid, get_session, methods=["GET"]),
        Route(sid, delete_session, methods=["DELETE"]),
        WebSocketRoute(sid + "/events/ws", events_ws),
        Route(sid + "/transcript/{creature}", transcript, methods=["GET"]),
        Route(sid + "/approvals", approvals, methods=["GET"]),
        Route(sid + "/approvals/{approval_id}", answer_approval, methods=["POST"]),
        Route(sid + "/prompt/{creature}", prompt, methods=["GET"]),
    ]

