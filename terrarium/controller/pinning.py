"""Context pinning: the step's context (status, recalled facts, notice) written into history.

Why a history entry rather than a fresh block at the end of every request: the history is
only ever appended to, so each request repeats the previous one byte for byte and the model
server's prompt cache covers all but the new input. A section is pinned again only when its
text changed or when the copy the model saw has been folded away, hence the bookkeeping of
which turn holds each pinned section and which turn the last prompt kept first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from terrarium.prompt.tail import Turn

__all__ = ["ContextPins"]


class ContextPins:
    """Which context sections the conversation holds, and where the last fold cut it."""

    def __init__(self) -> None:
        self.pinned: dict[str, tuple[str, Turn]] = {}  # section → (text, the turn holding it)
        self.first_shown: Turn | None = None  # the oldest turn the last prompt kept unfolded

    def note_fold(self, conversation: Sequence[Turn], folded: int) -> None:
        """Remember where the prompt just built cut the conversation (``folded`` turns)."""
        self.first_shown = conversation[folded] if 0 < folded < len(conversation) else None

    def shown(self, conversation: list[Turn]) -> list[Turn]:
        """The turns the model still sees: the conversation after the last fold."""
        first = self.first_shown
        if first is not None:
            # from the newest back: what the model sees is the context window's worth,
            # the turns before it the whole session's (a Turn is in the list once)
            for i in range(len(conversation) - 1, -1, -1):
                if conversation[i] is first:
                    return conversation[i:]
        return conversation

    def pin(self, conversation: list[Turn], sections: Mapping[str, str], sent: int, *,
            again: bool = False) -> bool:
        """Add to ``conversation`` what of this step's context is new; True if anything was.

        A section (status, recalled facts) is pinned only when its text differs from the
        copy the model still sees, the one-shot notice whenever there is one, and the block
        goes before the newest user message only if that message was never sent (``sent``:
        how many turns a request has already shown); else (a round whose only outcome was a
        notice) at the end. ``again``: after a fold, re-pin only the sections the fold hid.
        """
        shown = self.shown(conversation)
        new: dict[str, str] = {}
        for name, text in sections.items():
            last = self.pinned.get(name)
            if name == "notice":
                if not again:
                    new[name] = text
            elif last is None or last[0] != text or not any(t is last[1] for t in shown):
                new[name] = text
        if not new:
            return False
        turn = Turn("system", "\n\n".join(new.values()))
        end = len(conversation)
        newest_user = max((i for i, t in enumerate(conversation) if t.role == "user"),
                          default=end)
        conversation.insert(newest_user if newest_user >= sent else end, turn)
        for name, text in new.items():
            self.pinned[name] = (text, turn)
        return True
