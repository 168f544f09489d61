"""A served team whose ``bot`` runs in ``terrarium worker --sessions`` processes, on a real
nats-server, a real ``terrarium serve --broker --remote bot`` and real worker processes:
each session's input is answered by the worker's bot, the sessions' conversations stay
apart, every event reaches a client once across reconnects, a message nobody takes is
told (``creature_waiting``), and a worker SIGKILLed in the middle of a turn is replaced by
a new one that does the turn again: it ends once, its message consumed once."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from nats_fixtures import NatsServer

from terrarium.runtime.history import newest_conversation
from tests.serve_helpers import CHAT, ROOT, ServerProcess, sse_events

CRAWL = "This reply crawls along, one word at a time, until its end."
Events = list[dict[str, Any]]
# every wait here is for an event (a session's event, a session unloaded, a worker's turn);
# the bound only ends a hung test, generous for a loaded machine, where a worker process
# takes many seconds to start and join
LOADED = 180.0


def _worker(url: str, runs: Path, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    with out.open("wb") as f:
        return subprocess.Popen(
            [sys.executable, "-m", "terrarium", "worker", str(CHAT), "--broker", url,
             "--sessions", "--creatures", "bot", "--runs-dir", str(runs), "--audio", "none"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)


@contextlib.contextmanager
def _stopped(*procs: subprocess.Popen[bytes]) -> Iterator[None]:
    try:
        yield
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)


class _Session:
    """One session's events, read in pieces: each piece is a new connection that resumes
    after the last event seen (``?after=N``), as a client that reconnects."""

    def __init__(self, client: httpx.AsyncClient, sid: str) -> None:
        self.client = client
        self.sid = sid
        self.events: Events = []

    async def say(self, text: str) -> None:
        r = await self.client.post(f"/v1/sessions/{self.sid}/input", json={"text": text})
        assert r.status_code == 202, r.text

    async def until(self, done: Callable[[Events], bool], limit: float = LOADED) -> None:
        if done(self.events):
            return
        after = self.events[-1]["seq"] if self.events else 0
        self.events += await sse_events(
            self.client, f"/v1/sessions/{self.sid}/events?after={after}",
            until=lambda new: done(self.events + new), limit=limit)


def _bot(kind: str, n: int) -> Callable[[Events], bool]:
    return lambda ev: sum(1 for e in ev if e["kind"] == kind and e["creature"] == "bot") >= n


def _replies(events: Events) -> list[str]:
    """The bot's reply of each turn it ended (its output text since its turn started)."""
    out: list[str] = []
    text = ""
    for e in events:
        if e.get("creature") != "bot":
            continue
        if e["kind"] == "turn_started":
            text = ""
        elif e["kind"] == "output_text":
            text += e["text"]
        elif e["kind"] == "turn_ended":
            out.append(text)
    return out


async def _turn_started(log: Path, n: int) -> None:
    """Until the worker logging to ``log`` has begun ``n`` turns of bot (all sessions)."""
    with anyio.fail_after(LOADED):
        while True:
            with contextlib.suppress(sqlite3.Error):
                with contextlib.closing(sqlite3.connect(log, timeout=0.1)) as db:
                    (got,) = db.execute("SELECT count(*) FROM events WHERE "
                                        "kind='turn_started' AND creature='bot'").fetchone()
                if got >= n:
                    return
            await anyio.sleep(0.02)


def _assistant(db: sqlite3.Connection, run_id: str) -> list[str]:
    conv = newest_conversation(lambda q, p: db.execute(q, p).fetchall(), run_id, "bot")
    return [c for role, c, *_ in conv if role == "assistant"]


