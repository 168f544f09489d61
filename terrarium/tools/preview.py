"""What a call will do, as a person reads it before approving it.

An approval shows the call, not its JSON: an ``edit`` as a unified diff of the text it
replaces, a ``multi_edit`` as one diff per edit, a ``write_file`` as the lines it writes,
a ``shell`` call as its command line. Anything else is its arguments as indented JSON.
Shared by the terminal prompt and the monitor's dialog.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["call_preview"]

_MAX_LINES = 60  # a preview longer than this is cut (the arguments are in the log whole)


def call_preview(tool: str, args: Mapping[str, Any]) -> str:
    """A readable preview of ``tool(**args)``; never raises on odd arguments."""
    try:
        lines = _lines(tool, args)
    except (TypeError, ValueError, AttributeError):
        lines = None
    if lines is None:
        lines = json.dumps(dict(args), indent=2, ensure_ascii=False, sort_keys=True,
                           default=str).splitlines()
    if len(lines) > _MAX_LINES:
        lines = [*lines[:_MAX_LINES], f"... ({len(lines) - _MAX_LINES} more lines)"]
    return "\n".join(lines)


def _lines(tool: str, args: Mapping[str, Any]) -> list[str] | None:
    path = str(args.get("path", ""))
    if tool == "edit" and "old_string" in args:
        head = ["(every occurrence)"] if args.get("replace_all") else []
        return head + _diff(path, str(args["old_string"]), str(args.get("new_string", "")))
    if tool == "multi_edit" and isinstance(args.get("edits"), list):
        out: list[str] = []
        for i, e in enumerate(args["edits"], 1):
            out.append(f"edit {i} of {len(args['edits'])}"
                       + (" (every occurrence)" if e.get("replace_all") else ""))
            out += _diff(path, str(e.get("old_string", "")), str(e.get("new_string", "")))
        return out
    if tool == "write_file" and "content" in args:
        how = "append to" if args.get("append") else "write"
        body = str(args["content"]).splitlines() or [""]
        return [f"{how} {path} ({len(body)} line{'s' * (len(body) != 1)}):",
                *(f"+{ln}" for ln in body)]
    if tool == "shell" and isinstance(args.get("command"), str):
        rest = {k: v for k, v in args.items() if k != "command" and v is not None}
        extra = [f"  ({', '.join(f'{k}: {v}' for k, v in sorted(rest.items()))})"] if rest else []
        return [f"$ {line}" if i == 0 else f"  {line}"
                for i, line in enumerate(args["command"].splitlines() or [""])] + extra
    return None


def _diff(path: str, old: str, new: str) -> list[str]:
    name = path or "file"
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{name}", f"b/{name}",
                                lineterm="", n=2)
    lines = list(diff)
    return lines or [f"(no change to {name})"]
