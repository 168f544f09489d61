"""How a run is set up: the options a caller passes and the restart policy.

Plain data with defaults, read by the wiring, the supervisor and the recorder; nothing
here runs anything.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from terrarium.events import Event
from terrarium.llm.base import ChatModel
from terrarium.llm.server_process import Prestart
from terrarium.tools.approval import Approver
from terrarium.tools.ask import TeamAnswerer

__all__ = ["ROOT", "TRIGGER", "USER", "RuntimeOptions", "Supervision"]

# the two parties that are not team creatures: whoever types, and the optional operator
USER = "user"
ROOT = "root"
# the sender of what triggers deliver (runtime/triggers.py)
TRIGGER = "trigger"


@dataclass(slots=True)
class Supervision:
    """Restart policy: exponential backoff with jitter, then give up."""

    max_failures: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0

    def delay(self, attempt: int) -> float:
        d = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return d * (0.8 + 0.4 * random.random())


@dataclass(slots=True)
class RuntimeOptions:
    """How a run is set up; every field has a sensible default."""

    runs_dir: Path | str = field(default_factory=lambda: Path("runs"))
    resume: str | None = None
    audio: str = "wav"  # wav | device | none
    supervision: Supervision = field(default_factory=Supervision)
    models: Mapping[str, ChatModel] | None = None  # override per creature (tests, demos)
    synthesizer: Any = None  # override the Piper voice (tests)
    send_timeout: float | None = 30.0
    clock: Callable[[], datetime | None] | None = None
    on_event: Callable[[Event], None] | None = None
    # evaluate each creature's prompt prefix and load its voice at start, so the first
    # utterance is as fast as the next ones (llama.cpp prompt cache; Piper's first synthesis)
    warm_up: bool = True
    stdout: Any = None
    # how triggers read the time and wait (runtime/triggers.TriggerTime); tests move it by hand
    trigger_time: Any = None
    # the human, if one is there: who approves the calls a creature's ``approve`` lists
    # (``approve_all`` for --yes) and who answers ``ask_user``. None: nobody, so those
    # calls are refused and questions answered "nobody is there" at once, never a hang.
    approver: Approver | None = None
    answerer: TeamAnswerer | None = None
    # past one machine (runtime/distributed.py): the NATS broker (None: in-memory channels
    # unless the team says ``transport: nats``), which creatures this process hosts (None:
    # all), and the run a worker joins (None: this process starts the run)
    broker: str | None = None
    host: frozenset[str] | None = None
    join: str | None = None
    ack_wait: float = 30.0  # seconds before a dead listener's message goes to another
    prefetch: int = 1  # messages a listener takes from the broker at a time
    publish_window: int = 64  # publishes awaiting their PubAck at once (NatsTransport)
    broker_give_up: float = 60.0  # seconds without the broker before the run ends, saying so
    worker_name: str = ""
    # share the embedded model server with the team's other processes on this machine
    # (runtime/wiring.share_model): None = yes on a broker unless TERRARIUM_SHARE_MODEL=0
    share_model: bool | None = None
    # a session (runtime/sessions.py): each creature's conversation is saved with the
    # message its turn consumed and restored when the run is resumed, so a session picks
    # up where it was (only histories of consumed messages: exactly once, as the messages)
    keep_history: bool = False
    # keep each finished turn's ``TurnResult`` (``TeamRuntime.results``: a one-shot run's
    # report); a served session, loaded for as long as it is used, keeps none
    keep_results: bool = True
    # an embedded model server already started by the caller (``terrarium serve``: one for
    # all its sessions); the run uses it and leaves it running
    embedded: Any = None
    # ``terrarium run``'s head start (llm/server_process.Prestart): the embedded server the
    # team used last time, loading in a child process since the command began; the wiring
    # adopts it if the team asks for that very server, stops it if not, and remembers the
    # server it started for the next run
    prestart: Prestart | None = None
    # where each ``tts`` output's audio goes instead of ``audio`` (a function of the
    # creature's name giving a voice.audio.AudioSink): serve streams it to a socket
    audio_sink: Callable[[str], Any] | None = None
    # an open durable log of ``runs_dir`` to write to instead of opening one (serve: one
    # connection for all its sessions, not one each); the run leaves it open
    log: Any = None
    # with ``log``: a running ``LogWriter`` of it that the run's hub shares (serve: one for
    # every session, so concurrent sessions' writes share a commit)
    log_writer: Any = None
    # False: the run's events are not written to the log by the run itself, because the
    # caller writes each one (serve: numbered, the one row its clients resume from)
    log_events: bool = True
    # a session's run (``terrarium serve``): the session's id, in the run's record on the
    # broker, so ``terrarium worker --sessions`` knows the runs it may join
    session: str | None = None
    # the process that hosts a session whose other creatures run in workers
    # (runtime/remote.py): what they do, read back from the run's log stream, is told here
    # (the session's events), and a message of theirs nobody took for ``remote_wait``
    # seconds is told as ``CreatureWaiting``
    remote_events: Callable[[Event], None] | None = None
    remote_wait: float = 5.0
    # a worker running a session's creature: its output text goes in the log too (each
    # batch's deltas joined), so the session's clients read the reply from the log stream
    log_output_text: bool = False
    # ``terrarium serve``: one ``runtime.gate.TurnGate`` for every session, so at most its
    # limit of turns compute at once and requests are not served behind all of them
    turn_gate: Any = None
