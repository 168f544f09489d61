"""Asking the model again when a reply's rest would copy the user (issue 30).

A spoken reply's first sentence is let through from its start (``ReplyGuard``'s
``release_first_clause``); when its rest then restates the user's words and the guard has
no clause end to stop at and no phrase to leave out, the guard asks for this instead of
speaking the copy: the same request continued from what was spoken (an assistant prefill),
with ``logit_bias`` against the tokens that would carry the copy on: the user's content
words not yet said, with and without a space before them and capitalised. Never function
words (the reply needs them to be a sentence), never the words of what was recalled for
the turn (the answer may need them), never the words already spoken (they repeat nothing
more). The new continuation goes through the same guard.

Banned its way on, SmolLM2-135M may go round instead ("To determine how long homemade" went
on "homemade homemade", a loop the guard stops mid-sentence: half a sentence spoken; "Yes,
it is okay to" went on with a clause and then the same clause again), so the request also
carries a ``presence_penalty`` (``PRESENCE``; llama.cpp counts the prompt's last tokens too,
the user's words and the prefill): on probe21's three such turns, with it all three were
whole sentences that repeat nothing (session 21).
"""

from __future__ import annotations

from collections.abc import Iterable

from terrarium.controller.guard_loops import is_function
from terrarium.controller.reply_words import words
from terrarium.llm.types import ChatMessage, ChatRequest

__all__ = ["BIAS", "MIN_PIECE", "PRESENCE", "banned_words", "bias_against", "request_again"]

BIAS = -100.0
"""The bias on a banned token (OpenAI's range ends at -100: in effect never sampled)."""

PRESENCE = 1.0
"""The asked-again request's ``presence_penalty`` (OpenAI's range is -2 to 2)."""

MIN_PIECE = 4
"""A word of several tokens is banned by its first token only when that token holds at
least this many letters (" Cact" of " Cactus"); a shorter first piece (" C", " Am") starts
many other words, which would all be banned with it."""


def banned_words(user: str, spoken: str, recalled: str = "") -> list[str]:
    """The user's words the continuation must not write: their content words (not words of
    grammar), less those already spoken and those of what was recalled for the turn, in
    the user's order, once each."""
    keep = set(words(spoken)) | set(words(recalled))
    out: list[str] = []
    for w in words(user):
        if w not in keep and not is_function(w) and w not in out:
            out.append(w)
    return out


async def bias_against(model: object, banned: Iterable[str]) -> dict[int, float]:
    """``logit_bias`` against ``banned`` words in the model's own tokens (its
    ``token_pieces``): each word as it is and capitalised, with and without a space before
    it; a form of one token is banned whole, one of several by its first token when that
    is long enough to name the word (``MIN_PIECE``)."""
    pieces = getattr(model, "token_pieces", None)
    if pieces is None:
        return {}
    texts = [text for word in banned for form in dict.fromkeys((word, word.capitalize()))
             for text in (f" {form}", form)]
    bias: dict[int, float] = {}
    for tokens in await pieces(texts) if texts else []:  # one request for all of them
        if len(tokens) == 1 or (tokens and sum(c.isalpha() for c in tokens[0][1])
                                >= MIN_PIECE):
            bias[tokens[0][0]] = BIAS
    return bias


def request_again(request: ChatRequest, spoken: str, bias: dict[int, float]) -> ChatRequest:
    """``request`` continued from ``spoken`` (an assistant prefill in place of any the
    request had), steered by ``bias`` and kept from going round (``PRESENCE``)."""
    messages = list(request.messages)
    if messages and messages[-1].role == "assistant":
        messages.pop()
    messages.append(ChatMessage(role="assistant", content=spoken))
    return request.model_copy(update={"messages": messages, "logit_bias": bias or None,
                                      "presence_penalty": PRESENCE})
