"""Session 19 (issues 30 and 29): a sentence let through from its start whose rest repeats
the user with no clause end to stop at is said without the phrase of the user's words that
makes it an echo; and a start that restates nothing of the user's is let through sooner
(three words, or three of their words left to repeat once it said one of theirs and went on
with its own). Deterministic: the guard alone, with the voice's own segmenter."""

from __future__ import annotations

import pytest

from terrarium.controller.clause_end import clause_end, stands_alone, without_phrase
from terrarium.controller.echo import copies_on, echo_left, safe_start
from terrarium.controller.guard import is_echo, words
from tests.guard_helpers import guard, stream

# the probe's replies (bench/conversation_probe14.py on main's guard: each spoken whole, an
# echo), the user's words, and what is said now
PHRASES = [
    ("What's the best way to get rid of fruit flies in the kitchen?",
     "To get rid of fruit flies in the kitchen, you can use a combination of natural methods.",
     "To get rid of fruit flies, you can use a combination of natural methods."),
    ("Is it okay to drink water that's been left out overnight?",
     "No, it's not okay to drink water that's been left out overnight.",
     "No, it's not okay to drink water."),
    ("What should you do if you burn your hand on the oven?",
     "If you burn your hand on the oven, it's a serious situation that needs attention.",
     "If you burn your hand, it's a serious situation that needs attention."),
    ("Is it bad to crack your knuckles all the time?",
     "It's not bad to crack your knuckles all the time, but it's not a good idea.",
     "It's not bad to crack your knuckles, but it's not a good idea."),
    ("How can you tell pasta is done without a timer?",
     "To determine if pasta is done without a timer, you need to use visual cues.",
     "To determine if pasta is done, you need to use visual cues."),
]


@pytest.mark.parametrize(("user", "reply", "said"), PHRASES)
def test_a_released_echo_with_no_clause_end_is_said_without_the_users_phrase(
        user: str, reply: str, said: str) -> None:
    assert is_echo(user, reply)  # as the model wrote it
    g = guard(user)
    heard = "".join(stream(g, reply))
    assert g.released and reply.startswith(g.released.split()[0])  # let through early
    assert heard == said and not is_echo(user, heard)
    assert any(n.startswith("said without a phrase that repeats the user") for n in g.notices)
    assert not any(n.startswith("spoken although it repeats") for n in g.notices)


def test_the_reply_goes_on_after_a_sentence_said_without_the_phrase() -> None:
    user = "Is it bad to crack your knuckles all the time?"
    reply = ("It's not bad to crack your knuckles all the time, but it's not a good idea. "
             "Stretch your fingers instead.")
    heard = "".join(stream(guard(user), reply))
    assert heard == ("It's not bad to crack your knuckles, but it's not a good idea. "
                     "Stretch your fingers instead.")


def test_with_no_phrase_of_the_users_to_leave_out_an_echo_is_spoken_on_as_before() -> None:
    """No phrase opening with a preposition, a particle, a relative or dependent word holds
    the echo's words ("kept indoors" opens with none), no clause ends before it, and no
    amount comes before "is how …", and the action's words lead on into the reply's own ("a
    few", so no "do that"): the sentence is spoken on, and says so. (Until session 20 the car
    was the example here: "… to cool down a hot car in summer is …" is now said without
    "down a hot car", tests/voice/test_guard_restated_rest.py; until session 22 it ended
    "every two weeks", now said "you should do that every two weeks", test_guard_do_that.)"""
    user = "How often should you water a cactus kept indoors?"
    reply = "Generally speaking you should water a cactus kept indoors a few times a month."
    g = guard(user)
    assert "".join(stream(g, reply)) == reply
    assert any(n.startswith("spoken although it repeats") for n in g.notices)


def test_without_phrase_leaves_out_only_the_users_words_and_never_an_of_phrase() -> None:
    def ok(user: str) -> object:
        return lambda s: not is_echo(user, s)

    user = "How do I get rid of flies in my kitchen?"
    text = "To get rid of flies in my kitchen, open a window."
    given = len("To get rid")
    # "of flies" is no adjunct: "in my kitchen" goes
    assert without_phrase(text, given, words(user), ok(user)) == " of flies, open a window."
    # a phrase holding a word the user never said is kept: nothing to leave out
    other = "To get rid of flies in a kitchen corner, open a window."
    assert without_phrase(other, given, words(user), ok(user)) is None
    # what was given to the voice is never left out
    assert without_phrase(text, len("To get rid of flies in my"), words(user), ok(user)) is None
    # what is left must still stand alone ("No, it's not okay." would not be asked for here)
    assert without_phrase("In the kitchen.", 0, ["in", "the", "kitchen"], lambda s: True) is None


