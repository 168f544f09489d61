"""Every event type survives the durable log and the replay unchanged, field by field.

The samples are checked against ``EVENT_TYPES``: a new event class without a sample here
fails the test, so nothing a watcher sees can be lost on the way through the log.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from terrarium import events as ev
from terrarium.channels.log import EVENT_SQL, DurableLog
from terrarium.events import EVENT_TYPES, event_from_dict, event_to_dict
from terrarium.tui.replay import ReplayHandle
from tests.event_samples import samples

ROOT = Path(__file__).resolve().parents[2]


def test_every_event_type_has_a_sample_with_no_field_left_at_its_default() -> None:
    made = samples()
    assert sorted(e.kind for e in made) == sorted(EVENT_TYPES)
    assert all(type(e) is EVENT_TYPES[e.kind] for e in made)
    for e in made:
        for f in dataclasses.fields(e):
            if f.name == "ts":
                continue
            default: Any = (f.default if f.default is not dataclasses.MISSING
                            else f.default_factory() if f.default_factory is not dataclasses.MISSING
                            else dataclasses.MISSING)
            assert getattr(e, f.name) != default, f"{e.kind}.{f.name} is left at its default"


def assert_same(got: ev.Event, want: ev.Event) -> None:
    assert type(got) is type(want)
    for f in dataclasses.fields(want):
        g, w = getattr(got, f.name), getattr(want, f.name)
        assert type(g) is type(w), f"{want.kind}.{f.name}: {type(g)} != {type(w)}"
        assert g == w, f"{want.kind}.{f.name}: {g!r} != {w!r}"
    assert got == want


def test_codec_round_trips_every_event_through_json() -> None:
    for e in samples():
        assert_same(event_from_dict(json.loads(json.dumps(event_to_dict(e)))), e)


def test_unknown_kind_is_refused_by_the_codec() -> None:
    with pytest.raises(ValueError, match="unknown event kind"):
        event_from_dict({"kind": "no_such_event", "ts": 1.0})


def test_every_event_type_round_trips_through_the_log_and_the_replay(tmp_path: Path) -> None:
    made = samples()
    log_path = tmp_path / "log.sqlite3"
    with DurableLog(log_path) as log:
        run_id = log.start_run("demo")
        for e in made:
            log.record_event(run_id, e)
        stored = log.events(run_id)
        assert [d["kind"] for d in stored] == [e.kind for e in made]  # stored by type
    replay = ReplayHandle(log_path, run_id)
    assert len(replay.events) == len(made)
    for got, want in zip(replay.events, made, strict=True):
        assert_same(got, want)
    # and the replay folds them into its views by their fields
    assert replay.transcript("a") == (made[11].entry,)  # type: ignore[attr-defined]
    view = replay.prompt_view("a")
    assert view is not None and view.prefix_hash == "0f" * 32
    assert [s.name for s in view.sections] == ["persona", "status"]
    assert replay.statuses["a"].restarts == 1 and replay.statuses["a"].turns == 1


def test_rows_written_before_typed_events_replay_as_typed_events(tmp_path: Path) -> None:
    """A run logged by an older version (``generic`` rows) still replays its transcripts."""
    old = [
        ("transcript", "a", {"kind": "assistant", "text": "hi", "turn": 1, "name": None,
                             "detail": None, "ts": 5.0}),
        ("prompt", "a", {"prefix_hash": "ab", "tokens": 9,
                         "sections": [{"name": "persona", "zone": "prefix", "bytes": 3,
                                       "tokens": 1}]}),
        ("speech_cut", "a", {"output": "speech", "utterance_id": "u", "spoken_text": "",
                             "interrupted_sentence": "Hi.", "cut_text": [], "also_cut": []}),
    ]
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run_id = log.start_run("demo")
        for i, (name, creature, data) in enumerate(old):
            row = {"kind": "generic", "ts": 5.0 + i, "name": name, "creature": creature,
                   "data": data}
            log._write(EVENT_SQL, (run_id, row["ts"], "generic", creature, json.dumps(row)))
        typed = log.typed_events(run_id)
    assert [type(e) for e in typed] == [ev.TranscriptAppended, ev.PromptBuilt, ev.SpeechCut]
    entry = typed[0].entry  # type: ignore[attr-defined]
    assert (entry.kind, entry.text, entry.turn) == ("assistant", "hi", 1)
    assert typed[1].sections == (ev.PromptSectionInfo("persona", "prefix", 3, 1),)  # type: ignore[attr-defined]


def test_generic_event_is_gone() -> None:
    for module in ("terrarium.events", "terrarium.channels", "terrarium.channels.log",
                   "terrarium.tui.replay", "terrarium.tui.state", "terrarium.runtime.runtime"):
        assert not hasattr(importlib.import_module(module), "GenericEvent"), module
    with pytest.raises(ImportError):
        exec("from terrarium.events import GenericEvent", {})
    mentions = [p for p in (ROOT / "terrarium").rglob("*.py") if "GenericEvent" in p.read_text()]
    assert mentions == []


def test_run_ended_status_is_a_run_status() -> None:
    """``RunEnded.status`` is the log's RunStatus: a wrong one fails where it is made."""
    from typing import get_args

    from terrarium.channels import log as log_module

    assert log_module.RunStatus is ev.RunStatus  # one definition, in the ground layer
    for status in get_args(ev.RunStatus):
        assert ev.RunEnded(run_id="r", status=status).status == status
    with pytest.raises(ValueError, match="'finished' is not a run status"):
        ev.RunEnded(run_id="r", status="finished")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="could not be rebuilt"):
        event_from_dict({"kind": "run_ended", "ts": 1.0, "run_id": "r", "status": "finished"})


def test_run_ended_rows_of_older_versions_still_read(tmp_path: Path) -> None:
    """Every status an older version wrote reads back; a row with an unknown one is skipped
    by the replay, not an error."""
    statuses = ["completed", "failed", "interrupted", "degraded", "timeout", "bogus"]
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run_id = log.start_run("demo")
        for i, status in enumerate(statuses):
            row = {"kind": "run_ended", "ts": 1.0 + i, "run_id": run_id, "status": status}
            log._write(EVENT_SQL, (run_id, row["ts"], "run_ended", None, json.dumps(row)))
        typed = log.typed_events(run_id)
    assert [e.status for e in typed] == statuses[:-1]  # type: ignore[attr-defined]
