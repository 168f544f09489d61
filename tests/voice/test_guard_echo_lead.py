"""A lead-in that repeats the user and ends at a colon ("Here's a tip for sleeping better:
...") is dropped at its colon, and what follows is the reply's first sentence, spoken from
its start as any other: the guard no longer waits for the whole sentence to drop it. An
announcement ("Here's a tip ...") given to a voice that cuts its first piece where told is
spoken to its kind instead (tests/voice/test_guard_announce.py); these tests give the voice
every word (``first_piece=None``), or start with no announcer."""

from __future__ import annotations

import pytest

from tests.guard_helpers import guard, stream

TIP = "Give me a tip for sleeping better."


@pytest.mark.parametrize("step", [1, 3, 7])
@pytest.mark.parametrize(("user", "reply", "said"), [
    (TIP, "Here's a tip for sleeping better: 1) Don't lie down in bed awake. 2) Don't eat.",
     "Don't lie down in bed awake. 2) Don't eat."),
    (TIP, "Here's a tip for sleeping better: keep your room cool and dark.",
     "Keep your room cool and dark."),
    (TIP, "A good tip for sleeping better:\n- Keep a regular schedule.",
     "Keep a regular schedule."),
    ("What is the capital of Peru?", "The capital of Peru: it is Lima.", "It is Lima."),
    ("How to make a paper plane?",
     "To make a paper plane: fold a sheet in half lengthwise.",
     "Fold a sheet in half lengthwise."),
])
def test_a_lead_in_that_repeats_the_user_is_dropped_at_its_colon(
        user: str, reply: str, said: str, step: int) -> None:
    g = guard(user, first_piece=None)
    assert "".join(stream(g, reply, step)).strip() == said
    assert any("up to its colon" in n for n in g.notices)


def test_what_follows_the_colon_is_spoken_from_its_start() -> None:
    """The sentence after the lead-in is released early like a first sentence: the voice
    has its first words before that sentence ends."""
    g = guard(TIP, first_piece=None)
    reply = "Here's a tip for sleeping better: keep your bedroom cool, dark and quiet at night."
    outs = stream(g, reply, 3)
    first = next(i for i, o in enumerate(outs) if o.strip())
    assert first < len(outs) - 2 and g.released.startswith("Keep your")


@pytest.mark.parametrize(("user", "reply"), [
    ("How do I make a paper plane?", "Here is how: fold the paper in half."),  # no echo
    ("What time does the sun rise?", "It rises at 6:30 in the morning."),  # a time's colon
    ("Tell me a fun fact about octopuses.", "Fun fact: octopuses have three hearts."),
])
def test_a_colon_without_an_echo_before_it_changes_nothing(user: str, reply: str) -> None:
    g = guard(user)
    assert "".join(stream(g, reply, 3)).strip() == reply
    assert not any("up to its colon" in n for n in g.notices)


def test_a_list_marker_still_to_come_is_waited_for() -> None:
    """"better: 1" may become "1) Keep ...": nothing is cut until a word follows."""
    g = guard(TIP, first_piece=None)
    assert g.feed("Here's a tip for sleeping better: 1") == ""
    assert not any("up to its colon" in n for n in g.notices)
    rest = g.feed(") Keep a regular bedtime every night of the week.")
    assert (rest + g.finish()).strip() == "Keep a regular bedtime every night of the week."
