"""``ask_user``: a question to the human, answered inside the turn.

The tool does not know how to reach a human: the runtime hands it an ``Answerer`` in
``ToolContext.answerer`` (the CLI prompt, the monitor's composer). A run with nobody there
gets a clear result at once instead of a hang, so the model goes on without the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field

from terrarium.tools.base import Answerer, Tool, ToolContext

__all__ = ["NOBODY", "AskUserArgs", "AskUserTool", "TeamAnswerer", "bind_answerer"]

NOBODY = "Nobody is there to answer; continue without it."


class TeamAnswerer(Protocol):
    """The runtime's answerer: like ``Answerer``, told which creature asks (the CLI and the
    monitor show it); ``bind_answerer`` makes one creature's ``Answerer`` of it."""

    async def __call__(self, creature: str, question: str,
                       choices: Sequence[str]) -> str | None: ...


def bind_answerer(answerer: TeamAnswerer, creature: str) -> Answerer:
    """The ``Answerer`` ``creature``'s tools use: ``answerer`` with the name filled in."""

    async def answer(question: str, choices: Sequence[str]) -> str | None:
        return await answerer(creature, question, choices)

    return answer


class AskUserArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000, description="one clear question")
    choices: list[str] = Field(
        default_factory=list, max_length=10, description="suggested answers, if any"
    )


class AskUserTool(Tool):
    name: ClassVar[str] = "ask_user"
    summary: ClassVar[str] = "ask the human a question and wait for the answer"
    documentation: ClassVar[str] = (
        "Shows question (and choices, if given) to the human and returns their answer as "
        "'The user answered: ...'. When nobody can answer, the result says so at once: "
        "then decide yourself and say what you assumed."
    )
    args_model: ClassVar[type[BaseModel]] = AskUserArgs
    guidance: ClassVar[str] = (
        "Ask the user only when you cannot go on without their decision; ask one question "
        "at a time."
    )
    guidance_bucket = "last"
    concurrency_safe: ClassVar[bool] = False

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, AskUserArgs)
        if ctx.answerer is None:
            return NOBODY
        answer = await ctx.answerer(args.question.strip(), tuple(args.choices))
        if answer is None or not answer.strip():
            return "No answer came; continue without it and say what you assumed."
        return f"The user answered: {answer.strip()}"
