"""Arithmetic over :class:`~terrarium.llm.types.Usage`: one figure from two model calls."""

from __future__ import annotations

from terrarium.llm.types import Usage

__all__ = ["joined_usage"]


def joined_usage(first: Usage | None, second: Usage | None) -> Usage | None:
    """One round's usage over a paused stream and its continuation.

    The continuation's prompt repeats the first call's prompt plus the reply so far, so the
    round reports the first call's prompt, all the output, and the work both calls did.
    """
    if first is None or second is None:
        return second or first

    def add(a: float | None, b: float | None) -> float | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    known = first.prompt_tokens > 0  # a server without per-token timings reports nothing
    prompt_n = add(first.prompt_n, second.prompt_n)
    return Usage(
        prompt_tokens=(first.prompt_tokens if known
                       else max(0, second.prompt_tokens - first.completion_tokens)),
        cached_tokens=(first.cached_tokens if known
                       else max(0, second.cached_tokens - first.completion_tokens)),
        completion_tokens=first.completion_tokens + second.completion_tokens,
        prompt_n=None if prompt_n is None else int(prompt_n),
        prompt_ms=add(first.prompt_ms, second.prompt_ms),
        predicted_ms=add(first.predicted_ms, second.predicted_ms),
        ttft_ms=first.ttft_ms if first.ttft_ms is not None else second.ttft_ms,
        total_ms=add(first.total_ms, second.total_ms),
        attempts=first.attempts + second.attempts,
    )
