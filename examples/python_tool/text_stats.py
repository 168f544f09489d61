"""A complete Python tool, loaded from this creature's folder: ``text_stats:TextStatsTool``.

Everything a tool needs is here: a name and a one-line summary (the prompt's tool index),
documentation (what ``info`` shows), a pydantic argument model (it drives the call parser,
the grammar and validation), per-creature options (``tool_options: {text_stats: {...}}``,
checked at config load), guidance for the prompt, confinement to the creature's workspace,
and errors the model can act on (``ToolError``: the sentence comes back as the result).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import ClassVar

import anyio
from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.workspace import shown, workspace_path

__all__ = ["TextStatsArgs", "TextStatsOptions", "TextStatsTool"]

_WORD = re.compile(r"[A-Za-z']+")


class TextStatsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="a text file in the workspace, e.g. notes/today.md")
    top: int = Field(3, ge=0, le=20, description="how many of the most common words to list")


class TextStatsOptions(BaseModel):
    """What a creature may set in ``tool_options: {text_stats: {...}}``."""

    model_config = ConfigDict(extra="forbid")

    max_bytes: int = Field(200_000, ge=1, description="larger files are refused")
    min_word_length: int = Field(4, ge=1, description="shorter words are not counted as common")


class TextStatsTool(Tool):
    name: ClassVar[str] = "text_stats"
    summary: ClassVar[str] = "count lines, words and common words of a text file"
    documentation: ClassVar[str] = (
        "Reads one text file in the workspace and returns its line, word and character "
        "counts, and its most common words (of min_word_length letters or more)."
    )
    args_model: ClassVar[type[BaseModel]] = TextStatsArgs
    options_model: ClassVar[type[BaseModel] | None] = TextStatsOptions
    guidance: ClassVar[str] = "Use text_stats for numbers about a file instead of guessing."
    concurrency_safe: ClassVar[bool] = True  # it only reads: two calls may run at once

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, TextStatsArgs)
        opts: TextStatsOptions = self.options(ctx)
        path = workspace_path(args.path, ctx, "read")  # refuses .., escapes, symlinks out
        if not path.is_file():
            raise ToolError(f"There is no file {args.path!r} in the workspace.")
        size = path.stat().st_size
        if size > opts.max_bytes:
            raise ToolError(f"{args.path} has {size} bytes, more than max_bytes="
                            f"{opts.max_bytes}; ask for a smaller file.")
        # file reads block: keep them off the event loop
        text = await anyio.to_thread.run_sync(path.read_text, "utf-8")
        words = _WORD.findall(text)
        common = Counter(w.lower() for w in words if len(w) >= opts.min_word_length)
        top = ", ".join(f"{w} ({n})" for w, n in common.most_common(args.top)) or "none"
        return (f"{shown(path, ctx)}: {len(text.splitlines())} lines, {len(words)} words, "
                f"{len(text)} characters; most common: {top}")
