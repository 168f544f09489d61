"""The ``terrarium`` command line, the top floor: it may use every layer below it.

Modules
    ``command``  the argument parser and ``main`` (the ``terrarium`` script's entry point).
    ``run``      ``terrarium run``: drive a team from ``--input`` or stdin lines.
    ``console``  what ``terrarium run`` prints while the team works (a bus subscriber).
    ``inspect``  ``validate``, ``prompt``, ``models``, ``log``, ``monitor``: look, run nothing.
"""

from terrarium.cli.command import main

__all__ = ["main"]
