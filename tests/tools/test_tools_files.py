"""read_file / write_file confinement: outside, '..', absolute, symlinks in and out."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.files import ReadFileTool, WriteFileTool
from terrarium.tools.runner import ToolResult, run_tool


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    work = tmp_path / "work"
    data = work / "data"
    out = work / "out"
    secret = tmp_path / "secret"
    for d in (data, out, secret):
        d.mkdir(parents=True)
    (data / "notes.txt").write_text("hello notes", encoding="utf-8")
    (secret / "key.txt").write_text("TOP SECRET", encoding="utf-8")
    return {"work": work, "data": data, "out": out, "secret": secret}


def ctx_for(layout: dict[str, Path]) -> ToolContext:
    return ToolContext(
        creature="tester",
        cwd=layout["work"],
        readable=(Path("data"),),  # relative roots resolve against cwd
        writable=(layout["out"],),
    )


def call(tool: type[Tool], args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return anyio.run(run_tool, tool, args, ctx)


def test_read_relative_inside(layout: dict[str, Path]) -> None:
    res = call(ReadFileTool, {"path": "data/notes.txt"}, ctx_for(layout))
    assert res == ToolResult(ok=True, text="hello notes")


def test_read_absolute_inside(layout: dict[str, Path]) -> None:
    res = call(ReadFileTool, {"path": str(layout["data"] / "notes.txt")}, ctx_for(layout))
    assert res.ok and res.text == "hello notes"


def test_read_absolute_outside_refused(layout: dict[str, Path]) -> None:
    res = call(ReadFileTool, {"path": str(layout["secret"] / "key.txt")}, ctx_for(layout))
    assert not res.ok
    assert "outside the readable paths" in res.text
    assert "TOP SECRET" not in res.text


def test_read_etc_passwd_refused(layout: dict[str, Path]) -> None:
    res = call(ReadFileTool, {"path": "/etc/passwd"}, ctx_for(layout))
    assert not res.ok and "outside" in res.text


@pytest.mark.parametrize(
    "path", ["../secret/key.txt", "data/../../secret/key.txt", "data/../data/notes.txt"]
)
def test_dotdot_refused(layout: dict[str, Path], path: str) -> None:
    res = call(ReadFileTool, {"path": path}, ctx_for(layout))
    assert not res.ok and "'..'" in res.text


def test_symlink_escape_refused(layout: dict[str, Path]) -> None:
    os.symlink(layout["secret"] / "key.txt", layout["data"] / "link.txt")
    os.symlink(layout["secret"], layout["data"] / "dirlink")
    ctx = ctx_for(layout)
    for p in ("data/link.txt", "data/dirlink/key.txt"):
        res = call(ReadFileTool, {"path": p}, ctx)
        assert not res.ok and "symlink" in res.text and "TOP SECRET" not in res.text


def test_symlink_inside_allowed(layout: dict[str, Path]) -> None:
    sub = layout["data"] / "sub"
    sub.mkdir()
    os.symlink(layout["data"] / "notes.txt", sub / "alias.txt")
    res = call(ReadFileTool, {"path": "data/sub/alias.txt"}, ctx_for(layout))
    assert res.ok and res.text == "hello notes"


def test_writable_roots_are_readable(layout: dict[str, Path]) -> None:
    (layout["out"] / "r.txt").write_text("mine", encoding="utf-8")
    res = call(ReadFileTool, {"path": "out/r.txt"}, ctx_for(layout))
    assert res.ok and res.text == "mine"


def test_read_truncates_and_says_so(layout: dict[str, Path]) -> None:
    (layout["data"] / "big.txt").write_text("x" * 100, encoding="utf-8")
    res = call(ReadFileTool, {"path": "data/big.txt", "max_bytes": 10}, ctx_for(layout))
    assert res.ok
    assert res.text.startswith("x" * 10 + "\n[truncated: showed 10 of 100 bytes]")


def test_read_missing_dir_binary(layout: dict[str, Path]) -> None:
    ctx = ctx_for(layout)
    (layout["data"] / "blob.bin").write_bytes(b"\x00\x01\x02")
    assert "no file" in call(ReadFileTool, {"path": "data/nope.txt"}, ctx).text
    assert "directory" in call(ReadFileTool, {"path": "data"}, ctx).text
    assert "binary" in call(ReadFileTool, {"path": "data/blob.bin"}, ctx).text


def test_no_roots_refuses(layout: dict[str, Path]) -> None:
    ctx = ToolContext(creature="x", cwd=layout["work"])
    res = call(ReadFileTool, {"path": "data/notes.txt"}, ctx)
    assert not res.ok and "no readable paths" in res.text


def test_write_creates_parents_inside(layout: dict[str, Path]) -> None:
    ctx = ctx_for(layout)
    res = call(WriteFileTool, {"path": "out/a/b/c.txt", "content": "one"}, ctx)
    assert res.ok and res.text == "Wrote 3 bytes to out/a/b/c.txt."
    res = call(WriteFileTool, {"path": "out/a/b/c.txt", "content": "+two", "append": True}, ctx)
    assert res.ok and res.text.startswith("Appended 4 bytes")
    assert (layout["out"] / "a/b/c.txt").read_text(encoding="utf-8") == "one+two"


def test_write_outside_refused_and_nothing_created(layout: dict[str, Path]) -> None:
    ctx = ctx_for(layout)
    res = call(WriteFileTool, {"path": "data/new.txt", "content": "x"}, ctx)
    assert not res.ok and "outside the writable paths" in res.text
    assert not (layout["data"] / "new.txt").exists()
    res = call(WriteFileTool, {"path": str(layout["secret"] / "n/x.txt"), "content": "x"}, ctx)
    assert not res.ok and not (layout["secret"] / "n").exists()
    res = call(WriteFileTool, {"path": "out/../../secret/x.txt", "content": "x"}, ctx)
    assert not res.ok and "'..'" in res.text


def test_write_through_symlinked_dir_escape_refused(layout: dict[str, Path]) -> None:
    os.symlink(layout["secret"], layout["out"] / "escape")
    res = call(WriteFileTool, {"path": "out/escape/deep/x.txt", "content": "x"}, ctx_for(layout))
    assert not res.ok and "symlink" in res.text
    assert not (layout["secret"] / "deep").exists()


def test_write_bool_argument_not_truthy_string(layout: dict[str, Path]) -> None:
    res = call(
        WriteFileTool, {"path": "out/f.txt", "content": "a", "append": "maybe"}, ctx_for(layout)
    )
    assert not res.ok and "append" in res.text


def test_extra_argument_refused(layout: dict[str, Path]) -> None:
    res = call(ReadFileTool, {"path": "data/notes.txt", "mode": "rb"}, ctx_for(layout))
    assert not res.ok and "mode" in res.text


def test_concurrency_flags() -> None:
    assert ReadFileTool.concurrency_safe is True
    assert WriteFileTool.concurrency_safe is False


def test_fifo_refused(layout: dict[str, Path]) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(layout["data"] / "pipe")
    res = call(ReadFileTool, {"path": "data/pipe"}, ctx_for(layout))
    assert not res.ok and "not a regular file" in res.text


def test_display_relative_when_cwd_is_a_symlink(layout: dict[str, Path], tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(layout["work"], alias)
    ctx = ToolContext(creature="t", cwd=alias, writable=(Path("out"),))
    res = call(WriteFileTool, {"path": "out/z.txt", "content": "z"}, ctx)
    assert res.ok and res.text == "Wrote 1 bytes to out/z.txt."


def test_a_symlink_refusal_does_not_show_where_the_link_points(tmp_path: Path) -> None:
    import anyio

    from terrarium.tools.base import ToolContext
    from terrarium.tools.files import ReadFileTool
    from terrarium.tools.runner import run_tool

    outside = tmp_path / "hidden-place" / "secret-name.txt"
    outside.parent.mkdir()
    outside.write_text("x")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link.txt").symlink_to(outside)
    ctx = ToolContext(creature="w", cwd=tmp_path, workspace=ws)
    res = anyio.run(run_tool, ReadFileTool, {"path": "link.txt"}, ctx)
    assert not res.ok
    assert "resolves through a symlink to a place outside them" in res.text
    assert "hidden-place" not in res.text and "secret-name" not in res.text


class MemoryJournal:
    """An effect journal in a dict (the durable log's, without the log)."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[bool, str]] = {}

    def recorded(self, key: str) -> tuple[bool, str] | None:
        return self.rows.get(key)

    def record(self, key: str, creature: str, tool: str, ok: bool, result: str) -> None:
        self.rows.setdefault(key, (ok, result))


def test_concurrent_appends_to_one_file_each_land_once(tmp_path: Path) -> None:
    """Two creatures append to one shared file at the same moment: each append is planned
    at the file's end and applied before the next is planned, so none writes over another."""
    import anyio

    from terrarium.tools.base import ToolContext
    from terrarium.tools.files import WriteFileTool
    from terrarium.tools.runner import run_tool

    journal = MemoryJournal()
    shared = tmp_path / "shared.txt"

    def ctx(who: str, n: int) -> ToolContext:
        return ToolContext(creature=who, cwd=tmp_path, writable=(tmp_path,), journal=journal,
                           effect_key=f"run/{who}/{n}")

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            for n in range(10):
                for who in ("ann", "bob"):
                    tg.start_soon(run_tool, WriteFileTool,
                                  {"path": "shared.txt", "content": f"{who}{n};",
                                   "append": True}, ctx(who, n))

    anyio.run(go)
    text = shared.read_text()
    assert sorted(text.rstrip(";").split(";")) == sorted(
        f"{who}{n}" for n in range(10) for who in ("ann", "bob"))
