"""A test-only hook that kills the process at a chosen point, to prove crash recovery.

Inert unless the environment sets ``TERRARIUM_TEST_KILL_AT=N`` (SIGKILL at the Nth
crash point reached) or ``TERRARIUM_TEST_CRASHPOINTS=FILE`` (append each point's number and
label to FILE, to learn how many there are). Both are read once, at import; when neither is
set, :func:`crashpoint` returns at once. Nothing in a normal run sets them.
"""

from __future__ import annotations

import os
import signal

__all__ = ["ARMED", "crashpoint"]

_KILL_AT = int(os.environ.get("TERRARIUM_TEST_KILL_AT", "0") or 0)
_TRACE = os.environ.get("TERRARIUM_TEST_CRASHPOINTS") or None
_ARMED = bool(_KILL_AT or _TRACE)
ARMED = _ARMED  # hot paths test this constant instead of calling crashpoint()
_count = 0


def crashpoint(label: str) -> None:
    """Count this point; at the chosen one, die at once as a crash would (test only)."""
    if not _ARMED:
        return
    global _count
    _count += 1
    if _TRACE is not None:
        with open(_TRACE, "a", encoding="utf-8") as fh:
            fh.write(f"{_count} {label}\n")
    if _count == _KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)
