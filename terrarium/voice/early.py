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
    ``after_words``: complete words of the model's text before it does (0: as soon as the
    piece is cut). The runtime's wiring passes one more than the reply guard's
    ``START_WORDS``: a start the guard can judge is let through after that many, and such
    a reply's first piece is then queued as before, nothing synthesized beside the model
    (on two busy cores Piper beside the model's decoding made those replies' first audio
    later: docs/performance-history.md, Session 10); only a reply the guard goes on holding gains.
    """

    def __init__(self, config: SegmenterConfig, after_words: int = 0) -> None:
        self._after_words = after_words
        self._text = ""  # the model's text so far (its words are counted)
        self._cut: str | None = None  # the first piece, once cut, until enough words came
        self._fence = FenceFilter()
        self._segmenter = SentenceSegmenter(config)
        self._started = False
        self.piece: EarlyPiece | None = None

    def feed(self, text: str) -> EarlyPiece | None:
        """The first piece, once it is cut and the text has ``after_words`` complete
        words (once); None otherwise."""
        if self.piece is not None:
            return None
        if not self._started:
            text = text.lstrip()  # the guard starts a spoken reply at its first word too
            self._started = bool(text)
            if not text:
                return None
        self._text += text
        if self._cut is None:
            for sentence in self._segmenter.feed(self._fence.feed(text)):
                spoken = to_speakable(sentence)
                if spoken and any(ch.isalnum() for ch in spoken):
                    self._cut = spoken
                    break
        # complete words: a word is complete once whitespace follows it
        if self._cut is None or len(self._text.split()) - (not self._text[-1:].isspace()) \
                < self._after_words:
            return None
        self.piece = EarlyPiece(self._cut)
        return self.piece

    def match(self, index: int, text: str) -> EarlyPiece | None:
        """The early piece for the spoken piece ``index`` with this ``text``, if it is one."""
        piece = self.piece
        if index != 0 or piece is None or piece.text != text:
            return None
        piece.used = True
        return piece
