"""Session 18: recall that generalizes (issue 30, recall13). A slip corrected inside a
sentence is put right ("My sister, no wait, my cousin Lena …", ``corrections.correct_inline``);
a correction reaches back past a statement it has nothing to put right in
(``recall._corrects_older``); an amount in apposition stays with its clause
(``clauses.split``); "How heavy is Pepper?" may ask of what was told (``subjects.may_refer``);
"Did I mention my husband is a firefighter?" tells in passing (``clauses.told_part``); a note
naming a kind of the asked category's thing, or someone's name for "who", is no lack
(``asked.lacks``); "Which hospital is it at?" points back (``asked.points_back``); the note
holding what the ask itself says goes first (``recall._own_first``). Every sentence is the
test's own."""

from __future__ import annotations

import pytest
from recall_helpers import notes, told

from terrarium.store import MemoryStore, clauses
from terrarium.store.asked import lacks, points_back
from terrarium.store.corrected import corrected
from terrarium.store.corrections import correct_inline
from terrarium.store.lexicon import lexicon
from terrarium.store.spoken import punctuated
from terrarium.store.subjects import may_refer

WORDNET = pytest.mark.skipif(not lexicon().available,
                             reason="WordNet (wordnet-base) is not installed")


@pytest.mark.parametrize(("said", "meant"), [
    ("The barbecue is on Thursday, sorry, Friday the ninth.",
     "The barbecue is on Friday the ninth."),
    ("My uncle, no wait, my godfather Piet is moving to Ghent.",
     "My godfather Piet is moving to Ghent."),
    ("We keep five, actually six hens in the yard.", "We keep six hens in the yard."),
    ("Dinner with Rosa, sorry, Rosie at eight.", "Dinner with Rosie at eight."),
])
def test_a_slip_corrected_inside_a_sentence_is_put_right(said: str, meant: str) -> None:
    assert correct_inline(said) == meant


@pytest.mark.parametrize("said", [
    "I live in Hull, actually, right by the marina.",  # "right" is no value of a kind
    "I met Jo on Monday, sorry, Mum just rang.",  # the slip is not just before the words
    "I have no car, sorry, I mean I sold it.",
])
def test_words_of_correcting_correct_nothing_of_another_kind(said: str) -> None:
    assert correct_inline(said) is None


def test_the_corrected_sentence_is_the_note() -> None:
    with MemoryStore() as memory:
        told(memory, "The quiz night is on Tuesday, no sorry, Wednesday at the Anchor.")
        got = notes(memory, "Which day is the quiz?")
        assert got and "Wednesday" in got[0] and "Tuesday" not in got[0]


def test_a_correction_reaches_back_past_a_statement_with_nothing_to_put_right() -> None:
    said = ["The plumber comes at eleven.", "I must buy bin bags.", "Oh wait, he comes at two."]
    assert corrected(said)[said[0]] == "The plumber comes at two."
    assert said[1] not in corrected(said)


def test_an_amount_in_apposition_stays_with_its_clause() -> None:
    said = "I measured the hallway yesterday, four metres twenty, and the rug won't fit."
    assert clauses.split(said) == ("I measured the hallway yesterday, four metres twenty",
                                   "the rug won't fit")
    with MemoryStore() as memory:
        told(memory, "I stepped on the scales today, seventy one kilos, down from eighty.")
        got = notes(memory, "What do I weigh at the moment?")
        assert got and "seventy one" in got[0]


def test_how_and_a_word_before_its_verb_may_ask_of_what_was_told() -> None:
    assert may_refer("How tall is Bramble?")
    assert not may_refer("How are you?")
    with MemoryStore() as memory:
        told(memory, "The vet said Bramble is forty centimetres at the shoulder.")
        got = notes(memory, "How tall is Bramble?")
        assert got and "forty" in got[0]


def test_asking_whether_it_was_told_tells_in_passing() -> None:
    assert clauses.told_part("Did I mention my wife is a midwife?") == "My wife is a midwife."
    assert clauses.told_part("Did I tell you about the trip?") == ""
    with MemoryStore() as memory:
        told(memory, "Did I ever tell you my grandad was a lighthouse keeper?")
        got = notes(memory, "What was my grandad's job?")
        assert got and "lighthouse" in got[0]


@WORDNET
def test_a_thing_of_the_asked_category_is_no_lack() -> None:
    # WordNet: a honeymoon is a holiday ("vacation"), and "leave" asks of trips
    said = ["We booked our honeymoon at last, a week in Crete from the fifth of June."]
    assert not lacks("When do we leave?", said)
    assert lacks("Which town am I from?", ["I work as a baker."])


def test_someones_name_is_no_lack_for_who() -> None:
    said = ["Our anniversary is on Sunday, thirty years with Colin."]
    assert not lacks("Who am I married to?", said)
    assert lacks("Who am I married to?", ["I'm Fenella, I teach piano."])  # her own name


def test_the_kind_of_answer_asked_of_a_pronoun_points_back() -> None:
    assert points_back("Which ward is it on?")
    assert points_back("Which airport is it from?")
    assert not points_back("What time is it?")
    assert not points_back("What bakery is it?")  # a subject of its own
    with MemoryStore() as memory:
        told(memory, "Dad's knee surgery is on the 14th at the Royal Infirmary.")
        notes(memory, "When is Dad's surgery?")
        told(memory, "When is Dad's surgery?")
        got = notes(memory, "Which hospital is it at?")
        assert got and "Infirmary" in got[0]


