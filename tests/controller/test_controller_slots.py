"""The controller is one per creature: its attributes live in slots, not an instance dict.

On CPython 3.11 an instance dict of 30 or more keys no longer shares its class's key table
and costs ~1.3 KB more per creature (bench/scale.py's RSS per creature): a new attribute
set in ``Controller.__init__`` must be named in ``Controller.__slots__``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.controller.loop import Controller
from terrarium.llm.scripted import ScriptedModel
from tests.loop_helpers import make_parts, run


def test_a_controller_has_no_instance_dict_and_still_runs_turns(tmp_path: Path) -> None:
    ctl = Controller(make_parts(tmp_path), ScriptedModel([], default_reply="Noted."))
    assert not hasattr(ctl, "__dict__")
    assert run(ctl, "hello").text == "Noted."
    assert ctl.turns == 1 and ctl.last_prompt is not None


def test_an_attribute_not_in_the_slots_is_refused(tmp_path: Path) -> None:
    ctl = Controller(make_parts(tmp_path), ScriptedModel([], default_reply="Noted."))
    with pytest.raises(AttributeError):
        ctl.not_a_slot = 1  # type: ignore[attr-defined]
