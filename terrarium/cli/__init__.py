"""The ``terrarium`` command line, the top floor: it may use every layer below it.

Modules
    ``command``  the argument parser and ``main`` (the ``terrarium`` script's entry point).
    ``run``      ``terrarium run``: drive a team from ``--input`` or stdin lines.
    ``console``  what ``terrarium run`` prints while the team works (a bus subscriber).
    ``inspect``  ``validate``, ``prompt``, ``models``, ``log``, ``monitor``: look, run nothing.
"""

import sys

# httpx's package loads its own command line (click, rich, pygments: ~40-90 ms, a tenth of
# this command's imports) unless that module cannot be imported, in which case httpx puts
# a stub in its place. This process never runs httpx's command line.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from terrarium.cli.command import entry, main  # noqa: E402

__all__ = ["entry", "main"]