@pytest.mark.nats
def test_sessions_answered_by_workers_and_a_killed_worker_replaced(
        nats_server: NatsServer, tmp_path: Path) -> None:
    runs = tmp_path / "serve"
    server = ServerProcess(CHAT, runs, "--broker", nats_server.url, "--remote", "bot",
                           "--ack-wait", "2", "--remote-wait", "1", "--idle-unload", "3")
    w1 = w2 = None
    ada = bob = None

    async def main() -> None:
        nonlocal w1, w2, ada, bob
        async with httpx.AsyncClient(base_url=server.base, timeout=30) as c:
            sids = [(await c.post("/v1/sessions", json={"name": n})).json()["id"]
                    for n in ("ada", "bob")]
            ada, bob = _Session(c, sids[0]), _Session(c, sids[1])
            # no worker yet: the session says so instead of staying silent
            await ada.say("My name is Ada.")
            await ada.until(_bot("creature_waiting", 1))
            w1 = _worker(nats_server.url, tmp_path / "w1", tmp_path / "w1.out")
            await ada.until(_bot("turn_ended", 1))
            await bob.say("What is my name?")
            await bob.until(_bot("turn_ended", 1))
            await ada.say("What is my name?")
            await ada.until(_bot("turn_ended", 2))
            # a 4-second turn; its worker dies in the middle of it: the turn's start is
            # read from the worker's own log (the session's events come a hop later, and
            # on a loaded machine the turn could be over by then)
            await ada.say("Please crawl.")
            await _turn_started(tmp_path / "w1" / "terrarium.sqlite3", 4)  # ada 2, bob 1
            w1.send_signal(signal.SIGKILL)
            w1.wait(10)
            w2 = _worker(nats_server.url, tmp_path / "w2", tmp_path / "w2.out")
            await ada.until(_bot("message_consumed", 3))
            # and a reader from the start gets the very same events
            again = _Session(c, ada.sid)
            await again.until(lambda ev: len(ev) >= len(ada.events))
            assert again.events[:len(ada.events)] == ada.events
            # bob's session, idle, is unloaded (its worker leaves it); an OpenAI client's
            # question loads it again, and a worker goes on from its conversation
            with anyio.fail_after(LOADED):
                loaded = (await c.get(f"/v1/sessions/{bob.sid}")).json()["loaded"]
                while loaded:
                    await anyio.sleep(0.2)
                    loaded = (await c.get(f"/v1/sessions/{bob.sid}")).json()["loaded"]
            r = await c.post("/v1/chat/completions", json={
                "model": "chat", "user": bob.sid,
                "messages": [{"role": "user", "content": "My name is Bob."}]})
            assert r.json()["choices"][0]["message"]["content"] == "Nice to meet you."
            await bob.until(_bot("message_consumed", 2))

    try:
        server.wait_ready(limit=LOADED)
        anyio.run(main)
    finally:
        with _stopped(*(p for p in (w1, w2) if p is not None)):
            err = server.stop()
    assert "Traceback" not in err, err
    assert ada is not None and bob is not None and w1 is not None and w2 is not None
    for s in (ada, bob):
        seqs = [e["seq"] for e in s.events]
        assert seqs == list(range(1, len(seqs) + 1)), seqs  # none lost, none twice
    # each input answered by the worker's bot, each session from its own conversation
    assert _replies(ada.events) == ["Nice to meet you.", "Your name is Ada.", CRAWL]
    assert _replies(bob.events) == ["I do not know your name yet.", "Nice to meet you."]
    consumed = [e["message_id"] for e in ada.events
                if e["kind"] == "message_consumed" and e["creature"] == "bot"]
    assert len(consumed) == len(set(consumed)) == 3
    said = (tmp_path / "w2.out").read_text()
    assert f"session {ada.sid}: hosting bot" in said
    assert f"session {bob.sid}: hosting bot" in said  # the new worker went on with bob's
    # the server's log holds what the workers did: each message once, consumed once, and
    # the bot's conversation of each session (the redone turn heard once)
    with contextlib.closing(sqlite3.connect(runs / "terrarium.sqlite3")) as db:
        runs_of = dict(db.execute("SELECT id, run_id FROM sessions"))
        a_run, b_run = runs_of[ada.sid], runs_of[bob.sid]
        msgs = db.execute("SELECT id, channel FROM messages WHERE run_id=? ORDER BY id",
                          (a_run,)).fetchall()
        taken = db.execute("SELECT message_id FROM consumptions WHERE run_id=?",
                           (a_run,)).fetchall()
        assert [ch for _, ch in msgs] == ["inbox", "to_bot"] * 3
        assert sorted(m for (m,) in taken) == sorted(m for m, _ in msgs)
        assert _assistant(db, a_run) == ["Nice to meet you.", "Your name is Ada.", CRAWL]
        assert _assistant(db, b_run) == ["I do not know your name yet.", "Nice to meet you."]
    # the killed worker was in the middle of the turn: it never ended it
    with contextlib.closing(sqlite3.connect(tmp_path / "w1" / "terrarium.sqlite3")) as db:
        (ended,) = db.execute("SELECT count(*) FROM events WHERE run_id=? AND "
                              "kind='turn_ended' AND creature='bot'", (a_run,)).fetchone()
    assert ended == 2 and w1.returncode == -signal.SIGKILL


