"""Recall by category of phrasing (session 10): what is told in two sentences, corrected
without "it's", asked as a follow-up fragment, or asked in words of the same category, is
handed over and said back; what was never told is still "I don't know that yet.".

Every case is worded apart from the benchmark's sets: each stands for a kind of phrasing.
"""

from __future__ import annotations

from recall_helpers import UNKNOWN, feed_all, guard, notes, told

from terrarium.controller.reply_words import note_about
from terrarium.store import MemoryStore
from terrarium.store.asked import lacks, points_back
from terrarium.store.corrections import correction_value, goes_on
from terrarium.store.subjects import about_user, is_statement, parts, relevant


def test_a_statement_that_points_back_is_handed_over_with_the_one_before() -> None:
    assert goes_on("It's on the corner of Elm Street.")
    assert goes_on("She called him Pudding.")
    assert not goes_on("My sister lives in Leeds.")
    with MemoryStore() as memory:
        told(memory, "My aunt opened a tea room.", "It's next to the cathedral in Ely.")
        got = notes(memory, "Where is my aunt's tea room?")
        assert got and "cathedral" in got[0] and "tea room" in got[0]
    with MemoryStore() as memory:
        told(memory, "My son has a new hamster.", "He called it Nugget.",
             "How long do hamsters live?")
        got = notes(memory, "What did he call it?")
        assert got and "Nugget" in got[0]


def test_the_fallback_says_the_sentence_and_what_was_told_right_after() -> None:
    said = note_about("What is the tattoo of?",
                      ["I had a tattoo done. It's an anchor, on my ankle."])
    assert said is not None and "anchor" in said
    g = guard("Where's my cousin's flat?",
              "My cousin rented a flat. It's above the bakery on Queen Street.")
    assert "Queen Street" in feed_all(g, "Your cousin rented a flat.")


def test_a_correction_that_only_gives_a_new_value_replaces_the_old_one() -> None:
    assert correction_value("Oh wait, they pushed it back to Thursday.") == "Thursday"
    assert correction_value("Sorry, they moved it to the 9th.") == "9th"
    assert correction_value("Sorry, I was thinking of something else.") is None
    with MemoryStore() as memory:
        told(memory, "My haircut is on Monday.", "Oh wait, they moved it to Friday.")
        assert notes(memory, "When is my haircut now?") == ("My haircut is on Friday.",)
    # handed both, the fallback says the correction, not the old value
    said = note_about("When is the vet?", ["The vet is on the 3rd.",
                                           "Oops, they changed it to the 5th."])
    assert said == "They changed it to the 5th."


def test_follow_up_fragments_take_the_conversations_subject() -> None:
    for q in ["And the other one?", "And what colour?", "What about her brother?",
              "Which week?", "Until when?", "What breed is he?", "Where does she work?",
              "Can you remember his name?"]:
        assert points_back(q), q
    for q in ["Why?", "What time is it?", "Is it far?", "And how do I bake bread?",
              "How does a rainbow form?"]:
        assert not points_back(q), q
    with MemoryStore() as memory:
        told(memory, "I have two cats, a tabby called Ziggy and a siamese called Mo.",
             "What's the tabby called?")
        assert any("Mo" in n for n in notes(memory, "And the siamese?"))
    with MemoryStore() as memory:  # a world question about the told thing keeps it
        told(memory, "My horse is a Clydesdale called Duke.", "How much hay does a horse eat?")
        assert any("Duke" in n for n in notes(memory, "How old is he?"))
    with MemoryStore() as memory:  # but not a question about someone else
        told(memory, "My horse is a Clydesdale called Duke.", "Who painted the Mona Lisa?")
        assert notes(memory, "How old was he then?") == ()


def test_what_was_told_of_no_known_kind_is_left_to_the_model() -> None:
    # "fish" asked, and only an axolotl told: no other kind told, so it may be the one
    assert not lacks("What kind of fish do I keep?", ["I keep a pair of axolotls called Bo."])
    assert lacks("What kind of fish do I keep?", ["I have a cat called Bo."])
    # "go" is no name: "Where did we go?" is not answered "I don't know" for want of one
    assert not lacks("Where did we go for our anniversary?",
                     ["For our anniversary we went to Verona."])
    # a contracted first word is no question: "Name's Otto, ..." tells
    assert is_statement("Name's Otto, I'm a baker and I play the oboe.")
    with MemoryStore() as memory:
        told(memory, "Name's Otto, I'm a baker and I play the oboe.")
        assert any("oboe" in n for n in notes(memory, "Which instrument do I play?"))


