"""An MCP tool's JSON schema as a pydantic args model, and its results as text (no server)."""

from __future__ import annotations

import typing
from types import SimpleNamespace
from typing import Any, Literal

import anyio
import pytest
from pydantic import ValidationError

from terrarium.formats import CallSpec, get_format
from terrarium.formats.native import openai_tools
from terrarium.tools.base import ToolContext
from terrarium.tools.mcp.adapter import mcp_tool_class, mcp_tool_name, render_result
from terrarium.tools.mcp.schema import args_model_from_schema
from terrarium.tools.runner import run_tool

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "description": "the  title\n"},
        "count": {"type": "integer", "minimum": 0, "maximum": 5, "default": 2},
        "ratio": {"type": "number"},
        "draft": {"type": "boolean"},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "kind": {"const": "issue"},
        "labels": {"type": "array", "items": {"type": "string"}},
        "scores": {"type": "object", "additionalProperties": {"type": "integer"}},
        "filter": {"type": "object", "properties": {"deep": {"type": "boolean"}},
                   "required": ["deep"]},
        "shape": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "from": {"type": "string"},
        "x-y": {"type": "string"},
        "model_config": {"type": "string"},
        "code": {"type": "string", "pattern": "(?<=a)b"},  # lookbehind: not for pydantic
    },
    "required": ["title", "x-y"],
}


def test_types_requiredness_and_constraints() -> None:
    a = args_model_from_schema("srv__make", SCHEMA)
    f = a.model.model_fields
    assert list(f)[:2] == ["title", "x_y"]  # required first
    assert f["title"].is_required() and f["title"].annotation is str
    assert f["title"].description == "the title"
    assert f["count"].annotation is int and f["count"].default == 2
    assert f["ratio"].annotation is float and f["draft"].annotation is bool
    assert f["state"].annotation == Literal["open", "closed"]
    assert f["kind"].annotation == Literal["issue"]
    assert f["labels"].annotation == list[str]
    assert f["scores"].annotation == dict[str, int]
    assert f["filter"].annotation == dict[str, Any]
    assert f["shape"].annotation is Any
    assert f["maybe"].annotation == typing.Optional[int]  # noqa: UP045
    assert {"arg_from", "arg_model_config", "x_y"} <= set(f)
    assert a.wire_names == {"arg_from": "from", "arg_model_config": "model_config", "x_y": "x-y"}
    ok = a.model.model_validate({"title": "t", "x_y": "z", "code": "anything"})
    assert a.to_wire(ok) == {"title": "t", "x-y": "z", "code": "anything"}  # no defaults sent
    for bad in ({"title": "", "x_y": "z"}, {"title": "t", "x_y": "z", "count": 9},
                {"title": "t", "x_y": "z", "state": "gone"}, {"title": "t"},
                {"title": "t", "x_y": "z", "nope": 1}):
        with pytest.raises(ValidationError):
            a.model.model_validate(bad)


def test_null_is_sent_only_where_the_schema_allows_it() -> None:
    a = args_model_from_schema("t", SCHEMA)
    m = a.model.model_validate({"title": "t", "x_y": "z", "maybe": None, "ratio": None})
    assert a.to_wire(m) == {"title": "t", "x-y": "z", "maybe": None}


def test_native_schema_keeps_what_the_model_approximates() -> None:
    cls = mcp_tool_class("srv", "make", "Make a thing.", SCHEMA)
    [tool] = openai_tools([CallSpec(cls.name, cls.summary, cls.args_model)])
    props = tool["function"]["parameters"]["properties"]
    assert props["filter"]["properties"] == {"deep": {"type": "boolean"}}
    assert props["filter"]["required"] == ["deep"]
    assert props["shape"]["oneOf"] == [{"type": "string"}, {"type": "integer"}]
    assert "default" not in props["ratio"]  # leaving it out means "not given"
    assert props["count"]["default"] == 2 and props["count"]["maximum"] == 5


