"""The named-output contract, and the sinks that only write text (stdout, file, memory).

The controller loop calls ``begin`` once per reply, ``write`` for every text delta, ``end``
when the reply is complete, and ``interrupt`` when the user barges in. Every named output
type shares this one contract: ``PrintOutput`` (``stdout``), ``FileOutput`` (``file``) and
``CollectOutput`` (tests) are here; ``TTSOutput`` (``tts``, in ``tts.py``) speaks, and the
first-audio pause it asks for (``FirstPieceSink``) lives beside it in ``first_audio.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TextIO, runtime_checkable

import anyio
from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import VoiceError
from terrarium.events import SpeechCut

__all__ = [
    "CollectOutput",
    "CutReport",
    "FileOutput",
    "FirstPieceSink",
    "OutputSink",
    "PrintOutput",
]


class CutReport(BaseModel):
    """What a barge-in cut, so the log can record what the user did not hear."""

    model_config = ConfigDict(extra="forbid")

    utterance_id: str
    spoken_text: str = Field(description="Sentences played completely before the cut.")
    interrupted_sentence: str | None = Field(
        default=None, description="The sentence that was playing when speech stopped."
    )
    cut_text: list[str] = Field(
        default_factory=list, description="Sentences (and unsegmented text) never played."
    )
    also_cut: list[str] = Field(
        default_factory=list, description="Later utterances that were queued and dropped."
    )

    def as_event(self, creature: str, output: str) -> SpeechCut:
        """The ground event saying this cut of ``creature``'s ``output`` (the log's record)."""
        return SpeechCut(creature=creature, output=output, utterance_id=self.utterance_id,
                         spoken_text=self.spoken_text,
                         interrupted_sentence=self.interrupted_sentence,
                         cut_text=tuple(self.cut_text), also_cut=tuple(self.also_cut))


@runtime_checkable
class OutputSink(Protocol):
    """A named output: receives a reply as it streams."""

    async def begin(self, utterance_id: str) -> None: ...

    async def write(self, text: str) -> None: ...

    async def end(self) -> None: ...

    async def interrupt(self) -> CutReport | None: ...


@runtime_checkable
class FirstPieceSink(Protocol):
    """Optional companion of :class:`OutputSink` for outputs that synthesize speech.

    On a shared CPU the model's decoding slows synthesis of the reply's first piece, which
    is what sets the time to first audio. When ``yield_first_audio`` is true, the controller
    stops reading the model once ``first_piece_pending()`` says the current utterance's first
    piece is queued but not yet synthesized, awaits ``wait_first_piece()``, then continues
    the reply with a continuation request.
    """

    yield_first_audio: bool

    def first_piece_pending(self) -> bool:
        """The current utterance's first piece is queued and not yet synthesized (nor cut)."""
        ...

    async def wait_first_piece(self) -> None:
        """Return once that piece is synthesized; at once if it was cut or nothing waits."""
        ...


class PrintOutput:
    """Writes the streamed text to a text stream or a callback, one line per utterance."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        callback: Callable[[str], None] | None = None,
        prefix: str = "",
    ) -> None:
        self._stream = stream
        self._callback = callback
        self._prefix = prefix
        self._current: str | None = None

    def _emit(self, text: str) -> None:
        if self._callback is not None:
            self._callback(text)
            return
        out = self._stream or sys.stdout
        out.write(text)
        out.flush()

    async def begin(self, utterance_id: str) -> None:
        self._current = utterance_id
        if self._prefix:
            self._emit(self._prefix)

    async def write(self, text: str) -> None:
        if self._current is None:
            raise VoiceError("write() was called before begin(); start an utterance first.")
        self._emit(text)

    async def end(self) -> None:
        if self._current is not None:
            self._emit("\n")
        self._current = None

    async def interrupt(self) -> CutReport | None:
        if self._current is None:
            return None
        report = CutReport(utterance_id=self._current, spoken_text="")
        self._emit(" [cut]\n")
        self._current = None
        return report


class FileOutput:
    """Appends each utterance to a file, one line per utterance."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._buf: list[str] = []

    async def begin(self, utterance_id: str) -> None:
        self._buf = []

    async def write(self, text: str) -> None:
        self._buf.append(text)

    async def end(self) -> None:
        text = "".join(self._buf).strip()
        self._buf = []
        if text:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            async with await anyio.open_file(self.path, "a", encoding="utf-8") as f:
                await f.write(text + "\n")

    async def interrupt(self) -> CutReport | None:
        return None


class CollectOutput:
    """Collects each utterance's text in memory (tests, transcripts)."""

    def __init__(self) -> None:
        self.utterances: dict[str, str] = {}
        self.order: list[str] = []
        self.cut: list[CutReport] = []
        self._current: str | None = None

    @property
    def text(self) -> str:
        """All utterances, one per line, in the order they began."""
        return "\n".join(self.utterances[u] for u in self.order)

    async def begin(self, utterance_id: str) -> None:
        self._current = utterance_id
        self.utterances[utterance_id] = ""
        self.order.append(utterance_id)

    async def write(self, text: str) -> None:
        if self._current is None:
            raise VoiceError("write() was called before begin(); start an utterance first.")
        self.utterances[self._current] += text

    async def end(self) -> None:
        self._current = None

    async def interrupt(self) -> CutReport | None:
        if self._current is None:
            return None
        report = CutReport(utterance_id=self._current, spoken_text=self.utterances[self._current])
        self.cut.append(report)
        self._current = None
        return report
