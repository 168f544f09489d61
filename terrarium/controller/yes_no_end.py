"""A yes or no answer ended before it says the question again (issue 30, session 21).

"Should leather boots worn in the rain be dried near a radiator?" is answered "No, leather
boots worn in the rain should not be dried near a radiator.": the answer is its first word,
the rest the question restated, an echo. Once the voice has the sentence's start ("No,
leather boots"), the reply guard can still end it short where English lets it: after its
auxiliary and a "not" ("No, leather boots worn in the rain should not.", "No, you don't."),
or after the word before an infinitive's "to" ("Yes, it is okay to put hot soup in the
freezer." -> "Yes, it is okay."). :func:`yes_no_end` finds the first such end past what was
spoken that is no echo. Asking the model again with the user's words banned (``ask_again``)
kept no answer's sense on this model; this keeps the model's own answer, shorter.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from terrarium.controller.reply_words import AUXILIARIES, LETTER_WORD, NOT_WORDS

__all__ = ["yes_no_end"]

_YES_NO = re.compile(r"^\W*(?:yes|no)\b", re.I)
_LED_YES_NO = re.compile(r"^(?:[\w']+[ ,]+){1,4}?(?:yes|no),\s", re.I)
"""A yes or no said after a short lead-in, before a comma: "The answer is no, ...",
"Actually, yes, ..." (a "no" with no comma after it may be a determiner: "There is no way")."""
_IMPERATIVE = frozenset({"do", "don't"})  # "No, don't.", "No, do not."


def yes_no_end(text: str, spoken: int, fine: Callable[[str], bool]) -> str | None:
    """What follows ``text[:spoken]`` (already given to the voice) when ``text``, a
    sentence that opens with "yes" or "no" (or says it after a short lead-in: "The answer
    is no, octopuses do not."), ends at its first place past ``spoken`` after an auxiliary
    (and its "not"), or before an infinitive's "to", with a full stop, and that sentence is
    ``fine`` (the guard's checks: no echo, nothing wrong); None when there is no such
    place."""
    if _YES_NO.match(text):
        first = 0  # the yes or no is the first word
    elif (led := _LED_YES_NO.match(text)) is not None:
        first = len(LETTER_WORD.findall(led.group())) - 1  # the lead-in's last word
    else:
        return None
    ws = list(LETTER_WORD.finditer(text))
    for i, w in enumerate(ws[first + 1:], first + 1):
        word = w.group().lower()
        if i < first + 2 and word not in _IMPERATIVE:
            continue  # "No, is." says nothing: a subject comes first ("No, don't." may)
        if word in AUXILIARIES:
            nxt = ws[i + 1] if i + 1 < len(ws) else None
            end = nxt.end() if nxt is not None and nxt.group().lower() in NOT_WORDS else w.end()
        elif word == "to" and ws[i - 1].group().lower() not in AUXILIARIES | NOT_WORDS:
            end = ws[i - 1].end()  # "okay" of "it is okay to ..."
        else:
            continue
        if end < spoken or end >= len(text.rstrip(" .!?\"')")):
            continue  # heard already, or the sentence's own end
        said = text[:end] + "."
        if fine(said):
            return said[spoken:]
    return None
