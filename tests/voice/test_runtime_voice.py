"""Barge-in on the scripted model: a new utterance during speech cuts it, the next is spoken.

The synthesizer is a fake that sleeps a little per sentence, so speech is in progress when
the second utterance arrives; the test waits for speech events, never for a wall-clock time.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio

from terrarium.channels.log import DurableLog
from terrarium.config import load_team
from terrarium.events import Event, SentenceSynthesized, SpeechCut, UtteranceWritten
from terrarium.runtime.runtime import LOG_FILE, RuntimeOptions, TeamRuntime
from terrarium.voice import AudioClip, CallableSynthesizer

VOICE = Path(__file__).parents[1] / "runtime_fixtures" / "voice"
RATE = 16000


def fake_speech(text: str) -> AudioClip:
    time.sleep(0.02)  # "synthesis" takes a while, so speech is still going when cut
    return AudioClip(pcm=b"\x00\x00" * (RATE // 10), sample_rate=RATE)


def test_second_utterance_cuts_speech_and_is_spoken(tmp_path: Path) -> None:
    team = load_team(VOICE)
    events: list[Event] = []
    spoken: list[str] = []
    opts = RuntimeOptions(runs_dir=tmp_path, audio="none", on_event=events.append,
                          synthesizer=CallableSynthesizer(fake_speech, RATE))

    async def go() -> TeamRuntime:
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(30), rt.bus.subscribe() as sub:
                await rt.send_user("tell me a story")
                async for ev in sub:  # wait until the first sentence has been synthesized
                    if isinstance(ev, SentenceSynthesized):
                        spoken.append(ev.text)
                        break
                await rt.send_user("what is the weather?")
                await rt.wait_idle()
        return rt

    rt = anyio.run(go)
    cuts = [e for e in events if isinstance(e, SpeechCut)]
    assert len(cuts) == 1 and cuts[0].creature == "speaker"
    assert cuts[0].output == "speech"
    # the story was cut: the fox never got to the end
    written = [e for e in events if isinstance(e, UtteranceWritten)]
    texts = [r.text for _, r in rt.results]
    assert texts == ["It is sunny today."]  # only the second turn completed
    synthesized = [e.text for e in events if isinstance(e, SentenceSynthesized)]
    assert any("sunny" in t for t in synthesized)
    assert not any("The end came much later" in t for t in synthesized)
    assert written  # the weather utterance was played to the end
    shown = [e.text for e in rt.transcript("speaker") if e.kind == "output"]
    assert shown and all("first audio" in t and "RTF" in t for t in shown)  # metrics shown
    with DurableLog(tmp_path / LOG_FILE) as log:
        logged = [e for e in log.events(rt.run_id) if e.get("kind") == "speech_cut"]
        assert len(logged) == 1 and logged[0]["creature"] == "speaker"
        turns = log.turns(rt.run_id)
        assert [t.error for t in turns] == ["cut by barge-in", None]
        # both utterances were consumed exactly once, the cut one included
        msgs = log.messages(rt.run_id)
        assert len(msgs) == 2
        assert {m.id for m, _ in msgs} == log.consumed_ids(rt.run_id, "speaker")
