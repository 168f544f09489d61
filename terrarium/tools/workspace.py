"""Where the file and shell tools may act: the creature's workspace, with today's rules.

The workspace tools (shell, edit, multi_edit, glob, grep, tree) resolve relative paths
against ``ctx.work_dir`` (the declared workspace, else the creature's cwd) and may act in it
and in the creature's writable paths (reading also in its readable paths). The rules are
those of :mod:`terrarium.tools.confine`: ``..`` refused, absolute paths only inside a root,
symlinks resolved before the check, non-regular files (FIFOs, devices) never opened.
"""

from __future__ import annotations

import os
from pathlib import Path

from terrarium.errors import ToolError
from terrarium.tools.base import ToolContext
from terrarium.tools.confine import confine, display

__all__ = ["file_path", "roots", "shown", "work_dir", "workspace_path", "writable_roots"]


def work_dir(ctx: ToolContext) -> Path:
    """The resolved workspace folder, created if it was declared but is missing."""
    base = ctx.work_dir
    if not base.is_absolute():
        base = ctx.cwd / base
    if ctx.workspace is not None and not base.exists():
        try:
            base.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolError(f"The workspace {base} could not be created: {exc}.") from None
    if not base.is_dir():
        raise ToolError(f"The workspace {base} is not a folder.")
    return Path(os.path.realpath(base))


def roots(ctx: ToolContext, mode: str) -> tuple[Path, ...]:
    """The roots a workspace tool may touch: the workspace, plus declared paths."""
    base = work_dir(ctx)
    declared = (*ctx.writable,) if mode == "write" else (*ctx.readable, *ctx.writable)
    # declared roots are relative to the creature's folder, not to the workspace
    return (base, *(r if r.is_absolute() else ctx.cwd / r for r in declared))


def writable_roots(ctx: ToolContext) -> tuple[Path, ...]:
    """The creature's declared writable paths, resolved (the sandbox binds them writable)."""
    return tuple(Path(os.path.realpath(r if r.is_absolute() else ctx.cwd / r))
                 for r in ctx.writable)


def workspace_path(raw: str, ctx: ToolContext, mode: str = "read") -> Path:
    """``raw`` resolved against the workspace and confined (see module docstring)."""
    base = work_dir(ctx)
    return confine(raw, cwd=base, roots=roots(ctx, mode), mode=mode)


def shown(path: Path, ctx: ToolContext) -> str:
    """A path as the model should see it: relative to the workspace where possible."""
    return display(path, work_dir(ctx))


def file_path(raw: str, ctx: ToolContext, mode: str) -> tuple[Path, str]:
    """For read_file/write_file: their declared paths, plus the workspace if one is declared.

    Without a declared workspace they behave as before workspaces existed (relative to
    ``cwd``, only readable/writable paths). Returns the path and how to show it.
    """
    declared = (*ctx.writable,) if mode == "write" else (*ctx.readable, *ctx.writable)
    absolute = tuple(r if r.is_absolute() else ctx.cwd / r for r in declared)
    if ctx.workspace is None:
        path = confine(raw, cwd=ctx.cwd, roots=absolute, mode=mode)
        return path, display(path, ctx.cwd)
    base = work_dir(ctx)
    path = confine(raw, cwd=base, roots=(base, *absolute), mode=mode)
    return path, display(path, base)
