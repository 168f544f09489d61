"""The echo rule of the reply guard (issue 17): a reply that repeats the user's words back.

A reply holding at least ``ECHO_SHARE`` of the user's words, in order, is an echo (the
measure ``bench/conversation.py`` scores). :func:`safe_start` decides whether a first
sentence's start may be spoken before its end (issue 29): the rest would have to repeat
several more of the user's words to make it one. Kept apart from
:mod:`terrarium.controller.guard`'s streaming logic.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from terrarium.controller.guard_loops import is_function
from terrarium.controller.reply_words import lcs, words

__all__ = ["COPY_LEFT", "EARLY_WORDS", "ECHO_SHARE", "MIN_WORDS", "START_LEFT", "START_WORDS",
           "after_lead", "copies_on", "echo_lead", "echo_left", "is_echo", "safe_start"]

ECHO_SHARE = 0.6
"""A reply holding at least this share of the user's words, in order, is an echo."""
MIN_WORDS = 3
"""Shorter utterances are not checked: "Thanks." answered "Thanks!" is no echo."""

START_WORDS = 4
"""A first sentence is released early only once this many of its words have arrived ..."""
START_LEFT = 4
"""... and only if the rest of the sentence would have to repeat at least this many more
of the user's words, in order, before the reply would be an echo. With 3, two of 20
released sentences on ``bench/conversation.py`` were echoes by its measure ("Should I take
an umbrella?" -> "No, it's not necessary to take an umbrella."): an answer reuses a short
question's words. (Until December 2026 a start also had to repeat at most one of the
user's words, and what was left was counted as the echo's words less those: a start that
uses up the user's last words, "Boiling an egg is" to "How do I boil an egg?", was held
although the rest would have to repeat four more; :func:`echo_left` counts it exactly.)"""

EARLY_WORDS = 3
"""... or this many, when the start is not restating the user's words in their order
(:func:`copies_on`), and the rest would have to repeat ``START_LEFT`` more."""
COPY_LEFT = 3
"""... or at least this many, when the start said a word of the user's and is not restating
their words in their order (:func:`copies_on`)."""

_PARTIAL_WORD = re.compile(r"[A-Za-z0-9']+$")
_LEAD_COLON = re.compile(r":(?=\s)")  # a lead-in's colon (not a time's "6:30")
_LIST_MARK = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*\u2022])\s+")  # "1) ", "1. ", "- " opening a list
_AFTER_LEAD = re.compile(r"\s*(?:(?:\d{1,2}[.)]|[-*\u2022])\s+)?[A-Za-z\"']")  # a word comes
_FIRST_LETTER = re.compile(r"^(\s*)([a-z])")


def is_echo(user: str, reply: str) -> bool:
    """The reply repeats the user's utterance (of three words or more)."""
    u = words(user)
    return len(u) >= MIN_WORDS and lcs(u, words(reply)) >= _echo_words(len(u))


def _echo_words(n: int) -> int:
    """How many of ``n`` user words, repeated in order, make a reply an echo."""
    return math.ceil(ECHO_SHARE * n)  # an integer count >= the share exactly when >= this


def safe_start(user: str, start: str, *, sooner: bool = True) -> bool:
    """Whether a reply whose first sentence begins with ``start`` may be spoken from here.

    Its complete words (a word still being written is not counted) must be at least
    ``START_WORDS``, and the rest of the sentence would have to repeat at least
    ``START_LEFT`` more of the user's words, in order, to make it an echo
    (:func:`echo_left`); or ``COPY_LEFT`` more, when the start said a word of the user's
    and is not restating them ("Mondays are a" to "Say something nice about Mondays.");
    either already at ``EARLY_WORDS`` words ("Cats are intelligent", the voice's whole first
    piece) when the start is not restating the user's words in their order
    (:func:`copies_on`). Only complete words count, so the answer does not depend on how
    the text was streamed in; a longer start never leaves more, so a
    start of ``START_WORDS`` refused is refused for good (session 19: before, "The weather
    on Mars" to "What is the weather like on Mars?" was held to its sentence's end, and no
    start of a reply to five words was ever let through). ``sooner=False``: the rule before
    session 19 (four words, four left), for a question about the user, whose reply is
    judged whole by more than the echo ("You work at Fix It in Dublin." names a city never
    told).
    """
    u = words(user)
    if len(u) < MIN_WORDS:
        return True  # too short to be echoed: never checked
    p = words(_PARTIAL_WORD.sub("", start))
    if len(p) < (EARLY_WORDS if sooner else START_WORDS):
        return False
    if not sooner:
        return echo_left(u, p) >= START_LEFT
    left, copying = echo_left(u, p), copies_on(u, p)
    # "Mondays are a wonderful": it said a word of theirs and went on with its own; one that
    # said none yet may still restate them ("No, it's not necessary to take an umbrella.")
    restated = any(w in u and not is_function(w) for w in p)
    if len(p) < START_WORDS:  # "Cats are intelligent": restating nothing of the user's
        return not copying and (left >= START_LEFT or (left >= COPY_LEFT and restated))
    return left >= START_LEFT or (left >= COPY_LEFT and restated and not copying)


