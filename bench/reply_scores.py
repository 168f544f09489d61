"""How a spoken reply is scored (``bench/conversation.py``, ``bench/replay_guard.py``): complete,
invented names, speaks as the user, repetition loops, "does not know" (the echo is the
runtime's own measure, ``terrarium.controller.guard.is_echo``)."""

from __future__ import annotations

import re

from terrarium.controller.guard import words

__all__ = ["DONT_KNOW", "NAMES", "invented", "is_complete", "loops", "sentences",
           "speaks_as_user"]

# Common first names (and the ones SmolLM2-135M tends to make up): a reply naming one the
# user never said has invented a person.
NAMES = frozenset("""
ada tom maria ken sam lena john jane sarah smith emma olivia liam noah james mary anna
david michael emily jessica ashley jennifer alex alice bob charlie daniel laura lisa mark
paul peter robert susan thomas william elizabeth linda barbara richard joseph chris
christopher matthew anthony andrew joshua kevin brian george edward sophia isabella mia
amelia harper evelyn abigail ella grace chloe lily zoe hannah rachel rebecca kate katie
julia sophie lucy max jack harry oliver jacob ethan lucas henry leo mike steve ben sam
tim joe ryan adam eric jason justin nick tony frank fred carl helen ruth nancy karen betty
dorothy sandra donna carol michelle amanda melissa deborah stephanie rose jim bill dan
martha amy kim anne jenny tina molly jake luke sean ian jimmy
""".split())

_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)")

def sentences(text: str) -> int:
    return len(_SENTENCE_END.findall(text.strip())) or (1 if text.strip() else 0)


def is_complete(reply: str) -> bool:
    t = reply.strip()
    return bool(t) and bool(re.search(r"[.!?][\"')\]]*$", t)) and sentences(t) <= 2


def invented(reply: str, said: str) -> list[str]:
    known = set(words(said))
    # capitalized words only: "will" or "grace" in lower case are not names
    return [w for w in re.findall(r"\b[A-Z][a-z]+\b", reply)
            if w.lower() in NAMES and w.lower() not in known]


_AS_USER = re.compile(r"\b(?:I'm|I am|my name is|call me|I'm from|I am from|I come from|"
                      r"I live in|I was born in|I grew up in)\s+([A-Z][a-z]+)")
_LOOP_WORD = re.compile(r"[a-z0-9']+")
_LOOP_STOP = frozenset("the a an and or to of in is you your i my it that".split())


def speaks_as_user(reply: str, said: str) -> list[str]:
    """The user's own names and places the reply claims as its own ("I'm Sam")."""
    theirs = {w for w in re.findall(r"\b[A-Z][a-z]+\b", said)}
    return [m.group(1) for m in _AS_USER.finditer(reply) if m.group(1) in theirs]


def loops(text: str) -> bool:
    """A word or phrase (up to six words) said three times running, or one word (not a
    function word) said four times: the model stuck in a loop."""
    ws = _LOOP_WORD.findall(text.lower())
    for n in range(1, 7):
        for i in range(len(ws) - 3 * n + 1):
            if ws[i:i + n] == ws[i + n:i + 2 * n] == ws[i + 2 * n:i + 3 * n]:
                return True
    counts: dict[str, int] = {}
    for w in ws:
        if w not in _LOOP_STOP:
            counts[w] = counts.get(w, 0) + 1
    return any(c >= 4 for c in counts.values())


DONT_KNOW = re.compile(r"\b(don't|do not|didn't|did not) (know|remember)|\bnot sure\b|"
                        r"\bhaven't (told|said|mentioned)|\bno idea\b", re.I)
