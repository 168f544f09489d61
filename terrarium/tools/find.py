"""``glob``: list the workspace's files whose path matches a glob pattern.

Patterns are shell-style and anchored at the searched folder: ``*`` and ``?`` stay inside
one path segment, ``**`` spans folders (``**/*.py`` is every Python file, ``*.py`` only the
top level's), ``[abc]`` is a class. The walk is gitignore-aware and skips symlinks (see
:mod:`terrarium.tools.walk`); results are sorted by path so they are deterministic.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import ClassVar

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.confine import display
from terrarium.tools.walk import walk
from terrarium.tools.workspace import work_dir, workspace_path

__all__ = ["GlobArgs", "GlobTool", "glob_regex"]


class GlobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, description="e.g. '**/*.py', 'src/*.toml', 'README*'")
    path: str = Field(default=".", description="folder to search, in the workspace")
    max_results: int = Field(default=200, ge=1, le=2000, description="list at most this many")


@lru_cache(maxsize=128)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A compiled regex for a shell-style glob over posix relative paths."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


class GlobTool(Tool):
    name: ClassVar[str] = "glob"
    summary: ClassVar[str] = "list files in the workspace whose path matches a pattern"
    documentation: ClassVar[str] = (
        "Lists files under path whose path relative to it matches pattern, one per line, "
        "sorted. '*' matches within one folder level, '**' across levels: '**/*.py' finds "
        "every Python file, '*.py' only those directly in path. Files excluded by "
        ".gitignore, the .git folder and symlinks are left out."
    )
    args_model: ClassVar[type[BaseModel]] = GlobArgs
    concurrency_safe: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, GlobArgs)
        top = work_dir(ctx)
        start = workspace_path(args.path, ctx, "read")
        if not start.is_dir():
            raise ToolError(f"{display(start, top)} is not a folder; glob searches folders.")
        rx = glob_regex(args.pattern.removeprefix("./"))

        def search() -> tuple[list[str], int]:
            found: list[str] = []
            total = 0
            for entry in walk(start, top):
                if rx.match(entry.rel):
                    total += 1
                    if len(found) < args.max_results:
                        found.append(display(entry.path, top))
            return found, total

        found, total = await anyio.to_thread.run_sync(search)
        if not found:
            return f"No files match {args.pattern!r}."
        if total > len(found):
            found.append(f"[showed {len(found)} of {total} files; narrow the pattern]")
        return "\n".join(found)
