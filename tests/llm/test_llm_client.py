"""OpenAIClient against a fake OpenAI-compatible server on a real 127.0.0.1 socket."""

from __future__ import annotations

import json
import socket
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from anyio.abc import SocketStream

from terrarium.errors import ModelError
from terrarium.llm.completion import complete
from terrarium.llm.openai_client import OpenAIClient
from tests.openai_fakes import (
    FakeOpenAI,
    Reply,
    SleepLog,
    error_reply,
    ok_stream,
    request,
    sse,
    text_chunk,
)

pytestmark = pytest.mark.anyio

SECRET = "sk-test-0123456789-very-secret"


def client(srv: FakeOpenAI, sleeper: SleepLog | None = None, **kw: Any) -> OpenAIClient:
    kw.setdefault("read_timeout", 5.0)
    kw.setdefault("connect_timeout", 2.0)
    return OpenAIClient(base_url=srv.base_url, model="m", sleep=sleeper or SleepLog(), **kw)


async def test_streams_text_in_order_and_records_usage() -> None:
    usage = {
        "prompt_tokens": 40,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 32},
    }
    timings = {"cache_n": 32, "prompt_n": 8, "prompt_ms": 12.5, "predicted_ms": 30.0}
    async with FakeOpenAI([ok_stream("Hel", "lo", " there", usage=usage, timings=timings)]) as s:
        c = client(s)
        deltas = [d async for d in c.stream(request())]
    assert [d.text for d in deltas if d.text] == ["Hel", "lo", " there"]
    assert deltas[-1].finish_reason == "stop"
    u = c.last_usage
    assert u is not None
    assert (u.prompt_tokens, u.completion_tokens, u.cached_tokens) == (40, 3, 32)
    assert (u.prompt_n, u.prompt_ms, u.predicted_ms) == (8, 12.5, 30.0)
    assert u.ttft_ms is not None and u.ttft_ms >= 0
    assert u.attempts == 1
    assert s.seen[0].path == "/v1/chat/completions"
    body = s.seen[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert "id_slot" not in body and "grammar" not in body


async def test_cached_tokens_from_llama_timings_when_no_details() -> None:
    timings = {"cache_n": 100, "prompt_n": 5, "prompt_ms": 3.0, "predicted_ms": 9.0}
    async with FakeOpenAI([ok_stream("x", timings=timings)]) as s:
        c = client(s)
        await complete(c, request())
    assert c.last_usage is not None
    assert c.last_usage.cached_tokens == 100
    assert c.last_usage.prompt_tokens == 105


async def test_llama_cpp_extras_go_into_body() -> None:
    async with FakeOpenAI([ok_stream("yes")]) as s:
        c = client(s, llama_cpp=True, id_slot=3)
        out = await complete(c, request(grammar='root ::= "yes"', stop=["\n"], seed=7))
    assert out.text == "yes"
    body = s.seen[0].body
    assert body["id_slot"] == 3 and body["cache_prompt"] is True
    assert body["grammar"] == 'root ::= "yes"'
    assert body["stop"] == ["\n"] and body["seed"] == 7
    assert body["temperature"] == 0.2 and body["max_tokens"] == 256


async def test_native_tool_call_fragments_are_joined() -> None:
    frag1 = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_time", "arguments": '{"tz":'},
                        }
                    ]
                },
            }
        ]
    }
    frag2 = {
        "choices": [
            {
                "index": 0,
                "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ' "UTC"}'}}]},
                "finish_reason": "tool_calls",
            }
        ]
    }
    reply = Reply(
        headers={"content-type": "text/event-stream"},
        chunks=[sse(frag1), sse(frag2), b"data: [DONE]\n\n"],
    )
    async with FakeOpenAI([reply]) as s:
        out = await complete(client(s), request(tools=[{"type": "function"}]))
    assert out.finish_reason == "tool_calls"
    assert len(out.tool_calls) == 1
    call = out.tool_calls[0]
    assert call.id == "call_1" and call.function.name == "get_time"
    assert json.loads(call.function.arguments) == {"tz": "UTC"}