def copies_on(user_words: Sequence[str], start: Sequence[str]) -> bool:
    """Whether ``start`` followed by the user's words after the last of theirs it says, in
    their order (each of its words matched to the user's next place holding it), would
    repeat the user: a start that is restating the question ("To keep basil alive" to "How
    do I keep basil alive on a windowsill?") goes on restating it ("... on a windowsill, you
    can ..."); one that has said the user's words up to their last ("The weather on" to
    "What is the weather like on Mars?": "Mars" is all that follows "on"), or that left
    them ("Mondays are a" to "Say something nice about Mondays."; "Mars is a planet" to
    "Tell me a fact about Mars.", whose "a" comes before "Mars"), has nothing of theirs to go
    on with."""
    pos = -1  # the start's words matched to the user's in order, each at its first place
    for w in start:
        pos = next((i for i in range(pos + 1, len(user_words)) if user_words[i] == w), pos)
    if pos < 0:
        return False
    need = _echo_words(len(user_words))
    return lcs(user_words, [*start, *user_words[pos + 1:]]) >= need


def echo_left(user_words: Sequence[str], start: Sequence[str]) -> int:
    """How many more of the user's words the rest of a sentence beginning with ``start``
    must repeat, in order, for the sentence to be an echo (0: it is one already).

    The user's words repeated in order by start + rest split at some point ``j`` of the
    user's words: those of ``user_words[:j]`` the start repeats, and those of
    ``user_words[j:]`` the rest does. So the rest needs the echo's count less the first
    part, at the split where that is fewest and still possible (``n - j`` words are
    left to repeat). Never fewer than the echo's count less the start's shared words (the
    rule's earlier measure), sometimes more: a start that repeats the user's last words
    leaves the rest to repeat everything before them.
    """
    n = len(user_words)
    need = _echo_words(n)
    prefix = [0] * (len(start) + 1)  # lcs(user_words[:j], start[:i]) for i, at j = 0
    best = need  # j = 0: the rest must repeat the whole echo
    for j, x in enumerate(user_words, 1):
        row = [0]
        for i, y in enumerate(start):
            row.append(prefix[i] + 1 if x == y else max(prefix[i + 1], row[i]))
        prefix = row
        left = need - prefix[-1]  # the start repeats prefix[-1] of user_words[:j]
        if left <= 0:
            return 0
        if left <= n - j:
            best = min(best, left)
    return best


def echo_lead(user: str, held: str, end: int | None) -> int | None:
    """Where a sentence under way, ``held`` (its end at ``end`` if it came), goes on past a
    lead-in that repeats the user and ends at a colon ("Here's a tip for sleeping better:
    1) Don't ..." to "Give me a tip for sleeping better."): the whole sentence would be an
    echo, dropped at its end, and the reply would wait for it, though what follows the
    colon is a sentence of its own (session 21: with flash attention on, the voice bench's
    reply held 31 tokens, ~400 ms). None: no such lead-in before the sentence's end, or
    one followed by no word before it ("...: 42." is judged whole, as before); -1: one
    with nothing after it yet but maybe a list's "1)" (the word is still to come)."""
    c = _LEAD_COLON.search(held)
    if c is None or (end is not None and c.start() >= end) or not is_echo(user, held[:c.start()]):
        return None
    if _AFTER_LEAD.match(held, c.end()) is not None:
        return c.end()
    return -1 if end is None else None


def after_lead(rest: str) -> str:
    """What follows a dropped lead-in (:func:`echo_lead`) as a sentence of its own: without
    a list's opening mark, its first letter a capital."""
    rest = _LIST_MARK.sub("", rest, count=1)
    return _FIRST_LETTER.sub(lambda c: c[1] + c[2].upper(), rest, count=1)
