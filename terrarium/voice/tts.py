"""The ``tts`` named output: streamed text in, ordered speech out, barge-in aware.

Pipeline, one long-lived service per output::

    write(delta) → fence filter → sentence segmenter → speakable text
        → [synthesis queue] → synthesis worker (a thread per sentence)
        → [playback queue, ordered, bounded] → playback worker → audio sink

``write`` only segments and enqueues, so the model's generation never waits for audio.
Sentences are synthesized in order and played in order; ``interrupt`` stops the sentence
being played, drops everything queued and says what was cut.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType

import anyio
import anyio.abc
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from terrarium.errors import VoiceError
from terrarium.events import (
    Event,
    SentenceQueued,
    SentenceSynthesized,
    SpeechMetrics,
    UtteranceWritten,
)
from terrarium.voice.audio import AudioSink, NullAudioSink, UtteranceAudio, WavFileSink
from terrarium.voice.early import EarlyFirstPiece, EarlyPiece
from terrarium.voice.metrics import UtteranceMetrics
from terrarium.voice.segment import CLOSERS, TERMINATORS, SegmenterConfig, SentenceSegmenter
from terrarium.voice.sink import CutReport
from terrarium.voice.speakable import to_speakable
from terrarium.voice.synth import AudioClip, CallableSynthesizer, Synthesizer
from terrarium.voice.tts_items import (
    QueuedClip,
    QueuedEnd,
    QueuedSentence,
    Utterance,
    UtteranceResult,
)
from terrarium.voice.warmth import Warmth

# What a TTS output tells its ``observer``: the ground events (terrarium.events) themselves,
# named with the creature and output it was made for, which the runtime publishes as they
# come. There is no second vocabulary to translate.
Observer = Callable[[Event], None]

KEEP_CLIPS = 32
"""How many short pieces' audio a TTS output keeps (a few MB at most)."""
KEEP_CLIP_CHARS = 40
"""Only pieces this short are kept: a first piece, a fixed reply, not a whole answer."""
FINISH_WITHIN = 10.0
"""Seconds a clean exit lets the speech still queued finish (a reply of a few sentences on
a sound card); past it, or at once on an error, the rest is cut and the cut recorded."""
CUT_WITHIN = 2.0
"""Seconds the cut itself may take at exit (stopping the sound, closing the WAV file)."""

# ----------------------------------------------------------------------------- the output


