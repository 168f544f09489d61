"""Early synthesis after a dropped first sentence (issue 29, time to first audio): when the
reply guard drops the reply's first sentence, the next one is the first spoken, and its first
piece is synthesized while the guard holds it, as the first one's was. What is spoken never
changes (compared with the same turns without early synthesis). Deterministic: scripted
speaker turns, a fake voice that says which text it made."""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.guard import ReplyGuard
from terrarium.voice import TTSOutput
from tests.early_helpers import WaitingModel, first_piece, speaker_turn

ROOT = Path(__file__).resolve().parents[2]


def piece_of(text: str) -> str:
    piece = first_piece(text)
    assert piece is not None
    return piece


def turn(reply: str, asked: str, *, early: bool, notes: str = "", wanted: str | None = None,
         wait_before: str | None = None) -> tuple[str, list[str], TTSOutput, WaitingModel]:
    """One speaker turn on a question: what the turn said, the clips heard, the output and
    the model."""
    text, _voice, heard, tts, model = speaker_turn(reply, asked, intent="question",
                                                   early=early, notes=notes, wanted=wanted,
                                                   wait_before=wait_before)
    return text, heard.clips, tts, model


DRINK = ("What drink do I like in the morning?", "I love green tea in the morning.",
         "I'm glad you enjoyed my answer! I'm glad to know that your favorite drink is "
         "green tea.")


def test_the_sentence_after_a_dropped_one_is_synthesized_while_the_guard_holds_it() -> None:
    asked, notes, reply = DRINK
    second = "I'm glad to know that your favorite drink is green tea."
    piece = piece_of(second)
    text, clips, tts, model = turn(reply, asked, early=True, notes=notes, wanted=piece,
                                   wait_before="green")
    assert model.made_before is not None and piece in model.made_before  # before "green"
    assert clips[0] == piece and text.startswith(second)
    assert tts.early_counts == [2, 1]  # the dropped one's piece made, never heard


def test_without_a_drop_nothing_is_made_again() -> None:
    asked = "What is the weather like on Mars?"  # held to its end: made early once
    reply = "The weather is cold and dusty on Mars. It has storms too."
    _text, clips, tts, _model = turn(reply, asked, early=True)
    assert clips[0] == piece_of(reply)
    assert tts.early_counts == [1, 1]


CASES = [
    DRINK,
    ("What is my name?", "Hi, my name is Ada.", "I'm glad to help! I'm a chatbot, and"),
    ("Say something nice about Mondays.", "",
     "Say something nice about Mondays. Mondays are a fresh start for the week."),
    ("Say something nice about Mondays.", "",
     "Say something nice. Something nice about Mondays. Mondays are lovely days."),
    ("What is the weather like on Mars?", "",
     "The weather on Mars is cold. The planet's air is thin and dry."),
    ("Tell me a short fact about cats.", "",
     "Cats are intelligent and social animals. They sleep a lot."),
    ("Where do I live?", "I live in Lisbon.",
     "I don't know. You live in a city. You live in Lisbon."),
]


@pytest.mark.parametrize(("asked", "notes", "reply"), CASES)
def test_what_is_spoken_is_the_same_with_and_without_early_synthesis(
        asked: str, notes: str, reply: str) -> None:
    said, clips, _tts, _m = turn(reply, asked, early=True, notes=notes)
    plain, plain_clips, _tts2, _m2 = turn(reply, asked, early=False, notes=notes)
    assert (said, clips) == (plain, plain_clips)


def test_the_guard_s_counts_are_read_only() -> None:
    spec = assemble(load_team(ROOT / "examples" / "voice_assistant"),
                    "speaker").cdef.config.reply_guard
    asked, notes, reply = DRINK
    payload = {"user_said": asked, "intent": "question", "memory_context": notes}
    a, b = ReplyGuard.for_turn(spec, [payload]), ReplyGuard.for_turn(spec, [payload])
    assert a is not None and b is not None
    out_a, out_b = [], []
    for i in range(0, len(reply), 3):
        out_a.append(a.feed(reply[i:i + 3]))
        _ = (a.checked, a.held)  # read between every delta: nothing changes
        out_b.append(b.feed(reply[i:i + 3]))
    assert out_a == out_b and a.finish() == b.finish() and a.notices == b.notices
    assert a.checked == 2 and a.held == ""
