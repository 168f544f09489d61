"""Saved prompt prefixes across starts: save/restore against a fake llama.cpp server, and
the warm-up that restores, evaluates, saves and reports (no model needed)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from io import StringIO
from pathlib import Path

import anyio
import httpx
import pytest

from terrarium.channels.bus import EventBus
from terrarium.cli.console import ConsolePrinter
from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller
from terrarium.events import (
    CreatureWarmed,
    CreatureWarming,
    Event,
    ModelLoaded,
    ModelLoading,
    PrefixCacheProblem,
    PrefixRestored,
    TeamReady,
)
from terrarium.llm.prefix_cache import PrefixCache, model_tag
from terrarium.llm.types import ChatRequest, StreamDelta, Usage
from terrarium.runtime.creature import RunningCreature
from terrarium.runtime.options import RuntimeOptions
from terrarium.runtime.recording import Recorder
from terrarium.runtime.warmup import WARM_KEY_TAIL, WarmUp, prefix_text

VOICE = Path(__file__).parents[1] / "runtime_fixtures" / "voice"


class FakeLlama:
    """What llama.cpp does with slots, as far as the cache can tell: each slot holds the
    text it last evaluated; ``save`` writes it to a file in ``directory``, ``restore``
    reads one back (a file that is not a saved state is refused with HTTP 400)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.slots: dict[int, str] = {}
        self.calls: list[tuple[str, int, str]] = []
        self.refuse_saves = False

    def handler(self, request: httpx.Request) -> httpx.Response:
        slot = int(request.url.path.rsplit("/", 1)[1])
        action = request.url.params["action"]
        name = json.loads(request.content)["filename"]
        self.calls.append((action, slot, name))
        path = self.directory / name
        if action == "save":
            if self.refuse_saves:
                return httpx.Response(501, json={"error": {"message": "not supported"}})
            text = self.slots.get(slot, "")
            path.write_text(json.dumps({"state": text}), encoding="utf-8")
            return httpx.Response(200, json={"id_slot": slot, "n_saved": len(text.split()),
                                             "timings": {"save_ms": 2.0}})
        try:
            text = json.loads(path.read_text(encoding="utf-8"))["state"]
        except (OSError, ValueError, KeyError):
            return httpx.Response(400, json={"error": {
                "message": "Unable to restore slot: invalid slot save file"}})
        self.slots[slot] = text
        return httpx.Response(200, json={"id_slot": slot, "n_restored": len(text.split()),
                                         "timings": {"restore_ms": 1.5}})

    def cache(self, model_file: Path) -> PrefixCache:
        return PrefixCache(self.directory, model_file, "http://fake",
                           transport=httpx.MockTransport(self.handler))


class SlotModel:
    """A llama.cpp client on ``FakeLlama``: a request whose system message is already in
    its slot evaluates one token, else all of them (one per word)."""

    name = "fake-llama"
    llama_cpp = True
    base_url = "http://fake"

    def __init__(self, server: FakeLlama) -> None:
        self.server = server
        self.last_usage: Usage | None = None

    def describe(self) -> str:
        return self.name

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        text = str(request.messages[0].content)
        n = len(text.split())
        slot = request.id_slot if request.id_slot is not None else 0
        fresh = 1 if self.server.slots.get(slot) == text else n
        self.server.slots[slot] = text
        self.last_usage = Usage(prompt_tokens=n, prompt_n=fresh, cached_tokens=n - fresh,
                                prompt_ms=float(fresh))
        yield StreamDelta(text=".")


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"gguf" * 100)
    return path


def slot_text(c: RunningCreature) -> str:
    """What the fake slot holds after ``c``'s warm-up: its system message (the empty user
    turn after it adds no words)."""
    assert c.controller is not None
    return (prefix_text(c.controller) or "").removesuffix(WARM_KEY_TAIL)


def start(server: FakeLlama, model_file: Path, tmp_path: Path
          ) -> tuple[list[Event], Recorder, RunningCreature, WarmUp]:
    """One start of a team whose only creature (the voice fixture's speaker) warms on the
    fake server, as the runtime would."""
    bus = EventBus()
    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=tmp_path, on_event=events.append)
    recorder = Recorder(bus, opts)
    recorder.add("speaker", "fake")
    parts = assemble(load_team(VOICE), "speaker")
    c = RunningCreature("speaker", parts, Controller(parts, SlotModel(server), slot=1))
    warm = WarmUp({"speaker": c}, recorder=recorder, bus=bus, started_at=0.0,
                  clock=lambda: 2.0)
    warm.cache = server.cache(model_file)
    warm.cached = lambda model: model.base_url == "http://fake"
    bus.publish = events.append  # type: ignore[method-assign]  # every event, in order
    return events, recorder, c, warm


