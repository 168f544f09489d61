"""Early synthesis: a reply's first piece synthesized before the reply guard lets it through.

The guard holds the model's text until it can judge it (a first sentence's first words, or
the whole sentence), and the model keeps writing meanwhile. The first piece the voice will
speak is usually known sooner, from the model's own text: :class:`EarlyFirstPiece` cuts it
there with the same segmenter, and the TTS output synthesizes it at once, beside the model.
When the guard lets the text through and its first piece is the same text, that audio is
used; when it is not (a first sentence the guard drops), the audio is thrown away. What is
spoken is never changed: only when its synthesis starts. The first-audio pause is kept
where it was (the first piece let through), even when its audio is ready: a continuation
samples anew, so a pause moved by timing would change the reply's later words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from terrarium.voice.segment import SegmenterConfig, SentenceSegmenter
from terrarium.voice.speakable import FenceFilter, to_speakable
from terrarium.voice.synth import AudioClip

__all__ = ["EarlyFirstPiece", "EarlyPiece"]


@dataclass(eq=False)
class EarlyPiece:
    """One early synthesis: its text, and its audio once done (None: it failed)."""

    text: str
    clip: AudioClip | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    used: bool = False  # the spoken first piece was this text

    def finish(self, clip: AudioClip | None) -> None:
        self.clip = clip
        self.done.set()


class EarlyFirstPiece:
    """The first piece of one reply, cut from the model's text before the guard's.

    Fed the model's raw deltas; :meth:`feed` returns the piece once (its speakable text,
    exactly as the output's own segmenter would cut it from the same words), then nothing.
    """

    def __init__(self, config: SegmenterConfig) -> None:
        self._fence = FenceFilter()
        self._segmenter = SentenceSegmenter(config)
        self._started = False
        self.piece: EarlyPiece | None = None

    def feed(self, text: str) -> EarlyPiece | None:
        """The first piece, when this delta completes it (once); None otherwise."""
        if self.piece is not None:
            return None
        if not self._started:
            text = text.lstrip()  # the guard starts a spoken reply at its first word too
            self._started = bool(text)
            if not text:
                return None
        for sentence in self._segmenter.feed(self._fence.feed(text)):
            spoken = to_speakable(sentence)
            if spoken and any(ch.isalnum() for ch in spoken):
                self.piece = EarlyPiece(spoken)
                return self.piece
        return None

    def match(self, index: int, text: str) -> EarlyPiece | None:
        """The early piece for the spoken piece ``index`` with this ``text``, if it is one."""
        piece = self.piece
        if index != 0 or piece is None or piece.text != text:
            return None
        piece.used = True
        return piece
