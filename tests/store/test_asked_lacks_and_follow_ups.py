"""Issue 30, fourth round: what a question about the user asks for, read from its form —
a follow-up that points back, a question about a kind of thing never told, a kind asked
rather than a name, a number told in passing, work told as a business, a correction with
"I mean". None of these sentences is in a benchmark set."""

from __future__ import annotations

from terrarium.store import extract_facts
from terrarium.store.asked import asks_kind, lacks, points_back
from terrarium.store.corrections import apply_correction, is_correction
from terrarium.store.subjects import akin, refers_to_told, relevant, stem, subject_terms


def test_a_follow_up_points_back_only_by_a_pronoun_and_words_of_asking() -> None:
    for q in ["How old is he now?", "And when is it?", "And what's she called?",
              "Where is it?", "How long has she had it?"]:
        assert points_back(q), q
    for q in ["What time is it?", "What's the weather like there?",  # an "it" of nothing
              "Where do I live?",  # speaks of the user: recalled as such
              "Why is it so cold in winter?", "Is it far?",  # a reason; yes or no
              "What colour is the sky?"]:
        assert not points_back(q), q


def test_a_question_about_something_told_matches_by_its_category() -> None:
    assert refers_to_told("What colour is the van?", ["We bought a white van last year."])
    assert refers_to_told("What is the puppy called?", ["I've got a beagle named Pip."])
    assert refers_to_told("Where is the flight to?", ["I'm flying out on Sunday to Lima."])
    assert refers_to_told("Which road is the house on?", ["Our address is 9 Mill Lane."])
    # a word of its own never told: a question about the world
    assert not refers_to_told("What colour is the ocean?", ["We bought a white van."])
    assert not refers_to_told("What do beagles eat?", ["I've got a beagle named Pip."])
    assert akin(stem("city"), {stem("living")})
    assert not akin(stem("weather"), {stem("living")})


def test_a_kind_of_thing_never_told_cannot_be_answered() -> None:
    assert lacks("What's my horse called?", ["I have a parrot named Polly."])
    assert not lacks("What's my horse called?", ["My pony is called Dusty."])
    assert lacks("What is my husband's name?", ["My sister is called Jill."])
    assert not lacks("Who is my husband?", ["My partner is called Sam."])
    assert not lacks("What is my dog called?", ["I adopted a spaniel, Rolo."])  # a breed


def test_a_known_subject_nothing_told_is_about_cannot_be_answered() -> None:
    assert lacks("Which country was I born in?", ["I teach chemistry.", "I'm a nurse."])
    assert lacks("Where do I work?", ["My name is Ines."])
    assert not lacks("Where do I work?", ["I own a flower shop."])  # a business is work
    assert not lacks("What's my job?", ["I'm an electrician, mostly nights."])
    # nothing of a known subject told: the model may still use it
    assert not lacks("Which pills am I allergic to?", ["Aspirin brings me out in hives."])
    assert not lacks("What am I into these days?", ["I teach chemistry."])


def test_a_surname_needs_one_told() -> None:
    assert lacks("What's my family name?", ["Ines is my name."])
    assert not lacks("What is my last name?", ["I'm Ines Moreau."])
    assert not lacks("What's my surname?", ["My surname is Brandt."])


def test_a_number_told_in_passing_answers_how_old_and_how_many() -> None:
    assert relevant("Ravi here, 58, retired teacher.", "How old am I?")
    assert relevant("There are four of us at home.", "How many of us are there?")
    assert not lacks("How old am I?", ["I'm Ravi, I'm 58 and I love chess."])
    assert [f.sentence for f in extract_facts("I'm Ravi, I'm 58 and I love chess.")][:2] == [
        "Ravi is my name.", "I am 58 years old."]
    assert extract_facts("I'm 5 minutes away.") == []


def test_work_told_as_a_business_or_a_job_name_is_work() -> None:
    assert relevant("I run a little cafe by the station.", "What do I do for a living?")
    assert relevant("Quick one: Ravi, retired teacher.", "What do I do?")
    assert "work" in subject_terms("What do I do?", related=False)
    assert "work" not in subject_terms("What do I do about a leaking tap?", related=False)


def test_a_kind_is_asked_apart_from_a_name() -> None:
    assert asks_kind("What kind of car do I drive?")
    assert asks_kind("Which breed of dog is mine?")
    assert not asks_kind("What is my dog called?")


def test_i_mean_corrects_the_value_just_said() -> None:
    assert is_correction("Oh, I mean 36, I always forget.")
    assert apply_correction("I'm 35.", "Oh, I mean 36, I always forget.") == "I'm 36."
    assert not is_correction("I mean it, thank you.")
    assert not is_correction("I meant to ask you about the weather.")


def test_what_the_user_may_not_have_is_about_avoiding() -> None:
    assert relevant("I can't eat nuts, they make me ill.", "What must I avoid?")
    assert relevant("We don't eat pork.", "What can't we eat?")


def test_a_like_denied_is_a_dislike() -> None:
    assert relevant("I hate olives.", "What don't I like?")
    assert relevant("I don't really like olives.", "What food do I dislike?")
    assert relevant("I'm not a fan of jazz.", "Which music do I hate?")


def test_a_kind_is_told_by_its_own_words_not_by_a_sibling() -> None:
    assert lacks("What's my daughter's name?", ["My son is called Ben."])
    assert not lacks("How many children do I have?", ["I've got two daughters."])
    assert lacks("What's my snake called?", ["I have a ferret named Bo."])
    assert refers_to_told("What make is the car?", ["I drive an old Honda."])