# -- holds (issue 29): a start restating nothing of the user's is let through sooner --------

def test_a_start_that_said_the_users_last_words_or_left_them_is_let_through() -> None:
    """bench/voice.py's two held replies (main held each to its sentence's end): "The
    weather on Mars" repeats four of the user's seven words but has none of theirs left to
    go on with; "Mondays are a wonderful" said "Mondays" and went on with its own words."""
    mars, mondays = "What is the weather like on Mars?", "Say something nice about Mondays."
    assert echo_left(words(mars), words("The weather on Mars")) == 3
    assert not copies_on(words(mars), words("The weather on Mars"))
    assert safe_start(mars, "The weather on Mars ")
    assert safe_start(mondays, "Mondays are a wonderful ")
    # ... already at three words, the voice's whole first piece: "on" comes after "weather"
    # in what the user said, and only "Mars" follows it; "Mondays" is their last word
    assert not copies_on(words(mars), words("The weather on"))
    assert safe_start(mars, "The weather on ") and safe_start(mondays, "Mondays are a ")
    assert not copies_on(words("Tell me a fact about Mars."), words("Mars is a planet"))
    for user, reply in ((mars, "The weather on Mars is quite different from Earth's."),
                        (mondays, "Mondays are a wonderful day of the week, and a fresh start.")):
        g = guard(user)
        outs = stream(g, reply)
        assert "".join(outs) == reply
        first = next(i for i, o in enumerate(outs) if o)  # the delta that let it through
        assert first * 3 < len(reply) // 2 and g.released  # from its start, not at its end


def test_a_start_restating_the_user_is_held_as_before() -> None:
    """"To keep basil alive" goes on "on a windowsill" (the user's next words): held; so is
    a start that said none of the user's words yet with only three of them left."""
    basil = "How do I keep basil alive on a windowsill?"
    assert copies_on(words(basil), words("To keep basil alive"))
    assert not safe_start(basil, "To keep basil alive ")
    assert not safe_start(basil, "To keep basil ")
    assert not safe_start("Should I take an umbrella?", "No, it's not necessary to ")
    assert not safe_start("Should I drink coffee every morning before work?", "You should not ")


def test_three_words_restating_nothing_are_let_through_at_the_third() -> None:
    """"Cats are intelligent" (the voice's whole first piece) waited for a fourth word."""
    user = "Tell me a short fact about cats."
    assert safe_start(user, "Cats are intelligent ")
    assert not safe_start(user, "Cats are intelli")  # a word still being written
    g = guard(user)
    assert g.feed("Cats are ") == ""
    assert g.feed("intelligent ") == "Cats are intelligent "
    assert g.released == "Cats are intelligent"


# -- a main clause has a verb (a sentence ended at a clause) ---------------------------------

def test_a_clause_opening_with_a_determiner_stands_alone_only_with_a_verb() -> None:
    for verbless in ("The ideal amount of time to boil an egg", "The ideal age for a child",
                     "The best way to fall asleep faster"):
        assert not stands_alone(verbless), verbless
    for whole in ("The bins go out on Monday", "The cat sleeps on the mat",
                  "The planet's air is thin", "Add a pinch of salt to the water",
                  "Yes, you should definitely boil an egg", "No, it's not healthy to cycle"):
        assert stands_alone(whole), whole


def test_a_verbless_start_goes_on_and_is_said_without_the_users_phrase() -> None:
    """Main's guard ended it "The best way to fall asleep faster." (no verb)."""
    user = "What's a good way to fall asleep faster at night?"
    reply = "The best way to fall asleep faster at night is to keep the bedroom cool."
    heard = "".join(stream(guard(user), reply))
    assert heard == "The best way to fall asleep faster is to keep the bedroom cool."
    user = "What's a good age for a child to start swimming lessons?"
    reply = "The ideal age for a child to start swimming lessons is about five years old."
    heard = "".join(stream(guard(user), reply))
    assert heard == "The ideal age for a child is about five years old."
    assert not is_echo(user, heard)


def test_a_sentence_never_ends_before_of() -> None:
    """Main's guard said "It's not normal for a baby to sleep most." ("most | of the day")."""
    text = "It's not normal for a baby to sleep most of the"
    assert clause_end(text, len("It's not normal"), lambda s: True) == " for a baby."
