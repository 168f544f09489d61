"""A note said back without the user's question in it (the reply guard's fallback, and its
answer at once with ``reply_guard.say_note``: :func:`note_first`, :func:`note_said_back`).

When the model's answer fails, the guard says the note about the question back to the user
("You've got a job interview at the council on the 19th."). A note often holds the
question's own words ("What's happening on the 19th?"), and said whole it repeats the user:
an echo by the measure the guard never lets the model's sentences pass (session 17: all four
echoes of dev7 and dev8 on main were such notes said back). :func:`without_the_question`
says the note's answer without them, in the first of these forms that is no echo and still
says something the question did not:

- the question restated before "is" / "are" said as "It" / "They" (``answer_only``):
  "Swimming lessons are Wednesdays at half five." to "Lessons are at what time?" -> "They
  are Wednesdays at half five.";
- a closing phrase of the question's words dropped: "... at the council on the 19th." ->
  "You've got a job interview at the council.";
- what follows the verb dropped when it says the question again, for a question of who or
  what does it: "Your mother-in-law is coming to stay on Friday." to "Who's coming to
  stay?" -> "Your mother-in-law is.";
- the words after the last of the question's: "A ginger one called Biscuit." to "What's
  the ginger one called?" -> "Biscuit.".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from terrarium.controller.guard_loops import is_function
from terrarium.controller.reply_words import answer_only, asked_part, note_about, words
from terrarium.controller.said_back import closed, second_person
from terrarium.store.clauses import sentences
from terrarium.store.subjects import about_user, refers_to_told, strip_opening

__all__ = ["note_first", "note_said_back", "without_the_question"]

_WORD = re.compile(r"[A-Za-z0-9'-]+")
_PREPOSITION = frozenset("""on in at for to from with by near about after before during
until since of""".split())
_VERB = frozenset("""is are was were has have had will 's""".split())
_AUX = frozenset("""does did do can could would should may might must""".split())


def note_first(user: str, notes: Sequence[str], echoes: Callable[[str, str], bool]
               ) -> str | None:
    """What the runtime says itself, without the model, to a question about the user with
    notes (``reply_guard.say_note``): the note about it said back (:func:`note_said_back`),
    for a question that speaks of the user ("Where am I from?") or asks of something they
    told by its words ("What colour is the car?" after "My car's a green Skoda."); None for
    the rest, which the model answers: a question linked to a note by meaning alone ("What's
    the capital of Peru?" after "I live in Lima.") or pointing back ("How old was he then?")
    may ask of the world."""
    asked = asked_part(user)  # as reply_words.asked_about_user reads it
    if not (about_user(asked) or refers_to_told(asked, notes)):
        return None
    return note_said_back(user, notes, echoes)


def note_said_back(user: str, notes: Sequence[str], echoes: Callable[[str, str], bool]
                   ) -> str | None:
    """The note about ``user``'s question (:func:`note_about`) said back to them, in the
    second person and without the question's words (:func:`without_the_question`): "I'm
    originally from Nairobi." -> "You're originally from Nairobi."; None when no note is
    about the question."""
    told = note_about(user, notes)
    if not told:
        return None
    return without_the_question(user, closed(second_person(strip_opening(told))), echoes)


def without_the_question(user: str, said: str, echoes: Callable[[str, str], bool]) -> str:
    """``said`` (a note said back, one or two sentences) with each sentence that repeats
    ``user`` (``echoes(user, sentence)``) put in a form that does not, keeping a word the
    question does not hold; a sentence with no such form is left out when another remains,
    and ``said`` is returned as it is when nothing better is found."""
    asked = set(words(user))
    out = []
    for sentence in sentences(said):
        if not echoes(user, sentence):
            out.append(sentence)
            continue
        short = next((s for s in _forms(user, sentence, asked)
                      if s and not echoes(user, s) and set(words(s)) - asked), None)
        out.append(short or "")
    kept = [s for s in out if s]
    best = " ".join(kept)
    return best if kept and not echoes(user, best) else said


def _forms(user: str, sentence: str, asked: set[str]) -> list[str]:
    """The shorter forms of an echoing ``sentence`` to try, in order."""
    tokens = _WORD.findall(sentence)
    low = [t.lower().strip("'") for t in tokens]
    forms = [answer_only(user, sentence) or ""]
    # a closing phrase of the question's words: "... on the 19th."
    for i in range(len(low) - 1, 1, -1):
        if low[i] in _PREPOSITION and all(w in asked for w in low[i:]) and i >= 3:
            forms.append(closed(" ".join(tokens[:i]).rstrip(",;:")))
            break
    # "Your mother-in-law is coming to stay": a who or what answered by the subject
    for i, w in enumerate(low[1:-1], 1):
        if (w in _VERB or w.endswith("'s")) and sum(x in asked for x in low[i + 1:i + 4]) >= 2:
            if w.endswith("'s") and w != "'s":
                head, verb = " ".join(tokens[:i + 1])[:-2], "is"
            else:
                head, verb = " ".join(tokens[:i]), w
            if set(words(head)) - asked:
                forms.append(closed(f"{head} {verb}"))
            break
    # what follows the question's last word of substance: "Biscuit." after "... called";
    # "It is on the 8th ..." after "... booster jab" to "When's the jab?"
    last = max((i for i, w in enumerate(low) if w in asked and not is_function(w)),
               default=-1)
    if 0 <= last < len(low) - 1:
        tail = " ".join(tokens[last + 1:])
        verb = low[last + 1] in _VERB or low[last + 1] in _AUX
        forms.append(closed(f"It {tail}" if verb else tail[:1].upper() + tail[1:]))
    return forms
