"""Recall by category (session 11, recall5): the clause of a statement that holds several
facts, questions with no subject of their own answered by their form (a place, a day, a
name), bare follow-ups opening with a preposition, past forms no suffix reaches, an answer
of a class (a colour, a breed) that must say the word told, the note said back in the
user's voice turned to them, and a person named by the user.

Every case is worded apart from the benchmark's sets: each stands for a kind of phrasing.
"""

from __future__ import annotations

from recall_helpers import UNKNOWN, feed_all, guard, notes, told

from terrarium.store import MemoryStore
from terrarium.store.asked import lacks, points_back
from terrarium.store.clauses import about, split
from terrarium.store.corrections import apply_correction
from terrarium.store.subjects import asks_advice, refers_to_told, relevant, stem


def test_a_statement_of_several_facts_hands_over_the_clause_asked() -> None:
    said = "I work in Leeds, play the cello and have a ferret called Biscuit."
    assert len(split(said)) == 3
    assert about(said, "What instrument do I play?") == "I play the cello."
    assert about(said, "What pet do I have?") == "I have a ferret called Biscuit."
    # one fact, a bare fragment or a part pointing back: the statement whole
    assert about("I have a spaniel, Bramble, she's six.", "What breed is my dog?") == (
        "I have a spaniel, Bramble, she's six.")
    assert about("I'm vegetarian, so no fish or meat.", "What diet do I follow?") == (
        "I'm vegetarian, so no fish or meat.")
    # a part left out that names no known subject may hold the answer: whole
    assert about("Darts is my thing, I play every Friday.", "What game do I play?") == (
        "Darts is my thing, I play every Friday.")
    # a part without its own subject, after one that is not "I": whole
    assert about("My uncle, Piet, repairs boats in the harbour.", "What does my uncle do?") == (
        "My uncle, Piet, repairs boats in the harbour.")
    with MemoryStore() as memory:
        told(memory, "I live in Bergen, speak Norwegian at work and play in a brass band.")
        got = notes(memory, "What language do I use at work?")
        assert got and got[0] == "I speak Norwegian at work."
        assert not any("Bergen" in n for n in got)  # nor the fact read from another clause


def test_the_words_of_asking_pick_no_clause() -> None:
    said = "my aunt's called Greta, my cousin's Lotte and our pony is Pepper"
    assert about(said, "What's my cousin called?") == "My cousin's Lotte."
    said = "On weekdays I'm a surveyor, at weekends I coach a rugby team."
    assert about(said, "What's my weekday job?") == "On weekdays I'm a surveyor."
    assert about(said, "What do I do at weekends?") == "At weekends I coach a rugby team."
    # a name asked: a part naming none of the question's words may hold it
    said = "Maren Olsen speaking, but the lads call me Mo."
    assert about(said, "What's my surname?") == said


def test_a_follow_up_picks_its_own_clause_first() -> None:
    with MemoryStore() as memory:
        told(memory, "my wife's Rosa, my daughter's Mila and the cat is Socks")
        assert notes(memory, "What's my daughter called?")[0] == "My daughter's Mila."
        told(memory, "What's my daughter called?")
        got = notes(memory, "And the cat?")
        assert got and got[0] == "The cat is Socks."
    with MemoryStore() as memory:  # a follow-up naming nothing gets the statement whole
        told(memory, "We live in Tartu now, we used to be in Riga.", "Where do we live now?")
        got = notes(memory, "And before that?")
        assert got and "Riga" in got[0] and "Tartu" in got[0]


def test_a_question_without_a_subject_of_its_own_is_answered_by_its_form() -> None:
    assert relevant("I moved from Oslo to Perth last year.", "And where am I now?")
    assert relevant("We keep a boat moored near Falmouth.", "Where do we keep it?")
    assert relevant("I picked up a Fiat Panda in March.", "And when did I get it?")
    assert relevant("Ines Duarte here, but everyone says Nessa.", "What do my mates call me?")
    # a question with a subject of its own is not: "I live in Cardiff." says no workplace
    assert not relevant("I live in Ghent.", "Where do I work?")
    assert not relevant("I live in Ghent.", "What do I do for a living?")
    assert lacks("Where do I work?", ["I live in Ghent."])
    # an address is a number or a street's name: a move told is none
    assert lacks("What's my postcode?", ["We bought our flat in the spring."])


