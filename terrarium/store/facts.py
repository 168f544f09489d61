"""The memory store: facts creatures keep, found again by SQLite FTS5 with BM25 ranking.

Why SQLite FTS5: it ships with Python, ranks with BM25 out of the box, and one file both
persists memories across runs (``--resume``) and survives a crash (WAL journal).

Threading: one connection per store, opened with ``check_same_thread=False`` and guarded by
a ``threading.Lock``. The plain methods (``write``, ``search``, ...) block briefly, so code
on the event loop calls the ``a``-prefixed twins (``awrite``, ``asearch``, ...). They run
the method right there while the store answers fast, and in a worker thread
(``anyio.to_thread.run_sync``) once it does not: a run's store answers a search in ~0.2 ms,
while the hop to a worker thread and back cost 1.5 ms (median) to 6 ms (p90) on a busy
2-core machine, and a voice turn makes half a dozen of them before its reply can start
(issue 29). ``INLINE_SLOW_MS`` and ``INLINE_SLOW_CALLS`` say when a store is slow (a big
file, a slow disk: WAL commits with ``synchronous=NORMAL`` do not wait for the disk). The
lock makes concurrent calls from several threads or tasks safe.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Literal, TypeVar

import anyio.to_thread
from pydantic import BaseModel, ConfigDict

from terrarium.errors import TerrariumError
from terrarium.store.query import sanitize_query

SCHEMA_VERSION = 1
_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY,
    creature TEXT NOT NULL,
    text TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    source TEXT,
    ts REAL NOT NULL,
    fingerprint TEXT NOT NULL,
    UNIQUE (creature, fingerprint)
);
CREATE INDEX IF NOT EXISTS memories_by_ts ON memories (ts, id);
CREATE INDEX IF NOT EXISTS memories_by_creature_ts ON memories (creature, ts, id);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    text, tags, content='memories', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text, tags)
    VALUES ('delete', old.id, old.text, old.tags);
END;
CREATE TABLE IF NOT EXISTS memory_vectors (
    id INTEGER PRIMARY KEY,
    vec BLOB NOT NULL
);
CREATE TRIGGER IF NOT EXISTS memories_vec_ad AFTER DELETE ON memories BEGIN
    DELETE FROM memory_vectors WHERE id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text, tags)
    VALUES ('delete', old.id, old.text, old.tags);
    INSERT INTO memories_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags);
END;
"""

# BM25 column weights: a word in the fact itself counts more than the same word as a tag.
_TEXT_WEIGHT = 1.0
_TAGS_WEIGHT = 0.5

_SPACES = re.compile(r"\s+")


class MemoryHit(BaseModel):
    """One remembered fact; ``score`` is the negated BM25 rank, so higher is better."""

    model_config = ConfigDict(frozen=True)

    id: int
    text: str
    score: float
    ts: float
    creature: str
    tags: tuple[str, ...] = ()
    source: str | None = None


class MemoryWrite(BaseModel):
    """What a write did: the fact's id and whether it was new (False: already known)."""

    model_config = ConfigDict(frozen=True)

    id: int
    created: bool


def normalize_fact(text: str) -> str:
    """The text as stored: surrounding space trimmed, inner runs of whitespace collapsed."""
    return _SPACES.sub(" ", text).strip()


def _fingerprint(text: str) -> str:
    """Identity of a fact for deduplication: case and spacing do not make a new fact."""
    return hashlib.sha256(normalize_fact(text).casefold().encode("utf-8")).hexdigest()


def _clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({t.strip() for t in tags if t.strip()}))


INLINE_SLOW_MS = 5.0
"""A call on the event loop slower than this counts as slow ..."""
INLINE_SLOW_CALLS = 3
"""... and this many slow calls in a row move the store's calls to a worker thread."""


