"""Tool registry, resolve_tool, info, the memory tools and run_tool's never-raise promise."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from pydantic import BaseModel, ConfigDict

from terrarium.errors import RegistryError, TerrariumError, ToolError
from terrarium.formats.base import CallSpec
from terrarium.store import MemoryStore
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.files import ReadFileTool
from terrarium.tools.info import InfoTool
from terrarium.tools.memory import MemorySearchTool, MemoryWriteTool
from terrarium.tools.registry import (
    BUILTIN_TOOLS,
    ToolRegistry,
    known_tool_names,
    resolve_tool,
)
from terrarium.tools.runner import ToolResult, run_tool
from terrarium.tools.state import STATE_MEMORY, STATE_MEMORY_SHARED, STATE_TOOLS


def call(tool: type[Tool] | Tool, args: Any, ctx: ToolContext) -> ToolResult:
    return anyio.run(run_tool, tool, args, ctx)


def builtin_registry() -> ToolRegistry:
    return ToolRegistry.from_refs(known_tool_names(), owner="builtin")


# -- registry ---------------------------------------------------------------------------------


def test_builtins_and_names_sorted() -> None:
    assert known_tool_names() == [
        "ask_user",
        "edit",
        "glob",
        "grep",
        "info",
        "memory_search",
        "memory_write",
        "multi_edit",
        "read_file",
        "shell",
        "think",
        "tree",
        "web_fetch",
        "write_file",
    ]
    for name, cls in BUILTIN_TOOLS.items():
        assert cls.name == name and cls.summary
        assert cls.args_model.model_config.get("extra") == "forbid"


def test_register_duplicate_names_both_owners() -> None:
    reg = ToolRegistry()
    reg.register(ReadFileTool, "builtin")

    class Shadow(ReadFileTool):
        pass

    with pytest.raises(RegistryError) as info:
        reg.register(Shadow, "creatures/reader/config.yaml")
    msg = str(info.value)
    assert "'read_file'" in msg and "builtin" in msg and "creatures/reader/config.yaml" in msg
    assert reg.owner("read_file") == "builtin"


def test_get_unknown_suggests() -> None:
    reg = builtin_registry()
    with pytest.raises(RegistryError) as info:
        reg.get("read_fil")
    assert info.value.suggestion == "did you mean 'read_file'?"
    assert reg.get("info") is InfoTool
    assert "info" in reg and "nope" not in reg and len(reg) == len(known_tool_names())


def test_specs_follow_names() -> None:
    specs = builtin_registry().specs()
    assert [s.name for s in specs] == known_tool_names()
    assert all(isinstance(s, CallSpec) for s in specs)
    assert specs[known_tool_names().index("info")] == CallSpec(
        name="info", description=InfoTool.summary, args_model=InfoTool.args_model
    )


# -- resolve_tool -----------------------------------------------------------------------------


@pytest.fixture
def plugin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = "tt_plugin_tools"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            """
            from typing import ClassVar
            from terrarium.tools.base import Tool

            class EchoTool(Tool):
                name: ClassVar[str] = "echo"
                summary: ClassVar[str] = "say it back"

                async def run(self, args, ctx):
                    return "echo"

            class NotATool:
                pass
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_resolve_builtin_and_dotted() -> None:
    assert resolve_tool("read_file") is ReadFileTool
    assert resolve_tool("terrarium.tools.files:ReadFileTool") is ReadFileTool


def test_resolve_plugin_dotted(plugin_module: str) -> None:
    cls = resolve_tool(f"{plugin_module}:EchoTool")
    assert cls.name == "echo"
    assert call(cls, {}, ToolContext(creature="c", cwd=Path("."))).text == "echo"


def test_resolve_did_you_mean(plugin_module: str) -> None:
    with pytest.raises(TerrariumError) as info:
        resolve_tool("memory_serch")
    assert info.value.suggestion == "did you mean 'memory_search'?"
    assert "memory_serch" in str(info.value)
    with pytest.raises(TerrariumError) as info:
        resolve_tool(f"{plugin_module}:EchoTol")
    assert info.value.suggestion == "did you mean 'EchoTool'?"


