"""The speaker answers from the note it is handed (session 17, issue 30): which note is said
back, that it is said without the question's words, and that with ``say_note`` it is said at
once, without the model.

Nearness in meaning is set by hand here (the encoder may or may not be loaded in the test
process): each case stands for a kind of miss found on the dev sets, worded apart from them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from recall_helpers import SPEC, UNKNOWN, feed_all, guard

from terrarium.config import load_team
from terrarium.controller import reply_words
from terrarium.controller.assembly import assemble
from terrarium.controller.guard import ReplyGuard, is_echo
from terrarium.controller.incoming import Incoming
from terrarium.controller.loop import Controller
from terrarium.controller.reply_words import misses_named, note_about
from terrarium.controller.said_short import note_first, without_the_question
from terrarium.llm.types import ChatRequest, StreamDelta, Usage

ROOT = Path(__file__).resolve().parents[2]


def _near(values: dict[str, float]) -> object:
    def nearness(question: str, others: Sequence[str]) -> list[float]:
        return [values.get(o, 0.0) for o in others]
    return nearness


def test_a_later_note_that_says_which_one_wins_over_a_first_that_does_not() -> None:
    # both about the class by words; the first says when, not which class
    notes = ["The choir meets on Thursday nights.", "I sing tenor in the cathedral choir."]
    assert note_about("Which choir am I in?", notes) == "I sing tenor in the cathedral choir."


def test_the_first_note_near_in_meaning_comes_before_a_later_one_sharing_a_word(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a later note shares the question's word; the first, recall's best, is about it in
    # meaning only
    notes = ["My pool is the one behind the leisure centre.", "My sister swims every morning."]
    monkeypatch.setattr(reply_words, "nearness", _near({notes[0]: 0.45, notes[1]: 0.30}))
    assert note_about("Where do I swim?", notes) == notes[0]


def test_a_note_somewhat_near_is_said_back_when_none_is_about_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    note = "I had my tonsils out when I was six."
    monkeypatch.setattr(reply_words, "nearness", _near({note: 0.26}))
    assert note_about("What surgery have I had?", [note]) == note
    monkeypatch.setattr(reply_words, "nearness", _near({note: 0.10}))
    assert note_about("What surgery have I had?", [note]) is None  # unrelated: no answer


def test_a_like_alone_is_still_no_answer_however_near(monkeypatch: pytest.MonkeyPatch) -> None:
    note = "I love knitting."
    monkeypatch.setattr(reply_words, "nearness", _near({note: 0.30}))
    assert note_about("What's my favourite board game?", [note]) is None


def test_a_number_asked_is_still_not_answered_by_a_near_note_without_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    note = "My nephew plays the trumpet."
    monkeypatch.setattr(reply_words, "nearness", _near({note: 0.30}))
    assert note_about("How old is my nephew?", [note]) is None


def test_where_asks_a_place_not_a_day_or_a_person() -> None:
    told = "We've booked the party at the Red Lion. It's on Sunday with Aunt Bea."
    assert misses_named("It's on Sunday.", told, "Where is the party?")
    assert misses_named("Aunt Bea is coming.", told, "Where is the party?")
    assert not misses_named("It's at the Red Lion.", told, "Where is the party?")
    assert not misses_named("You booked it at Nonna's.", "I booked a table at Nonna's.",
                            "Where did I book?")
    # no place named after "in", "at", "on" ...: no name is needed ("by the canal")
    assert not misses_named("You run by the canal.", "I run by the canal with Dev.",
                            "Where do I run?")


@pytest.mark.parametrize(("user", "said", "short"), [
    ("What's on for the 4th?", "You've got a dental check-up at the clinic on the 4th.",
     "You've got a dental check-up at the clinic."),
    ("Rehearsals are at what time?", "Choir rehearsals are Mondays at seven.",
     "They are Mondays at seven."),
    ("Who's visiting next week?", "Your godmother is visiting next week.",
     "Your godmother is."),
    ("What's the grey one called?", "A grey one called Pebble.", "Pebble."),
    ("When's the scan?", "The baby's scan is on the 2nd at the hospital.",
     "It is on the 2nd at the hospital."),
])
def test_a_note_said_back_is_said_without_the_question(user: str, said: str,
                                                       short: str) -> None:
    assert is_echo(user, said)  # said whole, it repeats the user
    got = without_the_question(user, said, is_echo)
    assert got == short and not is_echo(user, got)


def test_a_note_that_does_not_repeat_the_question_is_said_whole() -> None:
    said = "You live in Tromsø."
    assert without_the_question("Where do I live?", said, is_echo) == said


def test_the_fallback_says_the_note_without_the_question() -> None:
    g = guard("What's on for the 4th?", "I've got a dental check-up at the clinic on the 4th.")
    got = feed_all(g, "The 4th is a day to remember.")
    assert got == "You've got a dental check-up at the clinic." and not is_echo(g.user, got)


def _say_note(user: str, notes: str) -> ReplyGuard:
    spec = SPEC.model_copy(update={"say_note": True})
    g = ReplyGuard.for_turn(spec, [{"user_said": user, "intent": "question",
                                    "memory_context": notes}])
    assert g is not None
    return g


def test_say_note_answers_with_the_note_at_once() -> None:
    assert _say_note("Where am I from?", "I'm originally from Nairobi.").fixed == (
        "You're originally from Nairobi.")
    # nothing about it: "I don't know that yet." at once, as without say_note
    assert _say_note("What's my dog called?", "I have a cat called Miso.").fixed == UNKNOWN
    # asked without "my", of something told by its words
    assert _say_note("What colour is the van?", "My van's a battered blue Transit.").fixed == (
        "Your van's a battered blue Transit.")
    # not about the user: the model answers
    assert _say_note("What's the capital of Peru?", "I live in Lima.").fixed is None
    # a question of the world with something told in passing: it asks nothing of the user
    assert note_first("How long do cats live? My cat Miso is twelve.",
                      ["My cat Miso is twelve."], is_echo) is None
    # without say_note the model answers first
    assert guard("Where am I from?", "I'm originally from Nairobi.").fixed is None


class _Unasked:
    """A model that must not be asked (counts the requests) and a sink that hears."""

    name = "unasked"
    last_usage: Usage | None = None
    supports_continuation = False

    def __init__(self) -> None:
        self.calls = 0
        self.heard: list[str] = []

    def describe(self) -> str:
        return self.name

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        self.calls += 1
        yield StreamDelta(text="Your name is Bob.")
        yield StreamDelta(finish_reason="stop")

    async def begin(self, utterance_id: str) -> None: ...

    async def write(self, text: str) -> None:
        self.heard.append(text)

    async def end(self) -> None: ...

    async def interrupt(self) -> None:
        return None


def test_the_shipped_speaker_answers_a_question_about_the_user_with_the_note() -> None:
    parts = assemble(load_team(ROOT / "examples" / "voice_assistant"), "speaker")
    spec = parts.loop.reply_guard
    assert spec is not None and spec.say_note
    both = _Unasked()
    payload: dict[str, Any] = {"intent": "question", "user_said": "What is my name?",
                               "recent_conversation": "", "memory_context": "Priya is my name."}

    async def go() -> str:
        ctl = Controller(parts, both, sinks={"tts": both})  # type: ignore[dict-item]
        with anyio.fail_after(10):
            result = await ctl.run_turn([Incoming(text=payload["user_said"],
                                                  channel="to_speaker", sender="router",
                                                  payload=payload)])
        return result.text

    assert anyio.run(go) == "".join(both.heard) == "Priya is your name."
    assert both.calls == 0


def test_a_reply_does_not_take_back_what_it_said() -> None:
    # advice: the told fact is said first; the model's "not sure" after it is not spoken
    g = guard("Suggest a pasta sauce.", "I can't eat garlic, it upsets my stomach.",
              intent="request")
    assert g.advice
    got = feed_all(g, "No, I'm not sure about that. Try a tomato and basil sauce.")
    assert "not sure" not in got and "garlic" in got and "basil" in got
    # a question of the world: an answer, then "I don't know" is not said after it
    g = guard("Can you recommend a board game for two?")
    assert feed_all(g, "Try Patchwork, it is quick. I don't know what you like.") == (
        "Try Patchwork, it is quick.")
    # said first, it is the reply's honest answer, and stays
    g = guard("Can you recommend a board game for two?")
    assert feed_all(g, "I'm not sure what you like.") == "I'm not sure what you like."
