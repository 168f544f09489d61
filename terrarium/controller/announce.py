"""An announcement spoken to its kind: "Here's a tip for sleeping better: 1) Don't lie
down ..." to "Give me a tip for sleeping better." is said "Here's a tip: Don't lie down ...".

An announcing first sentence ("Here's a tip", "Here are some ideas", "Here's how") names
its kind in its first words, then restates what was asked up to its colon. The guard used
to hold such a sentence whole (:func:`~.reply_words.announces`) and drop the restating
lead-in at its colon (:func:`~.echo.echo_lead`), so the voice waited for every word the
model wrote of it: session 25, with flash attention on, the voice bench's tip reply waited
~12 tokens (200-270 ms) for its first audio. Now the announcement's start up to its kind is
the voice's first piece as soon as the next word shows the kind has ended ("for", "to",
"on", a colon ...); what follows the kind is held, and:

- a lead-in that repeats the user up to its colon is left out: the kind ends at the colon
  and what follows it is the next sentence ("Here's a tip: Don't lie down ...");
- a whole sentence that repeats the user ("Here are some tips for sleeping better.") ends
  at its kind ("Here are some tips.") and the reply goes on with the next one;
- anything else is spoken whole, as any sentence released at its start.
"""

from __future__ import annotations

import re

from terrarium.controller.echo import after_lead, echo_lead, is_echo

__all__ = ["kind_end", "left_out"]

_KIND = re.compile(
    r"\W*(?:(?:sure|okay|ok|of course|absolutely)[,!.]?\s+)?"
    r"(?:here\s+(?:are|is)|here's|these\s+are|the\s+following\s+are)\s+"
    r"(?:how|(?:a|an|one|some|a\s+few|few|several|two|three|four|five)\s+"
    r"(?:[A-Za-z-]+\s+){0,2}?(?!(?:a|an|the|some|few|of|to|for|what|which|that)\b)[A-Za-z-]+)"
    r"(?=\s*:|\s+(?:for|to|on|about|that|which|of|in|with|from|if|when|you|I)\s)", re.I)
"""An announcer, then its kind: "how", or an indefinite noun with up to two words before it
("a quick tip", "some ideas"; not "the capital", which may be the answer's own), ended by
the word that opens what it restates, or by a colon."""
_LIST_NUMBER = re.compile(r"\s*\d{1,2}\.")  # "better: 1." ends a sentence, but opens a list


def kind_end(held: str) -> int | None:
    """Where the announcement ``held`` (its first sentence so far) ends its kind, once the
    word or colon after the kind has come; None: not an announcement's start (or not yet
    known: "Here's a" may go on "Here's a quick tip for")."""
    m = _KIND.match(held)
    return None if m is None else m.end()


def left_out(user: str, text: str, done: int, end: tuple[int, int] | None
             ) -> tuple[int, str, str] | None:
    """Where the rest of an announcement spoken to its kind (``text``, the voice has its
    first ``done`` characters; ``end``: its sentence's end, start and stop, once it came)
    is left out: at the colon of a lead-in that repeats the user, the kind ended with ":"
    and what follows the colon the next sentence; at the end of a whole sentence that
    repeats the user, ended with "."; as (where, the kind's mark, the text after). None:
    not left out (or not yet: a colon still waiting for its word)."""
    lead = echo_lead(user, text, None if end is None else end[0])
    if lead is not None and lead >= 0:
        return lead, ":", f" {after_lead(text[lead:]).lstrip()}"
    if end is not None and is_echo(user, text[:end[1]]):  # ":" before a list's "1."
        colon = text.rfind(":", done, end[0])
        mark = ":" if colon >= 0 and _LIST_NUMBER.fullmatch(text, colon + 1, end[1]) else "."
        return end[1], mark, text[end[1]:]
    return None
