"""Session 12: an answer about the user holds what they told, not only the words of asking
("name", "called", "time"); a question asking a kind of answer ("Which city's ...?", "What
day ...?") of something told is about it when the statement holds that kind. Every
sentence here is written apart from the benchmark's sets. Deterministic."""

from __future__ import annotations

from recall_helpers import feed_all, guard, notes, told

from terrarium.controller.guard import uses
from terrarium.store import MemoryStore
from terrarium.store.subjects import refers_to_told


def test_the_word_name_is_no_name_told() -> None:
    note = "Everyone calls me Dodo, though Dorothea is my name."
    assert not uses("What a lovely name that is.", note, "What do my friends call me?")
    g = guard("What do my friends call me?", note)
    said = feed_all(g, "That is a lovely name to have. It suits a friendly person.")
    assert "Dodo" in said


def test_a_kind_of_answer_asked_of_something_told() -> None:
    told_ = ["I repair boats at the marina in Galway."]
    assert refers_to_told("Which town's marina is it?", told_)
    assert not refers_to_told("Which town is the Colosseum in?", told_)
    with MemoryStore() as memory:
        told(memory, *told_, "Is the sea cold in May?")
        assert notes(memory, "Which town's marina is it?") == tuple(told_)


def test_which_one_is_answered_by_the_word_told_before_the_thing() -> None:
    note = "Book me the aisle seat on trains, I hate being boxed in."
    g = guard("Which seat do I want on trains?", note)
    said = feed_all(g, "You can book a seat on most trains. It costs a little extra.")
    assert "aisle" in said
    # a reply that says it is spoken as it is
    g = guard("Which seat do I want on trains?", note)
    assert feed_all(g, "You like the aisle seat.") == "You like the aisle seat."


def test_a_pronoun_follow_up_after_a_statement_that_went_on_from_one_about_the_user() -> None:
    with MemoryStore() as memory:
        told(memory, "My uncle just bought a boat.", "It's moored in Whitby, near the abbey.")
        assert notes(memory, "Where's his boat?") == (
            "My uncle just bought a boat. It's moored in Whitby, near the abbey.",)


def test_which_city_is_not_known_when_no_note_names_one() -> None:
    g = guard("Which town do I live in?", "We rent a cottage next to the old mill.")
    assert g.fixed == "I don't know that yet."
    assert guard("Which town do I live in?", "We rent a cottage in Ludlow.").fixed is None
    assert guard("Which country am I from?", "I'm from the USA.").fixed is None
