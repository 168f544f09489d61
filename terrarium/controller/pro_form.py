"""The user's own verb phrase said back as "do that" (issue 30, session 22).

"Is it okay to put hot soup straight into the freezer?" is answered "Yes, it is okay to
put hot soup straight into the freezer.": once the voice has "Yes, it is okay to", no end
is left that says no echo. English has a word for an action just named: "Yes, it is okay to
do that." The same holds after a modal ("Yes, you can freeze cooked rice." -> "Yes, you can
do that.") and where the action is a sentence's subject ("The best way to cook rice is to
boil it." -> "The best way to do that is to boil it."). :func:`do_that` puts "do that" in
place of a run of the user's words that the user said as an action (after their "to", a
modal, or "I" / "you" / "we"), where the reply says it as one too; the rest of the reply is
kept. It is the guard's last resort before it speaks an echo on or drops a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from terrarium.controller.reply_words import LETTER_WORD, NOT_WORDS
from terrarium.store.subjects import stem

__all__ = ["do_that", "said_as_it"]

_MODALS = frozenset("""can could should would will may might must can't cannot couldn't
shouldn't wouldn't won't mustn't""".split())
_SUBJECTS = frozenset({"i", "you", "we"})  # "Can I freeze ...": the action after them
_GRAMMAR = frozenset("""a an the this that these those my your his her its our their some any
of to in on at for with from into by about as and or but is are was were be been being am
do does did it they them i you we me us he she him""".split())
_STATIVE = frozenset("""need have has had know like love want be seem own mean believe prefer
cost weigh contain include deserve matter understand remember""".split())  # no "do that"
_NOT_VERBS = _GRAMMAR | _STATIVE | frozenset({"not", "never", "very", "really", "so", "too",
                                              "also"})
_TO_PLACES = frozenset("""go goes going went come comes came listen listens listening talk
talks talking speak speaks speaking belong belongs next close due according compared similar
back""".split())  # "listen to music": a preposition's "to", no action follows


def _actions(user: str) -> set[str]:
    """Stems of the words the user said as an action's verb: after "to" (not after a verb
    of motion or listening), a modal, or "I" / "you" / "we"."""
    ws = [w.lower() for w in LETTER_WORD.findall(user)]
    out: set[str] = set()
    for i in range(1, len(ws)):
        before, word = ws[i - 1], ws[i]
        if word in _NOT_VERBS:
            continue
        if before in _MODALS or before in _SUBJECTS or _infinitive(ws, i):
            out.add(stem(word))
    return out


def _infinitive(ws: Sequence[str], i: int) -> bool:
    """Whether word ``i`` of ``ws`` (lower case) follows an infinitive's "to", not a
    preposition's ("go to", "listen to")."""
    return i >= 1 and ws[i - 1] == "to" and (i < 2 or ws[i - 2] not in _TO_PLACES)


def do_that(text: str, spoken: int, user: str, fine: Callable[[str], bool]) -> str | None:
    """What follows ``text[:spoken]`` (given to the voice already) when a run of the user's
    words past ``spoken``, said as an action (its first word one the user said after "to", a
    modal or "I" / "you" / "we", and here after "to" or a modal and any "not"), is said as
    "do that" instead, and the sentence is ``fine`` (the guard's checks: no echo, nothing
    wrong). The run holds at least two of the user's words that are no words of grammar
    and ends at the last of the user's words before one of the reply's own. The earliest
    run that makes a fine sentence wins; None when none does."""
    actions = _actions(user)
    if not actions:
        return None
    ws, theirs = list(LETTER_WORD.finditer(text)), _theirs(user)
    lower = [w.group().lower() for w in ws]
    for i in range(1, len(ws)):
        if ws[i].start() < spoken or not _said_as_action(lower, i, actions):
            continue
        said = _replaced(text, ws, lower, i, theirs)
        if said is not None and fine(said):
            return said[spoken:]
    return None


def _said_as_action(lower: Sequence[str], i: int, actions: set[str]) -> bool:
    """Whether word ``i`` is one of the user's ``actions`` said here as one too: after "to"
    or a modal (and any "not")."""
    before = lower[i - 1] if lower[i - 1] not in NOT_WORDS or i < 2 else lower[i - 2]
    return stem(lower[i]) in actions and (before in _MODALS or _infinitive(lower, i))


def _theirs(user: str) -> set[str]:
    """The stems of the user's words, and the determiners a reply says in their place."""
    return {stem(w) for w in LETTER_WORD.findall(user.lower())} | {"your", "the", "a", "an"}


def _replaced(text: str, ws: Sequence[re.Match[str]], lower: Sequence[str], i: int,
              theirs: set[str], by: str = "do that") -> str | None:
    """``text`` with its run of the user's words from word ``i`` said as ``by``; None
    when the run holds fewer than two of their words that are no words of grammar, or
    ends in words of grammar (the phrase goes on in the reply's own words)."""
    end, content, k = i, 0, i
    while k < len(ws) and (stem(lower[k]) in theirs or lower[k] in theirs):
        if k > i and text[ws[k - 1].end():ws[k].start()].strip():
            break  # a comma or a stop ends the action
        if lower[k] not in _GRAMMAR:
            content, end = content + 1, k
        k += 1
    if content < 2 or end + 1 < k:
        return None  # its last words lead on into the reply's own ("into the fridge")
    return text[:ws[i].start()] + by + text[ws[end].end():]


def said_as_it(text: str, spoken: int, user: str, fine: Callable[[str], bool]) -> str | None:
    """What follows ``text[:spoken]`` when the voice has the user's action's verb already
    (the last word it has, after "to" or a modal as :func:`do_that` asks) and the reply goes
    on with the rest of their words: that run said as "it" ("them" for a plural: "Yes, you
    can use baking soda instead of baking powder." heard up to "use" -> "Yes, you can use
    it."), the sentence's other words kept, when the sentence is ``fine``; None otherwise."""
    actions = _actions(user)
    ws = list(LETTER_WORD.finditer(text))
    heard = [k for k, w in enumerate(ws) if w.start() < spoken]
    if not actions or not heard or heard[-1] + 1 >= len(ws):
        return None
    lower = [w.group().lower() for w in ws]
    i = heard[-1]  # the verb, the voice's last word
    if i < 1 or lower[i] in _PLACING or lower[i + 1] in _NO_OBJECT or not _said_as_action(
            lower, i, actions):
        return None  # "stop | for a break": no object to say as "it"
    said = _replaced(text, ws, lower, i + 1, _theirs(user), _object(lower[i + 1:]))
    return said[spoken:] if said is not None and fine(said) else None


_NO_OBJECT = frozenset("""for to in on at with from into onto by about before after during
until of off up out down over under through around away back""".split())
"""A preposition or a particle after the verb: what follows is no object ("stop for a break")."""
_PLACING = frozenset("put puts place places set sets lay lays".split())
"""Verbs that need their place said too: "okay to put it" leaves out where."""


def _object(rest: Sequence[str]) -> str:
    """"them" when the object's first word of content is a plural ("tomatoes"), else "it"."""
    word = next((w for w in rest if w not in _GRAMMAR), "")
    return "them" if word.endswith("s") and not word.endswith(("ss", "us", "is")) else "it"
