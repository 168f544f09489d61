"""History and memory options: history_turns, memory_record, memory_recent, memory_recall."""

from __future__ import annotations

from pathlib import Path

from terrarium.controller.loop import Controller
from terrarium.llm.scripted import ScriptedModel
from terrarium.store import MemoryStore
from tests.loop_helpers import make_parts, request_text, run


def test_history_turns_zero_starts_every_turn_fresh(tmp_path: Path) -> None:
    model = ScriptedModel([], default_reply="Noted.")
    ctl = Controller(make_parts(tmp_path, history_turns=0), model)
    run(ctl, "first thing")
    run(ctl, "second thing")
    second = request_text(model.requests[1])
    assert "second thing" in second and "first thing" not in second
    # the prefix is the same bytes both times (cache-friendly)
    assert model.requests[0].messages[0] == model.requests[1].messages[0]


def test_history_turns_keeps_only_the_newest_messages(tmp_path: Path) -> None:
    model = ScriptedModel([], default_reply="Noted.")
    ctl = Controller(make_parts(tmp_path, history_turns=2), model)
    for word in ("alpha", "bravo", "charlie"):
        run(ctl, f"say {word}")
    third = request_text(model.requests[2])
    assert "say charlie" in third and "say alpha" not in third


def test_recent_and_recalled_memories_reach_the_tail(tmp_path: Path) -> None:
    store = MemoryStore(":memory:")
    model = ScriptedModel([], default_reply="Noted.")
    parts = make_parts(tmp_path, history_turns=0, memory_record=True, memory_recent=1,
                       memory_recall=2)
    ctl = Controller(parts, model, memory=store)
    run(ctl, "My sister lives in Lisbon.")
    run(ctl, "I collect old maps.")
    run(ctl, "Where does my sister live?")
    last = request_text(model.requests[2])
    assert "## Recalled" in last
    assert "recently: I collect old maps." in last  # the newest record
    assert "My sister lives in Lisbon." in last  # the best match
    assert last.count("I collect old maps.") == 1  # no duplicate between the two lists
    assert store.count() == 3
