"""End-to-end on the embedded llama.cpp model (SmolLM2-135M, in-process, offline)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from terrarium.errors import ModelError
from terrarium.llm.completion import complete
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.types import ChatMessage, ChatRequest

pytestmark = [pytest.mark.embedded, pytest.mark.anyio]


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(slots=2, ctx_per_slot=2048) as srv:
        yield srv


def user(text: str, system: str | None = None) -> list[ChatMessage]:
    msgs = [ChatMessage(role="system", content=system)] if system else []
    return [*msgs, ChatMessage(role="user", content=text)]


async def test_real_streamed_completion(server: EmbeddedServer) -> None:
    model = server.client(slot=0)
    pieces = [
        d.text
        async for d in model.stream(
            ChatRequest(messages=user("Name three colours."), max_tokens=24, seed=1)
        )
    ]
    assert len([p for p in pieces if p]) > 1  # really streamed, not one blob
    assert "".join(pieces).strip()
    usage = model.last_usage
    assert usage is not None
    assert usage.completion_tokens > 0 and usage.prompt_tokens > 0
    assert usage.predicted_ms is not None and usage.tokens_per_second is not None


async def test_grammar_constrains_output(server: EmbeddedServer) -> None:
    model = server.client(slot=1)
    for question in ("Is the sky blue?", "Is fire cold?"):
        out = await complete(
            model,
            ChatRequest(
                messages=user(question), grammar='root ::= "yes" | "no"', max_tokens=8, seed=3
            ),
        )
        assert out.text in {"yes", "no"}


async def test_same_prefix_same_slot_is_cached(server: EmbeddedServer) -> None:
    model = server.client(slot=0)
    system = "You are a terse assistant for a test of prompt caching. " * 20
    first = ChatRequest(messages=user("Say one word.", system), max_tokens=4, seed=1)
    await complete(model, first)
    assert model.last_usage is not None
    prompt1 = model.last_usage.prompt_tokens
    second = ChatRequest(messages=user("Say two words.", system), max_tokens=4, seed=1)
    await complete(model, second)
    usage = model.last_usage
    assert usage is not None
    assert usage.cached_tokens > 0
    assert usage.cached_tokens >= prompt1 // 2
    assert usage.prompt_n is not None and usage.prompt_n < usage.prompt_tokens


def test_tokenizer_counts_with_the_model_vocabulary(server: EmbeddedServer) -> None:
    tok = server.tokenizer()
    assert tok.count("") == 0
    assert tok.count("hello world") == 2
    long = "The quick brown fox jumps over the lazy dog. " * 10
    assert tok.count(long) > tok.count("The quick brown fox")
    assert tok.count(long) == tok.count(long)  # cached answer matches


def test_unknown_slot_is_refused(server: EmbeddedServer) -> None:
    with pytest.raises(ModelError, match="slot 5 does not exist"):
        server.client(slot=5)
