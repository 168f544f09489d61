"""A streamed reply's deltas that arrive between two commits are one ``output_text`` row
(``SessionEvents._join``): the same text in the same order, once, in fewer rows, numbered
without gaps; a delta after a commit, after another event, of another output or past
``JOIN_LIMIT`` starts a row of its own. And end to end: a reply streamed in many deltas
reads back whole from the log, from a reconnect in the middle, and from the live stream."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import pytest

from terrarium.channels.log import DurableLog
from terrarium.channels.writer import LogWriter
from terrarium.events import CreatureState, OutputText
from terrarium.runtime.sessions import SessionStore
from terrarium.serve import ServeSettings, create_app
from terrarium.serve.events import JOIN_LIMIT, EventWriter, SessionEvents

pytestmark = pytest.mark.anyio


def _delta(text: str, output: str = "out", creature: str = "echo") -> OutputText:
    return OutputText(creature=creature, output=output, text=text)


def _rows(log: DurableLog, run_id: str) -> list[tuple[int, str, dict[str, object]]]:
    return [(seq, kind, json.loads(data)) for seq, kind, data in log.query(
        "SELECT seq, kind, data FROM events WHERE run_id=? ORDER BY seq", (run_id,))]


def test_deltas_between_two_commits_are_one_row(tmp_path: Path) -> None:
    log = DurableLog(tmp_path / "log.sqlite3")
    SessionStore(log)  # (its tables)
    run_id = log.start_run("t")
    writer = LogWriter(log)
    events = SessionEvents("s" * 32, run_id, log, EventWriter(log), writer)
    seen: list[int] = []
    events.listeners.append(lambda seq, ev: seen.append(seq))
    for piece in ("He", "ard", " you."):
        events.offer(_delta(piece))
    assert events.last_seq == 1  # one number for the three
    writer.commit_now()
    events.offer(_delta(" And"))  # the row before is committed: a row of its own
    events.offer(_delta(" more."))
    events.offer(_delta("(aside)", output="side"))  # another output: its own row
    events.offer(_delta(" Then"))  # after another event: its own row
    events.offer(CreatureState(creature="echo", state="idle"))
    events.offer(_delta(" end."))
    writer.commit_now()
    rows = _rows(log, run_id)
    assert [(s, k) for s, k, _ in rows] == [(1, "output_text"), (2, "output_text"),
                                            (3, "output_text"), (4, "output_text"),
                                            (5, "creature_state"), (6, "output_text")]
    assert [d.get("text") for _, _, d in rows] == [
        "Heard you.", " And more.", "(aside)", " Then", None, " end."]
    assert all(d["seq"] == s for s, _, d in rows)
    assert seen == [1, 1, 1, 2, 2, 3, 4, 5, 6]  # listeners hear every delta, at its row
    # what a stream gives (committed rows in memory, and read back from the log) is the
    # log's rows
    assert [json.loads(d) for _, _, d in events.read(0)] == [d for _, _, d in rows]
    events.recent.clear()
    assert [json.loads(d) for _, _, d in events.read(0)] == [d for _, _, d in rows]
    log.close()


def test_a_row_takes_joined_text_up_to_its_limit(tmp_path: Path) -> None:
    log = DurableLog(tmp_path / "log.sqlite3")
    SessionStore(log)  # (its tables)
    run_id = log.start_run("t")
    writer = LogWriter(log)
    events = SessionEvents("s" * 32, run_id, log, EventWriter(log), writer)
    piece = "x" * 1000
    n = JOIN_LIMIT // 1000 + 2
    for _ in range(n):
        events.offer(_delta(piece))
    writer.commit_now()
    rows = _rows(log, run_id)
    assert [len(str(d["text"])) for _, _, d in rows] == [JOIN_LIMIT // 1000 * 1000, 2000]
    assert "".join(str(d["text"]) for _, _, d in rows) == piece * n
    log.close()


TEAM = """\
terrarium:
  name: echo
  input_channel: inbox
  creatures:
    - name: echo
      config: echo
      channels: {listen: [inbox]}
  channels:
    inbox: {type: queue, schema: {fields: {text: str}}}
"""
CREATURE = """\
name: echo
controller: {provider: scripted, script: script.yaml}
skill_mode: static
output: {default: out, named_outputs: {out: {type: stdout}}}
"""
REPLY = "Every byte of this reply arrives once, in order, however it was cut. " * 3


async def test_a_reply_in_many_deltas_reads_back_whole_once(tmp_path: Path) -> None:
    from terrarium.config import load_team

    team = tmp_path / "team"
    (team / "echo").mkdir(parents=True)
    (team / "terrarium.yaml").write_text(TEAM)
    (team / "echo" / "config.yaml").write_text(CREATURE)
    (team / "echo" / "script.yaml").write_text(f'default_reply: "{REPLY}"\nchunk: 3\n')
    app = create_app(load_team(team), ServeSettings(runs_dir=tmp_path / "runs",
                                                    warm_up=False))
    mgr = app.state.manager
    async with anyio.create_task_group() as tg:
        await tg.start(mgr.run)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://t") as c:
            sid = (await c.post("/v1/sessions", json={})).json()["id"]
            events = mgr.events_of(sid)
            live: list[tuple[int, str, str]] = []
            for text in ("one", "two"):
                r = await c.post(f"/v1/sessions/{sid}/input", json={"text": text})
                after = r.json()["seq"]
                with anyio.fail_after(20):
                    while not any(k == "turn_ended" for _, k, _ in live):
                        rows = await events.wait(after)
                        live += rows
                        after = rows[-1][0]
                said = "".join(json.loads(d)["text"] for _, k, d in live
                               if k == "output_text")
                assert said == REPLY  # every byte, in order, once
                deltas = -(-len(REPLY) // 3)
                assert 1 <= sum(k == "output_text" for _, k, _ in live) < deltas
                # a client reconnecting after each event it saw gets the rest, whole
                for _, (seq, _, _) in zip(range(6), live, strict=False):
                    rest = events.read(seq)
                    assert [r[0] for r in rest] == [r[0] for r in live if r[0] > seq]
                assert [r[0] for r in live] == list(range(live[0][0], live[-1][0] + 1))
                live.clear()
        await mgr.flush()
        tg.cancel_scope.cancel()
    mgr.log.close()


def test_reads_from_memory_by_place_and_past_a_gap(tmp_path: Path) -> None:
    """``read(after)`` from the events kept in memory: by place while their numbers have
    no gap, by a look at each past one (a commit that failed leaves its rows out)."""
    log = DurableLog(tmp_path / "log.sqlite3")
    SessionStore(log)
    run_id = log.start_run("t")
    events = SessionEvents("s" * 32, run_id, log, EventWriter(log), LogWriter(log))
    events._committed([(n, "k", f"d{n}") for n in range(1, 6)])
    assert [r[0] for r in events.read(0)] == [1, 2, 3, 4, 5]
    assert [r[0] for r in events.read(3)] == [4, 5]
    assert [r[0] for r in events.read(1, limit=2)] == [2, 3]
    assert events.read(5) == []
    events._committed([(n, "k", f"d{n}") for n in (8, 9)])  # 6 and 7 never committed
    assert [r[0] for r in events.read(2)] == [3, 4, 5, 8, 9]
    assert [r[0] for r in events.read(5)] == [8, 9]
    assert [r[2] for r in events.read(7, limit=1)] == ["d8"]
    log.close()
