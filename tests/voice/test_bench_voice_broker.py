"""The plumbing of ``bench/voice.py --broker`` on the scripted model: its own nats-server,
a run started here that hosts nothing, two ``terrarium worker`` processes, the events read
back from the run's log stream, and the same utterances timed in one process.

The relay team (copied, its steps made repeatable) stands in for the voice assistant, whose
speaker needs the Piper voice: worker 0 hosts ``a``, worker 1 hosts ``b`` and ``c``, and
``c``'s turn end stands for the first audio. Waits are on events; no figure is asserted
beyond being a time after the send.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from terrarium.events import Event, SentenceQueued, TurnEnded, UtteranceWritten
from tests.nats_fixtures import NATS_SERVER
from tests.script_loader import ROOT, load_script

RELAY = Path(__file__).parents[1] / "runtime_fixtures" / "relay"


bench = load_script(ROOT / "bench" / "voice.py", "bench_voice")


def _relay(tmp: Path) -> Path:
    """The relay fixture whose scripted steps are never used up (one utterance each)."""
    team = tmp / "relay"
    shutil.copytree(RELAY, team)
    for script in team.glob("*/script.yaml"):
        text = script.read_text()
        script.write_text(text.replace("    reply:", "    repeat: true\n    reply:"))
    return team


def _ended(creature: str) -> TurnEnded:
    return TurnEnded(creature=creature, turn_index=0)


def test_an_utterance_is_done_when_its_speech_is_written() -> None:
    queued = SentenceQueued(creature="speaker", utterance_id="u1", index=0, text="Hi.")
    written = UtteranceWritten(creature="speaker", utterance_id="u1", path=None,
                               duration=0.5, aborted=False)
    evs: list[Event] = [queued, _ended("router")]
    assert not bench.utterance_done(evs, "speaker")
    evs.append(_ended("speaker"))
    assert not bench.utterance_done(evs, "speaker")  # the voice still speaks
    evs.append(written)
    assert bench.utterance_done(evs, "speaker")


@pytest.mark.nats
def test_broker_bench_times_each_utterance_in_one_process_and_across_workers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if NATS_SERVER is None:
        pytest.skip("nats-server is not installed (apt-get install nats-server; "
                    "scripts/setup.sh does it)")
    starts = ("a", "b", "c")
    layout = bench.Layout(_relay(tmp_path), (("a",), ("b", "c")), last="c", starts=starts,
                          first=TurnEnded)
    texts = ["ping one", "ping two", "ping three"]

    async def go(url: str) -> list[object]:
        with anyio.fail_after(120):  # a safety net; every wait is on an event
            return await bench.compare(layout, url, texts, 1, 1, True)

    with bench.nats_server(None) as url:
        assert url.startswith("nats://127.0.0.1:")
        (rnd,) = anyio.run(go, url)
    out = capsys.readouterr().out
    assert len(rnd.in_process) == 2 and len(rnd.broker) == 2, out
    for s in rnd.in_process + rnd.broker:
        assert s.ttfa >= 0, out
        # every creature's turn was seen from its process, in the relay's order
        assert 0 <= s.starts[0] <= s.starts[1] <= s.starts[2] <= s.ttfa, out
    assert "no audio" not in out
    assert "round 0  broker" in out and "round 0  in-process" in out
    bench.report([rnd], starts)
    shown = capsys.readouterr().out
    assert "difference (broker - in one process)" in shown
    assert "target: broker p50 within 30 ms" in shown
