"""Early synthesis waits for the reply guard's own word count (issue 29, time to first audio):
the runtime's wiring hands a ``tts`` output one more complete word than the guard's
``START_WORDS`` (voice/early.py says why), so the two can never drift apart."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from terrarium.config import load_team
from terrarium.controller import guard
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.voice import AudioClip, CallableSynthesizer
from tests.yield_fakes import speaker_team

RATE = 16000


def _team(tmp_path: Path) -> Path:
    return speaker_team(tmp_path, {"synthesize_early": True})


def _after_words(tmp_path: Path) -> tuple[bool, int]:
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none",
                          synthesizer=CallableSynthesizer(
                              lambda t: AudioClip(pcm=b"", sample_rate=RATE), RATE))

    async def go() -> tuple[bool, int]:
        async with TeamRuntime(load_team(_team(tmp_path)), opts) as rt:
            (tts,) = rt.tts
            return tts.synthesize_early, tts.early_after_words

    return anyio.run(go)


def test_the_wiring_passes_one_word_more_than_the_guard_judges_a_start_by(
        tmp_path: Path) -> None:
    assert _after_words(tmp_path) == (True, guard.START_WORDS + 1)


def test_it_follows_the_guard_when_the_guard_changes(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import terrarium.runtime.wiring as wiring

    monkeypatch.setattr(wiring, "START_WORDS", 2)  # the name the wiring reads the guard's by
    assert _after_words(tmp_path) == (True, 3)
