"""``python -m terrarium`` is the ``terrarium`` command."""

from terrarium.cli import entry

raise SystemExit(entry())
