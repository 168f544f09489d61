"""What the shared log writer's tests share: counting the log's transactions."""

from __future__ import annotations

from terrarium.channels.log import DurableLog


def count_transactions(log: DurableLog) -> dict[str, int]:
    """Wrap ``log.write_batch`` to count transactions (``["tx"]``)."""
    counts = {"tx": 0}
    inner = log.write_batch

    def counted(ops: object) -> None:
        counts["tx"] += 1
        inner(ops)  # type: ignore[arg-type]

    log.write_batch = counted  # type: ignore[method-assign]
    return counts
