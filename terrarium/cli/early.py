"""``terrarium run``'s head start, begun before the command's own modules load.

The head start (``llm/server_process.py``) loads the model server a team used last time in
a child process while this one imports. A second start waits on that child: it answered
~0.1 s of CPU after the run was ready for it (the child's ~0.45 s of CPU from a spawn ~0.09 s
into the run; docs/performance-history.md, "The second start's 0.3 s"). Begun from
:func:`terrarium.cli.entry`, before the parser, YAML and the command's modules load, the
spawn comes ~0.04 s of CPU sooner.

The team's folder is read from the arguments without the parser, and only when that is
plain (``run``, then known options and one folder); anything else (``--help``, an
abbreviated option, ``--broker``, a second positional) leaves the head start to
``cmd_run`` as before. ``cmd_run`` takes the early child only for the very team the parser
found (:func:`take`); one it does not take is stopped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from terrarium.llm.server_process import Prestart, share_env

__all__ = ["RUN_FLAGS", "RUN_VALUE_OPTIONS", "close", "run_target", "start", "take", "wanted"]

RUN_VALUE_OPTIONS = frozenset({
    "--input", "--wav", "--resume", "--session", "--max-turns", "--timeout", "--runs-dir",
    "--audio", "--host-creatures", "--ack-wait"})
"""``terrarium run``'s options that take a value (``--broker`` is left out on purpose: a
brokered run shares a server, ``llm/shared_server.py``). ``tests/cli`` checks these two
sets against the parser."""

RUN_FLAGS = frozenset({
    "--listen", "--tui", "--yes", "--approve-from-stdin", "-v", "--verbose", "--json",
    "--no-share-model"})

_early: Prestart | None = None


def wanted(environ: Mapping[str, str] | None = None) -> bool:
    """False when the model is shared (``TERRARIUM_SHARE_MODEL``): another's to start."""
    return share_env(environ) is not True


def run_target(argv: Sequence[str]) -> str | None:
    """The folder ``terrarium run`` is given in ``argv`` (the arguments after the program's
    name), when it can be told without the parser; None otherwise."""
    if not argv or argv[0] != "run":
        return None
    path: str | None = None
    rest = iter(argv[1:])
    for arg in rest:
        if arg.startswith("-") and arg != "-":
            name, has_value, _ = arg.partition("=")
            if name in RUN_VALUE_OPTIONS:
                if not has_value and next(rest, None) is None:
                    return None  # an option without its value: the parser's error
                continue
            if name in RUN_FLAGS and not has_value:
                continue
            return None  # --help, --broker, an abbreviation, "--": the parser decides
        if path is not None:
            return None  # a second positional: the parser's error
        path = arg
    return path


def start(argv: Sequence[str]) -> None:
    """Begin the head start of the ``terrarium run`` in ``argv``, if it is one whose team
    can be told here (see :func:`run_target`)."""
    global _early
    path = run_target(argv)
    if path is None or not wanted() or _early is not None:
        return
    _early = Prestart(str(Path(path).resolve()))


def take(team: str) -> Prestart | None:
    """The early head start, now the caller's, if it was begun for ``team`` (the team's
    resolved folder, as ``cmd_run`` names it); one begun for another is stopped."""
    global _early
    early, _early = _early, None
    if early is not None and early.team != team:
        early.close()
        return None
    return early


def close() -> None:
    """Stop an early head start nobody took (the command ended before it ran the team)."""
    global _early
    early, _early = _early, None
    if early is not None:
        early.close()