@pytest.mark.parametrize(
    ("ref", "fragment"),
    [
        ("no_such_module_xyz:Thing", "could not be imported"),
        ("terrarium.tools.files:", "malformed"),
        (":ReadFileTool", "malformed"),
        ("terrarium.tools.files:Path", "not a Tool subclass"),
        ("terrarium.tools.base:Tool", "not a Tool subclass"),
    ],
)
def test_resolve_bad_refs(ref: str, fragment: str) -> None:
    with pytest.raises(TerrariumError, match=fragment):
        resolve_tool(ref)


# -- info -------------------------------------------------------------------------------------


def test_info_known_returns_full_doc(tmp_path: Path) -> None:
    ctx = ToolContext(creature="c", cwd=tmp_path, state={STATE_TOOLS: builtin_registry()})
    res = call(InfoTool, {"name": "read_file"}, ctx)
    assert res == ToolResult(ok=True, text=ReadFileTool.full_doc())
    assert "max_bytes (int, optional, default 20000)" in res.text


def test_info_unknown_lists_known(tmp_path: Path) -> None:
    reg = ToolRegistry()
    reg.register(InfoTool, "builtin")
    reg.register(ReadFileTool, "builtin")
    ctx = ToolContext(creature="c", cwd=tmp_path, state={STATE_TOOLS: reg})
    res = call(InfoTool, {"name": "write_file"}, ctx)  # a built-in this creature lacks
    assert not res.ok
    assert "no tool named 'write_file'" in res.text
    assert "Known tools: info, read_file." in res.text
    res = call(InfoTool, {"name": "read_fle"}, ctx)
    assert "Did you mean 'read_file'?" in res.text


def test_info_without_registry(tmp_path: Path) -> None:
    res = call(InfoTool, {"name": "x"}, ToolContext(creature="c", cwd=tmp_path))
    assert not res.ok and "No tool registry" in res.text


# -- memory tools -----------------------------------------------------------------------------


def test_memory_write_then_search(tmp_path: Path) -> None:
    store = MemoryStore()
    ctx = ToolContext(creature="router", cwd=tmp_path, state={STATE_MEMORY: store})
    res = call(MemoryWriteTool, {"text": "User's dog is named Rex", "tags": ["pets"]}, ctx)
    assert res == ToolResult(ok=True, text="Remembered as #1.")
    res = call(MemoryWriteTool, {"text": "user's dog is named rex"}, ctx)
    assert res == ToolResult(ok=True, text="Already remembered as #1.")
    call(MemoryWriteTool, {"text": "User prefers tea"}, ctx)
    res = call(MemorySearchTool, {"query": "what is the dog's name?"}, ctx)
    assert res.ok and res.text.splitlines()[0] == "#1 User's dog is named Rex [pets]"
    res = call(MemorySearchTool, {"query": "zebra"}, ctx)
    assert res == ToolResult(ok=True, text="No memories match 'zebra'.")


def test_memory_search_scope(tmp_path: Path) -> None:
    store = MemoryStore()
    store.write("speaker knows jokes", creature="speaker")
    ctx = ToolContext(creature="router", cwd=tmp_path, state={STATE_MEMORY: store})
    assert call(MemorySearchTool, {"query": "jokes"}, ctx).text.startswith("No memories")
    ctx.state[STATE_MEMORY_SHARED] = True
    assert (
        call(MemorySearchTool, {"query": "jokes"}, ctx).text == "#1 speaker knows jokes (speaker)"
    )


def test_memory_without_store_and_bad_args(tmp_path: Path) -> None:
    ctx = ToolContext(creature="c", cwd=tmp_path)
    res = call(MemoryWriteTool, {"text": "x"}, ctx)
    assert not res.ok and "Memory is not enabled" in res.text
    ctx.state[STATE_MEMORY] = MemoryStore()
    res = call(MemorySearchTool, {"query": "x", "limit": 0}, ctx)
    assert not res.ok and "limit" in res.text
    res = call(MemoryWriteTool, {"text": ""}, ctx)
    assert not res.ok and "text" in res.text


