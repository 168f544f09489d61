"""The events table's indexes: a run's events in log order (``events_by_run``) and its
jobs' by kind (``events_jobs``, partial: a turn's events are not in it). The index of every
row by (run_id, kind) that logs had before (``events_run``) put each kind of a run's events
on a leaf page of its own, so a turn's commit wrote a page for each kind it had; a log that
has it drops it when opened, and reads give the same rows as before."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from terrarium.channels.log import NUMBERED_EVENT_SQL, DurableLog

# a served echo turn's events (message_consumed ... turn_ended): eight kinds in ten rows
TURN = ["message_consumed", "turn_started", "transcript", "prompt", "creature_state",
        "creature_state", "output_text", "transcript", "creature_state", "turn_ended"]


def _frames(path: Path, page: int) -> int:
    wal = path.with_name(path.name + "-wal")
    return (wal.stat().st_size - 32) // (page + 24) if wal.exists() else 0


def _turns(log: DurableLog, run: str, first: int, n: int) -> int:
    seq = first
    for _ in range(n):
        rows = []
        for kind in TURN:
            rows.append((run, 1.0, kind, "echo", json.dumps({"kind": kind, "seq": seq}), seq))
            seq += 1
        log.write_batch([(NUMBERED_EVENT_SQL, rows)])
    return seq


def test_a_turns_commit_writes_a_few_pages_not_one_a_kind(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite3"
    with DurableLog(path) as log:
        log._conn.execute("PRAGMA wal_autocheckpoint=0")  # the WAL keeps every frame
        page = log._conn.execute("PRAGMA page_size").fetchone()[0]
        run = log.start_run("t")
        seq = _turns(log, run, 1, 600)  # a run with 6,000 events: many pages of each
        before = _frames(path, page)
        _turns(log, run, seq, 20)
        per_commit = (_frames(path, page) - before) / 20
        # the last leaves of the table, events_by_run and events_seq, page 1 (the file's
        # size) and now and then a split: 6.7; with events_run 18.0 (a leaf for each kind,
        # and their splits)
        assert per_commit <= 9, per_commit


def test_an_old_logs_index_by_kind_goes_and_reads_give_the_same_rows(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite3"
    with DurableLog(path) as log:
        run = log.start_run("t")
        other = log.start_run("t")
        rows = [(r, float(i), k, None, json.dumps({"i": i})) for i, (r, k) in enumerate(
            [(run, "turn_started"), (run, "job_started"), (other, "job_started"),
             (run, "generic"), (run, "transcript"), (run, "job_ended")])]
        log.write_batch([("INSERT INTO events(run_id, ts, kind, creature, data)"
                          " VALUES (?,?,?,?,?)", rows)])
    conn = sqlite3.connect(path)  # as an earlier version left it
    conn.execute("CREATE INDEX events_run ON events(run_id, kind)")
    conn.close()
    with DurableLog(path) as log:
        names = {r[0] for r in log.query("SELECT name FROM sqlite_master WHERE type='index'")}
        assert "events_run" not in names and {"events_by_run", "events_jobs"} <= names
        assert [e["i"] for e in log.events(run)] == [0, 1, 3, 4, 5]
        # the jobs' kinds (and old generic rows) through their partial index, in order
        assert [e["i"] for e in log.events(run, ["job_started", "job_ended"])] == [1, 3, 5]
        assert [e["i"] for e in log.events(run, ["job_ended"])] == [3, 5]
        assert [e["i"] for e in log.events(run, ["transcript"])] == [3, 4]
        # the queries ``events`` makes, as SQLite plans them
        asked: list[tuple[str, tuple[object, ...]]] = []
        inner = log._query
        log._query = lambda sql, params=(): asked.append((sql, params)) or inner(sql, params)
        log.events(run, ["job_started", "job_ended"])
        log.events(run)
        log._query = inner
        jobs, whole = (str(log.query(f"EXPLAIN QUERY PLAN {q}", p)) for q, p in asked)
        assert "events_jobs" in jobs and "TEMP B-TREE" not in jobs
        assert "events_by_run" in whole and "TEMP B-TREE" not in whole