def notices(recorder: Recorder) -> list[str]:
    return [e.text for e in recorder.transcripts["speaker"] if e.kind == "notice"]


def test_first_start_evaluates_and_saves_second_restores(tmp_path: Path,
                                                         model_file: Path) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    first = FakeLlama(cache_dir)
    events, recorder, c, warm = start(first, model_file, tmp_path)
    anyio.run(warm.creature, c)
    (warmed,) = [e for e in events if isinstance(e, CreatureWarmed)]
    assert warmed.prefix == "evaluated" and warmed.saved and warmed.tokens > 10
    assert isinstance(events[0], CreatureWarming)
    assert isinstance(events[-1], TeamReady) and events[-1].seconds == 2.0
    saved = list(cache_dir.glob("*.slot"))
    assert [p.name for p in saved] == [warm.cache.file_name(prefix_text(c.controller))]
    assert not list(cache_dir.glob("*.part"))  # written under a temporary name, then moved
    assert any(n.startswith("prompt prefix warmed: ") for n in notices(recorder))

    second = FakeLlama(cache_dir)  # a new process: its slots are empty
    events, recorder, c, warm = start(second, model_file, tmp_path)
    anyio.run(warm.creature, c)
    (restored,) = [e for e in events if isinstance(e, PrefixRestored)]
    assert restored.creature == "speaker" and restored.tokens == warmed.tokens
    (warmed2,) = [e for e in events if isinstance(e, CreatureWarmed)]
    assert warmed2.prefix == "restored" and not warmed2.saved
    assert [a for a, _, _ in second.calls] == ["restore"]  # nothing evaluated, nothing saved
    assert c.controller is not None and c.controller.model.last_usage.prompt_n == 1
    assert any(n.startswith("prompt prefix restored from cache: ") for n in notices(recorder))


def test_a_second_start_is_ready_with_the_prefix_in_its_slot_and_checks_it_after(
        tmp_path: Path, model_file: Path) -> None:
    """Ready once the saved state is in the slot; the request that checks it follows, and
    the creature's gate stays shut until it is done, so a first input waits for it."""
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    _, _, c, warm = start(FakeLlama(cache_dir), model_file, tmp_path)
    anyio.run(warm.creature, c)  # a first start: evaluated and saved
    second = FakeLlama(cache_dir)
    events, _, c, warm = start(second, model_file, tmp_path)
    assert c.controller is not None
    at_ready: list[tuple[bool, str | None]] = []

    def seen(ev: Event) -> None:
        events.append(ev)
        if isinstance(ev, TeamReady) and c.controller is not None:
            at_ready.append((c.controller.warming is not None, second.slots.get(1)))

    warm.bus.publish = seen  # type: ignore[method-assign]
    warm.hold([c])
    anyio.run(warm.run, [c])
    kinds = [type(e) for e in events]
    assert kinds.index(TeamReady) < kinds.index(PrefixRestored) < kinds.index(CreatureWarmed)
    assert at_ready == [(True, slot_text(c))]  # in its slot, the gate shut
    (warmed,) = [e for e in events if isinstance(e, CreatureWarmed)]
    assert warmed.prefix == "restored"
    assert c.controller.warming is None  # checked: the gate open
    assert c.controller.model.last_usage.prompt_n == 1  # the check found the prefix there


def test_a_corrupt_file_is_recorded_deleted_and_replaced(tmp_path: Path,
                                                         model_file: Path) -> None:
    server = FakeLlama(tmp_path)
    events, recorder, c, warm = start(server, model_file, tmp_path)
    assert warm.cache is not None and c.controller is not None
    bad = warm.cache.path(prefix_text(c.controller) or "")
    bad.write_bytes(b"\x00truncated")
    anyio.run(warm.creature, c)
    (problem,) = [e for e in events if isinstance(e, PrefixCacheProblem)]
    assert "unusable saved state" in problem.problem and "HTTP 400" in problem.problem
    (warmed,) = [e for e in events if isinstance(e, CreatureWarmed)]
    assert warmed.prefix == "evaluated" and warmed.saved
    assert json.loads(bad.read_text())["state"] == slot_text(c)  # a good one now
    assert any("prompt prefix cache: unusable" in n for n in notices(recorder))


