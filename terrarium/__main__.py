"""``python -m terrarium`` is the ``terrarium`` command."""

from terrarium.cli import main

raise SystemExit(main())
