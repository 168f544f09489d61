"""The optional root creature operates the team with team tools (status, send, stop, start)."""

from __future__ import annotations

from pathlib import Path

import anyio

from terrarium.config import load_team
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

FIXTURE = Path(__file__).parent / "runtime_fixtures" / "operated"


def test_root_stops_sends_starts_and_reads_status(tmp_path: Path) -> None:
    team = load_team(FIXTURE)

    async def go() -> None:
        async with TeamRuntime(team, RuntimeOptions(runs_dir=tmp_path)) as rt:
            await rt.send_user("please stop the worker")  # no input channel: the root hears it
            assert rt.statuses["worker"].state == "stopped"
            await rt.send_user("queue a job")
            await rt.wait_idle()
            assert rt.statuses["worker"].turns == 0  # stopped: the job waits in its inbox
            await rt.send_user("start it again")
            await rt.wait_idle()
            assert rt.statuses["worker"].turns == 1  # the waiting job was done
            await rt.send_user("status please")
            status_result = [e for e in rt.transcript("root") if e.kind == "tool_result"][-1]
            assert "worker: idle, 1 turns" in status_result.text
            root_calls = [e.name for e in rt.transcript("root") if e.kind == "tool_call"]
            assert root_calls == ["stop_creature", "team_send", "start_creature",
                                  "team_status"]

    anyio.run(go)


def test_team_tools_exist_only_for_the_root() -> None:
    from terrarium.controller.assembly import assemble

    team = load_team(FIXTURE)
    assert "team_status" in assemble(team, "root").registry.names()
    assert "team_status" not in assemble(team, "worker").registry.names()
