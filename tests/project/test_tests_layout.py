"""The tests' own layout (docs/testing.md): every test file in its floor's folder under a
name no other test file has (pytest's default import mode needs that), and no test module
importing another (what two share lives in a helper module at tests/'s root)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
FLOORS = {"channels", "config", "controller", "prompt", "formats", "llm", "tools", "store",
          "runtime", "voice", "serve", "web", "tui", "cli", "kohaku", "e2e", "project"}
FILES = sorted(p for p in TESTS.rglob("test_*.py") if "kohaku_corpus" not in p.parts)


def test_every_test_file_is_in_a_floor_folder_under_a_unique_name() -> None:
    assert FILES
    misplaced = [str(p.relative_to(TESTS)) for p in FILES if p.parent.name not in FLOORS
                 or p.parent.parent != TESTS]
    assert misplaced == [], f"put these in tests/<floor>/: {misplaced}"
    twice = [n for n, k in Counter(p.name for p in FILES).items() if k > 1]
    assert twice == [], f"test file names used twice: {twice}"


def test_no_test_module_imports_another() -> None:
    found = []
    for path in FILES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}: {n}" for n in names
                      if n.rsplit(".", 1)[-1].startswith("test_")]
    assert found == [], f"import a helper module from tests/ instead: {found}"
