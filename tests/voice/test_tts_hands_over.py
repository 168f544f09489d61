"""A reply paused for its first audio goes on once that audio is *out*, for a sink that
hands audio on (``hands_over``: the serve's audio socket), and once it is synthesized for
any other sink (a sound card's ``play`` lasts the whole sentence: waiting for it would hold
the model that long). Fake voice, a sink whose ``play`` waits on a gate: no timing."""

from __future__ import annotations

import anyio
import pytest

from terrarium.voice import AudioClip, NullAudioSink, TTSOutput

RATE = 16000


def voice(text: str) -> AudioClip:
    return AudioClip(pcm=b"\x00\x00" * 160, sample_rate=RATE)


class GatedSink(NullAudioSink):
    """``play`` starts, then waits for ``gate``."""

    def __init__(self, hands_over: bool) -> None:
        super().__init__()
        self.hands_over = hands_over
        self.gate = anyio.Event()
        self.playing = anyio.Event()
        self.played: list[float] = []

    async def play(self, clip: AudioClip) -> None:
        self.playing.set()
        await self.gate.wait()
        await super().play(clip)
        self.played.append(clip.duration)


async def first_piece_released(sink: GatedSink) -> tuple[bool, bool]:
    """Whether ``wait_first_piece`` returned while the sink's play was still waiting, and
    whether it returned after the gate opened."""
    async with TTSOutput(voice, sink, sample_rate=RATE) as tts:
        await tts.begin("u1")
        await tts.write("Hello there, my friend. And more words follow here")
        assert tts.first_piece_pending()
        with anyio.fail_after(10):
            await sink.playing.wait()  # the first piece is audio and in the sink's play
        early = False
        with anyio.move_on_after(0.2):
            await tts.wait_first_piece()
            early = True
        sink.gate.set()
        with anyio.fail_after(10):
            await tts.wait_first_piece()
        assert not tts.first_piece_pending()
        await tts.end()
    return early, bool(sink.played)


@pytest.mark.anyio
async def test_a_sink_that_hands_over_releases_the_model_after_its_play() -> None:
    early, played = await first_piece_released(GatedSink(hands_over=True))
    assert not early  # held while the audio was not yet handed on
    assert played


@pytest.mark.anyio
async def test_any_other_sink_releases_the_model_once_synthesized() -> None:
    early, played = await first_piece_released(GatedSink(hands_over=False))
    assert early  # a sound card playing the sentence does not hold the model
    assert played


@pytest.mark.anyio
async def test_a_cut_before_the_audio_is_out_releases_the_model() -> None:
    sink = GatedSink(hands_over=True)
    released = anyio.Event()
    async with TTSOutput(voice, sink, sample_rate=RATE) as tts:
        await tts.begin("u1")
        await tts.write("Hello there, my friend. And more words follow here")

        async def paused_model() -> None:
            await tts.wait_first_piece()
            released.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(paused_model)
            with anyio.fail_after(10):
                await sink.playing.wait()
            assert not released.is_set()
            await tts.interrupt()  # a barge-in while the first audio was being handed on
            with anyio.fail_after(10):
                await released.wait()
    assert not sink.played
