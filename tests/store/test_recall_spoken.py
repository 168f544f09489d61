"""Session 16: asks worded otherwise than the developers' sets (issue 30). A spoken question
without its "?" asks all the same (``spoken.punctuated``); "how often" and "how far" ask of
one thing told (``subjects.may_refer``); a bare ask closed by "again" or "then" points back
(``asked.points_back``); a part opening with the verb of a subject named before it stays
with it (``clauses.split``); kin asked together ("my sister's son") are answered by the word
WordNet defines by them ("nephew", ``asked.lacks``), and one kin word by a word of its
definition ("wife": "married"); a part picked for "who" that names no
one is not handed over alone (``clauses.about``, ``forms.asks_person``); a thing's name told
in lower case is no "name asked and none told" (``asked.lacks``). Every sentence is the
test's own."""

from __future__ import annotations

import pytest
from recall_helpers import notes, told

from terrarium.controller.reply_words import asked_about_user
from terrarium.store import MemoryStore, clauses
from terrarium.store.asked import lacks, points_back
from terrarium.store.lexicon import defined_by, lexicon
from terrarium.store.spoken import punctuated
from terrarium.store.subjects import may_refer


@pytest.mark.parametrize(("said", "asked"), [
    ("when's the school concert", "when's the school concert?"),
    ("how much did the new tyres cost", "how much did the new tyres cost?"),
    ("did my sister ring", "did my sister ring?"),
    ("who am I meeting at noon", "who am I meeting at noon?"),
])
def test_a_spoken_question_without_its_mark_is_given_one(said: str, asked: str) -> None:
    assert punctuated(said) == asked


@pytest.mark.parametrize("said", ["when I was small we kept goats",
                                  "what my uncle grows is mostly leeks",
                                  "had a long walk by the canal", "I teach Latin",
                                  "did the weekly shop at the market",
                                  "Where is my hat?", "Fine."])
def test_a_statement_or_a_closed_text_is_left_as_it_is(said: str) -> None:
    assert punctuated(said) == said


def test_an_ask_without_its_mark_or_my_finds_what_was_told() -> None:
    with MemoryStore() as memory:
        told(memory, "The school concert is on Thursday evening.", "I'm repainting the shed.")
        got = notes(memory, "when's the school concert")
        assert got and "Thursday" in got[0]
        assert asked_about_user("when's the school concert", got)


@pytest.mark.parametrize("question", ["How often does the gardener come?",
                                      "How far is the allotment?"])
def test_how_often_and_how_far_ask_of_one_thing(question: str) -> None:
    assert may_refer(question)


def test_how_often_finds_the_statement_of_it() -> None:
    with MemoryStore() as memory:
        told(memory, "The gardener comes every second Tuesday.", "I like jazz.")
        got = notes(memory, "How often does the gardener come?")
        assert got and "Tuesday" in got[0]


@pytest.mark.parametrize("question", ["What time again?", "Which day, then?"])
def test_a_bare_ask_closed_by_again_points_back(question: str) -> None:
    assert points_back(question)


def test_a_bare_ask_again_follows_the_ask_before_it() -> None:
    with MemoryStore() as memory:
        told(memory, "Booked the squash court at the leisure centre.",
             "It's at half six on Friday.", "Where did I book?")
        got = notes(memory, "What time again?")
        assert any("six" in n for n in got)


def test_a_verb_after_an_apposition_stays_with_its_subject() -> None:
    said = "Ines, my old neighbour from Porto, is a midwife now."
    assert clauses.split(said) == (said.rstrip("."),)
    assert "midwife" in clauses.about(said, "What does my old neighbour do these days?")


@pytest.mark.skipif(not lexicon().available, reason="WordNet (wordnet-base) is not installed")
def test_kin_asked_together_is_answered_by_the_word_they_define() -> None:
    # WordNet: a nephew is "a son of your brother or sister"
    assert defined_by("nephew", ["sister's", "son"])
    assert not defined_by("nephew", ["son"])  # one kind alone defines too much
    assert not lacks("What does my sister's son do?", ["My nephew Bram repairs bikes."])
    assert lacks("What does my sister's son do?", ["My dog Bram chases bikes."])


def test_who_asked_keeps_the_part_that_names_someone() -> None:
    said = "Rough shift at the depot, my supervisor Halima sent me home early."
    assert "Halima" in clauses.about(said, "Who's my boss?")


@pytest.mark.skipif(not lexicon().available, reason="WordNet (wordnet-base) is not installed")
def test_a_things_name_told_in_lower_case_is_left_to_the_model() -> None:
    asked = "What's the name of the cream for my eczema?"
    assert not lacks(asked, ["I put hydrocortisone on my eczema every night."])
    assert lacks("What's my uncle's name?", ["My uncle lives in Galway."])  # a person's


@pytest.mark.skipif(not lexicon().available, reason="WordNet (wordnet-base) is not installed")
def test_a_kin_word_is_told_by_a_word_of_its_definition() -> None:
    # WordNet: a wife is "a married woman; a man's partner in marriage"
    assert not lacks("Who is my wife?", ["Marta and I got married last spring."])
    assert lacks("Who is my wife?", ["I have a cat called Marta."])
