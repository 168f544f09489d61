"""List what is long in terrarium/: modules over 600 lines and functions over 80 lines.

    python scripts/long_code.py [--modules N] [--functions N]

A long function should say why in its docstring; this lists them all so a reader can look.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "terrarium"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--modules", type=int, default=600)
    ap.add_argument("--functions", type=int, default=80)
    args = ap.parse_args()
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        rel = path.relative_to(ROOT.parent)
        if lines > args.modules:
            print(f"module   {rel}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > args.functions:
                    doc = (ast.get_docstring(node) or "").split("\n", 1)[0]
                    print(f"function {rel}:{node.lineno} {node.name}: {n} lines  -- {doc}")


if __name__ == "__main__":
    main()
