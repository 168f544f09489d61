"""``GET /v1/sessions/{id}/transcript/{creature}``: a creature's transcript, read from the
log in a worker thread a page of rows at a time (a session of months is never read whole
into memory, nor on the event loop), answered as a window of at most ``limit`` entries
ending before entry ``before`` (by default the newest ``TRANSCRIPT_LIMIT``: the whole
transcript of a session of ordinary length, as a loaded runtime keeps)."""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import anyio.to_thread

from terrarium.channels.log import DurableLog
from terrarium.runtime.recording import TRANSCRIPT_LIMIT
from terrarium.serve.problems import Problem

__all__ = ["TRANSCRIPT_QUERY", "read_window", "transcript_window"]

# the query parameters, as the OpenAPI schema lists them
TRANSCRIPT_QUERY = [
    {"name": "limit", "in": "query", "required": False,
     "description": f"entries at most (1 to {TRANSCRIPT_LIMIT}; default {TRANSCRIPT_LIMIT})",
     "schema": {"type": "integer", "minimum": 1, "maximum": TRANSCRIPT_LIMIT}},
    {"name": "before", "in": "query", "required": False,
     "description": "the entries before this one (0 is the first entry; default: the end); "
                    "page back with the answer's first",
     "schema": {"type": "integer", "minimum": 0}}]


def _whole(raw: str | None, field: str, low: int, high: int | None) -> int | None:
    if raw is None:
        return None
    if raw.isascii() and raw.isdigit() and len(raw) <= 20:
        n = int(raw)
        if n >= low and (high is None or n <= high):
            return n
    bound = f"from {low} to {high}" if high is not None else f"at least {low}"
    raise Problem(422, f"{field} must be a whole number {bound}, not {raw[:40]!r}",
                  slug="invalid-query", errors=[{"field": field,
                                                 "message": f"a whole number {bound}"}])


async def transcript_window(log: DurableLog, run_id: str, creature: str,
                            query: Any) -> dict[str, Any]:
    """The answer for ``query`` (the request's query parameters): 422 for a bad one."""
    limit = _whole(query.get("limit"), "limit", 1, TRANSCRIPT_LIMIT) or TRANSCRIPT_LIMIT
    before = _whole(query.get("before"), "before", 0, None)
    return await anyio.to_thread.run_sync(read_window, log, run_id, creature, limit, before)


def read_window(log: DurableLog, run_id: str, creature: str, limit: int,
                before: int | None) -> dict[str, Any]:
    """The creature's entries ``[first, end)`` with ``end`` = ``before`` (or the total)
    and at most ``limit`` of them, plus ``first`` and ``total``; only those are kept while
    the run's events are read."""
    kept: deque[dict[str, Any]] = deque(maxlen=limit)
    total = 0
    for kind, text in log.scan(run_id):
        if kind != "transcript":
            continue
        ev = json.loads(text)
        if ev.get("creature") != creature:
            continue
        if before is None or total < before:
            kept.append(ev["entry"])
        total += 1
    end = total if before is None else min(before, total)
    return {"creature": creature, "entries": list(kept), "first": end - len(kept),
            "total": total}
