"""A turn's default output: the named output that receives the creature's plain text.

Opened when the turn starts (so its metrics count from there), written as text streams,
and reported as typed events: the first spoken words set the creature ``speaking``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from terrarium.controller.guard import ReplyGuard
from terrarium.events import CreatureState, Event, OutputText
from terrarium.llm.base import ChatModel
from terrarium.voice.first_audio import FirstAudioPause, first_audio_pause
from terrarium.voice.sink import OutputSink

__all__ = ["TurnOutput"]


@dataclass(slots=True)
class TurnOutput:
    """The turn's default output: opened on the first text, streamed as it arrives."""

    emit: Callable[[Event], None]
    creature: str
    name: str | None
    sink: OutputSink | None
    utterance: str
    started: bool = False
    spoken: list[str] = field(default_factory=list)
    guard: ReplyGuard | None = None  # checks each sentence before the voice gets it

    @property
    def stopped(self) -> bool:
        """The guard stopped the reply (a loop, a released sentence gone wrong): the model
        need not be read further."""
        return self.guard is not None and self.guard.stopped

    @property
    def settled(self) -> bool:
        """The guard said the reply's fallback before the model's end: the model need not
        be read further (and, unlike ``stopped``, nothing given to the voice is cut)."""
        return self.guard is not None and self.guard.settled

    @property
    def asking(self) -> bool:
        """The guard asks the model again (its reply's rest would copy the user): the
        stream ends, and the model continues what was spoken (``ReplyGuard.ask_from``)."""
        return self.guard is not None and self.guard.asking

    @property
    def stop_reason(self) -> str:
        """Why the guard stopped the reply ("" when it did not)."""
        return self.guard.stop_reason if self.guard is not None else ""

    async def say(self, text: str) -> None:
        """Write the model's text, through the guard when there is one (a sink that can
        synthesize early sees the text first: see ``TTSOutput.preview``; when the guard
        drops a first sentence, it is shown what the guard holds of the next one, which is
        then the first spoken)."""
        if self.guard is None:
            await self.write(text)
            return
        preview = getattr(self.sink, "preview", None) if not self.spoken and self.started \
            else None
        if preview is not None:
            await preview(text)
        checked = self.guard.checked
        out = self.guard.feed(text)
        if preview is not None and not out and self.guard.checked > checked:
            await preview(self.guard.held, again=True)
        await self.write(out)
        if self.guard.take_cut():  # the guard kept the words past it (cuts_piece: the sink can)
            await self.sink.cut_first_piece()  # type: ignore[union-attr]

    async def finish(self) -> list[str]:
        """The reply is over: what the guard still holds is settled (spoken or dropped);
        its notices are returned for the transcript."""
        if self.guard is None:
            return []
        await self.write(self.guard.finish())
        notices, self.guard.notices = self.guard.notices, []
        return notices

    async def open(self) -> None:
        """Open the utterance when the turn starts, so its metrics count from there."""
        if self.sink is not None and not self.started:
            self.started = True
            await self.sink.begin(self.utterance)

    async def write(self, text: str) -> None:
        if not text:
            return
        if self.sink is not None:
            if not self.spoken:
                self.emit(CreatureState(creature=self.creature, state="speaking"))
            await self.sink.write(text)
            self.spoken.append(text)
        if self.name:
            self.emit(OutputText(creature=self.creature, output=self.name, text=text))

    async def drop_unfinished(self) -> str:
        """A reply cut off by the length limit: its sink forgets the unfinished last words
        (a sentence the guard let through from its start first ends at its last clause
        boundary when that makes a sentence: ``ReplyGuard.end_unfinished``)."""
        if self.guard is not None:
            await self.write(self.guard.end_unfinished())
        drop = getattr(self.sink, "drop_unfinished", None)
        return await drop() if drop is not None and self.started else ""

    def first_audio_pause(self, model: ChatModel) -> FirstAudioPause | None:
        """A pause for this round, when the sink asks for one and the model can continue."""
        return first_audio_pause(self.sink, model)
