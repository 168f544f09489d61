"""Sessions of one server share the team's dry start (its creatures' assembled parts and
prompt memos), and nothing of one session reaches another through it: each keeps its own
conversation and memory, and a team without memory opens no memory file at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from terrarium.config import load_team
from terrarium.serve import ServeSettings, create_app
from tests.serve_helpers import CHAT, serving, sse_events, write_echo_team

pytestmark = pytest.mark.anyio



def _said(events: list[dict[str, Any]]) -> str:
    return "".join(e["text"] for e in events if e["kind"] == "output_text")


async def _say(c: httpx.AsyncClient, sid: str, text: str, until: str) -> str:
    r = await c.post(f"/v1/sessions/{sid}/input", json={"text": text})
    assert r.status_code == 202, r.text
    events = await sse_events(c, f"/v1/sessions/{sid}/events?after={r.json()['seq']}",
                              until=lambda ev: _said(ev).endswith(until))
    return _said(events)


async def test_sessions_share_the_dry_start_and_nothing_else(tmp_path: Path) -> None:
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs"))
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=20) as c:
        ada = (await c.post("/v1/sessions", json={})).json()["id"]
        bob = (await c.post("/v1/sessions", json={})).json()["id"]
        assert await _say(c, ada, "My name is Ada.", "meet you.") == "Nice to meet you."
        # the second session is started from the first's parts, and knows nothing of Ada
        assert await _say(c, bob, "What is my name?", "yet.") == "I do not know your name yet."
        assert await _say(c, ada, "What is my name?", "Ada.") == "Your name is Ada."
        mgr = app.state.manager
        checked = mgr.checked
        assert checked is not None and set(checked.parts) == {"bot", "router"}
        for sid in (ada, bob):
            rt = mgr.loaded[sid].rt
            for name, creature in rt._creatures.items():
                assert creature.parts is checked.parts[name]  # shared, not assembled again
        a, b = (mgr.loaded[s].rt for s in (ada, bob))
        for name in ("bot", "router"):  # the per-run state is each session's own
            ca, cb = a._creatures[name], b._creatures[name]
            assert ca is not cb and ca.controller is not cb.controller
            assert ca.controller.conversation is not cb.controller.conversation
            assert ca.controller.builder is not cb.controller.builder
        assert a.memory is not b.memory and a.memory.path != b.memory.path
        assert "Ada" not in str(b._creatures["bot"].controller.conversation)


async def test_a_team_without_memory_opens_no_memory_file(tmp_path: Path) -> None:
    team = write_echo_team(tmp_path / "team")
    app = create_app(load_team(team), ServeSettings(runs_dir=tmp_path / "runs"))
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=20) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        assert await _say(c, sid, "hello", "Heard you.") == "Heard you."
        rt = app.state.manager.loaded[sid].rt
        with anyio.fail_after(10):
            while rt.busy():  # noqa: ASYNC110
                await anyio.sleep(0.02)
        assert rt.memory is not None and not rt.memory.opened
        assert not (rt.run_dir / "memory.sqlite3").exists()


async def test_a_team_with_memory_opens_it_on_first_use(tmp_path: Path) -> None:
    app = create_app(load_team(CHAT), ServeSettings(runs_dir=tmp_path / "runs"))
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=20) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        assert await _say(c, sid, "My name is Ada.", "meet you.") == "Nice to meet you."
        rt = app.state.manager.loaded[sid].rt
        assert rt.memory.opened and (rt.run_dir / "memory.sqlite3").exists()
        assert rt.memory.count() > 0
