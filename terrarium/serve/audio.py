"""The voice socket, ``/v1/sessions/{id}/audio``: speech in, the team's voice out.

The client sends binary frames of 16 kHz mono PCM16 (and may send the text frame
``{"type": "end"}`` where its stream pauses, which flushes an utterance in progress). A
text frame ``{"type": "text", "text": ...}`` is input as typed (as if heard: no VAD, no
transcription), for a client with its own recognizer or none. Speech frames go through
silero-vad and the team's transcription endpoint (``SpeechListener``, as ``terrarium run
--listen`` does) into the session's input; speech starting while the team
talks barges in. The session's ``tts`` outputs play into ``SocketAudioSink`` instead of a
sound card: each utterance is announced with ``{"type": "start", "sample_rate": N}``, then
come ``{"type": "sentence", "text": ..., "first_audio_ms"?: ...}`` and the sentence's
PCM16 as binary frames, then ``{"type": "end"}``; a cut is told as ``{"type": "barge_in"}``.
What the listener heard is told as ``{"type": "heard", "text": ...}``.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from terrarium.errors import TerrariumError
from terrarium.events import Event, SentenceSynthesized, SpeechCut
from terrarium.serve.problems import Problem, refuse_socket

if TYPE_CHECKING:
    import numpy as np

    from terrarium.serve.manager import LiveSession, SessionManager
    from terrarium.voice.audio import UtteranceAudio
    from terrarium.voice.listen import SpeechListener
    from terrarium.voice.synth import AudioClip

__all__ = ["SessionAudio", "SocketAudioSink", "audio_routes", "pump"]

FRAME_BYTES = 16384  # PCM per binary frame sent (about 0.37 s at 22.05 kHz)
QUEUE = 512  # frames a slow client may fall behind before its audio is dropped
Frame = bytes | dict[str, Any]


class SessionAudio:
    """One session's audio sockets: every frame goes to each (a slow one loses frames,
    never slows the team), and the time from a heard utterance to its first audio."""

    OBSERVES = (SentenceSynthesized, SpeechCut)  # what ``observe`` looks at (SessionEvents)

    def __init__(self) -> None:
        self.sockets: list[MemoryObjectSendStream[Frame]] = []
        # when the last utterance was handed to the team (its first audio's frame tells the
        # time since; nothing is kept per utterance: a session talked to for weeks)
        self.heard_at: float | None = None

    def broadcast(self, frame: Frame) -> None:
        for s in list(self.sockets):
            try:
                s.send_nowait(frame)
            except anyio.WouldBlock:
                pass
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self.sockets.remove(s)

    def close(self) -> None:
        """The session stopped (deleted, unloaded, failed): nothing will play, so every
        socket's queue ends, and with it the socket."""
        for s in self.sockets:
            s.close()
        self.sockets.clear()

    def sink(self, creature: str) -> SocketAudioSink:
        return SocketAudioSink(self, creature)

    def observe(self, seq: int, ev: Event) -> None:
        """A ``SessionEvents`` listener: sentences and cuts, as the socket's frames."""
        if isinstance(ev, SentenceSynthesized):
            frame: dict[str, Any] = {"type": "sentence", "text": ev.text,
                                     "creature": ev.creature, "index": ev.index}
            if self.heard_at is not None:
                ms = (time.perf_counter() - self.heard_at) * 1000.0
                frame["first_audio_ms"] = round(ms, 1)
                self.heard_at = None
            self.broadcast(frame)
        elif isinstance(ev, SpeechCut):
            self.broadcast({"type": "barge_in", "creature": ev.creature,
                            "spoken_text": ev.spoken_text})


