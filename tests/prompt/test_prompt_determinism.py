"""Same facts in any registration order ⇒ the same bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
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


VOICE_ASSISTANT = Path(__file__).resolve().parents[2] / "examples" / "voice_assistant"


def _voice_prefixes() -> dict[str, tuple[str, str]]:
    """Load the team from disk and assemble every creature from scratch (no shared caches:
    each ``assemble`` without a cache makes a new one, which its builder then uses)."""
    team = load_team(VOICE_ASSISTANT)
    out = {}
    for name in sorted(team.creatures):
        parts = assemble(team, name)
        b = PromptBuilder(parts.inputs, parts.fmt, cache=parts.cache)
        out[name] = (b.prefix_hash, b.prefix)
    return out


def test_voice_assistant_prefix_hash_identical_across_independent_loads() -> None:
    first = _voice_prefixes()
    second = _voice_prefixes()
    assert set(first) == set(second) == {"router", "speaker"}
    for creature in ("router", "speaker"):
        assert second[creature] == first[creature]
        # the exposed hash is the hash of exactly these bytes
        digest = hashlib.sha256(first[creature][1].encode("utf-8")).hexdigest()
        assert first[creature][0] == digest
    assert first["router"][0] != first["speaker"][0]
