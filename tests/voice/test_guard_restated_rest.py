"""Session 20 (issue 30): once a sentence has been let through from its start, its rest
must not make the spoken reply an echo, whatever the start was. Each reply below opens with
words of its own (an amount, "For a strong brew", "To determine …"), is let through, and
then restates the question with no clause end before the copy; main's guard spoke each on
whole (an echo). Streamed a word at a time, as the model writes, through the guard with the
voice's own first piece. Deterministic: the guard alone."""

from __future__ import annotations

import re

import pytest

from terrarium.controller.clause_end import stands_alone, without_phrase
from terrarium.controller.guard import is_echo, words
from tests.guard_helpers import SHAPES, guard

_TOKEN = re.compile(r"\s*[A-Za-z0-9]+|\s*[^\sA-Za-z0-9]|\s+$")


def heard(user: str, reply: str) -> tuple[str, list[str], str]:
    """What the guard lets through of ``reply`` fed a word or mark at a time, its notices,
    and the start it let through before the sentence's end."""
    g = guard(user)
    out = []
    for token in _TOKEN.findall(reply):
        out.append(g.feed(token))
        if g.stopped or g.settled:
            break
    out.append(g.finish())
    return "".join(out).strip(), g.notices, g.released




@pytest.mark.parametrize(("user", "reply", "said"), SHAPES)
def test_a_released_start_then_a_rest_that_restates_the_user_is_no_echo(
        user: str, reply: str, said: str) -> None:
    assert is_echo(user, reply)  # as the model wrote it
    got, notices, released = heard(user, reply)
    assert released and reply.startswith(released)  # let through before its end
    assert got == said
    assert not is_echo(user, got) and got.endswith(".")
    assert not any(n.startswith("spoken although it repeats") for n in notices)


def test_the_reply_goes_on_after_the_sentence_said_without_the_copy() -> None:
    user = "What's the quickest way to cool down a hot car in summer?"
    reply = ("The quickest way to cool down a hot car in summer is to open every window. "
             "Then run the fan.")
    assert heard(user, reply)[0] == ("The quickest way to cool in summer is to open every "
                                     "window. Then run the fan.")


def test_a_phrase_of_the_models_own_words_is_never_left_out() -> None:
    """Only the user's words (and "a", "the", "your" …) go: "with salt" stays, and "for a
    soft boiled breakfast" holds words the user never said, so nothing is left out."""
    user = "How long should I boil an egg for a soft yolk?"

    def ok(s: str) -> bool:
        return not is_echo(user, s)

    given = len("Generally you")
    text = "Generally you should boil an egg for a soft yolk with salt."
    assert without_phrase(text, given, words(user), ok) == " should boil an egg with salt."
    text = "Generally you should boil an egg for a soft boiled breakfast."
    assert is_echo(user, text)
    assert without_phrase(text, given, words(user), ok) is None


def test_what_is_left_must_stand_alone() -> None:
    # an amount before a verb is a main clause; before none, or after "how", it is not
    assert stands_alone("About six minutes is plenty")
    assert stands_alone("Once a week is enough")
    assert not stands_alone("About six minutes")
    assert not stands_alone("About the time it takes")
    assert stands_alone("For a strong brew you leave it four minutes")
    assert not stands_alone("For how long it takes")
    assert not stands_alone("To determine how many minutes it takes")
