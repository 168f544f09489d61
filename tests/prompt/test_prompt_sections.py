"""Prefix sections: order, omission of empty sections, modes, budgets, hints."""

from __future__ import annotations

import re

import pytest

from terrarium.errors import PromptError
from terrarium.prompt import HINT_KEYS, PromptBuilder, Skill, StaticPlugin, StatusSpec, TailState

try:
    from golden.prompt_inputs import (
        CHANNELS,
        FakeFormat,
        FakeNative,
        SearchTool,
        make_inputs,
    )
except ImportError:  # pragma: no cover - when tests/ is itself a package
    from tests.golden.prompt_inputs import (
        CHANNELS,
        FakeFormat,
        FakeNative,
        SearchTool,
        make_inputs,
    )


def names(builder: PromptBuilder) -> list[str]:
    return [s.name for s in builder.prefix_sections]


def test_sections_in_design_order() -> None:
    b = PromptBuilder(make_inputs(), FakeFormat())
    assert names(b) == [
        "persona",
        "tools",
        "tool_guidance",
        "skills",
        "channels",
        "hint:output_model",
        "hint:execution_dynamic",
        "outputs",
        "plugin:house_rules",
        "plugin:safety",
        "plugin:style",
    ]
    # and the texts appear in the prefix in that same order
    positions = [b.prefix.index(b.prefix_texts[n]) for n in names(b)]
    assert positions == sorted(positions)


def test_empty_sections_are_omitted_without_headers() -> None:
    b = PromptBuilder(
        make_inputs(
            persona_source="Just {{ creature }}.",
            tools=(),
            skills=(),
            channels=(),
            team=(),
            named_outputs=(),
            plugins=(),
            skill_mode="static",
        ),
        FakeFormat(),
    )
    assert names(b) == ["persona", "hint:output_model"]
    assert (
        b.prefix
        == "Just router.\n\n## Output\nPlain text you write outside calls goes to your reply.\n"
    )
    for header in ("## Tools", "## Skills", "## Channels", "## Outputs", "## How to call"):
        assert header not in b.prefix


def test_dynamic_mode_indexes_tools_and_points_at_info() -> None:
    b = PromptBuilder(make_inputs(), FakeFormat())
    tools = b.prefix_texts["tools"]
    assert "- search: Search the notes." in tools
    assert "info" in tools and "Full-text search" not in tools
    assert "CALL info(name='search')" in b.prefix_texts["hint:execution_dynamic"]


def test_static_mode_inlines_full_docs_and_never_mentions_info_calls() -> None:
    b = PromptBuilder(make_inputs(skill_mode="static"), FakeFormat())
    tools = b.prefix_texts["tools"]
    assert "Full-text search over the creature's notes" in tools
    assert "- limit (int, optional, default 5) — how many hits" in tools
    hint = b.prefix_texts["hint:execution_static"]
    assert "CALL info(" not in hint and "info call" not in hint.lower()
    assert "hint:execution_dynamic" not in names(b)


def test_dynamic_mode_without_info_tool_is_refused() -> None:
    with pytest.raises(PromptError, match="no 'info' tool"):
        PromptBuilder(make_inputs(tools=(SearchTool,)), FakeFormat())


def test_guidance_buckets_first_normal_last_then_alphabetical() -> None:
    text = PromptBuilder(make_inputs(), FakeFormat()).prefix_texts["tool_guidance"]
    order = [text.index(s) for s in ("Search before", "Use the clock", "Keep notes short")]
    assert order == sorted(order)


def test_skill_index_respects_byte_budget_with_overflow_line() -> None:
    skills = tuple(
        Skill(f"skill_{i:03d}", f"Summary number {i} — ünïcode", "body", "pkg") for i in range(60)
    )
    for budget in (200, 333, 700, 1500):
        b = PromptBuilder(make_inputs(skills=skills, skill_index_budget_bytes=budget), FakeFormat())
        text = b.prefix_texts["skills"]
        assert len(text.encode("utf-8")) <= budget
        listed = re.findall(r"^- (skill_\d{3}):", text, flags=re.M)
        assert listed == sorted(listed)
        assert listed == [s.name for s in skills[: len(listed)]]  # a prefix of the sorted list
        m = re.search(r"(\d+) more skills? not listed", text)
        assert m is not None and int(m.group(1)) == 60 - len(listed)
        assert "read any of them by name" in text


def test_skill_index_without_overflow_has_no_overflow_line() -> None:
    text = PromptBuilder(make_inputs(), FakeFormat()).prefix_texts["skills"]
    assert "more skill" not in text
    assert text.index("greeting") < text.index("music") < text.index("weather")