def test_remote_needs_a_broker_and_a_creature_of_the_team(
        capsys: pytest.CaptureFixture[str]) -> None:
    from terrarium.cli.command import main

    assert main(["serve", str(CHAT), "--remote", "bot"]) == 1
    assert "--remote runs creatures in `terrarium worker`s" in capsys.readouterr().err
    assert main(["serve", str(CHAT), "--broker", "nats://127.0.0.1:9", "--remote",
                 "bot,nobody"]) == 1
    err = capsys.readouterr().err
    assert "there is no creature 'nobody' in 'chat'" in err and "bot, router" in err


def test_a_worker_logs_its_output_text_joined_per_batch() -> None:
    from terrarium.channels.bus import EventBus
    from terrarium.events import OutputText, TurnEnded, TurnStarted
    from terrarium.runtime.options import RuntimeOptions
    from terrarium.runtime.recording import Recorder

    batch = [TurnStarted(creature="bot", turn_index=1),
             OutputText(creature="bot", output="out", text="Nice "),
             OutputText(creature="bot", output="out", text="to meet "),
             OutputText(creature="bot", output="out", text="you."),
             TurnEnded(creature="bot", turn_index=1)]
    plain = Recorder(EventBus(), RuntimeOptions())._loggable(batch)
    assert [e.kind for e in plain] == ["turn_started", "turn_ended"]
    joined = Recorder(EventBus(), RuntimeOptions(log_output_text=True))._loggable(batch)
    assert [e.kind for e in joined] == ["turn_started", "output_text", "turn_ended"]
    assert isinstance(joined[1], OutputText) and joined[1].text == "Nice to meet you."


def test_a_joining_worker_restores_the_newest_conversation_whose_message_was_consumed(
        nats_server: NatsServer, tmp_path: Path) -> None:
    """What a worker killed between saving a turn's conversation and consuming its message
    left on the broker: the newer conversation's message is delivered again, so the one
    before it is restored (the turn is heard once, when it is done again)."""
    from types import SimpleNamespace

    from terrarium.channels.log import CONSUME_SQL, DurableLog
    from terrarium.channels.nats import NatsTransport
    from terrarium.runtime.remote import import_history
    from terrarium.runtime.sessions import HISTORY_SQL, restore_history

    def conv(*said: str) -> str:
        return json.dumps([["user", s, None, None] for s in said])

    async def go() -> SimpleNamespace:
        async with NatsTransport(nats_server.url, "r1") as t:
            await t.start()
            t.mirror([(HISTORY_SQL, [("r1", "bot", "m1", 1, conv("one"), 1.0)]),
                      (CONSUME_SQL, [("m1", "bot", "r1", 1.5)])])
            t.mirror([(HISTORY_SQL, [("r1", "bot", "m2", 2, conv("one", "two"), 2.0),
                                     ("r1", "router", "m0", 1, conv("other"), 2.0)])])
            await t.flush()
            with DurableLog(tmp_path / "worker.sqlite3") as log:
                assert await import_history(t, log, "r1", ["bot"]) == 2
                ctl = SimpleNamespace(conversation=[], turns=0)
                assert restore_history(log, "r1", "bot", ctl)  # type: ignore[arg-type]
                assert not restore_history(log, "r1", "router", SimpleNamespace())  # type: ignore[arg-type]
                return ctl

    ctl = anyio.run(go)
    assert ctl.turns == 1 and [t.content for t in ctl.conversation] == ["one"]


@pytest.mark.nats
def test_two_workers_at_once_host_each_session_once(nats_server: NatsServer,
                                                    tmp_path: Path) -> None:
    """Both workers try to join every session; the claims give each session's bot to one
    of them: every input answered once, from that session's own conversation."""
    runs = tmp_path / "serve"
    server = ServerProcess(CHAT, runs, "--broker", nats_server.url, "--remote", "bot",
                           "--ack-wait", "3")
    workers = [_worker(nats_server.url, tmp_path / f"w{i}", tmp_path / f"w{i}.out")
               for i in range(2)]
    names = ["Ada", "Bob", "Cy", "Di"]
    sessions: list[_Session] = []

    async def main() -> None:
        async with httpx.AsyncClient(base_url=server.base, timeout=30) as c:
            for n in names:
                sid = (await c.post("/v1/sessions", json={"name": n})).json()["id"]
                sessions.append(_Session(c, sid))
            for s, n in zip(sessions, names, strict=True):
                await s.say(f"My name is {n}.")
            for s in sessions:
                await s.until(_bot("message_consumed", 1), limit=90)
                await s.say("What is my name?")
            for s in sessions:
                await s.until(_bot("message_consumed", 2), limit=90)

    with _stopped(*workers):
        try:
            server.wait_ready(limit=LOADED)
            anyio.run(main)
        finally:
            err = server.stop()
    assert "Traceback" not in err, err
    said = "".join((tmp_path / f"w{i}.out").read_text() for i in range(2))
    with contextlib.closing(sqlite3.connect(runs / "terrarium.sqlite3")) as db:
        runs_of = dict(db.execute("SELECT id, run_id FROM sessions"))
        for s, n in zip(sessions, names, strict=True):
            assert said.count(f"session {s.sid}: hosting bot") == 1, said
            answer = "Your name is Ada." if n == "Ada" else "I do not know your name yet."
            assert _replies(s.events) == ["Nice to meet you.", answer]
            assert _assistant(db, runs_of[s.sid]) == ["Nice to meet you.", answer]


