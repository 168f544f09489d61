"""Background jobs: a tool or sub-agent call that runs while its creature goes on.

A call listed in the creature's ``background:`` config gets a ``background`` argument (its
default from the config). When it is true the creature gets a job id at once and the call
runs as a job; the framework calls ``jobs`` (list with status), ``wait`` (one job or any,
with a timeout) and ``read_job`` (status and output so far) look at it. A job that ends
while its creature is idle, or whose result nobody read before its turn ended, arrives
as an incoming message (channel ``job``, sender the job id).

Jobs run in a task group the runtime hands down (:class:`JobHost`), never as stray tasks:
they end with the run, and :meth:`JobManager.cancel_all` ends them when their creature
stops. The end of a run drops none silently: while a job runs or its result waits to be
delivered the team is not idle (:meth:`JobManager.pending`), and a job still running when
the run ends anyway (``--timeout``, ``--max-turns``, Ctrl-C, leaving the runtime) is
recorded ended ``cancelled`` by :meth:`JobManager.end_of_run`. ``JobStarted``/``JobEnded``
events put their state in the log; a resumed run (:meth:`JobManager.resume`) records each
job the crash cut off as ended ``lost`` and tells its creature, so the model may start it
again.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import anyio
from pydantic import BaseModel, ConfigDict, Field, create_model

from terrarium.config.models import CreatureConfig
from terrarium.controller.plugins import Hooks, load_plugins
from terrarium.errors import ToolError
from terrarium.events import Event, JobEnded, JobStarted
from terrarium.tools.base import NoArgs, Tool, ToolContext
from terrarium.tools.delegate import STATE_PROGRESS
from terrarium.tools.registry import ToolRegistry
from terrarium.tools.runner import ToolResult

__all__ = [
    "JOB_TOOLS",
    "LOST_RESULT",
    "STATE_JOBS",
    "STATE_JOB_HOST",
    "Job",
    "JobHost",
    "JobManager",
    "creature_hooks",
    "with_background",
]

STATE_JOBS = "jobs"
STATE_JOB_HOST = "job_host"
JobStatus = Literal["running", "done", "failed", "cancelled", "lost"]
CUT_RESULT = "cancelled: the run ended before it finished"
LOST_RESULT = ("lost: the run stopped (a crash) before this job finished, so its result is "
               "unknown; start it again if you still need it")


class JobHost(Protocol):
    """What the runtime hands down: where jobs run, and how a result reaches the creature."""

    def start_soon(self, func: Callable[..., Awaitable[Any]], *args: Any) -> None: ...

    async def deliver(self, creature: str, job_id: str, payload: dict[str, Any]) -> None: ...


@dataclass(slots=True)
class Job:
    id: str
    call: str
    args: dict[str, Any]
    status: JobStatus = "running"
    result: str = ""
    output: list[str] = field(default_factory=list)
    scope: anyio.CancelScope | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    reported: bool = False  # its result was read in a turn: no message needed
    ended: bool = False  # its JobEnded is recorded (by the job itself, or the run's end)

    def line(self) -> str:
        return f"{self.id} {self.call} {self.status}"

    def payload(self) -> dict[str, Any]:
        """The message its creature gets when the job ends (channel ``job``)."""
        return {"job": self.id, "call": self.call, "status": self.status, "result": self.result}

    def report(self) -> str:
        head = f"Job {self.id} ({self.call}) {self.status}"
        return f"{head}: {self.result}" if self.status != "running" else head + "."


class JobManager:
    """One creature's jobs."""

    def __init__(self, creature: str, emit: Callable[[Event], None]) -> None:
        self.creature = creature
        self.emit = emit
        self.jobs: dict[str, Job] = {}
        self.busy = False
        self._ids = itertools.count(1)
        self._delivering = 0  # results on their way to the creature

    def resume(self, started: Mapping[str, JobStarted], ended: set[str]) -> list[Job]:
        """A resumed run takes up the log's jobs of this creature: new job ids go on after
        theirs, and each job whose start was recorded but whose end was not (the process
        died while it ran) is recorded ended as ``lost``; returns those, to be told to the
        creature (so the model can start it again)."""
        numbers = [int(j.rsplit("-", 1)[1]) for j in started if j.rsplit("-", 1)[-1].isdigit()]
        self._ids = itertools.count(max(numbers, default=0) + 1)
        lost: list[Job] = []
        for job_id, ev in started.items():
            if job_id in ended or job_id in self.jobs:
                continue
            job = Job(job_id, ev.call, dict(ev.args), status="lost", result=LOST_RESULT,
                      reported=True)
            job.done.set()
            self.jobs[job_id] = job
            self.emit(JobEnded(creature=self.creature, job_id=job_id, call=job.call,
                               status="lost", result=job.result))
            lost.append(job)
        return lost

    def pending(self) -> bool:
        """Whether a job still runs or a result has not reached the creature yet (the team
        is not idle while one does)."""
        return self._delivering > 0 or any(
            j.status == "running" or (not j.reported and j.status != "cancelled")
            for j in self.jobs.values())

    def end_of_run(self) -> tuple[list[JobEnded], list[Job]]:
        """The run ends now: each running job is cancelled and its end returned (to be
        recorded ``cancelled``); also returns the finished jobs whose result never reached
        the creature. Either way the work is lost, and the run says so."""
        cut: list[JobEnded] = []
        for job in self.jobs.values():
            if job.status == "running":
                job.status, job.result, job.ended, job.reported = (
                    "cancelled", CUT_RESULT, True, True)
                job.done.set()
                if job.scope is not None:
                    job.scope.cancel()
                cut.append(JobEnded(creature=self.creature, job_id=job.id, call=job.call,
                                    status="cancelled", result=job.result))
        unread = [j for j in self.jobs.values()
                  if not j.reported and j.status in ("done", "failed")]
        return cut, unread

    def set_busy(self, busy: bool, host: JobHost | None) -> None:
        """Told at each turn's start and end; at the end, unread results are delivered."""
        self.busy = busy
        if not busy and host is not None:
            for job in self.jobs.values():
                if job.status != "running" and not job.reported:
                    job.reported = True
                    self._delivering += 1  # counted from now: the team is not idle yet
                    host.start_soon(self._deliver, host, job)

    def start(self, host: JobHost, call: str, args: dict[str, Any],
              run: Callable[[ToolContext], Awaitable[ToolResult]], ctx: ToolContext) -> Job:
        job = Job(f"job-{next(self._ids)}", call, args)
        self.jobs[job.id] = job
        self.emit(JobStarted(creature=self.creature, job_id=job.id, call=call, args=args))
        # the job's own context: the same tools and state, plus where its output goes
        jctx = dataclasses.replace(ctx, state={**ctx.state, STATE_PROGRESS: job.output})
        host.start_soon(self._run, host, job, run, jctx)
        return job

    async def _run(self, host: JobHost, job: Job,
                   run: Callable[[ToolContext], Awaitable[ToolResult]], ctx: ToolContext) -> None:
        with anyio.CancelScope() as scope:
            job.scope = scope
            try:
                res = await run(ctx)
                job.status, job.result = ("done" if res.ok else "failed"), res.text
            except Exception as exc:  # run_tool never raises; a sub-agent host might
                job.status, job.result = "failed", f"{type(exc).__name__}: {exc}"
        if job.ended:  # the run's end recorded it (end_of_run)
            return
        if scope.cancelled_caught or job.status == "running":
            job.status, job.result = "cancelled", "cancelled before it finished"
        job.done.set()
        job.ended = True
        self.emit(JobEnded(creature=self.creature, job_id=job.id, call=job.call,
                           status=job.status, result=job.result))
        if not self.busy and not job.reported and job.status != "cancelled":
            job.reported = True
            self._delivering += 1
            await self._deliver(host, job)

    async def _deliver(self, host: JobHost, job: Job) -> None:
        """Hand ``job``'s result to the creature (the caller counted it in ``_delivering``)."""
        try:
            await host.deliver(self.creature, job.id, job.payload())
        finally:
            self._delivering -= 1

    def get(self, job_id: str) -> Job:
        if job_id not in self.jobs:
            known = ", ".join(self.jobs) or "none yet"
            raise ToolError(f"There is no job {job_id!r} (jobs: {known}).")
        return self.jobs[job_id]

    async def wait(self, job_id: str | None, seconds: float) -> list[Job]:
        """Wait for ``job_id`` (or for any running job) at most ``seconds``."""
        if job_id is not None:
            targets = [self.get(job_id)]
        else:
            targets = [j for j in self.jobs.values() if j.status == "running"]
            finished = [j for j in self.jobs.values() if j.status != "running" and not j.reported]
            if finished or not targets:
                return finished
        with anyio.move_on_after(seconds):
            async with anyio.create_task_group() as tg:
                async def first(job: Job) -> None:
                    await job.done.wait()
                    tg.cancel_scope.cancel()

                for j in targets:
                    tg.start_soon(first, j)
        return [j for j in targets if j.status != "running"]

    def cancel_all(self) -> None:
        """The creature stopped: its running jobs end (as ``cancelled``)."""
        for job in self.jobs.values():
            if job.status == "running" and job.scope is not None:
                job.scope.cancel()


