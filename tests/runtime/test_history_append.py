"""A session creature's saved conversation is appended turn by turn (runtime/history.py):
what a turn's save writes does not grow with the session, and every saved conversation is
restored byte for byte: after many turns, after ``history_turns`` or a rewrite, after a save
that did not commit, in a new process, and after a crash left the newest one's message
unconsumed."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson

from terrarium.channels.log import CONSUME_SQL, DurableLog
from terrarium.prompt.tail import Turn
from terrarium.runtime.history import (
    CLEAR_SQL,
    HISTORY_SQL,
    PART_SQL,
    SavedConversation,
    newest_conversation,
    restore_history,
)
from terrarium.runtime.sessions import ensure_session_tables

RUN = "run1"


def _log(tmp_path: Path) -> DurableLog:
    log = DurableLog(tmp_path / "log.sqlite3")
    ensure_session_tables(log)
    return log


def _text(ctl: Any) -> bytes:
    """The conversation as bytes: what "byte-identical" compares."""
    return orjson.dumps([[t.role, t.content, t.name, t.tool_call_id] for t in ctl.conversation])


def _turn(ctl: Any, i: int) -> None:
    """One turn's entries: the input, a tool call's result, the reply (not only ASCII)."""
    ctl.conversation.append(Turn("user", f"input {i}: Ståle sagt «hei» {'x' * (i % 7)}"))
    if i % 5 == 0:
        ctl.conversation.append(Turn("tool", f"result {i}", name="search",
                                     tool_call_id=f"call-{i}"))
    ctl.conversation.append(Turn("assistant", f"reply {i} \u2014 ok"))
    ctl.turns += 1


def _save(log: DurableLog, saved: SavedConversation, ctl: Any, key: str, *,
          consumed: bool = True) -> int:
    """Commit the save of the turn over ``key`` (and its consumption); the bytes of
    conversation text it wrote."""
    ops = saved.ops(RUN, "bot", key, ctl)
    if consumed:
        ops.append((CONSUME_SQL, [(key, "bot", RUN, 1.0)]))
    log.write_batch(ops)
    return sum(len(r[5]) for sql, rows in ops if sql == PART_SQL for r in rows) + sum(
        len(r[4]) for sql, rows in ops if sql == HISTORY_SQL for r in rows)


def _restored(log: DurableLog) -> Any:
    ctl = SimpleNamespace(conversation=[], turns=0)
    assert restore_history(log, RUN, "bot", ctl)  # type: ignore[arg-type]
    return ctl


def _parts(log: DurableLog) -> list[tuple[str, int]]:
    return [(g, p) for g, p in log.query(
        "SELECT gen, pos FROM history_parts WHERE run_id=? ORDER BY gen, pos", (RUN,))]


def test_a_long_session_appends_each_turn_and_resumes_byte_identical(tmp_path: Path) -> None:
    ctl = SimpleNamespace(conversation=[], turns=0)
    saved = SavedConversation()
    written: list[int] = []
    with _log(tmp_path) as log:
        for i in range(300):
            _turn(ctl, i)
            written.append(_save(log, saved, ctl, f"m{i}"))
            if i % 60 == 59 or i < 3:
                back = _restored(log)
                assert _text(back) == _text(ctl) and back.turns == ctl.turns == i + 1
        # what a turn's save writes: its own entries and a short row, not the history
        # (the whole conversation is ~40 KB by now; turns 1 and 299 add the same entries
        # but for their numbers)
        assert len(_text(ctl)) > 30_000
        assert written[299] < written[1] + 20, (written[1], written[299])
        assert written[299] < 200
        # one part a turn, two kept rows, nothing rewritten
        assert len(_parts(log)) == 300
        assert log.query("SELECT count(*) FROM histories")[0][0] == 2
        assert [r[0] for r in newest_conversation(log.query, RUN, "bot")][-2:] == [
            "user", "assistant"]


def test_a_rewritten_conversation_is_saved_whole_and_then_appended_again(
        tmp_path: Path) -> None:
    ctl = SimpleNamespace(conversation=[], turns=0)
    saved = SavedConversation()
    with _log(tmp_path) as log:
        for i in range(4):
            _turn(ctl, i)
            _save(log, saved, ctl, f"m{i}")
        first_gen = {g for g, _ in _parts(log)}
        # history_turns: the oldest entries dropped, the turn's appended
        ctl.conversation = ctl.conversation[-2:]
        _turn(ctl, 4)
        _save(log, saved, ctl, "m4")
        row = log.query("SELECT conversation FROM histories WHERE message_id='m4'")[0][0]
        assert row.startswith("[[")  # saved whole, as the setting keeps it short
        assert _text(_restored(log)) == _text(ctl)
        # an entry put before what was saved (a rewrite), then only appends again
        ctl.conversation.insert(1, Turn("system", "pinned"))
        _turn(ctl, 5)
        _save(log, saved, ctl, "m5")
        assert _text(_restored(log)) == _text(ctl)
        for i in range(6, 9):
            _turn(ctl, i)
            ops = saved.ops(RUN, "bot", f"m{i}", ctl)
            log.write_batch([*ops, (CONSUME_SQL, [(f"m{i}", "bot", RUN, 1.0)])])
            assert _text(_restored(log)) == _text(ctl)
        # the first generation's parts went once no kept row reached them
        gens = {g for g, _ in _parts(log)}
        assert gens and not gens & first_gen
        assert len(gens) == 1, gens


def test_a_generation_no_row_reaches_is_deleted_by_its_name(tmp_path: Path) -> None:
    ctl = SimpleNamespace(conversation=[], turns=0)
    saved = SavedConversation()
    cleared: list[int] = []
    with _log(tmp_path) as log:
        for i in range(6):
            if i == 3:
                ctl.conversation = ctl.conversation[-1:]  # rewritten: a row of its own
            _turn(ctl, i)
            ops = saved.ops(RUN, "bot", f"m{i}", ctl)
            cleared += [i for sql, _ in ops if sql == CLEAR_SQL]
            log.write_batch([*ops, (CONSUME_SQL, [(f"m{i}", "bot", RUN, 1.0)])])
            assert _text(_restored(log)) == _text(ctl)
            if i == 3:
                gen_a = {g for g, _ in _parts(log)}
        # turn 4 appended (a new generation, the whole conversation) and dropped the row
        # of turn 2, the last to reach the first generation: its parts went with it
        assert cleared == [4]
        gens = {g for g, _ in _parts(log)}
        assert len(gens) == 1 and not gens & gen_a


def test_a_save_that_did_not_commit_is_written_whole_next_time(tmp_path: Path) -> None:
    ctl = SimpleNamespace(conversation=[], turns=0)
    saved = SavedConversation()
    with _log(tmp_path) as log:
        for i in range(3):
            _turn(ctl, i)
            _save(log, saved, ctl, f"m{i}")
        _turn(ctl, 3)
        saved.ops(RUN, "bot", "m3", ctl)  # its transaction failed: never written
        saved.forget()
        _turn(ctl, 4)
        ops = saved.ops(RUN, "bot", "m4", ctl)
        parts = [r for sql, rows in ops if sql == PART_SQL for r in rows]
        assert len(parts) == 1 and parts[0][3] == 0  # the whole conversation, from 0
        log.write_batch([*ops, (CONSUME_SQL, [("m4", "bot", RUN, 1.0)])])
        assert _text(_restored(log)) == _text(ctl)


def test_a_new_process_goes_on_and_a_crash_restores_the_turn_before(tmp_path: Path) -> None:
    ctl = SimpleNamespace(conversation=[], turns=0)
    with _log(tmp_path) as log:
        first = SavedConversation()
        for i in range(5):
            _turn(ctl, i)
            _save(log, first, ctl, f"m{i}")
        # a new process (a reload, a worker): restored, then saves of its own
        ctl = _restored(log)
        second = SavedConversation()
        before = _text(ctl)
        _turn(ctl, 5)
        _save(log, second, ctl, "m5", consumed=False)  # the crash: m5 not consumed
        back = _restored(log)
        assert _text(back) == before  # the turn before it, exactly (its message comes again)
        ctl = back
        third = SavedConversation()
        for i in range(5, 9):
            _turn(ctl, i)
            _save(log, third, ctl, f"m{i}")
            assert _text(_restored(log)) == _text(ctl)
        # the older processes' generations went once no kept row reached them
        assert len({g for g, _ in _parts(log)}) == 1
        assert log.query("SELECT count(*) FROM histories")[0][0] == 2


def test_rows_of_older_logs_are_read_as_they_are(tmp_path: Path) -> None:
    with _log(tmp_path) as log:
        whole = orjson.dumps([["user", "hi", None, None], ["assistant", "hello", None, None]])
        log.write_batch([(HISTORY_SQL, [(RUN, "bot", "m0", 1, whole.decode(), 1.0)]),
                         (CONSUME_SQL, [("m0", "bot", RUN, 1.0)])])
        back = _restored(log)
        assert _text(back) == whole and back.turns == 1
        # and the next save goes on from it: a generation of its own, exact
        _turn(back, 1)
        _save(log, SavedConversation(), back, "m1")
        assert _text(_restored(log)) == _text(back)
