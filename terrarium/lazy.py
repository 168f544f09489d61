"""Public names loaded on first use (PEP 562), for a package's ``__init__``.

Every ``import terrarium.<anything>`` runs ``terrarium/__init__.py`` first (and every
``import terrarium.runtime.<x>`` runs ``terrarium/runtime/__init__.py``): importing the
runtime there eagerly would drag the top floors into the bottom ones, which the layer rule
forbids. So a package's public names are written once, as the ``if TYPE_CHECKING:`` block
of its ``__init__`` (``from module import Name as Name``: what type checkers and editors
read), and this module reads that block to load each name the first time it is asked for.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

__all__ = ["lazy_exports"]


def _type_checking_imports(source: str) -> dict[str, str]:
    """name → module of every ``from module import name`` under ``if TYPE_CHECKING:``."""
    table: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in ast.walk(node):
                if isinstance(imp, ast.ImportFrom) and imp.module:
                    table.update((a.asname or a.name, imp.module) for a in imp.names)
    return table


def lazy_exports(package: str, init_file: str, *own: str
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``__init__`` is ``init_file``: its
    public names are those its ``if TYPE_CHECKING:`` block imports, plus ``own`` (defined in
    the package itself); ``__all__`` is made from them when first asked for."""
    table: dict[str, str] | None = None

    def exports() -> dict[str, str]:
        nonlocal table
        if table is None:
            table = _type_checking_imports(Path(init_file).read_text(encoding="utf-8"))
        return table

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted([*exports(), *own])
        else:
            module = exports().get(name)
            if module is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            value = getattr(import_module(module), name)
        vars(sys.modules[package])[name] = value  # found once, then an ordinary attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports(), *own})

    return __getattr__, __dir__
