"""Issue 30: the voice assistant recalls what the user told it however it was phrased, and its
reply guard never speaks as the user, never loops, never calls the user a chatbot, and says
"I don't know that yet." when nothing relevant was told. Deterministic: an in-memory store
and a scripted model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from terrarium.controller.guard import ReplyGuard, fact_words, repeats, speaks_as_user, uses
from terrarium.controller.incoming import Incoming
from terrarium.controller.loop import Controller
from terrarium.controller.recall import notes_for, recall
from terrarium.events import Event, TranscriptAppended
from terrarium.llm.types import ChatRequest, StreamDelta, Usage
from terrarium.store import MemoryStore
from terrarium.store.subjects import about_user, is_statement, relevant, strip_opening
from tests import recall_helpers as helpers
from tests.early_helpers import model_speaker
from tests.recall_helpers import SPEC, UNKNOWN, guard, told

ROOT = Path(__file__).resolve().parents[2]


# -- what a question is about ----------------------------------------------------------------

def test_questions_about_the_user_are_told_from_how_to_questions() -> None:
    for q in ["What is my dog called?", "Where am I from?", "Remind me of my name.",
              "How many cats do I have?", "What do I do for work?", "Who am I?"]:
        assert about_user(q), q
    for q in ["How do I boil an egg?", "What should I cook for dinner?", "Tell me a joke.",
              "What is the weather like on Mars?"]:
        assert not about_user(q), q


def test_a_statement_is_told_from_questions_greetings_and_thanks() -> None:
    for t in ["I drive a blue Volvo.", "Hey, I'm Priya and I teach maths.",
              "The cat is asleep."]:
        assert is_statement(t), t
    for t in ["Where do I live?", "Remind me of my name.", "Hello there!", "Thanks, goodbye.",
              "what is my name"]:
        assert not is_statement(t), t
    assert strip_opening("Hey, I'm Priya and I teach maths.") == "I'm Priya and I teach maths."


def test_a_note_is_relevant_by_subject_words_and_their_category() -> None:
    assert relevant("My dog is called Rex.", "What is my dog called?")
    assert relevant("I'm originally from Nairobi.", "Where am I from?")
    assert relevant("I'm allergic to cats.", "Do I have any allergies?")
    assert relevant("I drive a blue Volvo.", "What colour is my car?")
    assert not relevant("I love green tea.", "What is my dog called?")


# -- recall ----------------------------------------------------------------------------------

def notes(memory: MemoryStore, question: str, limit: int = 2) -> tuple[str, ...]:
    async def go() -> tuple[str, ...]:
        got = await recall(memory, [Incoming(text=question, channel="user_input")],
                           creature="router", recent=0, matches=0, facts=2, notes=limit)
        return got.notes
    return anyio.run(go)


def test_the_statement_about_the_question_is_recalled_however_it_was_phrased() -> None:
    with MemoryStore() as memory:
        told(memory, "My dog is called Rex.", "I'm originally from Nairobi.",
             "I'm allergic to cats.", "My birthday is on the 3rd of March.",
             "I love green tea.", "What is the weather like?")
        assert notes(memory, "What is my dog called?", 1) == ("My dog is called Rex.",)
        assert notes(memory, "Where am I from?", 1) == ("I'm originally from Nairobi.",)
        assert notes(memory, "What am I allergic to?", 1) == ("I'm allergic to cats.",)
        assert notes(memory, "When is my birthday?", 1) == (
            "My birthday is on the 3rd of March.",)


def test_a_question_about_the_user_gets_their_latest_statements_too() -> None:
    with MemoryStore() as memory:
        told(memory, "I drive a blue Volvo.", "Where is Paris?")
        # no word in common with the car: the latest statement is the note
        assert notes(memory, "What colour is my car?") == ("I drive a blue Volvo.",)
        # a question about something else gets nothing of it
        assert notes(memory, "Tell me about cars.") == ()


def test_questions_and_greetings_are_never_notes_and_an_opening_is_left_out() -> None:
    with MemoryStore() as memory:
        told(memory, "Hey, I'm Priya and I teach maths.", "What is my job?", "Hello!")
        got = notes(memory, "Remind me of my name.")
        assert got[0] == "Priya is my name."  # the fact the rules read, first
        assert got[1] == "I'm Priya and I teach maths."
        assert all("?" not in n and n != "Hello!" for n in got)


def test_notes_need_a_store_and_are_empty_without_one() -> None:
    async def go() -> None:
        got = await recall(None, [Incoming(text="What is my name?")], creature="router",
                           recent=0, matches=0, notes=2)
        assert got.notes == ()
        with MemoryStore() as memory:
            assert await notes_for(memory, "What is my name?", creature="router", limit=2) == ()
    anyio.run(go)


# -- the guard -------------------------------------------------------------------------------

def feed_all(g: ReplyGuard, reply: str, step: int = 3) -> str:
    return helpers.feed_all(g, reply, step)  # these tests stream 3 characters at a time


def test_the_reply_never_speaks_as_the_user() -> None:
    facts = fact_words("Call me Sam, please.", "")
    assert speaks_as_user("I'm Sam, I'm a chatbot.", facts)
    assert not speaks_as_user("Nice to meet you, Sam.", facts)
    assert not speaks_as_user("I'm happy to help you, Sam.", facts)  # "you" comes first
    g = guard("Call me Sam, please.", intent="request")
    said = feed_all(g, "I'm Sam, I'm a chatbot designed to help you. Hello there.")
    assert said == "Hello there."
    assert any("speaks as the user" in n for n in g.notices)
    g = guard("What is my dog called?", "My dog is called Rex.")
    # the question restated as its own ("My dog"): said without it
    assert feed_all(g, "My dog is called Rex. ") == "It is called Rex."
    g = guard("What is my dog called?", "My dog is called Rex.")
    # only what was told, in the user's voice: said to them instead (recall5)
    assert feed_all(g, "I have a dog called Rex. ") == "You have a dog called Rex."
    g = guard("What is my dog called?", "My dog is called Rex.")
    # a claim of its own in the user's voice is still never said
    assert feed_all(g, "I have a dog called Rex and I love him. ") == "Your dog is called Rex."


def test_a_repetition_loop_is_stopped_and_what_was_complete_is_spoken() -> None:
    assert repeats("Reminder: Priya, Reminder, Reminder, Reminder, Reminder") > 0
    assert repeats("Your name is Priya. It is a nice name.") == -1
    assert repeats("the cat sat on the mat, the cat sat on the mat, the cat sat on the mat") > 0
    assert repeats("the cat sat on the mat, the cat sat on the mat, the cat") == -1
    g = guard("Can you recommend a good book for the weekend?")
    said = feed_all(g, "Try Dune. Books books books books books books books")
    assert said == "Try Dune."
    assert g.stopped
    # nothing complete before the loop: the guard says what it knows instead
    g = guard("Remind me of my name.", "Priya is my name. I'm Priya and I teach maths.",
              intent="request")
    said = feed_all(g, "Reminder: Priya, Reminder, Reminder, Reminder, Reminder, Reminder")
    assert said == "Priya is your name."
    assert g.stopped


def test_asked_about_themselves_the_user_is_never_called_a_chatbot() -> None:
    g = guard("Where am I from?", "I'm originally from Nairobi.")
    said = feed_all(g, "You're a chatbot, a chatbot that speaks in a way that is not "
                       "designed for human interaction.")
    assert said == "You're originally from Nairobi."
    assert any("talks about itself" in n for n in g.notices)


def test_nothing_told_means_i_dont_know_without_the_model() -> None:
    g = guard("What is my favourite film?")
    assert g.fixed == UNKNOWN
    # told something else, and the answer does not use it: honest too
    g = guard("What car do I drive?", "I love knitting scarves.")
    assert g.fixed is None  # knitting is of no known subject: the model may use it
    assert feed_all(g, "You drive a red Toyota.") == UNKNOWN
    # bread is food (recall5): a food told is no car, known before the model is asked
    assert guard("What car do I drive?", "I love baking bread.").fixed == UNKNOWN
    assert guard("What car do I drive?", "I work as a nurse.").fixed == UNKNOWN
    g = guard("What's my favourite film?", "I love baking bread. I have a son.")
    assert g.fixed is None
    assert feed_all(g, "Your favourite film is Jaws.") == UNKNOWN  # a like is no film
    # but asked only what they like (a hobby is what they love doing), the like answers
    g = guard("What's my hobby?", "I love baking bread. I have a son.")
    assert feed_all(g, "Your hobby is painting.") == "You love baking bread."
    # an answer that uses what was told is spoken, and may go on
    g = guard("What colour is my car?", "I drive a blue Volvo.")
    assert uses("Your car is blue.", g.facts, g.user)
    assert feed_all(g, "Your car is blue. Drive safely!") == "Your car is blue. Drive safely!"
    # a how-to question is not about the user: no "I don't know" for it
    assert guard("How do I boil an egg?").fixed is None


# -- in the controller: a loop stops the model -----------------------------------------------

class Looping:
    """Streams a sentence, then a word forever (until the reader stops), counting pieces."""

    name = "looping"
    last_usage: Usage | None = None
    supports_continuation = False

    def __init__(self) -> None:
        self.pieces = 0

    def describe(self) -> str:
        return self.name

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        for piece in ["Your name", " is Priya.", " Priya"]:
            self.pieces += 1
            yield StreamDelta(text=piece)
        for _ in range(1000):
            self.pieces += 1
            yield StreamDelta(text=" Priya,")
        yield StreamDelta(finish_reason="length")


class Heard:
    def __init__(self) -> None:
        self.text: list[str] = []

    async def begin(self, utterance_id: str) -> None: ...

    async def write(self, text: str) -> None:
        self.text.append(text)

    async def end(self) -> None: ...

    async def interrupt(self) -> None:
        return None


def test_the_speaker_stops_reading_a_looping_model() -> None:
    parts = model_speaker()  # the model answers about the user too
    model, heard, notices = Looping(), Heard(), []

    def entry(ev: Event) -> None:
        if isinstance(ev, TranscriptAppended) and ev.entry.kind == "notice":
            notices.append(ev.entry.text)

    payload: dict[str, Any] = {"intent": "question", "user_said": "What is my name?",
                               "recent_conversation": "", "memory_context": "Priya is my name."}

    async def go() -> str:
        ctl = Controller(parts, model, sinks={"tts": heard}, emit=entry)  # type: ignore[dict-item]
        with anyio.fail_after(10):
            result = await ctl.run_turn([Incoming(text=payload["user_said"],
                                                  channel="to_speaker", sender="router",
                                                  payload=payload)])
        return result.text

    text = anyio.run(go)
    assert text == "".join(heard.text) == "Your name is Priya."
    assert model.pieces < 10  # stopped at the loop, not at max_tokens
    assert any("repeats itself" in n for n in notices)


def test_told_not_asked_is_acknowledged_whatever_the_intent() -> None:
    spec = SPEC.model_copy(update={"replies": {"statement": "Got it, I will remember that."}})
    g = ReplyGuard.for_turn(spec, [{"user_said": "Call me Sam, please.", "intent": "request"}])
    assert g is not None and g.fixed == "Got it, I will remember that."
    for asked in ["Turn on the lights please.", "I'd like a song.", "Tell me a joke."]:
        g = ReplyGuard.for_turn(spec, [{"user_said": asked, "intent": "request"}])
        assert g is not None and g.fixed is None, asked


def test_a_related_statement_is_said_back_but_a_mere_like_is_not() -> None:
    g = guard("How many kids do I have?", "I've got two sons.")
    assert feed_all(g, "You have a dog.") == "You've got two sons."
    g = guard("What is my favourite film?", "I love baking bread.")
    assert feed_all(g, "Your favourite film is Titanic.") == UNKNOWN
