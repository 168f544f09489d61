"""Session 18 (issue 30): a sentence the reply guard lets through from its start never ends
as an echo of the user or as a fragment. The voice speaks only its first piece before the
sentence's end, so the guard gives it that much and holds the rest to the sentence's end;
when the rest goes wrong (repeats the user, speaks as them, talks of itself, loops) or never
ends (max_tokens), the sentence ends at its last clause boundary that makes a sentence.
Deterministic: the guard alone, the voice's own segmenter, and a scripted speaker turn."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from terrarium.controller.clause_end import clause_end, stands_alone
from terrarium.controller.guard import is_echo, repeats, self_talk
from terrarium.controller.incoming import Incoming
from terrarium.controller.loop import Controller
from terrarium.llm.types import ChatRequest, StreamDelta, Usage
from terrarium.voice.segment import SentenceSegmenter
from tests.early_helpers import model_speaker
from tests.guard_helpers import VOICE, VoiceCut, guard, say, stream

EGG = "How long should I boil an egg for a soft yolk?"
EGG_REPLY = "Yes, you should definitely boil an egg for a soft yolk for about six minutes."


def test_a_released_sentence_that_would_repeat_the_user_ends_at_a_clause() -> None:
    assert is_echo(EGG, EGG_REPLY)  # as written, the model's sentence is an echo
    g = guard(EGG)
    said = "".join(stream(g, EGG_REPLY))
    assert g.released.startswith("Yes, you should")  # spoken from its start
    assert said == "Yes, you should definitely boil an egg."
    assert not is_echo(EGG, said) and g.stopped and g.stop_reason == "it repeats the user"
    assert any("ended at a clause, it repeats the user" in n for n in g.notices)


def test_without_the_voice_s_first_piece_an_echo_with_no_clause_end_goes_on_as_before() -> None:
    g = guard(EGG, first_piece=None)  # all given as it comes: no boundary past what was heard
    assert "".join(stream(g, EGG_REPLY)) == EGG_REPLY
    assert any("spoken on, no clause end" in n for n in g.notices)


BOOK = "Can you recommend a good book for a long train trip to Paris?"


def test_a_released_sentence_that_goes_on_to_speak_as_the_user_ends_at_a_clause() -> None:
    g = guard(BOOK)
    said = "".join(stream(g, "Well, that is a fine question and my home is Paris too. Read Dune."))
    assert said == "Well, that is a fine question."  # not "Well, that is a" (a fragment)
    assert g.stopped and g.stop_reason == "it speaks as the user"


def test_a_released_sentence_cut_by_max_tokens_ends_at_its_last_clause() -> None:
    g = guard("Tell me something odd about squid.")
    cut = ("The answer is a classic paradox: squid have three hearts, but when it comes to "
           "the blood itself, it is actually blue because of the copper in")
    said = "".join(g.feed(cut[i:i + 3]) for i in range(0, len(cut), 3))
    assert said and "." not in said  # the start was given, the rest held
    said += g.end_unfinished()  # the model stopped at max_tokens
    assert said == ("The answer is a classic paradox: squid have three hearts, but when it "
                    "comes to the blood itself, it is actually blue.")
    assert g.finish() == "" and not g.stopped


def test_a_released_sentence_that_loops_ends_at_a_clause() -> None:
    g = guard("What should I pack for a week of hiking in the hills?")
    said = "".join(stream(g, "Pack warm layers and good boots, and socks, socks, socks, socks."))
    # kept up to the loop's third "socks" (twice running is no loop, to the bench either)
    assert said == "Pack warm layers and good boots, and socks, socks."
    assert repeats(said) == -1 and g.stopped and g.stop_reason == "the reply repeats itself"


@pytest.mark.parametrize("reply", [
    EGG_REPLY,
    "Well, that is a fine question and my home is Paris too. Read Dune.",
    "Sure! Boiling takes six minutes. Then cool it.",
    "It is a lovely idea, and you could try it tonight with friends.",
    "The short answer is yes, but only on weekdays.",
    "Yes you\nshould definitely boil an egg for a soft yolk for six minutes.",
])
@pytest.mark.parametrize("step", [1, 3, 5])
def test_the_voice_gets_its_first_piece_exactly_when_it_did_before(reply: str,
                                                                   step: int) -> None:
    """Time to first audio (issue 29): until the voice's first piece is cut, the guard
    gives the same text at the same delta as when it gave everything as it came, and the
    voice cuts the same first piece at the same delta (the words past it kept back)."""
    user = EGG if "egg" in reply else BOOK
    old, new = guard(user, first_piece=None), guard(user)
    voices = (VoiceCut(), VoiceCut())
    first: list[tuple[int, str] | None] = [None, None]
    given = ["", ""]
    for k, i in enumerate(range(0, len(reply), step)):
        out = old.feed(reply[i:i + step])
        pieces = voices[0].feed(out)
        new_out, new_pieces = say(new, voices[1], reply[i:i + step])
        given = [given[0] + out, given[1] + new_out]
        if first[1] is None:  # the same text until the piece, less the words kept back
            assert given[0].startswith(given[1])
        for j, got in enumerate((pieces, new_pieces)):
            if got and first[j] is None:
                first[j] = (k, got[0])
        if None not in first:
            break
    assert first[0] == first[1]


def test_clause_ends_that_make_a_sentence() -> None:
    assert stands_alone("Yes, you should definitely boil an egg")
    assert stands_alone("Well, that is a fine question")
    assert stands_alone("You should go when it rains")
    assert stands_alone("If you want a soft yolk, boil the egg")
    assert not stands_alone("If you want a soft yolk")  # no main clause
    assert not stands_alone("To remove red wine from a carpet")
    assert not stands_alone("Sure, in the morning")
    assert not stands_alone("It is a term, but when it comes to the animal itself")
    assert not stands_alone("You should boil the")  # ends on a word of grammar


def test_a_clause_end_lies_past_what_the_voice_was_given() -> None:
    text = "Yes, you should definitely boil an egg for a soft yolk"
    assert clause_end(text, len("Yes, you"), lambda s: True) == (
        " should definitely boil an egg.")
    assert clause_end(text, len(text) - 3, lambda s: True) is None
    assert clause_end(text, 10, lambda s: "egg" not in s) is None  # none that ok accepts


def test_a_thing_of_the_world_stops_no_sentence_heard_in_part() -> None:
    """dev7: "To remove red" was heard, the rest stopped at "a carpet removal machine"."""
    carpet = "To remove it, you can use a carpet removal machine that"
    assert self_talk(carpet) and not self_talk(carpet, whole=False)
    for said in ("As an AI assistant, I cannot cook.", "I am just a machine.",
                 "I'm a helpful assistant.", "You're a chatbot.", "The user is asking."):
        assert self_talk(said, whole=False)
    user = "How do I get red wine out of a carpet? My brother Kit spilled some."
    g = guard(user)
    assert g.mentions_user
    reply = ("To remove red wine from a carpet, you can use a carpet removal machine that "
             "lifts it. A machine like that is handy.")
    said = "".join(stream(g, reply))
    # the released sentence whole; a later one naming a machine is still dropped whole
    assert said == ("To remove red wine from a carpet, you can use a carpet removal "
                    "machine that lifts it.")
    assert not g.stopped


# -- in the controller: the voice's first piece, and an ending at max_tokens ----------------

class Cut:
    """A model whose reply is cut off by max_tokens."""

    name = "cut"
    last_usage: Usage | None = None
    supports_continuation = False

    def __init__(self, reply: str) -> None:
        self.reply = reply

    def describe(self) -> str:
        return self.name

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        for i in range(0, len(self.reply), 3):
            yield StreamDelta(text=self.reply[i:i + 3])
        yield StreamDelta(finish_reason="length")


class Voice:
    """A voice that cuts pieces as the TTS output does, and forgets unfinished words."""

    segmenter_config = VOICE

    def __init__(self) -> None:
        self.segmenter = SentenceSegmenter(VOICE)
        self.pieces: list[str] = []

    async def begin(self, utterance_id: str) -> None: ...

    async def write(self, text: str) -> None:
        self.pieces += self.segmenter.feed(text)

    async def end(self) -> None:
        self.pieces += self.segmenter.flush()

    async def interrupt(self) -> None:
        return None

    async def drop_unfinished(self) -> str:
        rest = self.segmenter.pending.strip()
        if rest.endswith("."):
            return ""
        self.segmenter.reset()
        return rest


def test_the_speaker_ends_a_released_sentence_cut_by_max_tokens_at_a_clause() -> None:
    parts = model_speaker()
    user = "Tell me something odd about squid."
    model = Cut("The answer is a classic paradox: squid have three hearts, but when it "
                "comes to the blood itself, it is actually blue because of the copper in")
    voice = Voice()
    payload: dict[str, Any] = {"intent": "question", "user_said": user,
                               "recent_conversation": "", "memory_context": ""}

    async def go() -> str:
        ctl = Controller(parts, model, sinks={"tts": voice})  # type: ignore[dict-item]
        with anyio.fail_after(10):
            result = await ctl.run_turn([Incoming(text=user, channel="to_speaker",
                                                  sender="router", payload=payload)])
        return result.text

    said = anyio.run(go)
    assert said.endswith("it is actually blue.")
    assert voice.pieces[0] == "The answer is a"  # the first piece, then the rest whole
    assert " ".join(voice.pieces) == said


def test_the_facts_said_back_for_a_question_of_the_world_never_repeat_it() -> None:
    user = "Should I drink coffee every morning?"
    g = guard(user, "I drink coffee every morning.")
    assert not g.about_user
    said = "".join(stream(g, "Should you drink coffee every morning?"))
    assert not is_echo(user, said)  # "You drink coffee every morning." was one
    assert said == "Sorry, I am not sure."


def test_a_clause_end_is_looked_for_in_the_released_sentence_only() -> None:
    g = guard(EGG)
    said = g.feed("Yes, you should definitely ")  # released, and its first piece cut
    assert said == "Yes, you should " and g.released and g.take_cut()  # the rest kept back
    said += g.feed("boil an egg for a soft yolk. Then, cool it, and eat it.") + g.finish()
    assert said == "Yes, you should definitely boil an egg."  # not "…, cool it, and eat."


# -- for any reply and any split: the same first piece, and no echo unless none could end it --

_WORDS = st.sampled_from(["you", "should", "boil", "an", "egg", "for", "a", "soft", "yolk",
                          "it", "is", "easy", "and", "but", "the", "water", "minutes", "six",
                          "Yes,", "well,", "which", "takes", "when", "hot", "pan", "cool"])


@settings(max_examples=150, deadline=None)
@given(ws=st.lists(_WORDS, min_size=4, max_size=24), step=st.integers(min_value=1, max_value=9))
def test_any_released_reply_keeps_its_first_piece_and_ends_whole_or_says_why(
        ws: list[str], step: int) -> None:
    reply = " ".join(ws).capitalize() + ". Then eat it."
    old, new = guard(EGG, first_piece=None), guard(EGG)
    voices = (VoiceCut(), VoiceCut())
    heard: tuple[list[str], list[str]] = ([], [])
    given = ["", ""]
    for i in range(0, len(reply), step):
        before = not heard[1]
        out = old.feed(reply[i:i + step])
        heard[0].extend(voices[0].feed(out))
        new_out, pieces = say(new, voices[1], reply[i:i + step])
        heard[1].extend(pieces)
        given = [given[0] + out, given[1] + new_out]
        if before:  # the same text until the piece, less the words kept back
            assert given[0].startswith(given[1])
        if new.stopped or new.settled:
            break
    if heard[0] and heard[1]:
        assert heard[0][0] == heard[1][0]  # the voice's first piece, the same text
    voice = voices[1].segmenter
    rest = voice.pending.strip()
    if new.stopped and rest and rest[-1] not in ".!?":
        voice.reset()  # the voice forgets the unfinished words (TurnOutput.drop_unfinished)
    said = " ".join([*heard[1], *voice.feed(new.finish()), *voice.flush()])
    if is_echo(EGG, said):  # only a sentence with no clause end to stop at is spoken on
        assert any(n.startswith(("spoken on", "spoken although")) for n in new.notices)
    if said.strip() and said.rstrip()[-1] not in ".!?":  # half a sentence: only when a
        assert new.stopped  # rest going wrong had no clause end to stop at
        assert not any(n.startswith("ended at a clause") for n in new.notices)


def test_a_yes_or_no_that_restates_the_question_ends_before_it_does() -> None:
    """Probe of session 18: "Is it healthy to cycle to work every day?" -> "No, it's not
    healthy to cycle to work every day." (an echo, released at "No, it's not healthy")."""
    user = "Is it healthy to cycle to work every day?"
    g = guard(user)
    said = "".join(stream(g, "No, it's not healthy to cycle to work every day. It is tiring."))
    assert said == "No, it's not healthy to cycle." and not is_echo(user, said)


def test_the_facts_said_back_are_said_without_the_question_when_they_can_be() -> None:
    user = "Should I drink coffee every morning before work?"
    g = guard(user, "I drink coffee every morning before work.")
    said = "".join(stream(g, "You drink coffee every morning before work."))
    assert said == "You drink coffee every morning." and not is_echo(user, said)
