"""The reply guard's measures of a reply that goes round in circles: a word or phrase said
again and again while it streams (:class:`LoopWatch`), or a whole sentence said twice
(kept apart from :mod:`terrarium.controller.guard`'s streaming logic)."""

from __future__ import annotations

import re

from terrarium.controller.reply_words import words
from terrarium.store.clauses import sentences

__all__ = ["LOOP_COUNT", "LoopWatch", "is_function", "repeats", "said_again"]

_WORD_CASED = re.compile(r"[A-Za-z0-9']+")


SAME_START = 5
"""A sentence opening with this many words of one already spoken says it again."""


def said_again(spoken: str, sentence: str) -> bool:
    """Whether ``sentence`` says again a sentence already spoken, word for word or by its
    first ``SAME_START`` words ("You're a team member, and you're called Percival. You're a
    team member, and you're called Sparky."): a loop of one sentence."""
    again = words(sentence)
    if not again:
        return False
    for s in sentences(spoken):
        before = words(s)
        if before == again or (len(again) >= SAME_START
                               and before[:SAME_START] == again[:SAME_START]):
            return True
    return False


def repeats(text: str) -> int:
    """Where a degenerate repetition starts in ``text`` (a word or phrase of up to six
    words said three times running, or one word said a fourth time), or -1: a model
    stuck in a loop ("Reminder, Reminder, Reminder, ...")."""
    found = [(m.start(), m.group(0).lower().strip("'")) for m in _WORD_CASED.finditer(text)]
    ws = [w for _, w in found]
    counts: dict[str, int] = {}
    for i, w in enumerate(ws):
        for n in range(1, 7):
            j = i + 1 - 3 * n  # where three copies of a phrase of n words ending here start
            if j >= 0 and ws[j:j + n] == ws[j + n:j + 2 * n] == ws[j + 2 * n:i + 1]:
                return found[j + n][0]  # the first copy may stand: the repeats may not
        if w not in _LOOP_FREE:
            counts[w] = counts.get(w, 0) + 1
            if counts[w] == LOOP_COUNT:
                return found[i][0]
    return -1


LOOP_COUNT = 4
"""A content word said this many times in one short reply is a loop."""


class LoopWatch:
    """:func:`repeats` over a text that grows delta by delta, each word looked at once.

    The guard runs on the event loop between two tokens: scanning the whole reply again at
    every token cost ~0.2 ms per token on a busy machine, growing with the reply. A word
    still being written (the last one, with nothing after it) is checked but not kept, as
    :func:`repeats` of the text so far would check it."""

    __slots__ = ("_counts", "_done", "_text", "_where", "_words")

    def __init__(self) -> None:
        self._text = ""
        self._done = 0  # where the words kept so far end
        self._words: list[str] = []
        self._where: list[int] = []
        self._counts: dict[str, int] = {}

    def feed(self, text: str) -> int:
        """Where a loop starts in the text so far (as :func:`repeats` says), or -1."""
        self._text += text
        for m in _WORD_CASED.finditer(self._text, self._done):
            whole = m.end() < len(self._text)  # a word char may still follow
            at = self._check(m.group(0).lower().strip("'"), m.start(), keep=whole)
            if at >= 0 or not whole:
                return at
            self._done = m.end()
        return -1

    def _check(self, w: str, pos: int, *, keep: bool) -> int:
        ws = [*self._words[-18:], w]  # a phrase of up to six words, three times: 18 words
        i = len(ws) - 1
        for n in range(1, 7):
            j = i + 1 - 3 * n
            if j >= 0 and ws[j:j + n] == ws[j + n:j + 2 * n] == ws[j + 2 * n:i + 1]:
                return self._where[len(self._where) - i + j + n]  # the second copy
        count = self._counts.get(w, 0) + (w not in _LOOP_FREE)
        if count == LOOP_COUNT:
            return pos
        if keep:
            self._counts[w] = count
            self._words.append(w)
            self._where.append(pos)
        return -1


def is_function(word: str) -> bool:
    return word in _FUNCTION


_FUNCTION = frozenset("""
a an the and or but if so than then of to in on at by for from with about as into is am are
was were be been do does did have has had will would can could should may might must i me
my you your he she it we they them him her us its our their this that these those there
here not no yes very too also some any all what which who how why when where i'm you're
it's that's don't can't
""".split())
_LOOP_FREE = frozenset("the a an and or to of in is you your i my it that".split())
"""Words said any number of times without a loop: the articles, the commonest conjunctions
and prepositions, "is", and the pronouns of the user and of a thing, the words the
conversation bench lets a reply repeat (``bench/conversation.py``, ``loops``). Any other
word said a fourth time is a list gone round: "You're a nurse, you're 34, you're from Leeds
and you're ...", "No bread or pasta, no cheese, no meat, no bacon, ..." (dev9, session 17:
"no", a function word, was let through and the reply was judged a loop)."""
