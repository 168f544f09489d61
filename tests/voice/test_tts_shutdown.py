"""TTSOutput at exit: a clean exit inside a cancelled scope (how a run ends) still finishes
the reply; a stuck sink or an error ends it at once, with the cut told and recorded."""

from __future__ import annotations

import anyio
import pytest

from terrarium.events import Event, SpeechCut, UtteranceWritten
from terrarium.voice import AudioClip, TTSOutput, UtteranceAudio

pytestmark = pytest.mark.anyio

RATE = 100
REPLY = ("The first sentence of the reply is here. The second one follows it closely. "
         "And the third has no full stop yet")
FIRST = "The first sentence of the reply is here."


class TextSynth:
    """The text itself as PCM, so the sink can tell which sentence it got."""

    sample_rate = RATE

    def synthesize(self, text: str) -> AudioClip:
        return AudioClip(pcm=text.encode("utf-16-le"), sample_rate=RATE)


class ListSink:
    """Keeps what it played; ``stuck``: its play never returns unless cancelled."""

    def __init__(self, *, stuck: bool = False) -> None:
        self.played: list[str] = []
        self.closed: list[str] = []  # "finish" or "abort"
        self.stuck = stuck
        self.playing = anyio.Event()

    async def begin(self, utterance_id: str, sample_rate: int) -> None:
        return None

    async def play(self, clip: AudioClip) -> None:
        self.playing.set()
        if self.stuck:
            await anyio.sleep_forever()
        await anyio.lowlevel.checkpoint()
        self.played.append(clip.pcm.decode("utf-16-le"))

    async def finish(self) -> UtteranceAudio:
        self.closed.append("finish")
        return UtteranceAudio(utterance_id="u", duration=0.1, sample_rate=RATE)

    async def abort(self) -> UtteranceAudio:
        self.closed.append("abort")
        return UtteranceAudio(utterance_id="u", duration=0.0, sample_rate=RATE, aborted=True)


def _written(events: list[Event]) -> list[UtteranceWritten]:
    return [e for e in events if isinstance(e, UtteranceWritten)]


async def test_a_clean_exit_in_a_cancelled_scope_finishes_the_reply() -> None:
    sink, events = ListSink(), []
    with anyio.CancelScope() as run:
        async with TTSOutput(TextSynth(), sink, observer=events.append) as tts:
            await tts.begin("u1")
            await tts.write(REPLY)  # its last sentence ends only at end()
            run.cancel()  # the runtime cancels the run's task group, then leaves its contexts
    assert run.cancelled_caught
    assert " ".join(sink.played) == REPLY
    assert sink.closed == ["finish"]
    assert [w.aborted for w in _written(events)] == [False]
    assert not [e for e in events if isinstance(e, SpeechCut)]


async def test_a_stuck_sink_is_cut_after_finish_within_and_the_cut_recorded() -> None:
    sink, events = ListSink(stuck=True), []
    with anyio.CancelScope() as run:
        async with TTSOutput(TextSynth(), sink, observer=events.append,
                             finish_within=0.05) as tts:
            await tts.begin("u1")
            await tts.write(REPLY)
            await sink.playing.wait()
            run.cancel()
    assert sink.played == []
    assert sink.closed == ["abort"]
    cuts = [e for e in events if isinstance(e, SpeechCut)]
    assert len(cuts) == 1 and cuts[0].interrupted_sentence == FIRST
    assert [w.aborted for w in _written(events)] == [True]


async def test_an_error_stops_at_once_and_records_the_cut() -> None:
    sink, events = ListSink(stuck=True), []
    with pytest.raises(BaseExceptionGroup) as raised:  # the output's task group wraps it
        async with TTSOutput(TextSynth(), sink, observer=events.append) as tts:
            await tts.begin("u1")
            await tts.write(REPLY)
            await sink.playing.wait()
            raise RuntimeError("boom")
    assert raised.group_contains(RuntimeError, match="boom")
    assert sink.closed == ["abort"]
    cuts = [e for e in events if isinstance(e, SpeechCut)]
    assert len(cuts) == 1 and cuts[0].interrupted_sentence == FIRST
    assert cuts[0].cut_text[-1] == "And the third has no full stop yet"  # never queued
