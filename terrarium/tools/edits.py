"""``edit`` and ``multi_edit``: exact-string replacement in one file of the workspace.

Why exact strings and not line numbers or diffs: a model quotes the text it saw, which
stays right when earlier edits moved the lines, and a string that matches twice is caught
instead of changing the wrong place. ``multi_edit`` applies its edits in order to the text
in memory and writes once, so a failing edit leaves the file untouched (all or nothing).
The file is replaced atomically (a temporary file renamed over it, mode kept), and its
line endings are left as they were. The new text is planned and recorded before the file
is replaced (:mod:`terrarium.tools.once`), so a crash mid-call never applies an edit twice.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.once import Plan, apply_once
from terrarium.tools.workspace import shown, workspace_path

__all__ = ["EditArgs", "EditTool", "MultiEditArgs", "MultiEditTool", "OneEdit", "apply_edit"]

MAX_EDIT_FILE_BYTES = 5_000_000
SHOWN_LINES = 8  # at most this many line numbers in an "ambiguous" message


class OneEdit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    old_string: str = Field(
        min_length=1, description="exact text to replace, whitespace included",
        json_schema_extra={"multiline": True},
    )
    new_string: str = Field(
        description="the replacement text", json_schema_extra={"multiline": True}
    )
    replace_all: bool = Field(
        default=False, description="replace every occurrence instead of exactly one"
    )


class EditArgs(OneEdit):
    path: str = Field(description="file to change, relative to the workspace")


class MultiEditArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="file to change, relative to the workspace")
    edits: list[OneEdit] = Field(
        min_length=1, max_length=50,
        description="edits applied in order, each to the result of the one before",
    )


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def apply_edit(text: str, edit: OneEdit) -> tuple[str, list[int]]:
    """The text after ``edit`` and the lines (in the old text) it changed; ToolError if not."""
    if edit.old_string == edit.new_string:
        raise ToolError("old_string and new_string are the same; nothing would change.")
    starts: list[int] = []
    at = text.find(edit.old_string)
    while at != -1:
        starts.append(at)
        at = text.find(edit.old_string, at + len(edit.old_string))
    if not starts:
        raise ToolError(
            "old_string was not found: copy it exactly from the file, whitespace and "
            "indentation included (read_file with start_line shows the current lines)."
        )
    lines = [_line_of(text, i) for i in starts]
    if len(starts) > 1 and not edit.replace_all:
        listed = ", ".join(str(n) for n in lines[:SHOWN_LINES])
        more = f" and {len(lines) - SHOWN_LINES} more" if len(lines) > SHOWN_LINES else ""
        raise ToolError(
            f"old_string is ambiguous: found {len(starts)} times at lines {listed}{more}. "
            "Include more surrounding text to make it unique, or set replace_all."
        )
    return text.replace(edit.old_string, edit.new_string), lines


def _load(path: Path, name: str) -> str:
    if path.is_dir():
        raise ToolError(f"{name} is a directory; edits change one file.")
    if not path.exists():
        raise ToolError(f"There is no file at {name}; create it with write_file.")
    if not path.is_file():
        raise ToolError(f"{name} is not a regular file and was not changed.")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ToolError(f"{name} could not be read: {exc.strerror or exc}.") from None
    if len(data) > MAX_EDIT_FILE_BYTES:
        raise ToolError(f"{name} is larger than {MAX_EDIT_FILE_BYTES} bytes and was not edited.")
    try:
        # newline-preserving: bytes decode without translating \r\n
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{name} is not UTF-8 text and was not edited.") from None


def _store(path: Path, name: str, text: str) -> None:
    """Write atomically: a temporary file in the same folder, renamed over the original."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".edit")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
        shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ToolError(f"{name} could not be written: {exc.strerror or exc}.") from None


def _plan_edits(path: Path, name: str, edits: list[OneEdit]) -> Plan:
    """The file's whole new text and the call's message, computed without writing."""
    text = _load(path, name)
    changed: list[str] = []
    for i, edit in enumerate(edits, 1):
        try:
            text, lines = apply_edit(text, edit)
        except ToolError as exc:
            if len(edits) == 1:
                raise
            raise ToolError(
                f"Edit {i} of {len(edits)} failed, so nothing was written: {exc.message}"
            ) from None
        where = ", ".join(str(n) for n in lines[:SHOWN_LINES])
        more = "…" if len(lines) > SHOWN_LINES else ""
        changed.append(f"{len(lines)} at line{'s' if len(lines) > 1 else ''} {where}{more}")
    if len(edits) == 1:
        message = f"Edited {name}: replaced {changed[0]}."
    else:
        message = f"Edited {name} with {len(edits)} edits: " + "; ".join(changed) + "."
    return {"path": str(path), "name": name, "text": text, "message": message}


def _apply_text(plan: Plan) -> None:
    """Write a plan's whole text (idempotent: applying it again writes the same file)."""
    _store(Path(plan["path"]), plan["name"], plan["text"])


async def _edit_once(ctx: ToolContext, tool: str, path: Path, edits: list[OneEdit]) -> str:
    name = shown(path, ctx)
    return await apply_once(ctx, tool, path, lambda: _plan_edits(path, name, edits),
                            _apply_text)


class EditTool(Tool):
    name: ClassVar[str] = "edit"
    summary: ClassVar[str] = "replace an exact piece of text in a file"
    documentation: ClassVar[str] = (
        "Replaces old_string with new_string in the file. old_string must match the file "
        "exactly (spaces, tabs and line breaks included) and exactly once, unless "
        "replace_all is true. Errors say 'not found', or 'ambiguous: found N times at "
        "lines a, b, c'; the file is then unchanged. The file must exist (create files "
        "with write_file). Paths are confined to the workspace and the writable paths."
    )
    args_model: ClassVar[type[BaseModel]] = EditArgs
    guidance: ClassVar[str] = (
        "Before edit, read the lines you will change (read_file with start_line and "
        "end_line) and copy old_string from them exactly, without the line numbers."
    )
    concurrency_safe: ClassVar[bool] = False
    side_effects: ClassVar[bool] = True  # planned, then applied once (tools/once.py)

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, EditArgs)
        path = workspace_path(args.path, ctx, "write")
        edit = OneEdit(old_string=args.old_string, new_string=args.new_string,
                       replace_all=args.replace_all)
        return await _edit_once(ctx, self.name, path, [edit])


class MultiEditTool(Tool):
    name: ClassVar[str] = "multi_edit"
    summary: ClassVar[str] = "apply several exact text replacements to one file at once"
    documentation: ClassVar[str] = (
        "Applies a list of edits (old_string, new_string, replace_all) to one file in "
        "order, each to the text the previous one left. All or nothing: if any edit is "
        "not found or ambiguous, the error names it and the file is not changed. "
        "The same matching rules as edit apply."
    )
    args_model: ClassVar[type[BaseModel]] = MultiEditArgs
    concurrency_safe: ClassVar[bool] = False
    side_effects: ClassVar[bool] = True  # planned, then applied once (tools/once.py)

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, MultiEditArgs)
        path = workspace_path(args.path, ctx, "write")
        return await _edit_once(ctx, self.name, path, list(args.edits))
