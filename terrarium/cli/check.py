"""The old import path of the start checks: they are the dry start now
(``terrarium/runtime/preflight.py``, shared by every command and ``TeamRuntime``), and
``validate``'s delegation summary lives in ``cli/inspect.py``."""

from terrarium.cli.inspect import delegation_lines
from terrarium.runtime.preflight import check_path, check_team_start, raise_start_errors

__all__ = ["check_path", "check_team_start", "delegation_lines", "raise_start_errors"]
