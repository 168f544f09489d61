"""Yield to first audio: the speaker's model pauses while its first sentence is synthesized.

The model is scripted (with continuation) and the synthesizer is fake. The first synthesis
waits on a gate that opens when the model's stream is closed, so "the first sentence was
still pending when the controller looked" holds by construction, never by timing.
"""

from __future__ import annotations

import re
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.controller.loop import Controller, Incoming, TurnResult
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.factory import make_model
from terrarium.llm.openai_client import OpenAIClient
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatMessage, ChatRequest
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.voice import AudioClip, CallableSynthesizer
from terrarium.voice.sink import CollectOutput, FirstPieceSink
from tests.loop_helpers import TOOLS, call, make_parts
from tests.openai_fakes import FakeOpenAI, Reply, sse, text_chunk
from tests.yield_fakes import RATE, REPLY, SENTENCES, Setup, speaker_team


def test_the_model_pauses_until_the_first_sentence_is_audio(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    result = s.run()
    assert len(s.model.requests) == 2
    first, cont = s.model.requests
    # the continuation is the same request plus exactly the text streamed so far
    assert cont.messages[:-1] == first.messages
    assert cont.messages[-1] == ChatMessage(role="assistant", content=s.model.streamed[0])
    assert REPLY.startswith(s.model.streamed[0])
    assert s.model.streamed[0] + s.model.streamed[1] == REPLY
    assert SENTENCES[0] in s.model.streamed[0]
    assert SENTENCES[2] not in s.model.streamed[0]  # it really stopped early
    # stream closed → first sentence synthesized → only then the continuation
    assert s.order(("stream ended", 1)) < s.order(("synthesized", SENTENCES[0]))
    assert s.order(("synthesized", SENTENCES[0])) < s.order(("request", 2))
    assert s.synth.calls == SENTENCES
    assert result.text == REPLY
    assert result.rounds == 1 and len(result.usages) == 1


def test_spoken_text_history_and_usage_match_a_run_without_yield(tmp_path: Path) -> None:
    on = Setup(tmp_path / "on")
    off = Setup(tmp_path / "off", yield_first_audio=False)
    a, b = on.run(), off.run()
    assert len(on.model.requests) == 2 and len(off.model.requests) == 1
    assert on.synth.calls == off.synth.calls == SENTENCES
    assert a.text == b.text == REPLY
    assert on.ctl.conversation == off.ctl.conversation
    assert [(e.kind, e.text) for e in on.entries] == [(e.kind, e.text) for e in off.entries]
    assert (a.prompt_tokens, a.cached_tokens, a.completion_tokens) == (
        b.prompt_tokens, b.cached_tokens, b.completion_tokens)
    assert a.completion_tokens > 0


@pytest.mark.parametrize(("case", "kw"), [
    ("model cannot continue", {"continuation": False}),
    ("yield_first_audio off", {"yield_first_audio": False}),
    ("one piece only", {"reply": "Hello there my good friend how are you"}),
    ("short reply", {"reply": "Hi."}),
])
def test_no_pause(tmp_path: Path, case: str, kw: dict[str, Any]) -> None:
    s = Setup(tmp_path, **kw)
    result = s.run()
    assert len(s.model.requests) == 1, case
    assert result.text == kw.get("reply", REPLY)
    assert "".join(s.synth.calls).replace(" ", "") == result.text.replace(" ", "")


def test_no_pause_when_the_output_cannot_tell(tmp_path: Path) -> None:
    model = ScriptedModel([REPLY], chunk_size=5, continuation=True)
    parts = make_parts(tmp_path, output={
        "default": "out", "named_outputs": {"out": {"type": "stdout"}}})
    sink = CollectOutput()
    assert not isinstance(sink, FirstPieceSink)
    ctl = Controller(parts, model, sinks={"out": sink})
    result = anyio.run(ctl.run_turn, [Incoming(text="hi")])
    assert len(model.requests) == 1 and result.text == REPLY


def test_the_continuation_keeps_the_reply_within_max_tokens(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.model.max_tokens = 40  # type: ignore[attr-defined]  # as OpenAIClient has
    s.run()
    first, cont = s.model.requests
    assert first.max_tokens is None
    spent = len(re.findall(r"\w+|[^\w\s]", s.model.streamed[0]))  # the scripted tokens
    assert cont.max_tokens == 40 - spent


def test_at_most_one_pause_per_reply_over_its_rounds(tmp_path: Path) -> None:
    """Round one speaks, calls a tool and pauses once; round two's text needs no pause."""
    first = "Let me check that. I will look it up. "
    steps = [{"match": "sky", "reply": first + call("lookup", label="sky")},
             {"match": "fact-sky", "reply": REPLY}]
    s = Setup(tmp_path, steps=steps, tools=[f"{TOOLS}:Lookup"])
    result = s.run("What colour is the sky?")
    assert result.rounds == 2 and [c.name for c in result.calls] == ["lookup"]
    continued = [r for r in s.model.requests if r.messages[-1].role == "assistant"]
    assert len(s.model.requests) == 3 and len(continued) == 1
    assert continued[0] is s.model.requests[1]
    assert s.synth.calls == ["Let me check that.", "I will look it up.", *SENTENCES]
    assert "Result of lookup" in (s.model.requests[2].messages[-1].content or "")


def test_every_reply_gets_its_own_pause(tmp_path: Path) -> None:
    s = Setup(tmp_path, steps=[{"match": "hi", "reply": REPLY},
                               {"match": "again", "reply": REPLY}])
    s.run("hi")
    s.gate.clear()
    s.synth.calls.clear()
    s.run("again")
    assert len(s.model.requests) == 4  # paused again, though its pieces' audio was kept
    assert s.synth.calls == []  # short pieces said before are not synthesized anew


def test_barge_in_during_the_pause_does_not_hang(tmp_path: Path) -> None:
    s = Setup(tmp_path)

    async def go() -> TurnResult:
        async with s.tts:
            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    box: list[TurnResult] = []

                    async def turn() -> None:
                        box.append(await s.ctl.run_turn([Incoming(text="hi")]))

                    s.model.opens_gate = False  # the first synthesis stays stuck
                    tg.start_soon(turn)
                    await s.model.closed.wait()  # the model has paused
                    assert s.tts.first_piece_pending()
                    cut = await s.tts.interrupt()
                    s.gate.set()  # let the stuck synthesis thread finish
                assert cut is not None
                return box[0]

    result = anyio.run(go)
    assert len(s.model.requests) == 2  # the reply was still completed, as without a pause
    assert "".join(s.model.streamed) == REPLY
    assert result.text.startswith(s.model.streamed[0][:5])


def test_scripted_continuation_reuses_the_step_and_counts_only_new_tokens() -> None:
    model = ScriptedModel(["One two. Three four.", "Other."], chunk_size=4, continuation=True)
    base = [ChatMessage(role="user", content="go")]

    async def go() -> list[str]:
        out = []
        async with aclosing(model.stream(ChatRequest(messages=base))) as s:
            async for d in s:
                out.append(d.text)
                break
        first = model.last_usage
        assert first is not None and first.completion_tokens == 1  # "One "
        req = ChatRequest(messages=[*base, ChatMessage(role="assistant", content=out[0])])
        rest = [d.text async for d in model.stream(req)]
        assert model.last_usage is not None
        assert first.completion_tokens + model.last_usage.completion_tokens == 6
        return ["".join(out), "".join(rest)]

    assert anyio.run(go) == ["One ", "two. Three four."]
    assert model.describe().endswith("(1 of 2 steps left)")


def test_scripted_model_without_continuation_takes_the_next_step() -> None:
    model = ScriptedModel(["One two.", "Other."])
    req = ChatRequest(messages=[ChatMessage(role="user", content="go"),
                                ChatMessage(role="assistant", content="One")])

    async def go() -> str:
        return "".join([d.text async for d in model.stream(req)])

    assert anyio.run(go) == "One two."
    assert not model.supports_continuation


# ------------------------------------------------------------------ the HTTP client


def continuation_request(prefill: str) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content="hi"),
                                 ChatMessage(role="assistant", content=prefill)])


