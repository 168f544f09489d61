"""``grep``: search file contents in the workspace by regular expression.

ripgrep (``rg``) is used when it is on PATH: it is much faster on a real tree. Without it a
Python fallback walks the same files (:mod:`terrarium.tools.walk` mirrors rg's ignore rules
as invoked here) and matches with :mod:`re`. Both produce the same stream of (file, line,
text, is-match) events and share one formatter, so the model sees one result format either
way. rg runs as a subprocess through anyio (never blocking the event loop) with
``--json`` output, read as it streams and stopped once enough matches have arrived.
Regular expressions are rg's (Rust) syntax or Python's in the fallback: the common subset
(classes, alternation, repetition, anchors) behaves the same.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import anyio
import anyio.abc
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.confine import display
from terrarium.tools.walk import walk
from terrarium.tools.workspace import work_dir, workspace_path

__all__ = ["GrepArgs", "GrepOptions", "GrepTool", "Hit", "format_hits"]

MAX_FILE_BYTES = 5_000_000
MAX_LINE_CHARS = 300
RG_FLAGS = (
    "--json", "--hidden", "--no-require-git", "--no-config", "--no-ignore-global",
    "--no-ignore-exclude", "--no-ignore-dot", "--no-messages", "--sort", "path",
    "--max-filesize", str(MAX_FILE_BYTES), "--glob", "!.git",
)


class GrepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, description="regular expression to look for")
    path: str = Field(default=".", description="folder or file to search, in the workspace")
    glob: str | None = Field(
        default=None, description="only files whose path matches, e.g. '*.py' or 'src/**'"
    )
    ignore_case: bool = Field(default=False, description="match upper and lower case alike")
    context: int = Field(default=0, ge=0, le=10, description="lines shown around each match")
    max_results: int = Field(default=100, ge=1, le=1000, description="stop after this many")


class GrepOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_ripgrep: bool = Field(
        default=True, description="use rg when it is on PATH (false: always the Python search)"
    )


@dataclass(frozen=True, slots=True)
class Hit:
    """One line of output: a match or a context line."""

    file: str
    line: int
    text: str
    match: bool


def _clip(text: str) -> str:
    text = text.rstrip("\n").rstrip("\r")
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"


def format_hits(hits: Iterable[Hit], max_results: int, context: int) -> str:
    """The one result format: a file's name, then ``N:text`` (match) / ``N-text`` (context)
    lines, ``--`` between separated groups when there is context, and a count line."""
    out: list[str] = []
    matches = 0
    files: list[str] = []
    last: Hit | None = None
    capped = False
    for hit in hits:
        if hit.match and matches == max_results:
            capped = True
            break
        if capped:
            break
        if last is not None and matches == max_results:
            # after the last shown match: only its trailing context
            if hit.file != last.file or hit.line > last.line + context:
                capped = True
                break
        if last is None or hit.file != last.file:
            if out:
                out.append("")
            out.append(hit.file)
            files.append(hit.file)
        elif context and hit.line > last.line + 1:
            out.append("--")
        out.append(f"{hit.line}{':' if hit.match else '-'}{_clip(hit.text)}")
        matches += hit.match
        last = hit
    if not matches:
        return "No matches."
    tail = f"[{matches} match{'es' if matches != 1 else ''} in {len(files)} file"
    tail += "s]" if len(files) != 1 else "]"
    if capped:
        tail += f" [stopped at max_results={max_results}; narrow the pattern, path or glob]"
    return "\n".join([*out, tail])


def _glob_filter(glob: str | None, start: Path) -> Callable[[Path], bool]:
    """Whether a file found under ``start`` passes the ``glob`` argument (gitignore-style).

    A search of one file keeps it whatever the glob says, as rg does for named files.
    """
    if not glob or start.is_file():
        return lambda _path: True
    import pathspec  # here, not at start: ~20 ms for every run that never greps

    spec = pathspec.GitIgnoreSpec.from_lines([glob])
    return lambda path: spec.match_file(path.relative_to(start).as_posix())


def _python_hits(
    start: Path, top: Path, regex: re.Pattern[str], glob: str | None, context: int
) -> Iterator[Hit]:
    keep = _glob_filter(glob, start)
    if start.is_file():
        files = [(start, display(start, top))]
    else:
        files = [(e.path, display(e.path, top)) for e in walk(start, top) if keep(e.path)]
    for path, shown in files:
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\x00" in data:
            continue  # binary, as rg skips it
        lines = data.decode("utf-8", errors="replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        hit_lines = [i for i, line in enumerate(lines) if regex.search(line.rstrip("\r"))]
        wanted: dict[int, bool] = {}
        for i in hit_lines:
            for j in range(max(0, i - context), min(len(lines), i + context + 1)):
                wanted.setdefault(j, False)
            wanted[i] = True
        for j in sorted(wanted):
            yield Hit(shown, j + 1, lines[j], wanted[j])


def _rg_text(field: dict[str, str]) -> str:
    if "text" in field:
        return field["text"]
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", errors="replace")


def _take(hits: Iterable[Hit], limit: int) -> list[Hit]:
    """Hits up to and including the first match past ``limit`` (so a cap can be reported)."""
    out: list[Hit] = []
    matches = 0
    for hit in hits:
        out.append(hit)
        matches += hit.match
        if matches > limit:
            break
    return out


async def _drain(stream: anyio.abc.ByteReceiveStream | None) -> bytes:
    data = b""
    if stream is None:
        return data
    try:
        async for chunk in stream:
            data += chunk
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    return data


async def _rg_hits(rg: str, args: GrepArgs, start: Path, top: Path) -> list[Hit]:
    """Hits from ripgrep's JSON stream, read only as far as the cap needs."""
    cmd = [rg, *RG_FLAGS]
    if args.ignore_case:
        cmd.append("--ignore-case")
    if args.context:
        cmd += ["--context", str(args.context)]
    # no --glob: rg's globs override ignore rules; the file filter is applied below instead
    keep = _glob_filter(args.glob, start)
    cmd += ["--regexp", args.pattern, "--", str(start)]

    def events(lines: list[bytes]) -> Iterator[Hit]:
        for raw in lines:
            if not raw.strip():
                continue
            msg = json.loads(raw)
            if msg.get("type") not in ("match", "context"):
                continue
            data = msg["data"]
            path = Path(_rg_text(data["path"]))
            path = path if path.is_absolute() else top / path
            if not keep(path):
                continue
            shown = display(path, top)
            yield Hit(shown, data["line_number"], _rg_text(data["lines"]),
                      msg["type"] == "match")

    hits: list[Hit] = []
    matches = 0
    stopped = False
    err = b""
    async with await anyio.open_process(cmd, cwd=top, stdin=subprocess.DEVNULL) as proc:
        async with anyio.create_task_group() as tg:

            async def read_err() -> None:
                nonlocal err
                err = await _drain(proc.stderr)

            tg.start_soon(read_err)
            buf = b""
            assert proc.stdout is not None
            async for chunk in proc.stdout:
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for hit in events(lines):
                    hits.append(hit)
                    matches += hit.match
                    if matches > args.max_results:
                        stopped = True
                        break
                if stopped:
                    proc.kill()
                    break
            if not stopped:
                hits.extend(events([buf]))
        await proc.wait()
    if proc.returncode == 2 and not hits and not stopped:
        lines = err.decode(errors="replace").strip().splitlines()
        raise ToolError(f"grep failed: {lines[-1] if lines else 'rg reported an error'}.")
    return hits