def test_a_stale_state_that_does_not_match_is_recorded_and_saved_again(
        tmp_path: Path, model_file: Path) -> None:
    server = FakeLlama(tmp_path)
    events, _, c, warm = start(server, model_file, tmp_path)
    assert warm.cache is not None and c.controller is not None
    path = warm.cache.path(prefix_text(c.controller) or "")
    path.write_text(json.dumps({"state": "some other prompt"}), encoding="utf-8")
    anyio.run(warm.creature, c)
    (problem,) = [e for e in events if isinstance(e, PrefixCacheProblem)]
    assert "did not match" in problem.problem
    assert not [e for e in events if isinstance(e, PrefixRestored)]
    (warmed,) = [e for e in events if isinstance(e, CreatureWarmed)]
    assert warmed.prefix == "evaluated" and warmed.saved
    assert [a for a, _, _ in server.calls] == ["restore", "save"]


def test_a_server_that_cannot_save_costs_only_the_speed_up(tmp_path: Path,
                                                           model_file: Path) -> None:
    server = FakeLlama(tmp_path)
    server.refuse_saves = True
    events, _, c, warm = start(server, model_file, tmp_path)
    anyio.run(warm.creature, c)
    (problem,) = [e for e in events if isinstance(e, PrefixCacheProblem)]
    assert problem.problem.startswith("save failed") and "HTTP 501" in problem.problem
    (warmed,) = [e for e in events if isinstance(e, CreatureWarmed)]
    assert warmed.prefix == "evaluated" and not warmed.saved
    assert not list(tmp_path.glob("*.slot")) and not list(tmp_path.glob("*.part"))
    assert isinstance(events[-1], TeamReady)


def test_an_unreachable_server_is_an_outcome_not_an_error(tmp_path: Path,
                                                          model_file: Path) -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    cache = PrefixCache(tmp_path, model_file, "http://fake", transport=httpx.MockTransport(down))
    cache.path("prefix").write_text("x")
    got = anyio.run(cache.restore, 0, "prefix")
    assert not got.restored and got.problem and "connection refused" in got.problem
    saved = anyio.run(cache.save, 0, "prefix")
    assert not saved.saved and saved.problem and "connection refused" in saved.problem


def test_the_file_name_follows_the_prefix_and_the_model_file(tmp_path: Path,
                                                             model_file: Path) -> None:
    cache = PrefixCache(tmp_path, model_file, "http://x")
    assert cache.file_name("a") == cache.file_name("a") != cache.file_name("b")
    tag = model_tag(model_file)
    model_file.write_bytes(b"gguf" * 101)  # another model file under the same name
    assert model_tag(model_file) != tag
    assert PrefixCache(tmp_path, model_file, "http://x").file_name("a") != cache.file_name("a")


def test_a_server_of_another_shape_finds_no_file(tmp_path: Path, model_file: Path) -> None:
    """A state saved by a server with other slots or context does not restore (llama.cpp:
    "no available space in KV cache"), so it is not even looked for."""
    three = PrefixCache(tmp_path, model_file, "http://x", layout="3x4096")
    assert three.file_name("a") == PrefixCache(tmp_path, model_file, "http://x",
                                               layout="3x4096").file_name("a")
    assert three.file_name("a") != PrefixCache(tmp_path, model_file, "http://x",
                                               layout="1x4096").file_name("a")
    # nor one saved without flash attention into a server with it: its KV cache's values
    # are laid out otherwise
    from terrarium.llm.embedded import EmbeddedServer

    on, off = (EmbeddedServer(slots=3, ctx_per_slot=4096, flash_attention=fa).layout
               for fa in (True, False))
    assert (EmbeddedServer(slots=3, ctx_per_slot=4096).layout, on) == (on, "3x4096-fa")
    assert off == "3x4096"  # on by default since session 25
    assert PrefixCache(tmp_path, model_file, "http://x", layout=on).file_name("a") != (
        PrefixCache(tmp_path, model_file, "http://x", layout=off).file_name("a"))


