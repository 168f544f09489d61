"""What a long-running server keeps per session is bounded: the numbered-events object of a
session is forgotten once the session is unloaded and no stream is open on it (and made
again from the log on its next stream or load, numbering on exactly once), and a stream
resuming past the session's last event is refused (422 naming the last), not left waiting
in silence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from terrarium.config import load_team
from terrarium.serve import ServeSettings, create_app
from tests.serve_helpers import CHAT, serving, sse_events

pytestmark = pytest.mark.anyio

SESSIONS = 12


def _app(tmp_path: Path) -> Any:
    return create_app(load_team(CHAT), ServeSettings(
        runs_dir=tmp_path / "runs", rate=1e6, warm_up=False, idle_unload=3600))


def _ended(events: list[dict[str, Any]]) -> bool:
    return sum(e["kind"] == "turn_ended" for e in events) >= 2  # the router's and the bot's


async def _unload_all(mgr: Any) -> None:
    """What the reaper does to an idle session, to every loaded one, now."""
    for live in list(mgr.loaded.values()):
        live.stop()
    with anyio.fail_after(20):
        for live in list(mgr.loaded.values()):
            await live.stopped.wait()
        while mgr.loaded:  # noqa: ASYNC110 (the host task lets go of it next)
            await anyio.sleep(0.01)
    await mgr.flush()


async def _talk(c: httpx.AsyncClient, sid: str, text: str) -> list[dict[str, Any]]:
    r = await c.post(f"/v1/sessions/{sid}/input", json={"text": text})
    assert r.status_code == 202, r.text
    return await sse_events(c, f"/v1/sessions/{sid}/events?after={r.json()['seq']}",
                            until=_ended)


async def test_streams_of_many_idle_sessions_leave_nothing_kept(tmp_path: Path) -> None:
    app = _app(tmp_path)
    mgr = app.state.manager
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=20) as c:
        sids = [(await c.post("/v1/sessions", json={})).json()["id"] for _ in range(SESSIONS)]
        for sid in sids:
            await _talk(c, sid, "My name is Ada.")
        assert len(mgr.events) == SESSIONS  # loaded: kept
        await _unload_all(mgr)
        assert mgr.events == {}  # (it was one object per session ever streamed)
        # streaming an unloaded session from the log keeps it only while the stream is open
        for sid in sids:
            whole = await sse_events(c, f"/v1/sessions/{sid}/events?after=0",
                                     until=lambda ev: ev[-1]["kind"] == "run_ended")
            assert [e["seq"] for e in whole] == list(range(1, len(whole) + 1))
        with anyio.fail_after(20):
            while mgr.events:  # noqa: ASYNC110 (the server notices each client leave)
                await anyio.sleep(0.01)
        # loaded again: the numbering goes on from the log, each event once
        sid = sids[0]
        before = await sse_events(c, f"/v1/sessions/{sid}/events?after=0",
                                  until=lambda ev: ev[-1]["kind"] == "run_ended")
        last = before[-1]["seq"]
        more = await _talk(c, sid, "What is my name?")
        assert more[0]["seq"] > last
        whole = await sse_events(c, f"/v1/sessions/{sid}/events?after=0", until=lambda ev: (
            sum(e["kind"] == "turn_ended" for e in ev) == 4))
        assert [e["seq"] for e in whole] == list(range(1, len(whole) + 1))
        assert whole[:len(before)] == before and whole[-1] == more[-1]
        resumed = await sse_events(c, f"/v1/sessions/{sid}/events",
                                   headers={"Last-Event-ID": str(last - 3)}, until=_ended)
        seqs = [e["seq"] for e in resumed]
        assert seqs == list(range(last - 2, last - 2 + len(seqs)))


async def test_an_open_stream_keeps_the_events_of_an_unloaded_session(tmp_path: Path) -> None:
    app = _app(tmp_path)
    mgr = app.state.manager
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=20) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        events = await _talk(c, sid, "hello")
        async with c.stream("GET", f"/v1/sessions/{sid}/events?after={events[-1]['seq']}"
                            ) as resp:
            lines = resp.aiter_lines()
            assert await lines.__anext__() == ": terrarium events"  # the server has it open
            await _unload_all(mgr)
            kept = mgr.events[sid]
            assert kept.streams == 1 and kept.settled
            got: dict[str, str] = {}
            with anyio.fail_after(20):
                async for line in lines:  # the unload's own events reach the open stream
                    key, _, value = line.partition(": ")
                    got[key] = value
                    if got.get("event") == "run_ended":
                        break
            assert int(got["id"]) == kept.last_seq > events[-1]["seq"]
        with anyio.fail_after(20):
            while sid in mgr.events:  # noqa: ASYNC110 (the server notices the client leave)
                await anyio.sleep(0.01)


async def _refused(url: str) -> tuple[int, dict[str, Any]]:
    with pytest.raises(InvalidStatus) as e:
        async with connect(url):
            pass
    return e.value.response.status_code, json.loads(e.value.response.body or b"{}")


def _last(mgr: Any, sid: str) -> int:
    """The seq of the session's newest event (published: it may still be committing)."""
    ev = mgr.events.get(sid)
    return int(ev.last_seq) if ev is not None else mgr.log.numbered(mgr.info(sid).run_id)[-1][0]


