"""The spoken reply's guard (issue 17): the runtime says the replies it knows itself, and a
reply repeating the user's words is never spoken; half a sentence never is either."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from terrarium.config import load_team
from terrarium.config.models import ReplyGuardSpec
from terrarium.controller.assembly import assemble
from terrarium.controller.guard import ReplyGuard, is_echo, second_person
from terrarium.controller.loop import Controller, Incoming
from terrarium.events import Event, TranscriptAppended
from terrarium.llm.types import ChatRequest, StreamDelta, Usage

ROOT = Path(__file__).resolve().parent.parent
SPEC = ReplyGuardSpec(replies={"thanks": "You're welcome!"}, echo_reply="Sorry, I am not sure.")


class Replies:
    """Streams a fixed reply in small pieces and counts the requests."""

    name = "replies"
    last_usage: Usage | None = None
    supports_continuation = False

    def __init__(self, reply: str, finish: str = "stop") -> None:
        self.reply, self.finish, self.calls = reply, finish, 0

    def describe(self) -> str:
        return self.name

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        self.calls += 1
        for i in range(0, len(self.reply), 4):
            yield StreamDelta(text=self.reply[i:i + 4])
        yield StreamDelta(finish_reason=self.finish)


class Heard:
    """A sink recording what the voice would have been given."""

    def __init__(self) -> None:
        self.text: list[str] = []

    async def begin(self, utterance_id: str) -> None: ...

    async def write(self, text: str) -> None:
        self.text.append(text)

    async def end(self) -> None: ...

    async def interrupt(self) -> None:
        return None


def feed_all(guard: ReplyGuard, reply: str, step: int = 3) -> str:
    out = "".join(guard.feed(reply[i:i + step]) for i in range(0, len(reply), step))
    return out + guard.finish()


def guard_for(user: str, intent: str = "question") -> ReplyGuard:
    g = ReplyGuard.for_turn(SPEC, [{"user_said": user, "intent": intent}])
    assert g is not None
    return g


def test_echo_is_the_benchmark_measure() -> None:
    assert is_echo("Hi, my name is Ada.", "Hello, my name is Ada. I love tea.")
    assert not is_echo("Thanks.", "Thanks!")  # under three words: never an echo
    assert not is_echo("What is my name?", "Your name is Ada.")  # 2 of 4 words


def test_an_echoing_sentence_is_never_spoken_and_the_reply_goes_on() -> None:
    g = guard_for("What is my name now?")
    said = feed_all(g, "What is my name now? Your name is Ada.")
    assert said == "Your name is Ada."
    assert g.notices and "repeats the user" in g.notices[0]


def test_a_reply_of_echoes_says_the_users_facts_back_or_the_echo_reply() -> None:
    g = ReplyGuard.for_turn(SPEC.model_copy(update={"facts_field": "memory_context"}),
                            [{"user_said": "Where do I live?", "intent": "question",
                              "memory_context": "I live in Lisbon. Ada is my name."}])
    assert g is not None
    assert feed_all(g, "Where do I live?") == "You live in Lisbon. Ada is your name."
    g = guard_for("I love green tea.")
    assert feed_all(g, "I love green tea.") == "Sorry, I am not sure."


def test_second_person() -> None:
    assert second_person("I am 42 years old. My favourite colour is blue.") == (
        "You are 42 years old. Your favourite colour is blue.")
    assert second_person("Ada is my name.") == "Ada is your name."


def test_an_echoing_second_sentence_is_dropped_and_the_first_kept() -> None:
    g = guard_for("Where do I live now?")
    said = feed_all(g, "Good question. Where do I live now?")
    assert said == "Good question."


def test_a_sentence_without_an_end_is_never_spoken() -> None:
    g = guard_for("What is the weather like?")
    assert feed_all(g, "It is sunny today. And tomorrow it will") == "It is sunny today."
    g = guard_for("What is the weather like?")
    assert feed_all(g, "It will be") == "Sorry, I am not sure."  # never silent


def test_a_fixed_intent_needs_no_model() -> None:
    g = guard_for("Thanks a lot, really.", intent="thanks")
    assert g.fixed == "You're welcome!"
    assert ReplyGuard.for_turn(SPEC, [{"text": "no fields"}]) is None
    assert ReplyGuard.for_turn(None, [{"user_said": "x"}]) is None


def speak(payload: dict[str, Any], model: Replies) -> tuple[str, list[str], list[str]]:
    team = load_team(ROOT / "examples" / "voice_assistant")
    parts = assemble(team, "speaker")
    notices: list[str] = []

    def entry(ev: Event) -> None:
        if isinstance(ev, TranscriptAppended) and ev.entry.kind == "notice":
            notices.append(ev.entry.text)

    heard = Heard()

    async def go() -> str:
        ctl = Controller(parts, model, sinks={"tts": heard}, emit=entry)  # type: ignore[dict-item]
        with anyio.fail_after(10):
            result = await ctl.run_turn([Incoming(text=payload["user_said"],
                                                  channel="to_speaker", sender="router",
                                                  payload=payload)])
        return result.text

    text = anyio.run(go)
    return text, heard.text, notices


def test_the_speaker_never_speaks_the_users_words_back() -> None:
    payload = {"intent": "question", "user_said": "Do I love green tea and cake?",
               "recent_conversation": "", "memory_context": ""}
    text, heard, notices = speak(payload, Replies("I love green tea and cake. Yes."))
    assert "".join(heard) == text == "Yes."
    assert any("repeats the user" in n for n in notices)
    text, heard, _ = speak(payload, Replies("I love green tea and cake."))
    assert "".join(heard) == text == "Sorry, I am not sure about that."  # no facts given
    payload["memory_context"] = "I love green tea."
    text, _, _ = speak(payload, Replies("Do I love green tea and cake?"))
    assert text == "You love green tea."


def test_the_speaker_says_goodbye_itself() -> None:
    model = Replies("I'm sorry for your loss.")
    payload = {"intent": "goodbye", "user_said": "Thanks, goodbye.",
               "recent_conversation": "", "memory_context": ""}
    text, heard, _ = speak(payload, model)
    assert model.calls == 0
    assert text == "".join(heard) == "Goodbye, take care!"


def test_an_answer_passes_whole_sentences() -> None:
    model = Replies("Your name is Ada. Nice to meet you. And", finish="length")
    payload = {"intent": "question", "user_said": "What is my name?",
               "recent_conversation": "", "memory_context": "Ada is my name."}
    text, heard, _ = speak(payload, model)
    assert text == "Your name is Ada. Nice to meet you."
    assert all(h.strip()[-1] in ".!?" for h in heard)
