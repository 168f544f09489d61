"""Retrieval alone, without a model: for every recall ask of a conversation set, is an
expected word in what the speaker would be handed?

``bench/conversation.py`` reports "answer handed over N" from a run of the whole voice team
(minutes to hours on a shared machine). What the speaker is handed does not depend on any
model: the router's notes (``terrarium.controller.recall.recall`` with the router's
``memory_facts``, ``memory_notes`` and ``memory_recent``) over the run's memory store, and
the utterance itself. This tells each dialogue's turns to a fresh store the way the router
records them and checks each ask, so a retrieval change is measured in seconds. It does
not judge the reply (but says how often the first note holds the answer: the model
answers from it best); a turn the router would take for a statement is counted as if it
reached the speaker (so N here can be a little above the run's).

It also counts the never-told asks and the other questions that were handed a note (the
guard answers a never-told ask with no note "I don't know that yet." without the model).
Notes are ranked by meaning too when the sentence encoder is installed (session 14);
``--words`` ranks them by words alone, as before, for a before/after in one tree.

Run: ``python bench/retrieval.py --set dev4 [-v] [--words]`` (``-v``: each ask missed, with
its notes, each ask whose answer is not in the first note (session 18), and each other
question handed a note, a never-told one marked when the guard refuses it at once, session
19).
The blind sets are refused: they are for judging the whole team, never read.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import anyio
from conversation import SETS  # bench/conversation.py, beside this
from conversation_data import UNKNOWN

from terrarium.config import load_team
from terrarium.controller.incoming import Incoming
from terrarium.controller.recall import recall, record
from terrarium.controller.reply_words import asked_about_user, cannot_answer
from terrarium.store import MemoryStore
from terrarium.store.clauses import sentences

ROOT = Path(__file__).resolve().parent.parent
JUDGES = {"blind3", "blind4", "blind5", "blind6", "blind7", "blind8", "blind9", "blind10",
          "blind11"}
"""Sets this never runs: held out or blind (their texts are never read)."""


def router_limits() -> tuple[int, int, int]:
    """The router's ``memory_recent``, ``memory_facts`` and ``memory_notes``."""
    cfg = load_team(ROOT / "examples" / "voice_assistant").creatures["router"].config
    return cfg.memory_recent, cfg.memory_facts, cfg.memory_notes


FOLLOW_ON = ("and ", "what about", "how about")
"""How an ask opens when the speaker's template shows it the previous utterance (only when
no note was found: ``creatures/speaker/config.yaml``, ``to_speaker``)."""


def message(text: str, notes: tuple[str, ...], recent: tuple[str, ...]) -> tuple[str, ...]:
    """What of a question the speaker's message holds, as its template builds it: the notes
    and the question, or, with no note, the previous utterance before a follow-on ("And
    what about …?") and the question. (Before session 13's second round this counted the
    previous utterance always: a follow-up looked handed over when the notes missed it.)"""
    if notes:
        return (*notes, text)
    if text.lower().lstrip().startswith(FOLLOW_ON):
        return (*recent, text)
    return (text,)


def gives_up(text: str, notes: tuple[str, ...]) -> bool:
    """Whether the reply guard would answer ``text`` "I don't know that yet." at once,
    without the model, as ``ReplyGuard.for_turn`` decides: asked about the user, and
    :func:`cannot_answer` from the notes' sentences."""
    told = sentences(" ".join(notes))
    return asked_about_user(text, told) and cannot_answer(text, told)


async def handed(dialogue: list[tuple[str, tuple[str, ...]]], limits: tuple[int, int, int],
                 by_meaning: bool = True, others: list[tuple[str, bool, int, bool]] | None = None,
                 ) -> list[tuple[str, tuple[str, ...], tuple[str, ...], bool, bool]]:
    """Each ask of ``dialogue`` (text, expected words) with its notes and whether an expected
    word is in them, the previous utterance or the ask itself, and whether the reply guard
    would say "I don't know that yet." at once, without the model (asked about the user and
    :func:`cannot_answer`: ``asked.lacks`` judging no note about it). ``by_meaning``: rank the
    notes by meaning too (the sentence encoder, when installed). ``others`` collects every
    other question (text, whether it asks what was never told, how many notes it got,
    whether the guard would answer a never-told one "I don't know that yet." at once)."""
    recent, facts, notes = limits
    out = []
    with MemoryStore() as memory:
        for text, expect in dialogue:
            item = Incoming(text=text, channel="user_input")
            got = await recall(memory, [item], creature="router", recent=recent, matches=0,
                               facts=facts, notes=notes, by_meaning=by_meaning)
            if expect and expect != ("UNKNOWN",):
                seen = " ".join([*message(text, got.notes, got.recent)]).lower()
                out.append((text, expect, got.notes, any(e.lower() in seen for e in expect),
                            gives_up(text, got.notes)))
            elif others is not None and text.rstrip().endswith("?"):
                others.append((text, bool(expect), len(got.notes),
                               bool(expect) and gives_up(text, got.notes)))
            await record(memory, [item], creature="router", facts=facts > 0,
                         meaning=by_meaning)
    return out


def main(name: str, verbose: bool, by_meaning: bool = True) -> None:
    if name in JUDGES:
        raise SystemExit(f"{name} is held out or blind: run it through bench/conversation.py")
    limits = router_limits()
    dialogues = [[(s.text, s.expect) for s in d] for d in SETS[name]()]
    t0 = time.process_time()
    asks = hit = first = lost = 0
    others: list[tuple[str, bool, int, bool]] = []
    for d, dialogue in enumerate(dialogues):
        cleaned = [(t, ("UNKNOWN",) if e == (UNKNOWN,) else e) for t, e in dialogue]
        for text, expect, notes, ok, gives_up in anyio.run(handed, cleaned, limits, by_meaning,
                                                           others):
            asks += 1
            hit += ok
            lost += ok and gives_up
            if verbose and ok and gives_up:
                print(f"  d{d + 1} {text!r} {expect}: the guard gives up on {list(notes)}")
            in_first = bool(notes) and any(e.lower() in notes[0].lower() for e in expect)
            first += in_first
            if verbose and ok and notes and not in_first:
                print(f"  d{d + 1} {text!r} {expect}: not in the first note {list(notes)}")
            if verbose and not ok:
                print(f"  d{d + 1} {text!r} {expect} <- {list(notes)}")
    cpu = time.process_time() - t0
    refused = sum(r for _, _, _, r in others)
    never = [n for _, unknown, n, _ in others if unknown]
    world = [n for _, unknown, n, _ in others if not unknown]
    print(f"{name}: answer handed over {hit} of {asks} asks, in the first note {first}, "
          f"the guard giving up on it {lost}; never-told asks refused at once {refused}, "
          f"never-told asks with a note {sum(map(bool, never))} of {len(never)}, other "
          f"questions with a note {sum(map(bool, world))} of {len(world)} ({cpu:.2f} s CPU)")
    if verbose:
        for text, unknown, n, refused in others:
            if n:
                how = ", refused at once" if refused else ""
                print(f"  {'never told' if unknown else 'other'}: {text!r} got {n} "
                      f"note(s){how}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", default="dev4")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--words", action="store_true",
                   help="rank the notes by words alone, as without the sentence encoder")
    a = p.parse_args()
    main(a.set, a.verbose, by_meaning=not a.words)