def _manager(ctx: ToolContext) -> JobManager:
    jobs = ctx.state.get(STATE_JOBS)
    if jobs is None:
        raise ToolError("This creature runs no background jobs.")
    return jobs


class JobsTool(Tool):
    name = "jobs"
    summary = "List your background jobs with their status."
    concurrency_safe = True
    args_model = NoArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        jobs = _manager(ctx).jobs.values()
        return "\n".join(j.line() for j in jobs) or "No jobs."


class WaitArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job: str = Field("", description="The job id to wait for (empty: whichever ends first).")
    timeout: float = Field(30.0, ge=0, le=3600, description="Seconds to wait at most.")


class WaitTool(Tool):
    name = "wait"
    summary = "Wait for a background job (or any) to end; returns its result."
    concurrency_safe = True
    args_model = WaitArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, WaitArgs)
        done = await _manager(ctx).wait(args.job or None, args.timeout)
        for j in done:
            j.reported = True
        if not done:
            return f"Nothing ended within {args.timeout:g} s."
        return "\n".join(j.report() for j in done)


class ReadJobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job: str = Field(description="The job id.")


class ReadJobTool(Tool):
    name = "read_job"
    summary = "A background job's status and its output so far."
    concurrency_safe = True
    args_model = ReadJobArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, ReadJobArgs)
        job = _manager(ctx).get(args.job)
        lines = [job.report()]
        if job.status == "running":
            lines.extend(job.output or ["(no output yet)"])
        else:
            job.reported = True
        return "\n".join(lines)


