"""The monitor shows sub-agents nested under their creature and each creature's background
jobs, live and in replay (examples/research_team on the scripted model: a lead hands two
questions to two sub-agents in the background, waits for both and merges the answers).

Event times are rewritten to a fixed step where a figure depends on them (elapsed), so
nothing here reads the wall clock.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import anyio
import pytest
from textual.widgets import DataTable, Static, TabbedContent

from terrarium.channels.log import DurableLog
from terrarium.config import load_team
from terrarium.events import (
    Event,
    JobEnded,
    JobStarted,
    PromptBuilt,
    RunEnded,
    SubagentEnded,
    SubagentStarted,
    TranscriptAppended,
    TranscriptEntry,
)
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.tui import MonitorApp, ReplayHandle
from terrarium.tui.creature_view import CreatureView, TranscriptView
from terrarium.tui.delegation import Delegations, elapsed_text
from terrarium.tui.state import MonitorState
from terrarium.tui.team_panel import TeamPanel
from tests.tui_fixtures.tui_recording import FrozenHandle, Recording

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "research_team"
T0 = 1_700_000_000.0
STEP = 0.25  # seconds between two events, once their times are pinned


def record_research(runs_dir: Path) -> Recording:
    """One scripted run of the research team: the question, two jobs, the merged answer."""

    async def main() -> Recording:
        team = load_team(EXAMPLE)
        seen: list[Event] = []
        opts = RuntimeOptions(runs_dir=runs_dir, audio="none", warm_up=False,
                              clock=lambda: datetime(2025, 1, 1, 12, 0), on_event=seen.append)
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(20):
                await rt.send_user("Why is the sky blue?")
                await rt.wait_idle()
            await anyio.sleep(0.1)  # the event recorder writes in batches
            assert rt.log_path is not None
            statuses = {n: dataclasses.replace(copy.copy(s), tokens_in=2000, tokens_out=120,
                                               cached_tokens=1000)
                        for n, s in rt.statuses.items()}
            return Recording(team, rt.run_id, rt.log_path, statuses,
                             {n: list(rt.transcript(n)) for n in team.creatures},
                             {n: None for n in team.creatures}, seen)

    return anyio.run(main)


def pinned_times(events: Sequence[Event]) -> list[Event]:
    """The events with their times a fixed step apart (elapsed figures become exact) and
    prompt sizes pinned (the pictures change with the monitor, not the prompt wording)."""
    out: list[Event] = []
    for i, e in enumerate(events):
        e = dataclasses.replace(e, ts=T0 + i * STEP)
        if isinstance(e, PromptBuilt):
            e = dataclasses.replace(e, tokens=100)
        out.append(e)
    return out


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    rec = record_research(tmp_path_factory.mktemp("runs"))
    return dataclasses.replace(rec, events=pinned_times(rec.events))


def index_of(events: Sequence[Event], kind: type[Event], **match: str) -> int:
    return next(i for i, e in enumerate(events)
                if isinstance(e, kind) and all(getattr(e, k) == v for k, v in match.items()))


def cells(table: DataTable) -> list[list[str]]:  # type: ignore[type-arg]
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def team_rows(app: MonitorApp) -> list[list[str]]:
    return cells(app.query_one(TeamPanel))


def job_rows(app: MonitorApp) -> list[list[str]]:
    return cells(app.query_one("#jobs-table", DataTable))


def transcript_lines(app: MonitorApp) -> list[str]:
    view = app.query_one(TranscriptView)
    return [str(w.render()) for w in view.query(Static) if w.id != "streaming"]


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        await pilot.pause(0.12)  # let the monitor take its next event batch


# -- folding (no Textual) ---------------------------------------------------------------


def test_delegations_fold_runs_jobs_and_their_states(recording: Recording) -> None:
    events = recording.events
    work = Delegations()
    mid = index_of(events, SubagentStarted, subagent="scientist") + 1
    work.apply_all(events[:mid])
    runs = work.subagents_of("lead")
    assert [(r.name, r.depth, r.running) for r in runs] == [("historian", 1, True),
                                                            ("scientist", 1, True)]
    jobs = work.jobs_of("lead")
    assert [(j.job_id, j.call, j.status) for j in jobs] == [("job-1", "historian", "running"),
                                                            ("job-2", "scientist", "running")]
    # each job is tied to the sub-agent run it carries; elapsed runs on event time
    assert [j.subagent for j in jobs] == [r.run_id for r in runs]
    started = index_of(events, JobStarted, job_id="job-1")
    assert jobs[0].elapsed(work.now) == pytest.approx((mid - 1 - started) * STEP)

    work.apply_all(events[mid:])
    assert [(r.state, r.iterations) for r in work.subagents_of("lead")] == [("done", 1),
                                                                          ("done", 1)]
    assert all(r.prompt_tokens > 0 and r.prompt is not None for r in work.runs.values())
    ended = index_of(events, JobEnded, job_id="job-1")
    job1 = work.job("lead", "job-1")
    assert job1 is not None and job1.status == "done"
    assert elapsed_text(job1.elapsed(work.now)) == f"{(ended - started) * STEP:.1f}s"
    out = work.job_output(job1)
    assert "sub-agent lead/historian (done):" in out and "Tyndall" in out
    assert out.splitlines()[-1].startswith("result: Tyndall")


def test_jobs_still_running_when_the_run_ends_are_lost() -> None:
    work = Delegations()
    work.apply(JobStarted(ts=10.0, creature="lead", job_id="job-1", call="shell"))
    work.apply(JobStarted(ts=11.0, creature="lead", job_id="job-2", call="shell"))
    work.apply(JobStarted(ts=11.5, creature="lead", job_id="job-3", call="historian"))
    work.apply(SubagentStarted(ts=11.6, creature="lead", subagent="historian", run_id="r1",
                               depth=1, task="t"))
    work.apply(SubagentStarted(ts=11.7, creature="lead/historian", subagent="scout",
                               run_id="r2", depth=2, task="t2", parent_run="r1"))
    work.apply(JobEnded(ts=12.0, creature="lead", job_id="job-2", call="shell",
                        status="cancelled", result="cancelled before it finished"))
    assert "running: no output yet" in work.job_output(work.jobs[("lead", "job-1")])
    touched = work.apply(RunEnded(ts=14.0, run_id="x", status="failed"))
    assert touched == {"lead"}
    assert [(j.job_id, j.status, j.elapsed(99.0)) for j in work.jobs_of("lead")] == [
        ("job-1", "lost", 4.0), ("job-2", "cancelled", 1.0), ("job-3", "lost", 2.5)]
    # the nested sub-agent sits under its parent, one level deeper; both were lost
    assert [(r.label, r.depth, r.state) for r in work.subagents_of("lead")] == [
        ("lead/historian", 1, "lost"), ("lead/historian/scout", 2, "lost")]


def test_a_failed_subagent_and_its_failed_job() -> None:
    state = MonitorState(load_team(EXAMPLE))
    state.apply(JobStarted(ts=1.0, creature="lead", job_id="job-1", call="scientist"))
    state.apply(SubagentStarted(ts=1.0, creature="lead", subagent="scientist", run_id="r",
                                depth=1, task="why"))
    ch = state.apply(SubagentEnded(ts=3.0, creature="lead", subagent="scientist", run_id="r",
                                   ok=False, result="The sub-agent scientist failed: boom"))
    assert ch.work == {"lead"}
    state.apply(JobEnded(ts=3.0, creature="lead", job_id="job-1", call="scientist",
                         status="failed", result="The sub-agent scientist failed: boom"))
    (run,) = state.work.subagents_of("lead")
    assert run.state == "failed" and run.shown_state == "failed"
    assert state.work.jobs_of("lead")[0].status == "failed"


# -- the app, live ----------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_live_events_show_running_then_finished_subagents_and_jobs(
        recording: Recording, anyio_backend: str) -> None:
    """Events published as the run made them: first the sub-agents and jobs run, then done."""
    handle = FrozenHandle(recording)
    events = recording.events
    mid = index_of(events, SubagentStarted, subagent="scientist") + 1
    app = MonitorApp(handle, deterministic=True)
    async with app.run_test(size=(120, 40)) as pilot:
        for e in events[:mid]:
            handle.bus.publish(e)
        await settle(pilot)
        rows = team_rows(app)
        assert [r[0] for r in rows] == ["lead", "  └ historian", "  └ scientist"], rows
        assert [r[1:3] for r in rows[1:]] == [["thinking", "sub-agent d1"]] * 2, rows

        await pilot.press("2")
        await pilot.pause()
        tabs = app.query_one("#creature-tabs", TabbedContent)
        assert tabs.get_tab("tab-jobs").display  # the lead has jobs: the tab is there
        await pilot.press("j")
        await pilot.pause()
        assert tabs.active == "tab-jobs"
        first, second = (index_of(events, JobStarted, job_id=j) for j in ("job-1", "job-2"))
        assert [r[:4] for r in job_rows(app)] == [
            ["job-1", "historian", "running", elapsed_text((mid - 1 - first) * STEP)],
            ["job-2", "scientist", "running", elapsed_text((mid - 1 - second) * STEP)],
        ]
        output = str(app.query_one("#job-output", Static).render())
        assert "sub-agent lead/historian (thinking):" in output

        for e in events[mid:]:
            handle.bus.publish(e)
        await settle(pilot)
        rows = team_rows(app)
        assert [(r[0], r[1], r[3]) for r in rows[1:]] == [("  └ historian", "done", "1"),
                                                          ("  └ scientist", "done", "1")]
        ended = index_of(events, JobEnded, job_id="job-2")
        assert [r[:4] for r in job_rows(app)][1] == [
            "job-2", "scientist", "done",
            elapsed_text((ended - index_of(events, JobStarted, job_id="job-2")) * STEP)]
        # the cursor picks the job whose output shows below the list
        app.query_one("#jobs-table", DataTable).focus()
        await pilot.press("down")
        await pilot.pause()
        output = str(app.query_one("#job-output", Static).render())
        assert output.startswith("job-2  scientist  done") and "result: Rayleigh" in output


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_scripted_team_run_under_the_monitor(tmp_path: Path, anyio_backend: str) -> None:
    """A real run of examples/research_team with the monitor watching it."""
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False,
                          clock=lambda: datetime(2025, 1, 1, 12, 0))
    async with TeamRuntime(load_team(EXAMPLE), opts) as rt:
        app = MonitorApp(rt, deterministic=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("s", *"Why is the sky blue?", "enter")
            with anyio.fail_after(20):
                await rt.wait_idle()
            await settle(pilot)
            rows = team_rows(app)
            assert [(r[0], r[1], r[2]) for r in rows] == [
                ("lead", "idle", "scripted"),
                ("  └ historian", "done", "sub-agent d1"),
                ("  └ scientist", "done", "sub-agent d1")], rows

            # select the historian's row: its transcript shows like a creature's
            app.query_one(TeamPanel).focus()
            await pilot.press("down", "enter")
            await pilot.pause()
            assert app.query_one("#tabs", TabbedContent).active == "creature"
            title = str(app.query_one("#creature-title", Static).render())
            assert title.startswith("lead/historian  done  sub-agent of lead · depth 1"), title
            lines = transcript_lines(app)
            assert any("How did people come to explain" in line for line in lines), lines
            assert any("Tyndall showed" in line for line in lines), lines
            await pilot.press("p")  # its prompt, from the event that carried it
            await pilot.pause()
            summary = str(app.query_one("#prompt-summary", Static).render())
            assert "not been given a prompt" not in summary, summary

            # back to the lead: its jobs tab lists both jobs, done
            await pilot.press("1")
            app.query_one(TeamPanel).focus()
            await pilot.press("up", "up", "enter", "j")
            await pilot.pause()
            assert [r[:3] for r in job_rows(app)] == [["job-1", "historian", "done"],
                                                      ["job-2", "scientist", "done"]]


# -- the app, in replay -----------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_replay_steps_through_subagents_and_jobs(recording: Recording,
                                                       anyio_backend: str) -> None:
    replay = ReplayHandle(recording.log_path, recording.run_id)
    assert sorted(replay.statuses) == ["lead"]  # sub-agents are not creatures of their own
    app = MonitorApp(replay, deterministic=True)
    async with app.run_test(size=(120, 40)) as pilot:
        assert [(r[0], r[1]) for r in team_rows(app)] == [
            ("lead", "idle"), ("  └ historian", "done"), ("  └ scientist", "done")]
        # step back to just after the first sub-agent started: one row, running
        first = next(i for i, e in enumerate(replay.events)
                     if isinstance(e, TranscriptAppended) and e.creature == "lead/historian")
        replay.seek(first)
        app.action_step(0)
        await pilot.pause()
        rows = team_rows(app)
        assert [r[0] for r in rows][:2] == ["lead", "  └ historian"], rows
        assert rows[1][1] == "thinking"
        await pilot.press("2", "j")
        await pilot.pause()
        statuses = [r[2] for r in job_rows(app)]
        assert statuses == ["running", "running"], job_rows(app)
        await pilot.press("right_curly_bracket", *(["right_curly_bracket"] * 10))
        await pilot.pause()
        assert [r[2] for r in job_rows(app)] == ["done", "done"]
        assert isinstance(app.query_one(CreatureView), CreatureView)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_replay_of_a_run_that_ended_mid_job_shows_it_lost(tmp_path: Path,
                                                                 anyio_backend: str) -> None:
    """A run that stopped (here: failed) while a job and its sub-agent still ran."""
    team = load_team(EXAMPLE)
    with DurableLog(tmp_path / "runs.db") as log:
        run_id = log.start_run(team.name, team.path)
        for e in (JobStarted(ts=T0, creature="lead", job_id="job-1", call="historian"),
                  SubagentStarted(ts=T0 + 1, creature="lead", subagent="historian",
                                  run_id="r1", depth=1, task="why"),
                  TranscriptAppended(ts=T0 + 2, creature="lead/historian", entry=TranscriptEntry(
                      kind="user", text="why", ts=T0 + 2))):
            log.record_event(run_id, e)
        log.set_run_status(run_id, "failed")
    replay = ReplayHandle(tmp_path / "runs.db", run_id, team=team)
    app = MonitorApp(replay, deterministic=True)
    async with app.run_test(size=(100, 30)) as pilot:
        assert [(r[0], r[1]) for r in team_rows(app)] == [("lead", "idle"),
                                                          ("  └ historian", "lost")]
        await pilot.press("2", "j")
        await pilot.pause()
        assert [r[:3] for r in job_rows(app)] == [["job-1", "historian", "lost"]]
        await pilot.press("left_square_bracket")  # one step back the run still goes on
        await pilot.pause()
        assert [r[:3] for r in job_rows(app)] == [["job-1", "historian", "running"]]


# -- snapshots --------------------------------------------------------------------------


async def _publish_events(pilot) -> None:  # type: ignore[no-untyped-def]
    pilot.app.handle.replay_events()
    await settle(pilot)


@pytest.mark.parametrize("screen,keys", [("team", ()), ("jobs", ("2", "j"))])
def test_subagents_and_jobs_snapshot(snap_compare, recording: Recording, screen,  # type: ignore[no-untyped-def]
                                     keys) -> None:
    app = MonitorApp(FrozenHandle(recording), deterministic=True)
    assert snap_compare(app, press=keys, terminal_size=(100, 30), run_before=_publish_events)
