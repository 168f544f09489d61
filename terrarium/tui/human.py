"""The human at the monitor: approvals and ``ask_user`` questions, shown as dialogs.

The runtime is built before the app, so the approver and answerer it is handed cannot be
the app itself: :class:`MonitorHuman` is the meeting point. A creature's request waits here
until the attached app shows it (one dialog at a time, in order) and the human decides;
closing the monitor refuses whatever still waits, so no creature hangs on a gone window.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import anyio
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from terrarium.tools.approval import Approval
from terrarium.tools.preview import call_preview

__all__ = ["ApprovalScreen", "HumanRequest", "MonitorHuman", "QuestionScreen"]

BY = "monitor"


@dataclass(slots=True, eq=False)
class HumanRequest:
    """One thing a creature waits for: an approval (``tool``, ``args``) or an answer."""

    kind: Literal["approval", "question"]
    creature: str
    tool: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    question: str = ""
    choices: tuple[str, ...] = ()
    done: anyio.Event = field(default_factory=anyio.Event)
    decision: Approval | None = None
    answer: str | None = None

    def decide(self, decision: Approval) -> None:
        self.decision = decision
        self.done.set()

    def reply(self, answer: str | None) -> None:
        self.answer = answer
        self.done.set()


class MonitorHuman:
    """Approver (``approve``) and answerer (``answer``) for a run under the monitor."""

    def __init__(self) -> None:
        self.pending: deque[HumanRequest] = deque()
        self._listener: Callable[[], None] | None = None
        self.showing: HumanRequest | None = None  # taken by the app, not yet decided
        self.closed = False

    def attach(self, listener: Callable[[], None]) -> None:
        """The app says it is there; ``listener`` is called whenever a request arrives."""
        self._listener = listener
        if self.pending:
            listener()

    def detach(self) -> None:
        """The app is gone: refuse what waits, and every later request at once."""
        self._listener = None
        self.closed = True
        if self.showing is not None and not self.showing.done.is_set():
            self._refuse(self.showing)
        while self.pending:
            self._refuse(self.pending.popleft())

    def next(self) -> HumanRequest | None:
        """The oldest waiting request, now the one on screen (None: nothing waits)."""
        self.showing = self.pending.popleft() if self.pending else None
        return self.showing

    @staticmethod
    def _refuse(req: HumanRequest) -> None:
        if req.kind == "approval":
            req.decide(Approval(False, "the monitor was closed before anyone decided", by=BY))
        else:
            req.reply(None)

    async def _wait(self, req: HumanRequest) -> HumanRequest:
        if self.closed:
            self._refuse(req)
            return req
        self.pending.append(req)
        if self._listener is not None:
            self._listener()
        try:
            await req.done.wait()
        finally:
            if req in self.pending:  # cancelled while waiting
                self.pending.remove(req)
        return req

    async def approve(self, creature: str, tool: str, args: Mapping[str, Any]) -> Approval:
        req = await self._wait(HumanRequest("approval", creature, tool=tool, args=dict(args)))
        assert req.decision is not None
        return req.decision

    async def answer(self, creature: str, question: str,
                     choices: Sequence[str]) -> str | None:
        req = await self._wait(HumanRequest("question", creature, question=question,
                                            choices=tuple(choices)))
        return req.answer


_BOX_CSS = """
{name} {{ align: center middle; }}
#{box} {{ width: 90%; max-width: 100; height: auto; max-height: 90%;
          border: round $warning; padding: 0 1; background: $surface; }}
.human-title {{ text-style: bold; }}
.human-args {{ height: auto; max-height: 16; background: $boost; }}
.human-buttons {{ height: 1; margin-top: 1; }}
.human-buttons Button {{ margin-right: 2; }}
"""


def _preview(tool: str, args: Mapping[str, Any]) -> Text:
    """The call as a person checks it: a diff coloured as diffs are, a command, or JSON."""
    text = Text()
    for line in call_preview(tool, args).splitlines():
        style = ""
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        text.append(line + "\n", style=style)
    text.rstrip()
    return text


class ApprovalScreen(ModalScreen[Approval]):
    """Shows a call and its arguments: approve (y) or deny (n); r types a reason, which
    goes back to the model (enter in it denies)."""

    DEFAULT_CSS = _BOX_CSS.format(name="ApprovalScreen", box="approval-box")

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "approve", "Approve"),
        Binding("n", "deny", "Deny"),
        Binding("r", "reason", "Reason"),
        Binding("escape", "deny", "Deny", show=False),
    ]

    def __init__(self, request: HumanRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        req = self.request
        with Vertical(id="approval-box"):
            yield Static(f"{req.creature} wants to call {req.tool}", id="approval-title",
                         classes="human-title", markup=False)
            with VerticalScroll(classes="human-args"):
                yield Static(_preview(req.tool, req.args), id="approval-args",
                             markup=False)
            yield Input(placeholder="reason (sent back to the model when denied; enter denies)",
                        id="approval-reason", compact=True)
            with Horizontal(classes="human-buttons"):
                yield Button("Approve y", id="approval-yes", variant="success", compact=True)
                yield Button("Deny n", id="approval-no", variant="error", compact=True)

    def on_mount(self) -> None:
        # the app may be closing while this dialog mounts (its widgets already gone)
        for button in self.query("#approval-yes").results(Button):
            button.focus()

    def _reason(self) -> str:
        return self.query_one("#approval-reason", Input).value.strip()

    def action_reason(self) -> None:
        self.query_one("#approval-reason", Input).focus()

    def action_approve(self) -> None:
        self.dismiss(Approval(True, self._reason() or "approved in the monitor", by=BY))

    def action_deny(self) -> None:
        self.dismiss(Approval(False, self._reason() or "the user said no", by=BY))

    @on(Button.Pressed, "#approval-yes")
    def _yes(self) -> None:
        self.action_approve()

    @on(Button.Pressed, "#approval-no")
    def _no(self) -> None:
        self.action_deny()

    @on(Input.Submitted, "#approval-reason")
    def _reason_given(self) -> None:
        self.action_deny()


class QuestionScreen(ModalScreen[str | None]):
    """A creature's question; the answer is typed in and sent with enter (escape: none)."""

    DEFAULT_CSS = _BOX_CSS.format(name="QuestionScreen", box="question-box")

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "skip", "No answer")]

    def __init__(self, request: HumanRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        req = self.request
        with Vertical(id="question-box"):
            yield Static(f"{req.creature} asks: {req.question}", id="question-title",
                         classes="human-title", markup=False)
            if req.choices:
                yield Static("choices: " + " / ".join(req.choices), markup=False)
            yield Input(placeholder="your answer (enter sends, escape: no answer)",
                        id="question-answer", compact=True)

    def on_mount(self) -> None:
        for answer in self.query("#question-answer").results(Input):  # none while closing
            answer.focus()

    def action_skip(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted, "#question-answer")
    def _answered(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)
