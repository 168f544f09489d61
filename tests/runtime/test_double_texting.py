"""``double_texting``: what a creature does with messages that arrive while a turn runs.

``enqueue`` (the default): a turn each. ``merge``: the next turn takes every message
waiting on its channel, in order, each consumed exactly once; a merged turn done again
after a crash takes the same messages (the log keeps which). Orders and counts are
asserted, never times."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from terrarium.channels.envelope import Envelope, new_message_id
from terrarium.channels.log import DurableLog
from terrarium.config import load_team
from terrarium.errors import ConfigErrors
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest, StreamDelta
from terrarium.runtime.runtime import LOG_FILE, RuntimeOptions, TeamRuntime

TEAM = """\
terrarium:
  name: texting
  input_channel: inbox
  creatures:
    - name: echo
      config: echo
      channels: {listen: [inbox, side]}
  channels:
    inbox: {type: queue, schema: {fields: {text: str}}}
    side: {type: queue, schema: {fields: {text: str}}}
"""
CREATURE = """\
name: echo
controller: {provider: scripted, script: script.yaml}
skill_mode: static
history_turns: 8
output: {default: out, named_outputs: {out: {type: stdout}}}
"""


def write_team(folder: Path, policy: str | None, wait: float = 0.0) -> Path:
    (folder / "echo").mkdir(parents=True, exist_ok=True)
    (folder / "terrarium.yaml").write_text(TEAM)
    extra = f"double_texting: {policy}\n" if policy else ""
    extra += f"double_texting_wait: {wait}\n" if wait else ""
    (folder / "echo" / "config.yaml").write_text(CREATURE + extra)
    (folder / "echo" / "script.yaml").write_text('default_reply: "Heard you."\n')
    return folder


class Held(ScriptedModel):
    """Answers at once, but its first answer waits until ``go`` is set (the first turn
    runs while the next messages arrive)."""

    def __init__(self) -> None:
        super().__init__(default_reply="Heard you.")
        self.started = anyio.Event()
        self.go = anyio.Event()

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        if not self.started.is_set():
            self.started.set()
            await self.go.wait()
        async for delta in super().stream(request):
            yield delta


def _user_texts(request: ChatRequest) -> str:
    return "\n".join(str(m.content) for m in request.messages if m.role == "user")


async def _burst(rt: TeamRuntime, model: Held, side: bool = False) -> None:
    """One message, then (while its turn runs) two more on the input channel and, with
    ``side``, one on another channel between them."""
    await rt.send("inbox", {"text": "first"})
    await model.started.wait()
    await rt.send("inbox", {"text": "second"})
    if side:
        await rt.send("side", {"text": "aside"})
    await rt.send("inbox", {"text": "third"})
    model.go.set()
    await rt.wait_idle()


def _run(tmp_path: Path, policy: str | None, side: bool = False
         ) -> tuple[TeamRuntime, Held]:
    team = load_team(write_team(tmp_path / "team", policy))
    model = Held()
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", models={"echo": model})

    async def go() -> TeamRuntime:
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(30):
                await _burst(rt, model, side)
        return rt

    return anyio.run(go), model


def _consumed_once(tmp_path: Path, run_id: str) -> list[str]:
    with DurableLog(tmp_path / "runs" / LOG_FILE) as log:
        sent = [e.id for e, _ in log.messages(run_id)]
        rows = log.query("SELECT message_id FROM consumptions WHERE run_id=?", (run_id,))
    assert sorted(r[0] for r in rows) == sorted(sent)  # every message, each once
    return sent


def test_enqueue_gives_every_message_a_turn(tmp_path: Path) -> None:
    rt, _ = _run(tmp_path, None)
    assert rt.statuses["echo"].turns == 3
    _consumed_once(tmp_path, rt.run_id)


def test_merge_takes_the_waiting_messages_in_one_turn_in_order(tmp_path: Path) -> None:
    rt, model = _run(tmp_path, "merge")
    assert rt.statuses["echo"].turns == 2  # "first", then "second" and "third" together
    last = _user_texts(model.requests[-1])
    assert last.index("second") < last.index("third")
    assert _user_texts(model.requests[0]).count("second") == 0
    _consumed_once(tmp_path, rt.run_id)


def test_merge_stops_at_another_channel_keeping_the_order(tmp_path: Path) -> None:
    rt, _ = _run(tmp_path, "merge", side=True)
    # "first"; "second" (the side message behind it is not merged); "aside"; "third"
    assert rt.statuses["echo"].turns == 4
    _consumed_once(tmp_path, rt.run_id)


def test_an_unknown_policy_is_refused_naming_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ConfigErrors) as err:
        load_team(write_team(tmp_path / "team", "coalesce"))
    assert "enqueue" in str(err.value) and "merge" in str(err.value)


def test_a_merged_turn_done_again_after_a_crash_takes_the_same_messages(
        tmp_path: Path) -> None:
    """The first attempt merged "second" and "third" (the log keeps which) and was cut
    before its consumption; "fourth" came after. Resumed, the turn takes the two again,
    not "fourth" (its sends are named after "second": a wider turn would hide "fourth"'s
    answer behind the first attempt's), and "fourth" gets a turn of its own."""
    team = load_team(write_team(tmp_path / "team", "merge"))
    runs = tmp_path / "runs"

    async def first_run() -> str:
        opts = RuntimeOptions(runs_dir=runs, audio="none",
                              models={"echo": ScriptedModel(default_reply="ok")})
        async with TeamRuntime(team, opts) as rt:
            await rt.send("inbox", {"text": "first"})
            await rt.wait_idle()
            return rt.run_id

    run_id = anyio.run(first_run)
    # as a crash leaves it: three messages logged, not consumed; the merge of two kept
    with DurableLog(runs / LOG_FILE) as log:
        ids = []
        for text in ("second", "third", "fourth"):
            env = Envelope(id=new_message_id(), channel="inbox", sender="user",
                           schema_name="inbox", payload={"text": text}, ts=0.0)
            log.record_message(run_id, env, ("echo",))
            ids.append(env.id)
        log.record_effect(run_id, f"echo/{ids[0]}/merged", "echo", "double_texting", True,
                          json.dumps(ids[:2]))
        log.set_run_status(run_id, "running")
    model = ScriptedModel(default_reply="ok")

    async def resumed() -> TeamRuntime:
        opts = RuntimeOptions(runs_dir=runs, audio="none", resume=run_id,
                              models={"echo": model})
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(30):
                await rt.wait_idle()
        return rt

    rt = anyio.run(resumed)
    assert rt.statuses["echo"].turns == 2
    prompts = [_user_texts(r) for r in model.requests]
    assert "second" in prompts[0] and "third" in prompts[0] and "fourth" not in prompts[0]
    assert "fourth" in prompts[1]
    _consumed_once(tmp_path, run_id)


def test_the_wait_makes_a_burst_one_turn(tmp_path: Path) -> None:
    """Three messages sent back to back (each well within the wait of the one before):
    the first one's turn waits for the others and takes all three."""
    team = load_team(write_team(tmp_path / "team", "merge", wait=1.0))
    model = ScriptedModel(default_reply="ok")

    async def go() -> TeamRuntime:
        opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none",
                              models={"echo": model})
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(30):
                for text in ("one", "two", "three"):
                    await rt.send("inbox", {"text": text})
                assert rt.busy()  # waiting for more: not idle
                await rt.wait_idle()
        return rt

    rt = anyio.run(go)
    assert rt.statuses["echo"].turns == 1
    assert "three" in _user_texts(model.requests[0])
    _consumed_once(tmp_path, rt.run_id)