def test_skill_budget_too_small_is_an_error() -> None:
    with pytest.raises(PromptError, match="skill index budget of 20 bytes"):
        PromptBuilder(make_inputs(skill_index_budget_bytes=20), FakeFormat())


def test_channel_topology_lists_wiring_schema_and_send_syntax() -> None:
    text = PromptBuilder(make_inputs(), FakeFormat()).prefix_texts["channels"]
    assert "You listen on: `events`, `requests`." in text
    assert "You may send on: `events`, `speak`." in text
    assert "- mood (enum[calm|bright], optional, default 'calm'): tone of voice" in text
    assert "CALL send_speak(text='...')" in text
    assert "audit" not in text  # not wired to this creature
    assert "`speaker`: Talks to the user." in text and "- `router`" not in text


def test_no_channel_prose_without_channels() -> None:
    b = PromptBuilder(make_inputs(channels=()), FakeFormat())
    assert "channel" not in b.prefix.lower()
    assert "send_" not in b.prefix
    assert "Team" not in b.prefix


def test_unwired_channels_only_means_no_channel_prose() -> None:
    b = PromptBuilder(make_inputs(channels=(CHANNELS[3],)), FakeFormat())
    assert "channel" not in b.prefix.lower()


def test_native_format_has_no_text_call_syntax() -> None:
    b = PromptBuilder(make_inputs(), FakeNative())
    assert "CALL" not in b.prefix
    assert "hint:execution_native" in names(b)
    assert "never write a call as text" in b.prefix_texts["hint:execution_native"]
    assert "`send_speak` call" in b.prefix_texts["channels"]


def test_no_tools_text_without_tools() -> None:
    b = PromptBuilder(
        make_inputs(tools=(), channels=(), named_outputs=(), skill_mode="static"), FakeFormat()
    )
    assert "tool" not in b.prefix.lower()
    assert "## How to call" not in b.prefix


def test_hint_override_replaces_and_empty_omits() -> None:
    b = PromptBuilder(
        make_inputs(hint_overrides={"output_model": "## Output\nSpeak plainly."}), FakeFormat()
    )
    assert b.prefix_texts["hint:output_model"] == "## Output\nSpeak plainly."
    b = PromptBuilder(
        make_inputs(hint_overrides={"output_model": "", "execution_dynamic": ""}), FakeFormat()
    )
    assert not any(n.startswith("hint:") for n in names(b))


def test_override_of_other_mode_does_not_apply() -> None:
    b = PromptBuilder(make_inputs(hint_overrides={"execution_static": "STATIC TEXT"}), FakeFormat())
    assert "STATIC TEXT" not in b.prefix


def test_unknown_hint_key_is_refused() -> None:
    assert HINT_KEYS == (
        "output_model",
        "execution_dynamic",
        "execution_static",
        "execution_native",
    )
    with pytest.raises(PromptError, match="'execution_fast' is not a known hint"):
        PromptBuilder(make_inputs(hint_overrides={"execution_fast": "x"}), FakeFormat())


def test_plugins_sorted_by_priority_then_name_and_empty_dropped() -> None:
    plugins = (
        StaticPlugin("b", 1, "B"),
        StaticPlugin("a", 1, "A"),
        StaticPlugin("z", 0, "Z"),
        StaticPlugin("empty", 0, "  \n"),
    )
    b = PromptBuilder(make_inputs(plugins=plugins), FakeFormat())
    assert [n for n in names(b) if n.startswith("plugin:")] == ["plugin:z", "plugin:a", "plugin:b"]
    assert b.prefix.endswith("Z\n\nA\n\nB\n")


def test_outputs_section_and_output_hint_follow_named_outputs() -> None:
    b = PromptBuilder(make_inputs(), FakeFormat())
    assert "CALL output_log(text='...')" in b.prefix_texts["outputs"]
    assert "the `tts` output (tts)" in b.prefix_texts["hint:output_model"]


def test_two_default_outputs_are_refused() -> None:
    from terrarium.prompt import NamedOutputView

    outs = (NamedOutputView("a", "tts", default=True), NamedOutputView("b", "tts", default=True))
    with pytest.raises(PromptError, match="2 default named outputs"):
        PromptBuilder(make_inputs(named_outputs=outs), FakeFormat())


def test_no_per_step_facts_in_prefix() -> None:
    b = PromptBuilder(make_inputs(), FakeFormat())
    built = b.build(TailState(step=12345, status=StatusSpec(step=True)))
    assert "12345" not in built.prefix and "12345" in built.tail_sections["status"]
