"""A gitignore-aware walk of the workspace, shared by ``glob``, ``grep`` (fallback) and ``tree``.

Rules, chosen to match ``rg --hidden --no-require-git`` so the grep fallback and ripgrep list
the same files: ``.gitignore`` files apply in their folder and below (also outside a git
repository), later and deeper rules win, ``!`` re-includes; ``.git`` is always skipped;
hidden files are listed; symlinks are never followed (a link could lead out of the
workspace) and are skipped; only regular files are yielded. Order is sorted by name, so
every listing is deterministic.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded by the first .gitignore read: a run without these tools never pays
    import pathspec

__all__ = ["Entry", "IgnoreRules", "walk"]

ALWAYS_SKIPPED = frozenset({".git"})


@dataclass(frozen=True, slots=True)
class Entry:
    """One item of a walk: its path, its path relative to the walk's root, its depth."""

    path: Path
    rel: str  # posix-style, relative to the root the walk started at
    is_dir: bool
    depth: int  # 1 for the root's direct children


class IgnoreRules:
    """The ``.gitignore`` files that apply under ``top`` (folder -> compiled spec)."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def _spec(self, folder: Path) -> pathspec.GitIgnoreSpec | None:
        if folder not in self._specs:
            spec = None
            try:
                text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            if text.strip():
                import pathspec  # ~20 ms at start for every run otherwise

                spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
            self._specs[folder] = spec
        return self._specs[folder]

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """True when the deepest decisive rule over ``path`` (below ``top``) ignores it."""
        if path.name in ALWAYS_SKIPPED:
            return True
        try:
            rel_top = path.relative_to(self.top)
        except ValueError:
            return False
        verdict: bool | None = None
        parts = rel_top.parent.parts
        for i in range(len(parts) + 1):
            folder = self.top.joinpath(*parts[:i])
            spec = self._spec(folder)
            if spec is None:
                continue
            rel = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
            result = spec.check_file(rel)
            if result.include is not None:
                verdict = result.include
        return bool(verdict)


def walk(
    start: Path, top: Path, *, max_depth: int | None = None, dirs: bool = False
) -> Iterator[Entry]:
    """Files (and folders with ``dirs``) under ``start``, depth-first, sorted, not ignored.

    ``top`` is the workspace whose ``.gitignore`` files apply (``start`` lies inside it).
    """
    rules = IgnoreRules(top)
    if rules.ignored(start, True) and start != top:
        return

    def visit(folder: Path, depth: int) -> Iterator[Entry]:
        try:
            with os.scandir(folder) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for item in items:
            if item.is_symlink():
                continue
            is_dir = item.is_dir(follow_symlinks=False)
            if not is_dir and not item.is_file(follow_symlinks=False):
                continue  # FIFOs, sockets, devices
            path = Path(item.path)
            if rules.ignored(path, is_dir):
                continue
            rel = path.relative_to(start).as_posix()
            if is_dir:
                if dirs:
                    yield Entry(path, rel, True, depth)
                if max_depth is None or depth < max_depth:
                    yield from visit(path, depth + 1)
            else:
                yield Entry(path, rel, False, depth)

    yield from visit(start, 1)
