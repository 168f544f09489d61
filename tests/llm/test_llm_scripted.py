"""ScriptedModel: ordering, matching, chunking, faults, recording, script files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from terrarium.errors import ConfigError, ModelError
from terrarium.llm import ChatModel, ScriptedModel, complete
from terrarium.llm.types import ChatMessage, ChatRequest

pytestmark = pytest.mark.anyio


def req(*texts: str, role: str = "user", system: str = "sys") -> ChatRequest:
    msgs = [ChatMessage(role="system", content=system)]
    msgs += [ChatMessage(role=role, content=t) for t in texts]  # type: ignore[arg-type]
    return ChatRequest(messages=msgs)


async def test_replies_in_order_then_clear_error() -> None:
    m = ScriptedModel(["reply 1", "reply 2"])
    assert isinstance(m, ChatModel)
    assert (await complete(m, req("a"))).text == "reply 1"
    assert (await complete(m, req("b"))).text == "reply 2"
    with pytest.raises(ModelError, match="ran out of steps at call 3"):
        await complete(m, req("c"))


async def test_default_reply_when_exhausted() -> None:
    m = ScriptedModel(["only"], default_reply="fallback")
    assert (await complete(m, req("a"))).text == "only"
    assert (await complete(m, req("b"))).text == "fallback"
    assert (await complete(m, req("c"))).text == "fallback"


async def test_matching_by_substring_and_regex_on_latest_user_or_tool_message() -> None:
    m = ScriptedModel(
        [
            {"match": "weather", "reply": "sunny"},
            {"match": {"regex": r"^\d+$"}, "reply": "a number", "repeat": True},
            {"reply": "anything else"},
        ]
    )
    assert (await complete(m, req("42"))).text == "a number"
    assert (await complete(m, req("tell me the weather"))).text == "sunny"
    assert (await complete(m, req("7"))).text == "a number"  # repeat keeps the step
    # a tool result is an input too; older user messages are not looked at
    r = ChatRequest(
        messages=[
            ChatMessage(role="user", content="weather"),
            ChatMessage(role="tool", content="123", tool_call_id="c1"),
        ]
    )
    assert (await complete(m, r)).text == "a number"
    assert (await complete(m, req("hello"))).text == "anything else"


async def test_unmatched_input_names_the_message() -> None:
    m = ScriptedModel([{"match": "weather", "reply": "sunny"}])
    with pytest.raises(ModelError, match="no scripted step matches call 1"):
        await complete(m, req("what time is it"))


async def test_streams_in_chunks_of_configured_size() -> None:
    m = ScriptedModel(["abcdefghij", {"reply": "abcdefghij", "chunk": 4}], chunk_size=3)
    first = [d.text async for d in m.stream(req("x")) if d.text]
    second = [d.text async for d in m.stream(req("y")) if d.text]
    assert first == ["abc", "def", "ghi", "j"]
    assert second == ["abcd", "efgh", "ij"]


async def test_fault_on_call_n_and_step_faults() -> None:
    m = ScriptedModel(["one", "two", {"fault": "error"}, "four"], fail_on=[2])
    assert (await complete(m, req("a"))).text == "one"
    with pytest.raises(ModelError, match="call 2"):
        await complete(m, req("b"))
    assert (await complete(m, req("c"))).text == "two"  # fail_on does not use up a step
    with pytest.raises(ModelError, match="call 4"):
        await complete(m, req("d"))
    assert (await complete(m, req("e"))).text == "four"


async def test_truncate_fault_streams_part_then_raises() -> None:
    m = ScriptedModel([{"reply": "0123456789", "fault": "truncate"}], chunk_size=2)
    got: list[str] = []
    with pytest.raises(ModelError, match="cut off"):
        async for d in m.stream(req("x")):
            got.append(d.text)
    assert "".join(got) == "01234"
    assert m.last_usage is None


async def test_delay_does_not_change_output() -> None:
    m = ScriptedModel([{"reply": "slow", "delay": 0.01, "chunk_delay": 0.001, "chunk": 1}])
    assert (await complete(m, req("x"))).text == "slow"


async def test_records_exact_requests_as_copies() -> None:
    m = ScriptedModel(["a", "b"])
    r = req("first question", system="You are X.")
    await complete(m, r)
    r.messages.append(ChatMessage(role="user", content="mutated later"))
    await complete(m, req("second"))
    assert len(m.requests) == 2
    assert [msg.content for msg in m.requests[0].messages] == ["You are X.", "first question"]
    assert m.requests[1].messages[-1].content == "second"


async def test_scripted_native_tool_calls() -> None:
    m = ScriptedModel(
        [{"reply": "", "tool_calls": [{"name": "get_time", "arguments": {"tz": "UTC"}}]}],
        chunk_size=4,
    )
    deltas = [d async for d in m.stream(req("time?"))]
    assert any(len(d.tool_calls) for d in deltas)
    assert deltas[-1].finish_reason == "tool_calls"
    m2 = ScriptedModel([{"tool_calls": [{"name": "get_time", "arguments": {"tz": "UTC"}}]}])
    out = await complete(m2, req("time?"))
    assert out.finish_reason == "tool_calls"
    assert out.tool_calls[0].function.name == "get_time"
    assert json.loads(out.tool_calls[0].function.arguments) == {"tz": "UTC"}


async def test_usage_reports_prefix_reuse_like_a_cache() -> None:
    m = ScriptedModel(["a", "b"])
    await complete(m, req("hello there", system="a long fixed system prompt"))
    first = m.last_usage
    await complete(m, req("hello there", "and more", system="a long fixed system prompt"))
    second = m.last_usage
    assert first is not None and second is not None
    assert first.cached_tokens == 0
    assert second.cached_tokens == first.prompt_tokens
    assert second.prompt_tokens > first.prompt_tokens


async def test_from_yaml_file(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(
        "chunk: 2\n"
        "default_reply: done\n"
        "steps:\n"
        "  - Hello!\n"
        "  - match: weather\n"
        "    reply: sunny\n"
        "  - match: {regex: 'time'}\n"
        "    tool_calls: [{name: get_time, arguments: {tz: UTC}}]\n",
        encoding="utf-8",
    )
    m = ScriptedModel.from_file(script)
    pieces = [d.text async for d in m.stream(req("hi")) if d.text]
    assert pieces == ["He", "ll", "o!"]
    assert (await complete(m, req("what time"))).tool_calls[0].function.name == "get_time"
    assert (await complete(m, req("weather?"))).text == "sunny"
    assert (await complete(m, req("bye"))).text == "done"
    assert "script.yaml" in m.describe()


async def test_from_yaml_list_form(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("- one\n- reply: two\n", encoding="utf-8")
    m = ScriptedModel.from_file(script)
    assert (await complete(m, req("a"))).text == "one"
    assert (await complete(m, req("a"))).text == "two"


def test_bad_script_files_are_config_errors(tmp_path: Path) -> None:
    bad_key = tmp_path / "bad.yaml"
    bad_key.write_text("steps:\n  - reply: x\n    replyy: y\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        ScriptedModel.from_file(bad_key)
    assert info.value.file == bad_key and "replyy" in info.value.key
    bad_yaml = tmp_path / "broken.yaml"
    bad_yaml.write_text("steps: [\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info2:
        ScriptedModel.from_file(bad_yaml)
    assert info2.value.line > 0
    bad_regex = tmp_path / "re.yaml"
    bad_regex.write_text("- match: {regex: '('}\n  reply: x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="does not compile"):
        ScriptedModel.from_file(bad_regex)
    with pytest.raises(ConfigError, match="cannot be read"):
        ScriptedModel.from_file(tmp_path / "missing.yaml")


def test_the_requests_kept_are_bounded_and_calls_count_them_all() -> None:
    import anyio

    from terrarium.llm.scripted import KEEP_REQUESTS, ScriptedModel
    from terrarium.llm.types import ChatMessage, ChatRequest

    model = ScriptedModel(default_reply="again")

    async def go() -> None:
        for n in range(KEEP_REQUESTS + 50):
            req = ChatRequest(messages=[ChatMessage(role="user", content=f"call {n}")])
            async for _ in model.stream(req):
                pass

    anyio.run(go)
    assert model.calls == KEEP_REQUESTS + 50
    assert len(model.requests) == KEEP_REQUESTS  # the newest ones
    assert model.requests[-1].messages[-1].content == f"call {KEEP_REQUESTS + 49}"
    assert model.requests[0].messages[-1].content == "call 50"