class SocketAudioSink:
    """A ``tts`` output's audio sink that streams PCM16 to the session's sockets.

    ``play`` returns once the audio is queued for the sockets (``hands_over``): a reply
    paused for its first audio goes on only then, so the first PCM frame leaves before
    the model takes the CPU back (on two cores, measured: 20-35 ms later otherwise)."""

    hands_over = True

    def __init__(self, audio: SessionAudio, creature: str) -> None:
        self.audio = audio
        self.creature = creature
        self._info: UtteranceAudio | None = None

    async def begin(self, utterance_id: str, sample_rate: int) -> None:
        from terrarium.voice.audio import UtteranceAudio

        self._info = UtteranceAudio(utterance_id=utterance_id, sample_rate=sample_rate)
        self.audio.broadcast({"type": "start", "sample_rate": sample_rate,
                              "creature": self.creature, "utterance_id": utterance_id})

    async def play(self, clip: AudioClip) -> None:
        if self._info is None:
            return
        for i in range(0, len(clip.pcm), FRAME_BYTES):
            self.audio.broadcast(clip.pcm[i:i + FRAME_BYTES])
        self._info = self._info.model_copy(
            update={"duration": self._info.duration + clip.duration})

    async def finish(self) -> UtteranceAudio:
        return self._end(aborted=False)

    async def abort(self) -> UtteranceAudio:
        return self._end(aborted=True)

    def _end(self, *, aborted: bool) -> UtteranceAudio:
        from terrarium.voice.audio import UtteranceAudio

        info, self._info = self._info, None
        if info is None:
            info = UtteranceAudio(utterance_id="", sample_rate=0)
        self.audio.broadcast({"type": "end", "creature": self.creature, "aborted": aborted})
        return info.model_copy(update={"aborted": aborted})


async def pump(recv: MemoryObjectReceiveStream[Frame], ws: WebSocket) -> None:
    """Send the frames queued for one socket until the queue is closed. What is queued
    goes out at once, without giving the event loop away between frames (a send yields
    only when the client is behind): a sentence's JSON frame does not make its PCM wait
    while the turn's other tasks (the model's next request) run."""
    async for frame in recv:
        while True:
            if isinstance(frame, bytes):
                await ws.send_bytes(frame)
            else:
                await ws.send_text(json.dumps(frame, ensure_ascii=False))
            try:
                frame = recv.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream):
                break


def _pcm16(data: bytes) -> np.ndarray:
    import numpy as np

    usable = len(data) - len(data) % 2
    return np.frombuffer(data[:usable], dtype="<i2").astype(np.float32) / 32768.0


async def audio_ws(ws: WebSocket) -> None:
    """Speech in (16 kHz mono PCM16), the team's voice out (PCM16 and JSON frames)."""
    m: SessionManager = ws.app.state.manager
    opened = await _open(ws, m)
    if opened is None:
        return
    live, vad = opened
    await ws.accept()
    send, recv = anyio.create_memory_object_stream[Frame](QUEUE)
    live.audio.sockets.append(send)
    live.sockets += 1
    live.inputs -= 1  # the socket holds the session loaded from here
    async def barge_in() -> None:
        rt = live.rt
        if rt is not None:
            await rt.barge_in()

    listener = _listener(m, vad, barge_in)

    async def chunks() -> AsyncIterator[Any]:
        while True:
            msg = await ws.receive()
            if msg["type"] == "websocket.disconnect":
                return
            if msg.get("bytes"):
                yield _pcm16(msg["bytes"])
            elif msg.get("text"):
                data = _frame(msg["text"])
                if isinstance(data, str):  # not a frame this socket takes: say why
                    _tell(send, {"type": "error", "message": data})
                elif data["type"] == "end":
                    yield None  # the client's stream paused: flush the utterance
                else:
                    await give(data["text"])

    async def give(text: str) -> None:
        """An utterance heard (or typed): the session's input, its first audio timed;
        told as heard once taken (a refused one is this socket's error alone)."""
        before, live.audio.heard_at = live.audio.heard_at, time.perf_counter()
        live.inputs += 1
        try:
            await m.send(live, text=text)
        except Problem as p:
            live.audio.heard_at = before
            _tell(send, {"type": "error", "message": p.detail})
            return
        finally:
            live.inputs -= 1
        live.audio.broadcast({"type": "heard", "text": text})

    async def hear(tg: anyio.abc.TaskGroup) -> None:
        try:
            async for text in listener.texts(chunks()):
                await give(text)
        except TerrariumError as exc:  # the transcription server failed: say so, stop
            live.audio.broadcast({"type": "error", "message": exc.message})
            await anyio.sleep(0.1)
        except WebSocketDisconnect:
            pass
        tg.cancel_scope.cancel()

    async def speak(tg: anyio.abc.TaskGroup) -> None:
        await pump(recv, ws)
        tg.cancel_scope.cancel()  # the server is closing the socket

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(hear, tg)
            tg.start_soon(speak, tg)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        if send in live.audio.sockets:
            live.audio.sockets.remove(send)
        send.close()
        recv.close()  # both ends: nothing left for the collector to report
        live.sockets -= 1
        live.touch()
    await _gone(ws, live)


