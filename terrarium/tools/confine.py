"""Path confinement for the file tools: a creature touches only its declared roots.

Rules, in order: a path containing ``..`` is refused outright (a model has no business
walking up); a relative path resolves against ``ctx.cwd``; the result is fully resolved,
symlinks included, and must lie inside one of the (also resolved) roots. So a symlink inside
a root that points outside is refused, and one that points elsewhere inside is allowed.
Writable roots are readable too: a creature may read back what it wrote.

The check is made at call time; a symlink swapped in between check and use is outside the
threat model (creatures do not race their own tools).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePath

from terrarium.errors import ToolError


def display(path: Path, cwd: Path) -> str:
    """A path as the model should see it: relative to cwd when it lies under it."""
    for base in (cwd, Path(os.path.realpath(cwd))):
        try:
            return str(path.relative_to(base)) or "."
        except ValueError:
            continue
    return str(path)


def _resolve_roots(roots: Iterable[Path], cwd: Path) -> list[Path]:
    out: list[Path] = []
    for root in roots:
        r = root if root.is_absolute() else cwd / root
        out.append(Path(os.path.realpath(r)))
    return out


def confine(raw: str, *, cwd: Path, roots: Iterable[Path], mode: str) -> Path:
    """The resolved path for ``raw`` if it lies inside ``roots``; a ToolError saying why not.

    ``mode`` is ``"read"`` or ``"write"`` and only shapes the message.
    """
    if not raw.strip():
        raise ToolError("The path is empty; give a file path.")
    if "\x00" in raw:
        raise ToolError("The path contains a NUL character and was refused.")
    if ".." in PurePath(raw).parts:
        raise ToolError(f"The path {raw!r} was refused because it contains '..'.")
    kind = "writable" if mode == "write" else "readable"
    verb = "written" if mode == "write" else "read"
    allowed = _resolve_roots(roots, cwd)
    if not allowed:
        raise ToolError(f"This creature has no {kind} paths, so {raw!r} cannot be {verb}.")
    candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = cwd / candidate
    resolved = Path(os.path.realpath(candidate))
    for root in allowed:
        if resolved == root or resolved.is_relative_to(root):
            return resolved
    names = ", ".join(str(r) for r in allowed)
    via = ""
    if Path(os.path.abspath(candidate)) != resolved:
        # where the link points is not said: that would show the model the layout of the
        # machine outside its roots, one probe at a time
        via = " (it resolves through a symlink to a place outside them)"
    raise ToolError(
        f"The path {raw!r} is outside the {kind} paths of this creature{via}; allowed: {names}."
    )


__all__ = [
    "confine",
    "display",
]
