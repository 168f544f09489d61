"""What keeps the server safe by default: a bearer token (constant-time compare), bounded
request bodies, the loopback-only rule for starting without a token, and the checks that
keep other web pages out (CORS, the Host a tokenless server answers, a WebSocket's
Origin)."""

from __future__ import annotations

import functools
import hmac
import ipaddress
from urllib.parse import parse_qs, urlsplit

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from terrarium.serve.problems import Problem, problem_response, send_problem

__all__ = ["TOO_BIG", "BodyLimit", "BrowserGuard", "Cors", "TokenAuth", "is_loopback"]

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


class BrowserGuard:
    """What CORS does not cover. A server without a token answers only requests addressed
    to this machine by a name a web page cannot take over: an IP address, ``localhost``
    (or a name of one label); a page of another site that made its own name point at
    127.0.0.1 (DNS rebinding) is the same origin as the server to its browser, so CORS
    lets it read and write everything. And a WebSocket handshake from a browser page
    (it says its ``Origin``) is taken only from the server's own page or an allowed
    origin, as browsers open sockets to any site without asking."""

    def __init__(self, app: ASGIApp, check_host: bool, origins: list[str]) -> None:
        self.app = app
        self.check_host = check_host
        self.origins = frozenset(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            problem = self.problem(scope)
            if problem is not None:
                await send_problem(scope, send, problem)
                return
        await self.app(scope, receive, send)

    def problem(self, scope: Scope) -> Problem | None:
        host = origin = None
        for k, v in scope.get("headers", ()):
            if k == b"host":
                host = v.decode("latin-1")
            elif k == b"origin":
                origin = v.decode("latin-1")
        if self.check_host and host is not None and not _local_name(host):
            return Problem(403, f"this server answers only requests addressed to localhost or "
                           f"an IP address, not {host!r} (a web page of another site may "
                           "have made that name point here); serve with --token-env to "
                           "take requests by any name", slug="wrong-host")
        if (scope["type"] == "websocket" and origin is not None and origin not in self.origins
                and urlsplit(origin).netloc != host):
            return Problem(403, f"a WebSocket from a page of {origin!r} is refused: only the "
                           "server's own page and --allow-origin origins may open one",
                           slug="cors-refused")
        return None


@functools.lru_cache(maxsize=256)  # a client sends the same Host on every request
def _local_name(host: str) -> bool:
    name = host.rsplit("]", 1)[0].lstrip("[") if host.startswith("[") else (
        host.rsplit(":", 1)[0] if host.count(":") == 1 else host)
    name = name.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost") or "." not in name:
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


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
        if isinstance(given, Problem):
            await send_problem(scope, send, given)
            return
        if not hmac.compare_digest(given, self.token):
            await send_problem(scope, send, Problem(403, "the token is not right",
                                                    slug="forbidden"))
            return
        await self.app(scope, receive, send)


def _unauthorized(detail: str) -> Problem:
    return Problem(401, detail, slug="unauthorized", headers={"WWW-Authenticate": "Bearer"})


def _token_of(scope: Scope) -> bytes | Problem:
    """The bearer token the request gives, or the problem with how it gives it (401:
    none, or not as ``Bearer <token>``; 400: two Authorization headers, which a proxy
    and this server might read differently)."""
    given = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
    if len(given) > 1:
        return Problem(400, "the request has several Authorization headers; send one",
                       slug="bad-authorization")
    if given:
        scheme, _, value = given[0].strip().partition(b" ")
        value = value.strip()
        if scheme.lower() != b"bearer" or not value:
            return _unauthorized("the Authorization header must be 'Bearer <token>'")
        return value
    q = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if "token" in q:
        if not _takes_query_token(scope):
            return _unauthorized(
                "?token= is taken only by the event stream and the WebSockets, which "
                "browsers cannot give headers; send Authorization: Bearer <token>")
        return q["token"][0].encode()
    return _unauthorized("this server needs a bearer token (Authorization: Bearer ...)")


def _takes_query_token(scope: Scope) -> bool:
    """``?token=`` is for what a browser opens without headers (EventSource, WebSocket):
    a token in any other URL would only end up in logs and histories for nothing."""
    return scope["type"] == "websocket" or (
        scope.get("method") in ("GET", "HEAD") and scope["path"].endswith("/events"))


class Cors(CORSMiddleware):
    """Starlette's CORS, with a refused preflight answered as a problem (403), not
    plain text."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        what = bytes(response.body).decode().removeprefix("Disallowed CORS ")
        origin = request_headers.get("origin", "")
        return problem_response(Problem(
            403, f"the cross-origin request from {origin!r} is refused: its {what} is not "
            "allowed (terrarium serve --allow-origin names the origins that may call it)",
            slug="cors-refused", headers={"Vary": "Origin"}))


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
                await send_problem(scope, send, too_big)
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