class GrepTool(Tool):
    name: ClassVar[str] = "grep"
    summary: ClassVar[str] = "search file contents in the workspace with a regular expression"
    documentation: ClassVar[str] = (
        "Searches the files under path (a folder or one file) for lines matching pattern, "
        "skipping what .gitignore files exclude, the .git folder, binary files and symlinks. "
        "Output: each file's path, then its lines as 'N:text' (a match) or 'N-text' "
        "(context), '--' between separate groups, and a '[N matches in M files]' line. "
        "glob keeps only files whose path matches (gitignore-style: '*.py' at any depth)."
    )
    args_model: ClassVar[type[BaseModel]] = GrepArgs
    options_model: ClassVar[type[BaseModel] | None] = GrepOptions
    guidance: ClassVar[str] = (
        "To find where something is defined or used, grep for it before reading whole files."
    )
    concurrency_safe: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, GrepArgs)
        options: GrepOptions = self.options(ctx)
        top = work_dir(ctx)
        start = workspace_path(args.path, ctx, "read")
        if not start.exists():
            raise ToolError(f"There is nothing at {display(start, top)} to search.")
        if not (start.is_dir() or start.is_file()):
            raise ToolError(f"{display(start, top)} is not a regular file or folder.")
        try:
            regex = re.compile(args.pattern, re.IGNORECASE if args.ignore_case else 0)
        except re.error as exc:
            raise ToolError(f"The pattern {args.pattern!r} is not a valid regex: {exc}.") from None
        rg = shutil.which("rg") if options.use_ripgrep else None
        if rg is not None:
            hits = await _rg_hits(rg, args, start, top)
        else:
            hits = await anyio.to_thread.run_sync(lambda: _take(
                _python_hits(start, top, regex, args.glob, args.context), args.max_results
            ))
        return format_hits(hits, args.max_results, args.context)
