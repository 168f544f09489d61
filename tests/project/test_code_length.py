"""No module over 600 lines and no function over 80 unless its docstring says why (#28):
``scripts/long_code.py`` lists them; this keeps the list honest."""

from __future__ import annotations

from pathlib import Path

from tests.script_loader import ROOT, load_script


def _long_code():  # type: ignore[no-untyped-def]
    return load_script(ROOT / "scripts" / "long_code.py", "long_code").long_code


def test_no_module_over_600_lines() -> None:
    long_modules, _ = _long_code()(ROOT / "terrarium")
    assert long_modules == []


def test_a_long_function_says_why_in_its_docstring() -> None:
    _, long_functions = _long_code()(ROOT / "terrarium")
    unexplained = [where for where, doc in long_functions if "long because" not in doc]
    assert unexplained == []


def test_the_check_sees_a_long_module(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(90))
    (pkg / "big.py").write_text("def f() -> None:\n" + body + "\n" + "#\n" * 600)
    long_modules, long_functions = _long_code()(pkg, 600, 80)
    assert long_modules == ["pkg/big.py: 691 lines"]
    assert [w for w, _ in long_functions] == ["pkg/big.py:1 f: 91 lines"]