async def _gone(ws: WebSocket, live: LiveSession) -> None:
    """The socket's session stopped (deleted, unloaded): say so rather than just hang up."""
    if live.stopped.is_set():
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            await ws.close(code=1001, reason="the session stopped")


async def _open(ws: WebSocket, m: SessionManager) -> tuple[LiveSession, Any] | None:
    """The socket's session, loaded and held, and a voice activity detector for it; None
    when there is neither (the socket is closed then, with the reason)."""
    try:
        live = await m.load(ws.path_params["session_id"], hold=True)
    except Problem as p:
        await refuse_socket(ws, p)
        return None
    make_vad: Callable[[], Any] = ws.app.state.vad_factory or _silero
    try:
        return live, await anyio.to_thread.run_sync(make_vad)
    except Exception as exc:  # silero-vad missing or broken: say so, hold nothing
        live.inputs -= 1
        await ws.close(code=1011, reason=f"speech in is unavailable: {exc}"[:120])
        return None


def _tell(send: MemoryObjectSendStream[Frame], frame: Frame) -> None:
    """A frame to one socket alone (what its client sent wrong is nobody else's business),
    queued behind what the socket is already sending."""
    with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError,
                             anyio.ClosedResourceError):
        send.send_nowait(frame)


def _frame(text: str) -> dict[str, Any] | str:
    """A text frame the client sent: ``{"type": "end"}`` or ``{"type": "text", "text":
    "..."}``; anything else is the sentence saying what is wrong with it."""
    try:
        data = json.loads(text)
    except ValueError:
        return "a text frame must be JSON: {\"type\": \"text\", \"text\": \"...\"} or " \
               "{\"type\": \"end\"}; speech goes in binary frames (16 kHz mono PCM16)"
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "end":
        return data  # type: ignore[no-any-return]
    if kind == "text":
        said = data.get("text")
        if isinstance(said, str) and said.strip():
            return data  # type: ignore[no-any-return]
        return "a text frame needs \"text\": what was said, not empty"
    return f"unknown frame type {kind!r}: this socket takes \"text\" and \"end\""


def _listener(m: SessionManager, vad: Any,
              on_speech: Callable[[], Awaitable[None]]) -> SpeechListener:
    """Speech in for the team: the VAD's utterances to its transcription server."""
    from terrarium.voice.listen import SpeechListener
    from terrarium.voice.speech_config import TranscriptionSettings
    from terrarium.voice.transcribe import TranscriptionClient
    from terrarium.voice.vad import UtteranceCutter

    settings = m.team.transcription or TranscriptionSettings()
    return SpeechListener(UtteranceCutter(vad, settings.vad), TranscriptionClient(settings),
                          on_speech=on_speech)


def _silero() -> Any:
    from terrarium.voice.vad import SileroVad

    return SileroVad()


def audio_routes() -> list[WebSocketRoute]:
    return [WebSocketRoute("/v1/sessions/{session_id}/audio", audio_ws)]
