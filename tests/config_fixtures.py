"""Helpers for config tests: write a small tree of files, load it, read its errors."""

from __future__ import annotations

from pathlib import Path

from terrarium.config import load_any
from terrarium.errors import ConfigErrors


def write(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (path relative to ``root`` → text) as UTF-8, making folders."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def errors_of(path: Path) -> list[str]:
    """The rendered config errors of loading ``path`` (none: it loads)."""
    try:
        load_any(path)
    except ConfigErrors as exc:
        return [e.render() for e in exc.errors]
    return []
