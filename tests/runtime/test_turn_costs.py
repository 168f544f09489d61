"""What a turn no longer makes every time (session 22, issue 23), and that it still works:
the turn's "done" event made only for a waiter, the prompt's prefix section map kept while
the prefix is the same, a nested event encoded without orjson's dataclass path."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.abc
import orjson
import pytest
import yaml

from terrarium.config import load_single_creature
from terrarium.controller.loop import Controller
from terrarium.events import (
    Event,
    PromptBuilt,
    PromptSectionInfo,
    SpeechMetrics,
    TranscriptAppended,
    TranscriptEntry,
    UtteranceWritten,
    event_json,
)
from terrarium.llm.scripted import ScriptedModel
from terrarium.prompt.built_prompt import SectionInfo
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from tests.event_samples import samples
from tests.loop_helpers import TOOLS, call, last_user, make_parts, run


def test_a_turn_makes_its_done_event_only_for_a_waiter(tmp_path: Path) -> None:
    """No turn makes an ``anyio.Event`` of its own; a framework message for a creature
    without an inbox (a job's result) that comes during a turn makes one, waits on it, and
    gets its turn once the turn ends; the event is dropped then."""
    folder = tmp_path / "solo"
    folder.mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump({"name": "solo",
                                                        "skill_mode": "static"}))
    model = ScriptedModel([
        {"match": "quick", "reply": "Quick."},
        {"match": "slow", "reply": "Slow.", "delay": 0.3},
        {"match": "[job from job-1]", "reply": "The job is done."},
    ])
    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False,
                          models={"solo": model})
    seen: list[object] = []

    async def go() -> None:
        async with TeamRuntime(load_single_creature(folder), opts) as rt:
            c = rt._creatures["solo"]
            with anyio.fail_after(20):
                await rt.ask("solo", "quick")
                assert c.turn_done is None  # a turn nobody waited on made none
                async with anyio.create_task_group() as tg:
                    tg.start_soon(rt.ask, "solo", "slow")
                    while c.turn_scope is None:  # noqa: ASYNC110
                        await anyio.sleep(0.01)
                    tg.start_soon(rt.wake, "solo", "job", "job-1", {"text": "done"})
                    while c.turn_done is None:  # noqa: ASYNC110 (the waiter made it)
                        await anyio.sleep(0.01)
                    seen.append(c.turn_done)
                    assert len(model.requests) == 2  # the job waits for the slow turn
                assert c.turn_done is None and c.turn_scope is None

    anyio.run(go)
    assert len(seen) == 1
    assert [last_user(r) for r in model.requests][-1].startswith("[job from job-1]")


def test_the_prefix_section_map_is_kept_until_the_prefix_changes(tmp_path: Path) -> None:
    events: list[Event] = []
    ctl = Controller(make_parts(tmp_path), ScriptedModel(default_reply="Fine."),
                     emit=events.append)
    run(ctl, "one")
    run(ctl, "two")
    prompts = [e for e in events if isinstance(e, PromptBuilt)]
    assert len(prompts) == 2
    built = ctl.last_prompt
    assert built is not None
    want = tuple(PromptSectionInfo(i.name, i.zone, i.bytes, i.tokens) for i in built.sections)
    assert prompts[1].sections == want  # prefix and tail, as the built prompt has them
    n = len(built.prefix_sections)
    assert all(a is b for a, b in zip(prompts[0].sections[:n], prompts[1].sections[:n],
                                      strict=True))  # the prefix's part: the same objects
    # a new prefix (a rebuilt builder's): its own map, not the kept one
    first = built.prefix_sections[0]
    ctl.builder.prefix_sections = (SectionInfo(first.name, first.zone, first.bytes + 5,
                                               first.tokens + 1), *built.prefix_sections[1:])
    run(ctl, "three")
    last = [e for e in events if isinstance(e, PromptBuilt)][-1]
    assert last.sections[0] == PromptSectionInfo(first.name, first.zone, first.bytes + 5,
                                                  first.tokens + 1)
    assert last.sections[1:n] == prompts[1].sections[1:n]


def _orjson_own(event: Event, seq: int) -> str:
    """The text orjson writes for the event's fields as they are (nested dataclasses by
    orjson's own dataclass path): what ``event_json`` wrote before session 22."""
    import dataclasses

    data = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
    data["kind"] = event.kind
    data["seq"] = seq
    return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS
                        | orjson.OPT_PASSTHROUGH_DATETIME).decode()


def test_nested_events_encode_to_the_same_bytes() -> None:
    """A transcript line, a prompt's section map, speech figures: ``event_json`` hands
    them to orjson as dicts; the text is byte for byte what orjson wrote for the
    dataclasses themselves (the log's rows and the stream do not change)."""
    nested = [
        TranscriptAppended(creature="a", entry=TranscriptEntry(
            "user", "héllo", 1.0, 2, data={"sender": "user", "ids": [1, 2]})),
        TranscriptAppended(creature="a", entry=TranscriptEntry("assistant", "x", 1.5)),
        PromptBuilt(creature="a", prefix_hash="h", tokens=3, sections=(
            PromptSectionInfo("persona", "prefix", 10, 3),
            PromptSectionInfo("conversation", "tail", 99, 20))),
        PromptBuilt(creature="a", prefix_hash="h", tokens=0),
        UtteranceWritten(creature="s", utterance_id="u", path=None, duration=1.5,
                         aborted=False, metrics=SpeechMetrics(time_to_first_audio=0.2)),
    ]
    for seq, event in enumerate([*nested, *samples()], 1):
        assert event_json(event, seq) == _orjson_own(event, seq), type(event).__name__


def test_a_round_makes_a_task_group_only_when_a_call_can_close(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A creature that knows no call (an unknown name is a notice, never a call) streams
    its round without a task group; one with tools gets one, and its calls run in it."""
    import sys

    made: list[str] = []
    real = anyio.create_task_group

    def counted() -> anyio.abc.TaskGroup:
        if sys._getframe(1).f_code.co_name == "_one_round":
            made.append("round")
        return real()

    monkeypatch.setattr(anyio, "create_task_group", counted)
    (tmp_path / "bare").mkdir()
    (tmp_path / "tools").mkdir()
    bare = Controller(make_parts(tmp_path / "bare"),
                      ScriptedModel(default_reply="Fine. [/nosuch]x[nosuch/]"))
    result = run(bare, "hello")
    assert made == [] and result.text.startswith("Fine.")
    assert result.calls == [] and result.notices  # the unknown name: a notice, no call
    tools = Controller(make_parts(tmp_path / "tools", tools=[f"{TOOLS}:Lookup"]),
                       ScriptedModel([{"match": "sky", "reply": call("lookup", label="sky")},
                                      {"match": "fact-sky", "reply": "Green."}]))
    result = run(tools, "What colour is the sky?")
    assert made == ["round", "round"]  # its two rounds, each with a task group
    assert [(c.name, c.ok) for c in result.calls] == [("lookup", True)]
    assert result.text == "Green."
