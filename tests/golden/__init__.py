"""Golden files: exact expected bytes pinned under tests/golden/<name>.txt.

A mismatch fails with a diff. Files are only (re)written when TERRARIUM_UPDATE_GOLDEN=1 is
set, so a deliberate change is an explicit act and an accidental one can never pass silently.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).resolve().parent
UPDATE_ENV = "TERRARIUM_UPDATE_GOLDEN"
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def golden_path(name: str) -> Path:
    if not _NAME.match(name):
        raise ValueError(f"The golden name {name!r} may only use letters, digits, '_', '.', '-'.")
    return GOLDEN_DIR / f"{name}.txt"


def assert_golden(name: str, text: str) -> None:
    """Compare ``text`` with tests/golden/<name>.txt byte for byte."""
    path = golden_path(name)
    if os.environ.get(UPDATE_ENV) == "1":
        path.write_bytes(text.encode("utf-8"))
        return
    if not path.exists():
        pytest.fail(
            f"The golden file {path} does not exist; create it deliberately by running the "
            f"test with {UPDATE_ENV}=1 and review it before committing.",
            pytrace=False,
        )
    expected = path.read_bytes().decode("utf-8")
    if expected != text:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"golden/{name}.txt",
                tofile="actual",
                n=2,
            )
        )
        pytest.fail(
            f"The output differs from the golden file {path}; if the change is deliberate, "
            f"rerun with {UPDATE_ENV}=1 and review the diff.\n{diff}",
            pytrace=False,
        )
