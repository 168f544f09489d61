"""Where a sentence already heard from its start may end early and still be a whole sentence.

The reply guard lets a reply's first sentence through from its start (issue 29), and the
voice speaks only its first piece before the sentence's end (a first clause or about three
words: ``first_clause_chars``, ``first_piece_max_chars``). When the rest of such a sentence
would go wrong (repeat the user's words back, speak as the user, talk of itself, loop) or
never end (``max_tokens``), the sentence is ended at the last clause boundary before that,
if one makes a sentence of it: "Yes, you should definitely boil an egg for a soft yolk." to
"How long should I boil an egg for a soft yolk?" is said "Yes, you should definitely boil
an egg."; "Well, that is a fine question and my home is Paris too." (after the user's
"Paris") "Well, that is a fine question.".

A boundary is a comma, semicolon, colon or dash, a word that opens a clause ("and", "but",
"which", "because" ...) or, failing those, a preposition or "to" ("No, it's not healthy to
cycle." of "No, it's not healthy to cycle to work every day." to "Is it healthy to cycle to
work every day?"). What is kept must stand alone: its last word is no word of grammar
("the", "to", "is" ...), it holds a main clause (one of two
words or more not opening with "to", a preposition, a relative or a dependent word: "To
remove red wine from a carpet." and "Sure, in the morning." do not), and it does not end on
a dependent clause fronted after "and" or "but" ("…, but when it comes to the animal
itself." waits for its main clause).

When no boundary makes a sentence of what was heard and the rest repeats the user, the
whole sentence (held to its end) may still be said without one phrase of the rest made only
of the user's own words (:func:`without_phrase`): "To get rid of fruit flies in the kitchen,
you can …" to "What's the best way to get rid of fruit flies in the kitchen?" is said "To get
rid of fruit flies, you can …"; what is left out was the question's, so nothing is lost.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from terrarium.controller.guard_loops import is_function
from terrarium.controller.reply_words import words

__all__ = ["clause_end", "stands_alone", "without_phrase"]

_BREAK = re.compile(r"\s*(?:[,;:]|\s[-–—])(?=\s)")
"""A soft break: the sentence may end just before it."""
_WORD = re.compile(r"[A-Za-z0-9']+")
_RELATIVE = frozenset({"which", "who", "whom", "whose", "where"})
_DEPENDENT = frozenset("""
when if because while although though since unless whereas as before after until once
whenever wherever whether
""".split())
"""A clause opening with one of these does not stand alone as a sentence."""
_COORDINATORS = frozenset({"and", "but", "or", "so", "yet", "nor", "then"})
_JOINS = _COORDINATORS | _RELATIVE | _DEPENDENT | {"that"}
"""Words that open a clause: the sentence may end just before one."""
_PREPOSITIONS = frozenset("""
for with in on at by from about into onto over under after before during without through
across along around near until like of to
""".split())
"""Words that open a phrase: the sentence may end before one when no clause boundary does."""
_CLOSERS = "\"')]"
_DETERMINERS = frozenset("the a an this these those my your his her its our their some any "
                         "every each no".split())
_AUXILIARIES = frozenset("""
is are was were am has have had do does did can could will would shall should may might must
isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't can't cannot couldn't
won't wouldn't shouldn't
""".split())
_RUN_IN = ("'s", "'re", "'m", "'ll", "'ve", "'d")
_PHRASE_OPENERS = (_PREPOSITIONS - {"of"}) | _RELATIVE | _DEPENDENT | frozenset(
    {"that", "that's", "all", "every", "each"})
"""Words a phrase that may be left out opens with: a preposition (not "of": "rid of flies"
is no adjunct), a relative or dependent word ("that's been left out overnight", "when
wearing a mask"), or a quantity of time ("all the time", "every day")."""


def _boundaries(text: str) -> list[tuple[int, int, int]]:
    """Every place ``text`` may be cut, as (cut index, strength, where the next clause or
    phrase starts): 2 before a soft break, 1 before a word that opens a clause, 0 before a
    preposition or "to"."""
    out = [(m.start(), 2, m.end()) for m in _BREAK.finditer(text)]
    for m in _WORD.finditer(text):
        w = m.group(0).lower()
        if m.start() and text[m.start() - 1].isspace():
            if w in _JOINS:
                out.append((m.start(), 1, m.start()))
            elif w in _PREPOSITIONS and w != "of":  # "to sleep most | of the day" is no end
                out.append((m.start(), 0, m.start()))
    return sorted(out)


def _kind(clause: list[str], after_break: bool) -> str:
    """What a clause is, by its opening words: "main", "dependent", "dangling" (a
    dependent one after "and", "but" ...), "other" (a relative one, a phrase opening with
    "to" or a preposition, a lone word), or "none" (nothing but "and", "but" ...)."""
    ws = list(clause)
    joined = False
    while ws and ws[0] in _COORDINATORS:
        ws, joined = ws[1:], True
    if not ws:
        return "none"
    w = ws[0]
    if w in _DEPENDENT:
        return "dangling" if joined else "dependent"
    if w in _RELATIVE or (w == "that" and not after_break) or w == "to" or w in _PREPOSITIONS:
        return "other"
    if w in _DETERMINERS and not _finite(ws):  # "The ideal amount of time to boil an egg"
        return "other"
    return "main" if len(ws) >= 2 else "other"


def _finite(clause: list[str]) -> bool:
    """Whether a clause opening with a determiner holds a verb of its own, by its form: an
    auxiliary, a modal or "to be" ("is", "can", "don't"), one run into a word ("it's",
    "they're", "Earth's"), a word in "-s" or "-ed" past the noun after the determiner ("The
    cat sleeps"), or a word after a plural noun there ("The bins go out"). "The ideal age
    for a child" and "The best way to fall asleep faster" have none."""
    for i, w in enumerate(clause):
        if w in _AUXILIARIES or any(w.endswith(e) for e in _RUN_IN):
            return True
        if i >= 2 and w.endswith(("s", "ed")) and not is_function(w) and clause[i - 1] != "to":
            return True
    return (len(clause) > 2 and clause[1].endswith("s") and not clause[1].endswith("ss")
            and clause[2] not in _JOINS | _PREPOSITIONS and not is_function(clause[2]))


def stands_alone(sentence: str) -> bool:
    """Whether ``sentence`` (without its end) can be said as a whole sentence."""
    kept = words(sentence)
    if len(kept) < 2 or is_function(kept[-1]):
        return False
    kinds = _kinds(sentence)
    return "main" in kinds and kinds[-1] != "dangling"


def _kinds(sentence: str) -> list[str]:
    """The kinds of ``sentence``'s clauses (:func:`_kind`), in order."""
    starts = [(0, False)] + [(nxt, s == 2) for _, s, nxt in _boundaries(sentence) if s >= 1]
    kinds: list[str] = []
    carried = False  # a break with no word after it before the next boundary
    for (a, after_break), (b, _) in zip(starts, [*starts[1:], (len(sentence), False)],
                                        strict=True):
        ws = words(sentence[a:b])
        if not ws:
            carried = carried or after_break
            continue
        kind = _kind(ws, after_break or carried)
        carried = False
        if kinds and kinds[-1] == "none" and kind == "dependent":
            kind = "dangling"  # "but" | "when it comes to ...": split at both words
        kinds.append(kind)
    return [k for k in kinds if k != "none"]


def clause_end(text: str, given: int, ok: Callable[[str], bool]) -> str | None:
    """What to say after the first ``given`` characters of ``text`` (a sentence spoken from
    its start, without its end) so that it ends at a boundary as a whole sentence
    (:func:`stands_alone`) that ``ok`` accepts: the words up to the boundary and ".". The
    latest boundary of a clause (a break or a joining word) wins, else the latest
    preposition; None when no boundary past what was given will do."""
    found = _boundaries(text)
    for strongest in (1, 0):
        for cut, strength, _ in reversed(found):
            if strength < strongest:
                continue
            end = len(text[:cut].rstrip())
            if end < given or not text[:end].rstrip(_CLOSERS)[-1:].isalnum():
                continue
            close = '."' if text[:end].count('"') % 2 else "."  # a quote cut open
            if stands_alone(text[:end]) and ok(text[:end] + close):
                return text[given:end] + close
    return None


def without_phrase(text: str, given: int, user: Sequence[str],
                   ok: Callable[[str], bool]) -> str | None:
    """What to say after the first ``given`` characters of ``text`` (a whole sentence spoken
    from its start, its end mark included) with one phrase of the rest left out: a phrase
    made only of the ``user``'s words that opens with a preposition (but "of"), a relative or
    dependent word, "that" or "that's", or "all", "every", "each", and ends before a break, a
    word opening a clause or phrase, an auxiliary ("The best way to fall asleep faster at
    night is …" → "… faster is …"), or the sentence's end. The sentence left must stand alone
    and pass ``ok``; the fewest words left out win (then the earliest). None when no phrase
    will do."""
    mine = set(user)
    found = list(_WORD.finditer(text))
    lower = [m.group(0).lower().strip("'") for m in found]
    best: tuple[int, int, str] | None = None
    for i, m in enumerate(found):
        if (m.start() < given or lower[i] not in _PHRASE_OPENERS
                or not text[m.start() - 1:m.start()].isspace()):
            continue
        for k in range(i, len(found)):
            if lower[k] not in mine:
                break
            after = text[found[k].end():]
            ends = (_BREAK.match(after) is not None or not any(c.isalnum() for c in after)
                    or (k + 1 < len(found) and after[:1].isspace()
                        and lower[k + 1] in _JOINS | _PREPOSITIONS | _AUXILIARIES))
            if not ends or (best is not None and k + 1 - i >= best[0]):
                continue
            a = max(given, len(text[:m.start()].rstrip()))
            said = text[:a] + after
            kept = said.rstrip().rstrip(_CLOSERS).rstrip(".!?")
            if stands_alone(kept) and ok(said):
                best = (k + 1 - i, i, said[given:])
    return best[2] if best is not None else None
