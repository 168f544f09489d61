"""Issue 30: recall and the reply guard for questions about the user in any form: notes for
a question without "my", the user's latest statements when the question asks about them
(for advice, only the one just told: tests/voice/test_advice_takes_the_told_fact.py), "I
don't know that yet." with nothing told, and never a chatbot talk to a user who speaks of
themselves. Deterministic: an in-memory store, scripted replies. None of these sentences is
in a benchmark set."""

from __future__ import annotations

from terrarium.store import MemoryStore
from tests.recall_helpers import UNKNOWN, feed_all, guard, notes, told


def test_a_question_without_my_gets_what_the_user_told() -> None:
    with MemoryStore() as memory:
        told(memory, "I'm allergic to shellfish.", "Is it cold outside?")
        # no word of the question in the statement: their latest statement is the note
        assert notes(memory, "What am I not allowed to eat?") == ("I'm allergic to shellfish.",)
        told(memory, "My colleagues know me as Bean.")
        assert notes(memory, "What do my colleagues call me?")[0] == (
            "My colleagues know me as Bean.")


def test_advice_gets_what_is_about_it_or_else_only_what_was_just_told() -> None:
    with MemoryStore() as memory:
        told(memory, "I drive a green Fiat.", "Is it cold outside?", "Who painted the Mona Lisa?",
             "How far is the moon?")
        # told long before, and about nothing the question names: not handed to advice
        assert notes(memory, "What could I bake for a picnic?") == ()
        told(memory, "I'm vegan.")
        assert notes(memory, "What could I cook tonight?") == ("I'm vegan.",)


def test_nothing_told_is_i_dont_know_for_any_question_about_the_user() -> None:
    for q in ["Which town was I raised in?", "What do my colleagues call me?",
              "What am I not allowed to eat?"]:
        assert guard(q).fixed == UNKNOWN, q
    for q in ["How can I fix a flat tyre?", "What could I bake for a picnic?",
              "Could you help me write a letter to my landlord?"]:
        assert guard(q, intent="request").fixed is None, q


def test_a_user_speaking_of_themselves_is_never_told_about_chatbots() -> None:
    g = guard("What do my colleagues call me?", "My colleagues know me as Bean.")
    said = feed_all(g, "You are a chatbot that helps people. I can help you.")
    assert said == "Your colleagues know you as Bean."
    assert any("talks about itself" in n for n in g.notices)
    # advice is not held to the notes, but chatbot talk is still not spoken
    g = guard("What could I cook tonight?", "I'm vegan.")
    assert not g.about_user
    said = feed_all(g, "As an AI assistant, I cannot cook. Try a lentil curry.")
    # (and the advice opens with what it must take into account)
    assert said == "Keep in mind: You're vegan. Try a lentil curry."


def test_said_back_in_the_second_person() -> None:
    g = guard("Which town was I raised in?", "I was raised in Hull.")
    assert feed_all(g, "I'm not sure what you mean by that question.") == (
        "You were raised in Hull.")
