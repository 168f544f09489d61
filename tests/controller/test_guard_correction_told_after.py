"""A correction told just after a statement is part of what was told about the question
(issue 30): the model's answer from the corrected value is spoken, not replaced by the old
value, and an answer from none of it is still dropped."""

from __future__ import annotations

from terrarium.controller.reply_words import about_question
from tests.recall_helpers import feed_all, guard

NOTES = ("My bike is called Rocket. I ride it daily. Sorry, no, Comet, with a C. I keep bees. "
         "I sing in a choir.")
ASK = "What is my bike called?"


def test_a_correction_just_after_a_relevant_sentence_is_about_the_question() -> None:
    told = about_question(NOTES, ASK)
    assert "Rocket" in told and "Comet" in told
    assert "bees" not in told and "choir" not in told  # no correction, of other things


def test_other_sentences_after_it_are_not() -> None:
    notes = "I drive a red van. I keep bees. Sorry, no, it's blue. I sing in a choir."
    assert about_question(notes, "What colour is my van?") == (
        "I drive a red van. Sorry, no, it's blue.")


def test_an_answer_with_the_corrected_value_is_spoken() -> None:
    g = guard(ASK, NOTES)
    said = feed_all(g, "Your bike is called Comet.")
    assert "Comet" in said, g.notices


def test_an_aside_that_opens_with_hesitation_counts_too() -> None:
    notes = "I study in Ghent. Well, I did, since spring it's Leuven."
    g = guard("Which town do I study in now?", notes)
    assert "Leuven" in feed_all(g, "You study in Leuven."), g.notices


def test_an_answer_using_nothing_told_is_still_dropped() -> None:
    said = feed_all(guard(ASK, NOTES), "You're a chatbot designed to help you.")
    assert "chatbot" not in said