def test_prune_keeps_the_most_recently_used_within_the_limit(tmp_path: Path,
                                                             model_file: Path) -> None:
    cache = PrefixCache(tmp_path, model_file, "http://x", max_bytes=250)
    for i, name in enumerate(("old", "mid", "new")):
        p = cache.path(name)
        p.write_bytes(b"k" * 100)
        os.utime(p, (1000 + i, 1000 + i))
    gone = cache.prune()
    assert gone == [cache.path("old")]
    assert cache.path("mid").exists() and cache.path("new").exists()


def test_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    from terrarium.llm.prefix_cache import prefix_cache_dir
    from terrarium.paths import cache_dir

    monkeypatch.setenv("TERRARIUM_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c" and prefix_cache_dir() == tmp_path / "c" / "prefixes"
    monkeypatch.delenv("TERRARIUM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if os.name != "nt" and os.uname().sysname == "Linux":
        assert cache_dir() == tmp_path / "xdg" / "terrarium"


def test_the_console_prints_start_up_progress() -> None:
    out = StringIO()
    printer = ConsolePrinter(out)
    for ev in (ModelLoading(model="SmolLM2", slots=2), ModelLoaded(model="SmolLM2", seconds=0.52),
               CreatureWarming(creature="router"),
               PrefixRestored(creature="router", tokens=1598, ms=11.0),
               PrefixCacheProblem(creature="speaker", problem="unusable saved state, deleted"),
               CreatureWarmed(creature="router", seconds=0.2, prefix="restored", tokens=1598),
               CreatureWarmed(creature="speaker", seconds=8.04, prefix="evaluated", tokens=345,
                              saved=True),
               TeamReady(seconds=1.04)):
        printer.progress(ev)
        printer.handle(ev)  # the bus printer leaves them to progress: no line twice
    assert out.getvalue().splitlines() == [
        "loading model SmolLM2 (2 slots)...",
        "model loaded in 0.5 s",
        "warming router...",
        "  router: prompt prefix restored from cache (1598 tokens in 11 ms)",
        "  [cache] speaker: unusable saved state, deleted",
        "  router warm in 0.2 s (prefix from cache)",
        "  speaker warm in 8.0 s (prefix evaluated, 345 tokens, saved for the next start)",
        "ready in 1.0 s",
    ]


@pytest.mark.parametrize("warm", [True, False])
def test_the_runtime_reports_each_creature_warm_then_the_team_ready(tmp_path: Path,
                                                                    warm: bool) -> None:
    from terrarium.events import RunStarted
    from terrarium.runtime.runtime import TeamRuntime
    from terrarium.voice import AudioClip, CallableSynthesizer

    def speech(text: str) -> AudioClip:
        return AudioClip(pcm=b"\x00\x00" * 1600, sample_rate=16000)

    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=tmp_path, audio="none", warm_up=warm,
                          synthesizer=CallableSynthesizer(speech, 16000),
                          on_event=events.append)

    async def go() -> None:
        async with TeamRuntime(load_team(VOICE), opts) as rt:
            with anyio.fail_after(30):
                await rt.send_user("what is the weather?")
                await rt.wait_idle()

    anyio.run(go)
    kinds = [type(e) for e in events
             if isinstance(e, RunStarted | CreatureWarming | CreatureWarmed | TeamReady)]
    if warm:
        assert kinds == [RunStarted, CreatureWarming, CreatureWarmed, TeamReady]
        (warmed,) = [e for e in events if isinstance(e, CreatureWarmed)]
        assert warmed.creature == "speaker" and warmed.prefix == "none"  # scripted: no cache
    else:
        assert kinds == [RunStarted, TeamReady]


def test_a_state_saved_by_the_warm_up_without_the_user_turn_is_not_restored(
        tmp_path: Path, model_file: Path) -> None:
    """The warm-up now evaluates an empty user turn after the system message; a state saved
    under the system message's name alone (before that) holds 2 tokens less, so it is left
    alone (no restore that the check would then find short) and the prefix is evaluated."""
    server = FakeLlama(tmp_path)
    events, _, c, warm = start(server, model_file, tmp_path)
    assert warm.cache is not None and c.controller is not None
    old = warm.cache.path(slot_text(c))
    old.write_text(json.dumps({"state": slot_text(c)}), encoding="utf-8")
    anyio.run(warm.creature, c)
    assert not [e for e in events if isinstance(e, (PrefixRestored, PrefixCacheProblem))]
    (warmed,) = [e for e in events if isinstance(e, CreatureWarmed)]
    assert warmed.prefix == "evaluated" and warmed.saved
    assert warm.cache.path(prefix_text(c.controller) or "").is_file()
