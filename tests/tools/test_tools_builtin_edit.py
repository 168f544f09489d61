"""read_file line ranges, edit and multi_edit, and workspace confinement of file tools."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.edits import EditTool, MultiEditTool
from terrarium.tools.files import ReadFileTool, WriteFileTool
from terrarium.tools.runner import ToolResult, run_tool

SOURCE = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "calc.py").write_text(SOURCE)
    (tmp_path / "secret.txt").write_text("TOP SECRET")
    return ws


def ctx(ws: Path) -> ToolContext:
    return ToolContext(creature="w", cwd=ws.parent, workspace=ws)


def call(tool: type[Tool], args: dict[str, Any], c: ToolContext) -> ToolResult:
    return anyio.run(run_tool, tool, args, c)


# -- read_file line ranges ------------------------------------------------------------------


def test_read_range_numbered(ws: Path) -> None:
    res = call(ReadFileTool, {"path": "src/calc.py", "start_line": 5, "end_line": 6}, ctx(ws))
    assert res.ok
    assert res.text == "5\tdef sub(a, b):\n6\t    return a - b\n[lines 5-6 of 6]"


def test_read_range_open_ended_and_width(ws: Path) -> None:
    (ws / "long.txt").write_text("".join(f"l{i}\n" for i in range(1, 13)))
    res = call(ReadFileTool, {"path": "long.txt", "start_line": 9}, ctx(ws))
    assert res.text.splitlines() == [" 9\tl9", "10\tl10", "11\tl11", "12\tl12",
                                     "[lines 9-12 of 12]"]
    res = call(ReadFileTool, {"path": "long.txt", "end_line": 2}, ctx(ws))
    assert res.text.splitlines()[:2] == ["1\tl1", "2\tl2"]


def test_read_range_errors(ws: Path) -> None:
    c = ctx(ws)
    res = call(ReadFileTool, {"path": "src/calc.py", "start_line": 40}, c)
    assert not res.ok and "has 6 lines" in res.text
    res = call(ReadFileTool, {"path": "src/calc.py", "start_line": 4, "end_line": 2}, c)
    assert not res.ok and "before start_line" in res.text
    res = call(ReadFileTool, {"path": "src/calc.py", "start_line": 0}, c)
    assert not res.ok and "start_line" in res.text


def test_read_range_capped_by_max_bytes(ws: Path) -> None:
    (ws / "big.txt").write_text("x" * 50 + "\n" + "y" * 50 + "\n" + "z\n")
    res = call(ReadFileTool, {"path": "big.txt", "start_line": 1, "max_bytes": 60}, ctx(ws))
    assert res.text.startswith("1\t" + "x" * 50 + "\n[truncated at max_bytes")
    assert "continue with start_line=2" in res.text


def test_read_without_range_unchanged(ws: Path) -> None:
    assert call(ReadFileTool, {"path": "src/calc.py"}, ctx(ws)).text == SOURCE


def test_workspace_readable_and_writable_for_file_tools(ws: Path) -> None:
    c = ctx(ws)
    assert call(WriteFileTool, {"path": "new/n.txt", "content": "hi"}, c).ok
    assert (ws / "new" / "n.txt").read_text() == "hi"
    res = call(ReadFileTool, {"path": "../secret.txt"}, c)
    assert not res.ok and "'..'" in res.text
    res = call(ReadFileTool, {"path": str(ws.parent / "secret.txt")}, c)
    assert not res.ok and "outside" in res.text


# -- edit -----------------------------------------------------------------------------------


def test_edit_once(ws: Path) -> None:
    res = call(EditTool, {"path": "src/calc.py", "old_string": "def add(a, b):\n    return a - b",
                          "new_string": "def add(a, b):\n    return a + b"}, ctx(ws))
    assert res.ok and res.text == "Edited src/calc.py: replaced 1 at line 1."
    assert (ws / "src/calc.py").read_text() == SOURCE.replace("a - b", "a + b", 1)


def test_edit_not_found(ws: Path) -> None:
    res = call(EditTool, {"path": "src/calc.py", "old_string": "return a * b",
                          "new_string": "x"}, ctx(ws))
    assert not res.ok and "not found" in res.text
    assert (ws / "src/calc.py").read_text() == SOURCE


def test_edit_ambiguous_names_lines(ws: Path) -> None:
    res = call(EditTool, {"path": "src/calc.py", "old_string": "return a - b",
                          "new_string": "return 0"}, ctx(ws))
    assert not res.ok
    assert "ambiguous: found 2 times at lines 2, 6" in res.text
    assert (ws / "src/calc.py").read_text() == SOURCE


def test_edit_replace_all(ws: Path) -> None:
    res = call(EditTool, {"path": "src/calc.py", "old_string": "a - b", "new_string": "0",
                          "replace_all": True}, ctx(ws))
    assert res.ok and res.text == "Edited src/calc.py: replaced 2 at lines 2, 6."
    assert "a - b" not in (ws / "src/calc.py").read_text()


def test_edit_same_text_and_empty_refused(ws: Path) -> None:
    c = ctx(ws)
    res = call(EditTool, {"path": "src/calc.py", "old_string": "a", "new_string": "a"}, c)
    assert not res.ok and "the same" in res.text
    res = call(EditTool, {"path": "src/calc.py", "old_string": "", "new_string": "a"}, c)
    assert not res.ok and "old_string" in res.text


def test_edit_missing_dir_binary_fifo(ws: Path) -> None:
    c = ctx(ws)
    args = {"old_string": "a", "new_string": "b"}
    assert "write_file" in call(EditTool, {"path": "nope.py", **args}, c).text
    assert "directory" in call(EditTool, {"path": "src", **args}, c).text
    (ws / "latin.txt").write_bytes(b"caf\xe9")
    assert "not UTF-8" in call(EditTool, {"path": "latin.txt", **args}, c).text
    os.mkfifo(ws / "pipe")
    assert "not a regular file" in call(EditTool, {"path": "pipe", **args}, c).text


def test_edit_keeps_crlf_and_mode(ws: Path) -> None:
    f = ws / "win.txt"
    f.write_bytes(b"one\r\ntwo\r\n")
    f.chmod(0o750)
    res = call(EditTool, {"path": "win.txt", "old_string": "two", "new_string": "2"}, ctx(ws))
    assert res.ok
    assert f.read_bytes() == b"one\r\n2\r\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o750
    assert sorted(p.name for p in ws.iterdir()) == ["src", "win.txt"]  # no temp file left


@pytest.mark.parametrize("path", ["../secret.txt", "src/../../secret.txt"])
def test_edit_dotdot_refused(ws: Path, path: str) -> None:
    res = call(EditTool, {"path": path, "old_string": "TOP", "new_string": "x"}, ctx(ws))
    assert not res.ok and "'..'" in res.text
    assert (ws.parent / "secret.txt").read_text() == "TOP SECRET"


def test_edit_absolute_outside_refused(ws: Path) -> None:
    res = call(EditTool, {"path": str(ws.parent / "secret.txt"), "old_string": "TOP",
                          "new_string": "x"}, ctx(ws))
    assert not res.ok and "outside the writable paths" in res.text
    res = call(EditTool, {"path": str(ws / "src/calc.py"), "old_string": "def add",
                          "new_string": "def plus"}, ctx(ws))
    assert res.ok  # absolute inside the workspace is fine


def test_edit_symlink_escape_refused(ws: Path) -> None:
    os.symlink(ws.parent / "secret.txt", ws / "link.txt")
    os.symlink(ws.parent, ws / "up")
    for p in ("link.txt", "up/secret.txt"):
        res = call(EditTool, {"path": p, "old_string": "TOP", "new_string": "x"}, ctx(ws))
        assert not res.ok and "symlink" in res.text
    assert (ws.parent / "secret.txt").read_text() == "TOP SECRET"


def test_edit_symlink_inside_allowed(ws: Path) -> None:
    os.symlink(ws / "src" / "calc.py", ws / "alias.py")
    res = call(EditTool, {"path": "alias.py", "old_string": "def sub", "new_string": "def minus"},
               ctx(ws))
    assert res.ok and "def minus" in (ws / "src/calc.py").read_text()


def test_edit_without_declared_workspace_uses_cwd(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a")
    c = ToolContext(creature="w", cwd=tmp_path)
    assert call(EditTool, {"path": "f.txt", "old_string": "a", "new_string": "b"}, c).ok
    assert (tmp_path / "f.txt").read_text() == "b"


# -- multi_edit -----------------------------------------------------------------------------


def test_multi_edit_in_order(ws: Path) -> None:
    edits = [
        {"old_string": "def add(a, b):\n    return a - b", "new_string": "def add(a, b):\n"
         "    return a + b"},
        {"old_string": "a + b", "new_string": "b + a"},  # sees the first edit's result
        {"old_string": "def", "new_string": "async def", "replace_all": True},
    ]
    res = call(MultiEditTool, {"path": "src/calc.py", "edits": edits}, ctx(ws))
    assert res.ok
    assert res.text == ("Edited src/calc.py with 3 edits: 1 at line 1; 1 at line 2; "
                        "2 at lines 1, 5.")
    text = (ws / "src/calc.py").read_text()
    assert text.count("async def") == 2 and "return b + a" in text


def test_multi_edit_all_or_nothing(ws: Path) -> None:
    edits = [
        {"old_string": "def add", "new_string": "def plus"},
        {"old_string": "return a - b", "new_string": "return 0"},  # ambiguous
    ]
    res = call(MultiEditTool, {"path": "src/calc.py", "edits": edits}, ctx(ws))
    assert not res.ok
    assert res.text.startswith("Edit 2 of 2 failed, so nothing was written: old_string is "
                               "ambiguous: found 2 times at lines 2, 6")
    assert (ws / "src/calc.py").read_text() == SOURCE


def test_multi_edit_not_found_and_empty_list(ws: Path) -> None:
    res = call(MultiEditTool, {"path": "src/calc.py",
                               "edits": [{"old_string": "zzz", "new_string": "y"}]}, ctx(ws))
    assert not res.ok and "not found" in res.text
    res = call(MultiEditTool, {"path": "src/calc.py", "edits": []}, ctx(ws))
    assert not res.ok and "edits" in res.text


def test_multi_edit_escape_refused(ws: Path) -> None:
    res = call(MultiEditTool, {"path": "../secret.txt",
                               "edits": [{"old_string": "TOP", "new_string": "x"}]}, ctx(ws))
    assert not res.ok and "'..'" in res.text


def test_flags() -> None:
    assert EditTool.concurrency_safe is False and MultiEditTool.concurrency_safe is False
