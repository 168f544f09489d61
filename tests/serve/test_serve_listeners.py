"""A session's listeners (``SessionEvents.listen``): each is told, at publish time, the event
types the object it is a method of ``OBSERVES`` (the metrics: turn ends and utterances;
the audio sockets: sentences and cuts), or every event when it names none; an event is
numbered and written the same whoever listens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from terrarium.channels.log import DurableLog
from terrarium.events import CreatureState, Event, SpeechCut, TurnEnded
from terrarium.runtime.sessions import ensure_session_tables
from terrarium.serve.audio import SessionAudio
from terrarium.serve.events import EventWriter, SessionEvents
from terrarium.serve.metrics import ServeMetrics


class _Turns:
    OBSERVES = (TurnEnded,)

    def __init__(self) -> None:
        self.seen: list[tuple[int, str]] = []

    def observe(self, seq: int, ev: Event) -> None:
        self.seen.append((seq, ev.kind))


def test_each_listener_is_told_the_types_it_observes(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        ensure_session_tables(log)
        run = log.start_run("t")
        events = SessionEvents("s", run, log, EventWriter(log))
        turns, every = _Turns(), []
        events.listen(turns.observe)
        events.listen(lambda seq, ev: every.append((seq, ev.kind)))
        published = [CreatureState(creature="a", state="thinking"),
                     TurnEnded(creature="a", turn_index=1, prompt_tokens=5, cached_tokens=2,
                               completion_tokens=1),
                     CreatureState(creature="a", state="idle")]
        for ev in published:
            assert events.offer(ev) is False
        assert turns.seen == [(2, "turn_ended")]
        assert every == [(1, "creature_state"), (2, "turn_ended"), (3, "creature_state")]
        events.unlisten(turns.observe)  # (a new type's listeners are looked up again too)
        events.offer(TurnEnded(creature="a", turn_index=2))
        assert turns.seen == [(2, "turn_ended")] and every[-1] == (4, "turn_ended")
        assert events.last_seq == 4
        events.writer.flush()
        assert [r[1] for r in log.query("SELECT seq, kind FROM session_events ORDER BY seq")
                ] == ["creature_state", "turn_ended", "creature_state", "turn_ended"]


def test_the_servers_listeners_still_see_what_they_count(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log.sqlite3") as log:
        ensure_session_tables(log)
        events = SessionEvents("s", log.start_run("t"), log, EventWriter(log))
        metrics, audio = ServeMetrics(), SessionAudio()
        events.listen(metrics.observe)
        events.listen(audio.observe)
        cut = SpeechCut(creature="a", output="voice", utterance_id="u1", spoken_text="Hel")
        send, receive = anyio.create_memory_object_stream[Any](4)
        audio.sockets.append(send)
        events.offer(TurnEnded(creature="a", turn_index=1, prompt_tokens=7, cached_tokens=3,
                               completion_tokens=2))
        events.offer(CreatureState(creature="a", state="idle"))
        events.offer(cut)
        assert metrics.prompt == 7 and metrics.cached == 3
        assert receive.receive_nowait() == {"type": "barge_in", "creature": "a",
                                            "spoken_text": "Hel"}
        send.close()
        receive.close()


def test_turn_counters_are_added_at_the_scrape_and_lose_nothing() -> None:
    """A turn's counts wait in plain ints; each scrape adds them to the counters, so two
    scrapes with turns before and between them show every turn and token once."""
    metrics = ServeMetrics()

    def turn(creature: str, prompt: int) -> None:
        metrics.observe(0, TurnEnded(creature=creature, turn_index=1, prompt_tokens=prompt,
                                     cached_tokens=1, completion_tokens=2))

    def sample(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(name, labels)

    turn("a", 10)
    turn("b", 5)
    assert sample("terrarium_turns_total", creature="a") == 0.0  # made, not yet counted
    text = metrics.render().decode()
    assert 'terrarium_turns_total{creature="a"} 1.0' in text
    assert 'terrarium_tokens_total{kind="prompt"} 15.0' in text
    turn("a", 7)
    metrics.render()
    metrics.render()  # nothing new: nothing added twice
    assert sample("terrarium_turns_total", creature="a") == 2.0
    assert sample("terrarium_turns_total", creature="b") == 1.0
    assert sample("terrarium_tokens_total", kind="prompt") == 22.0
    assert sample("terrarium_tokens_total", kind="cached") == 3.0
    assert sample("terrarium_tokens_total", kind="completion") == 6.0
    assert (metrics.prompt, metrics.cached) == (22, 3)
