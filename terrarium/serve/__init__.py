"""``terrarium serve``: one team, many sessions, over HTTP and WebSocket (DESIGN.md §12).

    settings   ServeSettings: what the command line sets
    events     numbered, durable session events (SSE / WebSocket resume by seq)
    live       LiveSession: one loaded session's runtime, approvals and questions
    manager    SessionManager: load on input, unload when idle, the shared model server
    problems   RFC 9457 problem details (never a traceback)
    security   bearer token, body limits, CORS
    routes     the /v1 session API; openai: /v1/chat/completions and /v1/models
    audio      the voice socket; metrics: Prometheus text; openapi: the schema
    app        create_app: the Starlette app, its lifespan running the manager

A front end over the runtime like the monitor: it imports the runtime, never the CLI.
"""

from __future__ import annotations

from terrarium.serve.app import create_app
from terrarium.serve.settings import ServeSettings

__all__ = ["ServeSettings", "create_app"]
