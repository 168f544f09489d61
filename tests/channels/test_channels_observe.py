"""Observers: a copy of every message on a channel, without taking a queue message from
the listener it is meant for and without ever holding a sender up; and a root creature
that hears every channel (KohakuTerrarium form) observes the ones others listen to."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import anyio
import pytest

from terrarium.channels import ChannelHub, ChannelSpec, CreatureWiring, DurableLog
from terrarium.config import load_team
from terrarium.errors import ChannelRefusal, RuntimeFailure
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime


def team_hub(observer_capacity: int = 64, **kw: object) -> ChannelHub:
    specs = [ChannelSpec(name="jobs", kind="queue", capacity=64),
             ChannelSpec(name="news", kind="broadcast", capacity=observer_capacity)]
    wiring = [CreatureWiring(name="w1", listen=("jobs",)),
              CreatureWiring(name="w2", listen=("jobs",)),
              CreatureWiring(name="boss", can_send=("jobs", "news")),
              CreatureWiring(name="eye", listen=("news",), can_send=("news",))]
    return ChannelHub(specs, wiring, observers={"eye": ["jobs"]}, **kw)  # type: ignore[arg-type]


def drain(hub: ChannelHub, name: str) -> list[str]:
    out = []
    inbox = hub.subscribe(name)
    while inbox.pending():
        out.append(inbox.receive_nowait().payload["text"])
    return out


def test_an_observer_gets_copies_and_listeners_still_get_each_message_once(
        tmp_path: Path) -> None:
    async def go() -> None:
        with DurableLog(tmp_path / "log.db") as log:
            hub = team_hub(log=log)
            async with hub:
                results = [await hub.send("boss", "jobs", {"text": f"job {k}"})
                           for k in range(6)]
                assert hub.observed("eye") == ("jobs",)
                # the observer is not a receiver: not in the result, not in the log's row
                assert [r.delivered_to for r in results] == [("w1",), ("w2",)] * 3
                assert all(m[1] in (("w1",), ("w2",)) for m in log.messages(hub.run_id))
                w1, w2 = drain(hub, "w1"), drain(hub, "w2")
                assert Counter(w1 + w2) == Counter(f"job {k}" for k in range(6))
                assert drain(hub, "eye") == [f"job {k}" for k in range(6)]
                # a resumed run replays what listeners did not consume, never the copies
                assert hub.resume()["eye"] == 0

    anyio.run(go)


def test_a_slow_observer_misses_copies_but_never_holds_the_sender_up() -> None:
    async def go() -> None:
        hub = team_hub(observer_capacity=1)  # eye's inbox: 1 (news) + 64 (jobs) = 65
        async with hub:
            for k in range(70):  # listeners drained as we go; eye never reads
                await hub.send("boss", "jobs", {"text": f"job {k}"}, wait_limit=None)
                drain(hub, "w1")
                drain(hub, "w2")
            assert hub.subscribe("eye").pending() == 65
            assert hub.observer_missed == {"eye": 5}
            assert drain(hub, "eye") == [f"job {k}" for k in range(65)]

    anyio.run(go)


def test_observing_needs_a_real_channel_and_is_not_listening_twice() -> None:
    spec = ChannelSpec(name="jobs")
    wiring = [CreatureWiring(name="w", listen=("jobs",)), CreatureWiring(name="s")]
    with pytest.raises(RuntimeFailure, match="both listens to and observes"):
        ChannelHub([spec], wiring, observers={"w": ["jobs"]})
    with pytest.raises(RuntimeFailure, match="which does not exist"):
        ChannelHub([spec], wiring, observers={"s": ["jbos"]})
    with pytest.raises(RuntimeFailure, match="not a creature of this team"):
        ChannelHub([spec], wiring, observers={"ghost": ["jobs"]})


def write_team(folder: Path) -> Path:
    for name, reply in (("root", "Noted."), ("worker", "Done.")):
        (folder / name).mkdir(parents=True)
        (folder / name / "config.yaml").write_text(
            f"name: {name}\nskill_mode: static\n"
            "controller: {provider: scripted, script: script.yaml}\n", encoding="utf-8")
        (folder / name / "script.yaml").write_text(f'default_reply: "{reply}"\n',
                                                   encoding="utf-8")
    (folder / "terrarium.yaml").write_text(
        "terrarium:\n"
        "  name: overheard\n"
        "  input_channel: jobs\n"
        "  root: {base_config: ./root}\n"  # KohakuTerrarium form: the root hears everything
        "  creatures:\n"
        "    - {name: w1, config: worker, channels: {listen: [jobs]}}\n"
        "    - {name: w2, config: worker, channels: {listen: [jobs]}}\n"
        "  channels:\n"
        "    jobs: {type: queue, schema: {fields: {text: str}}}\n", encoding="utf-8")
    return folder


def test_a_root_that_hears_everything_gets_copies_of_queue_traffic(tmp_path: Path) -> None:
    team = load_team(write_team(tmp_path / "team"))
    assert team.root is not None and team.root.listen == ("jobs",)

    async def go() -> None:
        async with TeamRuntime(team, RuntimeOptions(runs_dir=tmp_path / "runs")) as rt:
            for k in range(6):
                await rt.send_user(f"job {k}")
            await rt.wait_idle()

            def heard(name: str) -> list[str]:
                return [e.text.rsplit("text: ", 1)[-1] for e in rt.transcript(name)
                        if e.kind == "message_in"]

            jobs = [f"job {k}" for k in range(6)]
            # each job went to exactly one worker, and was done once
            assert Counter(heard("w1") + heard("w2")) == Counter(jobs)
            assert rt.statuses["w1"].turns + rt.statuses["w2"].turns == 6
            # the root heard every one of them, in order, without taking any
            assert heard("root") == jobs
            assert rt.statuses["root"].turns == 6

    anyio.run(go)


@pytest.mark.parametrize("logged", [False, True], ids=["no log", "log"])
def test_send_many_gives_observers_their_copies_as_send_does(tmp_path: Path,
                                                              logged: bool) -> None:
    async def go() -> None:
        log = DurableLog(tmp_path / "log.db") if logged else None
        hub = team_hub(log=log)
        async with hub:
            await hub.send("boss", "jobs", {"text": "one"})
            got = await hub.send_many("boss", "jobs", [{"text": f"batch {k}"} for k in range(4)])
            await hub.send("boss", "jobs", {"text": "last"})
            # observers are not receivers: not in the results
            assert [r.delivered_to for r in got] == [("w2",), ("w1",)] * 2
            w1, w2 = drain(hub, "w1"), drain(hub, "w2")
            assert sorted(w1 + w2) == sorted(["one", "last", *(f"batch {k}" for k in range(4))])
            assert drain(hub, "eye") == ["one", "batch 0", "batch 1", "batch 2", "batch 3",
                                         "last"]
        if log is not None:
            log.close()

    anyio.run(go)


def test_a_refused_batch_copies_to_observers_only_what_was_delivered() -> None:
    async def go() -> None:
        specs = [ChannelSpec(name="jobs", kind="queue", capacity=2)]
        wiring = [CreatureWiring(name="w", listen=("jobs",)),
                  CreatureWiring(name="boss", can_send=("jobs",)),
                  CreatureWiring(name="eye", listen=())]
        hub = ChannelHub(specs, wiring, observers={"eye": ["jobs"]})
        async with hub:
            with pytest.raises(ChannelRefusal, match="stayed full"):
                await hub.send_many("boss", "jobs", [{"text": f"b{k}"} for k in range(4)],
                                    wait_limit=0.01)
            assert drain(hub, "w") == ["b0", "b1"]
            assert drain(hub, "eye") == ["b0", "b1"]

    anyio.run(go)
