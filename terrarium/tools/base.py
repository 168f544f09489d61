"""What a tool is: a name, typed arguments, docs for the prompt, and an async body.

The same definition feeds the prompt (index line, full docs, guidance), the call parsers
and the grammar (the argument model), and the controller loop (``run``), so none of them
can drift from the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from terrarium.errors import ToolError

__all__ = ["Answerer", "EffectJournal", "GuidanceBucket", "NoArgs", "Tool", "ToolContext"]

GuidanceBucket = Literal["first", "normal", "last"]


class Answerer(Protocol):
    """Puts a question to the human and waits for the reply (``ask_user``).

    The runtime provides one (the CLI prompt, the monitor's composer); ``None`` as the
    reply means nobody answered (dismissed, or nobody there after all).
    """

    async def __call__(self, question: str, choices: Sequence[str]) -> str | None: ...


class EffectJournal(Protocol):
    """Where a side-effecting tool call's result is kept under its deterministic key, so a
    turn run again after a crash gets the recorded result instead of doing it twice.

    The runtime provides one backed by the durable log; ``None`` (tests, no log): no replay.
    """

    def recorded(self, key: str) -> tuple[bool, str] | None: ...

    def record(self, key: str, creature: str, tool: str, ok: bool, result: str) -> None: ...


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
    # The folder the file and shell tools work in. None: none declared, and the workspace
    # tools (shell, edit, grep, ...) work in ``cwd``; read_file/write_file then keep to
    # their readable/writable paths only, as before workspaces existed.
    workspace: Path | None = None
    # Per-tool options from the creature's ``tool_options`` (tool name -> raw mapping),
    # validated against each tool's ``options_model`` at config load and again at use.
    tool_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Who answers ``ask_user``; None: nobody is there to ask.
    answerer: Answerer | None = None
    # Exactly-once effects: the journal of side-effecting calls, and this call's
    # deterministic key (run, creature, consumed message, place in the turn); None: no replay.
    journal: EffectJournal | None = None
    effect_key: str | None = None

    @property
    def work_dir(self) -> Path:
        """The workspace if one was declared, else the creature's working directory."""
        return self.workspace if self.workspace is not None else self.cwd


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
    # Per-creature settings (``tool_options: {name: {...}}`` in config.yaml); a pydantic
    # model with ``extra="forbid"`` and defaults for every field, or None for no options.
    options_model: ClassVar[type[BaseModel] | None] = None
    # False for tools whose result is only an acknowledgement (a write): when every call of
    # a round is like that, the turn ends without another model round.
    needs_followup: ClassVar[bool] = True
    # True for a tool that changes something outside the conversation which the durable log
    # can guard (memory, files): its result is recorded under the call's key and replayed,
    # not run again, when a crash makes the turn run again. A tool whose effect the log
    # cannot guard (a shell command, a web fetch) keeps False: it runs again on resume.
    side_effects: ClassVar[bool] = False
    # True when running the call twice with the same arguments leaves the same state (a
    # memory write keeps one row per fact; a file written whole). Such a tool is exactly-once
    # even if a crash falls between its effect and the record of its result.
    idempotent: ClassVar[bool] = False

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        raise NotImplementedError

    @classmethod
    def options(cls, ctx: ToolContext) -> Any:
        """This creature's options for the tool (defaults where not configured)."""
        if cls.options_model is None:
            raise ToolError(f"The tool {cls.name} takes no options.")
        raw = ctx.tool_options.get(cls.name, {})
        try:
            return cls.options_model.model_validate(dict(raw))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'options'}: {e['msg']}"
                for e in exc.errors()
            )
            raise ToolError(f"The options for {cls.name} are invalid: {problems}.") from None

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
