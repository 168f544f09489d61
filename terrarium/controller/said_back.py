"""The user's own words said back to them, as a spoken sentence: in the second person and
ending as a sentence (the reply guard's fallbacks and notes said back)."""

from __future__ import annotations

import re

__all__ = ["closed", "second_person"]

_TO_YOU = {"i": "you", "me": "you", "my": "your", "mine": "yours", "am": "are",
           "i'm": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd",
           "myself": "yourself", "we": "you", "us": "you", "our": "your", "ours": "yours",
           "we're": "you're", "we've": "you've", "we'll": "you'll", "ourselves": "yourselves"}


def second_person(text: str) -> str:
    """The user's own sentence said back to them: "I live in Lisbon." -> "You live in
    Lisbon.", "Ada is my name." -> "Ada is your name.", "Our cat is old." -> "Your cat is
    old."."""
    def swap(m: re.Match[str]) -> str:
        to = _TO_YOU.get(m.group(0).lower())
        if to is None:
            return m.group(0)
        before = text[:m.start()].rstrip()
        return to.capitalize() if not before or before[-1] in ".!?" else to

    text = re.sub(r"\b([Ii]) was\b", lambda m: f"{m.group(1)} were", text)  # "You were"
    return re.sub(r"[A-Za-z']+", swap, text)


_ENDS_SENTENCE = re.compile(r"[.!?][\"')\]]*$")


def closed(text: str) -> str:
    """``text`` ending as a sentence: the user's words said back keep their missing full
    stop ("my cat is called Miso" typed without one), and a reply must end like one to be
    spoken whole (the voice waits for a sentence's end)."""
    text = text.rstrip()
    return text if not text or _ENDS_SENTENCE.search(text) else f"{text}."

