"""What kind of answer a question asks for, read from its form, and whether a note holds one.

A question with no subject word of its own ("And where am I now?", "Where do we keep it?",
"And when did I get it?", "What do my friends call me?") shares no word or category with
what the user told ("I just moved from Dublin to Austin.", "We've got a caravan down in
Cornwall.", "I bought a Clio in January.", "Ana Silva here, but Nana to my friends."). Its
form still says what would answer it: a place for "where", a day or time for "when", a name
for "what ... call me". A note that holds one of that kind is about it (:func:`fits`).
"""

from __future__ import annotations

import re

__all__ = ["DAYS_AND_MONTHS", "FORM_WORDS", "asks_name", "asks_person", "asks_place", "asks_time",
           "fits", "tells_name", "tells_place", "tells_time", "time_words"]

_DAYS = ("monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|"
         "april|may|june|july|august|september|october|november|december")
_ASKS_PLACE = re.compile(r"^\W*(and\s+|so\s+)?(where|where's|whereabouts)\b|"
                         r"\b(what|which)\s+(city|town|country|village|place|street)\b", re.I)
_ASKS_TIME = re.compile(r"^\W*(and\s+|so\s+)?(when|when's)\b|"
                        r"\b(what|which)\s+(time|day|date|month|year)\b|\bwhat\s+time\b", re.I)
_ASKS_NAME = re.compile(r"\b(names?|named|called|nicknames?|call\s+(me|us|him|her|them|it)|"
                        r"go(es)?\s+by|known\s+as)\b", re.I)
_ASKS_PERSON = re.compile(r"^\W*(and\s+|so\s+)?(who|who's|whom|whose)\b", re.I)
FORM_WORDS = frozenset("""city town country village place street time day date month year
name names nickname nicknames""".split())
"""The words that ask for a kind of answer rather than name a thing ("Which city's shipyard
is it?"): a note holding one of that kind (:func:`fits`) has the word's answer, not the
word."""
_PLACE = re.compile(r"\b(in|from|to|at|near|outside|around|by)\s+(the\s+)?([A-Z][A-Za-z]+)")
DAYS_AND_MONTHS = frozenset(_DAYS.split("|"))
"""Capitalised like names, and never one."""
_TIME = re.compile(r"\b(" + _DAYS + r"|\d+|\d+(st|nd|rd|th)|o'clock|noon|midnight|tonight|"
                   r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
                   r"eleventh|twelfth|\w+teenth|twentieth|thirtieth|"
                   r"today|tomorrow|yesterday|ago|since|last\s+(week|month|year|spring|summer|"
                   r"autumn|winter)|next\s+(week|month|year))\b", re.I)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)(?<!\bin )(?<!\bat )(?<!\bfrom )(?<!\bto )"
                   r"(?<!\bnear )\b(?!I\b|I'm\b|I've\b|I'll\b|I'd\b)[A-Z][a-z]+")


def asks_place(question: str) -> bool:
    """Whether ``question`` asks where ("Where do we keep it?", "Which town?")."""
    return _ASKS_PLACE.search(question) is not None


def asks_time(question: str) -> bool:
    """Whether ``question`` asks when ("And when did I get it?", "What time?")."""
    return _ASKS_TIME.search(question) is not None


def asks_name(question: str) -> bool:
    """Whether ``question`` asks a name ("What do my friends call me?", "And his name?")."""
    return _ASKS_NAME.search(question) is not None


def asks_person(question: str) -> bool:
    """Whether ``question`` asks who ("Who's my boss?", "Whose wedding is it?")."""
    return _ASKS_PERSON.match(question) is not None


def tells_place(note: str) -> bool:
    """Whether ``note`` names a place ("... to Austin", "down in Cornwall")."""
    return any(m.group(3).lower() not in DAYS_AND_MONTHS for m in _PLACE.finditer(note))


def tells_time(note: str) -> bool:
    """Whether ``note`` says a day, a date or a time ("in January", "at 7", "on the 3rd")."""
    return _TIME.search(note) is not None


def time_words(text: str) -> set[str]:
    """The words of ``text`` that say a day, a date or a time ("march", "9th", "tonight")."""
    return {w.lower() for m in _TIME.finditer(text) for w in m.group(0).split()}


def tells_name(note: str) -> bool:
    """Whether ``note`` holds a name past its first word that is no place ("Ana Silva here,
    but Nana to my friends."; not "I live in Porto.")."""
    return _NAME.search(note) is not None


def fits(note: str, question: str) -> bool:
    """Whether ``note`` holds what ``question``'s form asks for: a place for "where", a day
    or time for "when", a name for a name."""
    return ((asks_place(question) and tells_place(note))
            or (asks_time(question) and tells_time(note))
            or (asks_name(question) and tells_name(note)))
