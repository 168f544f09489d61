"""How one input to a turn reaches the model: user text, or a channel message rendered.

By default a channel message is a short header naming the channel and the sender,
``[to_speaker from router]``, then its fields as ``key: value`` lines. A creature may render
a channel's messages with its own template instead (``message_templates``): a small model
often answers a plainly worded message better than a labelled record, which it tends to
describe rather than answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# the header's pattern is the transcript's, in ground: a watcher reads it without the controller
from terrarium.events import INCOMING_HEADER as INCOMING_HEADER

# the compiler lives in prompt so that config can try a template at load (re-exported here)
from terrarium.prompt.templates import CompiledTemplate
from terrarium.prompt.templates import compile_message_template as compile_message_template


def incoming_header(channel: str, sender: str) -> str:
    """The line that marks a channel message and says who sent it.

    Short on purpose: it is evaluated on every message. That channel content is data, not
    instructions, is said once in the cached prompt prefix (the ``output_model`` hint).
    """
    return f"[{channel} from {sender}]"


def render_payload(payload: Mapping[str, Any]) -> str:
    """A message's fields as ``key: value`` lines, in the schema's order.

    Fewer tokens than JSON (no quotes or braces) for the usual flat messages; empty strings
    are left out. Anything a line cannot carry (nested values, line breaks) falls back to JSON.
    """
    flat = all(
        isinstance(v, int | float | bool) or (isinstance(v, str) and "\n" not in v)
        for v in payload.values()
    )
    if not flat:
        return json.dumps(dict(payload), ensure_ascii=False)
    lines = []
    for key, value in payload.items():
        if value == "":
            continue
        text = json.dumps(value) if isinstance(value, bool) else str(value)
        lines.append(f"{key}: {text}")
    return "\n".join(lines)


@dataclass(slots=True)
class Incoming:
    """One input to a turn: user text, or a message that arrived on a channel."""

    text: str
    channel: str | None = None
    sender: str | None = None
    payload: Mapping[str, Any] | None = None
    message_id: str | None = None

    def render(self, template: CompiledTemplate | None = None) -> str:
        """User text as it is; a channel message by ``template``, else header + fields."""
        if self.channel is None:
            return self.text
        if template is not None:
            variables = {**dict(self.payload or {}), "channel": self.channel,
                         "sender": self.sender or "?"}
            return template.render(variables).strip()
        body = render_payload(self.payload or {})
        return incoming_header(self.channel, self.sender or "?") + "\n" + body

    @property
    def search_text(self) -> str:
        """The words worth looking up in memory for this input."""
        if self.payload:
            return " ".join(str(v) for v in self.payload.values() if isinstance(v, str))
        return self.text


__all__ = [
    "INCOMING_HEADER",
    "Incoming",
    "incoming_header",
    "render_payload",
]