def test_the_note_holding_the_name_asked_goes_first() -> None:
    with MemoryStore() as memory:
        told(memory, "I'm Oisin, I'm from Sligo originally.",
             "I've been living in Dundee for six years.", "What's a good soup?")
        got = notes(memory, "And how long have I lived in Dundee?")
        assert got and "six" in got[0]


@pytest.mark.parametrize(("said", "asked"), [
    ("whats my sisters name", "what's my sisters name?"),
    ("wheres the spare key", "where's the spare key?"),
    ("hows the dog getting on", "how's the dog getting on?"),
])
def test_a_question_word_without_its_apostrophe_is_given_it_back(said: str, asked: str) -> None:
    # speech recognition writes "whats": the router's rules, recall and the guard read "what's"
    assert punctuated(said) == asked
    assert punctuated("whose coat is this") == "whose coat is this?"


@WORDNET
def test_a_clause_naming_a_thing_of_the_kind_asked_is_the_part_asked() -> None:
    # WordNet: a cello is a kind of instrument; "job" is of the category of "work" asked,
    # no kind of answer
    said = "I teach in Leeds, and the cello is my passion."
    assert clauses.about(said, "What instrument do I enjoy?") == "The cello is my passion."
    said = "The new job's going fine, I'm a plumber now."
    assert "plumber" in clauses.about(said, "Remind me what I do for a living.")


def test_a_part_turned_against_by_but_is_not_handed_alone() -> None:
    said = "I used to bite my nails but I stopped last summer."
    assert clauses.about(said, "Do I bite my nails?") == said
    said = "I live in Quebec, speak French at home and work as a translator."
    assert clauses.about(said, "What language do I speak at home?") == "I speak French at home."
    said = "I'm teetotal but I drink shandy."  # a yes or no asked of the part after "but"
    assert clauses.about(said, "Do I drink beer?") == said
    said = "I live in Quebec but I work in Ottawa."
    assert clauses.about(said, "Where do I work?") == "I work in Ottawa."


def test_asking_what_to_make_of_it_tells_in_passing() -> None:
    said = "Is it normal that my cat Pilchard drinks from the tap?"
    assert clauses.told_part(said) == "My cat Pilchard drinks from the tap."
    assert clauses.told_part("Is it true that owls can't see colour?") == ""


def test_the_unit_of_a_count_asked_of_a_pronoun_points_back() -> None:
    assert points_back("How many goes did it take?")
    assert not points_back("How many people live in Oslo?")


def test_a_task_to_be_reminded_of_tells_what_the_user_needs_to_do() -> None:
    said = "Remind me to ring my godson Alfie on Sunday, it's his tenth."
    assert clauses.told_part(said) == "I need to ring my godson Alfie on Sunday, it's his tenth."
    with MemoryStore() as memory:
        told(memory, said)
        got = notes(memory, "Who do I have to ring?")
        assert got and "Alfie" in got[0]


def test_a_statement_of_what_is_asked_about_goes_before_ones_near_by_the_asking_words() -> None:
    with MemoryStore() as memory:
        told(memory, "My name is Philippa.", "My wife Agnes is a welder.",
             "My oldest friend is called Bea.")
        got = notes(memory, "What's my wife's name?")
        assert got and "Agnes" in got[0]


def test_a_part_telling_the_users_name_is_no_answer_left_out() -> None:
    said = "Quick hello, I'm Solveig, I'm a welder in Tromso."
    assert clauses.about(said, "What do I do for work?") == "I'm a welder in Tromso."
    said = "Chess is my thing, I play most evenings."  # the part left out holds the answer
    assert clauses.about(said, "What game do I play?") == said


def test_a_clause_of_its_own_after_words_of_correcting_corrects_nothing() -> None:
    assert correct_inline("I like Porto, actually, Lisbon is nicer.") is None
    assert correct_inline("Tea at four, sorry, no, five.") == "Tea at five."


def test_a_year_asked_with_none_told_is_a_lack() -> None:
    assert lacks("What year is my car?", ["I drive a white Transit."])
    assert lacks("What year was my van made?", ["My van is a white Transit."])
    assert not lacks("What year is my van?", ["My van is a 2012 Transit."])
    assert not lacks("What year did we marry?", ["We got married six years ago."])


def test_a_part_ending_on_a_new_one_stays_with_the_thing_it_names() -> None:
    said = "The kettle finally died, so I bought a new one, a Smeg in cream."
    assert clauses.split(said) == (said.rstrip("."),)
    with MemoryStore() as memory:
        told(memory, "My laptop got soaked in the rain, so I had to buy another one, a "
                     "ThinkPad this time.")
        got = notes(memory, "What laptop do I have now?")
        assert got and "ThinkPad" in got[0]


def test_naming_it_goes_on_from_the_statement_before() -> None:
    with MemoryStore() as memory:
        told(memory, "My husband and I rescued a greyhound last week.", "We named her Comet.")
        got = notes(memory, "What's the greyhound called?")
        assert got and "Comet" in got[0] and "greyhound" in got[0]
