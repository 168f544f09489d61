"""Same facts in any registration order ⇒ the same bytes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from terrarium.prompt import PromptBuilder, Skill, StaticPlugin, TailState, Turn

try:
    from golden.prompt_inputs import CHANNELS, PLUGINS, SKILLS, TOOLS, FakeFormat, make_inputs
except ImportError:  # pragma: no cover
    from tests.golden.prompt_inputs import (
        CHANNELS,
        PLUGINS,
        SKILLS,
        TOOLS,
        FakeFormat,
        make_inputs,
    )

MORE_SKILLS = SKILLS + tuple(Skill(f"s{i:02d}", f"summary {i}", "body", "pkg") for i in range(30))
MORE_PLUGINS = (*PLUGINS, StaticPlugin("aa", 10, "AA"), StaticPlugin("zz", -1, "ZZ"))
STATE = TailState(step=4, memory="m", conversation=(Turn("user", "hi"),), notice="n")


def reference(**over: object) -> str:
    b = PromptBuilder(
        make_inputs(skills=MORE_SKILLS, plugins=MORE_PLUGINS, skill_index_budget_bytes=600, **over),
        FakeFormat(),
    )
    return b.build(STATE).render_text()


REFERENCE = reference()


@settings(max_examples=60, deadline=None)
@given(
    tools=st.permutations(TOOLS),
    skills=st.permutations(MORE_SKILLS),
    channels=st.permutations(CHANNELS),
    plugins=st.permutations(MORE_PLUGINS),
    hint_order=st.booleans(),
)
def test_shuffled_registration_gives_identical_bytes(
    tools: list, skills: list, channels: list, plugins: list, hint_order: bool
) -> None:
    overrides = {"execution_static": "unused", "output_model": "## Output\nX"}
    if hint_order:
        overrides = dict(reversed(list(overrides.items())))
    ref = PromptBuilder(
        make_inputs(
            skills=MORE_SKILLS,
            plugins=MORE_PLUGINS,
            skill_index_budget_bytes=600,
            hint_overrides={"output_model": "## Output\nX", "execution_static": "unused"},
        ),
        FakeFormat(),
    ).build(STATE)
    b = PromptBuilder(
        make_inputs(
            tools=tuple(tools),
            skills=tuple(skills),
            channels=tuple(channels),
            plugins=tuple(plugins),
            skill_index_budget_bytes=600,
            hint_overrides=overrides,
        ),
        FakeFormat(),
    )
    built = b.build(STATE)
    assert built.prefix == ref.prefix
    assert built.prefix_hash == ref.prefix_hash
    assert built.render_text() == ref.render_text()
    assert built.to_json() == ref.to_json()


def test_rebuilding_from_scratch_is_byte_identical() -> None:
    assert reference() == REFERENCE
