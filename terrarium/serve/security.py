"""What keeps the server safe by default: a bearer token (constant-time compare), bounded
request bodies, and the loopback-only rule for starting without a token."""

from __future__ import annotations

import hmac
import ipaddress
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from terrarium.serve.problems import PROBLEM_TYPE, Problem

__all__ = ["TOO_BIG", "BodyLimit", "TokenAuth", "is_loopback"]

OPEN_PATHS = frozenset({"/healthz"})


def _page_file(path: str) -> bool:
    """The web page's own files (no data, no secrets): a browser cannot send a header
    when it loads a page or its modules, so they are open; the page then sends the token
    with every API call."""
    return path in ("/", "/index.html") or (path.startswith("/js/") and path.endswith(".js")
                                           and ".." not in path)
TOO_BIG = "terrarium.body_too_big"  # set in the scope when a body passed its limit


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server to this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def _send_problem(scope: Scope, send: Send, p: Problem) -> None:
    if scope["type"] == "websocket":
        # before accept: the handshake is answered with an HTTP error (403 in most servers)
        await send({"type": "websocket.close", "code": 4000 + p.status,
                    "reason": p.detail[:120]})
        return
    body = json.dumps(p.body()).encode()
    headers = [(b"content-type", PROBLEM_TYPE.encode()),
               (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in p.headers.items()]
    await send({"type": "http.response.start", "status": p.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class TokenAuth:
    """Every route but /healthz and the page's files needs ``Authorization: Bearer
    <token>`` (or ``?token=`` for WebSocket and EventSource, which browsers cannot give
    headers); missing is 401, wrong is 403. The token is compared in constant time."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS or (
                scope["type"] == "http" and scope.get("method") in ("GET", "HEAD")
                and _page_file(scope["path"])):
            await self.app(scope, receive, send)
            return
        given = _token_of(scope)
        if given is None:
            await _send_problem(scope, send, Problem(
                401, "this server needs a bearer token (Authorization: Bearer ...)",
                slug="unauthorized", headers={"WWW-Authenticate": "Bearer"}))
            return
        if not hmac.compare_digest(given, self.token):
            await _send_problem(scope, send, Problem(403, "the token is not right",
                                                     slug="forbidden"))
            return
        await self.app(scope, receive, send)


def _token_of(scope: Scope) -> bytes | None:
    for k, v in scope.get("headers", ()):
        if k == b"authorization":
            scheme, _, value = v.partition(b" ")
            return value.strip() if scheme.lower() == b"bearer" else b""
    from urllib.parse import parse_qs

    q = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if "token" in q:
        return q["token"][0].encode()
    return None


class BodyLimit:
    """Refuse a request body past its limit with 413, before or while it is read. The
    input route's limit is the input channel's ``max_bytes`` (plus the JSON around it)."""

    def __init__(self, app: ASGIApp, default: int, input_limit: int,
                 chat_limit: int) -> None:
        self.app = app
        self.default = default
        self.input_limit = input_limit
        self.chat_limit = chat_limit

    def limit(self, path: str) -> int:
        if path.endswith("/input"):
            return self.input_limit
        if path == "/v1/chat/completions":
            return self.chat_limit
        return self.default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit(scope["path"])
        too_big = Problem(413, f"the request body is larger than {limit} bytes",
                          slug="too-large")
        for k, v in scope.get("headers", ()):
            if k == b"content-length" and v.isdigit() and int(v) > limit:
                await _send_problem(scope, send, too_big)
                return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            if scope.get(TOO_BIG):
                return {"type": "http.request", "body": b"", "more_body": False}
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:  # the rest is not read; the route answers 413
                    scope[TOO_BIG] = limit
                    return {"type": "http.request", "body": b"", "more_body": False}
            return msg

        await self.app(scope, counted, send)
