"""Session 19 (honest14, issue 30): a never-told ask next to a told fact is no answer, read
from the question's form and the notes' words, and a told answer asked in other words still
is. Each test fails on the code before the session (``asked.lacks`` said the note could
answer). None of these sentences is in a benchmark set."""

from __future__ import annotations

import pytest

from terrarium.store.asked import lacks
from terrarium.store.lexicon import lexicon
from terrarium.store.told_form import form_untold, tells_somewhere, tells_when
from terrarium.store.told_of import asked_of_whom, attribute_untold, kind_asked, kind_untold

WORDNET = pytest.mark.skipif(not lexicon().available,
                             reason="WordNet's data files are not installed")


def test_a_place_asked_and_only_a_date_told_is_no_answer() -> None:
    assert lacks("Where is the christening?", ["The christening is on the third of June."])
    assert lacks("Where was my son born?", ["My son was born on a Sunday in March."])
    assert form_untold("Whereabouts is the reunion?", ["Our reunion is next Saturday."])
    # a place told in any form is an answer: a name, a preposition of place, a code
    assert not lacks("Where is the christening?", ["The christening is at St Anne's."])
    assert not lacks("Where do I keep the spare key?", ["The spare key is under the mat."])
    assert not lacks("Where do I park at work?", ["My parking bay is C7."])
    assert not lacks("Where do I work?", ["I work from home most days."])


def test_a_time_asked_and_only_a_place_told_is_no_answer() -> None:
    assert lacks("When is my job interview?", ["My job interview is in Swindon."])
    assert lacks("When did I move to Hull?", ["I moved to Hull from Grimsby."])
    assert form_untold("What day is the recital?", ["The recital is at the town hall."])
    # a day, a month, a part of the day, a year or a word of when is an answer
    assert not lacks("When do I swim?", ["I swim at the lido on Thursdays."])
    assert not lacks("When did I move to Hull?", ["I moved to Hull three years ago."])
    assert not lacks("When is my interview?", ["My interview is tomorrow morning."])
    assert tells_when("We go every summer.") and not tells_when("We go to Crete.")


def test_a_number_asked_and_none_told_is_no_answer() -> None:
    assert lacks("How many members are in my choir?", ["My choir is called the Larks."])
    assert lacks("How old is Pickle?", ["Our hamster is named Pickle."])
    assert not lacks("How many dogs have I got?", ["I've got a dog called Bramble."])
    assert not lacks("How many kids do I have?", ["I have twin girls."])
    assert not lacks("How old is my nan?", ["My nan is in her nineties."])


def test_the_question_s_own_words_are_no_answer_of_its_form() -> None:
    # "Kemal" is whom "Where does Kemal live?" asks of, not where he lives
    assert lacks("Where does Kemal live?", ["My flatmate is called Kemal."])
    assert not tells_somewhere("My flatmate is called Kemal.", frozenset({"kemal"}))
    assert tells_somewhere("My flatmate is called Kemal.")
    assert not lacks("Where does Kemal live?", ["My flatmate Kemal lives in Hove."])


def test_a_day_or_a_month_told_is_no_name() -> None:
    assert lacks("What's my optician's name?", ["My optician appointment is on Friday."])
    assert lacks("What is my landlord called?", ["My landlord visits every January."])
    assert not lacks("What is my landlord called?", ["My landlord is Mr Patel."])


@WORDNET
def test_another_relative_than_the_one_told_is_no_answer() -> None:
    assert lacks("What is my nephew called?", ["My father's name is Desmond."])
    assert lacks("What's my aunt called?", ["My brother is named Cathal."])
    assert not lacks("What is my nephew called?", ["My nephew is named Rory."])
    # a kind of it told: "sisters" are siblings (WordNet's definition of "sibling")
    assert not lacks("How many siblings have I got?", ["I have two younger sisters."])


@WORDNET
def test_another_thing_asked_of_someone_told_of_is_no_answer() -> None:
    assert lacks("What does Siobhan do for a living?", ["My sister Siobhan lives in Sligo."])
    assert lacks("What's my brother's job?", ["My brother moved to Leeds last year."])
    assert lacks("What does Nibbles like to eat?", ["We've had our guinea pig Nibbles for "
                                                  "six years."])
    assert attribute_untold("What colour is the Raleigh?", ["My bike is a Raleigh."])
    assert asked_of_whom("What's my brother's job?", ["My brother moved to Leeds."]) == {
        "brother"}


@WORDNET
def test_what_is_asked_of_someone_told_in_other_words_is_still_answered() -> None:
    assert not lacks("What does Siobhan do for a living?",
                     ["My sister Siobhan is a paramedic in Sligo."])
    assert not lacks("What colour is the Raleigh?", ["My bike is a red Raleigh."])
    assert not lacks("Where does my brother live?", ["My brother moved to Leeds."])
    # nothing of a known subject told of him: left to the model
    assert not attribute_untold("What's Declan's hobby?", ["My cousin Declan builds kites."])


@WORDNET
def test_which_one_of_a_kind_asked_and_none_told_is_no_answer() -> None:
    assert lacks("Which ferry am I catching?", ["I'm sailing to Santander in May."])
    assert lacks("Which lake do I fish at?", ["I love fishing on Sundays."])
    assert kind_asked("What kind of boat do I own?") == "boat"
    # a thing of the kind told, a name that may be one, a word WordNet does not know
    assert not lacks("Which instrument do I practise?", ["I practise the oboe every night."])
    assert not lacks("Which football club do I support?", ["I've supported Hibernian for years."])
    assert not lacks("Which tablets am I on?", ["I take lisinopril every morning."])
    assert not kind_untold("Which drug upsets me?", ["Ibuprofen upsets my stomach."])


def test_a_make_or_a_breed_after_a_is_no_name() -> None:
    assert lacks("What's my horse called?", ["My horse is an Appaloosa."])
    assert lacks("What is my dog's name?", ["Our dog is a Bernese Mountain dog."])
    assert not lacks("What is my dog's name?", ["Our dog is a Bernese called Moss."])
