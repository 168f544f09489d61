"""Issue 30: whether a question asks about the user is read from its form, not from a list
of phrasings: any question that speaks of the user ("I", "me", "my", "we") is about them,
but for advice, how-to and requests for something done. None of these sentences is in a
benchmark set."""

from __future__ import annotations

from terrarium.store.subjects import about_user, asks_advice, mentions_user, relevant, stem


def test_any_question_speaking_of_the_user_is_about_them() -> None:
    for q in ["What do my colleagues call me?",   # "me" as an object
              "Which town was I raised in?",       # no "my"
              "What am I not allowed to eat?",
              "What can't we bring to the party?",  # a negated modal asks a fact
              "Is there anything I mustn't drink?",
              "When do I leave for Spain?",
              "Where will I be staying?",           # plans
              "Do you recall what I study?",
              "Remind me when my train leaves.",
              "Tell me what I said about my aunt.",
              "I want to know my cousin's name.",
              "how tall am i"]:
        assert about_user(q), q


def test_advice_how_to_and_requests_for_something_done_are_not() -> None:
    for q in ["What could I bake for a picnic?",
              "How can I fix a flat tyre?",
              "Can I freeze cooked rice?",
              "Where should we go this summer?",
              "Which shoes do you think I should buy?",
              "Could you help me write a letter to my landlord?",
              "Draw a picture of my house.",
              "Why do I sneeze in the sun?",
              "I'd like some music for my run.",
              "Show me the news.",
              "Give me three tips for a job interview."]:
        assert not about_user(q), q
        assert asks_advice(q) or not mentions_user(q), q


def test_a_requests_own_me_is_not_the_user_spoken_of() -> None:
    assert not mentions_user("Tell me a story.")
    assert not mentions_user("Can you help me?")
    assert mentions_user("Tell me about myself.")
    assert mentions_user("Remind me where we parked.")


def test_stems_meet_across_suffixes_and_a_final_e() -> None:
    assert stem("lives") == stem("lived") == stem("live") == stem("living")
    assert stem("named") == stem("name") == stem("names")
    assert stem("allergies") == stem("allergy")
    assert relevant("My uncle lives in Cork.", "Where does my uncle live?")
