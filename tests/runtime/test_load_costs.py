"""What loading a run costs less of, without changing what it reads or writes: a lazy
memory store, a model script parsed once while unchanged, a resumed run's jobs read by
kind (old ``generic`` rows included), and events encoded without a deep copy into exactly
the JSON ``event_to_dict`` gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from terrarium.channels.log import EVENT_SQL, DurableLog, event_row
from terrarium.errors import ConfigError, TerrariumError
from terrarium.events import (
    JobEnded,
    JobStarted,
    OutputText,
    TurnEnded,
    event_to_dict,
)
from terrarium.llm import scripted
from terrarium.llm.scripted import ScriptedModel
from terrarium.store import MemoryStore


def test_a_lazy_memory_store_opens_its_file_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "run" / "memory.sqlite3"
    store = MemoryStore(path, lazy=True)
    assert not store.opened and not path.exists()
    store.close()  # closing a store never opened touches nothing
    assert not path.exists()
    store = MemoryStore(path, lazy=True)
    store.write("The user is called Ada.", creature="bot")
    assert store.opened and path.exists()
    assert [h.text for h in store.search("Ada", creature="bot")] == ["The user is called Ada."]
    store.close()
    again = MemoryStore(path, lazy=True)
    assert again.count() == 1
    again.close()


def test_a_lazy_store_refuses_a_bad_file_at_first_use(tmp_path: Path) -> None:
    bad = tmp_path / "memory.sqlite3"
    bad.write_bytes(b"not a database" * 100)
    store = MemoryStore(bad, lazy=True)
    with pytest.raises(TerrariumError, match="could not be opened"):
        store.count()


def test_a_script_is_parsed_once_while_unchanged(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "script.yaml"
    path.write_text('default_reply: "One."\nsteps: [{match: "hi", reply: "Hello."}]\n')
    loads = 0
    real = yaml.safe_load

    def counting(text: str) -> object:
        nonlocal loads
        loads += 1
        return real(text)

    monkeypatch.setattr(scripted.yaml, "safe_load", counting)
    a = ScriptedModel.from_file(path)
    b = ScriptedModel.from_file(path)
    assert loads == 1
    assert a.steps == b.steps and a.steps is not b.steps  # each model's own list
    path.write_text('default_reply: "Two, changed."\n')
    c = ScriptedModel.from_file(path)
    assert loads == 2 and c.default_reply == "Two, changed." and not c.steps
    path.write_text("steps: [{reply: 1, nope: 2}]\n")
    with pytest.raises(ConfigError, match="invalid"):
        ScriptedModel.from_file(path)


def test_typed_events_by_kind_read_only_those_and_old_generic_rows(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run = log.start_run("demo", None)
        started = JobStarted(creature="a", job_id="j1", call="sleep", args={"s": 1})
        rows = [event_row(run, e) for e in (
            OutputText(creature="a", output="o", text="hi"), started,
            TurnEnded(creature="a", turn_index=1),
            JobEnded(creature="a", job_id="j1", call="sleep", status="done", result="ok"))]
        # a log from before typed events: a job start written as a generic row
        old = {"kind": "generic", "creature": "a", "name": "job_started",
               "data": {"job_id": "j0", "call": "sleep", "args": {}}}
        rows.insert(0, (run, 1.0, "generic", "a", json.dumps(old)))
        log.write_batch([(EVENT_SQL, rows)])
        got = log.typed_events(run, (JobStarted.kind, JobEnded.kind))
        assert [type(e).__name__ for e in got] == ["JobStarted", "JobStarted", "JobEnded"]
        assert got[0].job_id == "j0" and got[1] == started
        assert len(log.typed_events(run)) == 5  # without kinds: everything, as before


def test_event_json_is_event_to_dict_as_json() -> None:
    from terrarium.events import event_json
    from tests.event_samples import samples

    for event in samples():
        expected = event_to_dict(event)
        assert json.loads(event_json(event)) == json.loads(json.dumps(expected, default=str))
        assert list(json.loads(event_json(event))) == list(expected)  # same keys, same order
        assert json.loads(event_json(event, 7))["seq"] == 7
        row = event_row("r1", event)
        assert json.loads(row[4]) == json.loads(json.dumps(expected, default=str))
        assert row[3] == expected.get("creature")
