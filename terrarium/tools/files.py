"""``read_file`` and ``write_file``: file access confined to a creature's declared paths.

Confinement rules live in :mod:`terrarium.tools.confine`. Disk work runs in a worker thread
(``anyio.to_thread``) so a slow disk never stalls the other creatures on the event loop.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.confine import confine, display

MAX_READ_BYTES = 1_000_000
MAX_WRITE_BYTES = 1_000_000


class ReadFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="file to read, relative to the working directory")
    max_bytes: int = Field(
        default=20000, ge=1, le=MAX_READ_BYTES, description="read at most this many bytes"
    )


class WriteFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="file to write, relative to the working directory")
    content: str = Field(description="the text to write", json_schema_extra={"multiline": True})
    append: bool = Field(default=False, description="add to the end instead of replacing")


def _read(path: Path, shown: str, max_bytes: int) -> str:
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; read_file reads one file.")
    if path.exists() and not path.is_file():
        # FIFOs and devices could block the worker thread forever or stream without end.
        raise ToolError(f"{shown} is not a regular file and was not read.")
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


def _write(path: Path, shown: str, content: str, append: bool) -> str:
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; write_file writes one file.")
    if path.exists() and not path.is_file():
        raise ToolError(f"{shown} is not a regular file and was not written.")
    data = content.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab" if append else "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise ToolError(f"{shown} could not be written: {exc.strerror or exc}.") from None
    verb = "Appended" if append else "Wrote"
    return f"{verb} {len(data)} bytes to {shown}."


class ReadFileTool(Tool):
    name: ClassVar[str] = "read_file"
    summary: ClassVar[str] = "read a text file from the paths this creature may read"
    documentation: ClassVar[str] = (
        "Returns the file's text. Relative paths start at the working directory. "
        "Paths outside the readable paths, paths with '..', and symlinks that lead "
        "outside are refused with the reason. Long files are cut at max_bytes and "
        "end with a [truncated] note."
    )
    args_model: ClassVar[type[BaseModel]] = ReadFileArgs
    concurrency_safe: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, ReadFileArgs)
        roots = (*ctx.readable, *ctx.writable)
        path = confine(args.path, cwd=ctx.cwd, roots=roots, mode="read")
        shown = display(path, ctx.cwd)
        return await anyio.to_thread.run_sync(_read, path, shown, args.max_bytes)


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
    needs_followup = False

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, WriteFileArgs)
        size = len(args.content.encode("utf-8"))
        if size > MAX_WRITE_BYTES:
            raise ToolError(
                f"The content is {size} bytes; write_file accepts at most {MAX_WRITE_BYTES}."
            )
        path = confine(args.path, cwd=ctx.cwd, roots=ctx.writable, mode="write")
        shown = display(path, ctx.cwd)
        return await anyio.to_thread.run_sync(_write, path, shown, args.content, args.append)