def test_text_formats_convert_mcp_arguments() -> None:
    cls = mcp_tool_class("srv", "make", "Make a thing.", SCHEMA)
    fmt = get_format("bracket", [CallSpec(cls.name, cls.summary, cls.args_model)])
    text = fmt.render_call(cls.name, {"title": "T", "x_y": "z", "count": 3, "draft": True,
                                      "labels": ["a", "b"], "filter": {"deep": True}})
    [event] = fmt.parse(text)
    assert event.error is None, event.error
    assert event.args.model_dump(exclude_unset=True) == {  # type: ignore[union-attr]
        "title": "T", "x_y": "z", "count": 3, "draft": True, "labels": ["a", "b"],
        "filter": {"deep": True}}


def test_names_and_docs() -> None:
    assert mcp_tool_name("git hub", "list.issues") == "git_hub__list_issues"
    assert mcp_tool_name("9s", "x") == "_9s__x"
    assert len(mcp_tool_name("s", "x" * 100)) == 64
    long = "Search things. " * 20
    cls = mcp_tool_class("srv", "find", f"{long}\nMore detail.", {"type": "object"})
    assert cls.summary.endswith("…") and len(cls.summary) <= 161
    cls = mcp_tool_class("srv", "find", "Find it.\nMore detail here.", {"type": "object"})
    assert cls.full_doc() == ("srv__find: Find it.\nMore detail here.\n"
                              "(Tool 'find' of the MCP server 'srv'.)")
    assert mcp_tool_class("srv", "q", None, None).summary == "a tool of the MCP server srv"


def block(**kw: Any) -> SimpleNamespace:
    return SimpleNamespace(**kw)


def test_results_become_text() -> None:
    res = SimpleNamespace(is_error=False, structured_content=None, content=[
        block(type="text", text="hello"),
        block(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
        block(type="audio", data="AAAA", mime_type="audio/wav"),
        block(type="resource_link", uri="file:///a.txt", name="a.txt", title=None,
              mime_type="text/plain", description="the a file"),
        block(type="resource", resource=block(uri="mem://b", mime_type=None, blob="AAAA")),
    ])
    assert render_result(res).splitlines() == [
        "hello",
        "[image image/png, 8 bytes: not shown to you]",
        "[audio audio/wav, 3 bytes: not shown to you]",
        "[resource link a.txt <file:///a.txt>, text/plain: the a file]",
        "[resource mem://b, 3 bytes of binary data: not shown to you]",
    ]
    only = SimpleNamespace(content=[], structured_content={"n": 1})
    assert render_result(only) == '{"n": 1}'
    huge = SimpleNamespace(content=[block(type="text", text="x" * 50_000)])
    assert "characters left out" in render_result(huge) and len(render_result(huge)) < 21_000


class FakeConnection:
    server = "srv"

    def __init__(self, result: Any) -> None:
        self.result = result
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        self.calls.append((name, arguments))
        return self.result


def test_tool_runs_through_its_connection_and_server_errors_are_tool_errors(
        tmp_path: Any) -> None:
    ctx = ToolContext("c", tmp_path)
    good = FakeConnection(SimpleNamespace(is_error=False, content=[block(type="text",
                                                                         text="made")]))
    cls = mcp_tool_class("srv", "make", "Make.", SCHEMA, connection=good)
    res = anyio.run(run_tool, cls, {"title": "t", "x_y": "z"}, ctx)
    assert (res.ok, res.text) == (True, "made")
    assert good.calls == [("make", {"title": "t", "x-y": "z"})]
    bad = FakeConnection(SimpleNamespace(is_error=True, content=[block(type="text",
                                                                       text="no such repo")]))
    cls = mcp_tool_class("srv", "make", "Make.", SCHEMA, connection=bad)
    res = anyio.run(run_tool, cls, {"title": "t", "x_y": "z"}, ctx)
    assert (res.ok, res.text) == (False, "no such repo")
    res = anyio.run(run_tool, mcp_tool_class("srv", "make", "", SCHEMA),
                    {"title": "t", "x_y": "z"}, ctx)
    assert (res.ok, res.text) == (False, "The MCP server 'srv' is not connected.")
