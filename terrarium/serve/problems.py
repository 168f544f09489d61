"""Errors as RFC 9457 problem details: a title, a status, a sentence; never a traceback."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from starlette.responses import JSONResponse

__all__ = ["PROBLEM_TYPE", "Problem", "problem_response"]

PROBLEM_TYPE = "application/problem+json"
_TITLES = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found",
           405: "Method not allowed", 409: "Conflict", 413: "Content too large",
           415: "Unsupported media type", 422: "Unprocessable content",
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
