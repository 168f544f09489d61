"""A note said back, without the question's words (``said_short``), over many pairs: how many
end as an echo, as nothing to say (None), or without the answer's words? Without a model.

Three sources of (question, note) pairs:

- ``dev``: every recall ask of the dev and probe sets (``first``, ``held-out``, ``dev`` ...
  ``dev10``, ``probe14``, ``probe_honest``; never a judge set) with the notes the speaker is
  handed (``bench/retrieval.py``'s ``handed``): what the guard says at once with
  ``say_note`` (``note_first``), scored on the ask's expected words; and every note handed
  crossed with the ask, said back (the fallback's form) whenever it echoes the ask;
- ``own``: pairs written for session 20 (note20) before any was run, in the shapes that
  echo: questions of 3 to 8 words whose words the note holds (who does it, yes or no, a
  subject the note restates after its answer, a closing phrase of the question's words);
- ``made``: for each note handed on the dev sets, questions made of a question word and 2 to
  4 of the note's own words beside one of its named words (a name or a number: "Who" when
  the words follow it, else "What", "When" or "Where"; the run
  neither starting nor ending on a word like "the", "in"), the answer expected: short
  questions are the hard ones (3 of 4 words make an echo). Not all are English ("Who
  sister Rosa?"); the echo measure counts words only.

An echo counted is the reply repeating the question (``is_echo``); "lost" a reply that says
none of the expected words (``dev``, ``made``) or none of the note's words the question does
not hold (the answer's, ``own``).

Run: ``python bench/said_back_forms.py [-v]`` (``-v``: every pair that fails).
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter

import anyio
from conversation import SETS  # bench/conversation.py, beside this
from conversation_data import UNKNOWN
from retrieval import handed, router_limits

from terrarium.controller.echo import is_echo
from terrarium.controller.guard_loops import is_function
from terrarium.controller.reply_words import asked_about_user, cannot_answer, note_about, words
from terrarium.controller.said_back import closed, second_person
from terrarium.controller.said_short import note_first, note_said_back, without_the_question
from terrarium.store.clauses import sentences
from terrarium.store.subjects import strip_opening

DEV_SETS = ("first", "held-out", "dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7", "dev8",
            "dev9", "dev10", "probe14", "probe_honest")
"""Never a judge set (``bench/conversation_blind*.py``, ``conversation_fresh.py``)."""

OWN: list[tuple[str, str]] = [
    # who does it: the note's subject is the answer, the rest the question
    ("Who teaches yoga?", "My sister Rosa teaches yoga."),
    ("Who walks the dog?", "My son Theo walks the dog every morning."),
    ("Who cuts my hair?", "Bilal at the corner barber cuts my hair."),
    ("Who picks up the kids?", "My neighbour Gwen picks up the kids on Tuesdays."),
    ("Who fixed the boiler?", "A plumber called Dmitri fixed the boiler."),
    ("Who's the cat sitter?", "Nadia is the cat sitter."),
    ("Who's coming on Friday?", "My cousin Ayo is coming on Friday."),
    ("Who runs the book club?", "Old Mr Penhale runs the book club."),
    # yes or no, the note saying so in the question's words
    ("Do I have a cat?", "I have a cat called Miso."),
    ("Is my brother a vet?", "My brother is a vet in Leeds."),
    ("Am I vegetarian?", "I'm vegetarian but I eat fish."),
    ("Do I play the piano?", "I play the piano at church on Sundays."),
    ("Have I been to Japan?", "I've been to Japan twice, both times to Osaka."),
    ("Is the party on Saturday?", "The party is on Saturday at Jo's."),
    ("Do I speak Welsh?", "I speak Welsh with my gran."),
    ("Does my daughter swim?", "My daughter swims for the county."),
    # the question's words after the answer, or around it
    ("When's the dentist appointment?", "The dentist appointment is on the 12th."),
    ("What time's the train?", "The train's at ten to eight."),
    ("Where's the party on Saturday?", "The party on Saturday is at the Crown."),
    ("What's on for Thursday?", "Thursday I've got physio at the health centre."),
    ("What did I cook last night?", "Last night I cooked a mushroom risotto."),
    ("What do I drink in the morning?", "In the morning I drink green tea."),
    ("Which day is bin day?", "Bin day is Wednesday."),
    ("Which car do I drive?", "I drive the red car, the Fiesta."),
    ("What colour is the front door?", "The front door is a dark green colour."),
    ("How do I get to work?", "I get to work on the number 9 bus."),
    ("Where do I keep the spare key?", "I keep the spare key under the blue flowerpot."),
    ("What instrument does Amira play?", "Amira plays the cello, her favourite instrument."),
    ("How many kids do I have?", "I have three kids."),
    ("How old is my dog?", "My dog is nine years old."),
    ("Where was I born?", "I was born in Gdansk."),
    ("What's my cat called?", "My cat is called Pickle."),
    ("What's the dog's name?", "The dog's name is Bramble."),
    ("What is my wife's job?", "My wife's job is in insurance, she's an underwriter."),
    ("What does my husband do?", "My husband does the accounts for a brewery."),
    ("When do I fly to Lisbon?", "I fly to Lisbon on the 3rd of May."),
]
"""Written for session 20 before any was run (no sentence of another set)."""

_NAMED = re.compile(r"(?<!^)\b[A-Z][a-z]+\b|\b\d+\w*\b")
_WH = ("What", "When", "Where")


def _said(note: str) -> str:
    return closed(second_person(strip_opening(note)))


def _made(note: str) -> list[tuple[str, str]]:
    """Questions of a question word and 2 to 4 of ``note``'s words beside one of its named
    words, with that word (the answer)."""
    out = []
    toks = re.findall(r"[A-Za-z0-9'-]+", note)
    for m in _NAMED.finditer(note):
        at = next((i for i, t in enumerate(toks) if t == m.group(0)), None)
        if at is None or at == 0:
            continue
        for n in (2, 3, 4):
            before = [t for t in toks[max(0, at - n):at]]
            after = [t for t in toks[at + 1:at + 1 + n]]
            for part, wh in ((before, _WH[len(m.group(0)) % len(_WH)]), (after, "Who")):
                if (len(part) == n and not is_function(part[0].lower())
                        and not is_function(part[-1].lower())):
                    out.append((f"{wh} {' '.join(part)}?", m.group(0)))
    return out


def _kept(reply: str | None, expect: tuple[str, ...]) -> bool:
    low = (reply or "").lower()
    return any(e.lower() in low for e in expect)


def _answer(question: str, said: str) -> tuple[str, ...]:
    asked = set(words(question))
    return tuple(w for w in words(said) if w not in asked and not is_function(w))


def main(verbose: bool) -> None:
    t0 = time.process_time()
    limits = router_limits()
    counts: dict[str, Counter[str]] = {k: Counter() for k in ("say_note", "cross", "made", "own")}
    seen: set[tuple[str, str]] = set()

    def score(kind: str, question: str, said: str, got: str | None,
              expect: tuple[str, ...]) -> None:
        c = counts[kind]
        c["pairs"] += 1
        c["echo before"] += is_echo(question, said)
        bad = ("none" if got is None else "empty" if not got.strip()
               else "echo" if is_echo(question, got) else
               "lost" if expect and not _kept(got, expect) else "")
        if bad:
            c[bad] += 1
            if verbose:
                print(f"  {kind} {bad}: {question!r} / {said!r} -> {got!r}")

    for name in DEV_SETS:
        for d in SETS[name]():
            dialogue = [(s.text, ("UNKNOWN",) if s.expect == (UNKNOWN,) else s.expect)
                        for s in d]
            for text, expect, notes, _ok, _gives_up in anyio.run(handed, dialogue, limits):
                told = sentences(" ".join(notes))
                if not told:
                    continue
                if asked_about_user(text, told) and not cannot_answer(text, told):
                    note = note_about(text, told)
                    got = note_first(text, told, is_echo)
                    if note and (got is not None  # else the model answers, as asked of
                                 or note_said_back(text, told, is_echo) is None):  # the world
                        score("say_note", text, _said(note), got, expect)
                for note in told:
                    whole = _said(note)
                    if (text, note) not in seen and is_echo(text, whole):
                        seen.add((text, note))
                        score("cross", text, whole, without_the_question(text, whole, is_echo),
                              _answer(text, whole))
                    for q, answer in _made(note):
                        if (q, note) in seen:
                            continue
                        seen.add((q, note))
                        whole_q = _said(note)
                        if is_echo(q, whole_q):
                            score("made", q, whole_q,
                                  without_the_question(q, whole_q, is_echo), (answer,))
    for q, note in OWN:
        whole = _said(note)
        score("own", q, whole, without_the_question(q, whole, is_echo), _answer(q, whole))
    for kind, c in counts.items():
        print(f"{kind}: {c['pairs']} pairs ({c['echo before']} echo said whole): echo "
              f"{c['echo']}, nothing to say {c['none']}, empty {c['empty']}, answer lost "
              f"{c['lost']}")
    print(f"({time.process_time() - t0:.1f} s CPU)")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-v", "--verbose", action="store_true")
    main(p.parse_args().verbose)
