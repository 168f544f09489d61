"""When the reply guard lets text through (issue 29, time to first audio): the first spoken
sentence as soon as its start can be judged, and never later than the rules need; the same
judgements as before. Deterministic: the guard alone, and a scripted speaker turn."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from terrarium.config.models import ReplyGuardSpec
from terrarium.controller.guard import LoopWatch, ReplyGuard, repeats
from terrarium.controller.incoming import Incoming
from terrarium.controller.loop import Controller
from terrarium.events import Event, TranscriptAppended
from terrarium.llm.types import ChatRequest, StreamDelta, Usage
from tests.early_helpers import model_speaker

ROOT = Path(__file__).resolve().parents[2]
SPEC = ReplyGuardSpec(facts_field="memory_context", unknown_reply="I don't know that yet.",
                      release_first_clause=True, echo_reply="Sorry, I am not sure.")


def guard(user: str, notes: str = "", intent: str = "question") -> ReplyGuard:
    g = ReplyGuard.for_turn(SPEC, [{"user_said": user, "intent": intent,
                                    "memory_context": notes}])
    assert g is not None
    return g


def stream(g: ReplyGuard, reply: str, step: int = 3) -> list[str]:
    """What each delta let through (the last item: what ``finish`` said)."""
    outs = [g.feed(reply[i:i + step]) for i in range(0, len(reply), step)]
    return [*outs, g.finish()]


# -- the loop watch: repeats() without scanning the reply again at every token ---------------

_PIECES = st.sampled_from(["the ", "cat ", "Reminder, ", "Priya", " is", " nice.", " a",
                           "lot ", "'s ", "tea", ", ", "ok"])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_PIECES, max_size=40),
       cuts=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=6))
def test_the_loop_watch_finds_what_repeats_finds_for_any_split(parts: list[str],
                                                               cuts: list[int]) -> None:
    text = "".join(parts)
    watch, i, k, got = LoopWatch(), 0, 0, -1
    while i < len(text) and got < 0:
        step = cuts[k % len(cuts)]
        got = watch.feed(text[i:i + step])
        if got < 0:
            assert repeats(text[:i + step]) == -1
        else:
            assert got == repeats(text[:i + step])
        i, k = i + step, k + 1


def test_the_loop_watch_stops_where_repeats_does() -> None:
    text = "Reminder: Priya, Reminder, Reminder, Reminder, Reminder"
    watch = LoopWatch()
    got = [watch.feed(text[i:i + 2]) for i in range(0, len(text), 2)]
    assert next(g for g in got if g >= 0) == repeats(text) > 0


# -- the first spoken sentence, released as soon as it can be judged --------------------------

ASKED = "What drink do I like in the morning?"
TOLD = "I love green tea in the morning."


def test_asked_about_themselves_a_start_that_uses_what_they_told_is_released() -> None:
    g = guard(ASKED, TOLD)
    reply = "Your favourite morning drink is green tea, which is a popular choice."
    outs = stream(g, reply)
    first = next(i for i, o in enumerate(outs) if o)
    said = "".join(outs[:first + 1])
    # released at the told word, long before the sentence's end
    assert said.startswith("Your favourite morning drink is green") and "." not in said
    assert "".join(outs) == reply and g.notices == []


def test_asked_about_themselves_a_start_without_what_they_told_waits_for_its_end() -> None:
    g = guard(ASKED, TOLD)
    outs = stream(g, "You like a drink in the morning. Green tea is your drink.")
    assert "".join(outs[:-1]) == "Green tea is your drink."  # the first never used the note
    assert any("does not use what the user told" in n for n in g.notices)


def test_a_start_that_talks_about_itself_is_never_released() -> None:
    g = guard(ASKED, TOLD)
    said = "".join(stream(g, "As a chatbot, green tea is something to know well."))
    assert "chatbot" not in said
    assert any("talks about itself" in n for n in g.notices)


def test_after_a_dropped_first_sentence_the_next_is_the_first_spoken() -> None:
    user = "Can you recommend something to listen to tonight?"
    g = guard(user)
    reply = "Can you recommend something to listen to tonight? I am sure you will love jazz."
    outs = stream(g, reply)
    spoken = [o for o in outs if o]
    assert "".join(spoken) == "I am sure you will love jazz."
    assert len(spoken) > 1  # through from its start, not whole at its end


def test_a_released_sentence_that_goes_on_to_speak_as_the_user_is_stopped_there() -> None:
    g = guard("Can you recommend a good book for a long train trip to Paris?")
    assert not g.about_user and g.fixed is None
    outs = stream(g, "Well, that is a fine question and my home is Paris too. Read Dune.")
    said = "".join(outs)
    assert said.startswith("Well, that is a fine question and") and "Paris" not in said
    assert "Dune" not in said and g.stopped and g.stop_reason == "it speaks as the user"
    assert any("stopped, it speaks as the user" in n for n in g.notices)


def test_a_word_still_being_written_does_not_stop_a_released_sentence() -> None:
    g = guard("Can you recommend a good book for a long train trip to Paris?")
    said = g.feed("Well, that is a fine question, my Paris") + g.feed("ian friend. Read it.")
    assert said + g.finish() == "Well, that is a fine question, my Parisian friend. Read it."
    assert not g.stopped


def test_asked_about_themselves_a_released_sentence_that_turns_to_itself_is_stopped() -> None:
    g = guard(ASKED, TOLD)
    said = "".join(stream(g, "Your drink is green tea, and as a chatbot I like it."))
    assert said.startswith("Your drink is green tea") and "chatbot" not in said
    assert g.stopped and g.stop_reason == "it talks about itself"


# -- in the controller: a stopped sentence's unfinished words are not spoken -----------------

class Replies:
    name = "replies"
    last_usage: Usage | None = None
    supports_continuation = False

    def __init__(self, reply: str) -> None:
        self.reply, self.sent = reply, 0

    def describe(self) -> str:
        return self.name

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        for i in range(0, len(self.reply), 3):
            self.sent += 1
            yield StreamDelta(text=self.reply[i:i + 3])
        yield StreamDelta(finish_reason="stop")


class Heard:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.dropped = 0

    async def begin(self, utterance_id: str) -> None: ...

    async def write(self, text: str) -> None:
        self.text.append(text)

    async def end(self) -> None: ...

    async def interrupt(self) -> None:
        return None

    async def drop_unfinished(self) -> str:
        self.dropped += 1
        return "and as a"


def test_the_speaker_stops_reading_a_released_sentence_gone_wrong() -> None:
    parts = model_speaker()  # the model answers about the user too
    reply = "Your drink is green tea, and as a chatbot I like it. " + "More words. " * 20
    model, heard, notices = Replies(reply), Heard(), []

    def entry(ev: Event) -> None:
        if isinstance(ev, TranscriptAppended) and ev.entry.kind == "notice":
            notices.append(ev.entry.text)

    payload: dict[str, Any] = {"intent": "question", "user_said": ASKED,
                               "recent_conversation": "", "memory_context": TOLD}

    async def go() -> str:
        ctl = Controller(parts, model, sinks={"tts": heard}, emit=entry)  # type: ignore[dict-item]
        with anyio.fail_after(10):
            result = await ctl.run_turn([Incoming(text=ASKED, channel="to_speaker",
                                                  sender="router", payload=payload)])
        return result.text

    text = anyio.run(go)
    assert text.startswith("Your drink is green tea") and "chatbot" not in text
    assert model.sent < 25  # stopped there, not read to its end
    assert heard.dropped == 1
    assert any("cut off by it talks about itself" in n for n in notices)


# -- the fallback at once, when the last sentence the grammar allows cannot be spoken ---------

NAME_Q, NAME_TOLD = "What is my name?", "Ada is my name."
SETTLE_CASES = [
    # (user, notes, reply): nothing spoken, and the last sentence is judged wrong part-way
    (NAME_Q, NAME_TOLD, "I'm glad to help! I'm a chatbot, and I'm ready to help you."),
    ("What is the weather like on Mars?", "",
     "What is the weather like on Mars today? What is the weather like on Mars, friend?"),
    # and replies whose outcome must stay the same, settled early or not
    (NAME_Q, NAME_TOLD, "Your name is Ada. I'm a chatbot, and I'm ready to help you."),
    ("Tell me a short fact about cats.", "", "Cats sleep a lot. I'm an AI, so cats are nice."),
    (NAME_Q, NAME_TOLD, "I'm glad to help! Ada is your name, as you told me before."),
]


def settle_stream(g: ReplyGuard, reply: str, step: int = 3) -> tuple[str, int]:
    """What the guard said, and how many deltas it read before the reply was over."""
    said, read = "", 0
    for i in range(0, len(reply), step):
        said += g.feed(reply[i:i + step])
        read += 1
        if g.settled or g.stopped:
            break
    return said + g.finish(), read


@pytest.mark.parametrize(("user", "notes", "reply"), SETTLE_CASES)
def test_knowing_the_last_sentence_says_what_the_reply_would_have_said(
        user: str, notes: str, reply: str) -> None:
    unlimited, limited = guard(user, notes), guard(user, notes)
    limited.max_sentences = 2
    assert settle_stream(limited, reply)[0] == settle_stream(unlimited, reply)[0]


def test_a_last_sentence_that_talks_about_itself_gives_the_fallback_at_once() -> None:
    g = guard(NAME_Q, NAME_TOLD)
    g.max_sentences = 2
    reply = "I'm glad to help! I'm a chatbot, and I'm ready to help you with your questions."
    said, read = settle_stream(g, reply)
    assert said == "Ada is your name." and g.settled and not g.stopped
    assert read * 3 < reply.index("ready")  # at "chatbot", not at the reply's end
    assert any("talks about itself (the last sentence" in n for n in g.notices)


def test_a_last_sentence_that_repeats_the_user_gives_the_fallback_at_once() -> None:
    user = "What is the weather like on Mars?"
    g = guard(user)
    g.max_sentences = 1
    reply = "What is the weather like on Mars, you ask, is a fine question."
    said, read = settle_stream(g, reply)
    assert said == "Sorry, I am not sure." and g.settled
    assert read * 3 < reply.index("is a fine")


def test_the_fallback_waits_when_a_sentence_may_still_follow_or_one_was_spoken() -> None:
    g = guard(NAME_Q, NAME_TOLD)
    g.max_sentences = 3  # a third sentence may still use the note
    said, _ = settle_stream(g, "I'm glad to help! I'm a chatbot, and I'm ready. Ada, hi.")
    assert not g.settled and said == "Ada, hi."
    g = guard(NAME_Q, NAME_TOLD)
    g.max_sentences = 2
    said, _ = settle_stream(g, "Your name is Ada. I'm a chatbot, and I'm ready to help.")
    assert not g.settled and said == "Your name is Ada."


def test_the_speaker_stops_reading_a_reply_that_can_say_nothing_more() -> None:
    parts = model_speaker()  # the model answers about the user too
    reply = "I'm glad to help! I'm a chatbot, and I'm ready to help you with " + "a " * 40
    model, heard = Replies(reply + "."), Heard()
    payload: dict[str, Any] = {"intent": "question", "user_said": NAME_Q,
                               "recent_conversation": "", "memory_context": NAME_TOLD}

    async def go() -> str:
        ctl = Controller(parts, model, sinks={"tts": heard})  # type: ignore[dict-item]
        assert ctl.settings.spoken_sentences == 2 and ctl.grammar is not None
        with anyio.fail_after(10):
            result = await ctl.run_turn([Incoming(text=NAME_Q, channel="to_speaker",
                                                  sender="router", payload=payload)])
        return result.text

    assert anyio.run(go) == "Ada is your name."
    assert heard.text == ["Ada is your name."] and heard.dropped == 0  # said whole
    assert model.sent * 3 < reply.index("ready")  # the model was not read on
