"""Exactly-once effects across a crash mid-turn: SIGKILL at every crash point of a team's
turns (each writes memory and sends on a channel), then ``--resume``; no message and no
memory row may be lost or duplicated, and every consumed message is consumed once. The
same around file edits (write, append, edit, multi_edit): each change lands exactly once.

The kill points come from ``terrarium.crashpoints`` (test-only, env-driven): a first run
lists them, then one run per point is killed there by the process itself.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from terrarium.channels.log import DurableLog
from terrarium.runtime.runtime import LOG_FILE

ROOT = Path(__file__).resolve().parents[2]
TEAM = ROOT / "tests" / "runtime_fixtures" / "killtrio"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("TERRARIUM_TEST_")}
ENV.update(PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
# a bound on a hung process, not a timing: a run takes ~6 s quiet, and under load 20 over 60
LIMIT = 300
TRIALS = 24  # kill points tried, spread evenly over all of them (each costs two processes)
KEY_POINTS = ("turn.delta", "turn.send", "hub.send.check", "hub.send.logged",
              "hub.send.delivered", "turn.sent", "tool.check", "tool.ran", "tool.recorded",
              "turn.end", "hub.consume.before", "hub.consume.after", "supervisor.consumed")


def _run(runs: Path, *extra: str, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "terrarium", "run", str(TEAM), "--runs-dir", str(runs),
         "--audio", "none", *extra],
        cwd=ROOT, env=env or ENV, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=LIMIT, check=False)


def _crash_points(tmp: Path) -> list[str]:
    trace = tmp / "trace.txt"
    res = _run(tmp / "count", "--input", "hello", env={**ENV, "TERRARIUM_TEST_CRASHPOINTS":
                                                       str(trace)})
    assert res.returncode == 0, res.stderr
    return [line.split(" ", 1)[1] for line in trace.read_text().splitlines()]


def _trial(tmp: Path, point: int) -> tuple[int, str, str]:
    """Kill at ``point``, resume, and return (point, what the resumed run printed, run id)."""
    runs = tmp / f"kill{point}"
    killed = _run(runs, "--input", "hello", env={**ENV, "TERRARIUM_TEST_KILL_AT": str(point)})
    assert killed.returncode == -signal.SIGKILL, (point, killed.returncode, killed.stderr)
    with DurableLog(runs / LOG_FILE) as log:
        [run] = log.runs()
    resumed = _run(runs, "--resume", run.run_id)
    assert resumed.returncode == 0, (point, resumed.stderr)
    return point, killed.stdout + resumed.stdout, run.run_id


def _memory_rows(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT creature, text FROM memories ORDER BY id").fetchall()


def test_sigkill_at_every_point_of_a_turn_then_resume_loses_and_duplicates_nothing(
        tmp_path: Path) -> None:
    points = _crash_points(tmp_path)
    assert len(points) >= 20, points
    # the kill points cover the turn: the model stream, the send before and after its log
    # write, the memory write before and after its record, the consumption; each kind is
    # tried at least once, the rest evenly spread
    chosen = {points.index(label) + 1 for label in KEY_POINTS}
    step = len(points) / TRIALS
    k = 0
    while len(chosen) < min(TRIALS, len(points)):
        chosen.add(int(k * step) % len(points) + 1)
        k += 1
    assert len(chosen) >= 20
    shutil.rmtree(tmp_path / "count")
    with ThreadPoolExecutor(max_workers=4) as pool:
        trials = list(pool.map(lambda n: _trial(tmp_path, n), sorted(chosen)))

    for point, printed, run_id in trials:
        runs = tmp_path / f"kill{point}"
        where = f"killed at #{point} ({points[point - 1]})"
        # printed output is at-least-once: a turn cut by the kill streams again on resume
        assert "c> All done: greeted twice." in printed, (where, printed)
        with DurableLog(runs / LOG_FILE) as log:
            assert log.run(run_id).status == "completed", where
            msgs = log.messages(run_id)
            assert [(e.channel, e.sender, e.payload) for e, _ in msgs] == [
                ("inbox", "user", {"text": "hello"}),
                ("work", "a", {"task": "greet", "n": 2}),
                ("done", "b", {"text": "greeted twice"}),
            ], where
            for env, receivers in msgs:
                for r in receivers:
                    assert env.id in log.consumed_ids(run_id, r), where
            for r in ("a", "b", "c"):
                assert log.unconsumed(run_id, r) == [], where
            # the turn that finished saw every call succeed, as the first attempt did
            for t in log.turns(run_id):
                if t.error is None:
                    assert all(c["ok"] for c in t.calls), (where, t.calls)
                    for c in t.calls:
                        if c["name"] == "memory_write":
                            assert c["result"].startswith("Remembered as #"), (where, c)
                        if c["name"].startswith("send_"):
                            assert c["result"] == f"Sent on {c['name'][5:]} to 1 listener.", \
                                (where, c)
        # one exactly-once id per send: the message id is the log's dedupe key, and
        # derives from the message its turn consumed (its time prefix plus the send's rank)
        with sqlite3.connect(runs / LOG_FILE) as conn:
            rows = conn.execute("SELECT id, send_key, sender FROM messages WHERE run_id=?"
                                " ORDER BY id", (run_id,)).fetchall()
        assert [(i == k, s) for i, k, s in rows[1:]] == [(True, "a"), (True, "b")], where
        for parent, child in ((rows[0][0], rows[1][0]), (rows[1][0], rows[2][0])):
            assert child[:16] == f"{int(parent[:16], 16) + 1:016x}", where
        assert sorted(_memory_rows(runs / run_id / "memory.sqlite3")) == [
            ("a", "The user said hello."), ("b", "Greeted the user twice.")], where


EDIT_TEAM = ROOT / "tests" / "runtime_fixtures" / "killedit"
# what the turn leaves in the file: each edit applied twice would change it again
# ("one+1+1", "two+2+2"), an append applied twice would add a second "two" line
EDITED = "one+1\ntwo+2\n"
# around each of the four file calls: its plan recorded, the file changed, the call done,
# its result recorded; then the turn's end and the consumption of its message
EDIT_POINTS = ("file.planned", "file.applied", "tool.ran", "tool.recorded", "turn.end",
               "hub.consume", "supervisor.consumed")


def _edit_trial(tmp: Path, point: int) -> tuple[int, str, str]:
    runs = tmp / f"kill{point}"
    args = ("run", str(EDIT_TEAM), "--runs-dir", str(runs), "--audio", "none")
    killed = subprocess.run(
        [sys.executable, "-m", "terrarium", *args, "--input", "hello"], cwd=ROOT,
        env={**ENV, "TERRARIUM_TEST_KILL_AT": str(point)}, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=LIMIT, check=False)
    assert killed.returncode == -signal.SIGKILL, (point, killed.returncode, killed.stderr)
    with DurableLog(runs / LOG_FILE) as log:
        [run] = log.runs()
    resumed = subprocess.run(
        [sys.executable, "-m", "terrarium", *args, "--resume", run.run_id], cwd=ROOT, env=ENV,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=LIMIT, check=False)
    assert resumed.returncode == 0, (point, resumed.stderr)
    return point, killed.stdout + resumed.stdout, run.run_id


def test_sigkill_around_file_edits_then_resume_applies_each_edit_exactly_once(
        tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    res = subprocess.run(
        [sys.executable, "-m", "terrarium", "run", str(EDIT_TEAM), "--runs-dir",
         str(tmp_path / "count"), "--audio", "none", "--input", "hello"], cwd=ROOT,
        env={**ENV, "TERRARIUM_TEST_CRASHPOINTS": str(trace)}, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=LIMIT, check=False)
    assert res.returncode == 0, res.stderr
    points = [line.split(" ", 1)[1] for line in trace.read_text().splitlines()]
    chosen = [n for n, label in enumerate(points, 1) if label.startswith(EDIT_POINTS)]
    assert sum(p.startswith("file.applied") for p in points) == 4, points
    assert len(chosen) >= 20, points
    with ThreadPoolExecutor(max_workers=4) as pool:
        trials = list(pool.map(lambda n: _edit_trial(tmp_path, n), chosen))
    for point, printed, run_id in trials:
        runs = tmp_path / f"kill{point}"
        where = f"killed at #{point} ({points[point - 1]})"
        assert "Edited the notes." in printed, (where, printed)
        notes = runs / run_id / "workspace" / "e" / "notes.txt"
        assert notes.read_text(encoding="utf-8") == EDITED, where
        with DurableLog(runs / LOG_FILE) as log:
            assert log.run(run_id).status == "completed", where
            assert log.unconsumed(run_id, "e") == [], where
            finished = [t for t in log.turns(run_id) if t.error is None]
            assert finished, where
            # the call results the resumed turn saw are those of the first application
            results = [c["result"] for c in finished[-1].calls]
            assert results == [
                "Wrote 4 bytes to notes.txt.", "Appended 4 bytes to notes.txt.",
                "Edited notes.txt: replaced 1 at line 1.",
                "Edited notes.txt: replaced 1 at line 2.",
            ], (where, results)


def test_exactly_once_id_is_deterministic_and_sorts_after_its_cause() -> None:
    from terrarium.channels.envelope import new_message_id
    from terrarium.runtime.creature import effect_message_id

    parent = new_message_id()
    first = effect_message_id("run1", parent, "a/x/1.0", 1)
    assert first == effect_message_id("run1", parent, "a/x/1.0", 1)  # the same on resume
    assert first != effect_message_id("run2", parent, "a/x/1.0", 1)  # another run
    assert first != effect_message_id("run1", parent, "a/x/1.1", 1)  # another call
    second = effect_message_id("run1", parent, "a/x/1.1", 2)
    assert parent < first < second and len(first) == len(parent)
    assert effect_message_id("run1", "m1", "k", 1).startswith("m1.1.")  # not a time id
