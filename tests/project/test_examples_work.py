"""The examples that do real work: code_fixers makes a sample repository's failing tests
pass (scripted model, real tools, a temporary copy of the repository), and python_tool's
own tool is loaded from its folder and runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.config import load_any, load_team
from terrarium.errors import TerrariumError
from terrarium.events import ApprovalDecided
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.tools.approval import Approval, approve_all
from terrarium.tools.registry import resolve_tool

ROOT = Path(__file__).resolve().parents[2]
FIXERS = ROOT / "examples" / "code_fixers"
PYTHON_TOOL = ROOT / "examples" / "python_tool"
LIMIT = 120  # seconds: a bound against hangs, never a measured figure

pytestmark = pytest.mark.anyio


def pytest_in(repo: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON"))}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=LIMIT,
                          check=False)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the sample repository, the team's workspace; ``python`` on the
    shell tool's PATH is this interpreter (it has pytest)."""
    copy = tmp_path / "shop"
    shutil.copytree(FIXERS / "sample_repo", copy)
    monkeypatch.setenv("FIXERS_WORKSPACE", str(copy))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}"
                               f"{os.environ.get('PATH', '')}")
    return copy


async def run_fixers(runs: Path, approver: Any) -> tuple[TeamRuntime, list[ApprovalDecided]]:
    team = load_team(FIXERS)
    decided: list[ApprovalDecided] = []

    def seen(ev: Any) -> None:
        if isinstance(ev, ApprovalDecided):
            decided.append(ev)

    opts = RuntimeOptions(runs_dir=runs, audio="none", approver=approver, on_event=seen)
    with anyio.fail_after(LIMIT):
        async with TeamRuntime(team, opts) as rt:
            await rt.send_user("Make the failing test in this repository pass.")
            await rt.wait_idle()
    return rt, decided


async def test_code_fixers_make_the_failing_tests_pass(repo: Path, tmp_path: Path) -> None:
    before = pytest_in(repo)
    assert before.returncode == 1 and "2 failed, 2 passed" in before.stdout, before.stdout

    rt, decided = await run_fixers(tmp_path / "runs", approve_all)

    after = pytest_in(repo)
    assert after.returncode == 0 and "4 passed" in after.stdout, after.stdout
    assert "price * percent / 100" in (repo / "shop" / "pricing.py").read_text()
    # the shipped sample is untouched: the team worked on the copy
    assert "price * percent / 100" not in (FIXERS / "sample_repo" / "shop" /
                                           "pricing.py").read_text()
    calls = {name: [c.name for r in [res for n, res in rt.results if n == name]
                    for c in r.calls]
             for name in ("planner", "worker", "reviewer")}
    assert calls == {"planner": ["tree", "grep", "send_plan"],
                     "worker": ["shell", "read_file", "edit", "shell", "send_changes"],
                     "reviewer": ["shell", "read_file"]}
    worker_results = [c.result for n, r in rt.results if n == "worker" for c in r.calls]
    assert "2 failed" in worker_results[0] and "4 passed" in worker_results[3]
    verdict = [e.text for e in rt.transcript("reviewer") if e.kind == "assistant"]
    assert verdict[-1].startswith("Approved: all 4 tests pass")
    # the worker's shell and edit calls were approved, each decision recorded
    assert [(d.creature, d.tool, d.approved, d.by) for d in decided] == [
        ("worker", "shell", True, "--yes"), ("worker", "edit", True, "--yes"),
        ("worker", "shell", True, "--yes")]


async def test_code_fixers_with_the_edit_denied_change_nothing(
    repo: Path, tmp_path: Path
) -> None:
    async def no_edits(creature: str, tool: str, args: Mapping[str, Any]) -> Approval:
        if tool == "edit":
            return Approval(False, "do not touch shop/ today", by="test")
        return Approval(True, "", by="test")

    rt, decided = await run_fixers(tmp_path / "runs", no_edits)
    assert pytest_in(repo).returncode == 1
    results = [c.result for n, r in rt.results if n == "worker" for c in r.calls]
    assert ("Not run: the call to edit was not approved (do not touch shop/ today)."
            in results)
    assert [(d.tool, d.approved) for d in decided] == [("shell", True), ("edit", False)]


def test_code_fixers_run_from_the_command_line(repo: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    res = subprocess.run(
        [sys.executable, "-m", "terrarium", "run", str(FIXERS), "--input",
         "Make the failing tests pass.", "--yes", "--runs-dir", str(tmp_path / "runs"),
         "--audio", "none"],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=LIMIT, check=False)
    assert res.returncode == 0, res.stderr
    assert "Approved: all 4 tests pass" in res.stdout
    assert pytest_in(repo).returncode == 0


# -- python_tool -----------------------------------------------------------------------------

async def test_the_python_tool_example_runs_its_own_tool(tmp_path: Path) -> None:
    team = load_any(PYTHON_TOOL)
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none")
    async with TeamRuntime(team, opts) as rt:  # type: ignore[arg-type]
        result = await rt.ask("stats", "How long are the notes?")
    assert result is not None
    [call] = result.calls
    assert call.ok, call.result
    assert call.result == ("meeting.md: 5 lines, 23 words, 154 characters; "
                           "most common: release (3), planning (2)")


def test_a_tool_module_in_the_creature_folder_wins_and_is_private(tmp_path: Path) -> None:
    cls = resolve_tool("text_stats:TextStatsTool", PYTHON_TOOL)
    assert cls.name == "text_stats" and cls.__module__.endswith(".text_stats")
    assert cls.__module__.startswith("_terrarium_tools_")
    assert resolve_tool("text_stats:TextStatsTool", PYTHON_TOOL) is cls  # loaded once
    with pytest.raises(TerrariumError, match=r"nor found as nowhere\.py in"):
        resolve_tool("nowhere:Tool", tmp_path)
    with pytest.raises(TerrariumError, match=r"has no attribute 'TextStat'") as info:
        resolve_tool("text_stats:TextStat", PYTHON_TOOL)
    assert info.value.suggestion and "TextStatsTool" in info.value.suggestion


async def test_the_python_tool_keeps_to_its_workspace(tmp_path: Path) -> None:
    from terrarium.tools.base import ToolContext
    from terrarium.tools.runner import run_tool

    cls = resolve_tool("text_stats:TextStatsTool", PYTHON_TOOL)
    ctx = ToolContext(creature="stats", cwd=PYTHON_TOOL, workspace=PYTHON_TOOL / "notes",
                      tool_options={"text_stats": {"max_bytes": 50}})
    out = await run_tool(cls, {"path": "../config.yaml"}, ctx)
    assert not out.ok and ".." in out.text
    out = await run_tool(cls, {"path": "meeting.md"}, ctx)
    assert not out.ok and "max_bytes=50" in out.text
    out = await run_tool(cls, {"path": "missing.md"}, ctx)
    assert not out.ok and "no file 'missing.md'" in out.text
