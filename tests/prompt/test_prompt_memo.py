"""The aggregator's memos: a restart reuses work, yet never returns a stale or lax prompt."""

from __future__ import annotations

import pytest

from terrarium.errors import RegistryError
from terrarium.formats import get_format
from terrarium.prompt import EstimateTokenizer, PromptBuilder, PromptCache, TailState
from terrarium.prompt.views import IdentityMemo

try:
    from golden.prompt_inputs import CHANNELS, TOOLS, FakeFormat, make_inputs
except ImportError:  # pragma: no cover
    from tests.golden.prompt_inputs import CHANNELS, TOOLS, FakeFormat, make_inputs


class OneTokenPerChar:
    def count(self, text: str) -> int:
        return len(text)


def test_restart_with_same_inputs_reuses_the_prefix_and_cold_equals_warm() -> None:
    inputs = make_inputs()
    cache = PromptCache()
    cold = PromptBuilder(inputs, FakeFormat(), cache=cache)
    warm = PromptBuilder(inputs, FakeFormat(), cache=cache)
    assert warm.prefix is cold.prefix  # memo hit: nothing re-joined or re-hashed
    assert warm.prefix_sections == cold.prefix_sections
    again = PromptBuilder(inputs, FakeFormat(), cache=PromptCache())  # a new cache is cold
    assert again.prefix is not cold.prefix and again.prefix == cold.prefix
    assert again.prefix_hash == cold.prefix_hash
    assert again.build(TailState(step=1)).render_text() == cold.build(
        TailState(step=1)
    ).render_text()


def test_duplicates_are_refused_on_every_assembly_not_only_the_first() -> None:
    inputs = make_inputs(channels=(*CHANNELS, CHANNELS[0]))
    for _ in range(2):
        with pytest.raises(RegistryError, match=f"channel '{CHANNELS[0].name}'"):
            PromptBuilder(inputs, FakeFormat())
    doubled = make_inputs(tools=(*TOOLS, TOOLS[1]))
    for _ in range(2):
        with pytest.raises(RegistryError, match=f"call name '{TOOLS[1].name}'"):
            PromptBuilder(doubled, FakeFormat())


def test_the_format_class_is_part_of_the_memo_key() -> None:
    inputs = make_inputs()
    fake = PromptBuilder(inputs, FakeFormat())
    bracket = PromptBuilder(inputs, get_format("bracket"))
    assert "CALL send_speak(" in fake.prefix_texts["channels"]
    assert "[/send_speak]" in bracket.prefix_texts["channels"]
    assert "CALL " not in bracket.prefix
    assert fake.prefix_hash != bracket.prefix_hash


def test_persona_is_rendered_per_assembly_so_a_changed_variable_shows() -> None:
    extra: dict[str, object] = {"mood": "calm"}
    inputs = make_inputs(persona_source="Mood: {{ mood }}.\n", extra_variables=extra)
    assert PromptBuilder(inputs, FakeFormat()).prefix.startswith("Mood: calm.")
    extra["mood"] = "bright"
    assert PromptBuilder(inputs, FakeFormat()).prefix.startswith("Mood: bright.")


def test_a_kept_assembly_never_hides_a_changed_variable() -> None:
    """The same inputs object assembles nothing the second time, yet a variable changed in
    place (a plain value, or a list's contents) still shows, with one shared cache."""
    cache = PromptCache()
    extra: dict[str, object] = {"mood": "calm", "items": ["tea"]}
    inputs = make_inputs(persona_source="Mood: {{ mood }} {{ items|join(',') }}.\n",
                         extra_variables=extra)
    first = PromptBuilder(inputs, FakeFormat(), cache=cache)
    assert first.prefix.startswith("Mood: calm tea.")
    extra["items"].append("cake")  # type: ignore[attr-defined]
    again = PromptBuilder(inputs, FakeFormat(), cache=cache)
    assert again.prefix.startswith("Mood: calm tea,cake.")
    del extra["items"]
    inputs = make_inputs(persona_source="Mood: {{ mood }}.\n", extra_variables=extra)
    kept = PromptBuilder(inputs, FakeFormat(), cache=cache)
    assert PromptBuilder(inputs, FakeFormat(), cache=cache).prefix is kept.prefix  # kept
    extra["mood"] = "bright"
    assert PromptBuilder(inputs, FakeFormat(), cache=cache).prefix.startswith("Mood: bright.")


def test_token_counts_are_memoized_per_tokenizer() -> None:
    inputs = make_inputs()
    estimate = PromptBuilder(inputs, FakeFormat(), EstimateTokenizer())
    per_char = PromptBuilder(inputs, FakeFormat(), OneTokenPerChar())
    assert estimate.prefix == per_char.prefix
    persona = len(per_char.prefix_texts["persona"])
    assert per_char.prefix_sections[0].tokens == persona
    assert estimate.prefix_sections[0].tokens < persona


def test_identity_memo_keys_on_identity_of_tuples_and_value_of_the_rest() -> None:
    calls: list[object] = []

    def join(items: object, sep: str) -> str:
        calls.append(items)
        return sep.join(map(str, items))  # type: ignore[call-overload]

    memo = IdentityMemo(join)
    a = (1, 2, 3)
    assert memo(a, "-") == "1-2-3"
    assert memo(a, "-") == "1-2-3"
    assert len(calls) == 1
    assert memo(a, "+") == "1+2+3"  # other value, other entry
    b = tuple([1, 2, 3])  # equal but not the same object: computed again
    assert b is not a
    assert memo(b, "-") == "1-2-3"
    assert len(calls) == 3
    mutable = [1, 2]
    assert memo(mutable, "-") == "1-2"
    mutable.append(3)
    assert memo(mutable, "-") == "1-2-3"  # a list is never memoized
    assert len(calls) == 5
