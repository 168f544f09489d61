"""Pinned bytes of representative creatures' prompts (TERRARIUM_UPDATE_GOLDEN=1 rewrites)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from terrarium.config import Team, load_team
from terrarium.controller.assembly import assemble
from terrarium.formats import get_format
from terrarium.prompt import PromptBuilder, StatusSpec, TailState, Turn, format_prompt_report

try:
    from golden import assert_golden, golden_path
    from golden.prompt_inputs import FakeFormat, make_inputs
except ImportError:  # pragma: no cover
    from tests.golden import assert_golden, golden_path
    from tests.golden.prompt_inputs import FakeFormat, make_inputs

STATE = TailState(
    step=3,
    now=datetime(2025, 5, 1, 12, 30, tzinfo=UTC),
    loaded_skills=("weather",),
    memory="The user likes jazz.",
    recalled=("The user lives in Lisbon.",),
    conversation=(
        Turn("user", "What's the weather?"),
        Turn("assistant", "Let me check."),
        Turn("tool", "Sunny, 24 °C", name="weather", tool_call_id="call_1"),
    ),
    notice="A timer fired.",
    status=StatusSpec(date="second", step=True),  # the old default: step and full timestamp
)


def test_golden_router_fake_format_report() -> None:
    built = PromptBuilder(make_inputs(), FakeFormat()).build(STATE)
    assert_golden("prompt_router_fake", format_prompt_report(built, json=False))


@pytest.mark.parametrize(
    ("fmt", "mode"), [("bracket", "dynamic"), ("xml", "static"), ("native", "dynamic")]
)
def test_golden_router_real_formats(fmt: str, mode: str) -> None:
    b = PromptBuilder(make_inputs(skill_mode=mode), get_format(fmt))
    assert_golden(f"prompt_router_{fmt}_{mode}", b.prefix)


def test_report_json_is_parseable_and_complete() -> None:
    built = PromptBuilder(make_inputs(), FakeFormat()).build(STATE)
    data = json.loads(format_prompt_report(built, json=True))
    assert data["prefix_hash"] == built.prefix_hash
    assert [s["name"] for s in data["sections"]][-6:] == [
        "loaded_skills",
        "memory",
        "recalled",
        "conversation",
        "status",
        "notice",
    ]
    assert {s["zone"] for s in data["sections"]} == {"prefix", "tail"}
    assert data["messages"][0]["content"] == built.prefix


def test_missing_golden_fails_with_instructions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERRARIUM_UPDATE_GOLDEN", raising=False)
    assert not golden_path("does_not_exist_ever").exists()
    with pytest.raises(pytest.fail.Exception, match="TERRARIUM_UPDATE_GOLDEN=1"):
        assert_golden("does_not_exist_ever", "x")
    assert not golden_path("does_not_exist_ever").exists()


def test_mismatch_fails_with_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERRARIUM_UPDATE_GOLDEN", raising=False)
    built = PromptBuilder(make_inputs(), FakeFormat()).build(STATE)
    text = format_prompt_report(built, json=False).replace("router", "r0uter", 1)
    with pytest.raises(pytest.fail.Exception, match="differs from the golden file"):
        assert_golden("prompt_router_fake", text)


VOICE_ASSISTANT = Path(__file__).resolve().parents[2] / "examples" / "voice_assistant"


@pytest.fixture(scope="module")
def voice_team() -> Team:
    return load_team(VOICE_ASSISTANT)


@pytest.mark.parametrize("creature", ["router", "speaker"])
def test_golden_voice_assistant_prefix_and_step0_report(voice_team: Team, creature: str) -> None:
    """The flagship team's real prompts, pinned: a persona, channel or hint change shows up
    here as a reviewed diff. Step 0 with ``now=None`` keeps dates out of the files."""
    parts = assemble(voice_team, creature)
    builder = PromptBuilder(parts.inputs, parts.fmt)
    assert_golden(f"prompt_voice_{creature}_prefix", builder.prefix)
    full = StatusSpec(date="second", step=True)  # the old default: step and full timestamp
    report = format_prompt_report(builder.build(TailState(step=0, status=full)), json=False)
    assert re.search(r"\d{4}-\d{2}-\d{2}", report) is None  # no date, no per-run data
    assert str(VOICE_ASSISTANT.parent.parent) not in report  # no machine-specific paths
    assert_golden(f"prompt_voice_{creature}_step0_report", report)
