"""``GET /openapi.json``: the schema of every route, made from the routes themselves (their
paths, methods and first docstring line) and the pydantic models of their bodies, so it
cannot drift from what the app serves (a test compares the two)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute

__all__ = ["openapi_schema"]

_PARAM = re.compile(r"{(\w+)(?::\w+)?}")


def _params(path: str) -> list[dict[str, Any]]:
    return [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
            for n in _PARAM.findall(path)]


def openapi_schema(routes: Iterable[BaseRoute], bodies: Mapping[str, type[BaseModel]],
                   *, title: str, version: str,
                   queries: Mapping[str, list[dict[str, Any]]] | None = None
                   ) -> dict[str, Any]:
    """``bodies``: endpoint name → the model of its JSON body; ``queries``: endpoint
    name → its query parameters."""
    queries = queries or {}
    paths: dict[str, dict[str, Any]] = {}
    schemas: dict[str, Any] = {}
    problem = {"description": "an error (RFC 9457 problem details)",
               "content": {"application/problem+json": {"schema": {
                   "$ref": "#/components/schemas/Problem"}}}}
    for r in routes:
        if isinstance(r, Mount) or not isinstance(r, Route | WebSocketRoute):
            continue
        path = _PARAM.sub(r"{\1}", r.path)
        doc = ((r.endpoint.__doc__ or r.name).strip().splitlines() or [r.name])[0]
        if isinstance(r, WebSocketRoute):
            paths.setdefault(path, {})["get"] = {
                "summary": doc, "operationId": r.name,
                "parameters": _params(r.path) + queries.get(r.name, []),
                "description": "WebSocket (upgrade)", "x-websocket": True,
                "responses": {"101": {"description": "switching protocols"}}}
            continue
        for method in sorted((r.methods or set()) - {"HEAD"}):
            op: dict[str, Any] = {"summary": doc, "operationId": f"{r.name}_{method.lower()}",
                                  "parameters": _params(r.path) + queries.get(r.name, []),
                                  "responses": {"default": problem,
                                                "2XX": {"description": "success"}}}
            model = bodies.get(r.name)
            if model is not None:
                schemas[model.__name__] = model.model_json_schema(
                    ref_template="#/components/schemas/{model}")
                op["requestBody"] = {"required": True, "content": {"application/json": {
                    "schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}
            paths.setdefault(path, {})[method.lower()] = op
    schemas["Problem"] = {"type": "object", "required": ["type", "title", "status", "detail"],
                          "properties": {
                              "type": {"type": "string"}, "title": {"type": "string"},
                              "status": {"type": "integer"}, "detail": {"type": "string"},
                              "errors": {"type": "array", "items": {"type": "object",
                                         "properties": {"field": {"type": "string"},
                                                        "message": {"type": "string"}}}}}}
    for s in list(schemas.values()):
        for name, sub in s.pop("$defs", {}).items():
            schemas[name] = sub
    return {"openapi": "3.1.0", "info": {"title": title, "version": version},
            "paths": paths, "components": {"schemas": schemas,
                                           "securitySchemes": {"bearer": {
                                               "type": "http", "scheme": "bearer"}}}}
