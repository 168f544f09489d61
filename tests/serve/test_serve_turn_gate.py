"""``terrarium serve``'s turn gate (runtime/gate.py, ``ServeSettings.turns_at_once``):
sessions whose turns wait on their model all make progress, more of them than the limit;
a request is served while turns compute, with few of their steps in between. Counted in
steps and events, never in seconds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from terrarium.config import load_team
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest, StreamDelta
from terrarium.serve import ServeSettings, create_app
from tests.gate_helpers import Computing
from tests.serve_helpers import serving, write_echo_team

pytestmark = pytest.mark.anyio




@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Waiting(ScriptedModel):
    """Answers once ``expected`` turns have asked it: a turn that kept the gate while
    waiting for its model would keep the last ones from ever asking."""

    def __init__(self, expected: int) -> None:
        super().__init__(default_reply="Heard you.")
        self.expected = expected
        self.asked = 0
        self.everyone = anyio.Event()

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        self.asked += 1
        if self.asked >= self.expected:
            self.everyone.set()
        await self.everyone.wait()
        async for delta in super().stream(request):
            yield delta


@asynccontextmanager
async def served(tmp_path: Path, model: Any, turns_at_once: int
                 ) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    team = write_echo_team(tmp_path / "team", history_turns=2)
    app = create_app(load_team(team), ServeSettings(
        runs_dir=tmp_path / "runs", rate=1e6, warm_up=False, turns_at_once=turns_at_once),
        models={"echo": model})
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=60) as c:
        yield c, app.state.manager


async def _turn_ended(mgr: Any, sid: str, after: int) -> None:
    events = mgr.events_of(sid)
    while True:
        rows = await events.wait(after)
        if any(kind == "turn_ended" for _, kind, _ in rows):
            return
        after = rows[-1][0]


async def test_more_sessions_than_the_limit_all_make_progress(tmp_path: Path) -> None:
    limit = 2
    model = Waiting(expected=limit + 1)
    async with served(tmp_path, model, limit) as (c, mgr):
        assert mgr.gate is not None and mgr.gate.limit == limit
        ids = [(await c.post("/v1/sessions", json={})).json()["id"] for _ in range(limit + 1)]
        afters = []
        for sid in ids:
            r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "hello"})
            assert r.status_code == 202
            afters.append(r.json()["seq"])
        with anyio.fail_after(30):  # a hang guard: the limit + 1st turn must get to ask
            async with anyio.create_task_group() as tg:
                for sid, after in zip(ids, afters, strict=True):
                    tg.start_soon(_turn_ended, mgr, sid, after)
        assert model.asked == limit + 1
        assert mgr.gate.handoffs >= limit  # the first ones gave the gate up as they waited
        for sid in ids:
            t = (await c.get(f"/v1/sessions/{sid}/transcript/echo")).json()
            assert [e["text"] for e in t["entries"] if e["kind"] == "assistant"] == [
                "Heard you."]


async def _steps_during_a_request(tmp_path: Path, turns_at_once: int) -> int:
    """How many model steps of 6 computing turns ran while one GET was served (over a
    socket: its way in, its handling and its way out are trips round the loop)."""
    counter = [0]
    model = Computing(counter, steps=400)
    sessions = 6
    async with served(tmp_path, model, turns_at_once) as (c, mgr):
        ids = [(await c.post("/v1/sessions", json={})).json()["id"] for _ in range(sessions)]
        afters = []
        for sid in ids:
            r = await c.post(f"/v1/sessions/{sid}/input", json={"text": "hello"})
            afters.append(r.json()["seq"])
        while counter[0] < 50:  # every turn is computing (or in line to)
            await anyio.lowlevel.checkpoint()
        before = counter[0]
        r = await c.get(f"/v1/sessions/{ids[0]}")
        during = counter[0] - before
        assert r.status_code == 200
        assert counter[0] < sessions * 400  # the turns were still computing after it
        with anyio.fail_after(60):
            for sid, after in zip(ids, afters, strict=True):
                await _turn_ended(mgr, sid, after)
    return during


async def test_a_request_is_served_while_turns_compute(tmp_path: Path) -> None:
    gated = await _steps_during_a_request(tmp_path / "gated", 1)
    ungated = await _steps_during_a_request(tmp_path / "ungated", 0)
    # one turn steps per trip round the loop with the gate, every turn without it
    assert gated * 3 <= ungated, (gated, ungated)
    assert gated <= 20, gated
