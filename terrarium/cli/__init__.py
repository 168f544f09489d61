"""The ``terrarium`` command line, the top floor: it may use every layer below it.

Modules
    ``command``  the argument parser and ``main`` (the ``terrarium`` script's entry point).
    ``options``  what each option's value may be, checked as it is parsed.
    ``targets``  the one team a command is given (a package refused, with what is in it).
    ``run``      ``terrarium run``: drive a team from ``--input`` or stdin lines.
    ``console``  what ``terrarium run`` prints while the team works (a bus subscriber).
    ``inspect``  ``validate``, ``prompt``, ``models``, ``log``, ``monitor``: look, run nothing.
"""

import sys

# httpx's package loads its own command line (click, rich, pygments: ~40-90 ms, a tenth of
# this command's imports) unless that module cannot be imported, in which case httpx puts
# a stub in its place. This process never runs httpx's command line.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from typing import Any  # noqa: E402

__all__ = ["entry", "main"]


def entry() -> int:
    """The ``terrarium`` script's entry (and ``python -m terrarium``'s): the secrets leave
    the environment first (``terrarium.secrecy``), then ``terrarium run``'s head start
    begins (``cli/early.py``: the model loads in a child process while the command's
    modules load), then :func:`terrarium.cli.command.entry` runs the command."""
    from terrarium import secrecy

    secrecy.take_secrets()  # before any child process is made
    secrecy.owns_environment = True
    from terrarium.cli import early

    try:
        early.start(sys.argv[1:])
        from terrarium.cli.command import entry as run_command

        return run_command()
    finally:
        early.close()  # a head start the command did not take


def __getattr__(name: str) -> Any:
    """``main`` loads with the command's modules, when asked for (not by ``entry``'s
    caller: the head start comes first)."""
    if name == "main":
        from terrarium.cli.command import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