class MemoryStore:
    """Facts per creature, full-text searchable; a file path persists them across runs."""

    inline: bool = True  # the async twins run on the event loop (see the module docstring)
    _slow_calls: int = 0

    def __init__(
        self,
        path: Path | str | Literal[":memory:"] = ":memory:",
        *,
        clock: Callable[[], float] = time.time,
        lazy: bool = False,
    ) -> None:
        """``lazy``: open the file on first use, not now. A run makes a store for every
        creature that might remember; most turns of most teams never touch it, and an
        SQLite file opened and closed costs milliseconds a load (``terrarium serve``
        loads sessions all the time). A file that cannot be opened is then refused at
        first use, with the same error."""
        self._clock = clock
        self._lock = threading.Lock()
        self._opening = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if str(path) == ":memory:":
            self.path: Path | None = None
        else:
            self.path = Path(path)
        if not lazy:
            self._open()

    @property
    def opened(self) -> bool:
        """Whether the store's file is open (a lazy store opens it on first use)."""
        return self._db is not None

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._db if self._db is not None else self._open()

    def _open(self) -> sqlite3.Connection:
        with self._opening:
            if self._db is not None:
                return self._db
            target = ":memory:" if self.path is None else str(self.path)
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
                if self.path is not None:
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=NORMAL")
                self._migrate(conn)
            except sqlite3.DatabaseError as exc:
                raise TerrariumError(
                    f"The memory store at {target} could not be opened: {exc}.",
                    suggestion="Check that the file is a terrarium memory database, or move "
                    "it away.",
                ) from exc
            self._db = conn
            return conn

    @staticmethod
    def _migrate(conn: sqlite3.Connection) -> None:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise TerrariumError(
                f"The memory store was written by a newer terrarium (schema {version}, "
                f"this one knows {SCHEMA_VERSION})."
            )
        with conn:
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock, self._opening:
            if self._db is not None:
                self._db.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------------

    def write(
        self,
        text: str,
        *,
        creature: str,
        tags: Iterable[str] = (),
        source: str | None = None,
    ) -> int:
        """Remember ``text`` for ``creature``; an identical fact returns its existing id."""
        return self.write_detailed(text, creature=creature, tags=tags, source=source).id

    def write_detailed(
        self,
        text: str,
        *,
        creature: str,
        tags: Iterable[str] = (),
        source: str | None = None,
    ) -> MemoryWrite:
        """Like :meth:`write`, also saying whether the fact was new.

        A repeated fact keeps its id and first timestamp; new tags are merged into it.
        """
        fact = normalize_fact(text)
        if not fact:
            raise TerrariumError("A memory must have some text; an empty fact was not stored.")
        new_tags = _clean_tags(tags)
        fp = _fingerprint(fact)
        with self._lock, self._conn:
            row = self._conn.execute(
                "SELECT id, tags, source FROM memories WHERE creature = ? AND fingerprint = ?",
                (creature, fp),
            ).fetchone()
            if row is not None:
                mem_id, old_json, old_source = row
                if source is not None and old_source == source:
                    # the same write again (a turn re-run after a crash): report it as it was
                    return MemoryWrite(id=mem_id, created=True)
                merged = _clean_tags([*json.loads(old_json), *new_tags])
                if merged != tuple(json.loads(old_json)):
                    self._conn.execute(
                        "UPDATE memories SET tags = ? WHERE id = ?",
                        (json.dumps(list(merged)), mem_id),
                    )
                return MemoryWrite(id=mem_id, created=False)
            cur = self._conn.execute(
                "INSERT INTO memories (creature, text, tags, source, ts, fingerprint)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (creature, fact, json.dumps(list(new_tags)), source, self._clock(), fp),
            )
            assert cur.lastrowid is not None
            return MemoryWrite(id=cur.lastrowid, created=True)

    # -- reading ---------------------------------------------------------------------------

    def search(self, query: str, *, limit: int = 5, creature: str | None = None,
               source: str | None = None) -> list[MemoryHit]:
        """Facts matching any word of ``query``, best BM25 first; ``[]`` for an empty query.

        ``query`` may be any text: it is reduced to quoted words OR-ed together, so it
        cannot raise an FTS syntax error. ``creature=None`` searches every creature's facts;
        ``source`` keeps only facts written with that source (e.g. the user's own facts).
        """
        expr = sanitize_query(query)
        if not expr or limit <= 0:
            return []
        sql = (
            "SELECT m.id, m.text, bm25(memories_fts, ?, ?) AS rank, m.ts, m.creature,"
            " m.tags, m.source"
            " FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid"
            " WHERE memories_fts MATCH ?"
        )
        params: list[object] = [_TEXT_WEIGHT, _TAGS_WEIGHT, expr]
        if creature is not None:
            sql += " AND m.creature = ?"
            params.append(creature)
        if source is not None:
            sql += " AND m.source = ?"
            params.append(source)
        sql += " ORDER BY rank, m.id LIMIT ?"
        params.append(limit)
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [self._hit(r, score=-r[2]) for r in rows]

    def recent(self, limit: int = 10, *, creature: str | None = None) -> list[MemoryHit]:
        """The newest facts first (score 0); for showing what a creature knows lately."""
        sql = "SELECT id, text, 0.0, ts, creature, tags, source FROM memories"
        params: list[object] = []
        if creature is not None:
            sql += " WHERE creature = ?"
            params.append(creature)
        sql += " ORDER BY ts DESC, id DESC LIMIT ?"
        params.append(max(limit, 0))
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [self._hit(r, score=0.0) for r in rows]

    def put_vectors(self, vectors: Sequence[tuple[int, bytes]]) -> None:
        """Keep each ``(record id, vector)`` (what the record means, ``store/meaning.py``)
        beside its record, in place of any before it: one transaction for them all."""
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO memory_vectors (id, vec) VALUES (?, ?)", vectors)

    def vectors(self, *, creature: str, limit: int = 500
                ) -> list[tuple[int, str, bytes | None]]:
        """``creature``'s newest ``limit`` records (id, text, vector or None), newest first."""
        with self._lock:
            return self._conn.execute(
                "SELECT m.id, m.text, v.vec FROM memories AS m"
                " LEFT JOIN memory_vectors AS v ON v.id = m.id WHERE m.creature = ?"
                " ORDER BY m.ts DESC, m.id DESC LIMIT ?", (creature, max(limit, 0))).fetchall()

    def count(self, *, creature: str | None = None) -> int:
        """How many distinct facts are stored (for one creature, or all)."""
        with self._lock:
            if creature is None:
                (n,) = self._conn.execute("SELECT count(*) FROM memories").fetchone()
            else:
                (n,) = self._conn.execute(
                    "SELECT count(*) FROM memories WHERE creature = ?", (creature,)
                ).fetchone()
        return int(n)

    @staticmethod
    def _hit(row: tuple[object, ...], *, score: float) -> MemoryHit:
        mem_id, text, _rank, ts, creature, tags_json, source = row
        return MemoryHit(
            id=mem_id,
            text=text,
            score=score,
            ts=ts,
            creature=creature,
            tags=tuple(json.loads(str(tags_json))),
            source=source,
        )

    # -- async twins for the event loop ------------------------------------------------------

    async def _call(self, call: Callable[[], _T]) -> _T:
        """``call()`` on the event loop while the store is fast, else in a worker thread."""
        if not self.inline:
            return await anyio.to_thread.run_sync(call)
        start = time.perf_counter()
        try:
            return call()
        finally:
            if (time.perf_counter() - start) * 1000 > INLINE_SLOW_MS:
                self._slow_calls += 1
                if self._slow_calls >= INLINE_SLOW_CALLS:
                    self.inline = False  # from now on the loop never waits for this store
            else:
                self._slow_calls = 0

    async def awrite(
        self,
        text: str,
        *,
        creature: str,
        tags: Iterable[str] = (),
        source: str | None = None,
    ) -> MemoryWrite:
        """:meth:`write_detailed`, never blocking the event loop for long (see :meth:`_call`)."""
        return await self._call(partial(
            self.write_detailed, text, creature=creature, tags=tuple(tags), source=source))

    async def asearch(
        self, query: str, *, limit: int = 5, creature: str | None = None,
        source: str | None = None,
    ) -> list[MemoryHit]:
        """:meth:`search`, as :meth:`awrite`."""
        return await self._call(partial(self.search, query, limit=limit, creature=creature,
                                        source=source))

    async def arecent(self, limit: int = 10, *, creature: str | None = None) -> list[MemoryHit]:
        """:meth:`recent`, as :meth:`awrite`."""
        return await self._call(partial(self.recent, limit, creature=creature))

    async def aput_vectors(self, vectors: Sequence[tuple[int, bytes]]) -> None:
        """:meth:`put_vectors`, as :meth:`awrite`."""
        await self._call(partial(self.put_vectors, vectors))

    async def avectors(self, *, creature: str, limit: int = 500
                       ) -> list[tuple[int, str, bytes | None]]:
        """:meth:`vectors`, as :meth:`awrite`."""
        return await self._call(partial(self.vectors, creature=creature, limit=limit))

    async def acount(self, *, creature: str | None = None) -> int:
        """:meth:`count`, as :meth:`awrite`."""
        return await self._call(partial(self.count, creature=creature))


__all__ = [
    "SCHEMA_VERSION",
    "MemoryHit",
    "MemoryStore",
    "MemoryWrite",
    "normalize_fact",
]
