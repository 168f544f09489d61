"""Long-term memory for creatures: an SQLite FTS5 store ranked by BM25."""

from terrarium.memory.query import query_terms, sanitize_query
from terrarium.memory.store import MemoryHit, MemoryStore, MemoryWrite, normalize_fact

__all__ = [
    "MemoryHit",
    "MemoryStore",
    "MemoryWrite",
    "normalize_fact",
    "query_terms",
    "sanitize_query",
]
