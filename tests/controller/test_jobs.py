"""Background jobs on the scripted model: a job overlapping a model call, wait, read_job,
cancellation, the result arriving as a message when the creature is idle, and the log."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import yaml

from terrarium.config import load_team
from terrarium.controller.jobs import STATE_JOB_HOST, STATE_JOBS, JobManager
from terrarium.controller.loop import Controller, Incoming, TurnResult
from terrarium.events import Event, JobEnded, JobStarted, TurnEnded
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest, StreamDelta
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from tests.loop_helpers import call, last_user, make_parts
from tests.runtime_fixtures.tools import Gate

TOOLS = "tests.runtime_fixtures.tools"


class Host:
    """A job host for a controller run on its own: a task group, deliveries recorded."""

    def __init__(self, tg: anyio.abc.TaskGroup) -> None:
        self.tg = tg
        self.delivered: list[tuple[str, str, dict[str, Any]]] = []

    def start_soon(self, func: Callable[..., Awaitable[Any]], *args: Any) -> None:
        self.tg.start_soon(func, *args)

    async def deliver(self, creature: str, job_id: str, payload: dict[str, Any]) -> None:
        self.delivered.append((creature, job_id, payload))


class OnCall(ScriptedModel):
    """A scripted model that runs ``hook(call_number)`` as each call starts streaming."""

    def __init__(self, steps: Any, hook: Callable[[int], None]) -> None:
        super().__init__(steps)
        self.hook = hook

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        self.hook(len(self.requests) + 1)
        async for d in super().stream(request):
            yield d


def controller(tmp_path: Path, model: ScriptedModel, events: list[Event],
               background: dict[str, bool] | None = None) -> Controller:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Gate", f"{TOOLS}:Lookup"],
                       background=background or {"gate": True})
    return Controller(parts, model, emit=events.append)


async def with_host(ctl: Controller, body: Callable[[Host], Awaitable[None]]) -> Host:
    async with anyio.create_task_group() as tg:
        host = Host(tg)
        ctl.tool_ctx.state[STATE_JOB_HOST] = host
        with anyio.fail_after(20):
            await body(host)
        tg.cancel_scope.cancel()
    return host


def test_the_flag_is_an_argument_with_the_configured_default(tmp_path: Path) -> None:
    parts = make_parts(tmp_path, tools=[f"{TOOLS}:Gate", f"{TOOLS}:Lookup"],
                       background={"gate": True, "lookup": False})
    gate = parts.specs["gate"].args_model.model_fields["background"]
    assert gate.default is True
    assert parts.specs["lookup"].args_model.model_fields["background"].default is False
    assert {"jobs", "wait", "read_job"} <= set(parts.specs)
    assert "background" in parts.registry.get("gate").full_doc()


def test_a_job_overlaps_the_next_model_call_and_wait_returns_its_result(
        tmp_path: Path) -> None:
    seen: list[str] = []

    def during(n: int) -> None:
        if n == 2:  # the second model call starts while the job still runs ...
            seen.append(jobs.jobs["job-1"].status)
            Gate.opened.set()  # ... and the job ends during it

    model = OnCall([
        call("gate", label="north"),
        {"match": "Started gate as job-1", "reply": call("wait", job="job-1", timeout=5)},
        {"match": "Job job-1 (gate) done: gate north opened", "reply": "The gate is open."},
    ], during)
    events: list[Event] = []
    ctl = controller(tmp_path, model, events)
    jobs: JobManager = ctl.tool_ctx.state[STATE_JOBS]
    result: list[TurnResult] = []

    async def body(host: Host) -> None:
        Gate.opened = anyio.Event()
        result.append(await ctl.run_turn([Incoming(text="open the gate")]))

    host = anyio.run(with_host, ctl, body)
    assert seen == ["running"]
    assert result[0].text == "The gate is open."
    assert [c.name for c in result[0].calls] == ["gate", "wait"]
    assert result[0].calls[0].result.startswith("Started gate as job-1")
    assert host.delivered == []  # read by wait within the turn: no message
    kinds = [(type(e).__name__, getattr(e, "status", "")) for e in events
             if isinstance(e, JobStarted | JobEnded)]
    assert kinds == [("JobStarted", ""), ("JobEnded", "done")]


def test_read_job_shows_output_so_far_and_jobs_lists(tmp_path: Path) -> None:
    model = ScriptedModel([
        call("gate", label="east"),
        {"match": "Started gate", "reply": call("read_job", job="job-1")},
        {"match": "waiting at east", "reply": call("jobs")},
        {"match": "job-1 gate running", "reply": "Still waiting."},
    ])
    ctl = controller(tmp_path, model, [])
    result: list[TurnResult] = []

    async def body(host: Host) -> None:
        Gate.opened = anyio.Event()
        result.append(await ctl.run_turn([Incoming(text="go")]))
        Gate.opened.set()
        await ctl.tool_ctx.state[STATE_JOBS].jobs["job-1"].done.wait()

    host = anyio.run(with_host, ctl, body)
    assert result[0].text == "Still waiting."
    assert "Job job-1 (gate) running.\nwaiting at east" in result[0].calls[1].result
    # it ended after the turn, while the creature was idle: its result is a message
    assert host.delivered == [("solo", "job-1", {"job": "job-1", "call": "gate",
                                                 "status": "done",
                                                 "result": "gate east opened"})]


def test_a_result_nobody_read_is_delivered_when_the_turn_ends(tmp_path: Path) -> None:
    def during(n: int) -> None:
        if n == 2:
            Gate.opened.set()

    model = OnCall([call("gate", label="s"), {"match": "Started", "reply": call(
        "lookup", label="x")}, "Done."], during)
    ctl = controller(tmp_path, model, [])

    async def body(host: Host) -> None:
        Gate.opened = anyio.Event()
        await ctl.run_turn([Incoming(text="go")])
        await anyio.lowlevel.checkpoint()

    host = anyio.run(with_host, ctl, body)
    assert [d[1] for d in host.delivered] == ["job-1"]


def test_cancel_all_cancels_running_jobs(tmp_path: Path) -> None:
    events: list[Event] = []
    ctl = controller(tmp_path, ScriptedModel([call("gate", label="w"), "Waiting."]), events)

    async def body(host: Host) -> None:
        Gate.opened = anyio.Event()  # never opened
        await ctl.run_turn([Incoming(text="go")])
        jobs: JobManager = ctl.tool_ctx.state[STATE_JOBS]
        jobs.cancel_all()
        await jobs.jobs["job-1"].done.wait()
        assert jobs.jobs["job-1"].status == "cancelled"

    host = anyio.run(with_host, ctl, body)
    assert host.delivered == []
    ended = [e for e in events if isinstance(e, JobEnded)]
    assert [(e.job_id, e.status) for e in ended] == [("job-1", "cancelled")]


def test_foreground_when_the_flag_is_false_or_no_host(tmp_path: Path) -> None:
    model = ScriptedModel([call("lookup", label="sky"), "Plain."])
    ctl = controller(tmp_path, model, [], background={"lookup": False})
    result = anyio.run(ctl.run_turn, [Incoming(text="go")])
    assert result.calls[0].result == "fact-sky: the sky is green"
    assert "Result of lookup: fact-sky" in last_user(model.requests[1])


# -- through the runtime -----------------------------------------------------------------


def gate_team(tmp_path: Path) -> Path:
    """A one-creature team whose ``gate`` tool runs as a background job."""
    folder = tmp_path / "team"
    (folder / "w").mkdir(parents=True)
    (folder / "w" / "config.yaml").write_text(yaml.safe_dump({
        "name": "w", "tools": [f"{TOOLS}:Gate"], "skill_mode": "static",
        "background": {"gate": True}}))
    (folder / "terrarium.yaml").write_text(yaml.safe_dump({"terrarium": {
        "name": "jobs", "input_channel": "inbox",
        "creatures": [{"name": "w", "config": "w", "channels": {"listen": ["inbox"]}}],
        "channels": {"inbox": {"type": "queue"}}}}))
    return folder


async def until(cond: Callable[[], bool]) -> None:
    while not cond():  # noqa: ASYNC110
        await anyio.sleep(0.01)


def idle_after(events: list[Event], turns: int) -> bool:
    """Whether ``turns`` turns have ended (the creature waits for its next message)."""
    return len([e for e in events if isinstance(e, TurnEnded)]) >= turns


def test_in_a_team_the_result_arrives_as_a_message_and_stop_cancels(tmp_path: Path) -> None:
    folder = gate_team(tmp_path)
    model = ScriptedModel([
        {"match": "open north", "reply": call("gate", label="north")},
        {"match": "Started gate as job-1", "reply": "I will wait."},
        {"match": "[job from job-1]", "reply": "North is open."},
        {"match": "open south", "reply": call("gate", label="south")},
        {"match": "Started gate as job-2", "reply": "Waiting again."},
    ])
    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False,
                          models={"w": model}, on_event=events.append)

    async def go() -> None:
        Gate.opened = anyio.Event()
        async with TeamRuntime(load_team(folder), opts) as rt:
            with anyio.fail_after(20):
                await rt.send_user("open north")
                await until(lambda: idle_after(events, 1))  # the turn that started it ended
                assert rt.busy()  # a running job keeps the team from being idle
                Gate.opened.set()  # the job ends while the creature is idle
                await rt.wait_idle()  # returns once the result was delivered and answered
                assert len(model.requests) == 3
                Gate.opened = anyio.Event()
                await rt.send_user("open south")
                await until(lambda: idle_after(events, 3))
                await rt.stop_creature("w")
                while len([e for e in events if isinstance(e, JobEnded)]) < 2:  # noqa: ASYNC110
                    await anyio.sleep(0.01)

    anyio.run(go)
    inputs = [last_user(r) for r in model.requests]
    assert inputs[2].startswith("[job from job-1]")
    assert "result: gate north opened" in inputs[2]
    ended = [(e.job_id, e.status) for e in events if isinstance(e, JobEnded)]
    assert ended == [("job-1", "done"), ("job-2", "cancelled")]


def test_a_resumed_run_reports_jobs_lost_to_the_crash(tmp_path: Path) -> None:
    """A job whose start the log holds but whose end it does not (the process died while it
    ran): on --resume it is recorded ended ``lost``, its creature is told (and here starts
    it again, under a new id), and ``terrarium log`` shows it."""
    from terrarium.channels.log import DurableLog, format_timeline
    from terrarium.runtime.recording import LOG_FILE

    folder = gate_team(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    with DurableLog(runs / LOG_FILE) as log:  # what the crashed process left behind
        run_id = log.start_run("jobs", folder)
        log.record_event(run_id, JobStarted(creature="w", job_id="job-1", call="gate",
                                            args={"label": "north"}))
        log.record_event(run_id, JobStarted(creature="w", job_id="job-2", call="gate",
                                            args={"label": "east"}))
        log.record_event(run_id, JobEnded(creature="w", job_id="job-2", call="gate",
                                          status="done", result="gate east opened"))
        log.set_run_status(run_id, "running")
    model = ScriptedModel([
        {"match": "[job from job-1]", "reply": call("gate", label="north")},
        {"match": "Started gate as job-3", "reply": "Started it again."},
        {"match": "[job from job-3]", "reply": "North is open."},
    ])
    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=runs, resume=run_id, audio="none", warm_up=False,
                          models={"w": model}, on_event=events.append)

    async def go() -> None:
        Gate.opened = anyio.Event()
        async with TeamRuntime(load_team(folder), opts) as rt:
            with anyio.fail_after(20):
                await until(lambda: idle_after(events, 1))  # it started job-3 again
                Gate.opened.set()
                while len(model.requests) < 3:  # noqa: ASYNC110
                    await anyio.sleep(0.01)
                await rt.wait_idle()

    anyio.run(go)
    inputs = [last_user(r) for r in model.requests]
    assert inputs[0].startswith("[job from job-1]"), inputs
    assert "status: lost" in inputs[0] and "start it again" in inputs[0], inputs[0]
    assert inputs[2].startswith("[job from job-3]") and "gate north opened" in inputs[2]
    ended = [(e.job_id, e.status) for e in events if isinstance(e, JobEnded)]
    assert ended == [("job-1", "lost"), ("job-3", "done")]  # job-2 had ended: not lost
    with DurableLog(runs / LOG_FILE) as log:
        shown = format_timeline(log.timeline(run_id), log.run(run_id))
        lost = [e for e in log.events(run_id) if e.get("status") == "lost"]
    assert [(e["kind"], e["job_id"]) for e in lost] == [("job_ended", "job-1")]
    assert "job_ended" in shown and "job_id=job-1 call=gate status=lost" in shown, shown


# -- the end of a run drops no job silently ---------------------------------------------------


def test_a_run_waits_for_its_jobs_and_delivers_their_results(tmp_path: Path) -> None:
    """The lead starts a job and ends its turn: the run is not over (nor idle) until the job
    ended and its result was answered."""
    folder = gate_team(tmp_path)
    model = ScriptedModel([
        {"match": "open north", "reply": call("gate", label="north")},
        {"match": "Started gate as job-1", "reply": "I will wait."},
        {"match": "[job from job-1]", "reply": "North is open."},
    ])
    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False,
                          models={"w": model}, on_event=events.append)

    held: list[bool] = []

    async def go() -> str:
        Gate.opened = anyio.Event()
        async with TeamRuntime(load_team(folder), opts) as rt:
            with anyio.fail_after(20):
                await rt.send_user("open north")
                async with anyio.create_task_group() as tg:
                    async def open_when_waited_for() -> None:
                        await until(lambda: idle_after(events, 1))
                        held.append(rt.busy())  # the running job keeps the team busy
                        Gate.opened.set()

                    tg.start_soon(open_when_waited_for)
                    await rt.wait_idle()
                    answered = len(model.requests)  # when the team was idle
                    tg.cancel_scope.cancel()
        assert (answered, held) == (3, [True])
        return rt.status

    assert anyio.run(go) == "completed"
    assert last_user(model.requests[-1]).startswith("[job from job-1]")
    assert [(e.job_id, e.status) for e in events if isinstance(e, JobEnded)] == [
        ("job-1", "done")]


def test_a_job_the_end_of_the_run_cuts_off_is_recorded_and_the_run_did_not_complete(
        tmp_path: Path) -> None:
    folder = gate_team(tmp_path)
    model = ScriptedModel([
        {"match": "open north", "reply": call("gate", label="north")},
        {"match": "Started gate as job-1", "reply": "I will wait."},
    ])
    events: list[Event] = []
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False,
                          models={"w": model}, on_event=events.append)

    async def go() -> TeamRuntime:
        Gate.opened = anyio.Event()  # never opened: the job runs until the run ends
        async with TeamRuntime(load_team(folder), opts) as rt:
            with anyio.fail_after(20):
                await rt.send_user("open north")
                await until(lambda: idle_after(events, 1))
        return rt

    rt = anyio.run(go)
    assert rt.status == "degraded"
    assert rt.lost_jobs == ["w: job-1 (gate) was cancelled by the end of the run"]
    from terrarium.channels.log import DurableLog
    from terrarium.runtime.recording import LOG_FILE

    with DurableLog(tmp_path / "runs" / LOG_FILE) as log:
        [run] = log.runs()
        ended = [e for e in log.events(run.run_id) if e["kind"] == "job_ended"]
    assert run.status == "degraded"
    assert [(e["job_id"], e["status"], e["result"]) for e in ended] == [
        ("job-1", "cancelled", "cancelled: the run ended before it finished")]


def test_terrarium_run_waits_for_a_single_creatures_job(tmp_path: Path) -> None:
    """``terrarium run`` with its input done: the job's result still reaches the creature,
    whose answer is printed; the run completed with the job ended done."""
    import os
    import subprocess
    import sys

    from terrarium.channels.log import DurableLog
    from terrarium.runtime.recording import LOG_FILE

    folder = tmp_path / "napper"
    folder.mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump({
        "name": "napper", "controller": {"provider": "scripted", "script": "script.yaml"},
        "skill_mode": "static", "tools": [f"{TOOLS}:Nap"], "background": {"nap": True}}))
    (folder / "script.yaml").write_text(yaml.safe_dump({"steps": [
        {"match": "go", "reply": call("nap", label="now")},
        {"match": "Started nap as job-1", "reply": "Napping in the background."},
        {"match": "[job from job-1]", "reply": "Woke up refreshed."}]}))
    root = Path(__file__).resolve().parents[2]
    res = subprocess.run(
        [sys.executable, "-m", "terrarium", "run", str(folder), "--input", "go",
         "--runs-dir", str(tmp_path / "runs")], cwd=root, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True,
        timeout=60, check=False)
    assert res.returncode == 0, res.stderr
    with DurableLog(tmp_path / "runs" / LOG_FILE) as log:
        [run] = log.runs()
        events = log.events(run.run_id)
    ended = [(e["job_id"], e["status"]) for e in events if e["kind"] == "job_ended"]
    said = [e["entry"]["text"] for e in events
            if e["kind"] == "transcript" and e["entry"]["kind"] == "assistant"]
    assert (run.status, ended) == ("completed", [("job-1", "done")])
    assert said == ["Napping in the background.", "Woke up refreshed."]


def test_a_result_that_ends_during_a_turn_is_not_dropped_by_the_next_one(
        tmp_path: Path) -> None:
    """A single creature (no inbox): its job ends during its second turn; the result is
    delivered when that turn ends, even though a third turn starts at once: it waits for
    that one, then gets a turn of its own."""
    from terrarium.config import load_single_creature

    folder = tmp_path / "solo"
    folder.mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump({
        "name": "solo", "tools": [f"{TOOLS}:Gate", f"{TOOLS}:Opener"], "skill_mode": "static",
        "background": {"gate": True}}))
    model = ScriptedModel([
        {"match": "start", "reply": call("gate", label="north")},
        {"match": "Started gate as job-1", "reply": "Started."},
        {"match": "open it", "reply": call("opener", label="now")},
        {"match": "Result of opener", "reply": "Opened."},
        {"match": "third", "reply": "Third."},
        {"match": "[job from job-1]", "reply": "The gate job is done."},
    ])
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False,
                          models={"solo": model})

    async def go() -> None:
        Gate.opened = anyio.Event()
        async with TeamRuntime(load_single_creature(folder), opts) as rt:
            with anyio.fail_after(20):
                await rt.ask("solo", "start")
                await rt.ask("solo", "open it")  # the job ends during this turn
                await rt.ask("solo", "third")  # starts before the result is delivered
                await rt.wait_idle()

    anyio.run(go)
    assert last_user(model.requests[-1]).startswith("[job from job-1]")
