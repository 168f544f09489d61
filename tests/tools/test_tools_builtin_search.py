"""glob, grep (ripgrep and the Python fallback, same output) and tree: gitignore rules,
symlinks, caps, escapes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.find import GlobTool, glob_regex
from terrarium.tools.grep import GrepTool
from terrarium.tools.runner import ToolResult, run_tool
from terrarium.tools.tree import TreeTool

HAVE_RG = shutil.which("rg") is not None
MODES = [pytest.param(True, id="ripgrep", marks=pytest.mark.skipif(not HAVE_RG, reason="no rg")),
         pytest.param(False, id="python")]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    files = {
        ".gitignore": "build/\n*.log\n!keep.log\n",
        "src/app.py": "import os\n\n\ndef main():\n    return helper()\n\n\ndef helper():\n"
                      "    return 42\n",
        "src/util/strings.py": "def helper_text():\n    return 'helper'\n",
        "src/util/.gitignore": "generated.py\n",
        "src/util/generated.py": "def helper_generated(): pass\n",
        "docs/README.md": "# Docs\nuse helper() wisely\n",
        "build/out.py": "def helper(): pass\n",
        "debug.log": "helper in a log\n",
        "keep.log": "helper kept\n",
        ".github/ci.yml": "run: helper\n",
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / "blob.bin").write_bytes(b"\x00helper\x00")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("helper\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text("helper = 'TOP SECRET'\n")
    os.symlink(tmp_path / "outside", ws / "linked")
    os.symlink(tmp_path / "outside" / "secret.py", ws / "secret_link.py")
    return ws


def ctx(ws: Path, rg: bool = True) -> ToolContext:
    return ToolContext(creature="w", cwd=ws.parent, workspace=ws,
                       tool_options={"grep": {"use_ripgrep": rg}})


def call(tool: type[Tool], args: dict[str, Any], c: ToolContext) -> ToolResult:
    return anyio.run(run_tool, tool, args, c)


# -- glob -----------------------------------------------------------------------------------


def test_glob_regex_semantics() -> None:
    assert glob_regex("*.py").match("a.py") and not glob_regex("*.py").match("d/a.py")
    assert glob_regex("**/*.py").match("a.py") and glob_regex("**/*.py").match("d/e/a.py")
    assert glob_regex("src/**").match("src/a/b") and glob_regex("[ab]?.txt").match("a1.txt")
    assert not glob_regex("[!ab].txt").match("a.txt")


def test_glob_respects_gitignore_and_symlinks(ws: Path) -> None:
    res = call(GlobTool, {"pattern": "**/*.py"}, ctx(ws))
    assert res.ok
    assert res.text.splitlines() == ["src/app.py", "src/util/strings.py"]


def test_glob_hidden_and_negation(ws: Path) -> None:
    assert call(GlobTool, {"pattern": "**/*.yml"}, ctx(ws)).text == ".github/ci.yml"
    assert call(GlobTool, {"pattern": "*.log"}, ctx(ws)).text == "keep.log"


def test_glob_in_subfolder_cap_and_nothing(ws: Path) -> None:
    c = ctx(ws)
    assert call(GlobTool, {"pattern": "*.py", "path": "src"}, c).text == "src/app.py"
    res = call(GlobTool, {"pattern": "**/*", "max_results": 2}, c)
    assert res.text.splitlines()[-1].startswith("[showed 2 of ")
    assert call(GlobTool, {"pattern": "*.rs"}, c).text == "No files match '*.rs'."


def test_glob_escapes_refused(ws: Path) -> None:
    c = ctx(ws)
    assert "'..'" in call(GlobTool, {"pattern": "*", "path": ".."}, c).text
    assert "outside" in call(GlobTool, {"pattern": "*", "path": "/etc"}, c).text
    res = call(GlobTool, {"pattern": "*", "path": "linked"}, c)
    assert not res.ok and "symlink" in res.text
    assert "not a folder" in call(GlobTool, {"pattern": "*", "path": "keep.log"}, c).text


# -- grep -----------------------------------------------------------------------------------


@pytest.mark.parametrize("rg", MODES)
def test_grep_gitignore_binary_symlinks_git(ws: Path, rg: bool) -> None:
    res = call(GrepTool, {"pattern": r"helper\b"}, ctx(ws, rg))
    assert res.ok, res.text
    assert res.text == (
        ".github/ci.yml\n1:run: helper\n\n"
        "docs/README.md\n2:use helper() wisely\n\n"
        "keep.log\n1:helper kept\n\n"
        "src/app.py\n5:    return helper()\n8:def helper():\n\n"
        "src/util/strings.py\n2:    return 'helper'\n"
        "[6 matches in 5 files]"
    )
    assert "SECRET" not in res.text


@pytest.mark.parametrize("rg", MODES)
def test_grep_context_glob_case(ws: Path, rg: bool) -> None:
    c = ctx(ws, rg)
    res = call(GrepTool, {"pattern": "HELPER", "ignore_case": True, "glob": "*.py",
                          "context": 1}, c)
    assert res.text == (
        "src/app.py\n4-def main():\n5:    return helper()\n6-\n7-\n8:def helper():\n"
        "9-    return 42\n\n"
        "src/util/strings.py\n1:def helper_text():\n2:    return 'helper'\n"
        "[4 matches in 2 files]"
    )


@pytest.mark.parametrize("rg", MODES)
def test_grep_one_file_and_cap(ws: Path, rg: bool) -> None:
    c = ctx(ws, rg)
    res = call(GrepTool, {"pattern": "def", "path": "src/app.py"}, c)
    assert res.text == "src/app.py\n4:def main():\n8:def helper():\n[2 matches in 1 file]"
    res = call(GrepTool, {"pattern": "helper", "max_results": 2}, c)
    assert res.text.endswith("[2 matches in 2 files] [stopped at max_results=2; narrow "
                             "the pattern, path or glob]")


@pytest.mark.parametrize("rg", MODES)
def test_grep_no_match_and_errors(ws: Path, rg: bool) -> None:
    c = ctx(ws, rg)
    assert call(GrepTool, {"pattern": "zebra"}, c).text == "No matches."
    res = call(GrepTool, {"pattern": "(unclosed"}, c)
    assert not res.ok and "not a valid regex" in res.text
    assert "nothing at" in call(GrepTool, {"pattern": "x", "path": "nope"}, c).text


@pytest.mark.parametrize("rg", MODES)
def test_grep_escapes_refused(ws: Path, rg: bool) -> None:
    c = ctx(ws, rg)
    for path, why in (("..", "'..'"), ("/etc", "outside"), ("linked", "symlink"),
                      ("secret_link.py", "symlink")):
        res = call(GrepTool, {"pattern": "helper", "path": path}, c)
        assert not res.ok and why in res.text and "SECRET" not in res.text


def test_grep_modes_agree_on_a_bigger_tree(tmp_path: Path) -> None:
    if not HAVE_RG:
        pytest.skip("no rg")
    for i in range(30):
        (tmp_path / f"d{i % 4}").mkdir(exist_ok=True)
        (tmp_path / f"d{i % 4}" / f"f{i}.txt").write_text(
            "".join(f"line {j} {'hit' if (i * j) % 7 == 0 else 'miss'}\n" for j in range(40)))
    args = {"pattern": "hit$", "context": 2, "max_results": 150}
    fast = call(GrepTool, args, ctx(tmp_path, True))
    slow = call(GrepTool, args, ctx(tmp_path, False))
    assert fast.ok and fast.text == slow.text


# -- tree -----------------------------------------------------------------------------------


def test_tree_layout(ws: Path) -> None:
    res = call(TreeTool, {}, ctx(ws))
    assert res.text == (
        "./\n"
        "  .github/\n    ci.yml\n"
        "  docs/\n    README.md\n"
        "  src/\n    util/\n      .gitignore\n      strings.py\n    app.py\n"
        "  .gitignore\n  blob.bin\n  keep.log"
    )


def test_tree_depth_and_cap(ws: Path) -> None:
    c = ctx(ws)
    res = call(TreeTool, {"depth": 1}, c)
    assert "  src/ (2 entries)" in res.text.splitlines()
    res = call(TreeTool, {"max_entries": 3}, c)
    assert res.text.splitlines()[-1] == (
        "[5 more entries not shown; raise max_entries or pick a subfolder]")
    assert call(TreeTool, {"path": "src/util"}, c).text == (
        "src/util/\n  .gitignore\n  strings.py")


def test_tree_escapes_refused(ws: Path) -> None:
    c = ctx(ws)
    assert "'..'" in call(TreeTool, {"path": ".."}, c).text
    assert "symlink" in call(TreeTool, {"path": "linked"}, c).text
    assert "outside" in call(TreeTool, {"path": "/"}, c).text


def test_flags() -> None:
    assert GlobTool.concurrency_safe and GrepTool.concurrency_safe and TreeTool.concurrency_safe
