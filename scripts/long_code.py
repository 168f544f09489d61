"""List what is long in terrarium/: modules over 600 lines and functions over 80 lines.

    python scripts/long_code.py [--modules N] [--functions N]

A long function should say why in its docstring; this lists them all so a reader can look.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "terrarium"


def long_code(root: Path = ROOT, modules: int = 600, functions: int = 80
              ) -> tuple[list[str], list[tuple[str, str]]]:
    """The modules over ``modules`` lines, and the functions over ``functions`` lines with
    their docstrings (where a long one says why it is long)."""
    long_modules: list[str] = []
    long_functions: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        rel = path.relative_to(root.parent)
        if lines > modules:
            long_modules.append(f"{rel}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > functions:
                    long_functions.append((f"{rel}:{node.lineno} {node.name}: {n} lines",
                                           ast.get_docstring(node) or ""))
    return long_modules, long_functions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--modules", type=int, default=600)
    ap.add_argument("--functions", type=int, default=80)
    args = ap.parse_args()
    long_modules, long_functions = long_code(ROOT, args.modules, args.functions)
    for m in long_modules:
        print(f"module   {m}")
    for where, doc in long_functions:
        print(f"function {where}  -- {doc.split(chr(10), 1)[0]}")


if __name__ == "__main__":
    main()
