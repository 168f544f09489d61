"""The ``native`` call format: calls travel as the API's ``tool_calls``, never as text.

Its parser therefore passes text straight through; the format instead supplies the JSON
schema function definitions sent with the request (:meth:`NativeFormat.openai_tools`) and
turns each finished tool call from the stream into a validated :class:`CallEvent`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from terrarium.formats.base import (
    CallEvent,
    CallFormat,
    CallSpec,
    ParseEvent,
    StreamParser,
    TextEvent,
)
from terrarium.formats.convert import validate_call, value_to_json
from terrarium.formats.scan import unknown_notice


class PassThroughParser(StreamParser):
    """Everything the model writes as text is text."""

    def feed(self, chunk: str) -> list[ParseEvent]:
        return [TextEvent(chunk)] if chunk else []

    def close(self) -> list[ParseEvent]:
        return []


def openai_tools(specs: Mapping[str, CallSpec] | Iterable[CallSpec]) -> list[dict[str, Any]]:
    """OpenAI ``tools`` entries (sorted by name, so requests are byte-stable)."""
    items = specs.values() if isinstance(specs, Mapping) else specs
    tools: list[dict[str, Any]] = []
    for spec in sorted(items, key=lambda s: s.name):
        schema = spec.args_model.model_json_schema()
        schema.pop("title", None)
        schema.setdefault("properties", {})
        schema.setdefault("additionalProperties", False)
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": schema,
                },
            }
        )
    return tools


@dataclass(slots=True)
class NativeFormat(CallFormat):
    """Function calling through the API."""

    name: ClassVar[str] = "native"
    textual: ClassVar[bool] = False

    def render_call(self, name: str, args: Mapping[str, Any]) -> str:
        """A JSON description of the call (what the API's tool call carries)."""
        arguments = {k: value_to_json(v) for k, v in args.items() if v is not None}
        return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)

    def new_parser(self) -> StreamParser:
        return PassThroughParser()

    def openai_tools(self) -> list[dict[str, Any]]:
        return openai_tools(self.specs)

    def call_from_native(
        self, name: str, arguments: str | Mapping[str, Any] | None, call_id: str | None = None
    ) -> ParseEvent:
        """Validate one finished API tool call (``arguments`` is the JSON string it streamed).

        An unknown name yields a NoticeEvent, like an unknown tag in the text formats.
        """
        spec = self.specs.get(name)
        if spec is None:
            return unknown_notice(name, self.specs)
        if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
            raw: Any = {}
        elif isinstance(arguments, str):
            try:
                raw = json.loads(arguments)
            except json.JSONDecodeError as exc:
                return CallEvent(
                    name,
                    {},
                    error=f"The arguments of call '{name}' are not valid JSON ({exc.msg}).",
                    call_id=call_id,
                )
        else:
            raw = dict(arguments)
        if not isinstance(raw, dict):
            return CallEvent(
                name,
                {},
                error=f"The arguments of call '{name}' must be a JSON object, not {raw!r}.",
                call_id=call_id,
            )
        return validate_call(spec, raw, call_id=call_id)

    def call_from_rendered(self, text: str) -> ParseEvent:
        """Read back :meth:`render_call` output (used for round-trip checks and replays)."""
        data = json.loads(text)
        return self.call_from_native(data["name"], data.get("arguments", {}))

    def syntax_help(self, example_name: str, example_args: Mapping[str, Any]) -> str:
        arguments = json.dumps(
            {k: value_to_json(v) for k, v in example_args.items() if v is not None},
            ensure_ascii=False,
        )
        return (
            "Make calls only through the function-calling interface you were given; a call "
            "written in your reply text is not executed, it is just text. Each call names a "
            "function and passes its arguments as a JSON object, for example the function "
            f"{example_name} with arguments {arguments}. Only the listed functions exist."
        )


__all__ = [
    "NativeFormat",
    "PassThroughParser",
    "openai_tools",
]
