"""The scripted model's cached-token count, worked out message by message, equals the
common prefix of the two requests' whole pseudo-token lists (as it was counted before)."""

from __future__ import annotations

import itertools
import random

from terrarium.llm.scripted import _common_prefix, _message_tokens
from terrarium.llm.types import ChatMessage

__all__: list[str] = []


def _flat_prefix(a: list[tuple[str, ...]], b: list[tuple[str, ...]]) -> int:
    n = 0
    for x, y in zip(itertools.chain(*a), itertools.chain(*b), strict=False):
        if x != y:
            break
        n += 1
    return n


def test_message_by_message_equals_the_flat_common_prefix() -> None:
    rng = random.Random(7)
    words = ["hi", "there", "<user>", "Heard", "you", ".", "a b", "user"]
    roles = ["system", "user", "assistant"]

    def messages() -> list[ChatMessage]:
        return [ChatMessage(role=rng.choice(roles),
                            content=" ".join(rng.choices(words, k=rng.randint(0, 4))))
                for _ in range(rng.randint(0, 4))]

    for _ in range(2000):
        a = [_message_tokens(m) for m in messages()]
        b = [_message_tokens(m) for m in messages()] if rng.random() < 0.5 else (
            a[:rng.randint(0, len(a))] + [_message_tokens(m) for m in messages()])
        assert _common_prefix(a, b) == _flat_prefix(a, b)


def test_a_message_that_grew_counts_its_old_tokens_and_not_past_them() -> None:
    sys = ChatMessage(role="system", content="You echo.")
    before = [_message_tokens(sys), _message_tokens(ChatMessage(role="user", content="a b"))]
    now = [_message_tokens(sys), _message_tokens(ChatMessage(role="user", content="a b c"))]
    assert _common_prefix(now, before) == _flat_prefix(now, before) == len(before[0]) + 3
