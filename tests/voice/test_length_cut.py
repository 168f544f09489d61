"""A reply cut off by the model's length limit does not speak its unfinished last words."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller, Incoming
from terrarium.events import Event, TranscriptAppended
from terrarium.llm.types import ChatRequest, StreamDelta, Usage
from terrarium.voice import AudioClip, CallableSynthesizer, TTSOutput

VOICE = Path(__file__).parents[1] / "runtime_fixtures" / "voice"
RATE = 16000


class CutOff:
    """Streams a reply, then says why it stopped."""

    name = "cut-off"
    last_usage: Usage | None = None

    def __init__(self, reply: str, finish: str) -> None:
        self.reply, self.finish = reply, finish

    def describe(self) -> str:
        return self.name

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        for i in range(0, len(self.reply), 5):
            yield StreamDelta(text=self.reply[i:i + 5])
        yield StreamDelta(finish_reason=self.finish)


def speak(reply: str, finish: str) -> tuple[list[str], list[str], str]:
    parts = assemble(load_team(VOICE), "speaker")
    notices: list[str] = []

    def entry(ev: Event) -> None:
        e = ev.entry if isinstance(ev, TranscriptAppended) else None
        if e is not None and e.kind == "notice":
            notices.append(e.text)

    async def go() -> tuple[list[str], str]:
        synth = CallableSynthesizer(lambda t: AudioClip(pcm=b"\x00\x00", sample_rate=RATE), RATE)
        async with TTSOutput(synth) as tts:
            ctl = Controller(parts, CutOff(reply, finish), sinks={"speech": tts},
                             emit=entry)
            with anyio.fail_after(10):
                result = await ctl.run_turn([Incoming(text="hello")])
                await tts.drain()
                spoken = (await tts.wait(tts_ids(tts)[-1])).sentences
        return spoken, result.text

    spoken, text = anyio.run(go)
    return spoken, notices, text


def tts_ids(tts: TTSOutput) -> list[str]:
    return list(tts._known)


def test_unfinished_words_of_a_cut_reply_are_not_spoken() -> None:
    spoken, notices, text = speak("It is sunny today. The rest of the day will be", "length")
    assert spoken == ["It is sunny today."]
    assert notices == ["not spoken, cut off by max_tokens: 'The rest of the day will be'"]
    assert text.endswith("will be")  # the transcript keeps what the model wrote


@pytest.mark.parametrize("reply", ["It is sunny today. It stays warm.",
                                   'It is sunny today. "Enjoy it."'])
def test_a_cut_reply_that_ends_a_sentence_is_spoken_whole(reply: str) -> None:
    spoken, notices, _ = speak(reply, "length")
    assert len(spoken) == 2 and notices == []


def test_a_reply_that_stopped_by_itself_is_spoken_whole() -> None:
    spoken, notices, _ = speak("It is sunny today. The rest of the day will be", "stop")
    assert spoken == ["It is sunny today.", "The rest of the day will be"]
    assert notices == []
