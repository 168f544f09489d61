"""One embedded model server per team on a machine: the registry, its lock, liveness,
stale entries, processes attaching to one server, takeover when the owner exits, and the
team-wide slot layout that keeps processes sharing a server off each other's slots."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.channels.bus import EventBus
from terrarium.config import load_team
from terrarium.errors import ModelError
from terrarium.llm.server_child import CoreWatch
from terrarium.llm.shared_server import (
    SHARE_ENV,
    ServerEntry,
    ServerRecord,
    SharedEmbeddedServer,
    pid_alive,
    share_key,
)
from terrarium.llm.types import ChatMessage, ChatRequest
from terrarium.runtime.options import RuntimeOptions
from terrarium.runtime.recording import Recorder
from terrarium.runtime.wiring import (
    Wiring,
    assemble_team,
    build_hub,
    hosted,
    share_model,
    team_layout,
)
from tests.shared_server_fakes import FakeShared

TESTS = Path(__file__).resolve().parents[1]
TEAM = "team-hash-1"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF fake weights")
    return path


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return tmp_path / "servers"


def shared(registry: Path, model: Path, **kw: Any) -> FakeShared:
    kw.setdefault("slots", 3)
    kw.setdefault("team", TEAM)
    return FakeShared(registry=registry, model=model, **kw)


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def ask(client: Any) -> str:
    async def go() -> str:
        req = ChatRequest(messages=[ChatMessage(role="user", content="hi")])
        return "".join([d.text async for d in client.stream(req)])

    return anyio.run(go)


class Owner:
    """Another process of the team (tests/shared_server_fakes.py), started and read."""

    def __init__(self, registry: Path, model: Path, slots: int = 3) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(TESTS), str(TESTS.parent), os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen(
            [sys.executable, str(TESTS / "shared_server_fakes.py"), str(registry), str(model),
             TEAM, str(slots)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.info: dict[str, Any] = {}

    def line(self) -> str:
        assert self.proc.stdout is not None
        out = self.proc.stdout.readline()
        assert out, f"the process ended (status {self.proc.wait()})"
        return out.strip()

    def started(self) -> dict[str, Any]:
        if self.line() != "waiting":
            raise AssertionError("expected the process to say it is starting")
        self.info = json.loads(self.line())
        return self.info

    def stop_server(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("stop\n")
        self.proc.stdin.flush()
        assert self.line() == "stopped"

    def end(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.end()


@pytest.fixture
def owners() -> Iterator[list[Owner]]:
    made: list[Owner] = []
    yield made
    for o in made:
        if o.proc.poll() is None:
            o.kill()


# ---------------------------------------------------------------------- the registry
def test_the_key_is_the_model_file_the_layout_and_the_team(model: Path) -> None:
    key = share_key(model, "3x4096-fa", TEAM)
    assert key == share_key(model, "3x4096-fa", TEAM)
    assert len({key, share_key(model, "2x4096-fa", TEAM), share_key(model, "3x2048-fa", TEAM),
                share_key(model, "3x4096-fa", "other team")}) == 4
    model.write_bytes(b"GGUF other weights, another size")
    assert share_key(model, "3x4096-fa", TEAM) != key


def test_an_entry_is_written_whole_read_back_and_withdrawn_only_by_its_writer(
        registry: Path) -> None:
    reg = ServerRecord(registry, "k")
    assert reg.read() is None
    entry = ServerEntry(pid=os.getpid(), base_url="http://127.0.0.1:1", model="m", slots=2,
                        ctx_per_slot=4096, slot_save_dir="/tmp/p", started=1.0)
    reg.write(entry)
    assert reg.read() == entry
    assert [p.name for p in registry.iterdir()] == ["k.json"]  # no temporary left behind
    other = ServerEntry(pid=1, base_url="http://127.0.0.1:2", model="m", slots=2,
                        ctx_per_slot=4096)
    assert not reg.remove(other) and reg.read() == entry
    assert reg.remove(entry) and reg.read() is None
    reg.entry_path.write_text("{not json")
    assert reg.read() is None  # garbage is no entry


def test_the_lock_is_exclusive_and_a_wait_past_its_timeout_is_a_model_error(
        registry: Path) -> None:
    reg = ServerRecord(registry, "k")
    with reg.locked(5.0):
        with pytest.raises(ModelError, match="held the embedded server's lock") as err:
            with ServerRecord(registry, "k").locked(0.05):
                pass
        assert SHARE_ENV in (err.value.suggestion or "")
        with ServerRecord(registry, "other").locked(0.05):
            pass  # another key's lock is another lock
    with ServerRecord(registry, "k").locked(0.05):
        pass  # released


def test_a_process_is_alive_until_it_exits_and_a_zombie_is_not() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(dead_pid())
    assert not pid_alive(0)
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped
    try:
        assert not pid_alive(proc.pid)
    finally:
        proc.wait()


# ---------------------------------------------------------------------- sharing
def test_the_second_server_of_a_team_attaches_to_the_first(registry: Path,
                                                            model: Path) -> None:
    first, second = shared(registry, model), shared(registry, model)
    first.start()
    try:
        second.start()
        assert (first.attached, second.attached) == (False, True)
        assert second.base_url == first.base_url and second.owner_pid == os.getpid()
        assert (first.launches, second.launches) == (1, 0)
        assert "sharing the embedded model server of process" in second.describe_share()
        assert "started the embedded model server" in first.describe_share()
        # a creature of the second one talks to the first one's server, in its own slot
        assert ask(second.client(2)) == f"served by {os.getpid()} slot 2"
        second.stop()
        assert first.registry.read() == first.entry  # a sharer leaving withdraws nothing
    finally:
        first.stop()
    assert first.registry.read() is None  # the owner leaving withdraws its entry


def test_another_team_or_layout_gets_a_server_of_its_own(registry: Path, model: Path) -> None:
    first = shared(registry, model)
    others = [shared(registry, model, team="another team"), shared(registry, model, slots=2)]
    first.start()
    try:
        for other in others:
            other.start()
            assert not other.attached and other.base_url != first.base_url
    finally:
        for s in (first, *others):
            s.stop()


@pytest.mark.parametrize("stale", ["dead owner", "no health"])
def test_a_stale_entry_is_replaced(registry: Path, model: Path, stale: str) -> None:
    server = shared(registry, model)
    reg = server.registry
    pid = dead_pid() if stale == "dead owner" else os.getpid()
    # "no health": this process is alive but nothing listens at the advertised address
    reg.write(ServerEntry(pid=pid, base_url="http://127.0.0.1:9", model=str(model), slots=3,
                          ctx_per_slot=4096))
    server.start()
    try:
        assert not server.attached and server.launches == 1
        entry = reg.read()
        assert entry is not None and entry.pid == os.getpid()
        assert entry.base_url == server.base_url
    finally:
        server.stop()


def test_two_processes_starting_together_load_one_server(registry: Path, model: Path,
                                                         owners: list[Owner]) -> None:
    reg = SharedEmbeddedServer(team=TEAM, registry=registry, model=model, slots=3).registry
    with reg.locked(30.0):  # both start while the lock is held: both wait on it
        owners.extend([Owner(registry, model), Owner(registry, model)])
        for o in owners:
            assert o.line() == "waiting"
    infos = [json.loads(o.line()) for o in owners]
    assert sorted(i["attached"] for i in infos) == [False, True]
    assert infos[0]["url"] == infos[1]["url"]
    launcher = next(i for i in infos if not i["attached"])
    assert all(i["owner_pid"] == launcher["pid"] for i in infos)
    entry = reg.read()
    assert entry is not None and entry.pid == launcher["pid"]
    # and a third, here, attaches too
    here = shared(registry, model)
    here.start()
    try:
        assert here.attached and here.base_url == launcher["url"]
        assert ask(here.client(1)) == f"served by {launcher['pid']} slot 1"
    finally:
        here.stop()
    for o in owners:
        o.end()


# ---------------------------------------------------------------------- the owner's end
@pytest.mark.parametrize("how", ["exits", "is killed", "stops its server"])
def test_a_sharer_takes_over_when_the_owner_goes(registry: Path, model: Path,
                                                 owners: list[Owner], how: str) -> None:
    owner = Owner(registry, model)
    owners.append(owner)
    info = owner.started()
    me = shared(registry, model)
    me.start()
    try:
        assert me.attached and me.owner_pid == info["pid"]
        client = me.client(1)
        assert ask(client) == f"served by {info['pid']} slot 1"
        if how == "exits":
            owner.end()  # withdraws its entry and exits
        elif how == "is killed":
            owner.kill()  # its entry stays behind, stale
        else:
            owner.stop_server()  # alive, but its server and its entry are gone
        # the next call finds the owner gone (before the request, or when it cannot
        # connect), starts a server here and makes the call there
        assert ask(client) == f"served by {os.getpid()} slot 1"
        assert (me.attached, me.takeovers, me.launches) == (False, 1, 1)
        entry = me.registry.read()
        assert entry is not None and entry.pid == os.getpid()
        # another creature of this process follows without a second takeover
        assert ask(me.client(2)) == f"served by {os.getpid()} slot 2"
        assert me.takeovers == 1
    finally:
        me.stop()


def test_a_failed_takeover_is_a_model_error_saying_what_happened(
        registry: Path, model: Path, owners: list[Owner]) -> None:
    owner = Owner(registry, model)
    owners.append(owner)
    info = owner.started()
    me = shared(registry, model, fail=True)
    me.start()  # attaches: no launch
    client = me.client(0)
    owner.kill()
    with pytest.raises(ModelError, match=f"process {info['pid']}.*went away with its process"
                       ".*taking over failed: the fake model would not load"):
        ask(client)


# ---------------------------------------------------------------------- team-wide slots
def write_team(folder: Path) -> Path:
    """Three creatures on the embedded model; ``b`` has two embedded sub-agents."""
    for name in ("plain", "helper"):
        (folder / name).mkdir(parents=True)
        (folder / name / "config.yaml").write_text(
            f"name: {name}\nskill_mode: static\n", encoding="utf-8")
    (folder / "lead").mkdir()
    (folder / "lead" / "config.yaml").write_text(
        "name: lead\nskill_mode: static\nsubagents: {x: ../helper, y: ../helper}\n",
        encoding="utf-8")
    (folder / "terrarium.yaml").write_text(
        "terrarium:\n"
        "  name: spread\n"
        "  input_channel: work\n"
        "  creatures:\n"
        "    - {name: a, config: plain, channels: {listen: [work], can_send: [next]}}\n"
        "    - {name: b, config: lead, channels: {listen: [next], can_send: [last]}}\n"
        "    - {name: c, config: plain, channels: {listen: [last]}}\n"
        "  channels:\n"
        "    work: {type: queue}\n"
        "    next: {type: queue}\n"
        "    last: {type: queue}\n", encoding="utf-8")
    return folder


def test_the_share_default_is_on_for_a_broker_and_can_be_turned_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SHARE_ENV, raising=False)
    opts = RuntimeOptions()
    assert share_model(opts, brokered=True) and not share_model(opts, brokered=False)
    monkeypatch.setenv(SHARE_ENV, "0")
    assert not share_model(opts, brokered=True)
    monkeypatch.setenv(SHARE_ENV, "1")
    assert share_model(opts, brokered=False)
    opts.share_model = False  # --no-share-model wins over the environment
    assert not share_model(opts, brokered=True)


def test_the_layout_is_team_wide_whatever_a_process_hosts(tmp_path: Path) -> None:
    team = load_team(write_team(tmp_path / "team"))
    wiring = Wiring(RuntimeOptions(runs_dir=tmp_path), EventBus(),
                    Recorder(EventBus(), RuntimeOptions()), tmp_path, None,  # type: ignore[arg-type]
                    team=team)
    plan, slots = team_layout(team, {}, wiring._embedded_subagents, wiring._team_subagents)
    assert slots == {"a": 0, "b": 1, "c": 2}
    assert plan.total == 5 and plan.subagents == {"b": (3, 4)}


def test_processes_hosting_different_creatures_share_one_server_in_distinct_slots(
        tmp_path: Path, model: Path, registry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes' wirings (here: two wirings in one process, each hosting some of the
    team) start ONE server, with the team's slots, and pin each creature to its own."""
    team = load_team(write_team(tmp_path / "team"))
    launched: list[FakeShared] = []

    def fake_server(**kw: Any) -> FakeShared:
        server = FakeShared(registry=registry, model=model, **kw)
        launched.append(server)
        return server

    monkeypatch.setattr("terrarium.runtime.wiring.SharedEmbeddedServer", fake_server)

    async def wire(host: frozenset[str], stack: AsyncExitStack) -> dict[str, int | None]:
        opts = RuntimeOptions(runs_dir=tmp_path / "runs", host=host, share_model=True,
                              warm_up=False)
        bus = EventBus()
        rec = Recorder(bus, opts)
        creatures = hosted(assemble_team(team), opts)
        for name in creatures:
            rec.add(name, "embedded")
        hub = await stack.enter_async_context(build_hub(team, opts, None, "run1", bus))
        wiring = Wiring(opts, bus, rec, tmp_path, None, team=team)  # type: ignore[arg-type]
        await wiring.wire(creatures, hub, stack, operator=None)
        assert wiring.embedded is launched[-1]
        return {n: c.controller.slot for n, c in creatures.items() if c.controller}

    async def go() -> None:
        async with AsyncExitStack() as stack:
            first = await wire(frozenset({"c"}), stack)
            second = await wire(frozenset({"a", "b"}), stack)
            assert first == {"c": 2}
            assert second == {"a": 0, "b": 1}
            one, two = launched
            assert one.slots == two.slots == 5  # the whole team's, sub-agents included
            assert (one.attached, two.attached) == (False, True)
            assert two.base_url == one.base_url and one.launches + two.launches == 1

    anyio.run(go)


