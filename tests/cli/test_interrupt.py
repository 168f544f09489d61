"""Ctrl-C in the middle of ``terrarium run``: exit 130 (README), no traceback, and a last
line that says which run was cut off and how to resume it (before: a bare 130)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEAM = ROOT / "examples" / "scripted_newsroom"
LIMIT = 120  # seconds: a bound against hangs, never a measured figure


def test_ctrl_c_mid_run_ends_130_and_says_how_to_resume(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "terrarium", "run", str(TEAM), "--runs-dir", str(tmp_path),
         "--audio", "none"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for line in proc.stdout:  # the team is ready: stdin is read from now on
            if line.startswith("ready in"):
                break
        proc.stdin.write("A comet was seen over Oslo.\n")
        proc.stdin.flush()
        for line in proc.stdout:  # mid-run: the first reply is out, stdin still open
            if line.startswith("archivist>"):
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=LIMIT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in out + err
    [last] = [ln for ln in err.splitlines() if ln.startswith("interrupted (Ctrl-C): run ")]
    run_id = last.split()[3]
    assert f"is recorded as interrupted; `terrarium run {TEAM} --runs-dir {tmp_path} " \
           f"--resume {run_id}`" in last
