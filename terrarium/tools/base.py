"""What a tool is: a name, typed arguments, docs for the prompt, and an async body.

The same definition feeds the prompt (index line, full docs, guidance), the call parsers
and the grammar (the argument model), and the controller loop (``run``), so none of them
can drift from the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

GuidanceBucket = Literal["first", "normal", "last"]


class NoArgs(BaseModel):
    """Argument model for tools that take nothing."""

    model_config = ConfigDict(extra="forbid")


@dataclass(slots=True)
class ToolContext:
    """What a running tool may know about its caller; owned by the controller loop."""

    creature: str
    cwd: Path
    readable: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    state: dict[str, Any] = field(default_factory=dict)


class Tool:
    """Subclass and set the class attributes; override :meth:`run`.

    ``args_model`` is a pydantic model with ``extra="forbid"``; its field descriptions are
    the argument docs. ``summary`` is the one-line index entry, ``documentation`` the full
    text an ``info`` call returns. ``guidance`` is this tool's own contribution to the
    prompt's tool-guidance section, placed in ``guidance_bucket``.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    documentation: ClassVar[str] = ""
    args_model: ClassVar[type[BaseModel]] = NoArgs
    guidance: ClassVar[str] = ""
    guidance_bucket: ClassVar[GuidanceBucket] = "normal"
    concurrency_safe: ClassVar[bool] = False
    # False for tools whose result is only an acknowledgement (a write): when every call of
    # a round is like that, the turn ends without another model round.
    needs_followup: ClassVar[bool] = True

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        raise NotImplementedError

    @classmethod
    def full_doc(cls) -> str:
        """The full documentation: summary, long text, and one line per argument."""
        lines = [f"{cls.name}: {cls.summary}"]
        if cls.documentation:
            lines.append(cls.documentation.strip())
        fields = cls.args_model.model_fields
        if fields:
            lines.append("Arguments:")
            for fname in sorted(fields):
                f = fields[fname]
                ann = f.annotation
                # Generic aliases (list[str]) keep their parameters; plain classes show a name.
                ann_text = (
                    str(ann) if hasattr(ann, "__origin__") else getattr(ann, "__name__", str(ann))
                )
                default = f.get_default(call_default_factory=True)
                req = "required" if f.is_required() else f"optional, default {default!r}"
                desc = f" — {f.description}" if f.description else ""
                lines.append(f"- {fname} ({ann_text}, {req}){desc}")
        return "\n".join(lines)