def test_asked_in_other_words_of_the_same_category() -> None:
    assert set(parts("workplace")) == {"work", "place"}
    assert relevant("I was born in Quito.", "What's my birthplace?")
    assert relevant("I only eat kosher food.", "What's my dietary restriction?")
    assert relevant("I get terrible hay fever and asthma.", "What condition do I have?")
    assert relevant("I'm about 90 kilos these days.", "What's my weight?")
    assert relevant("My rating's about 1800 online.", "What's my rating?")
    assert not relevant("My daughter plays the cello.", "What's my weight?")
    g = guard("What health problem do I have?", "I get cluster headaches.")
    assert g.fixed is None
    assert feed_all(g, "You have a chatbot.") == "You get cluster headaches."


def test_a_like_answers_a_question_only_about_likes() -> None:
    assert note_about("What did I say I hate?", ["I can't stand celery."]) == (
        "I can't stand celery.")
    assert note_about("What's my favourite book?", ["I love gardening."]) is None


def test_never_told_stays_honest() -> None:
    # a number asked, and the note about the subject holds none
    assert note_about("What age is my son?", ["My son plays rugby."]) is None
    g = guard("How old is my niece?", "My niece is learning the flute.")
    assert g.fixed == UNKNOWN  # at once, without the model (session 17: no number told)
    assert guard("What's my cat's name?", "I have a hamster named Pip.").fixed == UNKNOWN


def test_a_yes_or_no_need_is_advice_not_a_question_about_what_was_told() -> None:
    assert not about_user("Do I need a visa for Peru?")
    assert not about_user("Will we need jackets in Oslo?")
    assert about_user("Do I have a dog?")
    assert guard("Do I need a visa for Peru?").fixed is None


def test_the_name_they_go_by_is_told_as_they_said_it() -> None:
    from terrarium.store import extract_facts

    assert is_statement("Please don't call me Robert, I much prefer Bobby.")
    assert not [f for f in extract_facts("Please don't call me Robert.") if "Robert" in f.sentence]
    with MemoryStore() as memory:
        told(memory, "I'm Theodora, but all my friends say Teddy.")
        got = notes(memory, "What do my friends call me?")
        assert got and "Teddy" in got[0]  # the statement before the full-name fact


def test_that_thing_and_things_told_without_my_are_the_users() -> None:
    assert points_back("When's that concert?")
    with MemoryStore() as memory:
        told(memory, "The boiler service is booked for the 12th.")
        assert any("12th" in n for n in notes(memory, "When is the boiler service?"))


def test_a_job_of_any_trade_and_a_measure_asked() -> None:
    assert relevant("I'm a glassblower at a studio in Murano.", "What do I do for work?")
    assert not relevant("I'm a vegetarian.", "What's my job?")
    g = guard("And my handicap?", "I play golf on Sundays, my handicap is about 18.")
    assert feed_all(g, "You play golf on Sundays.") == (
        "You play golf on Sundays, your handicap is about 18.")  # the number asked


def test_a_sentence_said_twice_is_spoken_once() -> None:
    g = guard("Tell me something about owls.")
    assert feed_all(g, "Owls can turn their heads far. Owls can turn their heads far.") == (
        "Owls can turn their heads far.")


def test_a_follow_ups_notes_are_for_the_conversations_subject() -> None:
    # "When's that X?" after a question about the user: not "I don't know" at once
    notes_ = "In March I'm taking my parents to Kyoto to see the blossom."
    assert guard("When's that holiday?", notes_).fixed is None
    assert guard("When's my flight?", "I work as a chef.").fixed == UNKNOWN


def test_a_yes_or_no_that_says_the_question_again_is_said_short() -> None:
    g = guard("Can I freeze cooked rice safely?")
    assert feed_all(g, "Yes, you can freeze cooked rice safely for a month.") == "Yes, you can."
    g = guard("Is it going to rain in Leeds today?")
    assert feed_all(g, "No, it is sunny all day.") == "No, it is sunny all day."


def test_a_sentence_that_starts_like_one_spoken_is_not_said() -> None:
    g = guard("Tell me something about owls.")
    reply = "Owls hunt at night, mostly mice. Owls hunt at night, mostly voles."
    assert feed_all(g, reply) == "Owls hunt at night, mostly mice."


def test_a_follow_on_about_the_user_is_left_to_the_model() -> None:
    # a colour of no list ("teal"), asked on from the last question: not "I don't know" at once
    assert not lacks("And which colour did I pick?", ["I traded my Ford for a teal Kia."])
    assert lacks("Which colour did I pick?", ["I work as a chef."])


def test_what_is_said_back_ends_as_a_sentence_though_it_was_typed_without_a_stop() -> None:
    # typed without a full stop: said back, it must still end like a sentence (the voice
    # speaks a reply whole only once it ends like one)
    for facts, question in [("my cat is called Miso", "What is my cat called?"),
                            ("I grew up in Tromsø but live in Oslo now",
                             "Where did I grow up?"),
                            ("we got married on the 3rd of May", "When did we get married?")]:
        said = feed_all(guard(question, facts), "Cats are lovely animals.")
        assert said.rstrip()[-1] in ".!?", (facts, said)
        assert said.rstrip().rstrip(".").lower().endswith(facts.split()[-1].lower()), said
