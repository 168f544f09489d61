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

from terrarium.controller.echo import is_echo
from terrarium.controller.guard_loops import is_function
from terrarium.controller.reply_words import WORD, answer_only, asked_part, note_about, words
from terrarium.controller.said_back import closed, second_person
from terrarium.store.clauses import sentences
from terrarium.store.subjects import about_user, asks_advice, refers_to_told, strip_opening

__all__ = ["keep_in_mind", "note_first", "note_said_back", "said_instead",
           "without_the_question"]

_WORD = re.compile(r"[A-Za-z0-9'-]+")
_PREPOSITION = frozenset("""on in at for to from with by near about after before during
until since of""".split())
_VERB = frozenset("""is are was were has have had will 's""".split())
_AUX = frozenset("""does did do can could would should may might must""".split())
_YES_NO = frozenset("""do does did am is are was were have has had can will""".split())
_WHO = frozenset({"who", "who's", "whose"})
_NEGATION = re.compile(r"\b(not|never|no|nobody|nothing)\b|n't\b", re.I)


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


def without_the_question(user: str, said: str, echoes: Callable[[str, str], bool]
                         ) -> str | None:
    """``said`` (a note said back, one or two sentences) with each sentence that repeats
    ``user`` (``echoes(user, sentence)``) put in a form that does not and still says the
    answer: a word of the note's own the question does not hold (a name or a number of the
    note's when a form keeps one, else a word of substance when one does); a sentence with
    no such form is left out when another remains. None when nothing is left to say
    without repeating the user: the caller says something else (the model's answer, or its
    configured reply), never the echo."""
    asked = set(words(user))
    out = []
    for sentence in sentences(said):
        if not echoes(user, sentence):
            out.append(sentence)
            continue
        fit = [s for s in _forms(user, sentence, asked)
               if s and not echoes(user, s) and set(words(s)) - asked]
        # a who asks for the subject ("Your mother-in-law is.", not "On Friday."): in order
        named = _named(sentence, asked) if words(user)[:1] not in ([w] for w in _WHO) else set()
        # the first that keeps a name or number of the note's, else a word of substance
        # ("Every morning." drops "Theo" to "Who walks the dog?"), else any of its own
        # ("You drink coffee every morning." to "Should I drink coffee every morning ...")
        out.append(next((s for s in fit if named & set(words(s))),
                        next((s for s in fit if _says_answer(s, asked)),
                             fit[0] if fit else "")))
    kept = [s for s in out if s]
    best = " ".join(kept)
    return best if kept and not echoes(user, best) else None


def _says_answer(form: str, asked: set[str]) -> bool:
    """A word of substance the question does not hold ("yes" for a yes or no)."""
    new = [w for w in words(form) if w not in asked]
    return any(not is_function(w) for w in new) or new[:1] == ["yes"]


def _named(sentence: str, asked: set[str]) -> set[str]:
    """The names and numbers of ``sentence`` the question does not hold: the answer's words
    most likely ("Rosa", "12th")."""
    return {t.lower() for t in _NAMED.findall(sentence)} - asked - {"you", "your", "i"}


_NAMED = re.compile(r"(?<=[\w,;:] )[A-Z][A-Za-z'-]*|\b\d+[a-z]*\b")


