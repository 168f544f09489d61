"""Session 12: advice asked right after the user told something of themselves takes it into
account. A word search cannot link "snack" to "peanuts" or "road trip" to "Fiat", so an
advice ask that no note matches is handed what the user just told of themselves, and a
reply opens with it ("Keep in mind: ..."), then the model's first sentence. Every
sentence here is written apart from the benchmark's sets. Deterministic: an in-memory
store, scripted replies."""

from __future__ import annotations

from recall_helpers import feed_all, guard, notes, told

from terrarium.controller.guard import keep_in_mind
from terrarium.store import MemoryStore


def test_advice_no_word_links_is_handed_what_was_just_told() -> None:
    for said, ask in [("I'm allergic to peanuts.", "Which snack should I pack for the hike?"),
                      ("I drive an old Fiat Panda.", "Any tips for a long road trip?"),
                      ("I'm training for a marathon in April.",
                       "What should I eat before a long run?"),
                      ("I work night shifts at the hospital.", "Any tips for sleeping better?")]:
        with MemoryStore() as memory:
            told(memory, said, "What's the tallest mountain in the world?")
            assert notes(memory, ask) == (said,), ask


def test_advice_is_not_handed_a_name_nor_what_was_told_long_before() -> None:
    with MemoryStore() as memory:
        told(memory, "Hi, I'm Tomasz.")
        assert notes(memory, "What should I cook for lunch?") == ()
    with MemoryStore() as memory:
        told(memory, "I'm diabetic.", "Is Pluto a planet?", "How deep is the sea?",
             "Who wrote Hamlet?")
        assert notes(memory, "Can I have some cake at the party?") == ()


def test_the_told_fact_is_said_first_and_the_models_first_sentence_after_it() -> None:
    g = guard("Which snack should I pack for the hike?", "I'm allergic to peanuts.")
    said = feed_all(g, "Trail mix is a classic choice. It gives you energy.")
    assert said == "Keep in mind: You're allergic to peanuts. Trail mix is a classic choice."
    assert g.settled  # the model need not be read further: two sentences said


def test_a_first_sentence_that_goes_wrong_is_dropped_whole_not_cut() -> None:
    # never released at its start once the told fact is said: "I'm sorry for" is not heard
    # when the sentence goes on to speak as the user ("I'm not equipped ... music")
    g = guard("Can you suggest something to watch tonight?", "I love old westerns.")
    said = feed_all(g, "I'm sorry for any confusion, but I love old westerns too. "
                       "Try The Searchers, a classic.")
    assert said == "Keep in mind: You love old westerns. Try The Searchers, a classic."


def test_no_keep_in_mind_for_questions_about_the_user_or_without_notes() -> None:
    assert keep_in_mind("What am I allergic to?", ["I'm allergic to peanuts."]) == ""
    assert keep_in_mind("How do I boil an egg?", []) == ""
    assert keep_in_mind("What should I cook?", ["Ada is my name."]) == ""
    assert keep_in_mind("Any tips for the drive?", ["My car is an old Fiat."]) == (
        "Keep in mind: Your car is an old Fiat.")
