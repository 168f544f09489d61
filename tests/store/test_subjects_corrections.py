"""Issue 30, third round: the categories of the fresh set's misses, as rules of form — a
correction's new value, a statement closed by a tag question or telling a plan, a kin word
said as a name, a question about something told without "my", a question of what the user
may not have. None of these sentences is in a benchmark set."""

from __future__ import annotations

from terrarium.store.corrections import apply_correction, correction_value, is_correction
from terrarium.store.subjects import (
    is_statement,
    may_refer,
    mentions_user,
    refers_to_told,
    relevant,
    strip_opening,
    subject_terms,
)


def test_a_correction_puts_its_new_value_in_place_of_the_same_kind_of_word() -> None:
    assert apply_correction("My cousin is called Bert.", "No, sorry, it's Albert.") == (
        "My cousin is called Albert.")
    assert apply_correction("The party starts at eight.", "Oops, make that half past") is None
    assert apply_correction("The party starts at eight.", "Oops, make it ten.") == (
        "The party starts at ten.")
    assert apply_correction("My train leaves at 7:15 on Monday.", "Wait, I meant 8:40.") == (
        "My train leaves at 8:40 on Monday.")
    assert apply_correction("My train leaves on Monday.", "Sorry, I meant Wednesday.") == (
        "My train leaves on Wednesday.")
    assert apply_correction("I painted the shed green.", "Actually, it's yellow.") == (
        "I painted the shed yellow.")


def test_what_is_not_a_correction_of_one_value() -> None:
    assert not is_correction("Well, I like it.")
    assert not is_correction("I actually enjoy rain.")  # the word inside, not opening
    assert is_correction("Actually, I moved to Ghent last year.")
    assert correction_value("Actually, I moved to Ghent last year.") is None
    assert apply_correction("I live in Bruges.", "Actually, I moved to Ghent.") is None
    assert apply_correction("I like tea.", "No, it's nothing.") is None  # no kind to replace


def test_a_statement_closed_by_a_tag_question_or_telling_a_plan_tells() -> None:
    assert is_statement("My uncle turned eighty today, can you believe that?")
    assert is_statement("We bought a canoe, didn't we?")
    assert not is_statement("It's raining, isn't it?")  # asks: not about the user
    assert is_statement("I have to renew my passport next week.")
    assert is_statement("I need to pick up the kids at three.")
    assert not is_statement("I need to know the time.")
    assert not is_statement("I need a taxi.")
    assert strip_opening("Oh, my uncle turned eighty today, can you believe that?") == (
        "My uncle turned eighty today.")


def test_a_kin_word_said_as_a_name_speaks_of_the_user() -> None:
    assert mentions_user("When does grandpa arrive?")
    assert mentions_user("Is mum coming for dinner?")
    assert not mentions_user("Is your dad a farmer?")
    assert not mentions_user("What did the dad say in the film?")


def test_a_question_about_something_told_need_not_say_my() -> None:
    told = ["Our hamster Nibbles escaped twice.", "I booked the vet for Tuesday."]
    assert refers_to_told("What's the hamster called?", told)
    assert refers_to_told("When is the vet?", told)
    assert refers_to_told("Which day is the vet again?", told)
    assert not refers_to_told("Tell me about hamsters.", told)  # a request, not a wh-question
    assert not refers_to_told("What do hamsters eat?", told)  # "eat" was never told
    # told without "my", every word of the question in it: still what the user told
    # (session 10: "The car's service is due in May." is theirs); a word never told is not
    assert refers_to_told("When is the vet?", ["The vet is on Tuesday."])
    assert not refers_to_told("When is the dentist?", ["The vet is on Tuesday."])
    assert not may_refer("What is it called?")  # nothing it is about


def test_a_question_of_what_the_user_may_not_have_is_about_what_they_avoid() -> None:
    assert "avoid" in subject_terms("What mustn't I drink?", related=False)
    assert relevant("I'm intolerant to gluten.", "What can't I have?")
    assert not relevant("I'm intolerant to gluten.", "What can I have?")


def test_new_categories_link_a_question_to_what_was_told() -> None:
    assert relevant("My appointment is on Friday morning.", "What time is my appointment?")
    assert relevant("Our wedding was in a barn.", "When did I get married?")
    assert relevant("My granny lives by the sea.", "Where does my grandmother live?")
    assert relevant("I work the early shift.", "What's my job?")


def test_asking_for_a_suggestion_is_advice_not_about_the_user() -> None:
    from terrarium.store.subjects import about_user
    assert not about_user("What's a nice present for my nephew?")
    assert not about_user("Any ideas for my garden?")
    assert about_user("What's my best friend called?")


def test_who_the_user_is_is_their_name() -> None:
    assert relevant("Bea is my name.", "Do you know who I am?")
    assert not relevant("Bea is my name.", "Who is the president?")
