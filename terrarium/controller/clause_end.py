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
Session 20: whatever the start was ("About six minutes is how long you should boil an egg
for a soft yolk." → "… boil an egg."; "Usually three to four days is how long a cooked
chicken will keep in the fridge." → "Usually three to four days.").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from terrarium.controller.guard_loops import is_function
from terrarium.controller.reply_words import NUMBER_WORDS, words

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
_ANSWERS = frozenset({"yes", "no"})
_COPULAS = frozenset({"is", "are", "was", "were"})
_WH = frozenset({"how", "what", "when", "where", "which", "why", "who"})
_DEGREES = frozenset("long often much many far fast old big hot cold deep tall soon".split())
_SUBJECTS = frozenset({"you", "they", "we", "i", "he", "she"})
_APPROXIMATORS = frozenset("about around over under nearly almost roughly approximately "
                           "once twice".split())
_COUNTS = frozenset("a an half few couple dozen hundred".split()) | NUMBER_WORDS
_DETERMINERS = frozenset("the a an this these those my your his her its our their some any "
                         "every each no".split())
_AUXILIARIES = frozenset("""
is are was were am has have had do does did can could will would shall should may might must
isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't can't cannot couldn't
won't wouldn't shouldn't
""".split())
_RUN_IN = ("'s", "'re", "'m", "'ll", "'ve", "'d")
_PARTICLES = frozenset({"down", "up", "out", "off"})
_PHRASE_OPENERS = (_PREPOSITIONS - {"of"}) | _RELATIVE | _DEPENDENT | frozenset(
    {"that", "that's", "all", "every", "each"}) | _PARTICLES
"""Words a phrase that may be left out opens with: a preposition (not "of": "rid of flies"
is no adjunct), a relative or dependent word ("that's been left out overnight", "when
wearing a mask"), a quantity of time ("all the time", "every day"), or a particle ("to cool
| down a hot car"); "of" only after a noun a determiner opens ("the best time | of year"),
see :func:`_opens_phrase`."""


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
    if _amount(ws):  # "About six minutes is …", "Once a week is …", with a verb
        return "main" if any(v in _AUXILIARIES or v.endswith(_RUN_IN) for v in ws) else "other"
    if w in _DEPENDENT:
        return "dangling" if joined else "dependent"
    if w in _PREPOSITIONS and w != "to" and _subject_later(ws):
        return "main"  # "For a strong brew you leave a teabag …": a phrase fronted, no comma
    if w in _RELATIVE or (w == "that" and not after_break) or w == "to" or w in _PREPOSITIONS:
        return "other"
    if w in _DETERMINERS and not _finite(ws):  # "The ideal amount of time to boil an egg"
        return "other"
    return "main" if len(ws) >= 2 else "other"


def _amount(clause: list[str]) -> bool:
    """Whether a clause opens with an amount, not a preposition or a dependent word:
    "about", "around", "over", "under", "once", "twice" … before a number or "a", "an",
    "half", "a few" ("About six minutes", "Around 300 grams", "Once a week")."""
    return (len(clause) > 2 and clause[0] in _APPROXIMATORS
            and (clause[1] in _COUNTS or clause[1].isdigit()))


def _subject_later(clause: list[str]) -> bool:
    """Whether a clause opening with a phrase goes on with a subject and its verb: a
    pronoun ("you", "they", "we" …, not "it": "About the time it takes") before a word that
    opens no phrase or clause, with no
    "how", "what" … before it ("About how long it takes" is no sentence)."""
    for i, w in enumerate(clause[1:-1], 1):
        if w in _WH or w in _JOINS:
            return False
        if w in _SUBJECTS and clause[i + 1] not in _JOINS | _PREPOSITIONS | _DETERMINERS:
            return True
    return False


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
    if len(kept) < 2 or (is_function(kept[-1]) and kept[-1] not in _ANSWERS):
        return False  # "It is the." ends on grammar; "The answer is no." on the answer
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


_FILLERS = _DETERMINERS - {"no"} | {"his", "her", "their", "our"}
"""Words of a phrase left out that need not be the user's: "your" for their "my", "a" for
their "the"."""


def without_phrase(text: str, given: int, user: Sequence[str],
                   ok: Callable[[str], bool]) -> str | None:
    """What to say after the first ``given`` characters of ``text`` (a whole sentence spoken
    from its start, its end mark included) with one phrase of the rest left out, or two when
    one will not do: a phrase that opens with a preposition (but "of"), "to", a relative or
    dependent word, "that" or "that's", or "all", "every", "each" (the user's word or the
    model's own: "… it takes to microwave a jacket potato, …"), goes on with the ``user``'s
    words and determiners only ("your" for their "my"), holds one of their words that is no
    word of grammar, and ends before a break, a word opening a clause or phrase, an
    auxiliary ("The best way to fall asleep faster at night is …" → "… faster is …"), or the
    sentence's end. The sentence left must stand alone and pass ``ok``; the fewest words left
    out win (then the earliest). With none, an amount said before the question restated as
    what it is (:func:`_amount_only`). None when nothing will do."""
    found = list(_WORD.finditer(text))
    lower = [m.group(0).lower().strip("'") for m in found]
    spans = _phrases(text, given, found, lower, set(user))
    best: tuple[int, int, str] | None = None
    for n, (i, k) in enumerate(spans):
        said = _leave_out(text, given, found, [(i, k)])
        size = k + 1 - i
        if best is not None and size >= best[0]:
            continue
        if _fits(said, ok):
            best = (size, i, said[given:])
            continue
        if not _fits(said, lambda _: True):
            continue  # what is left of one phrase must stand alone before another goes
        for i2, k2 in spans[n + 1:]:
            if i2 > k + 1 and (best is None or size + k2 + 1 - i2 < best[0]):
                two = _leave_out(text, given, found, [(i, k), (i2, k2)])
                if _fits(two, ok):
                    best = (size + k2 + 1 - i2, i, two[given:])
    if best is None:
        return _amount_only(text, given, found, lower, ok)
    return best[2]


def _amount_only(text: str, given: int, found: list[re.Match[str]], lower: list[str],
                 ok: Callable[[str], bool]) -> str | None:
    """An amount said, then the question said again as what it is ("Usually three to four
    days is how long a cooked chicken will keep in the fridge."): the amount alone ("Usually
    three to four days."), when it holds a number or opens with one ("Once a week") and the
    sentence goes on from "is", "are" … with "how", "what", "when" … to its end; when the
    voice has had the "is" already, up to "how long", "how often" … ("Every two weeks is how
    often.")."""
    for i in range(1, len(found) - 1):
        if lower[i] not in _COPULAS or lower[i + 1] not in _WH or _BREAK.search(
                text[found[i].start():]):
            continue
        head = lower[:i]
        if not (_amount(head) or any(w in _COUNTS - {"a", "an"} or w.isdigit() for w in head)):
            return None
        # before "is" when the voice has not had it, else after "how long", "how often" …
        ends = [len(text[:found[i].start()].rstrip())]
        if lower[i + 1] == "how" and i + 2 < len(found) and lower[i + 2] in _DEGREES:
            ends.append(found[i + 2].end())
        for end in ends:
            said = text[:end] + "."
            if end >= given and not is_function(lower[i - 1]) and ok(said):
                return said[given:]
        return None
    return None


def _phrases(text: str, given: int, found: list[re.Match[str]], lower: list[str],
             mine: set[str]) -> list[tuple[int, int]]:
    """The phrases :func:`without_phrase` may leave out, as (first, last) word indexes, in
    order of their first word."""
    out = []
    # a "to" right after a heard word opens what that word goes on with ("it is okay | to
    # leave the dough to rise"), not a phrase to leave out, unless a break comes before it
    first = next((i for i, m in enumerate(found) if m.start() >= given), len(found))
    bare = not text[:given].rstrip().endswith((",", ";", ":", "-", "\u2013", "\u2014"))
    for i, m in enumerate(found):
        if (m.start() < given or not _opens_phrase(lower, i)
                or (i == first and bare and lower[i] == "to")
                or not text[m.start() - 1:m.start()].isspace()):
            continue
        theirs = lower[i] in mine and not is_function(lower[i])
        for k in range(i, len(found)):
            if k > i and lower[k] not in mine and lower[k] not in _FILLERS:
                break
            theirs = theirs or (lower[k] in mine and not is_function(lower[k]))
            after = text[found[k].end():]
            ends = (_BREAK.match(after) is not None or not any(c.isalnum() for c in after)
                    or (k + 1 < len(found) and after[:1].isspace()
                        and lower[k + 1] in _JOINS | _PREPOSITIONS | _AUXILIARIES))
            if ends and theirs and (k > i or lower[i] not in _PARTICLES):
                out.append((i, k))  # a particle alone is no phrase ("fogging | up")
    return out


def _opens_phrase(lower: list[str], i: int) -> bool:
    """Whether word ``i`` may open a phrase left out: one of ``_PHRASE_OPENERS``, or "of"
    after a noun a determiner or a number opens ("the best time of year", "four cups of
    coffee", not "rid of flies" nor "most of the day")."""
    if lower[i] != "of":
        return lower[i] in _PHRASE_OPENERS
    return (i >= 2 and not is_function(lower[i - 1])
            and any(w in _DETERMINERS or w in _COUNTS or w.isdigit()
                    for w in lower[max(0, i - 3):i - 1]))


def _leave_out(text: str, given: int, found: list[re.Match[str]],
               spans: list[tuple[int, int]]) -> str:
    """``text`` without the words of ``spans`` (in order) and the space before each."""
    said, at = "", 0
    for i, k in spans:
        a = max(given, len(text[:found[i].start()].rstrip()))
        said, at = said + text[at:a], found[k].end()
        if said[-1:].isspace():  # the space before the phrase was given: not one more
            at += len(text[at:]) - len(text[at:].lstrip(" "))
    return said + text[at:]


def _fits(said: str, ok: Callable[[str], bool]) -> bool:
    """Whether ``said`` (a sentence with its end mark) stands alone and passes ``ok``."""
    return stands_alone(said.rstrip().rstrip(_CLOSERS).rstrip(".!?")) and ok(said)
