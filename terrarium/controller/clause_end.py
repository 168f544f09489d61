"""Where a sentence already heard from its start may end early and still be a whole sentence.

The reply guard lets a reply's first sentence through from its start (issue 29), and the
voice speaks only its first piece before the sentence's end (a first clause or about three
words: ``first_clause_chars``, ``first_piece_max_chars``). When the rest of such a sentence
would go wrong (repeat the user's words back, speak as the user, talk of itself) or never
end (``max_tokens``), the sentence is ended at the last clause boundary before that, if one
makes a sentence of it: "Yes, you should definitely boil an egg for a soft yolk." to "How
long should I boil an egg for a soft yolk?" is said "Yes, you should definitely boil an
egg."; "Well, that is a fine question and my home is Paris too." (after the user's "Paris")
"Well, that is a fine question.". A boundary is a comma, semicolon, colon or dash, a word
that joins clauses ("and", "but", "which", "because" ...) or, failing those, a preposition;
the word before it must not be a word of grammar ("the", "to", "is" ...), and the last
clause kept must not be a dependent one ("when it comes to the animal itself.").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from terrarium.controller.guard_loops import is_function
from terrarium.controller.reply_words import words

__all__ = ["clause_end"]

_BREAK = re.compile(r"\s*(?:[,;:]|\s[-–—])(?=\s)")
"""A soft break: the sentence may end just before it."""
_WORD = re.compile(r"[A-Za-z0-9']+")
_JOINS = frozenset("""
and but or so yet nor because which who whom whose that where when while if as since
although though unless whereas
""".split())
"""Words that open a clause: the sentence may end just before one."""
_PREPOSITIONS = frozenset("""
for with in on at by from about into onto over under after before during without through
across along around near until like
""".split())
"""Words that open a phrase: the sentence may end before one when no clause boundary does."""
_DEPENDENT = frozenset("""
when if because while although though since unless whereas as before after until once
whenever wherever whether
""".split())
"""A clause opening with one of these does not stand alone as a sentence."""
_COORDINATORS = frozenset({"and", "but", "or", "so", "yet", "nor", "then"})
_CLOSERS = "\"')]"


def _boundaries(text: str) -> list[tuple[int, int]]:
    """Every place ``text`` may be cut, as (index, strength): 2 before a soft break, 1
    before a word that opens a clause, 0 before a preposition."""
    out = [(m.start(), 2) for m in _BREAK.finditer(text)]
    for m in _WORD.finditer(text):
        w = m.group(0).lower()
        if m.start() and text[m.start() - 1].isspace():
            if w in _JOINS:
                out.append((m.start(), 1))
            elif w in _PREPOSITIONS:
                out.append((m.start(), 0))
    return sorted(out)


def _stands_alone(text: str, cut: int, clause_starts: list[int]) -> bool:
    """Whether ``text[:cut]`` ends a clause that may end a sentence: its last word is no
    word of grammar, and the last clause does not open as a dependent one."""
    kept = words(text[:cut])
    if len(kept) < 2 or is_function(kept[-1]):
        return False
    start = max((s for s in clause_starts if s < cut), default=0)
    opening = [w for w in words(text[start:cut])[:3]]
    while opening and opening[0] in _COORDINATORS:
        opening = opening[1:]
    return not (opening and opening[0] in _DEPENDENT)


def clause_end(text: str, given: int, ok: Callable[[str], bool]) -> str | None:
    """What to say after the first ``given`` characters of ``text`` (a sentence spoken from
    its start, without its end) so that it ends at a clause boundary as a whole sentence
    that ``ok`` accepts: the words up to the boundary and ".". The latest boundary of a
    clause (a break or a joining word) wins, else the latest preposition; None when no
    boundary lies past what was given."""
    found = _boundaries(text)
    clause_starts = [i for i, s in found if s >= 1]
    for strongest in (1, 0):
        for cut, strength in reversed(found):
            if strength < strongest:
                continue
            end = len(text[:cut].rstrip())
            if end < given or not text[:end].rstrip(_CLOSERS)[-1:].isalnum():
                continue
            if not _stands_alone(text, end, clause_starts):
                continue
            sentence = text[:end] + "."
            if ok(sentence):
                return sentence[given:]
    return None
