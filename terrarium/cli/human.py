"""The human at the terminal: one reader of stdin shared by user input, approvals and
``ask_user`` questions.

Two readers of one stdin would steal each other's lines, so there is exactly one
(:class:`StdinRouter`). It reads a line only when someone waits for one, and a waiting
prompt (an approval, a question) gets the line before the user-input reader does: while a
creature waits for a yes, the next line typed answers it. Reading on demand also makes a
piped stdin deterministic (``--approve-from-stdin``): the line after the one that started a
turn answers that turn's first prompt.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import anyio.from_thread
import anyio.lowlevel

from terrarium.tools.approval import Approval
from terrarium.tools.preview import call_preview

__all__ = ["StdinRouter", "TerminalHuman", "parse_decision"]

_YES = {"y", "yes", "ok", "approve", "approved"}


@dataclass(slots=True, eq=False)
class _Waiter:
    prompt: bool
    done: anyio.Event = field(default_factory=anyio.Event)
    line: str | None = None


class StdinRouter:
    """The only reader of stdin; run :meth:`run` in a task, call :meth:`readline`."""

    def __init__(self, readline: Callable[[], str] | None = None) -> None:
        self._readline = readline or sys.stdin.readline
        self._waiters: list[_Waiter] = []
        self._wanted = anyio.Event()
        self.eof = False

    async def run(self) -> None:
        """Read a line whenever someone waits; give it to a prompt first, else to input."""
        while True:
            if not self._waiters:
                self._wanted = anyio.Event()
                await self._wanted.wait()
                continue
            line = await self._read()
            if not line:
                self.eof = True
                for w in self._waiters:
                    w.done.set()
                self._waiters.clear()
                return
            if not self._waiters:  # the waiter was cancelled meanwhile: the line is dropped
                continue
            w = next((w for w in self._waiters if w.prompt), self._waiters[0])
            self._waiters.remove(w)
            w.line = line.rstrip("\r\n")
            w.done.set()

    async def _read(self) -> str:
        """One line, read in a daemon thread of its own: a read that never returns (a
        terminal nobody types at, a pipe left open) must not keep the process alive once
        the run is over (``--timeout``); a worker thread of anyio's would be waited for."""
        done = anyio.Event()
        box: list[str] = []
        token = anyio.lowlevel.current_token()

        def work() -> None:
            try:
                box.append(self._readline())
            except (OSError, ValueError):  # stdin closed under us: the end of input
                box.append("")
            with contextlib.suppress(RuntimeError):  # the run is over: nobody waits
                anyio.from_thread.run_sync(done.set, token=token)

        threading.Thread(target=work, daemon=True, name="stdin reader").start()
        await done.wait()
        return box[0]

    async def readline(self, *, prompt: bool = False) -> str | None:
        """The next line for this caller (``prompt``: before user input); None at the end."""
        if self.eof:
            return None
        w = _Waiter(prompt)
        self._waiters.append(w)
        self._wanted.set()
        try:
            await w.done.wait()
        finally:
            if w in self._waiters:
                self._waiters.remove(w)
        return w.line


def parse_decision(line: str | None, by: str) -> Approval:
    """``y``/``yes`` approves; anything else refuses, its text (less a leading no) the reason."""
    if line is None:
        return Approval(False, "no answer came: the input ended", by=by)
    text = line.strip()
    if text.lower() in _YES:
        return Approval(True, "approved by the user", by=by)
    low = text.lower()
    for word in ("no", "n"):
        if low == word or low.startswith((word + " ", word + ",", word + ":", word + ".")):
            text = text[len(word):].lstrip(" ,:.")
            break
    return Approval(False, text or "the user said no", by=by)


class TerminalHuman:
    """Approver and answerer that ask at the terminal, one prompt at a time."""

    def __init__(self, router: StdinRouter, out: TextIO | None = None) -> None:
        self.router = router
        self.out = out or sys.stdout
        self._lock = anyio.Lock()

    def _say(self, text: str, *, end: str = "\n") -> None:
        self.out.write(text + end)
        self.out.flush()

    async def approve(self, creature: str, tool: str, args: Mapping[str, Any]) -> Approval:
        async with self._lock:
            shown = json.dumps(dict(args), ensure_ascii=False, sort_keys=True)
            self._say(f"\n[approve] {creature} wants to call {tool} {shown}")
            if tool in ("edit", "multi_edit", "write_file"):  # what it changes, as a diff
                for line in call_preview(tool, args).splitlines():
                    self._say(f"  {line}")
            self._say("approve? [y = yes; anything else = no, the text is the reason] ", end="")
            line = await self.router.readline(prompt=True)
        decision = parse_decision(line, "terminal")
        self._say(f"  [{'approved' if decision.approved else 'denied'}] {tool}"
                  + ("" if decision.approved else f": {decision.reason}"))
        return decision

    async def answer(self, creature: str, question: str,
                     choices: Sequence[str]) -> str | None:
        async with self._lock:
            self._say(f"\n[question] {creature} asks: {question}")
            if choices:
                self._say("  choices: " + " / ".join(choices))
            self._say("answer> ", end="")
            line = await self.router.readline(prompt=True)
        return line.strip() if line is not None and line.strip() else None
