"""Every code block the documentation marks as runnable runs, as written.

The rule (docs/testing.md): a fenced block right after a line ``<!-- test -->`` in
README.md or docs/*.md is run in a fresh folder that holds a link to ``examples/``, with
this checkout's ``terrarium`` first on the PATH, then this Python's folder: a ``bash``
block as one script (``set -e``: every command must succeed), a ``python`` block as one
program. Blocks that
need a model download, a sound card or a broker are left unmarked.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 300  # seconds: a bound against hangs, never a measured figure
MARK = re.compile(r"^<!-- test -->\n```(\w+)\n(.*?)^```", re.M | re.S)


def marked_blocks() -> list[tuple[str, str, str]]:
    """(where, language, code) of every marked block."""
    out = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for m in MARK.finditer(text):
            line = text[: m.start()].count("\n") + 2
            out.append((f"{page.relative_to(ROOT)}:{line}", m.group(1), m.group(2)))
    return out


BLOCKS = marked_blocks()


def test_the_docs_mark_blocks_to_run() -> None:
    where = {w.split(":")[0] for w, _, _ in BLOCKS}
    assert {"README.md", "docs/python.md"} <= where


@pytest.mark.parametrize(("where", "lang", "code"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_marked_block_runs(where: str, lang: str, code: str, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "terrarium"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m terrarium "$@"\n')
    shim.chmod(0o755)
    # ``python`` in a block is this test's own (the venv's, with the ``dev`` extra's
    # clients), also when the venv was not activated
    python_dir = Path(sys.executable).parent
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "PATH": f"{bin_dir}:{python_dir}:{os.environ['PATH']}"}
    if lang in ("bash", "sh"):
        cmd = ["bash", "-e", "-c", code]
    elif lang == "python":
        cmd = [sys.executable, "-c", code]
    else:
        pytest.fail(f"{where}: a marked block must be bash or python, not {lang!r}")
    res = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=LIMIT, check=False)
    assert res.returncode == 0, f"{where} failed:\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
