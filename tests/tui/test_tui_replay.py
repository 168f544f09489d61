"""ReplayHandle rebuilds a recorded run from the durable log; plain-text views of the monitor."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from terrarium.config import load_team
from terrarium.controller.loop import incoming_header
from terrarium.errors import ChannelRefusal, PayloadProblem
from terrarium.events import MessageRefused, MessageSent, Missed, TranscriptEntry
from terrarium.tui import MonitorApp, ReplayHandle
from terrarium.tui.composer import build_payload, parse_json_payload
from terrarium.tui.state import MonitorState
from terrarium.tui.text import entry_title, payload_preview, topology_text
from tests.tui_fixtures.tui_recording import TEAM_DIR, Recording, record


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    return record(tmp_path_factory.mktemp("runs"))


def test_replay_rebuilds_statuses_and_transcripts(recording: Recording) -> None:
    replay = ReplayHandle(recording.log_path, recording.run_id)
    assert replay.team_note is None and replay.team.name == "tui_demo"
    assert replay.position == replay.total > 0
    for name, live in recording.statuses.items():
        got = replay.statuses[name]
        assert (got.turns, got.tokens_in, got.tokens_out, got.cached_tokens) == (
            live.turns, live.tokens_in, live.tokens_out, live.cached_tokens), name
        assert [(e.kind, e.text) for e in replay.transcript(name)] == [
            (e.kind, e.text) for e in recording.transcripts[name]]


def test_replay_cursor_steps_back_and_forth(recording: Recording) -> None:
    replay = ReplayHandle(recording.log_path, recording.run_id)
    end = replay.total
    assert replay.seek(0) == 0
    assert all(s.turns == 0 for s in replay.statuses.values())
    assert all(not replay.transcript(n) for n in replay.statuses)
    assert replay.step(-5) == 0 and replay.seek(end + 10) == end
    # traffic folded from the replayed events: sends and the refusal, in order
    state = MonitorState(replay.team)
    state.apply_all(replay.applied())
    kinds = [(r.sender, r.channel, r.refused is not None) for r in state.rows()]
    assert kinds == [("user", "user_input", False), ("greeter", "notes", False),
                     ("user", "notes", False), ("user", "notes", True)]
    assert set(replay.payloads) >= {r.message_id for r in state.rows() if r.message_id}


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_replay_refuses_to_send(recording: Recording, anyio_backend: str) -> None:
    replay = ReplayHandle(recording.log_path, recording.run_id)
    assert replay.check_payload("notes", {"topic": "x", "priority": 1})
    with pytest.raises(ChannelRefusal):
        await replay.send_user("hi")


def test_replay_degrades_when_the_terrarium_is_gone(tmp_path: Path) -> None:
    team_dir = tmp_path / "team"
    shutil.copytree(TEAM_DIR, team_dir)
    rec = record(tmp_path / "runs", team_dir)
    shutil.rmtree(team_dir)
    replay = ReplayHandle(rec.log_path, rec.run_id)
    assert replay.team_note is not None and "no longer loads" in replay.team_note
    assert sorted(replay.statuses) == ["greeter", "scribe"]
    assert replay.statuses["scribe"].turns == 2


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_replay_keys_move_the_slider(recording: Recording, anyio_backend: str) -> None:
    replay = ReplayHandle(recording.log_path, recording.run_id)
    app = MonitorApp(replay, deterministic=True)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.read_only
        await pilot.press("left_curly_bracket")
        assert replay.position == replay.total - 10
        await pilot.press("right_square_bracket")
        assert replay.position == replay.total - 9
        bar = str(app.query_one("#replay-bar").render())
        assert f"event {replay.total - 9}/{replay.total}" in bar
        for _ in range(replay.total // 10 + 1):
            await pilot.press("left_curly_bracket")
        assert replay.position == 0
        assert app.query_one("#traffic-table").row_count == 0


def test_state_counts_missed_events_and_filters() -> None:
    team = load_team(TEAM_DIR)
    state = MonitorState(team, max_traffic=3)
    state.apply(MessageSent(message_id="a", channel="notes", sender="greeter",
                            delivered_to=("scribe",)))
    ch = state.apply(Missed(count=7))
    assert ch.missed == 7 and state.missed == 7 and ch.creatures == {"greeter", "scribe"}
    state.apply(MessageRefused(sender="user", channel="user_input", reason="no"))
    assert [r.channel for r in state.rows("scribe")] == ["notes"]
    assert [r.channel for r in state.rows("user")] == ["user_input"]
    for i in range(5):
        state.apply(MessageSent(message_id=str(i), channel="notes", sender="user",
                                delivered_to=("scribe",)))
    assert len(state.rows()) == 3  # bounded


def test_topology_text_is_sorted_and_complete() -> None:
    text = topology_text(load_team(TEAM_DIR))
    assert "greeter ──▶ [notes] ──▶ scribe" in text
    assert "user ──▶ [user_input] ──▶ greeter" in text
    assert text.index("[notes]") < text.index("[user_input]")
    assert "listens: notes" in text and "sends:   notes" in text


def test_payload_helpers() -> None:
    assert payload_preview({"text": "hi\n there"}) == "hi there"
    assert payload_preview({"b": 1, "a": "x"}) == "a=x b=1"
    assert payload_preview({"text": "x" * 100}, 10) == "x" * 9 + "…"
    fields = load_team(TEAM_DIR).channels["notes"].message_type.fields  # type: ignore[union-attr]
    assert build_payload(fields, {"topic": "t", "priority": "3"}) == {"topic": "t", "priority": 3}
    assert build_payload(fields, {"topic": "t", "priority": ""}) == {"topic": "t"}
    with pytest.raises(PayloadProblem, match="priority"):
        build_payload(fields, {"topic": "t", "priority": "three"})
    with pytest.raises(PayloadProblem, match="JSON object"):
        parse_json_payload("[1]")


def test_entry_title_strips_message_framing() -> None:
    entry = TranscriptEntry(
        kind="message_in", ts=0.0, turn=2, name="notes",
        text=incoming_header("notes", "greeter") + "\n{\"topic\": \"x\"}")
    assert entry_title(entry) == '#2 in ◂ notes from greeter: {"topic": "x"}'


@pytest.mark.parametrize("status", ["completed", "timeout", "failed"])
async def test_a_replay_says_how_the_run_ended(recording: Recording, tmp_path: Path,
                                               status: str, anyio_backend: str) -> None:
    """A run stopped by --timeout (or failed) reads so in the monitor's header, not only in
    ``terrarium log``."""
    import sqlite3

    log_path = tmp_path / "log.sqlite3"
    shutil.copy(recording.log_path, log_path)
    with sqlite3.connect(log_path) as db:
        db.execute("UPDATE runs SET status = ? WHERE run_id = ?", (status, recording.run_id))
    app = MonitorApp(ReplayHandle(log_path, recording.run_id), deterministic=True)
    async with app.run_test(size=(80, 24)):
        assert app.sub_title == f"replay ({status})"
