"""A note said back never repeats the user's question (session 20, note20; issue 30): each
shape for which no shorter form avoided the echo before, or the form found dropped the
answer, and the contract when nothing is left to say (None: the caller falls back, never
the echo). Worded apart from the dev sets and ``bench/said_back_forms.py``'s own pairs.
"""

from __future__ import annotations

import pytest
from recall_helpers import SPEC, UNKNOWN, feed_all, guard

from terrarium.controller import said_short
from terrarium.controller.guard import ReplyGuard, is_echo
from terrarium.controller.said_back import closed, second_person
from terrarium.controller.said_short import note_first, note_said_back, without_the_question


def _said(note: str) -> str:
    return closed(second_person(note))


@pytest.mark.parametrize(("user", "note", "short"), [
    # who does it, with a verb other than "is": the note's words before the question's
    ("Who mows the lawn?", "My husband Kwame mows the lawn on Sundays.", "Your husband Kwame."),
    ("Who else, with Kit and Rafe?", "Tilly comes with Kit and Rafe.", "Tilly comes."),
    # a yes or no the note says in the question's words: "Yes," and what it adds
    ("Do I own a kayak?", "I own a kayak called Puffin.", "Yes, called Puffin."),
    ("Is my aunt a nurse?", "My aunt is a nurse in Derry.", "Yes, in Derry."),
    ("Is the fete on Sunday?", "The fete is on Sunday.", "Yes."),
    # the subject the question names is no answer: "Your colleague Ingrid is." was said
    ("What's Ingrid allergic to?",
     "My colleague Ingrid is allergic to kiwi fruit so we skip the fruit salad.",
     "To kiwi fruit so you skip the fruit salad."),
    # the item asked, not the second one that says the question's words again ("Snowy.")
    ("What's the brown one called?",
     "I keep two rabbits, a brown one called Fudge and a white one called Snowy.", "Fudge."),
])
def test_a_note_that_repeats_the_question_is_said_as_its_answer(user: str, note: str,
                                                                short: str) -> None:
    said = _said(note)
    assert is_echo(user, said)  # said whole, it repeats the user
    got = without_the_question(user, said, is_echo)
    assert got == short and not is_echo(user, got)


def test_nothing_left_to_say_is_none_never_the_echo() -> None:
    # every word of the note is the question's: no form says anything of its own
    assert is_echo("Why do you love Leeds?", "You love Leeds.")
    assert without_the_question("Why do you love Leeds?", "You love Leeds.", is_echo) is None


def _no_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """No shorter form at all: what the callers do with a note that can only echo."""
    monkeypatch.setattr(said_short, "_forms", lambda user, sentence, asked: [])


USER, NOTE = "Who feeds the chickens?", "My neighbour Petra feeds the chickens."


def test_with_no_form_the_note_is_not_said_at_once_and_the_model_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert note_first(USER, [NOTE], is_echo) == "Your neighbour Petra."
    _no_form(monkeypatch)
    assert note_said_back(USER, [NOTE], is_echo) is None
    assert note_first(USER, [NOTE], is_echo) is None
    spec = SPEC.model_copy(update={"say_note": True})
    g = ReplyGuard.for_turn(spec, [{"user_said": USER, "intent": "question",
                                    "memory_context": NOTE}])
    assert g is not None and g.fixed is None  # not the echo: the model's answer is judged


def test_with_no_form_the_fallback_says_the_configured_reply(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _no_form(monkeypatch)
    g = guard(USER, NOTE)
    got = feed_all(g, "Feeds the chickens feeds the chickens.")  # an echo: not spoken
    assert got == UNKNOWN and not is_echo(USER, got)
