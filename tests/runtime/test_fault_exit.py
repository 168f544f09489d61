"""Honest exit codes and reasons: a team run in which a creature ended failed exits
non-zero with status ``degraded`` (some) or ``failed`` (all); the reason is an event that
``terrarium log`` shows; a model error no retry can fix is not repeated by restarts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from terrarium.channels.log import DurableLog
from terrarium.runtime.runtime import LOG_FILE

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "runtime_fixtures"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def terrarium(*args: str) -> subprocess.CompletedProcess[str]:
    """The command run to its end; the bound only stops a hung one (a loaded machine takes
    tens of seconds to start it, and the timeout run below waits out its tool's 20 s)."""
    return subprocess.run([sys.executable, "-m", "terrarium", *args], cwd=ROOT, env=ENV,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300, check=False)


def _run(fixture: str, runs: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    res = terrarium("run", str(FIXTURES / fixture), "--input", "hello", "--runs-dir",
                    str(runs), "--audio", "none")
    with DurableLog(runs / LOG_FILE) as log:
        [run] = log.runs()
    return res, run.run_id


def test_one_creature_failed_is_a_degraded_run_with_exit_3(tmp_path: Path) -> None:
    res, run_id = _run("refusing", tmp_path)
    assert res.returncode == 3, res.stderr
    assert "error: creature 'b' ended failed: ModelError: the scripted model refused" \
        in res.stderr
    assert f"run {run_id} degraded" in res.stderr
    assert "Traceback" not in res.stderr
    with DurableLog(tmp_path / LOG_FILE) as log:
        assert log.run(run_id).status == "degraded"
        kinds = [e["kind"] for e in log.events(run_id)]
        # asked once: an HTTP 400 is not retried by supervision restarts
        assert "restart" not in kinds
        assert [t.error is not None for t in log.turns(run_id) if t.creature == "b"] == [True]
    shown = terrarium("log", run_id, "--runs-dir", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert "gave up (the model refused the request; retrying cannot help)" in shown.stdout
    assert "status degraded" in shown.stdout


def test_every_creature_failed_is_a_failed_run_with_exit_1(tmp_path: Path) -> None:
    res, run_id = _run("lone_refused", tmp_path)
    assert res.returncode == 1, res.stderr
    assert f"run {run_id} failed" in res.stderr
    with DurableLog(tmp_path / LOG_FILE) as log:
        assert log.run(run_id).status == "failed"


def test_a_run_ended_by_timeout_is_recorded_as_timeout_with_exit_124(tmp_path: Path) -> None:
    # the tool sleeps 20 s in a worker thread, so the run stops cleanly at its deadline
    res = terrarium("run", str(FIXTURES / "fault_sync_stall"), "--input", "go", "--runs-dir",
                    str(tmp_path), "--audio", "none", "--timeout", "2")
    assert res.returncode == 124, res.stderr
    with DurableLog(tmp_path / LOG_FILE) as log:
        [run] = log.runs()
        assert run.status == "timeout"
    shown = terrarium("log", run.run_id, "--runs-dir", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert "status timeout" in shown.stdout
    listed = terrarium("log", "--runs-dir", str(tmp_path))
    [row] = [ln for ln in listed.stdout.splitlines() if ln.startswith(run.run_id)]
    assert row.split()[5] == "timeout", listed.stdout  # id, date, time, duration (2), status
