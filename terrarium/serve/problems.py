"""Errors as RFC 9457 problem details: a title, a status, a sentence; never a traceback."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Scope, Send
from starlette.websockets import WebSocket

__all__ = ["PROBLEM_TYPE", "Problem", "problem_response", "refuse_socket", "send_problem"]

DENIAL = "websocket.http.response"  # the ASGI extension that answers a handshake with HTTP

PROBLEM_TYPE = "application/problem+json"
_TITLES = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found",
           405: "Method not allowed", 409: "Conflict", 413: "Content too large",
           415: "Unsupported media type", 422: "Unprocessable content",
           426: "Upgrade required",
           429: "Too many requests", 500: "Internal server error",
           503: "Service unavailable", 504: "Gateway timeout"}


class Problem(Exception):
    """Raised by a route; the app turns it into a problem+json answer."""

    def __init__(self, status: int, detail: str, *, slug: str | None = None,
                 errors: Sequence[Mapping[str, str]] | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.slug = slug
        self.errors = list(errors) if errors else None
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": f"/problems/{self.slug}" if self.slug else "about:blank",
            "title": _TITLES.get(self.status, "Error"), "status": self.status,
            "detail": self.detail}
        if self.errors:
            out["errors"] = self.errors
        # an extension member OpenAI clients read their error message from
        out["error"] = {"message": self.detail, "type": self.slug or "error",
                        "code": self.status}
        return out


def problem_response(p: Problem) -> JSONResponse:
    return JSONResponse(p.body(), status_code=p.status, headers=p.headers,
                        media_type=PROBLEM_TYPE)


async def send_problem(scope: Scope, send: Send, p: Problem) -> None:
    """Answer ``p`` from a bare ASGI app (middleware): an HTTP problem, also to a
    WebSocket handshake when the server can answer one with HTTP (uvicorn can)."""
    body = json.dumps(p.body()).encode()
    headers = [(b"content-type", PROBLEM_TYPE.encode()),
               (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in p.headers.items()]
    if scope["type"] == "websocket":
        if DENIAL not in scope.get("extensions", {}):
            # before accept: the handshake is refused (403 in most servers), with the status
            # and the sentence as the close code and reason
            await send({"type": "websocket.close", "code": 4000 + p.status,
                        "reason": p.detail[:120]})
            return
        await send({"type": "websocket.http.response.start", "status": p.status,
                    "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
        return
    await send({"type": "http.response.start", "status": p.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def refuse_socket(ws: WebSocket, p: Problem) -> None:
    """Refuse a WebSocket before accepting it: its handshake answered with the problem
    (status and JSON body) where the server can, else closed with ``4000 + status``."""
    if DENIAL in ws.scope.get("extensions", {}):
        await ws.send_denial_response(problem_response(p))
    else:
        await ws.close(code=4000 + p.status, reason=p.detail[:120])
