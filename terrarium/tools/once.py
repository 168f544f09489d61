"""Record-then-apply for file effects: a file tool's change happens exactly once per call,
even when the process dies between changing the file and recording the call's result.

The runner (:func:`terrarium.tools.runner.run_tool`) records a side-effecting call's result
after it ran and replays it instead of running again; that leaves one gap, a crash after
the change and before the record, in which a resumed turn would apply the change a second
time (an append appended twice, an ``edit`` with ``replace_all`` applied to its own
output). A file tool closes it by planning first: it computes the file's outcome (the whole
new text, or the bytes of an append and the offset they go to), records that plan in the
effect journal under ``<call key>#plan``, and only then touches the file. Applying a plan is
idempotent (the same text written whole; the same bytes written at the same offset), so a
call run again after a crash finds its plan and applies it again instead of planning anew.

Planning and applying happen under one lock per file (in this process): an append is
planned at the file's end, so a second append planned before the first was applied would
take the same offset and write over it. Two creatures appending to one shared file at the
same moment each land once, one after the other.
"""

from __future__ import annotations

import json
import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread

from terrarium.crashpoints import crashpoint
from terrarium.tools.base import ToolContext

__all__ = ["PLAN_SUFFIX", "Plan", "apply_once"]

PLAN_SUFFIX = "#plan"
# one lock per file being changed; the entry goes when no call holds or waits for it
_file_locks: weakref.WeakValueDictionary[str, anyio.Lock] = weakref.WeakValueDictionary()


def _lock_for(path: Path) -> anyio.Lock:
    key = os.path.realpath(path)
    lock = _file_locks.get(key)
    if lock is None:
        lock = _file_locks[key] = anyio.Lock()
    return lock

Plan = dict[str, Any]
"""A JSON-able description of the change; its ``message`` is the call's result text."""


async def apply_once(
    ctx: ToolContext, tool: str, path: Path, plan: Callable[[], Plan],
    apply: Callable[[Plan], None],
) -> str:
    """Plan (in a worker thread), record the plan, apply it; or re-apply a recorded plan;
    all under ``path``'s lock (see the module docstring).

    Without a journal or a key (no durable log, or a turn over no consumed message) there
    is nothing to resume, so the plan is applied at once without a record. A ``plan`` that
    raises (a ToolError: not found, ambiguous) records nothing and changes nothing.
    """
    async with _lock_for(path):
        return await _apply_once(ctx, tool, plan, apply)


async def _apply_once(
    ctx: ToolContext, tool: str, plan: Callable[[], Plan], apply: Callable[[Plan], None]
) -> str:
    journal, key = ctx.journal, ctx.effect_key
    if journal is None or key is None:
        planned = await anyio.to_thread.run_sync(plan)
        await anyio.to_thread.run_sync(apply, planned)
        return str(planned["message"])
    pkey = key + PLAN_SUFFIX
    crashpoint("file.plan.check")
    seen = journal.recorded(pkey)
    if seen is not None:
        planned = json.loads(seen[1])
    else:
        planned = await anyio.to_thread.run_sync(plan)
        journal.record(pkey, ctx.creature, f"{tool}{PLAN_SUFFIX}", True,
                       json.dumps(planned, ensure_ascii=False))
        crashpoint("file.planned")
    await anyio.to_thread.run_sync(apply, planned)
    crashpoint("file.applied")
    return str(planned["message"])
