"""Turn arbitrary model text into a safe FTS5 MATCH expression.

A model's search string may contain quotes, parentheses, ``AND``/``OR``/``NEAR``, ``*``,
column filters (``text:``) or stray unicode. Any of those passed to MATCH verbatim can raise
an FTS5 syntax error, so we keep only word characters, quote each term (which makes
operators literal words) and OR the terms together so a fact matching any of them is found
and BM25 ranks facts matching more of them higher.
"""

from __future__ import annotations

import re

# Word runs in any script; underscores split words the same way the unicode61 tokenizer does.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

MAX_TERMS = 32
"""Bound on OR-ed terms so a pasted essay cannot make a pathological query."""

STOP_WORDS = frozenset("""
a an the and or but if so than then of to in on at by for from with about as into over
is am are was were be been being do does did have has had will would can could shall
should may might must i me you he she it we they them him her us its what which who whom
how why when where that this these those there here not no yes just very too also some
any all please
""".split())
"""English function words: OR-ed into a query they match nearly every fact, so they are
left out (unless the query has nothing else)."""


def query_terms(text: str) -> list[str]:
    """The distinct search terms of ``text``, in first-seen order, casefolded."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        term = match.group(0).casefold()
        if term not in seen:
            seen[term] = None
    content = [t for t in seen if t not in STOP_WORDS] or list(seen)
    return content[:MAX_TERMS]


def sanitize_query(text: str) -> str:
    """An FTS5 expression that cannot fail to parse; ``""`` when there is nothing to search."""
    # Terms hold only word characters, so wrapping them in double quotes needs no escaping.
    return " OR ".join(f'"{term}"' for term in query_terms(text))


__all__ = [
    "MAX_TERMS",
    "STOP_WORDS",
    "query_terms",
    "sanitize_query",
]
