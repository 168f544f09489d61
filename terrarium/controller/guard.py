"""A spoken reply's guard: what the runtime says itself, and never the user's words back.

SmolLM2-135M answers "Hi, my name is Ada." with "Hello, my name is Ada." and "Thanks,
goodbye." with condolences. Two things the runtime can do without a better model:

- for an intent whose apt reply it knows (a greeting, thanks, a goodbye, an acknowledged
  statement) it speaks that reply itself, without asking the model at all (``replies``);
- every other reply is held a sentence at a time and checked before it reaches the voice:
  a sentence that makes the reply an echo of the user's words (at least 60 % of them, in
  order: the measure ``bench/conversation.py`` scores) is never spoken, and the reply goes
  on with the next one ("What is my name? Your name is Ada." says only the answer). Text
  left without a sentence end when the reply stops (a length cut) is dropped too, so half a
  sentence is never spoken. A reply left with nothing to say says what the runtime knows:
  the user's facts it was given, turned to the second person ("Ada is your name."), or
  else ``echo_reply``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ECHO_SHARE", "ReplyGuard", "is_echo", "lcs", "second_person", "words"]

ECHO_SHARE = 0.6
"""A reply holding at least this share of the user's words, in order, is an echo."""
MIN_WORDS = 3
"""Shorter utterances are not checked: "Thanks." answered "Thanks!" is no echo."""

_WORD = re.compile(r"[A-Za-z0-9']+")
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)")


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` (apostrophes kept inside)."""
    return [w.lower().strip("'") for w in _WORD.findall(text)]


def lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence: the user's words repeated in order."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def is_echo(user: str, reply: str) -> bool:
    """The reply repeats the user's utterance (of three words or more)."""
    u = words(user)
    return len(u) >= MIN_WORDS and lcs(u, words(reply)) >= ECHO_SHARE * len(u)


_TO_YOU = {"i": "you", "me": "you", "my": "your", "mine": "yours", "am": "are",
           "i'm": "you're", "i've": "you've", "myself": "yourself"}


def second_person(text: str) -> str:
    """The user's own sentence said back to them: "I live in Lisbon." -> "You live in
    Lisbon.", "Ada is my name." -> "Ada is your name."."""
    def swap(m: re.Match[str]) -> str:
        to = _TO_YOU.get(m.group(0).lower())
        if to is None:
            return m.group(0)
        before = text[:m.start()].rstrip()
        return to.capitalize() if not before or before[-1] in ".!?" else to

    return re.sub(r"[A-Za-z']+", swap, text)


@dataclass(slots=True)
class ReplyGuard:
    """One turn's guard: the user's words and intent, read from the incoming message."""

    user: str
    intent: str | None
    fixed: str | None  # the reply the runtime speaks itself, or None: the model answers
    echo_reply: str
    facts: str = ""  # the user's facts the reply was given, in the user's voice
    _held: str = ""
    _spoken: str = ""
    _closed: bool = False  # the reply is over: nothing more of it is spoken
    _replaced: str | None = None
    notices: list[str] = field(default_factory=list)

    @classmethod
    def for_turn(cls, spec: Any, payloads: Sequence[dict[str, Any] | None]) -> ReplyGuard | None:
        """The guard for a turn whose inputs carry ``spec.words_field`` (None otherwise)."""
        if spec is None:
            return None
        user = " ".join(str(p[spec.words_field]) for p in payloads
                        if p and isinstance(p.get(spec.words_field), str))
        intents = [str(p[spec.intent_field]) for p in payloads
                   if p and p.get(spec.intent_field) is not None]
        if not user.strip() and not intents:
            return None
        intent = intents[-1] if intents else None
        fixed = spec.replies.get(intent) if intent is not None else None
        facts = " ".join(str(p[spec.facts_field]) for p in payloads
                         if spec.facts_field and p and isinstance(p.get(spec.facts_field), str))
        return cls(user=user, intent=intent, fixed=fixed, echo_reply=spec.echo_reply,
                   facts=facts.strip())

    @property
    def checks(self) -> bool:
        """Whether the user's words are long enough for an echo to be possible."""
        return len(words(self.user)) >= MIN_WORDS

    def feed(self, text: str) -> str:
        """The part of the model's text that may be spoken now (whole checked sentences)."""
        if self._closed:
            return ""
        if not self.checks:
            self._spoken += text
            return text
        self._held += text
        out = ""
        while not self._closed and (m := _SENTENCE_END.search(self._held)) is not None:
            sentence, self._held = self._held[:m.end()], self._held[m.end():]
            out += self._pass(sentence)
        return out

    def _pass(self, sentence: str) -> str:
        if is_echo(self.user, self._spoken + sentence):
            self.notices.append(f"not spoken, it repeats the user: {sentence.strip()!r}")
            return ""
        if not self._spoken.strip():
            sentence = sentence.lstrip()  # the reply starts here, not at a dropped echo
        self._spoken += sentence
        return sentence

    def fallback(self) -> str:
        """What the runtime knows to say: the user's facts to the user, or ``echo_reply``."""
        return second_person(self.facts) if self.facts else self.echo_reply

    def finish(self) -> str:
        """At the reply's end: held words without a sentence end are dropped, never spoken;
        a reply with nothing checked to say says :meth:`fallback`."""
        if self.fixed is not None:  # the runtime's own reply: nothing was checked
            return ""
        rest, self._held = self._held, ""
        if rest.strip() and not self._closed:
            self.notices.append(f"not spoken, no sentence end: {rest.strip()!r}")
        if not self._spoken.strip() and self.checks and not self._closed:
            self._closed = True
            self._spoken = self.fallback()
            self.notices.append(f"said instead: {self._spoken!r}")
            return self._spoken
        self._closed = True
        return ""

    @property
    def spoken(self) -> str:
        return self._spoken
