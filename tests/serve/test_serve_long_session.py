"""A served session of many turns: each turn's save appends what the turn added (the log
does not rewrite the conversation whole: runtime/history.py), and the session unloaded and
loaded again has its conversation back byte for byte."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from terrarium.config import load_team
from terrarium.runtime.history import PART_SQL, newest_conversation
from terrarium.serve import ServeSettings, create_app

pytestmark = pytest.mark.anyio

TURNS = 80


def _team(folder: Path) -> Path:
    """One echo creature on the scripted model that keeps its whole history."""
    (folder / "echo").mkdir(parents=True)
    (folder / "terrarium.yaml").write_text(
        "terrarium:\n  name: echo\n  input_channel: inbox\n  creatures:\n"
        "    - name: echo\n      config: echo\n      channels: {listen: [inbox]}\n"
        "  channels:\n    inbox: {type: queue, schema: {fields: {text: str}}}\n")
    (folder / "echo" / "config.yaml").write_text(
        "name: echo\ncontroller: {provider: scripted, script: script.yaml}\n"
        "skill_mode: static\noutput: {default: out, named_outputs: {out: {type: stdout}}}\n")
    (folder / "echo" / "script.yaml").write_text('default_reply: "Heard you."\n')
    return folder


def _bytes(conversation: Any) -> bytes:
    return orjson.dumps([[t.role, t.content, t.name, t.tool_call_id] for t in conversation])


async def test_a_long_session_appends_and_comes_back_byte_identical(tmp_path: Path) -> None:
    app = create_app(load_team(_team(tmp_path / "team")), ServeSettings(
        runs_dir=tmp_path / "runs", rate=1e6, warm_up=False, idle_unload=3600))
    mgr = app.state.manager
    written: list[int] = []  # each transaction's conversation text (parts and rows)
    inner = mgr.log.write_batch

    def recorded(ops: Any) -> None:
        ops = list(ops)
        written.append(sum(len(r[5]) for sql, rows in ops if sql == PART_SQL for r in rows))
        inner(ops)

    mgr.log.write_batch = recorded
    async with anyio.create_task_group() as tg:
        await tg.start(mgr.run)
        sid = mgr.create(None).id

        async def one(text: str) -> None:
            live = await mgr.load(sid)
            after = await mgr.send(live, text=text)
            events = mgr.events_of(sid)
            with anyio.fail_after(20):
                while True:
                    rows = await events.wait(after)
                    if any(kind == "turn_ended" for _, kind, _ in rows):
                        return
                    after = rows[-1][0]

        parts: list[int] = []
        for i in range(TURNS):
            before = len(written)
            await one(f"input number {i}")
            await mgr.flush()
            parts.append(sum(written[before:]))
        live = mgr.loaded[sid]
        assert live.rt is not None
        ctl = live.rt._creatures["echo"].controller
        held = _bytes(ctl.conversation)
        assert ctl.turns == TURNS and len(ctl.conversation) >= 2 * TURNS
        assert live.rt.results == [] and live.rt.turns_total == TURNS  # none kept: no report
        live.stop()
        await live.stopped.wait()
        assert sid not in mgr.loaded
        # loaded again: the conversation it had, byte for byte
        live = await mgr.load(sid)
        assert live.rt is not None
        back = live.rt._creatures["echo"].controller
        assert _bytes(back.conversation) == held and back.turns == TURNS
        info = mgr.info(sid)
        assert orjson.dumps(newest_conversation(mgr.log.query, info.run_id, "echo")) == held
        # and goes on from it
        await one("one more")
        await mgr.flush()
        tg.cancel_scope.cancel()
    # a turn's save wrote its own entries, not the whole conversation (the first turn's
    # and the 80th's are the same size but for the input's number)
    assert 0 < parts[-1] <= parts[1] + 8, (parts[1], parts[-1])
    assert len(held) > 10 * parts[-1]
