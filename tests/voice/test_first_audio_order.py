"""The first audio goes out before the paused model is asked to go on (issue 29): the
first clip reaches the audio sink, then the continuation request is made, not the other
way round (the request's set-up ran first and delayed the audio)."""

from __future__ import annotations

from pathlib import Path

from terrarium.voice import AudioClip, NullAudioSink
from tests.yield_fakes import SENTENCES, Events, Setup


class Played(NullAudioSink):
    """An audio sink noting in the run's event list when each clip reached it."""

    def __init__(self, events: Events) -> None:
        super().__init__()
        self.events = events
        self.clips = 0

    async def play(self, clip: AudioClip) -> None:
        self.clips += 1
        self.events.append(("played", self.clips))
        await super().play(clip)


def test_the_first_clip_is_played_before_the_model_is_asked_to_go_on(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.tts.audio_sink = Played(s.events)
    result = s.run()
    assert len(s.model.requests) == 2  # paused once, then continued
    assert s.order(("synthesized", SENTENCES[0])) < s.order(("played", 1))
    assert s.order(("played", 1)) < s.order(("request", 2))
    assert result.text.startswith(SENTENCES[0])
