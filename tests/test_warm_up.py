"""Warm-up: prompt prefixes and voices are made ready before the first utterance."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest, StreamDelta, Usage
from terrarium.prompt.tail import TailState
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.voice import AudioClip, CallableSynthesizer

VOICE = Path(__file__).parent / "runtime_fixtures" / "voice"
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


def test_warm_prefix_sends_the_prefix_alone_to_the_creature_slot() -> None:
    parts = assemble(load_team(VOICE), "speaker")
    model = CachingServer()
    ctl = Controller(parts, model, slot=1)
    usage = anyio.run(ctl.warm_prefix)
    assert usage is not None and usage.prompt_n == 120
    (request,) = model.requests
    assert [m.role for m in request.messages] == ["system"]
    first_turn = ctl.builder.build(TailState(step=0, status=False)).messages()
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
    assert said[0] == "Hello."  # the throwaway word, before any reply
    assert len(said) > 1 and "Hello." not in said[1:]
    assert any(n.startswith("voice warmed in ") for n in notices)


def test_warm_up_can_be_turned_off(tmp_path: Path) -> None:
    said, notices = run_voice(tmp_path, warm=False)
    assert "Hello." not in said
    assert not any("warmed" in n for n in notices)