JOB_TOOLS: tuple[type[Tool], ...] = (JobsTool, ReadJobTool, WaitTool)


def with_background(registry: ToolRegistry, defaults: Mapping[str, bool]) -> ToolRegistry:
    """The registry with a ``background`` argument on each listed call, plus the job tools.

    The listed tool is replaced by a subclass whose args model adds the flag (its default
    from config), so the prompt, the parser and the grammar all show it.
    """
    if not defaults:
        return registry
    out = ToolRegistry()
    for name in registry.names():
        tool = registry.get(name)
        if name in defaults:
            args = create_model(f"{tool.args_model.__name__}Job", __base__=tool.args_model,
                                background=(bool, Field(defaults[name], description=(
                                    "Run as a background job: you get a job id at once "
                                    "and its result later."))))
            tool = type(tool.__name__, (tool,), {"args_model": args})
        out.register(tool, registry.owner(name))
    for name in sorted(set(defaults) - set(registry.names())):
        registry.get(name)  # a RegistryError naming the known calls
    for tool in JOB_TOOLS:
        out.register(tool, "the framework (background jobs)")
    return out


def creature_hooks(creature: str, config: CreatureConfig, emit: Callable[[Event], None],
                   ctx: ToolContext) -> Hooks:
    """The loop's hooks for one creature: its plugins, and its jobs if it runs any."""
    hooks = Hooks(load_plugins(config.plugins), creature=creature, emit=emit)
    if not config.background:
        return hooks
    ctx.state[STATE_JOBS] = JobManager(creature, emit)

    async def starter(name: str, raw: Mapping[str, Any],
                      run: Callable[[ToolContext], Awaitable[ToolResult]],
                      tctx: ToolContext) -> ToolResult | None:
        host: JobHost | None = tctx.state.get(STATE_JOB_HOST)
        if not raw.get("background") or host is None:
            return None  # foreground (no host: a controller run on its own)
        args = {k: v for k, v in raw.items() if k != "background"}
        job = tctx.state[STATE_JOBS].start(host, name, args, run, tctx)
        return ToolResult(ok=True, text=f"Started {name} as {job.id}; use wait or read_job "
                          "with that id, or go on: its result comes as a message.")

    hooks.starter = starter
    # looked up at each call: a rebuilt controller keeps the creature's manager
    hooks.listeners.append(lambda busy: ctx.state[STATE_JOBS].set_busy(
        busy, ctx.state.get(STATE_JOB_HOST)))
    return hooks
