"""The memory store: BM25 order, hostile queries, persistence, dedupe, async twins."""

from __future__ import annotations

import itertools
import sqlite3
import threading
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from terrarium.errors import TerrariumError
from terrarium.store import MemoryStore, query_terms, sanitize_query


def _clock() -> itertools.count[float]:
    return itertools.count(1000.0, 1.0)


@pytest.fixture
def store() -> MemoryStore:
    ticks = _clock()
    return MemoryStore(":memory:", clock=lambda: next(ticks))


def test_bm25_ranks_denser_match_first(store: MemoryStore) -> None:
    long_id = store.write(
        "Yesterday the user ate an apple at lunch with colleagues in the park near work",
        creature="a",
    )
    dense_id = store.write("apple apple pie", creature="a")
    store.write("bananas are yellow", creature="a")
    store.write("cherries are red", creature="a")
    hits = store.search("apple", creature="a")
    assert [h.id for h in hits] == [dense_id, long_id]
    assert hits[0].score > hits[1].score


def test_more_matching_terms_rank_higher(store: MemoryStore) -> None:
    one = store.write("the user likes green tea", creature="a")
    both = store.write("the user likes green tea in the morning", creature="a")
    store.write("the cat sleeps", creature="a")
    store.write("the dog barks", creature="a")
    hits = store.search("tea morning", creature="a")
    assert [h.id for h in hits] == [both, one]


def test_search_filters_by_creature_and_limit(store: MemoryStore) -> None:
    for i in range(4):
        store.write(f"note {i} about rockets", creature="a")
    store.write("rockets are loud", creature="b")
    assert {h.creature for h in store.search("rockets", creature="b")} == {"b"}
    assert len(store.search("rockets", creature="a", limit=2)) == 2
    assert len(store.search("rockets", limit=10)) == 5
    assert store.search("rockets", limit=0) == []


def test_stemming_and_tags_are_searchable(store: MemoryStore) -> None:
    mid = store.write("The user owns two cats", creature="a", tags=["pets"])
    assert [h.id for h in store.search("cat")] == [mid]
    hits = store.search("pets")
    assert [h.id for h in hits] == [mid]
    assert hits[0].tags == ("pets",)


HOSTILE = [
    '"',
    '""',
    '"unbalanced',
    "(",
    ")",
    "((apple",
    "apple AND",
    "AND OR NOT",
    "apple NEAR/2 pie",
    "NEAR(apple pie, 3)",
    "*",
    "app*",
    "^apple",
    "text:apple",
    "tags:x OR",
    "-apple",
    "apple + pie",
    "{text tags}: apple",
    "'; DROP TABLE memories; --",
    "\x00apple",
    "日本語のりんご",
    "café crème",
    "🍎 apple 🍏",
    "e\u0301",
    "\u200b\u200d",
    "   ",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(store: MemoryStore, query: str) -> None:
    store.write("apple pie recipe", creature="a")
    store.write("日本語のりんご is a Japanese phrase", creature="a")
    hits = store.search(query)
    assert isinstance(hits, list)
    assert store.count() == 2  # nothing was dropped or injected


def test_function_words_do_not_match_every_fact(store: MemoryStore) -> None:
    name = store.write("Hi, my name is Ada.", creature="a")
    store.write("I love green tea in the morning.", creature="a")
    assert store.search("What is the weather like on Mars?") == []
    assert [h.id for h in store.search("What is my name?")] == [name]


def test_operators_become_plain_words(store: MemoryStore) -> None:
    mid = store.write("apple pie", creature="a")
    other = store.write("NEAR the river AND the sea", creature="a")
    # 'NEAR' is just a word now: it matches the second fact, and 'apple' matches the first.
    assert {h.id for h in store.search("apple NEAR")} == {mid, other}
    # 'AND' is a word too, but a stop word: alone it is searched, beside 'apple' it is not
    assert [h.id for h in store.search("AND")] == [other]
    assert [h.id for h in store.search("apple AND")] == [mid]
    assert [h.id for h in store.search("(apple")] == [mid]
    assert [h.id for h in store.search("text:apple*")] == [mid]
    assert [h.id for h in store.search("café")] == []
    cafe = store.write("a cafe on the corner", creature="a")
    assert [h.id for h in store.search("café")] == [cafe]  # diacritics folded


def test_empty_query_returns_nothing(store: MemoryStore) -> None:
    store.write("something", creature="a")
    assert store.search("") == []
    assert store.search("!!! ??? ...") == []
    assert sanitize_query("()*") == ""


def test_sanitize_quotes_and_ors_terms() -> None:
    assert sanitize_query('x "b" (C)') == '"x" OR "b" OR "c"'
    assert query_terms("Tea tea TEA") == ["tea"]
    assert len(query_terms(" ".join(f"w{i}" for i in range(100)))) == 32


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_is_a_valid_query(query: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    expr = sanitize_query(query)
    if expr:
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (expr,)).fetchall()


def test_dedupe_per_creature(store: MemoryStore) -> None:
    first = store.write("The user's name is Ada.", creature="a", tags=["name"])
    again = store.write_detailed("  the user's   NAME is ada. ", creature="a", tags=["person"])
    assert again.id == first and again.created is False
    assert store.count(creature="a") == 1
    (hit,) = store.search("Ada")
    assert hit.tags == ("name", "person")  # tags merged
    assert hit.text == "The user's name is Ada."  # first wording kept
    other = store.write("The user's name is Ada.", creature="b")
    assert other != first
    assert store.count() == 2
    # the merged tags are searchable through the FTS index
    assert [h.id for h in store.search("person")] == [first]


def test_empty_fact_refused(store: MemoryStore) -> None:
    with pytest.raises(TerrariumError, match="empty"):
        store.write("  \n ", creature="a")


def test_recent_and_count(store: MemoryStore) -> None:
    ids = [store.write(f"fact {i}", creature="a" if i % 2 else "b") for i in range(5)]
    assert [h.id for h in store.recent(3)] == ids[::-1][:3]
    assert [h.id for h in store.recent(10, creature="a")] == [ids[3], ids[1]]
    assert store.count() == 5 and store.count(creature="b") == 3


def test_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "memory.sqlite"
    with MemoryStore(path) as s1:
        mid = s1.write("The user lives in Lisbon", creature="router", source="turn-3")
    with MemoryStore(path) as s2:
        assert s2.count() == 1
        (hit,) = s2.search("Lisbon", creature="router")
        assert hit.id == mid and hit.source == "turn-3"
        # dedupe holds across runs too
        assert s2.write("the user lives in lisbon", creature="router") == mid
        s2.write("The user likes jazz", creature="router")
    with MemoryStore(str(path)) as s3:
        assert s3.count() == 2


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "junk.sqlite"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(TerrariumError, match="could not be opened"):
        MemoryStore(bad)


def test_threads_share_one_store_safely(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.sqlite")

    def worker(n: int) -> None:
        for i in range(25):
            store.write(f"worker {n} fact {i}", creature=f"c{n}")
            store.search(f"fact {i}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count() == 100


def test_async_twins(store: MemoryStore) -> None:
    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(10):
                tg.start_soon(lambda i=i: store.awrite(f"async fact {i}", creature="a"))
        assert await store.acount(creature="a") == 10
        hits = await store.asearch("fact", limit=3)
        assert len(hits) == 3
        assert len(await store.arecent(4)) == 4

    anyio.run(main)
