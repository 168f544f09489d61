"""No input can stop a run: bytes that are not UTF-8, messages over a channel's max_bytes,
and a message too big for a creature's context window are refused or repaired with a
reason, and the run goes on with the next input."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from terrarium.channels.hub import ChannelHub
from terrarium.channels.log import DurableLog
from terrarium.channels.spec import ChannelSpec, CreatureWiring
from terrarium.config import load_team
from terrarium.errors import ChannelRefusal
from terrarium.events import CreatureState, Event, MessageRefused
from terrarium.runtime.runtime import LOG_FILE, RuntimeOptions, TeamRuntime

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "runtime_fixtures"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def run_cli(*args: str | bytes, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "terrarium", *args], cwd=ROOT, env=ENV, input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True, timeout=60, check=False)


def _inbox_texts(runs: Path) -> list[str]:
    with DurableLog(runs / LOG_FILE) as log:
        [run] = log.runs()
        assert run.status == "completed"
        return [e.payload["text"] for e, _ in log.messages(run.run_id) if e.channel == "inbox"]


def test_non_utf8_input_argument_is_replaced_and_said(tmp_path: Path) -> None:
    res = run_cli("run", str(FIXTURES / "trio"), "--input", b"hello \xff\xfe there",
                  "--runs-dir", str(tmp_path), "--audio", "none")
    assert res.returncode == 0, res.stderr
    assert b"--input had bytes that are not UTF-8" in res.stderr
    assert b"c> All done: greeted twice." in res.stdout
    assert _inbox_texts(tmp_path) == ["hello \ufffd\ufffd there"]


def test_non_utf8_stdin_line_is_replaced_and_said(tmp_path: Path) -> None:
    res = run_cli("run", str(FIXTURES / "trio"), "--runs-dir", str(tmp_path), "--audio", "none",
                  stdin=b"hello caf\xe9\n")
    assert res.returncode == 0, res.stderr
    assert b"stdin had bytes that are not UTF-8" in res.stderr
    assert _inbox_texts(tmp_path) == ["hello caf\ufffd"]


def test_user_input_over_max_bytes_is_refused_and_the_run_goes_on(tmp_path: Path) -> None:
    big = "hello " + "x" * 70_000  # over the default 64 KiB of the inbox
    res = run_cli("run", str(FIXTURES / "trio"), "--input", big, "--input", "hello again",
                  "--runs-dir", str(tmp_path), "--audio", "none")
    assert res.returncode == 0, res.stderr
    out = res.stdout.decode()
    assert "[refused] your input was not sent: The message is 70017 bytes; channel 'inbox' " \
           "takes at most 65536 (its max_bytes)" in out
    assert "c> All done: greeted twice." in out
    assert _inbox_texts(tmp_path) == ["hello again"]


def test_a_send_over_max_bytes_is_refused_to_the_sender(tmp_path: Path) -> None:
    async def go() -> None:
        specs = [ChannelSpec(name="work", max_bytes=1000)]
        wiring = [CreatureWiring(name="a", can_send=("work",)),
                  CreatureWiring(name="b", listen=("work",))]
        with DurableLog(tmp_path / "log.sqlite3") as log:
            async with ChannelHub(specs, wiring, log=log) as hub:
                await hub.send("a", "work", {"text": "x" * 900})
                with pytest.raises(ChannelRefusal, match="takes at most 1000"):
                    await hub.send("a", "work", {"text": "é" * 600})
                [refusal] = log.refusals(hub.run_id)
                assert refusal.sender == "a" and "max_bytes" in refusal.reason
                assert refusal.payload == {"bytes": 1211}

    anyio.run(go)


def test_send_many_refuses_a_batch_with_a_payload_over_max_bytes(tmp_path: Path) -> None:
    async def go() -> None:
        specs = [ChannelSpec(name="work", max_bytes=1000)]
        wiring = [CreatureWiring(name="a", can_send=("work",)),
                  CreatureWiring(name="b", listen=("work",))]
        with DurableLog(tmp_path / "log.sqlite3") as log:
            async with ChannelHub(specs, wiring, log=log) as hub:
                with pytest.raises(ChannelRefusal, match=r"Payload #1 is 1211 bytes.*at most 1000"):
                    await hub.send_many("a", "work", [{"text": "ok"}, {"text": "é" * 600}])
                # all or nothing: the fitting payload before it was not sent either
                assert log.messages(hub.run_id) == []
                [refusal] = log.refusals(hub.run_id)
                assert refusal.sender == "a" and "max_bytes" in refusal.reason

    anyio.run(go)


def test_send_many_with_exactly_once_ids_sends_each_id_once(tmp_path: Path) -> None:
    async def go() -> None:
        specs = [ChannelSpec(name="work")]
        wiring = [CreatureWiring(name="a", can_send=("work",)),
                  CreatureWiring(name="b", listen=("work",))]
        ids = ["00000000000000010001aaaaaaaaaa", "00000000000000010002bbbbbbbbbb"]
        with DurableLog(tmp_path / "log.sqlite3") as log:
            async with ChannelHub(specs, wiring, log=log) as hub:
                first = await hub.send_many("a", "work", [{"n": 1}, {"n": 2}], ids=ids)
                assert [r.envelope.id for r in first] == ids
                # the batch again (a turn re-run after a crash), plus one fresh payload
                again = await hub.send_many("a", "work", [{"n": 1}, {"n": 2}, {"n": 3}],
                                            ids=[*ids, None])
                assert [r.envelope.id for r in again[:2]] == ids
                assert again[2].envelope.id not in ids
                got = await hub.subscribe("b").receive_batch()
                assert [e.payload["n"] for e in got] == [1, 2, 3]
            assert [e.payload["n"] for e, _ in log.messages(hub.run_id)] == [1, 2, 3]
            with sqlite3.connect(tmp_path / "log.sqlite3") as conn:
                keys = conn.execute("SELECT id, send_key FROM messages ORDER BY id").fetchall()
            assert keys[:2] == [(i, i) for i in ids]  # one id: message id and dedupe key

    anyio.run(go)


def test_default_max_bytes_is_64_kib() -> None:
    assert ChannelSpec(name="x").max_bytes == 65536
    team = load_team(FIXTURES / "trio")
    assert team.channels["inbox"].max_bytes == 65536
    assert load_team(FIXTURES / "narrow").channels["inbox"].max_bytes == 1048576


def test_a_message_too_big_for_the_context_window_is_refused_and_the_creature_goes_on(
        tmp_path: Path) -> None:
    team = load_team(FIXTURES / "narrow")
    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=tmp_path, audio="none", on_event=events.append)

    async def go() -> TeamRuntime:
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(30):
                await rt.send_user("hello " + "word " * 40_000)
                await rt.wait_idle()
                await rt.send_user("hello again")
                await rt.wait_idle()
        return rt

    rt = anyio.run(go)
    assert [r.text for _, r in rt.results] == ["", "Hello to you."]
    assert not [e for e in events if isinstance(e, CreatureState) and e.state == "failed"]
    [refused] = [e for e in events if isinstance(e, MessageRefused)]
    assert "refused by solo: The conversation cannot fit the context window" in refused.reason
    with DurableLog(tmp_path / LOG_FILE) as log:
        assert log.run(rt.run_id).status == "completed"
        assert [r.reason for r in log.refusals(rt.run_id)] == [refused.reason]
        assert log.unconsumed(rt.run_id, "solo") == []
        assert [t.error for t in log.turns(rt.run_id)] == [None, None]