@pytest.mark.nats
def test_the_server_killed_and_started_again_goes_on_with_the_workers(
        nats_server: NatsServer, tmp_path: Path) -> None:
    """The server is SIGKILLed between two inputs while its worker runs on: started
    again, it reads the worker's writes from where it had got to, so the worker's earlier
    turn is not told twice, and the next input is answered from the same conversation."""
    runs = tmp_path / "serve"
    args = ("--broker", nats_server.url, "--remote", "bot", "--ack-wait", "2")
    first = ServerProcess(CHAT, runs, *args)
    worker = _worker(nats_server.url, tmp_path / "w", tmp_path / "w.out")
    seen: Events = []

    async def before(base: str) -> str:
        async with httpx.AsyncClient(base_url=base, timeout=30) as c:
            s = _Session(c, (await c.post("/v1/sessions", json={"name": "ada"})).json()["id"])
            await s.say("My name is Ada.")
            await s.until(_bot("message_consumed", 1), limit=90)
            seen.extend(s.events)
            return s.sid

    async def after(base: str, sid: str) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=30) as c:
            s = _Session(c, sid)
            s.events = list(seen)  # a client that reconnects after the last event it saw
            await s.say("What is my name?")
            await s.until(_bot("message_consumed", 2), limit=90)
            seen[:] = s.events

    with _stopped(worker):
        first.wait_ready()
        sid = anyio.run(before, first.base)
        first.kill()
        second = ServerProcess(CHAT, runs, *args)
        try:
            second.wait_ready()
            anyio.run(after, second.base, sid)
        finally:
            err = second.stop()
    assert "Traceback" not in err, err
    seqs = [e["seq"] for e in seen]
    assert seqs == list(range(1, len(seqs) + 1)), seqs
    assert _replies(seen) == ["Nice to meet you.", "Your name is Ada."]
    assert sum(1 for e in seen if e["kind"] == "turn_started" and e["creature"] == "bot") == 2


def test_a_session_worker_follows_the_runs_records() -> None:
    """Join a running session's run (only its remote creatures, only with the same config),
    leave it when it ends, and take it up again when it was loaded again meanwhile."""
    from terrarium.config import load_team
    from terrarium.runtime.distributed import team_hash
    from terrarium.runtime.options import RuntimeOptions
    from terrarium.runtime.session_workers import SessionWorker

    team = load_team(CHAT)
    started: list[tuple[Any, ...]] = []

    class Group:
        def start_soon(self, *args: Any) -> None:
            started.append(args)

    lines: list[str] = []
    w = SessionWorker(team, RuntimeOptions(broker="nats://unused"), say=lines.append)
    rec = {"run_id": "r1", "session": "s1", "status": "running", "remote": ["bot"],
           "config_hash": team_hash(team), "ack_wait": 2.0}
    w._seen(rec, None, Group())  # type: ignore[arg-type]
    w._seen(rec, None, Group())  # type: ignore[arg-type]  # the same record again: joined
    assert [(a[2], a[3], a[4]) for a in started] == [("r1", ["bot"], 2.0)]
    joined = w.joined["r1"]
    w._seen({**rec, "status": "completed"}, None, Group())  # type: ignore[arg-type]
    assert joined.stop.is_set() and not w._again(joined)
    w._seen(rec, None, Group())  # type: ignore[arg-type]  # loaded again while leaving
    assert w._again(joined) and not joined.stop.is_set() and len(started) == 1
    w._seen({**rec, "run_id": "r2", "config_hash": "other"}, None, Group())  # type: ignore[arg-type]
    w._seen({**rec, "run_id": "r3", "remote": ["router"]},  # type: ignore[arg-type]
            None, Group())
    router_only = SessionWorker(team, RuntimeOptions(), creatures=["router"])
    router_only._seen({**rec, "run_id": "r4"}, None, Group())  # type: ignore[arg-type]
    assert len(started) == 2 and started[1][2] == "r3"  # not r2 (other files), not r4
    assert lines == ["not joining session s1: its team's config hash differs from this "
                     "copy's (use the same terrarium folder)"]


