"""The approval gate: tools a creature's ``approve`` list covers wait for a yes first.

Kept apart from the turn loop because it is a policy with its own events (requested,
decided) and its own failure mode: with nobody to ask, a call needing approval is refused
rather than run, and the refusal goes back to the model like any failed call.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from terrarium.events import ApprovalDecided, ApprovalRequested, Event
from terrarium.tools.approval import (
    NOBODY_TO_APPROVE,
    Approval,
    Approver,
    needs_approval,
    refusal_text,
)
from terrarium.tools.runner import ToolResult

__all__ = ["ApprovalGate"]


class ApprovalGate:
    """Asks ``approver`` (None: nobody to ask) before calls ``approve`` covers."""

    def __init__(self, creature: str, approve: frozenset[str], approver: Approver | None,
                 emit: Callable[[Event], None]) -> None:
        self.creature = creature
        self.approve = approve
        self.approver = approver
        self.emit = emit

    async def refusal(self, tool: str, args: dict[str, Any], turn: int) -> ToolResult | None:
        """None when the call may run; else the refused result to hand the model."""
        if not needs_approval(tool, self.approve):
            return None
        rid = f"{self.creature}-{turn}-{uuid.uuid4().hex[:8]}"
        self.emit(ApprovalRequested(creature=self.creature, tool=tool, request_id=rid,
                                    args=args))
        if self.approver is None:
            decision = Approval(False, NOBODY_TO_APPROVE, by="nobody")
        else:
            decision = await self.approver(self.creature, tool, args)
        self.emit(ApprovalDecided(creature=self.creature, tool=tool, request_id=rid,
                                  approved=decision.approved, reason=decision.reason,
                                  by=decision.by))
        return None if decision.approved else ToolResult(ok=False,
                                                         text=refusal_text(tool, decision))
