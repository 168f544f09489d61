"""Issue 30, third round: recall and the reply guard for the fresh set's categories of
misses — a correction wins over what it corrects (and over its facts), a question about
something told needs no "my", a reply about the user that names what was never told or takes
the user's job as its own is not spoken, and talk of "the user" is not spoken to them.
Deterministic: an in-memory store, scripted replies. None of these sentences is in a
benchmark set."""

from __future__ import annotations

from terrarium.controller.guard import (
    ReplyGuard,
    answer_only,
    invents,
    second_person,
    speaks_as_user,
)
from terrarium.controller.recall import newest_of_kind
from terrarium.store import MemoryStore
from tests.recall_helpers import SPEC, UNKNOWN, feed_all, guard, notes, told


def test_a_correction_replaces_what_it_corrects_and_its_facts() -> None:
    with MemoryStore() as memory:
        told(memory, "My name is Rob.", "No, sorry, it's Robin.")
        got = notes(memory, "What's my name?")
        assert got[0] == "Robin is my name."
        assert not any("Rob " in n or "Rob." in n for n in got), got
    with MemoryStore() as memory:
        told(memory, "Is it sunny?", "I booked the plumber for eleven.",
             "Oh wait, make that noon.")
        assert notes(memory, "When is the plumber coming?")[0] == (
            "I booked the plumber for noon.")


def test_a_correction_without_one_value_is_the_newer_word_on_its_subject() -> None:
    with MemoryStore() as memory:
        told(memory, "I live in Bruges.", "Actually, I live in Ghent now.")
        got = notes(memory, "Where do I live?")
        assert "Bruges" not in " ".join(got), got
        assert any("Ghent" in n for n in got), got


def test_the_newest_name_wins_among_facts() -> None:
    assert newest_of_kind([(3, "Bo is my name."), (7, "Bob is my name."),
                           (5, "I love tea.")]) == ["Bob is my name.", "I love tea."]
    with MemoryStore() as memory:
        told(memory, "My name is Alfred.", "Call me Alfie.")
        assert notes(memory, "What's my name?")[0] == "Alfie is my name."


def test_a_question_about_something_told_gets_it_without_my() -> None:
    with MemoryStore() as memory:
        told(memory, "Our hamster Nibbles escaped twice.", "Is it windy?")
        assert notes(memory, "What's the hamster called?") == (
            "Our hamster Nibbles escaped twice.",)
        assert notes(memory, "Tell me about hamsters.") == ()
        assert notes(memory, "What do hamsters eat?") == ()


def test_a_question_about_something_told_is_guarded_as_about_the_user() -> None:
    g = guard("What's the hamster called?", "Our hamster Nibbles escaped twice.")
    assert g.about_user
    said = feed_all(g, "The hamster is a small rodent from Syria. It likes seeds.")
    assert said == "Your hamster Nibbles escaped twice."
    assert not guard("What do hamsters eat?").about_user


def test_a_reply_about_the_user_naming_what_was_never_told_is_not_spoken() -> None:
    assert invents("Tom, you were born in Paris.", "My name is Tom.", "Where was I born?")
    assert not invents("Tom, you live in Paris.", "I live in Paris.", "Where do I live?")
    assert invents("You were born in 1975.", "My name is Tom.", "When was I born?")
    g = guard("Where was I born?", "My name is Tom.")
    assert g.fixed == UNKNOWN  # nothing told is about birthplaces: not asked of the model
    g = guard("Where was I born?", "My name is Tom. I grew up by the sea.")
    assert g.fixed is None
    assert feed_all(g, "Tom, you were born in Paris, France.") == "You grew up by the sea."
    g = guard("Where do I work?", "I work at a garage called Fix It.")
    assert feed_all(g, "You work at Fix It in Dublin.") == (
        "You work at a garage called Fix It.")


def test_the_users_job_is_never_the_replys_own() -> None:
    facts = frozenset({"plumber"})
    assert speaks_as_user("Sorry, but as a plumber, I can't say.", facts)
    assert speaks_as_user("Being a plumber, my days are long.", facts)
    assert not speaks_as_user("As a plumber, you must be busy.", facts)
    g = guard("Do you know my star sign?", "I work as a plumber.")
    said = feed_all(g, "Sorry, as a plumber, I can't remember your star sign.")
    assert said == UNKNOWN


def test_talk_of_the_user_is_not_spoken_to_them() -> None:
    g = guard("Remind me when I feed the fish.", "I feed the fish every evening at six.",
              intent="request")
    said = feed_all(g, "The user is asking about feeding the fish, and I feed them daily.")
    assert said == "You feed the fish every evening at six."


def test_a_statement_with_a_tag_question_is_acknowledged_not_answered_unknown() -> None:
    g = ReplyGuard.for_turn(SPEC.model_copy(update={"replies": {"statement": "Noted."}}),
                            [{"user_said": "My uncle turned eighty today, can you believe it?",
                              "intent": "question", "memory_context": ""}])
    assert g is not None and g.fixed == "Noted."


def test_ill_and_id_are_said_back_as_youll_and_youd() -> None:
    assert second_person("I'll be in Rome and I'd like pasta.") == (
        "You'll be in Rome and you'd like pasta.")
    assert second_person("We're moving, our van is full.") == (
        "You're moving, your van is full.")


def test_an_answer_restating_the_question_is_said_without_it() -> None:
    g = guard("What's the longest river in Spain?")
    said = feed_all(g, "The longest river in Spain is the Tagus.")
    assert said == "It is the Tagus."
    g = guard("What's the longest river in Spain?")
    assert feed_all(g, "The longest river in Spain is.") == "Sorry, I am not sure."
    assert answer_only("What's the longest river in Spain?", "Spain has many rivers.") is None
    assert answer_only("What's the longest river in Spain?", "My guess is the Ebro.") is None


def test_who_am_i_is_answered_with_the_name_told() -> None:
    with MemoryStore() as memory:
        told(memory, "Folks call me Dot.", "Is it late?")
        got = notes(memory, "So who am I?")
        g = guard("So who am I?", " ".join(got))
        said = feed_all(g, "You are a person who asks questions.")
        assert "Dot" in said and "you" in said.lower(), said
