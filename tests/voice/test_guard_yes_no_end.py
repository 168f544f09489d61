"""A yes or no answer released at its start whose rest says the question again is ended
short after its auxiliary (and "not"), or before an infinitive's "to", when that is no
echo (terrarium/controller/yes_no_end.py); when no such end exists it is spoken on as
before."""

from __future__ import annotations

import pytest

from terrarium.controller.echo import is_echo
from terrarium.controller.yes_no_end import yes_no_end
from tests.guard_helpers import guard, stream


@pytest.mark.parametrize("step", [2, 3, 5])
@pytest.mark.parametrize(("user", "reply", "said"), [
    ("Should leather boots worn in the rain be dried near a radiator?",
     "No, leather boots worn in the rain should not be dried near a radiator.",
     "No, leather boots worn in the rain should not."),
    ("Do blueberries bought frozen have as many vitamins as fresh ones?",
     "No, blueberries bought frozen do not have as many vitamins as fresh ones.",
     "No, blueberries bought frozen do not."),
])
def test_a_released_yes_or_no_that_restates_the_question_ends_after_its_verb(
        user: str, reply: str, said: str, step: int) -> None:
    assert is_echo(user, reply) and not is_echo(user, said)
    g = guard(user)
    assert "".join(stream(g, reply, step)).strip() == said
    assert g.released and said.startswith(g.released.strip())
    assert any(n.startswith("said short, a yes or no") for n in g.notices)


@pytest.mark.parametrize(("user", "reply", "said"), [
    ("Do cats kept indoors need vaccines every single year?",
     "No, cats kept indoors do not need vaccines every single year.",
     "No, cats kept indoors do not."),
    ("Can wooden chopping boards be washed in a dishwasher safely?",
     "No, wooden chopping boards can't be washed in a dishwasher safely.",
     "No, wooden chopping boards can't."),
])
def test_a_held_yes_or_no_that_restates_the_question_is_said_short(
        user: str, reply: str, said: str) -> None:
    """Held whole (its start restated the question), it was dropped for "Sorry, I am not
    sure."; now its answer is said, short."""
    g = guard(user)
    assert "".join(stream(g, reply, 3)).strip() == said
    assert any(n.startswith("said without the question it repeats") for n in g.notices)


def test_no_end_past_what_was_heard_leaves_it_spoken_on() -> None:
    """"No, tomatoes grown in pots survive ...": no auxiliary, no "to": as before."""
    user = "Can tomatoes grown in pots on a balcony survive a light frost?"
    reply = "No, tomatoes grown in pots on a balcony survive a light frost in spring."
    g = guard(user)
    out = "".join(stream(g, reply, 3)).strip()
    assert not any(n.startswith("said short") for n in g.notices)
    assert out == reply or not out.startswith("No, tomatoes grown in pots on a balcony survive")


@pytest.mark.parametrize(("text", "spoken", "rest"), [
    ("Yes, it is okay to put hot soup into the freezer.", 15, "."),  # "Yes, it is okay."
    ("No, you don't need a plug adapter in Morocco.", 7, " don't."),
    ("No, leather boots should not be dried.", 17, " should not."),
    ("Leather boots should not be dried.", 5, None),  # no yes or no: not this rule
    ("Yes, you can.", 5, None),  # its own end: nothing to cut
    ("No, is there a rule against eating late at night?", 3, None),  # no subject first
    ("No, don't eat a big meal late at night.", 3, " don't."),  # an imperative may
])
def test_where_it_ends(text: str, spoken: int, rest: str | None) -> None:
    assert yes_no_end(text, spoken, lambda s: True) == rest


def test_an_end_the_guard_refuses_is_not_taken() -> None:
    """The first end that passes the guard's checks is taken; none passing: None."""
    text = "No, you should not be worried that you can not sleep well."
    ends = " you should not be worried that you can not."
    assert yes_no_end(text, 3, lambda s: "can" in s) == ends
    assert yes_no_end(text, 3, lambda s: False) is None
