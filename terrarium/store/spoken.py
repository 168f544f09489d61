"""A question as speech recognition writes it: often without its question mark.

Recall reads a question by its form, and a closing "?" is part of that form: without it
"when's the interview" and "how much was the boiler repair" were read as no question about
what was told (a question without "my" is one only when it asks), and handed nothing. A
transcript that opens as a question does (a question word before its verb, or a verb before
its subject) and closes with no mark of its own is a question: :func:`punctuated` gives it
its "?" (a question word run into its verb, "who's my stepfather", asks whatever follows;
written without its apostrophe, "whats his name", it is given it back: session 18),
as does what the user says they cannot remember ("I can't remember where my sister
lives.", "I've forgotten what the dog's called").
Not a clause of time or place the user opens a statement with ("when I was little
we lived in Kent", "what I need is a holiday": the subject comes before the verb), nor a
text already closed (".", "!", "?").
"""

from __future__ import annotations

import re

__all__ = ["punctuated"]

_CLOSED = re.compile(r"[.!?…][\"')\]]*\s*$")
_WH = re.compile(r"^\W*(?:and\s+|so\s+|sorry\s+|remind\s+me\s+|wait\s+)?"
                 r"(what|what'?s|where|where'?s|when|when'?s|who|who'?s|whom|whose|which|why|"
                 r"how|how'?s)\b(?!')(?P<rest>.*)$", re.I | re.S)
_SUBJECT_FIRST = re.compile(r"^\W*(i|we|you|he|she|they|i'm|i've|i'd|we're|we've|you're|"
                            r"they're|he's|she's|my|our|your|his|her|their)\b", re.I)
"""A clause whose subject comes first, before its verb ("when I was little ...", "what I
need is ...", "when my mum visits ..."): a statement's part, not a question (a question
inverts: "when am I ...", "what did I ...")."""
_INVERTED = re.compile(r"^\W*(?:and\s+|so\s+)?(?:(?:is|are|am|was|were|isn't|aren't|wasn't)\s+"
                       r"(?:the|this|that|these|those)\b|(?:is|are|am|was|were|do|does|did|can|"
                       r"could|will|would|should|shall|has|have|had|isn't|aren't|wasn't|didn't|"
                       r"doesn't|don't|won't|can't)\s+(?:i|you|we|he|she|it|they|my|our|your|"
                       r"his|her|their|there|anything|anyone)\b)", re.I)
"""A verb before its subject: "did my parcel come", "is the dentist on friday". A verb of
doing or having before "the" is a statement without its "I" as often ("did the big shop",
"had the best day"): not read as a question."""


_FORGOT = re.compile(r"^\W*i\s+(?:can't|cannot|can\s+never|don't|do\s+not|just\s+can't)\s+"
                     r"(?:remember|recall)\s+|^\W*i(?:'ve|\s+have)?\s+(?:forgot|forgotten)\s+",
                     re.I)
_FORGOT_WHAT = re.compile(r"(what|what's|where|where's|when|when's|who|who's|which|whose|"
                          r"how\s+(?:old|many|much|long))\b", re.I)


def punctuated(text: str) -> str:
    """``text`` with a closing "?" when it asks without one ("when's the interview" ->
    "when's the interview?"), or asks by saying what the user cannot remember ("I can't
    remember where my sister lives." -> "... lives?"); anything else as it is."""
    t = text.strip()
    forgot = _FORGOT.match(t)
    if forgot and _FORGOT_WHAT.match(t, forgot.end()) and "?" not in t:
        return f"{t.rstrip('.!…').rstrip()}?"
    if not t or _CLOSED.search(t):
        return text
    m = _WH.match(t)
    if m:
        if not m.group(1).lower().endswith("s") and _SUBJECT_FIRST.match(m.group("rest")):
            return text  # "when I was little we lived in Kent": told
        word = m.group(1)
        if word[-1:] in "sS" and "'" not in word and word.lower() != "whose":
            # "whats his name": speech recognition drops the apostrophe; every reader of
            # the ask (recall, the router's rules, the guard) knows "what's"
            t = f"{t[:m.end(1) - 1]}'{t[m.end(1) - 1:]}"
        return f"{t}?"
    return f"{t}?" if _INVERTED.match(t) else text
