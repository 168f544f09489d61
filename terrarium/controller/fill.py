"""``send_fill``: message fields the runtime fills in, so the model never writes them.

Assembly takes the filled fields out of the send call's argument model (the prompt, the
parser and the grammar never ask for them); here they are put back into each message at
send time, from this turn's values, in the channel schema's field order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from terrarium.controller.incoming import Incoming
from terrarium.controller.recall import Recalled
from terrarium.prompt.inputs import ChannelView

__all__ = ["SendFill"]


class SendFill:
    """The filled fields of one creature's sends, and this turn's value of each source."""

    def __init__(self, fills: Mapping[str, Mapping[str, str]],
                 channels: Sequence[ChannelView], sends: Mapping[str, str]) -> None:
        # send call -> field -> source ("input", "recalled", "recent", "facts", "notes")
        self.fills = fills
        views = {c.name: c for c in channels}
        self._field_order = {  # send call -> the channel schema's field order
            call: tuple(f.name for f in views[sends[call]].fields) for call in fills
        }
        self._values: dict[str, str] = {}  # this turn's value of each source

    def __contains__(self, call: str) -> bool:
        return call in self.fills

    def begin_turn(self, inputs: Sequence[Incoming], recalled: Recalled) -> None:
        """Take this turn's values: its inputs verbatim and what memory gave it."""
        if self.fills:
            self._values = {"input": "\n".join(i.search_text for i in inputs),
                            "recalled": " ".join(recalled.matches),
                            "recent": " ".join(recalled.recent),
                            "facts": " ".join(recalled.facts),
                            "notes": " ".join(recalled.notes)}

    def filled(self, call: str, args: dict[str, Any]) -> dict[str, Any]:
        """The full message of a send: the model's fields plus those the runtime fills in,
        in the channel schema's order (receivers show fields in that order)."""
        fill = {f: self._values.get(src, "") for f, src in self.fills[call].items()}
        merged = {**args, **fill}
        return {**{n: merged[n] for n in self._field_order[call] if n in merged}, **merged}

    def written(self, call: str, args: dict[str, Any]) -> dict[str, Any]:
        """A send's arguments as the model wrote them (without the fields filled in)."""
        fill = self.fills.get(call)
        return {k: v for k, v in args.items() if k not in fill} if fill else args