def _forms(user: str, sentence: str, asked: set[str]) -> list[str]:
    """The shorter forms of an echoing ``sentence`` to try, in order."""
    found = list(_WORD.finditer(sentence))
    tokens = [m.group(0) for m in found]
    low = [t.lower().strip("'") for t in tokens]
    forms = [answer_only(user, sentence) or ""]
    first = words(user)[:1]
    # the question's last word of substance in the note: what follows it is the answer
    last = _last_asked(low, asked)
    after = sentence[found[last + 1].start():] if 0 <= last < len(low) - 1 else ""
    if first and first[0] in _YES_NO and not _NEGATION.search(sentence):
        # "Is my brother a vet?": "Yes, in Leeds." (its subject said again would echo)
        forms.append(closed(f"Yes, {after}") if after else "Yes.")
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
            if not {w for w in words(head) if w in asked and not is_function(w)}:
                # "Your flatmate Jonas is." says nothing to "What's Jonas allergic to?"
                forms.append(closed(f"{head} {verb}"))
            break
    # "Who teaches yoga?": the note's words before the question's are the one who does it,
    # "Your sister Rosa."
    start = next((i for i, w in enumerate(low) if w in asked and not is_function(w)), 0)
    while start > 0 and is_function(low[start - 1]):
        start -= 1  # "You left the car ...": "You left."
    if first and first[0] in _WHO and start > 0:
        head = sentence[:found[start].start()].rstrip(" ,;:")
        forms.append(closed(head[:1].upper() + head[1:]))
    # what follows the question's last word of substance: "Biscuit." after "... called";
    # "It is on the 8th ..." after "... booster jab" to "When's the jab?"
    if after:
        end = next((i for i in range(last + 2, len(low)) if low[i] in ("and", "but")
                    and any(w in asked and not is_function(w) for w in low[i:])), len(low))
        tail = " ".join(tokens[last + 1:end])  # "Biscuit", not "... and a grey one called"
        verb = low[last + 1] in _VERB or low[last + 1] in _AUX
        forms.append(closed(f"It {tail}" if verb else tail[:1].upper() + tail[1:]))
    # the longest run of the note's own words, none the question's: "Noor." to "Who and
    # Sami?" after "... are called Noor and Sami."
    forms.append(_own_run(sentence, asked))
    return forms


def _last_asked(low: Sequence[str], asked: set[str]) -> int:
    """Where the note's words that say the question again end: its last word of substance
    among the question's with most of the question's just before it, the first of equals
    ("... a ginger one called Biscuit and a grey one called Smudge." to "What's the ginger
    one called?": the first "called"); -1 when none."""
    at = [i for i, w in enumerate(low) if w in asked and not is_function(w)]
    if not at:
        return -1
    return max(at, key=lambda i: (sum(w in asked for w in low[max(0, i - 3):i]), -i))


def _own_run(sentence: str, asked: set[str]) -> str:
    """The longest run of ``sentence``'s words the question does not hold (each word as
    the echo counts it: "mother-in-law" is three), said as a sentence; "" when none holds a
    word of substance."""
    found = list(WORD.finditer(sentence))
    low = [m.group(0).lower().strip("'") for m in found]
    best: tuple[int, int, int] = (0, 0, 0)  # (words of substance, start, end)
    i = 0
    while i < len(low):
        if low[i] in asked:
            i += 1
            continue
        j = i
        while j < len(low) and low[j] not in asked:
            j += 1
        while j > i and is_function(low[j - 1]):
            j -= 1  # no run ends on "the", "and"
        n = sum(not is_function(w) for w in low[i:j])
        if n > best[0]:
            best = (n, i, j)
        i = max(j, i + 1)
    n, i, j = best
    if not n:
        return ""
    text = found[i].string[found[i].start():found[j - 1].end()].rstrip(" ,;:")
    return closed(text[:1].upper() + text[1:])


def keep_in_mind(user: str, notes: Sequence[str]) -> str:
    """For advice asked (:func:`asks_advice`) with notes of what the user told, the first
    of them (not a name alone) to say back with the advice: "Keep in mind: You're allergic
    to peanuts."; "" when there is none, or when it would repeat the user's words."""
    if not asks_advice(user):
        return ""
    told = next((n for n in notes if not n.rstrip(".").endswith(" is my name")), "")
    said = closed(second_person(strip_opening(told))) if told.strip() else ""
    return "" if not said or is_echo(user, said) else f"Keep in mind: {said}"


def said_instead(user: str, facts: str, echo_reply: str, unknown_reply: str | None) -> str:
    """What the reply guard says when nothing of the model's can be: asked about themselves
    (``unknown_reply`` given), what the user told about it, to them ("You're from
    Nairobi."), or else ``unknown_reply`` ("I love baking bread." says nothing of a
    favourite film: likes are no subject); otherwise the user's facts to the user (without
    the user's words, when they would repeat them: :func:`without_the_question`), or
    ``echo_reply``."""
    if unknown_reply is not None:
        return note_said_back(user, sentences(facts), is_echo) or unknown_reply
    said = closed(second_person(facts)) if facts else ""
    # never the user's words back, here either: "You drink coffee every morning before
    # work." to "Should I drink coffee every morning before work?" (its echo dropped) is
    # said without them ("You drink coffee every morning."), or not at all
    said = without_the_question(user, said, is_echo) if said else ""
    return said if said and not is_echo(user, said) else echo_reply
