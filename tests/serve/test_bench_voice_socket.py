"""The plumbing of ``bench/voice.py --socket`` (bench/voice_socket.py): the report's
figures from given rounds, and (marked ``tts``: the serve process speaks with the real Piper
voice) a round on the scripted voice fixture: the same utterances in one process and over
a real ``terrarium serve``'s audio socket. No figure is asserted beyond its order: the
client's interval holds the server's."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from tests.script_loader import load_script
from tests.serve_helpers import ROOT

VOICE = ROOT / "tests" / "runtime_fixtures" / "voice"


bench = load_script(ROOT / "bench" / "voice_socket.py", "bench_voice_socket")
NAN = float("nan")


def test_the_report_pairs_utterances_and_splits_the_difference(
        capsys: pytest.CaptureFixture[str]) -> None:
    S = bench.SocketSample
    rounds = [
        bench.SocketRound([100.0, 200.0, NAN], [S(130.0, 110.0), S(190.0, 180.0), S(50, 40)],
                          [], []),
        bench.SocketRound([300.0, 400.0, 500.0], [S(320.0, 305.0), S(430.0, 400.0), S()], [], []),
    ]
    bench.report(rounds)
    out = capsys.readouterr().out
    # pairs with audio in both modes: +30, -10, +20, +30 -> median +25
    assert "paired per utterance (socket - in one process)" in out
    line = next(x for x in out.splitlines() if "paired per utterance" in x)
    assert "+25.0 ms (4 pairs)" in line
    wire = next(x for x in out.splitlines() if "on the socket" in x)
    assert "+15.0 ms (5 pairs)" in wire  # client - server: 20, 10, 10, 15, 30
    assert "target: socket p50 within 30 ms of in-process" in out


def _voice(tmp: Path) -> Path:
    """The voice fixture whose scripted reply is never used up."""
    team = tmp / "voice"
    shutil.copytree(VOICE, team)
    script = team / "speaker" / "script.yaml"
    script.write_text(script.read_text().replace('reply: "It is sunny today."',
                                                 'reply: "It is sunny today."\n    repeat: true'))
    return team


@pytest.mark.tts
def test_a_round_in_one_process_and_over_the_socket(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from voice import Layout  # bench/voice.py, importable as the bench imports it

    layout = Layout(_voice(tmp_path), (), "speaker", ("speaker",))
    texts = ["what is the weather?", "and the weather now?", "weather again?"]

    async def go() -> list[object]:
        with anyio.fail_after(600):  # a safety net; every wait is on a frame or an event
            return await bench.compare(layout, texts, 1, 1, True)

    (rnd,) = anyio.run(go)
    out = capsys.readouterr().out
    assert len(rnd.in_process) == 2 and len(rnd.socket) == 2, out
    for v, s in zip(rnd.in_process, rnd.socket, strict=True):
        assert v >= 0, out
        assert 0 <= s.server <= s.client, out  # the server's interval lies inside the client's
    assert "no audio" not in out
