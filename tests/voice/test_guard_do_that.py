"""A reply that would say the user's action back ("Yes, it is okay to put hot soup straight
into the freezer.") says "do that" in its place when nothing else ends it without an echo
(terrarium/controller/pro_form.py): in a sentence released at its start whose start the
voice has, and in a held sentence that would be dropped."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from terrarium.controller.echo import is_echo
from terrarium.controller.pro_form import do_that, said_as_it
from tests.guard_helpers import guard, stream


def _not_echo(user: str) -> Callable[[str], bool]:
    """The guard's echo check on a sentence, for ``user``'s utterance."""
    return lambda s: not is_echo(user, s)


@pytest.mark.parametrize(("user", "reply", "spoken", "said"), [
    ("Is it okay to put hot soup straight into the freezer?",
     "Yes, it is okay to put hot soup straight into the freezer.", "Yes, it is okay to",
     "Yes, it is okay to do that."),
    ("What's the best way to cook rice?", "The best way to cook rice is to boil it in water.",
     "The best way to", "The best way to do that is to boil it in water."),
    ("Can I freeze cooked rice?", "Yes, you can freeze cooked rice for up to a month.",
     "Yes, you can", "Yes, you can do that for up to a month."),
    ("Should I water a cactus every day?", "No, you should not water a cactus every day.",
     "No, you should", "No, you should not do that."),
    ("Can I eat the seeds of a watermelon?", "Yes, you can eat the seeds of a watermelon.",
     "Yes, you", "Yes, you can do that."),
    ("How often should you water a cactus kept indoors?",
     "Generally speaking you should water a cactus kept indoors every two weeks.",
     "Generally speaking you should", "Generally speaking you should do that every two weeks."),
    ("Should I drink coffee every morning before work?",
     "You shouldn't drink coffee every morning before work.", "", "You shouldn't do that."),
])
def test_the_user_s_action_is_said_as_do_that(user: str, reply: str, spoken: str,
                                               said: str) -> None:
    assert is_echo(user, reply) and not is_echo(user, said)
    assert spoken + (do_that(reply, len(spoken), user, _not_echo(user)) or "") == said


@pytest.mark.parametrize(("user", "reply", "spoken"), [
    # "need", "have", "know" ...: no action; "You don't do that" would change the sense
    ("Do I need a plug adapter in Morocco?", "No, you don't need a plug adapter in Morocco.",
     "No, you"),
    ("Should I know my blood type?", "Yes, you should know your blood type.", "Yes, you"),
    # a preposition's "to": "listen to do that" is no English
    ("Is it good to listen to music while studying?",
     "Yes, it is good to listen to music while studying.", "Yes, it is good to listen"),
    # the action's words lead on into the reply's own: "do that into the fridge"
    ("Is it okay to put hot soup straight into the freezer?",
     "Yes, it is okay to put hot soup into the fridge first.", "Yes, it is okay to"),
    # heard already: what the voice has is never taken back
    ("Is it okay to put hot soup straight into the freezer?",
     "Yes, it is okay to put hot soup straight into the freezer.", "Yes, it is okay to put"),
    # one word of theirs is no echo to take out ("to cook it")
    ("What's the best way to cook rice?", "The best way to cook is slowly.", "The best way to"),
    # no action after their "to", a modal or "I": nothing to name
    ("What is the capital of France?", "The capital of France is Paris.", "The capital"),
])
def test_no_action_to_name_leaves_it_as_it_was(user: str, reply: str, spoken: str) -> None:
    assert do_that(reply, len(spoken), user, _not_echo(user)) is None


def test_a_sentence_still_wrong_with_do_that_is_not_said() -> None:
    user = "Is it okay to put hot soup straight into the freezer?"
    reply = "Yes, it is okay to put hot soup straight into the freezer."
    assert do_that(reply, len("Yes, it is okay to"), user, lambda s: False) is None


@pytest.mark.parametrize("step", [2, 3])
def test_a_released_start_ends_with_do_that_instead_of_the_echo(step: int) -> None:
    """The start "Yes, it is okay to" is heard (released early); no clause end, phrase to
    leave out or short yes-or-no end is left past it: before, the echo was spoken on."""
    user = "Is it okay to put hot soup straight into the freezer?"
    reply = "Yes, it is okay to put hot soup straight into the freezer. Let it cool first."
    g = guard(user)
    out = "".join(stream(g, reply, step)).strip()
    assert not is_echo(user, out)
    assert out.startswith("Yes, it is okay to do that.")
    assert g.released and out.startswith(g.released.strip())
    assert any("'do that'" in n for n in g.notices)


def test_a_verb_past_the_voice_s_first_piece_is_kept_back_and_said_as_do_that() -> None:
    """Given 5 characters at a time, the voice's first piece is cut once "Yes, it is okay to
    p" came: the "p" is kept back (controller/piece_watch.py), so "put" is not the voice's
    yet; a voice that cannot be told where to cut has it, and the echo is spoken on."""
    user = "Is it okay to put hot soup straight into the freezer?"
    reply = "Yes, it is okay to put hot soup straight into the freezer."
    g = guard(user)
    assert "".join(stream(g, reply, 5)).strip() == "Yes, it is okay to do that."
    assert any("'do that'" in n for n in g.notices)
    g = guard(user)
    g.cuts_piece = False
    assert "".join(stream(g, reply, 5)).strip() == reply
    assert not any("'do that'" in n for n in g.notices)


@pytest.mark.parametrize(("user", "reply", "said"), [
    ("Can I freeze cooked rice?", "You can freeze cooked rice for up to a month.",
     "You can do that for up to a month."),
    ("How should I store fresh basil leaves?",
     "You should store fresh basil leaves in a glass of water.",
     "You should do that in a glass of water."),
])
def test_a_held_sentence_says_do_that_instead_of_being_dropped(user: str, reply: str,
                                                               said: str) -> None:
    g = guard(user)
    out = "".join(stream(g, reply, 3)).strip()
    assert out == said
    assert any(n.startswith("said without the question it repeats") for n in g.notices)


# -- the verb heard already: what the user named said as "it" (or "them") -------------------

@pytest.mark.parametrize(("user", "reply", "spoken", "said"), [
    ("Can I use baking soda instead of baking powder in a cake?",
     "Yes, you can use baking soda instead of baking powder in a cake.", "Yes, you can use",
     "Yes, you can use it."),
    ("Should I repot my orchids in the spring?",
     "Yes, you should repot your orchids in the spring every two years.",
     "Yes, you should repot", "Yes, you should repot them every two years."),
    ("Is it okay to wash a wool jumper in the machine?",
     "Yes, it is okay to wash a wool jumper in the machine on a cold cycle.",
     "Yes, it is okay to wash", "Yes, it is okay to wash it on a cold cycle."),
])
def test_a_heard_verb_s_object_is_said_as_it(user: str, reply: str, spoken: str,
                                             said: str) -> None:
    assert is_echo(user, reply) and not is_echo(user, said)
    assert do_that(reply, len(spoken), user, _not_echo(user)) is None  # the verb is heard
    assert spoken + (said_as_it(reply, len(spoken), user, _not_echo(user)) or "") == said


@pytest.mark.parametrize(("user", "reply", "spoken"), [
    # a verb of state: "you don't need it" is another sense
    ("Do I need a plug adapter in Morocco?", "No, you don't need a plug adapter in Morocco.",
     "No, you don't need"),
    # the voice has a word past the verb: nothing of the object can be taken back
    ("Can I use baking soda instead of baking powder in a cake?",
     "Yes, you can use baking soda instead of baking powder in a cake.",
     "Yes, you can use baking"),
    # the verb is not the user's action
    ("Can I use baking soda instead of baking powder in a cake?",
     "Yes, you can try baking soda instead of baking powder in a cake.", "Yes, you can try"),
])
def test_no_it_where_it_would_change_the_sense_or_take_words_back(user: str, reply: str,
                                                                   spoken: str) -> None:
    assert said_as_it(reply, len(spoken), user, _not_echo(user)) is None


def test_the_speaker_says_it_after_a_first_piece_that_holds_the_verb() -> None:
    user = "Can I use baking soda instead of baking powder in a cake?"
    g = guard(user)
    reply = "Yes, you can use baking soda instead of baking powder in a cake. It rises well."
    assert "".join(stream(g, reply, 3)).strip() == "Yes, you can use it. It rises well."
    assert any("'it'" in n for n in g.notices)


def test_a_verb_with_no_object_after_it_gets_no_it() -> None:
    """"No, no need to stop | for a break ...": a phrase, not what the user named."""
    user = "Should I stop for a break before the long drive home?"
    reply = "No, no need to stop for a break before the long drive home."
    assert said_as_it(reply, len("No, no need to stop"), user, _not_echo(user)) is None
