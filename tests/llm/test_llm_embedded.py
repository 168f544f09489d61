"""End-to-end on the embedded llama.cpp model (SmolLM2-135M, in-process, offline)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from terrarium.config import load_team
from terrarium.errors import ModelError
from terrarium.events import CreatureWarmed, Event, PrefixCacheProblem, PrefixRestored, TeamReady
from terrarium.llm.completion import complete
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.slots import SlotLeasingModel, plan_embedded
from terrarium.llm.types import ChatMessage, ChatRequest
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

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
    with server.tokenizer() as tok:
        assert tok.count("") == 0
        assert tok.count("hello world") == 2
        long = "The quick brown fox jumps over the lazy dog. " * 10
        assert tok.count(long) > tok.count("The quick brown fox")
        assert tok.count(long) == tok.count(long)  # cached answer matches


def test_unknown_slot_is_refused(server: EmbeddedServer) -> None:
    with pytest.raises(ModelError, match="slot 5 does not exist"):
        server.client(slot=5)


async def test_a_subagent_on_its_leased_slot_leaves_the_parent_prefix_cached() -> None:
    """Issue 14: the parent on slot 0, its sub-agent on slot 1 from its pool."""
    plan = plan_embedded(1, {"lead": 1})
    with EmbeddedServer(slots=plan.total, ctx_per_slot=1024) as srv:
        parent = srv.client(slot=0)
        system = "You are the lead of a small research team. Keep answers short. " * 12
        await complete(parent, ChatRequest(messages=user("Hello.", system), max_tokens=2))
        sub = SlotLeasingModel(srv.client(), plan.pools()["lead"], "lead/scout")
        other = "You are a scout who looks things up. " * 12
        await complete(sub, ChatRequest(messages=user("Find a bird.", other), max_tokens=2))
        await complete(parent, ChatRequest(messages=user("Hello again.", system), max_tokens=2))
        usage = parent.last_usage
        assert usage is not None and usage.prompt_n is not None
        assert usage.cached_tokens > usage.prompt_tokens // 2  # the parent's prefix survived


TEAM = """\
terrarium:
  name: cached
  input_channel: inbox
  creatures:
    - {name: helper, config: helper, channels: {listen: [inbox]}}
  channels:
    inbox: {type: queue, schema: {fields: {text: str}}}
"""


def test_a_second_start_restores_the_saved_prefix(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 5 of issue 17: the first start evaluates and saves each creature's prompt
    prefix; the second start of the same team restores it instead."""
    monkeypatch.setenv("TERRARIUM_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "team" / "helper").mkdir(parents=True)
    (tmp_path / "team" / "terrarium.yaml").write_text(TEAM, encoding="utf-8")
    (tmp_path / "team" / "helper" / "config.yaml").write_text(
        "name: helper\nskill_mode: static\nsystem_prompt_file: system.md\n", encoding="utf-8")
    (tmp_path / "team" / "helper" / "system.md").write_text(
        "You help with short answers about tea, gardens and the weather.\n" * 20,
        encoding="utf-8")

    def start() -> list[Event]:
        events: list[Event] = []

        async def go() -> None:
            ready = anyio.Event()

            def seen(ev: Event) -> None:
                events.append(ev)
                if isinstance(ev, CreatureWarmed):  # a first start is ready before this
                    ready.set()

            opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", on_event=seen)
            async with TeamRuntime(load_team(tmp_path / "team"), opts):
                with anyio.fail_after(120):
                    await ready.wait()

        anyio.run(go)
        return events

    events = start()
    first = [e for e in events if isinstance(e, CreatureWarmed)]
    assert [(e.prefix, e.saved) for e in first] == [("evaluated", True)]
    kinds = [type(e) for e in events]  # ready first, the prefix evaluated while listening
    assert kinds.index(TeamReady) < kinds.index(CreatureWarmed)
    assert len(list((tmp_path / "cache" / "prefixes").glob("*.slot"))) == 1
    second = start()
    (restored,) = [e for e in second if isinstance(e, PrefixRestored)]
    assert restored.creature == "helper" and restored.tokens == first[0].tokens
    assert [e.prefix for e in second if isinstance(e, CreatureWarmed)] == ["restored"]
    assert not [e for e in second if isinstance(e, PrefixCacheProblem)]


def _chat(srv: EmbeddedServer, messages: list[dict[str, str]], **extra: object
          ) -> dict[str, object]:
    body = {"messages": messages, "id_slot": 0, "cache_prompt": True, **extra}
    with httpx.Client(base_url=srv.base_url, timeout=120, verify=False) as http:
        data: dict[str, object] = http.post("/v1/chat/completions", json=body).json()
    return data


def test_the_same_request_gives_the_same_reply(server: EmbeddedServer) -> None:
    """Sampling (temperature above 0) with no seed in the request uses the server's fixed
    one: a conversation repeated gives the same reply, run after run (llama.cpp's default
    seed is drawn anew per request)."""
    msgs = [{"role": "user", "content": "Tell me something about green tea."}]
    replies = {str(_chat(server, msgs, max_tokens=24, temperature=0.9)["choices"])
               for _ in range(3)}
    assert len(replies) == 1


def test_a_restored_prefix_continues_exactly_as_the_evaluated_one(tmp_path: Path) -> None:
    """Issue 17 item 5: a slot restored from its saved state is the evaluated one: the next
    request evaluates as many tokens and its tokens and logprobs are the same."""
    system = [{"role": "system", "content": "You are a friendly voice assistant. " * 20}]
    full = [*system, {"role": "user", "content": "Hi, my name is Ada. What is my name?"}]

    def probe(srv: EmbeddedServer) -> tuple[object, object]:
        data = _chat(srv, full, max_tokens=8, temperature=0, logprobs=True, top_logprobs=3)
        choice = data["choices"][0]  # type: ignore[index]
        tokens = [(t["token"], t["logprob"], [(a["token"], a["logprob"]) for a in
                                              t["top_logprobs"]])
                  for t in choice["logprobs"]["content"]]
        return tokens, data["timings"]["prompt_n"]  # type: ignore[index]

    with EmbeddedServer(slots=2, ctx_per_slot=2048, slot_save_dir=tmp_path) as first:
        _chat(first, system, max_tokens=1)
        with httpx.Client(base_url=first.base_url, timeout=120, verify=False) as http:
            saved = http.post("/slots/0", params={"action": "save"},
                              json={"filename": "p.slot"}).json()
        assert saved["n_saved"] > 100
        evaluated = probe(first)
    with EmbeddedServer(slots=2, ctx_per_slot=2048, slot_save_dir=tmp_path) as second:
        with httpx.Client(base_url=second.base_url, timeout=120, verify=False) as http:
            got = http.post("/slots/0", params={"action": "restore"},
                            json={"filename": "p.slot"}).json()
        assert got["n_restored"] == saved["n_saved"]
        warm = _chat(second, system, max_tokens=1)
        assert warm["timings"]["prompt_n"] <= 4  # type: ignore[index]
        restored = probe(second)
    assert restored == evaluated
