"""`terrarium run` in a subprocess: a single creature with --input, a team fed stdin lines,
and a run killed with SIGKILL mid-turn then resumed with --resume, checked from the log.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from terrarium.channels.log import DurableLog
from terrarium.runtime.runtime import LOG_FILE

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "runtime_fixtures"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
LIMIT = 60  # seconds: a bound against hangs, never a measured figure


def terrarium(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "terrarium", *args], cwd=ROOT, env=ENV, input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True, text=True, timeout=LIMIT, check=False)


def test_single_creature_with_input(tmp_path: Path) -> None:
    res = terrarium("run", str(FIXTURES / "solo"), "--input", "what colour is the sky?",
                    "--runs-dir", str(tmp_path), "--audio", "none")
    assert res.returncode == 0, res.stderr
    assert "solo> The sky is green here." in res.stdout
    with DurableLog(tmp_path / LOG_FILE) as log:
        [run] = log.runs()
        [turn] = log.turns(run.run_id)
        assert turn.creature == "solo"
        assert [c["name"] for c in turn.calls] == ["lookup"]
        assert run.status == "completed"


def test_team_reads_stdin_lines(tmp_path: Path) -> None:
    res = terrarium("run", str(FIXTURES / "trio"), "--runs-dir", str(tmp_path),
                    "--audio", "none", stdin="hello from stdin\n\n")
    assert res.returncode == 0, res.stderr
    assert "c> All done: greeted twice." in res.stdout
    assert ": 3 turn(s)" in res.stdout
    with DurableLog(tmp_path / LOG_FILE) as log:
        [run] = log.runs()
        msgs = log.messages(run.run_id)
    assert msgs[0][0].payload == {"text": "hello from stdin"}
    assert len(msgs) == 3  # the blank line was not sent
    shown = terrarium("log", run.run_id, "--runs-dir", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert "consumed" in shown.stdout and "work" in shown.stdout


def test_max_turns_bounds_a_run(tmp_path: Path) -> None:
    res = terrarium("run", str(FIXTURES / "trio"), "--input", "hello", "--max-turns", "1",
                    "--runs-dir", str(tmp_path), "--audio", "none")
    assert res.returncode == 0, res.stderr
    assert "--max-turns 1 reached" in res.stdout


def _read(db: Path, sql: str) -> list[tuple[object, ...]]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute(sql).fetchall()
    except sqlite3.Error:
        return []  # not created yet, or mid-checkpoint: ask again


def start_slow(team: Path, runs: Path) -> subprocess.Popen[bytes]:
    # SIGINT back to its default, so the child installs Python's KeyboardInterrupt handler
    # even when this test runs under a shell that ignores SIGINT for background jobs
    return subprocess.Popen(
        [sys.executable, "-m", "terrarium", "run", str(team), "--input", "hello",
         "--runs-dir", str(runs), "--audio", "none"],
        cwd=ROOT, env=ENV, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_until_b_thinks(proc: subprocess.Popen[bytes], db: Path) -> None:
    """Until a has consumed the user's message and sent work to b (whose model is slow)."""
    deadline = time.monotonic() + LIMIT
    while not _read(db, "SELECT 1 FROM consumptions c JOIN messages m ON m.id=c.message_id"
                        " WHERE m.channel='inbox'") or not _read(
            db, "SELECT 1 FROM messages WHERE channel='work'"):
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.02)


def test_ctrl_c_stops_cleanly_and_flushes_the_log(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    db = runs / LOG_FILE
    proc = start_slow(FIXTURES / "slowtrio", runs)
    try:
        wait_until_b_thinks(proc, db)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=LIMIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    with DurableLog(db) as log:
        [run] = log.runs()
        assert run.status == "interrupted"
        assert [e.channel for e, _ in log.messages(run.run_id)] == ["inbox", "work"]
        assert [t.creature for t in log.turns(run.run_id)] == ["a"]
        assert [e.channel for e in log.unconsumed(run.run_id, "b")] == ["work"]


def test_sigkill_mid_run_then_resume_consumes_each_message_once(tmp_path: Path) -> None:
    team = tmp_path / "slowtrio"
    shutil.copytree(FIXTURES / "slowtrio", team)
    runs = tmp_path / "runs"
    db = runs / LOG_FILE
    proc = start_slow(team, runs)
    try:
        wait_until_b_thinks(proc, db)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=LIMIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert proc.returncode == -signal.SIGKILL

    with DurableLog(db) as log:
        [run] = log.runs()
        run_id = run.run_id
        assert run.status == "running"  # killed: nobody got to close the run
        pending = [e.channel for e in log.unconsumed(run_id, "b")]
        assert pending == ["work"]  # the kill landed inside b's turn
        assert not [m for m, _ in log.messages(run_id) if m.channel == "done"]

    # b answers at once on resume (same script, no thinking delay)
    script = team / "b" / "script.yaml"
    script.write_text(script.read_text().replace("delay: 30.0", "delay: 0.0"))
    res = terrarium("run", str(team), "--resume", run_id, "--runs-dir", str(runs),
                    "--audio", "none")
    assert res.returncode == 0, res.stderr
    assert f"run {run_id} of 'slowtrio'" in res.stdout
    assert "resuming: 1 unconsumed message(s) redelivered" in res.stdout
    assert "c> All done: greeted twice." in res.stdout

    with DurableLog(db) as log:
        assert log.run(run_id).status == "completed"
        msgs = log.messages(run_id)
        # no message was sent twice: nothing consumed before the kill was replayed
        assert [(e.channel, e.sender, r) for e, r in msgs] == [
            ("inbox", "user", ("a",)), ("work", "a", ("b",)), ("done", "b", ("c",))]
        for env, receivers in msgs:
            for r in receivers:
                assert env.id in log.consumed_ids(run_id, r)
        for r in ("a", "b", "c"):
            assert log.unconsumed(run_id, r) == []
        counts = _read(db, "SELECT message_id, receiver, count(*) FROM consumptions"
                           " GROUP BY message_id, receiver")
        assert len(counts) == 3 and all(n == 1 for *_, n in counts)
        done_turns = sorted(t.creature for t in log.turns(run_id) if t.error is None)
        assert done_turns == ["a", "b", "c"]  # each message was worked on once


def test_a_team_that_cannot_start_exits_with_the_reason(tmp_path: Path) -> None:
    res = terrarium("run", str(FIXTURES / "tiny_window"), "--input", "hi",
                    "--runs-dir", str(tmp_path), "--audio", "none")
    assert res.returncode == 1
    assert "error: The prefix of 'solo' needs" in res.stderr


def test_a_model_failure_in_a_single_creature_run_reads_as_a_sentence(tmp_path: Path) -> None:
    res = terrarium("run", str(FIXTURES / "mute"), "--input", "hello",
                    "--runs-dir", str(tmp_path), "--audio", "none")
    assert res.returncode == 1
    assert res.stderr.startswith("error: no scripted step matches call 1"), res.stderr
    assert "Traceback" not in res.stderr and "ExceptionGroup" not in res.stderr
    with DurableLog(tmp_path / LOG_FILE) as log:
        assert log.runs()[0].status == "failed"
