"""The spoken reply's guard (issue 17): the runtime says the replies it knows itself, and a
reply repeating the user's words is never spoken; half a sentence never is either."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from terrarium.config.models import ReplyGuardSpec
from terrarium.controller.guard import ReplyGuard, is_echo, safe_start, second_person
from terrarium.controller.loop import Controller, Incoming
from terrarium.events import Event, TranscriptAppended
from terrarium.llm.types import ChatRequest, StreamDelta, Usage
from tests.early_helpers import model_speaker, spoken_through

ROOT = Path(__file__).resolve().parents[2]
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
    parts = model_speaker()  # the model answers about the user too
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
    payload = {"intent": "question", "user_said": "Is green tea good with lemon cake?",
               "recent_conversation": "", "memory_context": ""}
    text, heard, notices = speak(payload, Replies("Green tea is good with lemon cake. Yes."))
    assert "".join(heard) == text == "Yes."
    assert any("repeats the user" in n for n in notices)
    text, heard, _ = speak(payload, Replies("Green tea is good with lemon cake."))
    assert "".join(heard) == text == "Sorry, I am not sure about that."  # no facts given
    payload["memory_context"] = "I love green tea."
    text, _, _ = speak(payload, Replies("Is green tea good with lemon cake?"))
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


# -- the first sentence released at its start (release_first_clause) ------------------------

EARLY = SPEC.model_copy(update={"release_first_clause": True})
ASK = "Can you recommend something to listen to tonight?"


def early_guard(user: str) -> ReplyGuard:
    g = ReplyGuard.for_turn(EARLY, [{"user_said": user, "intent": "question"}])
    assert g is not None
    return g


def test_a_safe_start_has_words_enough_and_leaves_the_echo_far() -> None:
    assert safe_start(ASK, "I am sorry for ")  # four words, none of the user's
    # session 19: three words restating nothing of the user's (echo.copies_on) will do
    assert safe_start(ASK, "I am sorry ")
    assert not safe_start(ASK, "I am ")  # two words: too soon to tell
    assert not safe_start(ASK, "I am so")  # a word still being written is not counted
    assert not safe_start(ASK, "I can recommend ")  # restating: "something to listen to ..."
    # the start repeats the user: never, however long
    assert not safe_start("What is the weather like on Mars?", "The weather is like ")
    # eight words: five repeated make an echo; a start sharing one leaves four
    assert safe_start(ASK, "I am sure you can find ")
    assert not safe_start(ASK, "I can recommend you something ")
    # five words: three repeated make an echo, and an answer reuses them
    # ("No, it's not necessary to take an umbrella.")
    assert not safe_start("Should I take an umbrella?", "No, it's not necessary to ")
    assert not safe_start("Where's my phone?", "I am not quite sure, but ")
    # the start uses up the user's last words: the rest would have to say "I boil an egg"
    assert safe_start("How do I boil an egg?", "Boiling an egg is ")
    # ... and here the rest would need only "like on Mars" again, after saying "on Mars":
    # let through since session 19 (echo.copies_on: nothing of the user's left to go on)
    assert safe_start("What is the weather like on Mars?", "The weather on Mars ")
    # ... as is a start that left the user's words ("Mondays are a wonderful day ...")
    assert safe_start("Say something nice about Mondays.", "Mondays are a wonderful ")


def test_echo_left_counts_what_the_rest_must_repeat_exactly() -> None:
    """The fewest words any rest must add for start + rest to be an echo, checked against
    every rest made of the user's own words (the only words that can add to it)."""
    import itertools
    import random

    from terrarium.controller.guard import ECHO_SHARE, echo_left, lcs

    rng = random.Random(7)
    for _ in range(400):
        user = [rng.choice("abcdef") for _ in range(rng.randint(3, 7))]
        start = [rng.choice("abcdef") for _ in range(rng.randint(0, 5))]
        echo = -(-len(user) * int(ECHO_SHARE * 10) // 10)  # ceil(0.6 n)
        fewest = next(size for size in range(len(user) + 1)
                      for pick in itertools.combinations(range(len(user)), size)
                      if lcs(user, start + [user[i] for i in pick]) >= echo)
        assert echo_left(user, start) == fewest, (user, start)


def test_the_first_sentence_is_spoken_from_its_start_when_safe() -> None:
    g = early_guard(ASK)
    reply = "I am sorry for any confusion, but I cannot play music. Try some jazz."
    assert g.feed("I am so") == ""  # held: two complete words
    out = g.feed("rry for any confusion, but")
    assert out == "I am sorry for any confusion, but"  # from here, through as it comes
    said = out + g.feed(reply[len(out):]) + g.finish()
    assert said == reply and g.released == "I am sorry for any confusion, but"
    assert g.notices == []


def test_a_start_that_uses_up_the_users_last_words_is_spoken_from_its_start() -> None:
    """"Boiling an egg is" repeats two of "How do I boil an egg?", but the rest would have
    to say "I boil an egg" again to make it an echo: released at its third word (session
    19: it restates nothing of the user's after "egg", :func:`copies_on`)."""
    g = early_guard("How do I boil an egg?")
    assert g.feed("Boiling an ") == ""  # two words: too soon
    out = g.feed("egg is a")
    assert out == "Boiling an egg is a"
    reply = "Boiling an egg is a simple way to cook breakfast."
    assert out + g.feed(reply[len(out):]) + g.finish() == reply and g.notices == []


def test_the_rest_of_the_reply_is_checked_as_before() -> None:
    g = early_guard("Do I love green tea and cake?")
    said = feed_all(g, "That is a question I like. Do I love green tea and cake? Yes.")
    assert said == "That is a question I like. Yes."  # the echoing second sentence dropped
    assert g.released.startswith("That is a")
    assert any("repeats the user" in n for n in g.notices)


def test_an_echo_prefix_is_never_released_early() -> None:
    user = "Hi, my name is Ada and I love green tea."
    g = early_guard(user)
    reply = "Hello, my name is Ada and I love green tea. Nice to meet you."
    outs = [g.feed(reply[i:i + 3]) for i in range(0, len(reply), 3)]
    assert "".join(outs) + g.finish() == "Nice to meet you."
    assert g.released == "Nice to meet"  # the next sentence, the first spoken, at 3 words


def test_a_released_sentence_is_spoken_whole_even_if_its_end_repeats_the_user() -> None:
    """Once its start is heard the sentence is never cut: a half sentence would be worse.
    The rule makes this rare (bench/conversation.py counts echoes); the transcript says so."""
    g = early_guard("I love green tea and cake")
    said = feed_all(g, "Well that is nice, I love green tea and cake too.")
    assert said == "Well that is nice, I love green tea and cake too."
    assert any("spoken although it repeats the user" in n for n in g.notices)


def test_a_released_sentence_cut_before_its_end_is_reported() -> None:
    g = early_guard(ASK)
    cut = "I am sorry for any confusion, but I"
    assert feed_all(g, cut) == cut  # the voice's drop_unfinished forgets the unfinished end
    assert any("its end never came" in n for n in g.notices)


def test_off_by_default_the_first_sentence_is_held_to_its_end() -> None:
    g = guard_for(ASK)
    assert g.feed("I am sorry for any confusion, but") == ""
    said = g.feed(" I cannot play music. ")
    assert said == "I am sorry for any confusion, but I cannot play music."


def paused_reply(tmp_path: Path, release: bool, user: str, reply: str
                 ) -> tuple[list[str], list[str], str]:
    """A speaker turn through the real tts output with the first-audio pause: what the
    model streamed before it was paused (and after), what was synthesized, the text."""
    import threading

    from terrarium.voice import CallableSynthesizer, NullAudioSink, SegmenterConfig, TTSOutput
    from tests.loop_helpers import make_parts
    from tests.yield_fakes import RATE, GatedSynth, Recording

    tmp_path.mkdir(parents=True, exist_ok=True)
    events: list[tuple[str, Any]] = []
    gate = threading.Event()
    model = Recording([{"reply": reply}], chunk_size=2, continuation=True, events=events,
                      gate=gate)
    synth = GatedSynth(events, gate)
    # the speaker's first piece: a clause of 12 characters, or a 28-character cut
    tts = TTSOutput(CallableSynthesizer(synth, RATE), NullAudioSink(), yield_first_audio=True,
                    segmenter=SegmenterConfig(first_clause_chars=12, first_piece_max_chars=28))
    parts = make_parts(tmp_path, output={"default": "tts", "named_outputs": {"tts": {
        "type": "tts", "description": "Spoken."}}},
        reply_guard={"release_first_clause": release})

    text = spoken_through(parts, model, tts, user, {"user_said": user, "intent": "question"})
    return model.streamed, synth.calls, text


def test_released_early_the_first_clause_is_audio_while_the_model_waits(tmp_path: Path) -> None:
    reply = "I am sorry for any confusion, but I cannot play music for you. Try jazz."
    streamed, synth, text = paused_reply(tmp_path / "on", True, ASK, reply)
    assert text == reply and "".join(streamed) == reply
    assert synth[0] == "I am sorry for any confusion"  # the first clause, as without a guard
    assert "cannot" not in streamed[0]  # the model was paused at the first clause ...
    streamed, synth, text = paused_reply(tmp_path / "off", False, ASK, reply)
    assert text == reply and synth[0] == "I am sorry for any confusion"
    assert "for you." in streamed[0]  # ... where the guard alone held the whole sentence


def test_an_echo_start_is_held_and_dropped_with_the_pause(tmp_path: Path) -> None:
    user = "Hi, my name is Ada and I love green tea."
    reply = "Hello, my name is Ada and I love green tea. Nice to meet you, Ada."
    _, synth, text = paused_reply(tmp_path, True, user, reply)
    assert text == "Nice to meet you, Ada."
    assert " ".join(synth) == "Nice to meet you Ada."  # the voice drops the clause's comma
