"""The reply guard's checks of a sentence that hold for all of it once they hold for a part:
it speaks as the user ("I'm Sam"), it talks about itself ("As a chatbot, ..."), and whether
it uses what the user told (kept apart from :mod:`terrarium.controller.guard`'s streaming
logic)."""

from __future__ import annotations

import functools
import re

from terrarium.controller import reply_words
from terrarium.controller.guard_loops import is_function
from terrarium.controller.reply_words import words
from terrarium.store.clauses import sentences
from terrarium.store.subjects import NEUTRAL, stem

__all__ = ["FIRST_PERSON", "NEGATIONS", "fact_words", "self_talk", "speaks_as_user", "told_back",
           "uses"]

FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "my", "me", "mine", "myself"})
_SECOND_PERSON = frozenset({"you", "you're", "your", "yours", "yourself", "you've"})
_NOT_FACTS = frozenset("""
like likes love loves enjoy have has had want need know think help happy glad sorry sure
remember tell good great nice really also just well here there today now always never
get got go going make made see look feel find say said use used take give thing things
""".split())
NEGATIONS = frozenset({"not", "no", "never", "nothing", "none"})
_SELF_TALK = re.compile(r"\b(chat ?bots?|ai|artificial intelligence|language models?|virtual "
                        r"assistants?|the user'?s?|the response)\b", re.I)
"""Talk of itself, or of the prompt ("The user is asking about ...")."""
_THING_OR_SELF = re.compile(r"\b(bots?|robots?|assistants?|computer programs?|machines?)\b", re.I)
"""Words that also name things of the world: talk of itself in a sentence judged whole."""
_SAID_OF_SELF = re.compile(
    r"\b(?:i'm|i am|as|being|just|only|you're|you are|your|my)\s+(?:not\s+)?"
    r"(?:an?\s+|the\s+)?(?:[a-z]+\s+)?(?:bots?|robots?|assistants?|computer programs?|"
    r"machines?)\b", re.I)
"""... and in a sentence already heard in part, only said of itself or to the user."""
_WORD_CASED = re.compile(r"[A-Za-z0-9']+")


def fact_words(user: str, notes: str) -> frozenset[str]:
    """The words that state the user's facts: every content word of what they told
    (``notes``) and the names in their utterance ("Call me Sam" -> "sam")."""
    told = {w for w in words(notes) if w not in _NOT_FACTS and not is_function(w)}
    names: set[str] = set()
    for sentence in sentences(user):
        cased = _WORD_CASED.findall(sentence)
        names |= {w.lower() for w in cased[1:] if w[:1].isupper() and w.lower() != "i"}
    return frozenset(told | names)


def speaks_as_user(sentence: str, facts: frozenset[str]) -> bool:
    """Whether ``sentence`` states one of the user's facts as the speaker's own: a fact
    word within the words after "I", "I'm", "my" or "me" ("I'm Sam", "My dog is Rex"),
    before the sentence turns to "you", or after "as" just before them ("As a nurse, I
    ...")."""
    ws = words(sentence)
    for i, w in enumerate(ws):
        if w not in FIRST_PERSON:
            continue
        before = ws[max(0, i - 5):i]  # "As an electrician, I ...": the user's job as its own
        for k, b in enumerate(before):
            if b in ("as", "being") and any(x in facts for x in before[k + 1:]):
                return True
        for nxt in ws[i + 1:i + 7]:
            if nxt in _SECOND_PERSON:
                break
            if nxt in facts:
                return True
    return False


def self_talk(sentence: str, *, whole: bool = True) -> bool:
    """Whether ``sentence`` talks about chatbots, AI or assistants, or about "the user":
    asked about the user, SmolLM2-135M tells them they are a chatbot, or describes the
    request ("The user is asking about ..."). A word that also names things of the world
    ("machine", "robot", "assistant") counts in a sentence judged ``whole`` (dropping it
    costs nothing but that sentence); in one already heard in part (stopping it there
    leaves half a sentence) only said of itself or to the user ("I'm just a machine",
    "as your assistant"), not "a carpet removal machine" (session 18)."""
    if _SELF_TALK.search(sentence):
        return True
    return bool((_THING_OR_SELF if whole else _SAID_OF_SELF).search(sentence))


def uses(sentence: str, notes: str, question: str) -> bool:
    """Whether ``sentence`` says something of ``notes`` that ``question`` did not: a word
    of what the user told, other than the question's own words."""
    told = _told(notes, question)
    if not told:
        return False
    said = {stem(w) for w in words(sentence)}
    return not told.isdisjoint(said) or any(reply_words.shares_root(w, t)
                                            for w in said for t in told)


@functools.lru_cache(maxsize=64)
def _told(notes: str, question: str) -> frozenset[str]:
    """The word stems of ``notes`` the question did not ask (:func:`uses`), once per turn:
    the guard asks at every token of a start that waits for them."""
    asked = {stem(w) for w in words(question)}
    # "got", "have", "really" say nothing told: "You've got a tattoo." to "What's the
    # tattoo of?" after "I've got a tattoo. It's a hummingbird." uses none of it
    # nor the words of asking about a thing: "a person with a special name" to "What do
    # people call me?" after "I'm Cornelius, but everyone says Neil." names no name told
    return frozenset({stem(w) for w in words(notes)
                      if not is_function(w) and w not in _NOT_FACTS} - asked - NEUTRAL)


def told_back(text: str, facts: str, question: str) -> bool:
    """Whether ``text``, which speaks as the user, only says again what they told (every
    word of it is in the notes ``facts`` or the question, or a word of grammar): asked about
    themselves, it is their answer in the wrong voice, not the model's claim."""
    known = {stem(w) for w in words(f"{facts} {question}")}
    if any(w in NEGATIONS or w.endswith("n't") for w in words(text)) and not any(
            w in NEGATIONS or w.endswith("n't") for w in words(facts)):
        return False  # "I'm not following a diet.": not what was told
    said = [w for w in words(text) if not is_function(w) and w not in FIRST_PERSON]
    return bool(said) and all(stem(w) in known for w in said)
