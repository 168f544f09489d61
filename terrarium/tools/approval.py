"""Approval of tool calls that act: who says yes or no, and what they said.

A creature lists the tools that must not run without a human's yes (``approve:`` in its
config). The controller asks an ``Approver`` before each such call; the runtime hands one
down (the terminal prompt, the monitor, or ``approve_all`` for ``--yes``). With none, the
call is refused at once with a result saying why: a run nobody watches must not hang.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["EVERY_TOOL", "NOBODY_TO_APPROVE", "Approval", "Approver", "approve_all",
           "needs_approval", "refusal_text"]

EVERY_TOOL = "*"
"""In ``approve:``, stands for every tool of the creature."""

NOBODY_TO_APPROVE = (
    "nobody is there to approve it; a run on a terminal, in the monitor or with --yes can"
)


@dataclass(frozen=True, slots=True)
class Approval:
    """A human's (or a policy's) decision on one call; ``by`` says who decided."""

    approved: bool
    reason: str = ""
    by: str = ""


class Approver(Protocol):
    """Decides whether ``creature`` may call ``tool`` with ``args``; may wait for a human."""

    async def __call__(self, creature: str, tool: str, args: Mapping[str, Any]) -> Approval: ...


async def approve_all(creature: str, tool: str, args: Mapping[str, Any]) -> Approval:
    """``--yes``: every call is approved for the whole run."""
    return Approval(True, "every call approved for this run (--yes)", by="--yes")


def needs_approval(tool: str, approve: Collection[str]) -> bool:
    """Whether ``approve`` (a creature's ``approve:`` list) covers ``tool``."""
    return tool in approve or EVERY_TOOL in approve


def refusal_text(tool: str, decision: Approval) -> str:
    """The tool result the model reads when a call was not approved."""
    reason = decision.reason.strip() or "no reason given"
    return f"Not run: the call to {tool} was not approved ({reason})."