def test_memory_hostile_query_through_tool(tmp_path: Path) -> None:
    store = MemoryStore()
    store.write("apple pie", creature="c")
    ctx = ToolContext(creature="c", cwd=tmp_path, state={STATE_MEMORY: store})
    res = call(MemorySearchTool, {"query": '"apple" AND (NEAR* OR'}, ctx)
    assert res == ToolResult(ok=True, text="#1 apple pie")


# -- run_tool ---------------------------------------------------------------------------------


class BoomArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    how: str = "tool"


class BoomTool(Tool):
    name: ClassVar[str] = "boom"
    summary: ClassVar[str] = "fails on purpose"
    args_model: ClassVar[type[BaseModel]] = BoomArgs

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, BoomArgs)
        if args.how == "tool":
            raise ToolError("The boom tool refused.", suggestion="try again later")
        if args.how == "value":
            raise ValueError("bad value")
        if args.how == "keyerror":
            return {}["x"]  # type: ignore[no-any-return]
        if args.how == "notstr":
            return 42  # type: ignore[return-value]
        return "fine"


class Unimplemented(Tool):
    name: ClassVar[str] = "todo"
    summary: ClassVar[str] = "not written"


@pytest.mark.parametrize(
    ("args", "ok", "fragment"),
    [
        ({"how": "tool"}, False, "The boom tool refused. Hint: try again later"),
        ({"how": "value"}, False, "failed unexpectedly: ValueError: bad value"),
        ({"how": "keyerror"}, False, "failed unexpectedly: KeyError"),
        ({"how": "notstr"}, False, "returned int instead of text"),
        ({"how": 5}, False, "arguments for boom are invalid: how"),
        ({"extra": 1}, False, "extra"),
        (BoomArgs(how="fine"), True, "fine"),
        (ReadFileTool.args_model(path="x"), False, "invalid"),
        ({}, False, "The boom tool refused."),
    ],
)
def test_run_tool_never_raises(args: Any, ok: bool, fragment: str, tmp_path: Path) -> None:
    res = call(BoomTool, args, ToolContext(creature="c", cwd=tmp_path))
    assert res.ok is ok
    assert fragment in res.text


def test_run_tool_unimplemented_and_instance(tmp_path: Path) -> None:
    ctx = ToolContext(creature="c", cwd=tmp_path)
    assert call(Unimplemented, {}, ctx) == ToolResult(
        ok=False, text="The tool todo has no implementation."
    )
    assert call(BoomTool(), {"how": "ok"}, ctx) == ToolResult(ok=True, text="fine")


def test_run_tool_lets_cancellation_through(tmp_path: Path) -> None:
    class Sleepy(Tool):
        name: ClassVar[str] = "sleepy"
        summary: ClassVar[str] = "never returns"

        async def run(self, args: BaseModel, ctx: ToolContext) -> str:
            await anyio.sleep_forever()
            return "unreachable"

    results: list[ToolResult] = []

    async def main() -> None:
        with anyio.move_on_after(0.01) as scope:
            results.append(await run_tool(Sleepy, {}, ToolContext(creature="c", cwd=tmp_path)))
        assert scope.cancelled_caught

    anyio.run(main)
    assert results == []


def test_run_tool_constructor_failure(tmp_path: Path) -> None:
    class Broken(Tool):
        name: ClassVar[str] = "broken"
        summary: ClassVar[str] = "cannot be built"

        def __init__(self) -> None:
            raise RuntimeError("no config")

    res = call(Broken, {}, ToolContext(creature="c", cwd=tmp_path))
    assert res == ToolResult(
        ok=False, text="The tool broken could not be started: RuntimeError: no config"
    )
