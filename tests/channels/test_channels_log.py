"""Durable log: written before delivered, consumption, resume idempotence, timeline."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from terrarium.channels import (
    ChannelHub,
    ChannelSpec,
    CreatureWiring,
    DurableLog,
    TurnRecord,
    format_timeline,
)

pytestmark = pytest.mark.anyio


SPECS = [ChannelSpec(name="work", kind="queue"), ChannelSpec(name="news", kind="broadcast")]
WIRING = [
    CreatureWiring(name="boss", can_send=("work", "news")),
    CreatureWiring(name="w1", listen=("work", "news")),
    CreatureWiring(name="w2", listen=("work", "news")),
]


@pytest.mark.parametrize("offload", [False, True])
async def test_every_message_is_committed_before_delivery(tmp_path: Path, offload: bool) -> None:
    db = tmp_path / "log.db"
    checked: list[bool] = []
    all_in = anyio.Event()
    with DurableLog(db) as log:
        hub = ChannelHub(SPECS, WIRING, log=log, offload_log=offload)
        reader = DurableLog(db)  # a second connection only sees committed rows
        async with hub, anyio.create_task_group() as tg:

            async def worker(name: str) -> None:
                async for env in hub.subscribe(name):
                    checked.append(reader.has_message(env.id))
                    if len(checked) == 5 * (20 + 10 * 2):
                        all_in.set()

            tg.start_soon(worker, "w1")
            tg.start_soon(worker, "w2")

            async def boss(k: int) -> None:
                for i in range(30):
                    await hub.send("boss", "work" if i % 3 else "news", {"k": k, "i": i})

            async with anyio.create_task_group() as senders:
                for k in range(5):
                    senders.start_soon(boss, k)
            await all_in.wait()
            tg.cancel_scope.cancel()
        reader.close()
        assert len(checked) == 200 and all(checked)
        assert hub.writer is not None and hub.writer.commits < 150  # senders shared commits
        stored = log.messages(hub.run_id)
        assert len(stored) == 150
        news = [r for e, r in stored if e.channel == "news"]
        assert all(r == ("w1", "w2") for r in news)


async def test_unconsumed_and_resume_are_idempotent(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    with DurableLog(db) as log:
        hub = ChannelHub(SPECS, WIRING, log=log, terrarium_name="team")
        run_id = hub.run_id
        async with hub:
            sent = [(await hub.send("boss", "work", {"i": i})) for i in range(6)]
            await hub.send("boss", "news", {"i": 99})
            w1 = hub.subscribe("w1")
            first = await w1.receive()
            await hub.mark_consumed("w1", first.id)
            await hub.mark_consumed("w1", first.id)  # idempotent
        assert log.consumption_count(run_id) == 1
        assert log.mark_consumed(run_id, first.id, "w1") is False
        expect_w1 = [r.envelope.id for r in sent if r.delivered_to == ("w1",)][1:]
        expect_w2 = [r.envelope.id for r in sent if r.delivered_to == ("w2",)]
        assert len(expect_w1) == 2 and len(expect_w2) == 3
        news_id = log.messages(run_id)[-1][0].id

    # "restart": a new process opens the log and resumes the same run
    with DurableLog(db) as log:
        hub = ChannelHub(SPECS, WIRING, log=log, run_id=run_id)
        async with hub:
            assert hub.resume() == {"w1": 3, "w2": 4}
            assert hub.resume() == {"w1": 0, "w2": 0}  # no double replay
            seen: dict[str, list[str]] = {}
            for name in ("w1", "w2"):
                inbox = hub.subscribe(name)
                ids = []
                while inbox.pending():
                    env = inbox.receive_nowait()
                    ids.append(env.id)
                    await hub.mark_consumed(name, env.id)
                seen[name] = ids
            assert seen["w1"] == [*expect_w1, news_id]
            assert seen["w2"] == [*expect_w2, news_id]
        for name in ("w1", "w2"):
            assert log.unconsumed(run_id, name) == []
        # replaying once more after everything was consumed gives nothing
        hub = ChannelHub(SPECS, WIRING, log=log, run_id=run_id)
        async with hub:
            assert hub.resume() == {"w1": 0, "w2": 0}
        assert log.consumption_count(run_id) == 1 + 3 + 4


async def test_timeline_lists_messages_consumption_refusals_turns(tmp_path: Path) -> None:
    from terrarium.errors import ChannelRefusal
    from terrarium.events import ErrorEvent

    with DurableLog(tmp_path / "log.db") as log:
        hub = ChannelHub(SPECS, WIRING, log=log, terrarium_name="demo")
        async with hub:
            res = await hub.send("boss", "work", {"task": "dig"})
            await hub.mark_consumed(res.delivered_to[0], res.envelope.id)
            with pytest.raises(ChannelRefusal):
                await hub.send("w1", "work", {"task": "no"})
        now = time.time()
        log.record_turn(
            hub.run_id,
            TurnRecord(
                creature="w1",
                turn_index=0,
                prefix_hash="abc",
                prompt_tokens=10,
                cached_tokens=8,
                completion_tokens=3,
                calls=[{"name": "x"}],
                outputs={"tts": "hi"},
                started=now,
                ended=now + 0.1,
            ),
        )
        log.record_event(hub.run_id, ErrorEvent(creature="w1", message="x=1"))
        log.set_run_status(hub.run_id, "completed")
        entries = log.timeline(hub.run_id)
        assert [e.kind for e in entries] == ["message", "consumed", "refused", "turn", "error"]
        text = format_timeline(entries, log.run(hub.run_id))
        assert "demo" in text and "status completed" in text
        assert '{"task":"dig"}' in text and "may not send" in text
        assert "prompt=10 cached=8 out=3" in text
        assert log.turns(hub.run_id)[0].outputs == {"tts": "hi"}


def test_unknown_run_is_a_sentence(tmp_path: Path) -> None:
    from terrarium.errors import RuntimeFailure

    with DurableLog(tmp_path / "log.db") as log, pytest.raises(RuntimeFailure, match="no run"):
        log.timeline("nope")


async def test_send_many_logs_once_then_delivers_and_refuses_whole_batch(tmp_path: Path) -> None:
    from pydantic import BaseModel

    from terrarium.errors import ChannelRefusal

    class Job(BaseModel):
        i: int

    specs = [
        ChannelSpec(name="work", kind="queue", schema_name="job", validator=Job),
        ChannelSpec(name="news", kind="broadcast"),
    ]
    with DurableLog(tmp_path / "log.db") as log:
        hub = ChannelHub(specs, WIRING, log=log)
        async with hub:
            res = await hub.send_many("boss", "work", [{"i": i} for i in range(10)])
            assert [r.delivered_to for r in res] == [("w1",), ("w2",)] * 5
            assert hub.writer is not None and hub.writer.commits == 1
            for name in ("w1", "w2"):
                for env in await hub.subscribe(name).receive_batch():
                    assert log.has_message(env.id)
            with pytest.raises(ChannelRefusal, match=r"Payload #1 does not match"):
                await hub.send_many("boss", "work", [{"i": 1}, {"i": "x"}])
        assert len(log.messages(hub.run_id)) == 10
        assert len(log.refusals(hub.run_id)) == 1