def test_creature_waiting_tells_a_missing_worker_from_a_quiet_turn(tmp_path: Path) -> None:
    """A message nobody took is told after ``wait``; while the creature's worker is in a
    turn (a long tool call), only once the ack wait has passed too."""
    import time

    from terrarium.channels.envelope import Envelope, new_message_id
    from terrarium.channels.log import MESSAGE_SQL, DurableLog, message_row
    from terrarium.events import CreatureWaiting, Event
    from terrarium.runtime.remote import RemoteCreatures

    env = Envelope.trusted(new_message_id(), "to_bot", "router", "to_bot",
                           {"user_said": "hi"}, time.time() - 60)
    told: list[Event] = []
    with DurableLog(tmp_path / "log.sqlite3") as log:
        log.write_batch([(MESSAGE_SQL, [message_row("r1", env, ["bot"])])])
        rc = RemoteCreatures(None, log, "r1", ["bot"], told.append,  # type: ignore[arg-type]
                             wait=0.2, ack_wait=3600.0, team_path="chat")

        async def look() -> None:
            with anyio.move_on_after(0.6):
                await rc._watch_waiting()

        rc.in_turn.add("bot")
        anyio.run(look)
        assert told == []  # in a turn: not before the ack wait
        rc.in_turn.clear()
        anyio.run(look)
    assert len(told) == 1 and isinstance(told[0], CreatureWaiting)
    assert told[0].creature == "bot" and told[0].seconds >= 60
    said = told[0].message
    assert said.startswith("bot runs in a worker, and no worker has taken its message for")
    assert "start one: terrarium worker chat --broker URL --sessions --creatures bot" in said


def test_a_joining_worker_takes_the_appended_parts_its_conversations_reach(
        nats_server: NatsServer, tmp_path: Path) -> None:
    """Conversations saved as appended parts (runtime/history.py) on the broker: a worker
    joining takes the parts its two kept rows reach (not another process's older ones)
    and restores the newest conversation whose message was consumed, exactly."""
    from types import SimpleNamespace

    from terrarium.channels.log import CONSUME_SQL, DurableLog
    from terrarium.channels.nats import NatsTransport
    from terrarium.prompt.tail import Turn
    from terrarium.runtime.history import PART_SQL, SavedConversation, restore_history
    from terrarium.runtime.remote import import_history

    ctl = SimpleNamespace(conversation=[], turns=0)
    old = ("r1", "bot", "gone", 0, 1, '[["user","x",null,null]]')  # a dead process's
    batches: list[list[Any]] = [[(PART_SQL, [old])]]
    saved = SavedConversation()
    for i in range(4):
        ctl.conversation += [Turn("user", f"said {i}"), Turn("assistant", f"reply {i}")]
        ctl.turns += 1
        ops = saved.ops("r1", "bot", f"m{i}", ctl)  # type: ignore[arg-type]
        if i < 3:  # the last turn's consumption lost: its worker died between the two
            ops.append((CONSUME_SQL, [(f"m{i}", "bot", "r1", float(i))]))
        batches.append(ops)
        if i == 2:
            expected = [[t.role, t.content, t.name, t.tool_call_id] for t in ctl.conversation]

    async def go() -> tuple[Any, list[str]]:
        async with NatsTransport(nats_server.url, "r1") as t:
            await t.start()
            for ops in batches:
                t.mirror(ops)
            await t.flush()
            with DurableLog(tmp_path / "worker.sqlite3") as log:
                assert await import_history(t, log, "r1", ["bot"]) == 2
                back = SimpleNamespace(conversation=[], turns=0)
                assert restore_history(log, "r1", "bot", back)  # type: ignore[arg-type]
                gens = [g for (g,) in log.query("SELECT DISTINCT gen FROM history_parts", ())]
                return back, gens

    back, gens = anyio.run(go)
    assert back.turns == 3
    assert [[t.role, t.content, t.name, t.tool_call_id] for t in back.conversation] == expected
    assert gens == [saved.gen]
