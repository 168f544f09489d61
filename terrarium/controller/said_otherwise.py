"""The rest of a sentence the voice has begun, said otherwise when it would repeat the user.

The reply guard gives the voice a released sentence's first piece and holds the rest to the
sentence's end (:mod:`.piece_watch`). A rest that would make the sentence an echo, with no
clause end to stop at, is said in the first of these forms that passes the guard's checks:
without a phrase of the user's own words (:func:`~.clause_end.without_phrase`), short after
its yes or no (:mod:`.yes_no_end`), with "do that" for the action the user named, or, its
verb heard already, with "it" for what they named (:mod:`.pro_form`); with none, it is
spoken on as the model wrote it.
"""

from __future__ import annotations

from collections.abc import Callable

from terrarium.controller.clause_end import without_phrase
from terrarium.controller.pro_form import do_that, said_as_it
from terrarium.controller.reply_words import words
from terrarium.controller.yes_no_end import yes_no_end

__all__ = ["LEFT_OUT", "said_otherwise"]

LEFT_OUT = "without a phrase that repeats the user"  # how it was said: the guard's notices


def said_otherwise(text: str, given: int, back: str, user: str, fine: Callable[[str], bool],
                   *, echo: bool) -> tuple[str, str] | None:
    """What follows ``text[:given]`` (the voice's) in place of the rest of ``text``, and how
    it was said; None when no form will do. ``back``: words past the voice's first piece
    kept back from it, which no phrase left out starts in (a phrase was never left out of
    them while the voice had them) but the short forms may replace. ``echo``: the whole
    sentence repeats the user (the short forms are for that only)."""
    rest = without_phrase(text, given + len(back), words(user), fine)
    if rest is not None:
        return back + rest, LEFT_OUT
    if not echo:
        return None
    rest = yes_no_end(text, given, fine)  # "No, you don't."
    if rest is not None:
        return rest, "short, a yes or no"
    rest = do_that(text, given, user, fine)  # "Yes, it is okay to do that."
    if rest is not None:
        return rest, "with 'do that' for the action the user named"
    rest = said_as_it(text, given, user, fine)  # "Yes, you can use it." (the verb heard)
    return None if rest is None else (rest, "with 'it' for what the user named")