async def test_retries_429_and_503_honouring_retry_after() -> None:
    replies = [
        error_reply(429, "slow down", "2"),
        error_reply(503, "busy", "0.5"),
        ok_stream("done"),
    ]
    sleeper = SleepLog()
    async with FakeOpenAI(replies) as s:
        c = client(s, sleeper, max_retries=3)
        out = await complete(c, request())
    assert out.text == "done"
    assert sleeper.waits == [2.0, 0.5]
    assert c.last_usage is not None and c.last_usage.attempts == 3
    assert len(s.seen) == 3


async def test_backoff_without_retry_after_grows_and_has_jitter() -> None:
    replies = [
        error_reply(500, "oops"),
        error_reply(502, "oops"),
        error_reply(408, "slow"),
        ok_stream("ok"),
    ]
    sleeper = SleepLog()
    async with FakeOpenAI(replies) as s:
        c = client(s, sleeper, max_retries=5, backoff_base=1.0, backoff_cap=100.0)
        assert (await complete(c, request())).text == "ok"
    assert len(sleeper.waits) == 3
    for i, w in enumerate(sleeper.waits):
        assert 0.5 * 2**i <= w <= 2**i


async def test_gives_up_after_max_retries() -> None:
    sleeper = SleepLog()
    async with FakeOpenAI([error_reply(503, "down")] * 10) as s:
        c = client(s, sleeper, max_retries=2, backoff_base=0.01)
        with pytest.raises(ModelError) as info:
            await complete(c, request())
    assert len(s.seen) == 3
    assert len(sleeper.waits) == 2
    assert "after 3 attempts" in str(info.value) and "503" in str(info.value)
    assert "down" in str(info.value)


async def test_gives_up_when_wait_would_exceed_time_budget() -> None:
    sleeper = SleepLog()
    async with FakeOpenAI([error_reply(429, "later", "120")] * 3) as s:
        c = client(s, sleeper, max_retries=5, max_retry_time=30.0)
        with pytest.raises(ModelError) as info:
            await complete(c, request())
    assert len(s.seen) == 1 and sleeper.waits == []
    assert "retry time budget" in str(info.value)


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_no_retry_on_other_4xx(status: int) -> None:
    sleeper = SleepLog()
    async with FakeOpenAI([error_reply(status, "bad field 'foo'"), ok_stream("x")]) as s:
        c = client(s, sleeper)
        with pytest.raises(ModelError) as info:
            await complete(c, request())
    assert len(s.seen) == 1 and sleeper.waits == []
    assert f"HTTP {status}" in str(info.value) and "bad field 'foo'" in str(info.value)


async def test_connection_refused_is_retried_then_reported() -> None:
    # a bound socket that never listens refuses connections, and nobody else can take
    # its port meanwhile (a closed server's port could be reused by a parallel process)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        sleeper = SleepLog()
        c = OpenAIClient(base_url=f"http://127.0.0.1:{port}/v1", sleep=sleeper, max_retries=2)
        with pytest.raises(ModelError) as info:
            await complete(c, request())
    assert len(sleeper.waits) == 2
    assert "could not connect" in str(info.value)


async def test_truncated_stream_is_an_error() -> None:
    reply = Reply(
        headers={"content-type": "text/event-stream"}, chunks=[sse(text_chunk("partial "))]
    )
    sleeper = SleepLog()
    async with FakeOpenAI([reply, ok_stream("never")]) as s:
        c = client(s, sleeper)
        got: list[str] = []
        with pytest.raises(ModelError) as info:
            async for d in c.stream(request()):
                got.append(d.text)
    assert got == ["partial "]
    assert "truncated" in str(info.value)
    assert len(s.seen) == 1 and sleeper.waits == []  # no retry once bytes were consumed


