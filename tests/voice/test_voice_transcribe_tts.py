"""Speech in end to end with the real Piper voice: Piper says two sentences with a pause
between them → silero-vad finds two utterances → the fake transcription server → the
team's input channel (scripted model) → the team's replies, through `terrarium run --wav`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from terrarium.channels.log import DurableLog
from terrarium.runtime.runtime import LOG_FILE
from terrarium.voice.listen import read_wav
from terrarium.voice.transcribe import encode_wav
from terrarium.voice.vad import SileroVad, Utterance, UtteranceCutter, VadSettings
from tests.fake_transcription_server import serve

pytestmark = pytest.mark.tts

ROOT = Path(__file__).resolve().parents[2]
TRIO = ROOT / "tests" / "runtime_fixtures" / "trio"
LIMIT = 120  # seconds: a bound against hangs, never a measured figure


def spoken_wav(path: Path) -> Path:
    """Piper's two sentences with a second of silence before, between and after."""
    from terrarium.voice.synth import default_synthesizer

    synth = default_synthesizer()
    parts = [synth.synthesize(t) for t in ("Hello, can you hear me?",
                                           "Hello again, please say something.")]
    rate = parts[0].sample_rate
    gap = np.zeros(rate, dtype=np.float32)
    audio = [gap]
    for clip in parts:
        audio += [np.frombuffer(clip.pcm, dtype="<i2").astype(np.float32) / 32768.0, gap]
    path.write_bytes(encode_wav(np.concatenate(audio), rate))
    return path


def test_piper_speech_becomes_two_utterances_then_team_input(tmp_path: Path) -> None:
    wav = spoken_wav(tmp_path / "two.wav")
    cutter = UtteranceCutter(SileroVad(), VadSettings())
    events = cutter.feed(read_wav(wav)) + cutter.flush()
    utterances = [e for e in events if isinstance(e, Utterance)]
    assert len(utterances) == 2
    assert utterances[0].end < utterances[1].start

    team = tmp_path / "trio"
    shutil.copytree(TRIO, team)
    for name in ("a", "b", "c"):  # each scripted step answers once: one set per utterance
        script = team / name / "script.yaml"
        doc = yaml.safe_load(script.read_text())
        script.write_text(yaml.safe_dump({"steps": doc["steps"] * 2}))
    with serve(["hello there", "hello again"], model="whisper-test") as server:
        with (team / "terrarium.yaml").open("a") as f:
            f.write(f"  transcription:\n    base_url: {server.url}\n"
                    "    model: whisper-test\n    language: en\n")
        res = subprocess.run(
            [sys.executable, "-m", "terrarium", "run", str(team), "--wav", str(wav),
             "--runs-dir", str(tmp_path / "runs"), "--audio", "none"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=LIMIT,
            check=False)
    assert res.returncode == 0, res.stderr
    assert len(server.received) == 2 and server.refused == []
    assert all(r.fields["language"] == "en" for r in server.received)
    assert "you (speech)> hello there" in res.stdout
    assert "c> All done: greeted twice." in res.stdout
    with DurableLog(tmp_path / "runs" / LOG_FILE) as log:
        [run] = log.runs()
        inputs = [m[0].payload for m in log.messages(run.run_id) if m[0].channel == "inbox"]
    assert inputs == [{"text": "hello there"}, {"text": "hello again"}]
