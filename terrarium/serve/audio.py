"""The voice socket (being written)."""

from __future__ import annotations

from starlette.routing import WebSocketRoute


def audio_routes() -> list[WebSocketRoute]:
    return []