def test_a_sharer_saves_and_restores_prefixes_where_the_shared_server_keeps_them(
        tmp_path: Path, registry: Path, model: Path) -> None:
    """The server saves slots in its own folder: a sharer's prefix cache looks there (not
    in its own folder), under the same names, and its clients count as that server's."""
    owner = shared(registry, model, slot_save_dir=tmp_path / "owner-prefixes")
    sharer = shared(registry, model, slot_save_dir=tmp_path / "sharer-prefixes")
    owner.start()
    try:
        sharer.start()
        mine, theirs = sharer.prefix_cache(), owner.prefix_cache()
        assert mine is not None and theirs is not None
        assert mine.directory == theirs.directory == tmp_path / "owner-prefixes"
        assert mine.base_url == theirs.base_url
        assert mine.file_name("the prefix") == theirs.file_name("the prefix")
        # warm-up restores into a creature's slot only for models on the cache's server
        assert sharer.client(1).base_url == sharer.api_base == owner.api_base
        sharer.stop()
    finally:
        owner.stop()


# ---------------------------------------------------------------------- the core watch
def test_a_sharer_notes_itself_for_the_owner_s_core_watch_and_takes_it_back(
        registry: Path, model: Path, owners: list[Owner]) -> None:
    """The owner's model server counts a sharer's CPU (a worker's voice) as the team's,
    not as another program's that would put its threads to sleep (``CoreWatch.peers``)."""
    owner = Owner(registry, model)
    owners.append(owner)
    info = owner.started()
    me = shared(registry, model)
    me.start()
    note = registry / "peers" / str(info["pid"]) / str(os.getpid())
    try:
        assert me.attached and note.is_file()
        watch = CoreWatch(20, (info["pid"],), peers=str(registry / "peers"))
        watch.ticks()
        assert watch.own == (info["pid"], os.getpid()) and watch.regrouped
    finally:
        me.stop()
    assert not note.exists()  # detached: no longer the team's to the watch
    owner.end()
    mine = shared(registry, model)
    mine.start()  # the owner now: its folder goes when it stops
    (registry / "peers" / str(os.getpid()) / "12345").parent.mkdir(parents=True)
    (registry / "peers" / str(os.getpid()) / "12345").touch()
    mine.stop()
    assert not (registry / "peers" / str(os.getpid())).exists()
