"""Turns that give way: at most N turns compute at once, none while it waits.

``terrarium serve`` runs every session's turns on one event loop beside the HTTP requests.
Each trip round an asyncio loop runs one step of every task that is ready, so with a
hundred turns ready a request (which needs several trips: read, handle, stream the event,
write) waited for a hundred turn steps per trip. A ``TurnGate`` lets at most ``limit``
turns hold it; the others wait in line (first come, first served) and take no step. A
turn holds the gate only while it computes: whenever it *waits* (its model's next
chunk, a tool, a person's answer, the log's commit, another task) the gate goes to the
next turn in line, and the turn gets in line again once what it waited for is there. A
plain checkpoint (``anyio.sleep(0)``: ready again at once) keeps the gate, so the turn
finishes its work without every other turn's steps in between, while requests still get
theirs.

Inputs first: while an input is being handled (``with gate.inputs_first():``, serve's
``SessionManager.send``), no turn gets the gate, and the one holding it gives it up at its
next checkpoint: a burst of inputs (a hundred sessions posting at once) is taken, logged
and answered with no turn step in between, and the turns they start run after it. Bounded:
once the turns have been held back ``defer_limit`` seconds, the first in line gets a step
(a stream of inputs slows the turns down, it cannot stop them), and an input that waits
(a full inbox, a slow barge-in) costs the turns at most that per step.

The turns in line are the creature loops' (one message per turn) and the framework's
wake-ups of creatures without an inbox (a trigger, a job's result: ``Supervisor.wake``).
A turn inside a turn (the same task: a sub-agent, ``ask``) is the outer one's.

How a wait is told from a checkpoint: the gate drives the turn's coroutine itself (as
asyncio's ``Task`` does) and looks at what each step hands the loop: a future (the task
sleeps until it is done) is a wait; ``None`` is a checkpoint. Only on asyncio; on another
backend the turn runs ungated. Tasks a turn starts (concurrent tool calls) are not
gated: the limit is how many turns compute at once in their own task, not a bound on
CPU (but a job's result, when it wakes its creature, starts a turn that is).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

__all__ = ["TurnGate"]

T = TypeVar("T")

class TurnGate:
    """At most ``limit`` turns compute at once; a waiting turn lets the next one in."""

    def __init__(self, limit: int = 1, *, defer_limit: float = 0.05) -> None:
        if limit < 1:
            raise ValueError(f"a turn gate needs a limit of at least 1, not {limit}")
        self.limit = limit
        self.holding = 0  # turns holding the gate now
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.handoffs = 0  # times a turn gave the gate up while it waited
        self.inputs = 0  # inputs being handled now: turns wait for them (``inputs_first``)
        self.defer_limit = defer_limit  # seconds the turns may be held back for inputs
        self.deferred = 0  # times a turn gave way (or was kept in line) for inputs
        self._since: float | None = None  # when the turns were first held back, this time
        self._timer: asyncio.TimerHandle | None = None
        self._inside: set[asyncio.Task[Any]] = set()  # tasks running a gated turn now

    def busy(self) -> bool:
        """Whether a turn computes now or waits in line for the gate."""
        return self.holding > 0 or bool(self.waiting)

    def inputs_first(self) -> _InputsFirst:
        """Within it (an input being handled) turns wait, up to ``defer_limit`` a step."""
        return _InputsFirst(self)

    def _input_done(self) -> None:
        """An input leaves ``inputs_first``: with none left, the turns in line go on."""
        self.inputs -= 1
        if not self.inputs:
            self._since = None
            if self.waiting:
                self._grant()

    def _deferring(self) -> bool:
        """Whether turns give way to inputs now: inputs are under way, and the turns have
        not been held back for ``defer_limit`` seconds already."""
        if not self.inputs:
            return False
        now = asyncio.get_running_loop().time()
        if self._since is None:
            self._since = now
            return True
        return now - self._since < self.defer_limit

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` (a turn) holding the gate while it computes."""
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no asyncio loop runs this (another anyio backend)
            task = None
        if task is None or task in self._inside:  # (a turn inside a turn: the outer one's)
            return await coro
        self._inside.add(task)  # (the task, not a context variable: a task a turn starts,
        try:  # a background job whose end wakes its creature, is a turn of its own)
            return await _Gated(self, coro)
        finally:
            self._inside.discard(task)

    def _acquire(self) -> Generator[Any, None, None]:
        if self.holding < self.limit and not self.waiting:
            if not self._deferring():
                self._took()
                return
            self.deferred += 1
            self._later()
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append(fut)
        try:
            yield from fut.__await__()
        except BaseException:
            if fut.done() and not fut.cancelled():  # handed the gate, then cancelled
                self._release()
            else:  # (a cancelled future may be gone already: ``_grant`` drops them)
                with contextlib.suppress(ValueError):
                    self.waiting.remove(fut)
                fut.cancel()
            raise

    def _took(self) -> None:
        self.holding += 1
        self._since = None  # the turns had their step: a new wait for inputs starts now

    def _release(self) -> None:
        self.holding -= 1
        self._grant()

    def _grant(self) -> None:
        """The gate to the first turns in line, unless inputs come first (then it is
        granted once they are done, or ``defer_limit`` after the turns were held back)."""
        while self.waiting and self.holding < self.limit:
            if self._deferring():
                self._later()
                return
            fut = self.waiting.popleft()
            if not fut.done():  # (a cancelled turn's future stays until it comes up)
                self._took()
                fut.set_result(None)

    def _later(self) -> None:
        """Try the line again once the turns have been held back ``defer_limit``."""
        if self._timer is None and self._since is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_at(self._since + self.defer_limit, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._grant()


class _InputsFirst:
    """``TurnGate.inputs_first``'s block (a class, not a ``contextmanager`` generator:
    once an input, at a third of the calls)."""

    __slots__ = ("gate",)

    def __init__(self, gate: TurnGate) -> None:
        self.gate = gate

    def __enter__(self) -> None:
        self.gate.inputs += 1

    def __exit__(self, *exc: object) -> None:
        self.gate._input_done()


class _Gated:
    """Drives one coroutine step by step, holding the gate but while it waits."""

    __slots__ = ("coro", "gate")

    def __init__(self, gate: TurnGate, coro: Coroutine[Any, Any, Any]) -> None:
        self.gate = gate
        self.coro = coro

    def __await__(self) -> Generator[Any, None, Any]:
        gate, coro = self.gate, self.coro
        held = False
        value: Any = None
        error: BaseException | None = None
        try:
            while True:
                if held and error is None and gate.inputs and gate._deferring():
                    gate.deferred += 1  # inputs are being handled: they go first, and the
                    gate._release()  # turn waits in line (up to ``defer_limit``)
                    held = False
                if not held and error is None:
                    try:
                        yield from gate._acquire()
                        held = True
                    except GeneratorExit:
                        raise
                    except BaseException as exc:  # cancelled in line: the turn is told
                        error = exc
                try:
                    if error is not None:
                        step, error = coro.throw(error), None
                    else:
                        step = coro.send(value)
                except StopIteration as stop:
                    return stop.value
                value = None
                if step is not None and held:  # a wait: the next turn in line goes on
                    gate._release()
                    gate.handoffs += 1
                    held = False
                try:
                    value = yield step
                except GeneratorExit:
                    raise
                except BaseException as exc:  # cancellation, thrown in by the task: told
                    error = exc  # to the turn at once, not after a wait in line
        finally:
            if held:
                gate._release()
            coro.close()
