"""An announcement is spoken to its kind ("Here's a tip for sleeping better: 1) Don't ..." is
said "Here's a tip: Don't ..."): the voice has "Here's a tip" as its first piece before the
model has written the words of the lead-in that restate the question (controller/
announce.py). Deterministic: the guard, and the voice's cut of what it lets through."""

from __future__ import annotations

import pytest

from terrarium.controller.announce import kind_end
from tests.guard_helpers import VoiceCut, guard, say

TIP = "Give me a tip for sleeping better."
PARTY = "Can you suggest some ideas for a birthday party?"


def spoken(user: str, reply: str, step: int, notes: str = ""
           ) -> tuple[str, list[str], int | None, list[str]]:
    """What was said, the voice's pieces, how much of the reply had come when the voice
    had its first piece, and the guard's notices."""
    g, voice = guard(user, notes), VoiceCut()
    said, pieces, first = [], [], None
    for i in range(0, len(reply), step):
        out, cut = say(g, voice, reply[i:i + step])
        said.append(out)
        pieces += cut
        if cut and first is None:
            first = min(i + step, len(reply))
        if g.stopped or g.settled:
            break
    end = g.finish()
    return "".join([*said, end]).strip(), pieces + voice.feed(end) + voice.segmenter.flush(), \
        first, g.notices


@pytest.mark.parametrize("step", [1, 2, 3, 5, 7])
@pytest.mark.parametrize(("user", "reply", "said", "piece"), [
    (TIP, "Here's a tip for sleeping better: 1) Don't lie down in bed awake. 2) Don't eat.",
     "Here's a tip: Don't lie down in bed awake. 2) Don't eat.", "Here's a tip"),
    (TIP, "Here's a tip for sleeping better: 1. Don't lie down too early in the morning.",
     "Here's a tip: Don't lie down too early in the morning.", "Here's a tip"),
    (TIP, "Here's a quick tip for sleeping better: keep a regular bedtime.",
     "Here's a quick tip: Keep a regular bedtime.", "Here's a quick"),
    (PARTY, "Here are some ideas for a birthday party: 1) A picnic in the park. 2) A movie night.",
     "Here are some ideas: A picnic in the park. 2) A movie night.", "Here are some"),
    ("How do I make a paper plane?",
     "Here's how to make a paper plane: fold a sheet of paper in half lengthwise.",
     "Here's how: Fold a sheet of paper in half lengthwise.", "Here's how"),
    ("Give me some tips for sleeping better.",
     "Here are some tips for sleeping better. Keep your room cool. Go to bed early.",
     "Here are some tips. Keep your room cool. Go to bed early.", "Here are some"),
])
def test_an_announcement_that_restates_the_question_is_said_to_its_kind(
        user: str, reply: str, said: str, piece: str, step: int) -> None:
    text, pieces, first, notices = spoken(user, reply, step)
    assert text == said
    assert pieces[0] == piece
    # the voice had its first piece before the lead-in's restating words were written
    assert first is not None and first < reply.index(" for " if " for " in reply else " to ") + 12
    assert any(n.startswith("said to its kind") for n in notices)


@pytest.mark.parametrize("step", [1, 3, 7])
@pytest.mark.parametrize(("user", "reply"), [
    (TIP, "Here's a tip for you: keep your room cool and dark."),  # its own words
    (TIP, "Here's a tip that always works for me when I can't sleep."),
    (PARTY, "Here are some ideas that kids love: a picnic or a treasure hunt."),
])
def test_an_announcement_in_its_own_words_is_spoken_whole_from_its_kind(
        user: str, reply: str, step: int) -> None:
    text, _, first, notices = spoken(user, reply, step)
    assert text == reply
    assert first is not None and first < len(reply) // 2
    assert not any(n.startswith("said to its kind") for n in notices)


@pytest.mark.parametrize(("user", "reply", "said"), [
    ("What is the capital of Peru?", "Here is the capital of Peru: it is Lima.", "It is Lima."),
    (TIP, "Here's what you can do: keep your room cool.", "Here's what you can do: keep your "
     "room cool."),
])
def test_no_kind_no_early_start(user: str, reply: str, said: str) -> None:
    """"the capital" may be the answer's own, and "what" names no kind: judged whole, as
    before (the lead-in dropped at its colon when it repeats the user)."""
    text, _, first, _ = spoken(user, reply, 3)
    assert text == said
    assert first is None or first > reply.index(":")  # None: cut only at the reply's end


def test_a_voice_that_cannot_be_told_where_to_cut_waits_as_before() -> None:
    g = guard(TIP, first_piece=None)
    reply = "Here's a tip for sleeping better: keep your room cool."
    outs = [g.feed(reply[i:i + 3]) for i in range(0, len(reply), 3)]
    assert "".join(outs[:reply.index(":") // 3]) == ""
    assert ("".join(outs) + g.finish()).strip() == "Keep your room cool."


def test_an_announcement_cut_short_ends_at_its_kind() -> None:
    """The model's length limit before its end: the kind alone, as a sentence."""
    text, _, _, notices = spoken(TIP, "Here's a tip for sleeping better", 3)
    assert text == "Here's a tip."
    assert any("its end never came" in n for n in notices)


def test_asked_about_themselves_an_announcement_is_judged_whole() -> None:
    reply = "Here are some ideas for a party: you love board games."
    _, _, first, notices = spoken("What are my favourite ideas for a party?", reply, 3,
                                  notes="I love board games at parties.")
    assert first is None or first > reply.index(":")
    assert not any(n.startswith("said to its kind") for n in notices)


@pytest.mark.parametrize(("held", "kind"), [
    ("Here's a tip for ", "Here's a tip"),
    ("Here are a few ideas to ", "Here are a few ideas"),
    ("here is a list of ", "here is a list"),
    ("Sure, here are some great ways to ", "Sure, here are some great ways"),
    ("Here's a tip: keep", "Here's a tip"),
    ("Here's how to ", "Here's how"),
    ("Here's a tip for", None),  # "for" may still become "forever"
    ("Here's a", None),
    ("Here is the capital of ", None),
    ("Here's what you ", None),
    ("Here are some of the ", None),
    ("The tip for ", None),
])
def test_kind_end(held: str, kind: str | None) -> None:
    k = kind_end(held)
    assert (held[:k] if k is not None else None) == kind
