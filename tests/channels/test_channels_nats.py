"""Channels on a real NATS JetStream server (tests/nats_fixtures.py starts one per test).

Fast ones drive hubs and runtimes in this process; the ``nats``-marked ones start worker
processes (``terrarium worker``) and kill them with SIGKILL in the middle of a turn.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from terrarium.channels.hub import ChannelHub
from terrarium.channels.log import DurableLog
from terrarium.channels.nats import NatsTransport, connect_broker, materialize_log
from terrarium.channels.nats.naming import QUEUE_CONSUMER, channel_stream
from terrarium.channels.spec import ChannelSpec, wiring_from_mapping
from terrarium.cli.command import main
from terrarium.config import load_team
from terrarium.errors import ChannelRefusal, RuntimeFailure
from terrarium.runtime.runtime import LOG_FILE, RuntimeOptions, TeamRuntime
from tests.nats_fixtures import NATS_SERVER, NatsServer

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "runtime_fixtures"



class Note(BaseModel):
    text: str


def _hub(url: str, run_id: str, log: DurableLog | None = None,
         **wiring: tuple[list[str], list[str]]) -> tuple[ChannelHub, NatsTransport]:
    specs = [ChannelSpec(name="news", kind="broadcast", schema_name="note", validator=Note),
             ChannelSpec(name="jobs", kind="queue", schema_name="note", validator=Note)]
    transport = NatsTransport(url, run_id, ack_wait=5.0)
    hub = ChannelHub(specs, wiring_from_mapping(wiring), transport=transport, log=log,
                     run_id=run_id)
    return hub, transport


async def _take(hub: ChannelHub, creature: str, wait: float = 0.5) -> list[Any]:
    """Everything ``creature`` receives within ``wait`` seconds, each acked."""
    out = []
    inbox = hub.subscribe(creature)
    with anyio.move_on_after(wait):
        while True:
            env = await inbox.receive()
            out.append(env)
            await hub.mark_consumed(creature, env.id)
    return out


def test_broadcast_reaches_every_listener_but_the_sender(nats_server: NatsServer) -> None:
    async def go() -> None:
        hub, transport = _hub(nats_server.url, "rb1", x=(["news"], ["news"]),
                              y=(["news"], []), z=(["news"], []))
        async with transport, hub:
            await transport.start()
            res = await hub.send("x", "news", {"text": "hello all"})
            assert res.delivered_to == ("y", "z")
            got = {c: await _take(hub, c) for c in ("x", "y", "z")}
        assert [e.payload for e in got["y"]] == [{"text": "hello all"}]
        assert [e.payload for e in got["z"]] == [{"text": "hello all"}]
        assert got["x"] == []  # the sender hears nothing of its own
        assert got["y"][0].id == got["z"][0].id == res.envelope.id

    anyio.run(go)


def test_queue_gives_each_message_to_exactly_one_listener(nats_server: NatsServer) -> None:
    async def go() -> None:
        hub, transport = _hub(nats_server.url, "rq1", boss=([], ["jobs"]),
                              a=(["jobs"], []), b=(["jobs"], []))
        async with transport, hub:
            await transport.start()
            sent = [(await hub.send("boss", "jobs", {"text": f"job {i}"})).envelope.id
                    for i in range(20)]
            got: dict[str, list[Any]] = {"a": [], "b": []}
            all_in = anyio.Event()

            async def drain(c: str) -> None:
                inbox = hub.subscribe(c)
                while True:
                    env = await inbox.receive()
                    got[c].append(env)
                    await hub.mark_consumed(c, env.id)
                    if len(got["a"]) + len(got["b"]) >= len(sent):
                        all_in.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(drain, "a")
                tg.start_soon(drain, "b")
                with anyio.fail_after(LOADED):  # every one, however loaded the machine
                    await all_in.wait()
                await anyio.sleep(0.5)  # then room for a duplicate to show
                tg.cancel_scope.cancel()
        ids = [e.id for e in got["a"] + got["b"]]
        assert sorted(ids) == sorted(sent)  # every one, once
        assert got["a"] and got["b"]  # shared

    anyio.run(go)


def test_a_silent_listener_finds_its_message_taken_over(nats_server: NatsServer) -> None:
    """Two processes' listeners on one queue: the one that takes a message and falls silent
    (its heartbeat stopped, as in a stalled process) sees it as taken over once the other
    got it from the broker; the other, heartbeating, does not."""
    specs = [ChannelSpec(name="jobs", kind="queue", schema_name="note", validator=Note)]
    wiring = wiring_from_mapping({"boss": ([], ["jobs"]), "a": (["jobs"], [])})

    async def silent() -> None:
        await anyio.sleep_forever()

    async def go() -> None:
        ta, tb = (NatsTransport(nats_server.url, "rs1", ack_wait=1.0) for _ in range(2))
        hub_a = ChannelHub(specs, wiring, transport=ta, run_id="rs1")
        hub_b = ChannelHub(specs, wiring, transport=tb, run_id="rs1")
        async with ta, tb, hub_a, hub_b:
            await ta.start()
            await tb.start()
            ta.inbox("a")._heartbeat = silent  # type: ignore[attr-defined]
            sent = (await hub_a.send("boss", "jobs", {"text": "one"})).envelope.id
            with anyio.fail_after(LOADED):
                assert (await hub_a.subscribe("a").receive()).id == sent
                assert not hub_a.taken_over("a", sent)
                assert (await hub_b.subscribe("a").receive()).id == sent  # handed on
                while not hub_a.taken_over("a", sent):  # noqa: ASYNC110 (a clock, no event)
                    await anyio.sleep(0.02)
            assert not hub_b.taken_over("a", sent)
            await hub_a.let_go("a", sent)
            assert ta.inbox("a").held == {}  # type: ignore[attr-defined]
            # a copy handed out again is checked against the stream: there until acked
            rb = tb.inbox("a")
            again = rb.held[sent]  # type: ignore[attr-defined]
            stream = channel_stream("rs1", "jobs")
            assert again.metadata.num_delivered >= 2
            assert not await rb._acked_elsewhere(again, stream)  # type: ignore[attr-defined]
            await hub_b.mark_consumed("a", sent)
            await tb.flush()
            with anyio.fail_after(LOADED):  # the ack reaches the broker a moment later
                while not await rb._acked_elsewhere(again, stream):  # type: ignore  # noqa: ASYNC110
                    await anyio.sleep(0.02)

    anyio.run(go)


def test_refusals_are_recorded_and_nothing_is_published(nats_server: NatsServer,
                                                         tmp_path: Path) -> None:
    async def go() -> None:
        log = DurableLog(tmp_path / "log.sqlite3")
        run_id = log.start_run("t")
        hub, transport = _hub(nats_server.url, run_id, log, x=(["news"], ["news"]),
                              y=(["news"], []), boss=([], ["jobs"]), a=(["jobs"], []))
        async with transport, hub:
            await transport.start()
            log.on_write = transport.mirror
            with pytest.raises(ChannelRefusal, match="does not match the schema"):
                await hub.send("x", "news", {"txt": "typo"})
            with pytest.raises(ChannelRefusal, match="may not send"):
                await hub.send("y", "news", {"text": "not allowed"})
            with pytest.raises(ChannelRefusal, match="does not exist"):
                await hub.send("x", "newz", {"text": "no such channel"})
            info = await transport.js.stream_info(channel_stream(run_id, "news"))
            assert info.state.messages == 0
            await transport.flush()
            merged = tmp_path / "merged.sqlite3"
            await materialize_log(transport.js, run_id, merged)
        local = [r.reason for r in log.refusals(run_id)]
        assert len(local) == 3
        with DurableLog(merged) as remote:  # the broker's copy of the log has them too
            assert [r.reason for r in remote.refusals(run_id)] == local

    anyio.run(go)


def test_a_republished_message_is_deduplicated(nats_server: NatsServer) -> None:
    async def go() -> None:
        hub, transport = _hub(nats_server.url, "rd1", boss=([], ["jobs"]), a=(["jobs"], []))
        async with transport, hub:
            await transport.start()
            for _ in range(3):  # the same send, three times (a turn re-run elsewhere)
                await hub.send("boss", "jobs", {"text": "once"}, message_id="m" * 30)
            got = await _take(hub, "a")
        assert [e.id for e in got] == ["m" * 30]

    anyio.run(go)


def test_a_resumed_run_gets_each_unconsumed_message_once(nats_server: NatsServer,
                                                         tmp_path: Path) -> None:
    """A run stops mid-way (nothing acked after it): two messages consumed, two held
    unacked by its listener, one never taken and then lost by the broker. Resumed, the
    broker redelivers what it still has and the log replays only the lost one: each
    unconsumed message once, the consumed ones never."""
    ack_wait = 1.0

    async def go() -> None:
        with DurableLog(tmp_path / "log.sqlite3") as log:
            await _stop_and_resume(log)

    async def _stop_and_resume(log: DurableLog) -> None:
        run_id = log.start_run("t")
        wiring = {"boss": ([], ["jobs"]), "a": (["jobs"], [])}
        hub, transport = _hub(nats_server.url, run_id, log, **wiring)
        transport.ack_wait = ack_wait
        stream = channel_stream(run_id, "jobs")
        async with transport, hub:
            await transport.start()
            sent = [(await hub.send("boss", "jobs", {"text": f"job {i}"})).envelope.id
                    for i in range(5)]
            inbox = hub.subscribe("a")
            for _ in range(2):
                await hub.mark_consumed("a", (await inbox.receive()).id)
            assert (await inbox.receive()).id == sent[2]  # taken, its turn cut off
            await transport.flush()
            with anyio.fail_after(60):  # the two acks reached the broker
                while (await transport.js.consumer_info(stream, QUEUE_CONSUMER)  # noqa: ASYNC110
                       ).ack_floor.stream_seq < 2:  # (the broker's state, polled)
                    await anyio.sleep(0.02)
            # the broker loses the last one (never taken): only the log has it now
            assert await transport.js.delete_msg(stream, 5)
        hub, transport = _hub(nats_server.url, run_id, log, **wiring)
        transport.ack_wait = ack_wait
        got: list[str] = []
        async with transport, hub:
            await transport.start()
            kept = await transport.kept_ids()
            assert kept == set(sent[2:4])  # held by the stopped run, or next in line
            assert hub.resume(kept) == {"a": 1}
            inbox = hub.subscribe("a")
            with anyio.fail_after(60):  # the held ones come back once ack_wait passed
                while len(got) < 3:
                    env = await inbox.receive()
                    got.append(env.id)
                    await hub.mark_consumed("a", env.id)
                await transport.flush()
                # nothing left anywhere that could come a second time
                info = await transport.js.consumer_info(stream, QUEUE_CONSUMER)
                while info.num_ack_pending or info.num_pending:
                    await anyio.sleep(0.05)
                    info = await transport.js.consumer_info(stream, QUEUE_CONSUMER)
            assert inbox.pending() == 0
        assert got[0] == sent[4]  # the replayed one first, then the broker's
        assert sorted(got[1:]) == sorted(sent[2:4])
        assert log.unconsumed(run_id, "a") == []

    anyio.run(go)


def test_run_on_the_broker_in_one_process(nats_server: NatsServer, tmp_path: Path) -> None:
    """The relay team with transport nats: same results as in memory, log on the broker."""
    team = load_team(FIXTURES / "relay")
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", broker=nats_server.url)

    async def go() -> TeamRuntime:
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(20):
                await rt.send_user("ping")
                await rt.wait_idle()
        return rt

    rt = anyio.run(go)
    assert [r.text for _, r in rt.results][-1] == "c heard pong-42."
    assert main(["log", "--broker", nats_server.url, rt.run_id]) == 0


def test_transport_nats_without_a_broker_is_a_sentence(tmp_path: Path) -> None:
    team = load_team(FIXTURES / "relay")
    team.transport = "nats"
    os.environ.pop("TERRARIUM_BROKER", None)

    async def go() -> None:
        async with TeamRuntime(team, RuntimeOptions(runs_dir=tmp_path, audio="none")):
            pass

    with pytest.raises(RuntimeFailure, match="no broker was given"):
        anyio.run(go)


# ---------------------------------------------------------------------- worker processes
# every wait below is for an event (a run on the broker, a turn begun, the team idle, a
# worker's exit); the bound only ends a hung test, generous for a loaded machine where a
# worker process takes many seconds just to import and join
LOADED = 180

def _worker(url: str, path: Path, runs: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "terrarium", "worker", str(path), "--broker", url,
         "--runs-dir", str(runs), "--audio", "none", "--wait", str(LOADED), *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _turns_here(out: str) -> int:
    for line in out.splitlines():
        if "turn(s) here" in line:
            return int(line.split(";")[1].split()[0])
    return -1


async def _first_turn_started(logs: list[Path]) -> int:
    """Wait until one of the workers logging to ``logs`` has begun a turn; which one."""
    with anyio.fail_after(LOADED):
        while True:
            for i, log in enumerate(logs):
                if not os.path.exists(log):  # noqa: ASYNC240 (a poll of a few ms)
                    continue
                with contextlib.suppress(sqlite3.Error):
                    with contextlib.closing(sqlite3.connect(log, timeout=0.1)) as db:
                        n = db.execute("SELECT count(*) FROM events WHERE kind='turn_started'"
                                       ).fetchone()[0]
                    if n:
                        return i
            await anyio.sleep(0.02)


async def _turns_settled(log: Path) -> None:
    """Wait until every turn the worker logging to ``log`` began has its record."""
    with anyio.fail_after(LOADED):
        while True:
            with contextlib.suppress(sqlite3.Error):
                with contextlib.closing(sqlite3.connect(log, timeout=0.1)) as db:
                    begun = db.execute("SELECT count(*) FROM events WHERE kind='turn_started'"
                                       ).fetchone()[0]
                    ended = db.execute("SELECT count(*) FROM turns").fetchone()[0]
                if begun and ended >= begun:
                    return
            await anyio.sleep(0.05)


async def _pool_run(url: str, tmp: Path, workers: int, jobs: int, *,
                    kill_after: float | None = None, freeze: bool = False,
                    pool: Path = FIXTURES / "pool") -> dict[str, Any]:
    """A pool run: this process hosts ``sink``, worker processes host ``w``. ``freeze``:
    the first worker to begin a turn is stopped (SIGSTOP) until the others finished the
    run, then let go on, and the run ends once its turn has ended."""
    team = load_team(pool)
    procs = [_worker(url, pool, tmp / f"w{i}", "--creatures", "w") for i in range(workers)]
    opts = RuntimeOptions(runs_dir=tmp / "run", audio="none", broker=url,
                          host=frozenset({"sink"}), ack_wait=1.0, warm_up=False)
    killed = None
    try:
        async with TeamRuntime(team, opts) as rt:
            sent = [(await rt.hub.send("user", "jobs", {"text": f"job {i}"})).envelope.id
                    for i in range(jobs)] if rt.hub else []
            if kill_after is not None:
                busy = await _first_turn_started([tmp / f"w{i}" / LOG_FILE
                                                  for i in range(workers)])
                await anyio.sleep(kill_after)
                killed = procs[busy]
                killed.send_signal(signal.SIGKILL)  # in the middle of a 0.3 s turn
            if freeze:
                busy = await _first_turn_started([tmp / f"w{i}" / LOG_FILE
                                                  for i in range(workers)])
                killed = procs[busy]
                killed.send_signal(signal.SIGSTOP)  # silent in its turn: the broker hands on
            with anyio.fail_after(LOADED):
                await rt.wait_idle()
            if freeze:  # the others did everything; the frozen one wakes up in its turn
                killed.send_signal(signal.SIGCONT)
                await _turns_settled(tmp / f"w{busy}" / LOG_FILE)
                with anyio.fail_after(LOADED):
                    await rt.wait_idle()
            assert rt.transport is not None
            info = await rt.transport.js.consumer_info(channel_stream(rt.run_id, "jobs"),
                                                      QUEUE_CONSUMER)
            merged = tmp / "merged.sqlite3"
            await rt.transport.flush()
            await materialize_log(rt.transport.js, rt.run_id, merged)
        outs = []
        for p in procs:
            out, _ = p.communicate(timeout=LOADED)
            outs.append(out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    with DurableLog(tmp / "run" / LOG_FILE) as log:
        sink_ids = [e.id for e, _ in log.messages(rt.run_id)]
        consumed = log.consumed_ids(rt.run_id, "sink")
    return {"rt": rt, "sent": sent, "outs": outs, "killed": killed, "procs": procs,
            "delivered": info.delivered, "merged": merged, "sink_ids": sink_ids,
            "consumed": consumed}


def _check_exactly_once(r: dict[str, Any]) -> None:
    rt, sent = r["rt"], r["sent"]
    sink_turns = rt.statuses["sink"].turns
    assert sink_turns == len(sent), f"sink ran {sink_turns} turns for {len(sent)} jobs"
    with DurableLog(r["merged"]) as merged:
        done = [e.id for e, _ in merged.messages(rt.run_id) if e.channel == "done"]
        jobs_consumed = {m for m in sent if merged.has_message(m)}
        assert len(done) == len(set(done)) == len(sent)  # each effect stored once
        assert jobs_consumed == set(sent)
    # each job's one send, under its exactly-once id (the job's time prefix plus rank 1)
    assert sorted(d[:16] for d in done) == sorted(f"{int(j[:16], 16) + 1:016x}" for j in sent)
    assert r["consumed"] == set(done)  # 0 lost, and no effect under a second id


@pytest.mark.nats
def test_queue_exactly_once_across_three_worker_processes(nats_server: NatsServer,
                                                          tmp_path: Path) -> None:
    r = anyio.run(_pool_run, nats_server.url, tmp_path, 3, 30)
    _check_exactly_once(r)
    per_worker = [_turns_here(o) for o in r["outs"]]
    assert sum(per_worker) == 30, r["outs"]
    assert sum(1 for n in per_worker if n > 0) >= 2, per_worker  # the load is shared


@pytest.mark.nats
def test_a_worker_frozen_past_the_ack_wait_does_not_count_its_turn(
        nats_server: NatsServer, tmp_path: Path) -> None:
    """A worker stalled in its turn (SIGSTOP: a starved CPU, a paused VM) past the ack wait
    loses its message to another worker; woken, it drops that turn instead of finishing it
    as a second one (what made the three-worker test count 31 turns for 30 jobs once)."""
    pool = tmp_path / "pool"
    shutil.copytree(FIXTURES / "pool", pool)
    (pool / "w" / "script.yaml").write_text(  # a long turn: frozen in it, surely
        'steps:\n  - {reply: "job done.", delay: 2.0, repeat: true}\n')
    r = anyio.run(functools.partial(_pool_run, nats_server.url, tmp_path, 2, 3,
                                    freeze=True, pool=pool))
    _check_exactly_once(r)
    assert r["delivered"].consumer_seq > 3  # what the frozen worker held was handed on
    per_worker = [_turns_here(o) for o in r["outs"]]
    assert sum(per_worker) == 3, r["outs"]  # no job's turn counted twice
    frozen = r["procs"].index(r["killed"])
    with DurableLog(tmp_path / f"w{frozen}" / LOG_FILE) as log:
        dropped = log.query("SELECT count(*) FROM turns WHERE error='taken over'")
    assert dropped[0][0] >= 1


@pytest.mark.nats
def test_sigkill_mid_turn_loses_and_duplicates_nothing(nats_server: NatsServer,
                                                       tmp_path: Path) -> None:
    rng = random.Random(16)
    trials = 10
    for trial in range(trials):
        tmp = tmp_path / f"t{trial}"
        tmp.mkdir()
        # killed within its first 0.3 s turn (or the next one, which starts right after)
        r = anyio.run(functools.partial(_pool_run, nats_server.url, tmp, 2, 4,
                                        kill_after=rng.uniform(0.0, 0.25)))
        _check_exactly_once(r)
        assert r["delivered"].consumer_seq > 4  # what the killed worker held was redelivered
        survivor = sum(_turns_here(o) for o, p in zip(r["outs"], r["procs"], strict=True)
                       if p is not r["killed"])
        assert survivor >= 1, r["outs"]  # the other worker finished the run
        assert r["killed"].returncode == -signal.SIGKILL


def test_worker_refuses_a_team_whose_config_differs(nats_server: NatsServer,
                                                    tmp_path: Path) -> None:
    changed = tmp_path / "pool"
    shutil.copytree(FIXTURES / "pool", changed)
    (changed / "w" / "script.yaml").write_text(
        'steps:\n  - {reply: "something else", repeat: true}\n')
    team = load_team(FIXTURES / "pool")
    opts = RuntimeOptions(runs_dir=tmp_path / "run", audio="none", broker=nats_server.url,
                          host=frozenset({"sink"}))

    async def go() -> str:
        async with TeamRuntime(team, opts) as rt:
            proc = await anyio.run_process(
                [sys.executable, "-m", "terrarium", "worker", str(changed), "--broker",
                 nats_server.url, "--runs-dir", str(tmp_path / "w"), "--run", rt.run_id],
                env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
            assert proc.returncode == 1
            return proc.stderr.decode()

    err = anyio.run(go)
    assert "refusing to join run" in err and "config hash" in err


def test_credentials_come_from_the_environment() -> None:
    from terrarium.channels.nats import connect_options

    opts = connect_options("tls://broker.example:4222", {
        "TERRARIUM_NATS_USER": "ann", "TERRARIUM_NATS_PASSWORD": "s3cret",
        "TERRARIUM_NATS_CREDS": "/etc/terrarium/user.creds"})
    assert opts["servers"] == ["tls://broker.example:4222"]
    assert (opts["user"], opts["password"]) == ("ann", "s3cret")
    assert opts["user_credentials"] == "/etc/terrarium/user.creds"
    assert opts["tls"] is not None  # tls:// means TLS
    assert connect_options("nats://h:1", {"TERRARIUM_NATS_TOKEN": "t"})["token"] == "t"
    with pytest.raises(RuntimeFailure, match="not a nats:// or tls://"):
        connect_options("http://h:1", {})


def test_token_authentication_on_a_real_server(tmp_path: Path) -> None:
    if NATS_SERVER is None:
        pytest.skip("nats-server is not installed (apt-get install nats-server)")
    server = NatsServer(tmp_path / "js", "--auth", "tok-16")
    try:
        async def go(env: dict[str, str]) -> None:
            nc = await connect_broker(server.url, env=env, deadline=2.0)
            await nc.close()

        anyio.run(go, {"TERRARIUM_NATS_TOKEN": "tok-16"})
        with pytest.raises(RuntimeFailure, match=r"could not connect.*[Aa]uthoriz"):
            anyio.run(go, {})
    finally:
        server.stop()


def test_a_broker_gone_for_good_ends_the_run_with_a_sentence(nats_server: NatsServer,
                                                             tmp_path: Path) -> None:
    """The broker stops mid-run and does not come back: after ``broker_give_up`` seconds
    the run ends with one sentence, not a silent wait for --timeout."""
    team = load_team(FIXTURES / "relay")
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", broker=nats_server.url,
                          broker_give_up=1.0)

    async def go() -> None:
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(20):
                await rt.send_user("ping")
                await rt.wait_idle()
                nats_server.stop()
                await anyio.sleep_forever()  # what a run with nothing to do does

    with pytest.raises(BaseException) as caught:
        anyio.run(go)
    def leaves(exc: BaseException) -> list[BaseException]:
        if isinstance(exc, BaseExceptionGroup):
            return [leaf for e in exc.exceptions for leaf in leaves(e)]
        return [exc]

    failures = [e for e in leaves(caught.value) if isinstance(e, RuntimeFailure)]
    assert failures, caught.value
    assert failures[0].message == (f"lost the NATS broker at {nats_server.url} and could not "
                                   "reconnect for 1 s; giving up")