async def test_resuming_past_the_last_event_is_a_problem_naming_it(tmp_path: Path) -> None:
    app = _app(tmp_path)
    mgr = app.state.manager
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=20) as c:
        sid = (await c.post("/v1/sessions", json={})).json()["id"]
        fresh = await c.get(f"/v1/sessions/{sid}/events?after=1")  # a session with none yet
        assert fresh.status_code == 422 and "this session, 0" in fresh.json()["detail"]
        await _talk(c, sid, "hello")
        ws = base.replace("http", "ws")
        for loaded in (True, False):
            far = _last(mgr, sid) + 1000
            r = await c.get(f"/v1/sessions/{sid}/events?after={far}")
            body = r.json()
            assert r.status_code == 422, body
            assert body["type"] == "/problems/after-past-last"
            assert f"is {far}, past the last event of this session, {_last(mgr, sid)}:" in (
                body["detail"])
            assert body["errors"][0]["field"] == "after"
            r = await c.get(f"/v1/sessions/{sid}/events",
                            headers={"Last-Event-ID": str(10 ** 12)})
            assert r.status_code == 422
            status, body = await _refused(f"{ws}/v1/sessions/{sid}/events/ws?after={far}")
            assert status == 422 and f"this session, {_last(mgr, sid)}:" in body["detail"]
            if loaded:
                await _unload_all(mgr)
        # unloaded (nothing publishes): the last event itself is where a client that saw
        # everything resumes, and one past it is refused
        last = _last(mgr, sid)
        async with connect(f"{ws}/v1/sessions/{sid}/events/ws?after={last - 1}") as sock:
            assert json.loads(await sock.recv())["seq"] == last
        status, _ = await _refused(f"{ws}/v1/sessions/{sid}/events/ws?after={last + 1}")
        assert status == 422
        assert (await c.get(f"/v1/sessions/{sid}/events?after={last + 1}")).status_code == 422
        with anyio.fail_after(20):
            while mgr.events:  # noqa: ASYNC110 (the server notices the socket close)
                await anyio.sleep(0.01)
    # after a restart the numbering goes on from the last written event: still the bound
    app = _app(tmp_path)
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=20) as c:
        assert (await c.get(f"/v1/sessions/{sid}/events?after={last + 1}")).status_code == 422
        got = await sse_events(c, f"/v1/sessions/{sid}/events?after={last - 1}",
                               until=lambda ev: True)
        assert [e["seq"] for e in got] == [last]
        with anyio.fail_after(20):
            while app.state.manager.events:  # noqa: ASYNC110 (the client has left)
                await anyio.sleep(0.01)


async def test_a_session_audio_keeps_nothing_per_utterance() -> None:
    """It kept every utterance's time to first audio in a list nothing read: a session an
    audio socket keeps loaded for weeks grew by one per utterance."""
    from collections import deque

    from terrarium.events import SentenceSynthesized
    from terrarium.serve.audio import SessionAudio

    audio = SessionAudio()
    for i in range(500):
        audio.heard_at = 0.0
        audio.observe(i, SentenceSynthesized(creature="bot", utterance_id=str(i), index=0,
                                             text="Hello.", synth_ms=1.0, audio_seconds=1.0))
    grown = {k: len(v) for k, v in vars(audio).items()
             if isinstance(v, list | dict | set | deque) and len(v)}
    assert grown == {}
