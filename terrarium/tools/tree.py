"""``tree``: the shape of a folder in the workspace, depth-limited and capped.

A model exploring a repository needs the layout before it needs contents; a depth limit and
an entry cap keep a large tree from flooding the context. Folders come first, then files,
each sorted by name; gitignore rules and symlinks are handled as in
:mod:`terrarium.tools.walk`.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.confine import display
from terrarium.tools.walk import IgnoreRules
from terrarium.tools.workspace import work_dir, workspace_path

__all__ = ["TreeArgs", "TreeTool", "render_tree"]


class TreeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(default=".", description="folder to show, in the workspace")
    depth: int = Field(default=3, ge=1, le=10, description="how many folder levels deep")
    max_entries: int = Field(default=200, ge=1, le=2000, description="show at most this many")


def render_tree(start: Path, top: Path, depth: int, max_entries: int) -> str:
    """Indented lines, folders with a trailing '/', a note for what was left out."""
    rules = IgnoreRules(top)
    lines = [display(start, top).rstrip("/") + "/"]
    shown = 0
    hidden = 0

    def children(folder: Path) -> list[tuple[Path, bool]]:
        try:
            items = list(folder.iterdir())
        except OSError:
            return []
        out = []
        for p in items:
            if p.is_symlink():
                continue
            is_dir = p.is_dir()
            if not is_dir and not p.is_file():
                continue
            if not rules.ignored(p, is_dir):
                out.append((p, is_dir))
        return sorted(out, key=lambda t: (not t[1], t[0].name))

    def visit(folder: Path, level: int) -> None:
        nonlocal shown, hidden
        for path, is_dir in children(folder):
            if shown >= max_entries:
                hidden += 1
                continue
            shown += 1
            indent = "  " * level
            if not is_dir:
                lines.append(f"{indent}{path.name}")
            elif level < depth:
                lines.append(f"{indent}{path.name}/")
                visit(path, level + 1)
            else:
                n = len(children(path))
                lines.append(f"{indent}{path.name}/ ({n} entr{'y' if n == 1 else 'ies'})")

    visit(start, 1)
    if hidden:
        lines.append(f"[{hidden} more entries not shown; raise max_entries or pick a subfolder]")
    return "\n".join(lines)


class TreeTool(Tool):
    name: ClassVar[str] = "tree"
    summary: ClassVar[str] = "show the folders and files under a path, a few levels deep"
    documentation: ClassVar[str] = (
        "Shows the layout under path as an indented list, folders first (with a trailing "
        "'/'), down to depth levels; deeper folders show how many entries they hold. "
        "Files excluded by .gitignore, the .git folder and symlinks are left out; after "
        "max_entries lines a note says how many more there are."
    )
    args_model: ClassVar[type[BaseModel]] = TreeArgs
    guidance: ClassVar[str] = "In an unfamiliar folder, call tree first to see its layout."
    guidance_bucket = "first"
    concurrency_safe: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, TreeArgs)
        top = work_dir(ctx)
        start = workspace_path(args.path, ctx, "read")
        if not start.is_dir():
            raise ToolError(f"{display(start, top)} is not a folder; tree shows folders.")
        return await anyio.to_thread.run_sync(
            render_tree, start, top, args.depth, args.max_entries
        )
