"""Issue 30, fourth round: recall that carries the conversation's subject into a follow-up,
and a guard that answers "I don't know that yet." when what was told is about another
thing than asked, and a kind rather than a name. Deterministic: an in-memory store,
scripted replies. None of these sentences is in a benchmark set."""

from __future__ import annotations

from terrarium.store import MemoryStore
from tests.recall_helpers import UNKNOWN, feed_all, guard, notes, told


def test_a_follow_up_that_points_back_gets_the_previous_subject() -> None:
    with MemoryStore() as memory:
        told(memory, "My nephew turns twelve in June.", "Is it warm in June in Spain?",
             "When is my nephew's birthday?")
        assert notes(memory, "How old will he be?") == ("My nephew turns twelve in June.",)
    with MemoryStore() as memory:  # the previous utterance was not about the user
        told(memory, "My nephew turns twelve in June.", "Who wrote Dracula?")
        assert notes(memory, "How old was he then?") == ()


def test_a_follow_up_is_guarded_as_a_question_about_the_user() -> None:
    g = guard("How old will he be?", "My nephew turns twelve in June.")
    assert g.about_user
    assert feed_all(g, "He will be 2024 years old.") == "Your nephew turns twelve in June."
    g = guard("How old will he be?", "My nephew turns twelve in June.")
    assert feed_all(g, "He will be twelve.") == "He will be twelve."
    # no notes handed over: an ordinary question, answered by the model
    assert not guard("How old was he then?").about_user


def test_a_question_about_something_told_by_category_gets_it() -> None:
    with MemoryStore() as memory:
        told(memory, "I've got a beagle called Pickle.", "How often do dogs need walks?")
        assert notes(memory, "What's the dog's name?") == ("I've got a beagle called Pickle.",)
        told(memory, "Our van is a white Ford.")
        assert "Our van is a white Ford." in notes(memory, "What colour is the van?")
    g = guard("What's the dog's name?", "I've got a beagle called Pickle.")
    assert g.about_user
    assert feed_all(g, "The dog's name is Max.") == "You've got a beagle called Pickle."


def test_another_kind_or_subject_than_asked_is_i_dont_know_without_the_model() -> None:
    assert guard("What's my horse called?", "I have a parrot named Polly.").fixed == UNKNOWN
    assert guard("Which country was I born in?", "I work as a chef.").fixed == UNKNOWN
    assert guard("What is my family name?", "Ines is my name. I'm Ines.").fixed == UNKNOWN
    assert guard("What is my family name?", "My name is Ines Moreau.").fixed is None
    assert guard("Which pills am I allergic to?", "Aspirin brings me out in hives.").fixed is None


def test_a_reply_about_another_told_thing_than_asked_is_not_spoken() -> None:
    g = guard("Where does my sister live?", "My sister lives in Porto. I'm a chef.")
    assert feed_all(g, "You're a chef right?") == "Your sister lives in Porto."


def test_a_kind_asked_is_not_answered_with_a_name() -> None:
    g = guard("What kind of pet do I have?", "My parrot Captain is forty.")
    assert feed_all(g, "You have a pet named Captain.") == "Your parrot Captain is forty."
    g = guard("What kind of pet do I have?", "My parrot Captain is forty.")
    assert feed_all(g, "You have a parrot.") == "You have a parrot."


def test_a_number_corrected_with_i_mean_is_the_one_recalled() -> None:
    with MemoryStore() as memory:
        told(memory, "I'm 35.", "Oh, I mean 36, I always forget.")
        got = notes(memory, "How old am I?")
        assert got[0] == "I am 36 years old."
        assert not any("35" in n for n in got)


def test_a_number_told_as_a_word_may_be_said_in_digits_and_back() -> None:
    from terrarium.controller.reply_words import invents, shares_root

    assert not invents("Pia is 6.", "My girls are Pia, who is six, and Lou.", "How old is Pia?")
    assert not invents("You are 47.", "Ravi, forty-seven, builder.", "How old am I?")
    assert invents("You are 48.", "Ravi, forty-seven, builder.", "How old am I?")
    assert shares_root("sunn", "sunny") and not shares_root("car", "carpet")
    assert not shares_root("paint", "painting")  # painting a fence is no painter's job


def test_a_kind_asked_is_not_released_on_a_name_alone() -> None:
    g = guard("What kind of pet do I have?", "My parrot Captain is forty.")
    said = "".join(g.feed(c) for c in "Captain is a cat and he is lovely. ")
    assert said == ""  # not let through at its start: it names, and never says the kind
    assert g.finish() == "Your parrot Captain is forty."


def test_a_number_asked_is_answered_with_a_number() -> None:
    g = guard("How old am I?", "I am 58 years old. I'm Ravi, I'm 58 and I drive a lorry.")
    assert feed_all(g, "You're a lorry driver, right?") == "You are 58 years old."
    g = guard("How many sisters do I have?", "I have three sisters.")
    assert feed_all(g, "You have three sisters.") == "You have three sisters."


def test_a_list_announced_is_judged_whole_not_spoken_from_its_start() -> None:
    g = guard("Any advice for staying awake on night shifts?", intent="question")
    said = "".join(g.feed(c) for c in "Here is some advice for staying awake on night shifts: 1.")
    assert said == ""  # held: the whole sentence repeats the question
    out = said + "".join(g.feed(c) for c in " Drink water and take short walks.") + g.finish()
    assert out == "Drink water and take short walks."


def test_a_follow_up_after_a_question_about_something_told_without_my() -> None:
    with MemoryStore() as memory:
        told(memory, "Our lodger Priti starts her new job in March.",
             "When does Priti start?")
        assert notes(memory, "And how old is she?") == (
            "Our lodger Priti starts her new job in March.",)


def test_the_users_name_alone_does_not_let_an_answer_through_at_its_start() -> None:
    notes_ = "I'm Oskar, I drive a taxi in Graz."
    g = guard("What do I do for a living?", notes_)
    said = "".join(g.feed(c) for c in "You're Oskar, I'm a taxi driver. ")
    assert said == ""  # held whole, then dropped: it speaks as the user
    assert g.finish() == "You're Oskar, you drive a taxi in Graz."
    from terrarium.controller.reply_words import only_their_name

    assert only_their_name("You're Oskar, I", notes_, "What do I do for a living?")
    assert not only_their_name("You're Oskar, you drive a taxi", notes_,
                               "What do I do for a living?")
    assert not only_their_name("You're Oskar,", notes_, "What am I called?")  # the answer


def test_a_place_is_no_name_for_a_name_question() -> None:
    from terrarium.store.asked import lacks

    assert lacks("What is my aunt's name?", ["I have an aunt in Boston."])
    assert not lacks("What is my aunt's name?", ["I have an aunt, Bea, in Boston."])


def test_a_kind_told_at_a_sentence_start_is_no_name() -> None:
    from terrarium.controller.reply_words import names_for_kind

    notes_ = "Rainy mornings make me happy."
    assert not names_for_kind("You like rain.", notes_, "What kind of weather do I like?")
    assert names_for_kind("You like Bob.", notes_, "What kind of weather do I like?")
