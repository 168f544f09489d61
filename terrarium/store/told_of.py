"""Whether what the user told of someone or something holds what a question asks of them.

A fact told of a person or an animal ("My sister Orla lives in Cardiff.", "My wife Greta
loves gardening.", "I've had my tortoise Shelby for thirty years.") shares its name or its
kin word with a question asking another thing of them ("What does Orla do for a living?",
"What's Greta's job?", "What does Shelby like to eat?"): retrieval by words hands it over,
and a 135M model answers with it ("Orla lives in Cardiff."). What the question asks of them
(their work, their food, a colour) is in no note: the honest reply is "I don't know that
yet." (:func:`attribute_untold`, read by ``asked.lacks``).

Read from the words: the one asked of (a capitalised name, a kin or pet word) is the link,
the rest of the question's known subjects (:data:`subjects.RELATED`) is what is asked. A
note about the one asked of that holds nothing of a known subject besides them ("My uncle
Brendan keeps bees." for "What's Brendan's hobby?") is left to the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from terrarium.store import forms
from terrarium.store.lexicon import glossed_as, kind_of, lexicon
from terrarium.store.subjects import (
    ATTITUDES,
    NEUTRAL,
    RELATED,
    holds_answer_form,
    relevant,
    stem,
    subject_terms,
)
from terrarium.store.told_form import is_time_word

__all__ = ["asked_of_whom", "attribute_untold", "kind_asked", "kind_untold", "may_name"]

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_KNOWN = frozenset(stem(w) for g in RELATED for w in g)
_ATTITUDE = frozenset(stem(w) for g in ATTITUDES for w in g)
_WHO = frozenset(stem(w) for g in RELATED if {"family", "pet"} & g for w in g)
"""The words of family and pets: who a thing is told of, not what is told of them."""
_FORM = frozenset(stem(w) for w in forms.FORM_WORDS)
_NOT_ASKED = NEUTRAL | _FORM | frozenset(stem(w) for w in
                                         "name names called named nickname surname".split())
"""Words of asking (a name, a time, "how old") are the forms :mod:`told_form` and
``asked.lacks`` judge; here only what a thing is (work, food, colour) is asked."""


def _stems(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text)}


def _is_whom(word: str, first: bool) -> bool:
    """Whether ``word`` of a question names the one asked of: a capitalised name (not the
    question's first word), a word of family or pets, or a kin word WordNet files under
    "relative"."""
    if word[:1].isupper() and not first and word != "I":
        return True
    return stem(word) in _WHO or (len(word) > 3 and kind_of(word.lower(), ["relative"]))


def asked_of_whom(question: str, notes: Sequence[str]) -> set[str]:
    """The words of ``question`` naming a person or an animal that a note names too
    ("Orla", "brother", "Shelby"): who is asked of."""
    said = set().union(*(_stems(n) for n in notes)) if notes else set()
    words = [m.group(0).removesuffix("'s") for m in _WORD.finditer(question)]
    return {w for i, w in enumerate(words) if stem(w) in said and _is_whom(w, i == 0)}


def attribute_untold(question: str, notes: Sequence[str]) -> bool:
    """Whether ``question`` asks a known thing (work, food, a colour) of a person or an
    animal the notes name, and no note holds it: each note naming them is about another
    known subject ("lives in Cardiff" for "What does Orla do for a living?"), none shares a
    word or category with what is asked nor holds an answer of its form."""
    whom = asked_of_whom(question, notes)
    if not whom:
        return False
    whom_stems = {stem(w) for w in whom}
    rest = re.sub(r"\b(" + "|".join(map(re.escape, sorted(whom))) + r")('s)?\b", " ",
                  question)
    asked = [w for w in subject_terms(rest, related=False)
             if stem(w) in _KNOWN and stem(w) not in _NOT_ASKED | whom_stems | _WHO]
    if not asked:
        return False
    for note in notes:
        if relevant(note, rest) or holds_answer_form(note, rest):
            return False  # "She's a vet." holds a job, whoever it names
        told = _stems(note) - whom_stems - _WHO
        if whom_stems & _stems(note) and not told & (_KNOWN - _ATTITUDE):
            return False  # "My uncle Brendan keeps bees.": nothing known told of him
    return True


_WHICH = re.compile(r"^\W*(?:and\s+|so\s+|remind me\s+|tell me\s+)?(?:which|what)\s+"
                    r"(?:(?:kind|type|sort)s?\s+of\s+)?([a-z]+)(?:\s+([a-z]+))?\b", re.I)
_NOT_KIND = frozenset("""is are was were do does did will would can could should have has had
am be been kind type sort of a an the my our your his her their it its this that these those
i we you he she they""".split())
_PLACED = re.compile(r"\b(?:in|from|to|near|into|via)\s+(?:the\s+)?([A-Z][A-Za-z]+)")
"""A capitalised name after a preposition of place: a place ("flying to Lisbon"; not "at":
"a season ticket at Celtic")."""


def kind_asked(question: str) -> str | None:
    """The kind of thing ``question`` asks which one of ("Which airline ...?" -> "airline",
    "What kind of boat ...?" -> "boat"), when it is no word of a known subject (those are
    judged by their categories: work, colour, food) nor a word of asking (a name, a day)."""
    m = _WHICH.search(question)
    if m is None:
        return None
    word = m.group(1).lower()
    if m.group(2) and m.group(2).lower() not in _NOT_KIND:
        word = m.group(2).lower()  # "Which football club ...?": a club
    if (word in _NOT_KIND or stem(word) in _KNOWN | _NOT_ASKED or len(word) < 4
            or is_time_word(word)):  # "what hours": a time, judged by its form
        return None
    return word if lexicon().senses(word) else None


def may_name(word: str, kind: str, placed: frozenset[str] = frozenset(), first: bool = False,
             ) -> bool:
    """Whether a word of a note may name a thing of ``kind``: the kind's own word, a kind of
    it (WordNet), defined as one, a name (capitalised, not a place after "to", "in" unless
    the kind is of places), or a word WordNet does not know ("a Ryanair", "amlodipine")."""
    low = word.lower()
    if stem(low) == stem(kind) or kind_of(low, [kind]) or glossed_as(low, kind):
        return True
    if word[:1].isupper() and not first:  # a name, but not a day's or a month's
        return not is_time_word(word) and (word not in placed or kind_of(kind, ["location"]))
    return not first and len(low) > 3 and low.isalpha() and not lexicon().senses(low)


def kind_untold(question: str, notes: Sequence[str]) -> bool:
    """Whether ``question`` asks which one of a kind of thing (:func:`kind_asked`) and no
    note holds a word that may name one: "Which airline am I flying with?" after only "I'm
    flying to Lisbon in March.", "Which beach do I swim at?" after only "I love swimming in
    the sea." (WordNet's kinds, :func:`terrarium.store.lexicon.kind_of`)."""
    kind = kind_asked(question)
    if kind is None or not notes or not lexicon().available:
        return False
    for note in notes:
        placed = frozenset(m.group(1) for m in _PLACED.finditer(note))
        if any(may_name(w, kind, placed, i == 0)
               for i, w in enumerate(_WORD.findall(note))):
            return False
    return True
