"""``read_file`` and ``write_file``: file access confined to a creature's declared paths.

Confinement rules live in :mod:`terrarium.tools.confine`; a declared workspace counts as
readable and writable (:func:`terrarium.tools.workspace.file_path`). Disk work runs in a
worker thread (``anyio.to_thread``) so a slow disk never stalls the other creatures.
A line range (``start_line``/``end_line``) returns numbered lines, the numbers ``edit``'s
messages use, so a model can read exactly the part it is about to change. A write is
planned and recorded before the file changes (:mod:`terrarium.tools.once`): an append that
a crash interrupts is written once, at the offset it was planned for, not appended again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.once import Plan, apply_once
from terrarium.tools.workspace import file_path

__all__ = ["ReadFileArgs", "ReadFileTool", "WriteFileArgs", "WriteFileTool"]

MAX_READ_BYTES = 1_000_000
MAX_WRITE_BYTES = 1_000_000
MAX_RANGE_FILE_BYTES = 20_000_000  # a line range may come from a file up to this size


class ReadFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="file to read, relative to the working directory")
    max_bytes: int = Field(
        default=20000, ge=1, le=MAX_READ_BYTES, description="read at most this many bytes"
    )
    start_line: int | None = Field(
        default=None, ge=1, description="first line to show (1-based); lines come numbered"
    )
    end_line: int | None = Field(
        default=None, ge=1, description="last line to show (inclusive); lines come numbered"
    )


class WriteFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="file to write, relative to the working directory")
    content: str = Field(description="the text to write", json_schema_extra={"multiline": True})
    append: bool = Field(default=False, description="add to the end instead of replacing")


def _check_readable(path: Path, shown: str) -> None:
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; read_file reads one file.")
    if path.exists() and not path.is_file():
        # FIFOs and devices could block the worker thread forever or stream without end.
        raise ToolError(f"{shown} is not a regular file and was not read.")


def _read(path: Path, shown: str, max_bytes: int) -> str:
    _check_readable(path, shown)
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            data = fh.read(max_bytes)
    except FileNotFoundError:
        raise ToolError(f"There is no file at {shown}.") from None
    except OSError as exc:
        raise ToolError(f"{shown} could not be read: {exc.strerror or exc}.") from None
    if b"\x00" in data[:8192]:
        raise ToolError(f"{shown} looks like a binary file; read_file only reads text.")
    text = data.decode("utf-8", errors="replace")
    if size > len(data):
        text += f"\n[truncated: showed {len(data)} of {size} bytes]"
    return text


def _read_lines(path: Path, shown: str, args: ReadFileArgs) -> str:
    _check_readable(path, shown)
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_RANGE_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ToolError(f"There is no file at {shown}.") from None
    except OSError as exc:
        raise ToolError(f"{shown} could not be read: {exc.strerror or exc}.") from None
    if len(data) > MAX_RANGE_FILE_BYTES:
        raise ToolError(f"{shown} is larger than {MAX_RANGE_FILE_BYTES} bytes; use grep on it.")
    if b"\x00" in data[:8192]:
        raise ToolError(f"{shown} looks like a binary file; read_file only reads text.")
    lines = data.decode("utf-8", errors="replace").splitlines()
    total = len(lines)
    first = args.start_line or 1
    last = min(args.end_line or total, total)
    if args.end_line is not None and args.end_line < first:
        raise ToolError(f"end_line {args.end_line} is before start_line {first}.")
    if first > total:
        raise ToolError(f"{shown} has {total} lines; start_line {first} is past its end.")
    width = len(str(last))
    out: list[str] = []
    used = 0
    for n in range(first, last + 1):
        line = f"{n:>{width}}\t{lines[n - 1]}"
        used += len(line.encode("utf-8")) + 1
        if used > args.max_bytes and out:
            return "\n".join(out) + (
                f"\n[truncated at max_bytes: showed lines {first}-{n - 1} of {total}; "
                f"continue with start_line={n}]"
            )
        out.append(line)
    return "\n".join(out) + f"\n[lines {first}-{last} of {total}]"


def _plan_write(path: Path, shown: str, content: str, append: bool) -> Plan:
    """What the write will do: the whole text, or the bytes of an append and the offset
    they go to (the file's size now), so that applying it twice leaves one copy."""
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; write_file writes one file.")
    if path.exists() and not path.is_file():
        raise ToolError(f"{shown} is not a regular file and was not written.")
    size = len(content.encode("utf-8"))
    offset = None
    if append:
        try:
            offset = path.stat().st_size
        except FileNotFoundError:
            offset = 0
        except OSError as exc:
            raise ToolError(f"{shown} could not be read: {exc.strerror or exc}.") from None
    verb = "Appended" if append else "Wrote"
    return {"path": str(path), "name": shown, "content": content, "offset": offset,
            "message": f"{verb} {size} bytes to {shown}."}


def _apply_write(plan: Plan) -> None:
    """Idempotent: the whole text written again, or the same bytes at the same offset."""
    path, shown = Path(plan["path"]), plan["name"]
    data = plan["content"].encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if plan["offset"] is None:
            path.write_bytes(data)
            return
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o666)
        try:
            os.pwrite(fd, data, plan["offset"])
        finally:
            os.close(fd)
    except OSError as exc:
        raise ToolError(f"{shown} could not be written: {exc.strerror or exc}.") from None


class ReadFileTool(Tool):
    name: ClassVar[str] = "read_file"
    summary: ClassVar[str] = "read a text file from the paths this creature may read"
    documentation: ClassVar[str] = (
        "Returns the file's text. Relative paths start at the workspace (or the working "
        "directory). Paths outside the readable paths, paths with '..', and symlinks that "
        "lead outside are refused with the reason. Long files are cut at max_bytes and "
        "end with a [truncated] note. With start_line and/or end_line only those lines "
        "come back, each prefixed by its number and a tab, then a [lines a-b of n] note "
        "(the numbers are not part of the file)."
    )
    args_model: ClassVar[type[BaseModel]] = ReadFileArgs
    concurrency_safe: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, ReadFileArgs)
        path, shown = file_path(args.path, ctx, "read")
        if args.start_line is None and args.end_line is None:
            return await anyio.to_thread.run_sync(_read, path, shown, args.max_bytes)
        return await anyio.to_thread.run_sync(_read_lines, path, shown, args)


class WriteFileTool(Tool):
    name: ClassVar[str] = "write_file"
    summary: ClassVar[str] = "write or append text to a file in the paths this creature may write"
    documentation: ClassVar[str] = (
        "Replaces the file's content, or adds to its end with append=true. Missing parent "
        "folders are created, only inside the writable paths. Paths outside them, paths "
        "with '..', and symlinks that lead outside are refused with the reason."
    )
    args_model: ClassVar[type[BaseModel]] = WriteFileArgs
    concurrency_safe: ClassVar[bool] = False
    side_effects: ClassVar[bool] = True  # planned, then applied once (tools/once.py)
    needs_followup = False

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, WriteFileArgs)
        size = len(args.content.encode("utf-8"))
        if size > MAX_WRITE_BYTES:
            raise ToolError(
                f"The content is {size} bytes; write_file accepts at most {MAX_WRITE_BYTES}."
            )
        path, shown = file_path(args.path, ctx, "write")
        content, append = args.content, args.append
        return await apply_once(ctx, self.name, path,
                                lambda: _plan_write(path, shown, content, append),
                                _apply_write)
