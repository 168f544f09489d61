"""A small server-sent-events decoder: lines in, complete ``data`` payloads out."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class SSEDecoder:
    """Joins multi-line ``data:`` fields and dispatches an event at each blank line."""

    _data: list[str] = field(default_factory=list)
    event: str = "message"

    def feed_line(self, line: str) -> tuple[str, str] | None:
        """Feed one line (without its newline); returns ``(event, data)`` when one completes."""
        line = line.rstrip("\r")
        if line == "":
            return self.flush()
        if line.startswith(":"):
            return None  # comment / keep-alive
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self.event = value or "message"
        return None

    def flush(self) -> tuple[str, str] | None:
        """Dispatch what has been gathered, if anything (also used at end of stream)."""
        if not self._data:
            self.event = "message"
            return None
        out = (self.event, "\n".join(self._data))
        self._data = []
        self.event = "message"
        return out


__all__ = [
    "SSEDecoder",
]