def test_bare_follow_ups_may_open_with_a_preposition() -> None:
    for q in ["At what time?", "From where?", "For how long?", "In which city?", "To whom?"]:
        assert points_back(q), q
    assert not points_back("In which year did the war end?")
    with MemoryStore() as memory:
        told(memory, "I'm driving to Carlisle on Friday.", "When am I driving?")
        got = notes(memory, "To where?")
        assert got and "Carlisle" in got[0]


def test_past_forms_and_new_categories_link_the_question_to_what_was_told() -> None:
    assert stem("sold") == stem("sell") and stem("flew") == stem("fly")
    assert relevant("I sold my old piano last week.", "What did I sell?")
    assert relevant("I've been learning Welsh since May.", "Which language am I studying?")
    assert relevant("I adore foggy mornings.", "What weather do I like?")
    assert relevant("I'm sailing to Cadiz on the fourth.", "When do I set off?")
    assert relevant("When I was small we lived above a bakery in Lyon.",
                    "Where did I grow up as a kid?")
    assert not lacks("Where did I live as a child?",
                     ["I grew up by a lake in Finland, near my gran."])
    assert relevant("Aspirin brings me out in hives.",
                    "Which painkiller should I stay away from?")


def test_an_answer_of_a_class_must_say_the_word_told() -> None:
    g = guard("What colour is my bike?", "I ride a green bike, a Trek.")
    assert feed_all(g, "Your bike is a Trek, a fine brand. ") == "You ride a green bike, a Trek."
    g = guard("What colour is my bike?", "I ride a green bike, a Trek.")
    assert feed_all(g, "Your bike is green. ") == "Your bike is green."
    g = guard("What breed is my dog?", "My dog is a whippet called Dart.")
    said = feed_all(g, "Your dog is a mixed breed of bulldog. ")
    assert "whippet" in said


def test_a_when_question_is_answered_with_the_time_told() -> None:
    g = guard("When?", "We're off to Lapland in December, me and my sister.")
    said = feed_all(g, "Lapland is a cold place with reindeer and snow. ")
    assert "December" in said
    g = guard("When is my dentist?", "My dentist in Hove is on the 2nd of May.")
    assert feed_all(g, "Your dentist is on the 2nd of May. ") == (
        "Your dentist is on the 2nd of May.")


def test_the_note_said_back_in_the_users_voice_is_said_to_them() -> None:
    g = guard("Which sport do I coach?", "I coach netball on Saturdays.")
    assert feed_all(g, "I coach netball on Saturdays. ") == "You coach netball on Saturdays."
    g = guard("Which sport do I coach?", "I coach netball on Saturdays.")
    assert feed_all(g, "I coach tennis. ") == "You coach netball on Saturdays."  # never told
    g = guard("Which sport do I coach?", "I coach netball on Saturdays.")
    assert "not" not in feed_all(g, "I do not coach netball. ")  # the opposite of what was told


def test_a_person_the_user_named_is_what_they_told() -> None:
    told_ = ["My cousin Tomas repairs clocks in Bern."]
    assert refers_to_told("What does Tomas do?", told_)
    assert not refers_to_told("What does Einstein do?", told_)
    with MemoryStore() as memory:
        told(memory, *told_)
        assert notes(memory, "What does Tomas do?")
        g = guard("What does Tomas do?", notes(memory, "What does Tomas do?")[0])
        assert "clocks" in feed_all(g, "Tomas is a famous painter from Spain. ")


def test_a_change_of_plan_corrects_a_time_of_two_words() -> None:
    assert apply_correction("The match is at six.", "Change of plans, it kicks off at seven "
                            "fifteen.") == "The match is at seven fifteen."
    assert apply_correction("Lunch with Kai is at one.", "Update, it's now at two thirty.") == (
        "Lunch with Kai is at two thirty.")
    with MemoryStore() as memory:
        told(memory, "The match is at six.", "Change of plans, it kicks off at seven fifteen.")
        got = notes(memory, "What time is the match?")
        assert got and "seven fifteen" in got[0] and "six" not in got[0]


def test_advice_asked_in_passing_is_advice() -> None:
    assert asks_advice("I'm off to a sushi bar later, any ideas?")
    assert asks_advice("what's an easy dinner I can cook in twenty minutes?")
    g = guard("what's an easy dinner I can cook in twenty minutes?", "I'm Bo.")
    assert g.fixed is None  # not "I don't know that yet." at once
    assert UNKNOWN != feed_all(g, "Try a vegetable stir fry with rice. ")
