"""Long-term memory for creatures: an SQLite FTS5 store ranked by BM25."""

from terrarium.store.facts import MemoryHit, MemoryStore, MemoryWrite, normalize_fact
from terrarium.store.profile import UserFact, extract_facts
from terrarium.store.query import query_terms, sanitize_query

__all__ = [
    "MemoryHit",
    "MemoryStore",
    "MemoryWrite",
    "UserFact",
    "extract_facts",
    "normalize_fact",
    "query_terms",
    "sanitize_query",
]