class TTSOutput:
    """Speaks a streamed reply. Use as ``async with TTSOutput(...) as tts:``.

    ``synthesizer`` is a :class:`Synthesizer` (default: the shipped Piper voice) or a plain
    ``text -> AudioClip`` callable. Audio goes to ``audio_sink``, else to WAV files in
    ``directory``, else nowhere (durations are still measured). ``yield_first_audio`` asks
    the controller to pause a local model while a reply's first piece is synthesized (see
    :class:`terrarium.voice.sink.FirstPieceSink`). ``synthesize_early`` synthesizes a
    reply's first piece from the model's text (:meth:`preview`) while the reply guard still
    holds it (:mod:`terrarium.voice.early`), once the model's text has
    ``early_after_words`` complete words (the guard's, which the runtime's wiring passes).
    """

    def __init__(
        self,
        synthesizer: Synthesizer | Callable[[str], AudioClip] | None = None,
        audio_sink: AudioSink | None = None,
        *,
        directory: Path | str | None = None,
        segmenter: SegmenterConfig | None = None,
        observer: Observer | None = None,
        sample_rate: int = 22050,
        queue_size: int = 64,
        playback_size: int = 4,
        keep_results: int = 64,
        clock: Callable[[], float] = time.perf_counter,
        yield_first_audio: bool = True,
        synthesize_early: bool = False,
        early_after_words: int = 0,
        creature: str = "",
        output: str = "",
        finish_within: float = FINISH_WITHIN,
    ) -> None:
        if synthesizer is None:
            from terrarium.voice.synth import default_synthesizer

            synthesizer = default_synthesizer()
        if not isinstance(synthesizer, Synthesizer):
            synthesizer = CallableSynthesizer(synthesizer, sample_rate)
        self.synthesizer: Synthesizer = synthesizer
        if audio_sink is None:
            audio_sink = WavFileSink(directory) if directory is not None else NullAudioSink()
        self.audio_sink: AudioSink = audio_sink
        # a sink whose play() returns once the audio is handed on (a socket, nowhere), not
        # once it is heard: a paused reply waits for that, so the first audio is out
        # before the model takes the CPU back (not for a sound card: it would wait a
        # whole sentence)
        self._hands_over = bool(getattr(audio_sink, "hands_over", False))
        self._segmenter_config = segmenter or SegmenterConfig()
        self._observer = observer
        self.creature = creature  # who speaks, and through which output: the events say it
        self.output = output
        self._clock = clock
        self._queue_size = queue_size
        self._playback_size = playback_size
        self._keep = keep_results
        self.yield_first_audio = yield_first_audio
        self.synthesize_early = synthesize_early
        self.early_after_words = early_after_words  # EarlyFirstPiece's after_words
        self.early_counts = [0, 0]  # early first pieces synthesized, and of them spoken
        self.finish_within = finish_within
        self._worker_scopes: list[anyio.CancelScope] = []  # stopped by __aexit__ only
        self._synth_gone = False  # the synthesis worker has stopped: nothing to wait for
        # the audio of short pieces said before, by their text: the runtime's own replies
        # ("Hello! How can I help you today?") and common openings come back often, and a
        # first piece found here is audio at once (Piper: ~100 ms of CPU for three words)
        self._clips: OrderedDict[str, AudioClip] = OrderedDict()

        self._writing: Utterance | None = None
        self._writing_was_cut = False  # late deltas of a cut reply are dropped quietly
        self._active: list[Utterance] = []
        self._known: OrderedDict[str, Utterance] = OrderedDict()
        self._open: Utterance | None = None
        self._play_scope: anyio.CancelScope | None = None
        self._audio_lock = anyio.Lock(fast_acquire=True)  # no extra turn of the loop
        self._warmth = Warmth(self.synthesizer.synthesize, self._clock)
        self._stack: AsyncExitStack | None = None
        self._tg: TaskGroup | None = None
        self._synth_send: MemoryObjectSendStream[QueuedSentence | QueuedEnd] | None = None

    @property
    def sample_rate(self) -> int:
        return self.synthesizer.sample_rate

    @property
    def segmenter_config(self) -> SegmenterConfig:
        """How a reply is cut into pieces (its first piece among them): the reply guard
        gives a sentence released at its start up to its first piece only."""
        return self._segmenter_config

    # --------------------------------------------------------------- service lifetime

    async def __aenter__(self) -> TTSOutput:
        if self._stack is not None:
            raise VoiceError("This TTS output is already running.")
        synth_send, synth_recv = anyio.create_memory_object_stream[QueuedSentence | QueuedEnd](
            self._queue_size
        )
        play_send, play_recv = anyio.create_memory_object_stream[QueuedClip | QueuedEnd](
            self._playback_size
        )
        self._synth_gone = False
        self._worker_scopes = []
        async with AsyncExitStack() as stack:
            tg = await stack.enter_async_context(anyio.create_task_group())
            # started (not start_soon): each worker's scope exists before anything can stop it
            await tg.start(self._shielded, self._synth_worker, synth_recv, play_send)
            await tg.start(self._shielded, self._playback_worker, play_recv)
            self._stack = stack.pop_all()
        self._tg = tg
        self._synth_send = synth_send
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        """On a clean exit, finish speaking what is queued (within ``finish_within``
        seconds); on an error, or past that, stop at once. Either way what was not said is
        cut like a barge-in, so the cut is told and recorded and the WAV file closed.

        Shielded: the runtime ends a run by cancelling its task group and then leaving the
        contexts entered in it, this one among them, so an unshielded wait here would be
        cut at its first await (the last reply's end never queued, its audio never closed)
        and the workers with it; they run in shielded scopes that only this method stops.
        The deadlines keep a stuck sound device from holding the exit for ever.
        """
        stack, self._stack = self._stack, None
        if stack is None:
            return None
        try:
            if exc is None:
                with anyio.CancelScope(shield=True) as scope:
                    scope.deadline = anyio.current_time() + self.finish_within
                    if self._writing is not None:
                        await self.end()
                    await self.drain()
            with anyio.CancelScope(shield=True) as scope:
                scope.deadline = anyio.current_time() + CUT_WITHIN
                await self.interrupt()  # nothing left unless it failed or ran out of time
        finally:
            for worker in self._worker_scopes:
                worker.cancel()
            self._release_first_waiters()
            if self._synth_send is not None:
                self._synth_send.close()
                self._synth_send = None
        return await stack.__aexit__(exc_type, exc, tb)

    async def _shielded(self, worker: Callable[..., Awaitable[None]], *args: object,
                        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
                        ) -> None:
        """Run a worker that outer cancellation cannot stop: only ``__aexit__`` does."""
        with anyio.CancelScope(shield=True) as scope:
            self._worker_scopes.append(scope)
            task_status.started()
            await worker(*args)

    async def warm(self) -> float | None:
        """Load the voice and synthesize a throwaway word, so the first reply is not slower:
        the seconds it took, or None when a reply was being synthesized already. Nothing
        is played or recorded; a reply never comes before it or beside it (``warmth.py``)."""
        return await self._warmth.warm()

    # --------------------------------------------------------------- OutputSink

    async def begin(self, utterance_id: str) -> None:
        """Start an utterance; t0 of its metrics. An unfinished previous one is ended."""
        if self._writing is not None:
            await self.end()
        if utterance_id in self._known:
            raise VoiceError(f"The utterance id {utterance_id!r} was already used.")
        utt = Utterance(
            id=utterance_id,
            t0=self._clock(),
            segmenter=SentenceSegmenter(self._segmenter_config),
            metrics=UtteranceMetrics(utterance_id=utterance_id),
        )
        self._writing = utt
        self._writing_was_cut = False
        self._active.append(utt)
        self._known[utterance_id] = utt
        while len(self._known) > self._keep:
            self._known.popitem(last=False)

    async def write(self, text: str) -> None:
        """Take a streamed text delta; queue any sentence it completes."""
        utt = self._require_writing()
        if utt is None or not text:
            return
        if utt.metrics.time_to_first_token is None:
            utt.metrics.time_to_first_token = self._clock() - utt.t0
        for sentence in utt.segmenter.feed(utt.fence.feed(text)):
            await self._enqueue(utt, sentence)

    async def preview(self, text: str, *, again: bool = False) -> None:
        """Take the model's text before the reply guard has judged it: its first piece is
        synthesized as soon as it is cut, and used if the guard lets the same piece through.
        ``again``: the guard dropped the sentence seen so far, and ``text`` starts the next
        one, whose first piece is the one to make now (the earlier one's audio goes unused)."""
        utt = self._writing
        if (not self.synthesize_early or utt is None or utt.cut or utt.queued
                or self._tg is None or self._synth_gone):
            return
        if utt.early is None or again:
            utt.early = EarlyFirstPiece(self._segmenter_config, self.early_after_words)
        piece = utt.early.feed(text)
        if piece is None:
            return
        if piece.text in self._clips:  # said before: its kept audio is used at once anyway
            return
        self.early_counts[0] += 1
        self._tg.start_soon(self._synth_early, piece)

    async def _synth_early(self, piece: EarlyPiece) -> None:
        """Synthesize an early first piece; a failure is left to the piece's own synthesis."""
        clip: AudioClip | None = None
        try:
            clip = await self._warmth.reply(piece.text)
        except Exception:  # the spoken piece is synthesized again, and reports its error
            clip = None
        finally:
            piece.finish(clip)

    async def end(self) -> None:
        """Flush the remaining text; returns once queued, not when played."""
        utt = self._require_writing()
        self._writing = None
        if utt is None:
            return
        sentences = utt.segmenter.feed(utt.fence.flush()) + utt.segmenter.flush()
        for sentence in sentences:
            await self._enqueue(utt, sentence)
        await self._send(QueuedEnd(utt))

    async def cut_first_piece(self) -> None:
        """Queue what is pending as the first piece now (``controller/piece_watch.py``)."""
        utt = self._require_writing()
        if utt is not None:
            for sentence in utt.segmenter.cut():
                await self._enqueue(utt, sentence)

    async def drop_unfinished(self) -> str:
        """Forget the unfinished last words of the reply being written; return them.

        For a reply the model's length limit cut off mid-sentence: speaking the fragment
        ("It is also very") sounds broken. A last sentence that ends properly is kept.
        """
        utt = self._require_writing()
        if utt is None:
            return ""
        for sentence in utt.segmenter.feed(utt.fence.flush()):
            await self._enqueue(utt, sentence)
        rest = utt.segmenter.pending.strip()
        if not rest or rest.rstrip("".join(CLOSERS))[-1:] in TERMINATORS:
            return ""  # it ends like a sentence: end() speaks it
        utt.segmenter.reset()
        return rest

    async def interrupt(self) -> CutReport | None:
        """Barge-in: stop the sentence playing, drop everything queued, report the cut."""
        victims = [u for u in self._active if not u.cut]
        if not victims:
            return None
        for utt in victims:
            utt.cut = True
            utt.metrics.interrupted = True
        if self._writing is not None and self._writing.cut:
            self._writing = None
            self._writing_was_cut = True
        if self._play_scope is not None:
            self._play_scope.cancel()
        async with self._audio_lock:  # the playback worker has let go of the sink
            audio: UtteranceAudio | None = None
            if self._open is not None and self._open.cut:
                audio = await self.audio_sink.abort()
                primary = self._open
                self._open = None
            else:
                primary = victims[0]
            reports = {u.id: self._cut_report(u) for u in victims}
            report = reports[primary.id].model_copy(
                update={"also_cut": [u.id for u in victims if u is not primary]}
            )
            for utt in victims:
                self._finish(utt, audio if utt is primary else None, reports[utt.id])
        self._emit(report.as_event(self.creature, self.output))
        return report

    # --------------------------------------------------------------- FirstPieceSink

    def first_piece_pending(self) -> bool:
        """The utterance being written has queued its first piece, not yet synthesized."""
        utt = self._writing
        return (
            self._synth_send is not None
            and not self._synth_gone
            and utt is not None
            and not utt.cut
            and bool(utt.queued)
            and not utt.first_synthesized.is_set()
        )

    async def wait_first_piece(self) -> None:
        """Wait until the writing utterance's first piece is audio (or was cut)."""
        utt = self._writing
        if utt is None or self._synth_send is None or self._synth_gone:
            return
        await utt.first_synthesized.wait()

    def _release_first_waiters(self) -> None:
        """Nobody may wait for a synthesis that will not happen (shutdown, a dead worker)."""
        for utt in list(self._known.values()):
            utt.first_synthesized.set()

    # --------------------------------------------------------------- results

    async def wait(self, utterance_id: str) -> UtteranceResult:
        """Wait until an utterance has been played (or cut) and return its result."""
        utt = self._known.get(utterance_id)
        if utt is None:
            raise VoiceError(f"No utterance {utterance_id!r} is known to this TTS output.")
        await utt.done.wait()
        assert utt.result is not None
        return utt.result

    async def drain(self) -> None:
        """Wait until everything queued so far has been played."""
        for utt in list(self._active):
            await utt.done.wait()

    def metrics(self, utterance_id: str) -> UtteranceMetrics:
        """The utterance's metrics so far (complete once :meth:`wait` returns)."""
        utt = self._known.get(utterance_id)
        if utt is None:
            raise VoiceError(f"No utterance {utterance_id!r} is known to this TTS output.")
        return utt.metrics.model_copy()

    # --------------------------------------------------------------- workers

    async def _synth_worker(
        self,
        recv: MemoryObjectReceiveStream[QueuedSentence | QueuedEnd],
        play: MemoryObjectSendStream[QueuedClip | QueuedEnd],
    ) -> None:
        try:
            async with recv, play:
                async for item in recv:
                    await self._synth_one(item, play)
        finally:
            self._synth_gone = True
            self._release_first_waiters()

    async def _synth_one(
        self, item: QueuedSentence | QueuedEnd, play: MemoryObjectSendStream[QueuedClip | QueuedEnd]
    ) -> None:
        if item.utt.cut:
            return
        if isinstance(item, QueuedEnd):
            await play.send(item)
            return
        start = self._clock()
        utt = item.utt
        sent = False
        try:
            clip = self._clips.get(item.text)
            if clip is None:
                clip = await self._early_clip(item)
            if clip is None:
                clip = await self._warmth.reply(item.text)
                self._keep_clip(item.text, clip)
            else:
                self._clips.move_to_end(item.text)
            elapsed = self._clock() - start
            if utt.cut:
                return
            utt.metrics.synth_seconds += elapsed
            utt.metrics.audio_seconds += clip.duration
            self._emit(
                SentenceSynthesized(
                    creature=self.creature,
                    utterance_id=utt.id,
                    index=item.index,
                    text=item.text,
                    synth_ms=elapsed * 1000.0,
                    audio_seconds=clip.duration,
                )
            )
            await play.send(QueuedClip(utt, item.index, item.text, clip))
            sent = True
        finally:
            # after the clip is handed on: the playback worker, woken first, gives it to the
            # audio sink before a paused model's continuation request is made; a sink that
            # hands over (a socket) sets it itself once its audio is out
            if not (sent and self._hands_over):
                utt.first_synthesized.set()

    async def _playback_worker(
        self, recv: MemoryObjectReceiveStream[QueuedClip | QueuedEnd]
    ) -> None:
        async with recv:
            async for item in recv:
                async with self._audio_lock:
                    await self._play_one(item)

    async def _play_one(self, item: QueuedClip | QueuedEnd) -> None:
        utt = item.utt
        if utt.cut:
            return
        if isinstance(item, QueuedEnd):
            audio = await self.audio_sink.finish() if self._open is utt else None
            self._open = None
            self._finish(utt, audio, None)
            return
        if self._open is not utt:
            await self.audio_sink.begin(utt.id, item.clip.sample_rate)
            self._open = utt
        if utt.metrics.time_to_first_audio is None:
            utt.metrics.time_to_first_audio = self._clock() - utt.t0
        utt.playing = item.text
        with anyio.CancelScope() as scope:
            self._play_scope = scope
            try:
                await self.audio_sink.play(item.clip)
            finally:
                self._play_scope = None
                utt.first_synthesized.set()  # a sink that hands over: its audio is out now
        if scope.cancelled_caught or utt.cut:
            return  # interrupt() reports this sentence as interrupted
        utt.playing = None
        utt.played.append(item.text)
        utt.metrics.sentences_played += 1

    # --------------------------------------------------------------- helpers

    async def _early_clip(self, item: QueuedSentence) -> AudioClip | None:
        """The audio synthesized early for this piece (waited for if under way), if any."""
        early = item.utt.early.match(item.index, item.text) if item.utt.early else None
        if early is None:
            return None
        self.early_counts[1] += 1
        await early.done.wait()
        if early.clip is not None:
            self._keep_clip(item.text, early.clip)
        return early.clip

    def _keep_clip(self, text: str, clip: AudioClip) -> None:
        """Keep a short piece's audio for the next time it is said (``KEEP_CLIPS`` pieces
        of at most ``KEEP_CLIP_CHARS`` characters, the least recently said dropped)."""
        if len(text) > KEEP_CLIP_CHARS:
            return
        self._clips[text] = clip
        while len(self._clips) > KEEP_CLIPS:
            self._clips.popitem(last=False)

    def _require_writing(self) -> Utterance | None:
        """The utterance being written; None if it was cut (late deltas are dropped)."""
        if self._writing is not None:
            return self._writing
        if self._writing_was_cut:
            return None
        raise VoiceError("write() or end() was called before begin(); start an utterance first.")

    async def _enqueue(self, utt: Utterance, sentence: str) -> None:
        text = to_speakable(sentence)
        if not text or not any(ch.isalnum() for ch in text):
            return
        index = len(utt.queued)
        utt.queued.append(text)
        utt.metrics.sentences += 1
        if utt.metrics.time_to_first_sentence is None:
            utt.metrics.time_to_first_sentence = self._clock() - utt.t0
        self._emit(SentenceQueued(creature=self.creature, utterance_id=utt.id, index=index,
                                  text=text))
        await self._send(QueuedSentence(utt, index, text))

    async def _send(self, item: QueuedSentence | QueuedEnd) -> None:
        if self._synth_send is None:
            raise VoiceError("The TTS output is not running; use `async with TTSOutput(...)`.")
        await self._synth_send.send(item)

    def _cut_report(self, utt: Utterance) -> CutReport:
        done = len(utt.played) + (1 if utt.playing is not None else 0)
        unplayed = list(utt.queued[done:])
        rest = utt.fence.flush()
        pending = [to_speakable(s) for s in utt.segmenter.feed(rest) + utt.segmenter.flush()]
        unplayed += [s for s in pending if s]
        return CutReport(
            utterance_id=utt.id,
            spoken_text=" ".join(utt.played),
            interrupted_sentence=utt.playing,
            cut_text=unplayed,
        )

    def _finish(self, utt: Utterance, audio: UtteranceAudio | None, cut: CutReport | None) -> None:
        if utt.done.is_set():
            return
        utt.result = UtteranceResult(
            utterance_id=utt.id,
            sentences=list(utt.queued),
            spoken=list(utt.played),
            audio=audio,
            metrics=utt.metrics.model_copy(),
            cut=cut,
        )
        if utt in self._active:
            self._active.remove(utt)
        utt.first_synthesized.set()
        utt.done.set()
        self._emit(
            UtteranceWritten(
                creature=self.creature,
                utterance_id=utt.id,
                path=str(audio.path) if audio and audio.path is not None else None,
                duration=audio.duration if audio else 0.0,
                aborted=cut is not None,
                metrics=SpeechMetrics(**utt.result.metrics.model_dump(exclude={"utterance_id"})),
            )
        )

    def _emit(self, event: Event) -> None:
        if self._observer is not None:
            self._observer(event)


__all__ = ["Observer", "TTSOutput", "UtteranceResult"]
