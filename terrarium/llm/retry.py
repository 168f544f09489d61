"""When and how long to wait before trying a failed model call again.

Retries are bounded twice, by attempt count and by total time, so a dead backend turns into
an error a user can read instead of an endless wait.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RETRYABLE_STATUS = frozenset({408, 429})


def is_retryable_status(status: int) -> bool:
    """408, 429 and every 5xx are worth another try; other 4xx are the caller's mistake."""
    return status in RETRYABLE_STATUS or 500 <= status <= 599


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds)


@dataclass(slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, capped per wait, in count and in total time."""

    max_retries: int = 4
    max_total_s: float = 60.0
    base_s: float = 0.5
    cap_s: float = 8.0
    rng: random.Random = field(default_factory=random.Random)

    def backoff(self, retry_number: int) -> float:
        """Wait before retry ``retry_number`` (1-based): half fixed, half random jitter."""
        ceiling = min(self.cap_s, self.base_s * (2 ** (retry_number - 1)))
        return ceiling * (0.5 + 0.5 * self.rng.random())

    def delay(self, retry_number: int, retry_after: float | None) -> float:
        """The server's ``Retry-After`` wins when given; otherwise our own backoff."""
        if retry_after is not None:
            return retry_after
        return self.backoff(retry_number)


__all__ = [
    "RETRYABLE_STATUS",
    "RetryPolicy",
    "is_retryable_status",
    "parse_retry_after",
]
