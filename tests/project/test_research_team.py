"""The research_team example on the scripted model: a lead delegates to two sub-agents in
the background, waits for both and merges their answers; the log shows it all, nested."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

from terrarium.cli import main
from terrarium.config import load_team
from terrarium.events import Event, JobEnded, JobStarted, SubagentEnded, SubagentStarted
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "research_team"


def test_lead_delegates_in_the_background_and_merges(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False,
                          on_event=events.append)

    async def go() -> TeamRuntime:
        async with TeamRuntime(load_team(EXAMPLE), opts) as rt:
            with anyio.fail_after(20):
                await rt.send_user("Why is the sky blue?")
                await rt.wait_idle()
        return rt

    rt = anyio.run(go)
    (_, result), = rt.results
    assert result.text.split()[-1] == "him." and "Merged answer: sunlight scatters" in result.text
    assert [c.name for c in result.calls] == ["historian", "scientist", "wait", "wait"]
    assert result.calls[2].result.startswith("Job job-1 (historian) done: Tyndall")
    assert result.calls[3].result.startswith("Job job-2 (scientist) done: Rayleigh")
    # both sub-agents were started as jobs before either ended: they ran side by side
    order = [(type(e).__name__, getattr(e, "subagent", getattr(e, "call", "")))
             for e in events if isinstance(e, JobStarted | JobEnded | SubagentStarted
                                           | SubagentEnded)]
    assert order.index(("JobStarted", "scientist")) < order.index(("JobEnded", "historian"))
    assert {s for k, s in order if k == "SubagentEnded"} == {"historian", "scientist"}
    # terrarium log shows the sub-agents' turns nested under the lead
    assert main(["log", rt.run_id, "--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"subagent_started +lead +subagent=historian", out)
    assert re.search(r"transcript +lead/historian +", out)
    assert re.search(r"transcript +lead/scientist +", out)
    assert re.search(r"job_ended +lead +job_id=job-2 call=scientist status=done", out)