async def test_chunked_stream_cut_mid_chunk_is_an_error() -> None:
    body = sse(text_chunk("abc"))
    chunk = f"{len(body):x}\r\n".encode() + body + b"\r\n" + b'40\r\ndata: {"cho'
    reply = Reply(
        headers={"content-type": "text/event-stream", "transfer-encoding": "chunked"},
        chunks=[chunk],
    )
    async with FakeOpenAI([reply]) as s:
        with pytest.raises(ModelError) as info:
            await complete(client(s), request())
    assert "cut off" in str(info.value) or "truncated" in str(info.value)


async def test_malformed_json_is_an_error() -> None:
    reply = Reply(
        headers={"content-type": "text/event-stream"},
        chunks=[sse(text_chunk("a")), b"data: {not json\n\n", b"data: [DONE]\n\n"],
    )
    async with FakeOpenAI([reply]) as s:
        with pytest.raises(ModelError) as info:
            await complete(client(s), request())
    assert "malformed JSON" in str(info.value)


async def test_error_event_in_stream_is_an_error() -> None:
    reply = Reply(
        headers={"content-type": "text/event-stream"},
        chunks=[sse({"error": {"message": "context overflow"}})],
    )
    async with FakeOpenAI([reply]) as s:
        with pytest.raises(ModelError, match="context overflow"):
            await complete(client(s), request())


async def test_slow_first_byte_hits_read_timeout() -> None:
    slow = ok_stream("late")
    slow.delay_before = 30.0
    async with FakeOpenAI([slow]) as s:
        c = client(s, read_timeout=0.2)
        with pytest.raises(ModelError) as info:
            await complete(c, request())
    assert "read timeout" in str(info.value)


async def test_silence_mid_stream_hits_read_timeout() -> None:
    reply = ok_stream("a")
    reply.chunks = reply.chunks[:1]  # then the server holds the connection open, silent
    async with FakeOpenAI([reply]) as s:
        orig = s._serve_one

        async def stall(conn: SocketStream) -> None:
            await orig(conn)
            await anyio.sleep(30)

        s._serve_one = stall  # type: ignore[method-assign]
        c = client(s, read_timeout=0.2)
        with pytest.raises(ModelError) as info:
            await complete(c, request())
    assert "read timeout" in str(info.value)


async def test_api_key_sent_but_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERRARIUM_TEST_KEY", SECRET)
    replies = [
        error_reply(401, f"Incorrect API key provided: {SECRET}"),
        error_reply(503, f"bad {SECRET}"),
    ] + [error_reply(503, f"k={SECRET}")] * 3
    async with FakeOpenAI(replies) as s:
        c = client(s, api_key_env="TERRARIUM_TEST_KEY")
        with pytest.raises(ModelError) as e401:
            await complete(c, request())
        with pytest.raises(ModelError) as e503:
            await complete(c, request())
        usage = c.last_usage
    assert s.seen[0].headers["authorization"] == f"Bearer {SECRET}"
    for text in (
        str(e401.value),
        str(e503.value),
        repr(c),
        c.describe(),
        repr(usage),
        repr(e401.value.__dict__),
        repr(e503.value.__dict__),
    ):
        assert SECRET not in text
    assert "***" in str(e401.value)
    assert "TERRARIUM_TEST_KEY" in c.describe()


async def test_missing_key_variable_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERRARIUM_NO_SUCH_KEY", raising=False)
    c = OpenAIClient(base_url="http://127.0.0.1:9/v1", api_key_env="TERRARIUM_NO_SUCH_KEY")
    with pytest.raises(ModelError, match="TERRARIUM_NO_SUCH_KEY"):
        await complete(c, request())


async def test_plain_json_response_is_accepted() -> None:
    body = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "whole"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 4, "completion_tokens": 1},
    }
    reply = Reply(headers={"content-type": "application/json"}, chunks=[json.dumps(body).encode()])
    async with FakeOpenAI([reply]) as s:
        c = client(s)
        out = await complete(c, request())
    assert out.text == "whole" and out.finish_reason == "stop"
    assert c.last_usage is not None and c.last_usage.prompt_tokens == 4


def test_grammar_and_schema_are_exclusive() -> None:
    with pytest.raises(ValueError):
        request(grammar='root ::= "a"', json_schema={"type": "string"})
