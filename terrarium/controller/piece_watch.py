"""The voice's first piece, as the reply guard gives it a sentence released at its start.

The voice cuts its first piece (a first clause, or a few words: ``SegmenterConfig``) only
once text past the cut has come, so the words after the piece were given to the voice too.
A rest said otherwise could then not begin before them: "The best way to" was the piece of
"The best way to get red wine out of a carpet is ...", but the voice also had "get", so "do
that" (:mod:`.pro_form`) could no longer take the user's action's place. A copy of the
voice's segmenter, fed all the text, tells the guard when the piece is cut and which words
came past it; until then the voice is given whole words only (a word still being written
may be past the cut), and then the piece's end, and told to cut there
(``TTSOutput.cut_first_piece``): the same piece at the same delta, and the voice holds
nothing past it that the guard might yet say otherwise. The words kept back go back to the
guard's held text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from terrarium.voice.segment import SentenceSegmenter
from terrarium.voice.speakable import FenceFilter

__all__ = ["PieceWatch"]

_UNSAFE = frozenset("\n`~")  # a line start or a fence: the voice's fence filter may hold it


@dataclass(slots=True)
class PieceWatch:
    """The voice's segmenter, copied, until its first piece is out."""

    segmenter: SentenceSegmenter
    takes_back: bool = False  # the voice cuts its first piece when told (cut_first_piece)
    fence: FenceFilter = field(default_factory=FenceFilter)
    out: bool = False  # the voice has its first piece
    cut: bool = False  # ... cut where the guard says: the voice is still to be told so
    kept: str = ""  # the end of the text offered last, kept back (it is offered again)

    def give(self, said: str, *, more: bool) -> int:
        """How many characters at the end of ``said`` (offered to the voice now, starting
        with what was kept back last time) are kept back: while the piece is not cut, a
        word still being written; once ``said`` cuts it, the words past it. Only when the
        sentence goes on (``more``) and the voice can be told to cut."""
        if self.out:
            return 0
        new, self.kept = said[len(self.kept):] if said.startswith(self.kept) else said, ""
        self.out = bool(self.segmenter.feed(self.fence.feed(new)))
        if not (more and self.takes_back) or self.fence.in_code:
            return 0
        rest = self.segmenter.pending if self.out else (
            "" if not said or said[-1].isspace() else said.split()[-1])  # a word being written
        if not rest or not said.endswith(rest) or not _UNSAFE.isdisjoint(rest):
            return 0
        self.cut, self.kept = self.out, "" if self.out else rest
        return len(rest)

    def take_cut(self) -> bool:
        """Whether the voice is to cut its first piece now (True once)."""
        cut, self.cut = self.cut, False
        return cut
