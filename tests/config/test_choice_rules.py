"""A choice rule decides a fixed-choice value from the input: its pattern found, its
``unless`` not (one ``unless`` shared by several rules through a YAML anchor)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from terrarium.config import load_team
from terrarium.config.models import ChoiceRule

ROOT = Path(__file__).resolve().parents[2]


def test_a_rule_decides_when_its_pattern_is_found_and_its_unless_is_not() -> None:
    rule = ChoiceRule(pattern=r"\bthanks\b", unless=r"\bwhere\b", value="thanks")
    assert rule.decides("Thanks a lot.") and rule.decides("THANKS")  # case-insensitive
    assert not rule.decides("Thanks! And where do I live?")
    assert not rule.decides("Where do I live?")
    assert ChoiceRule(pattern=r"\bthanks\b", value="thanks").decides("Thanks, where?")


def test_a_pattern_that_does_not_compile_is_refused_at_load() -> None:
    with pytest.raises(ValidationError, match="not a regular expression"):
        ChoiceRule(pattern="(where", value="x")
    with pytest.raises(ValidationError, match="not a regular expression"):
        ChoiceRule(pattern="x", unless="[a-", value="x")


def test_the_router_s_greetings_share_one_unless_through_an_anchor() -> None:
    rules = load_team(ROOT / "examples" / "voice_assistant").creatures["router"].config
    by_value = {r.value: r for r in rules.choice_rules if r.unless is not None}
    assert set(by_value) == {"goodbye", "thanks", "greeting"}
    assert len({r.unless for r in by_value.values()}) == 1  # the one &asks pattern

    def intent(text: str) -> str | None:
        return next((r.value for r in rules.choice_rules if r.decides(text)), None)

    assert intent("Thanks a lot.") == "thanks"
    assert intent("Thanks, how are you?") == "thanks"  # a closing "how are you": small talk
    assert intent("Thanks! And where did I say my sister lives?") == "question"
    assert intent("Hi again, what's my dog called?") == "question"
    assert intent("Good morning!") == "greeting"
    assert intent("Okay bye. Wait, what's my flight number?") == "question"
