"""``create_app``: the Starlette app for one team. Its lifespan runs the session manager in
a task group (structured: every session's runtime is a task under it), so the server's
shutdown ends every session cleanly and a kill leaves them resumable."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from terrarium.config import Team
from terrarium.serve.audio import audio_routes
from terrarium.serve.manager import SessionManager
from terrarium.serve.metrics import ServeMetrics
from terrarium.serve.openai_api import ChatCompletionRequest, openai_routes
from terrarium.serve.openapi import openapi_schema
from terrarium.serve.problems import Problem, problem_response, send_problem
from terrarium.serve.routes import AFTER_QUERY, ApprovalAnswer, InputBody, NewSession, api_routes
from terrarium.serve.security import BodyLimit, BrowserGuard, Cors, TokenAuth
from terrarium.serve.settings import ServeSettings
from terrarium.serve.transcripts import TRANSCRIPT_QUERY

__all__ = ["UVICORN_OPTIONS", "WEB_DIR", "create_app"]

WEB_DIR = Path(__file__).parent / "web"  # the web page (its own helper writes it)
# how `terrarium serve` runs uvicorn. No per-message deflate on WebSockets: most of what
# they carry is the voice's PCM, which barely compresses, and deflating it cost the event
# loop about 0.8 ms per 16 KB frame (bench/voice.py --socket --framework, the server's
# profile: the largest cost the served voice path had that one process has not), CPU taken
# from the model and the voice in the same process; the events' JSON is small per frame
UVICORN_OPTIONS: dict[str, Any] = {
    "log_level": "warning", "lifespan": "on", "access_log": False, "ws_max_size": 1 << 20,
    "ws_per_message_deflate": False, "timeout_graceful_shutdown": 5}
QUERIES = {"transcript": TRANSCRIPT_QUERY, "events_sse": AFTER_QUERY,
           "events_ws": AFTER_QUERY}
BODIES = {"create_session": NewSession, "post_input": InputBody,
          "answer_approval": ApprovalAnswer, "chat_completions": ChatCompletionRequest}


async def _metrics(request: Request) -> Response:
    """Prometheus text: turns, tokens, cached ratio, time to first audio, inbox depths."""
    metrics: ServeMetrics = request.app.state.metrics
    return Response(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


async def _openapi(request: Request) -> JSONResponse:
    """The OpenAPI schema of every route."""
    return JSONResponse(request.app.state.openapi)


async def _page(request: Request) -> Response:
    """The web page (docs/web.md)."""
    return FileResponse(WEB_DIR / "index.html")


async def _problem(request: Request, exc: Exception) -> Response:
    if isinstance(exc, Problem):
        return problem_response(exc)
    if isinstance(exc, HTTPException):
        return problem_response(_router_problem(request, exc))
    # never a traceback to the client; the server's log has it
    return problem_response(Problem(500, "the server failed to handle this request",
                                    slug="internal"))


def _router_problem(request: Request, exc: HTTPException) -> Problem:
    """Starlette's own refusals (no route; a method the route does not take) as sentences
    saying what to do, with the ``Allow`` header of every route at the path."""
    path, routes = request.url.path, request.app.router.routes
    if exc.status_code == 405:
        allow = sorted(_allowed(routes, path))
        return Problem(405, f"{request.method} is not allowed on {path}; it takes "
                       f"{', '.join(allow)}", slug="method-not-allowed",
                       headers={"Allow": ", ".join(allow)})
    if exc.status_code == 404:
        if any(isinstance(r, WebSocketRoute) and r.path_regex.match(path) for r in routes):
            return Problem(426, f"{path} is a WebSocket: connect to it with a WebSocket "
                           "client (ws:// or wss://)", slug="websocket-only",
                           headers={"Upgrade": "websocket"})
        return Problem(404, f"there is nothing at {path}; GET /openapi.json lists every "
                       "route", slug="not-found")
    return Problem(exc.status_code, str(exc.detail), headers=exc.headers)


def _no_route(http: ASGIApp) -> ASGIApp:
    """Where no route matched: a WebSocket handshake is answered with a 404 problem (the
    router's own answer was a bare 403); HTTP goes on to the router's 404 (a problem)."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await send_problem(scope, send, Problem(
                404, f"there is no WebSocket at {scope['path']}; GET /openapi.json lists "
                "every route", slug="not-found"))
            return
        await http(scope, receive, send)

    return app


def _allowed(routes: list[BaseRoute], path: str) -> set[str]:
    """The methods the routes at ``path`` take (several routes may share a path)."""
    out: set[str] = set()
    for r in routes:
        if isinstance(r, Route) and r.path_regex.match(path):
            out |= r.methods or set()
        elif isinstance(r, Mount) and r.path_regex.match(path):
            out |= {"GET", "HEAD"}  # the page's files
    return out


def create_app(team: Team, settings: ServeSettings | None = None, *,
               models: Mapping[str, Any] | None = None, synthesizer: Any = None,
               vad_factory: Callable[[], Any] | None = None) -> Starlette:
    """The app for ``team``; ``models``, ``synthesizer`` and ``vad_factory`` stand in for
    the creatures' models, the voice and silero-vad (tests, benches)."""
    settings = settings or ServeSettings()
    manager = SessionManager(team, settings, models=models, synthesizer=synthesizer)
    metrics = ServeMetrics()
    metrics.manager = manager
    manager.listeners.append(metrics.observe)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            yield
            tg.cancel_scope.cancel()

    routes: list[BaseRoute] = [
        *api_routes(), *openai_routes(), *audio_routes(),
        Route("/metrics", _metrics, methods=["GET"]),
        Route("/openapi.json", _openapi, methods=["GET"]),
    ]
    if WEB_DIR.is_dir():  # the page's own files only: any other path is the API's 404
        routes += [Route("/", _page, methods=["GET"], name="page"),
                   Route("/index.html", _page, methods=["GET"], name="page_index"),
                   Mount("/js", app=StaticFiles(directory=WEB_DIR / "js"), name="web")]
    middleware: list[Middleware] = [Middleware(
        BrowserGuard, check_host=not settings.token, origins=settings.allow_origins)]
    if settings.allow_origins:
        # outside the token check: a browser's preflight carries no token, and a refusal
        # (401, 403) needs the CORS headers for the page to read it
        middleware.append(Middleware(
            Cors, allow_origins=settings.allow_origins,
            allow_methods=["GET", "POST", "DELETE"], allow_credentials=False,
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID",
                           "X-Terrarium-Session"], expose_headers=["X-Terrarium-Session"]))
    if settings.token:
        middleware.append(Middleware(TokenAuth, token=settings.token))
    max_bytes = (team.channels[team.input_channel].max_bytes
                 if team.input_channel and team.input_channel in team.channels
                 else settings.max_body)
    middleware.append(Middleware(BodyLimit, default=settings.max_body,
                                 input_limit=max_bytes + 1024,
                                 chat_limit=max(1 << 20, 4 * max_bytes)))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                    exception_handlers={Exception: _problem, HTTPException: _problem,
                                        Problem: _problem})
    app.router.default = _no_route(app.router.not_found)
    app.state.manager = manager
    app.state.metrics = metrics
    app.state.settings = settings
    app.state.vad_factory = vad_factory
    app.state.openapi = openapi_schema(routes, BODIES, title=f"terrarium serve: {team.name}",
                                       version="1", queries=QUERIES)
    return app
