"""Tools used by the controller and runtime tests (referenced by dotted path in configs).

They record what happened on class-level state so a test can check ordering and overlap
without timing anything: parallelism is proven by a rendezvous that only completes when
every concurrency-safe call is running at once.
"""

from __future__ import annotations

from typing import Any, ClassVar

import anyio
import anyio.lowlevel
from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext


class LabelArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="A name for this call.")


class FlagArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    loud: bool = Field(description="Whether to shout.")
    word: str = Field(default="hi", description="The word.")


class Lookup(Tool):
    """Returns a fact whose text the scripted model can match on in the next round."""

    name = "lookup"
    summary = "Look up a fact by label."
    documentation = "Returns the fact stored under a label. Labels are short words."
    args_model = LabelArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, LabelArgs)
        return f"fact-{args.label}: the sky is green"


class Explode(Tool):
    """Always fails, once with a ToolError and once with an unexpected exception."""

    name = "explode"
    summary = "A tool that fails."
    args_model = LabelArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, LabelArgs)
        if args.label == "typed":
            raise ToolError(f"the fuse {args.label!r} is wet")
        raise RuntimeError("kaboom")


class Shout(Tool):
    """Echoes the converted boolean so a test sees what the tool received."""

    name = "shout"
    summary = "Say a word, loudly or not."
    args_model = FlagArgs
    received: ClassVar[list[tuple[object, str]]] = []

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, FlagArgs)
        Shout.received.append((args.loud, args.word))
        return args.word.upper() if args.loud else args.word


class Rendezvous(Tool):
    """Concurrency-safe: waits until ``expected`` calls are inside ``run`` at the same time."""

    name = "meet"
    summary = "Meet the others (safe to run in parallel)."
    args_model = LabelArgs
    concurrency_safe = True
    expected: ClassVar[int] = 3
    arrived: ClassVar[list[str]] = []
    peak: ClassVar[int] = 0
    inside: ClassVar[int] = 0
    everyone: ClassVar[anyio.Event | None] = None

    @classmethod
    def reset(cls, expected: int) -> None:
        cls.expected = expected
        cls.arrived = []
        cls.peak = 0
        cls.inside = 0
        cls.everyone = anyio.Event()

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, LabelArgs)
        cls = Rendezvous
        assert cls.everyone is not None
        cls.inside += 1
        cls.peak = max(cls.peak, cls.inside)
        cls.arrived.append(args.label)
        if len(cls.arrived) >= cls.expected:
            cls.everyone.set()
        # a serial run would wait here forever; the guard turns that into a failed call
        with anyio.move_on_after(5) as guard:
            await cls.everyone.wait()
        cls.inside -= 1
        if guard.cancelled_caught:
            raise ToolError(f"{args.label} met nobody")
        return f"{args.label} met {len(cls.arrived)}"


class Ordered(Tool):
    """Not concurrency-safe: records entry and exit, yielding in between."""

    name = "step"
    summary = "Do one step (must run in order)."
    args_model = LabelArgs
    events: ClassVar[list[str]] = []
    inside: ClassVar[int] = 0
    peak: ClassVar[int] = 0

    @classmethod
    def reset(cls) -> None:
        cls.events = []
        cls.inside = 0
        cls.peak = 0

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, LabelArgs)
        cls = Ordered
        cls.inside += 1
        cls.peak = max(cls.peak, cls.inside)
        cls.events.append(f"start {args.label}")
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        cls.events.append(f"end {args.label}")
        cls.inside -= 1
        return f"did {args.label}"


class Echo(Tool):
    """Says back its label: the redactor test's tool output."""

    name = "echo"
    summary = "Say the label back."
    args_model = LabelArgs
    concurrency_safe = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, LabelArgs)
        return f"echo: {args.label}"


class Gate(Tool):
    """Waits until the test opens ``Gate.opened`` (an anyio.Event set by the test), writing
    progress lines on the way: the background-job tests' long-running tool."""

    name = "gate"
    summary = "Wait at the gate."
    args_model = LabelArgs
    concurrency_safe = True
    opened: ClassVar[Any] = None

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, LabelArgs)
        progress = ctx.state.get("job_progress")
        if progress is not None:
            progress.append(f"waiting at {args.label}")
        await Gate.opened.wait()
        return f"gate {args.label} opened"


class Opener(Tool):
    """Opens ``Gate.opened``: a job waiting at the gate ends during the turn that calls it."""

    name = "opener"
    summary = "Open the gate."
    args_model = LabelArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        Gate.opened.set()
        return "opened"


class Nap(Tool):
    """Sleeps a little, then answers: a job that outlives the turn that started it."""

    name = "nap"
    summary = "Take a short nap."
    args_model = LabelArgs
    concurrency_safe = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, LabelArgs)
        await anyio.sleep(0.3)
        return f"napped {args.label}"


class Stall(Tool):
    """Blocks its thread for 20 s, as careless tool code does (the fault tests' case)."""

    name = "stall"
    summary = "Wait a long time."
    args_model = LabelArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        import time

        time.sleep(20)  # noqa: ASYNC251 (blocking on purpose: the loop freezes)
        return "woke up"


class SyncStall(Tool):
    """Blocks for 20 s in plain synchronous code, which the runner puts in a thread."""

    name = "sync_stall"
    summary = "Wait a long time, synchronously."
    args_model = LabelArgs

    def run(self, args: BaseModel, ctx: ToolContext) -> str:  # type: ignore[override]
        import time

        time.sleep(20)
        return "woke up"


class Quit(Tool):
    """Raises SystemExit, as a tool calling sys.exit() would."""

    name = "quit"
    summary = "Leave."
    args_model = LabelArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        raise SystemExit(3)