def stream_of(*parts: str, timings: dict[str, Any] | None = None) -> Reply:
    chunks = [sse({**text_chunk(p), **({"timings": timings} if timings else {})})
              for p in parts]
    chunks.append(sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    chunks.append(b"data: [DONE]\n\n")
    return Reply(headers={"content-type": "text/event-stream"}, chunks=chunks)


async def texts(c: OpenAIClient, req: ChatRequest) -> list[str]:
    return [d.text async for d in c.stream(req) if d.text]


@pytest.mark.anyio
@pytest.mark.parametrize("parts", [
    ("Hello", " there.", " How", " are you?"),  # the server echoes the prefill
    ("Hello there.", " How are you?"),
    (" How", " are you?"),  # llama.cpp streams only the new text
])
async def test_client_continuation_yields_only_new_text(parts: tuple[str, ...]) -> None:
    async with FakeOpenAI([stream_of(*parts)]) as srv:
        c = OpenAIClient(base_url=srv.base_url, continuation=True, llama_cpp=True)
        out = await texts(c, continuation_request("Hello there."))
    assert "".join(out) == " How are you?"
    body = srv.seen[0].body
    assert body["messages"][-1] == {"role": "assistant", "content": "Hello there."}
    assert body["timings_per_token"] is True


@pytest.mark.anyio
async def test_client_continuation_passes_text_that_only_starts_like_the_prefill() -> None:
    async with FakeOpenAI([stream_of("Hel", "icopters fly.")]) as srv:
        c = OpenAIClient(base_url=srv.base_url, continuation=True)
        out = await texts(c, continuation_request("Hello."))
    assert out == ["Helicopters fly."]
    assert "timings_per_token" not in srv.seen[0].body  # not a llama.cpp server


@pytest.mark.anyio
async def test_client_without_continuation_leaves_text_alone() -> None:
    async with FakeOpenAI([stream_of("Hello there.", " How are you?")]) as srv:
        c = OpenAIClient(base_url=srv.base_url, llama_cpp=True)
        out = await texts(c, continuation_request("Hello there."))
    assert "".join(out) == "Hello there. How are you?"
    assert not c.supports_continuation
    assert "timings_per_token" not in srv.seen[0].body


@pytest.mark.anyio
async def test_client_stream_closed_early_reports_usage_so_far() -> None:
    timings = {"cache_n": 30, "prompt_n": 12, "prompt_ms": 50.0, "predicted_n": 2,
               "predicted_ms": 20.0}
    async with FakeOpenAI([stream_of("One", " two", " three", timings=timings)]) as srv:
        c = OpenAIClient(base_url=srv.base_url, continuation=True, llama_cpp=True)
        async with aclosing(c.stream(ChatRequest(messages=[ChatMessage(role="user",
                                                                          content="hi")]))) as s:
            async for _ in s:
                break
    u = c.last_usage
    assert u is not None
    assert (u.prompt_tokens, u.cached_tokens, u.completion_tokens) == (42, 30, 2)
    assert u.prompt_ms == 50.0


def test_factory_gives_continuation_to_the_embedded_model_only() -> None:
    srv = EmbeddedServer()
    srv._base_url = "http://127.0.0.1:9"  # never contacted
    embedded = make_model({"provider": "embedded"}, embedded=srv)
    remote = make_model({"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
                         "llama_cpp": True})
    assert getattr(embedded, "supports_continuation", False) is True
    assert getattr(remote, "supports_continuation", False) is False


# ------------------------------------------------------------------ configuration


@pytest.mark.parametrize("flag", [True, False])
def test_yield_first_audio_reaches_the_tts_output(tmp_path: Path, flag: bool) -> None:
    team = speaker_team(tmp_path, {"yield_first_audio": flag, "first_clause_chars": 12,
                                   "first_piece_max_chars": 28},
                        "continuation: true\nsteps: [Hi.]\n")
    from terrarium.config import load_team

    opts = RuntimeOptions(runs_dir=tmp_path / "runs", audio="none",
                          synthesizer=CallableSynthesizer(
                              lambda t: AudioClip(pcm=b"", sample_rate=RATE), RATE))

    async def go() -> tuple[bool, bool, tuple[int | None, int | None]]:
        async with TeamRuntime(load_team(team), opts) as rt:
            (tts,) = rt.tts
            model = rt._creatures["speaker"].controller.model  # type: ignore[attr-defined]
            seg = tts._segmenter_config  # the first-piece rules reach the segmenter too
            return (tts.yield_first_audio, bool(model.supports_continuation),
                    (seg.first_clause_chars, seg.first_piece_max_chars))

    assert anyio.run(go) == (flag, True, (12, 28))
