"""Facts a user states about themselves, read from their words without a model.

"My name is Ada", "I love green tea", "I live in Lisbon", "I'm 42 years old": simple
self-descriptions follow a handful of patterns that a few regular expressions read reliably,
faster and far more accurately than a 135M model would. Each becomes a short sentence in
the user's own voice (the form the voice speaker's messages use; the name as "Ada is my
name.": given "My name is Ada. What is my name?" SmolLM2-135M tends to talk about itself,
given "Ada is my name. What is my name?" it says the name), and search
tags that a later question about it will match ("How old am I?" finds the age by "old").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["UserFact", "extract_facts"]


@dataclass(frozen=True, slots=True)
class UserFact:
    """One fact about the user: its kind, its value and the sentence that states it."""

    kind: str  # name | age | place | preference | favourite | job | count
    value: str
    sentence: str
    tags: tuple[str, ...]


# a value runs until punctuation or a joining word ("and I live ...")
_VALUE = r"([A-Za-z0-9][A-Za-z0-9' -]*?)(?=\s*(?:[.,!?;]|\band\b|\bbut\b|$))"
_NAME = r"([A-Z][a-z]+(?: [A-Z][a-z]+)?)"
_NUMBER = (r"(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
           r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)")
_NOT_NAMES = frozenset({"Not", "So", "Very", "Just", "Fine", "Good", "Here", "Sorry", "Happy",
                        "Sure", "Okay", "Ok", "Back", "Tired", "Hungry", "From", "In", "At",
                        "Going", "Looking", "Glad", "Well", "Also", "Really", "The", "A", "An"})

_PRONOUNS = frozenset("it them that this those these him her you".split())

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("name", re.compile(r"\b(?i:my name is) " + _NAME)),
    # not "Please don't call me Margaret": the name they do not go by
    ("name", re.compile(r"(?<!n't )(?<!not )(?<!never )\b(?i:call me|I am|I'm) " + _NAME
                        + r"(?=\s*(?:[.,!?;]|\band\b|$))")),
    ("age", re.compile(r"\bI(?: am|'m) " + _NUMBER + r"(?: years old| year old)", re.I)),
    # "I'm 41." / "I'm Tariq, I'm 34 and ...": a bare number after "I'm" is an age
    ("age", re.compile(r"\bI(?: am|'m) " + _NUMBER + r"(?=\s*(?:[.,!?;]|\band\b|$))", re.I)),
    ("place", re.compile(r"\bI (?:live|stay) in " + _VALUE, re.I)),
    ("place", re.compile(r"\bI(?: am|'m) from " + _VALUE, re.I)),
    ("job", re.compile(r"\bI work as (?:a |an )?" + _VALUE, re.I)),
    ("job", re.compile(r"\bmy job is (?:a |an )?" + _VALUE, re.I)),
    ("favourite", re.compile(r"\bmy favou?rite ([a-z]+) is " + _VALUE, re.I)),
    ("preference", re.compile(r"\bI (love|like|enjoy|adore|prefer) " + _VALUE, re.I)),
    ("count", re.compile(r"\bI have " + _NUMBER + r" ([a-z]+)", re.I)),
]

_TAGS = {
    "name": ("name", "called"),
    "age": ("age", "old", "years"),
    "place": ("live", "city", "place", "home", "where", "from"),
    "job": ("job", "work", "profession"),
    "favourite": ("favourite", "favorite", "like", "love"),
    "preference": ("like", "love", "favourite", "favorite", "enjoy"),
    "count": ("many", "how", "have"),
}


def _sentence(kind: str, m: re.Match[str]) -> tuple[str, str]:
    """The fact's value and its second-person sentence."""
    if kind == "name":
        return m.group(1), f"{m.group(1)} is my name."
    if kind == "age":
        return m.group(1), f"I am {m.group(1)} years old."
    if kind == "place":
        return m.group(1), f"I live in {m.group(1)}."
    if kind == "job":
        return m.group(1), f"I work as {_article(m.group(1))}."
    if kind == "favourite":
        return m.group(2), f"My favourite {m.group(1).lower()} is {m.group(2)}."
    if kind == "preference":
        verb = m.group(1).lower()
        return m.group(2), f"I {verb} {m.group(2)}."
    return m.group(2), f"I have {m.group(1)} {m.group(2)}."  # count


def _article(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def extract_facts(text: str) -> list[UserFact]:
    """The facts ``text`` states about its speaker, in the order they appear."""
    found: list[tuple[int, UserFact]] = []
    seen: set[tuple[str, str]] = set()
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if kind == "name" and m.group(1).split()[0] in _NOT_NAMES:
                continue
            if kind == "preference" and m.group(2).lower() in _PRONOUNS:
                continue  # "..., I love them.": what is loved was said before it
            value, sentence = _sentence(kind, m)
            value = value.strip()
            if not value or (kind, value.lower()) in seen:
                continue
            if kind == "name" and any(k == "age" for k, _ in seen) and value.isdigit():
                continue
            seen.add((kind, value.lower()))
            found.append((m.start(), UserFact(kind, value, sentence, (kind, *_TAGS[kind]))))
    return [f for _, f in sorted(found, key=lambda p: p[0])]
