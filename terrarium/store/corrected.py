"""What the user said as it stands after their corrections and goings-on: a statement the
user corrected ("My name is Jon." then "Actually, it's Jonathan."; "The party is on Friday,
sorry, Saturday." in one sentence) maps to the statement with the new value in, and a
statement that opens by pointing back ("It's in Swansea.") to the one before it joined with
it. Recall (``terrarium.controller.recall``) hands over the mapped statement in place of
those it stands for."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from terrarium.store import clauses
from terrarium.store.corrections import (
    apply_correction,
    correct_inline,
    goes_on,
    is_correction,
    marks_change,
    swap_value,
    tells_habit,
)
from terrarium.store.subjects import is_statement, mentions_user, relevant

__all__ = ["CORRECTS_BACK", "corrected", "joined"]


def corrected(said: Sequence[str]) -> dict[str, str]:
    """What the user said (oldest first) as it stands after their corrections: a corrected
    statement and its correction both map to the statement with the new value in
    ("My name is Jonathan."); a correction without one value ("Actually, I live in Porto
    now.") maps the statement before it to itself, the newer word."""
    out: dict[str, str] = {}
    for i, text in enumerate(said):
        within = _corrected_within(text)
        if within is not None:
            out[text] = within  # "I have two cats. Sorry, three.": "I have three cats."
            continue
        if not is_correction(text):
            if not _swapped(out, said[:i], text):
                _changed(out, said[:i], text)
            continue
        before = [t for t in said[:i] if is_statement(t) and not is_correction(t)]
        if not before:
            continue
        previous = out.get(before[-1], before[-1])
        new = apply_correction(previous, text)
        if new is not None:
            out[before[-1]] = out[text] = new
        elif (older := _corrects_older(out, before, text)) is not None:
            out[older] = out[text] = apply_correction(out.get(older, older), text) or text
        elif relevant(text, previous, attitudes=False):  # the same subject, said anew
            out[before[-1]] = text
    return out


CORRECTS_BACK = 3
"""How many statements back a correction may reach, past ones it has nothing to put right
in ("My sister's flight lands at four." "I'll pick her up." "Sorry, I got that wrong, it
lands at half five.")."""


def _corrects_older(out: dict[str, str], before: Sequence[str], text: str) -> str | None:
    """The newest of the statements before the last one (up to :data:`CORRECTS_BACK` back)
    with a value of the kind correction ``text`` gives to put right ("My dentist is at nine."
    "I need milk." "No wait, it's at ten."), or None."""
    for old in reversed(before[-CORRECTS_BACK:-1]):
        if apply_correction(out.get(old, old), text):
            return old
    return None


def _corrected_within(text: str) -> str | None:
    """``text`` with a sentence that corrects the one before it put into it ("My bus is at
    six. No wait, make that seven." -> "My bus is at seven."), and a slip corrected inside a
    sentence put right (:func:`correct_inline`: "My sister, no wait, my cousin Lena is
    getting married." -> "My cousin Lena is getting married."), or None: no such thing."""
    # "The party is on Friday, sorry, Saturday.": a slip corrected inside a sentence first
    parts = [correct_inline(p) or p for p in clauses.sentences(text)]
    if not parts:
        return None
    kept: list[str] = [parts[0]]
    for part in parts[1:]:
        new = apply_correction(kept[-1], part) if is_correction(part) else None
        if new is None:
            new = swap_value(kept[-1], part)
        if new is None:
            kept.append(part)
        else:
            kept[-1] = new
    joined = " ".join(kept)
    return joined if joined != text.strip() else None


def _swapped(out: dict[str, str], before: Sequence[str], text: str) -> bool:
    """Put the value ``text`` gives in place of the word it takes back in the statement told
    just before it ("I'm allergic to cats." + "Not cats, dogs, sorry.": :func:`swap_value`),
    both mapping to the statement corrected; whether it did."""
    told = [t for t in before if is_statement(t) and not is_correction(t)]
    if not told:
        return False
    previous = out.get(told[-1], told[-1])
    new = swap_value(previous, text)
    if new is None:
        return False
    out[told[-1]] = out[text] = new
    return True


def _changed(out: dict[str, str], before: Sequence[str], text: str) -> None:
    """Put ``text`` in place of the newest statement ``before`` it on its subject when it
    says the user changed ("I've gone off coffee, it's green tea now." after "I drink coffee
    every morning.", :func:`marks_change`): only the newer is handed over. On its subject:
    each relevant to the other, or the older tells a liking or habit ("My favourite fruit is
    mango." for "Nowadays I prefer lychees.", linked one way, by the kind "fruit")."""
    if not (marks_change(text) and is_statement(text)):
        return
    for old in reversed(before):
        if is_statement(old) and not is_correction(old) and old not in out and \
                relevant(text, old, attitudes=False) and mentions_user(old) and \
                (relevant(old, text, attitudes=False) or tells_habit(old)):
            out[old] = text
            return


def joined(fixed: dict[str, str], said: Sequence[str]) -> dict[str, str]:
    """``fixed`` (:func:`corrected`) with a statement that opens by pointing back ("It's in
    Swansea, right by the beach.", "She named it Custard.", :func:`goes_on`) joined to the
    statement told just before it, both mapping to the two together: neither alone says
    where the brother's house is."""
    out = dict(fixed)
    for before, text in itertools.pairwise(said):
        if not (goes_on(text) and is_statement(text) and is_statement(before)):
            continue
        if (before in fixed and fixed[before] != before) or text in fixed:
            continue  # corrected already: the correction says it
        head = out.get(before, before)
        out[before] = out[text] = f"{head.rstrip()} {text.strip()}"
        for k, v in list(out.items()):
            if v == head:
                out[k] = out[text]
    return out
