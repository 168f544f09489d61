"""The variable tail: prefix stability, order, caps, folding, chat messages."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from terrarium.errors import PromptError
from terrarium.prompt import (
    TAIL_ORDER,
    TRUNCATED_MARKER,
    EstimateTokenizer,
    PromptBuilder,
    StatusSpec,
    TailBudgets,
    TailState,
    Tokenizer,
    Turn,
    fold_summary,
)
from terrarium.prompt.tail import FOLD_BLOCK

try:
    from golden.prompt_inputs import FakeFormat, make_inputs
except ImportError:  # pragma: no cover
    from tests.golden.prompt_inputs import FakeFormat, make_inputs


def builder(**over: object) -> PromptBuilder:
    budgets = over.pop("budgets", None)
    return PromptBuilder(make_inputs(**over), FakeFormat(), EstimateTokenizer(), budgets)  # type: ignore[arg-type]


def test_prefix_stable_over_50_steps_and_tail_order_kept() -> None:
    b = builder()
    first = b.build(TailState(step=0))
    prefix_bytes = first.prefix.encode("utf-8")
    turns: list[Turn] = []
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    for step in range(50):
        turns.append(Turn("user", f"question {step}: what about topic {step}?"))
        turns.append(Turn("assistant", f"answer {step}"))
        state = TailState(
            step=step,
            now=t0 + timedelta(minutes=step),
            loaded_skills=("greeting",) if step % 3 else ("greeting", "weather"),
            memory=f"memory revision {step}",
            recalled=[f"fact {step}", f"fact {step + 1}"],
            conversation=tuple(turns),
            notice=f"timer {step} fired" if step % 5 == 0 else None,
            status=StatusSpec(date="minute", step=True),  # opt-in: new every step
        )
        built = b.build(state)
        assert built.prefix.encode("utf-8") == prefix_bytes
        assert built.prefix_hash == first.prefix_hash
        assert built.messages()[0] == {"role": "system", "content": first.prefix}
        order = list(built.tail_sections)
        assert order == [k for k in TAIL_ORDER if k in order]
        assert order[:4] == ["loaded_skills", "memory", "recalled", "conversation"]
        assert ("notice" in order) == (step % 5 == 0)
        assert f"Step {step}" in built.tail_sections["status"]
        assert built.text().startswith(first.prefix)


def test_messages_put_volatile_context_before_newest_user_message() -> None:
    b = builder()
    conv = (Turn("user", "hi"), Turn("assistant", "hey"), Turn("tool", "42", "clock", "c1"),
            Turn("user", "and now?"))
    built = b.build(TailState(step=1, memory="m", notice="n", conversation=conv))
    msgs = built.messages()
    roles = [m["role"] for m in msgs]
    assert roles == ["system", "user", "assistant", "tool", "system", "user"]
    assert msgs[3] == {"role": "tool", "content": "42", "name": "clock", "tool_call_id": "c1"}
    assert msgs[4]["content"].startswith("## Memory\nm")
    assert msgs[4]["content"].endswith("## Notice\nn")
    assert msgs[-1] == {"role": "user", "content": "and now?"}
    # next step with more turns: every message before the old context block is reused as-is
    more = (*conv, Turn("assistant", "ok"), Turn("user", "more"))
    nxt = b.build(TailState(step=2, memory="changed", conversation=more))
    assert nxt.messages()[:4] == msgs[:4]


def test_status_block_can_be_left_out() -> None:
    b = builder()
    conv = (Turn("user", "hi"),)
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    with_status = b.build(TailState(step=3, now=now, conversation=conv))
    without = b.build(TailState(step=3, now=now, conversation=conv, status=False))
    assert "status" in with_status.tail_sections
    assert "status" not in without.tail_sections
    # nothing volatile is left, so no context message sits before the user's words
    assert [m["role"] for m in without.messages()] == ["system", "user"]
    assert [m["role"] for m in with_status.messages()] == ["system", "system", "user"]


def test_section_caps_truncate_with_marker_and_flag() -> None:
    b = builder(budgets=TailBudgets(memory=20, recalled=15))
    built = b.build(
        TailState(step=1, memory="word " * 500, recalled=["r" * 400, "s"], notice="short")
    )
    assert built.truncated == ("memory", "recalled")
    assert built.tail_sections["memory"].endswith(TRUNCATED_MARKER)
    tok = EstimateTokenizer()
    assert tok.count(built.tail_sections["memory"]) <= 20
    assert tok.count(built.tail_sections["recalled"]) <= 15
    assert not built.tail_sections["notice"].endswith(TRUNCATED_MARKER)
    info = {s.name: s for s in built.sections}
    assert info["memory"].zone == "tail" and info["memory"].tokens <= 20


def test_no_truncation_no_flags() -> None:
    built = builder().build(TailState(step=1, memory="small"))
    assert built.truncated == () and built.folded_turns == 0


def test_old_turns_fold_into_one_summary_line() -> None:
    turns = tuple(
        Turn("user" if i % 2 == 0 else "assistant", f"turn {i} " + "blah " * 40) for i in range(40)
    )
    b = builder(budgets=TailBudgets(conversation=600))
    built = b.build(TailState(step=7, conversation=turns, status=StatusSpec(step=True)))
    assert built.folded_turns > 0
    assert "conversation" in built.truncated
    conv = built.tail_sections["conversation"]
    lines = conv.splitlines()
    assert lines[1].startswith(f"[earlier: {built.folded_turns} turns folded (")
    assert "the user first asked: 'turn 0 blah" in lines[1]
    assert lines[-1].startswith("[assistant] turn 39")  # newest kept
    msgs = built.messages()
    assert msgs[1]["role"] == "system" and msgs[1]["content"].startswith("[earlier:")
    assert len(msgs) == 2 + (40 - built.folded_turns) + 1  # + status context message
    # deterministic
    again = builder(budgets=TailBudgets(conversation=600)).build(
        TailState(step=7, conversation=turns, status=StatusSpec(step=True))
    )
    assert again.tail_sections == built.tail_sections
    # folded in whole blocks, and the fewest blocks: one block fewer would not fit
    assert built.folded_turns % FOLD_BLOCK == 0
    tok = EstimateTokenizer()
    fewer = built.folded_turns - FOLD_BLOCK
    kept = turns[fewer:]
    cost = sum(tok.count(t.content) + 4 for t in kept)
    summary = fold_summary(turns[:fewer]) if fewer else ""
    assert cost + (tok.count(summary) + 4 if fewer else 0) > 600


def test_fold_boundary_stays_put_while_the_conversation_grows() -> None:
    """The summary line must not change every step, or the server cache is lost each time."""
    turns = [Turn("user" if i % 2 == 0 else "assistant", f"turn {i} " + "blah " * 20)
             for i in range(60)]
    b = builder(budgets=TailBudgets(conversation=600))
    boundaries = []
    for n in range(30, 61):
        built = b.build(TailState(step=n, conversation=tuple(turns[:n])))
        boundaries.append(built.folded_turns)
    changes = sum(1 for a, c in itertools.pairwise(boundaries) if a != c)
    assert boundaries[-1] > boundaries[0] > 0
    assert changes <= (boundaries[-1] - boundaries[0]) // FOLD_BLOCK


def test_conversation_cap_follows_context_window() -> None:
    turns = tuple(Turn("user", "word " * 100) for _ in range(30))
    small = builder(context_window=3000).build(TailState(step=1, conversation=turns))
    large = builder(context_window=30000).build(TailState(step=1, conversation=turns))
    assert small.folded_turns > 0 and large.folded_turns == 0
    b = TailBudgets()
    assert small.tokens <= 3000 - b.reply_reserve - b.margin


def test_prompt_error_only_when_newest_turn_cannot_fit() -> None:
    b = builder(budgets=TailBudgets(conversation=50))
    with pytest.raises(PromptError, match="cannot fit the context window"):
        b.build(TailState(step=1, conversation=(Turn("user", "x"), Turn("user", "word " * 200))))


def test_prefix_larger_than_window_fails_at_construction() -> None:
    with pytest.raises(PromptError, match="leaves nothing"):
        builder(context_window=500)


def test_unknown_loaded_skill_is_an_error_listing_skills() -> None:
    with pytest.raises(PromptError, match="'nope' is not one of this creature's skills"):
        builder().build(TailState(step=1, loaded_skills=("nope",)))


def test_loaded_skill_bodies_in_tail_not_prefix() -> None:
    built = builder().build(TailState(step=1, loaded_skills=("weather",)))
    assert "Say the temperature first." in built.tail_sections["loaded_skills"]
    assert "Say the temperature first." not in built.prefix


def test_estimate_tokenizer_documented_formula() -> None:
    tok = EstimateTokenizer()
    assert tok.count("") == 0
    assert tok.count("abcdefgh") == 2  # 8 bytes / 4
    assert tok.count("a b c d e") == 5  # one per word beats 9/4
    assert tok.count("é" * 4) == 2  # UTF-8 bytes, not characters


def test_prefix_tokens_never_below_whole_count() -> None:
    b = builder()
    assert b.prefix_tokens >= EstimateTokenizer().count(b.prefix)


def test_model_tokenizer_from_llm_is_the_one_prompt_tokenizer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import terrarium.prompt as prompt_pkg
    from terrarium.llm.tokenizer import LlamaTokenizer

    assert not hasattr(prompt_pkg, "LlamaCppTokenizer")
    tok = LlamaTokenizer("http://127.0.0.1:9/v1")
    try:
        assert isinstance(tok, Tokenizer)
        asked: list[str] = []

        def fake_tokenize(text: str) -> list[int]:  # one "token" per character
            asked.append(text)
            return list(range(len(text)))

        monkeypatch.setattr(tok, "tokenize", fake_tokenize)
        b = PromptBuilder(make_inputs(), FakeFormat(), tok)
        assert b.prefix_sections[0].tokens == len(b.prefix_texts["persona"])
        assert asked  # the builder really counted through the model's tokenizer
    finally:
        tok.close()


def test_a_fold_policy_line_folds_at_the_same_point_whatever_its_text() -> None:
    """The stand-in line and the summary replacing it are both costed at ``reserve``."""
    from terrarium.prompt.tail import FoldPolicy

    turns = tuple(Turn("user" if i % 2 == 0 else "assistant", f"turn {i} " + "blah " * 20)
                  for i in range(40))
    b = builder(budgets=TailBudgets(conversation=600))
    short = FoldPolicy(line=lambda ts: f"[earlier: {len(ts)}]", reserve=120)
    long = FoldPolicy(line=lambda ts: f"[earlier: {len(ts)}] " + "summary " * 80, reserve=120)
    a = b.build(TailState(step=1, conversation=turns, fold=short))
    c = b.build(TailState(step=1, conversation=turns, fold=long))
    assert a.folded_turns == c.folded_turns > 0
    assert c.messages()[1]["content"].startswith(f"[earlier: {c.folded_turns}] summary")
    # without the reserve the short line would fold fewer turns
    plain = b.build(TailState(step=1, conversation=turns,
                              fold=FoldPolicy(line=short.line, reserve=0)))
    assert plain.folded_turns < a.folded_turns


def test_a_long_conversation_folds_where_every_candidate_would_and_writes_few_lines() -> None:
    """The fold point is the first block whose line fits, as trying every block's line
    would give; but a block whose kept turns alone leave no room for a line gets none
    written (each covers every folded turn: a long conversation's every step was
    quadratic in its length)."""
    import random

    from terrarium.prompt.tail import FoldPolicy

    rng = random.Random(7)
    turns = [Turn("user" if i % 2 == 0 else "assistant",
                  f"turn {i} " + "blah " * rng.randint(1, 30)) for i in range(1200)]
    tok = EstimateTokenizer()
    cap = 600

    def reference(conv: tuple[Turn, ...], reserve: int) -> int:
        """The fold every candidate's line tried, oldest first (the rule's definition)."""
        costs = [tok.count(t.content) + 4 for t in conv]
        if sum(costs) <= cap:
            return 0
        for k in sorted({*range(FOLD_BLOCK, len(conv), FOLD_BLOCK), len(conv) - 1}):
            line = fold_summary(conv[:k])
            if sum(costs[k:]) + max(tok.count(line), reserve) + 4 <= cap:
                return k
        raise AssertionError("no fold fits")

    written: list[int] = []

    def line(ts: object) -> str:
        written.append(len(ts))  # type: ignore[arg-type]
        return fold_summary(ts)  # type: ignore[arg-type]

    for reserve in (0, 120):
        b = builder(budgets=TailBudgets(conversation=cap))
        for n in (30, 200, 701, 1200):
            written.clear()
            conv = tuple(turns[:n])
            built = b.build(TailState(step=1, conversation=conv,
                                      fold=FoldPolicy(line=line, reserve=reserve)))
            assert built.folded_turns == reference(conv, reserve) > 0
            assert 1 <= len(written) <= 3, (n, reserve, written)


def test_a_builder_kept_across_steps_builds_what_a_fresh_one_does() -> None:
    """The turn costs a builder keeps from its last step (a conversation only appended to
    counts its new turns) give the same prompt as a fresh builder, also when the next
    conversation is not the last one extended (its oldest turns dropped, one rewritten)."""
    turns = [Turn("user" if i % 2 == 0 else "assistant", f"turn {i} " + "blah " * (i % 9))
             for i in range(120)]
    kept = builder(budgets=TailBudgets(conversation=500))
    steps = [turns[:n] for n in range(1, 120, 7)]
    steps += [turns[40:90], turns[40:95], [Turn("user", "new"), *turns[41:95]], turns[:3]]
    folds = set()
    for conv in steps:
        state = TailState(step=1, conversation=tuple(conv))
        fresh = builder(budgets=TailBudgets(conversation=500)).build(state)
        got = kept.build(state)
        assert got.messages() == fresh.messages() and got.tokens == fresh.tokens
        assert got.folded_turns == fresh.folded_turns
        folds.add(got.folded_turns)
    assert len(folds - {0}) >= 4  # the fold moved on, and its line was counted on
