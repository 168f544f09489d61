"""Reasoning models write their thinking inside ``<think>…</think>`` in the reply text
(DeepSeek-R1, Qwen3, QwQ on llama.cpp or Ollama); others send it apart as
``reasoning_content``. Either way it is not the reply: it must never reach a channel, an
output or the voice. :class:`ThinkSplitter` separates the two as the text streams, with a
tag that may arrive cut across deltas.
"""

from __future__ import annotations

__all__ = ["THINK_CLOSE", "THINK_OPEN", "ThinkSplitter"]

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


def _partial(text: str, tag: str) -> int:
    """How many trailing characters of ``text`` could begin ``tag`` (kept for the next
    delta rather than shown)."""
    for k in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0


class ThinkSplitter:
    """Feed streamed text; get back (reply text, thinking) for each delta.

    The whitespace a model writes right after ``</think>`` is dropped, so the reply starts
    with its first word.
    """

    def __init__(self) -> None:
        self.inside = False
        self._pending = ""
        self._trim = False  # just after </think>: drop leading whitespace of the reply

    def feed(self, text: str) -> tuple[str, str]:
        s, self._pending = self._pending + text, ""
        reply: list[str] = []
        thought: list[str] = []
        while s:
            tag = THINK_CLOSE if self.inside else THINK_OPEN
            i = s.find(tag)
            if i < 0:
                keep = _partial(s, tag)
                self._pending = s[len(s) - keep:]
                s = s[:len(s) - keep]
                self._add(s, reply, thought)
                break
            self._add(s[:i], reply, thought)
            s = s[i + len(tag):]
            self.inside = not self.inside
            self._trim = not self.inside
        return "".join(reply), "".join(thought)

    def close(self) -> tuple[str, str]:
        """What was held back at the end of the stream (an unfinished tag is text)."""
        rest, self._pending = self._pending, ""
        return ("", rest) if self.inside else (rest, "")

    def _add(self, part: str, reply: list[str], thought: list[str]) -> None:
        if self.inside:
            thought.append(part)
            return
        if self._trim:
            part = part.lstrip()
            if not part:
                return
            self._trim = False
        reply.append(part)
