"""Recall of asks worded unlike the telling (session 13). WordNet's nouns as recall reads
them (``terrarium.store.lexicon``): the file format on a tiny WordNet of the test's own (so
the reader is tested on every machine), then the machine's WordNet (Debian's wordnet-base)
where it is installed, and recall that finds a statement by the kind of thing the ask
names; then a compound subject kept in one clause, a form word that leaves a pronoun
pointing back, and a statement opening with a clause of time or place. Every sentence is
the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from recall_helpers import notes, told

from terrarium.store import MemoryStore
from terrarium.store.asked import points_back
from terrarium.store.clauses import split
from terrarium.store.lexicon import Lexicon, kind_of, lexicon
from terrarium.store.subjects import is_statement, relevant

# a WordNet of its own: entity > object > whole > device > musical_instrument > lute; "axe"
# is a device too; "lutes" is undone by the plural rule, "geese" by noun.exc
_SYNSETS = [("entity", []), ("object", [0]), ("whole", [1]), ("device", [2]),
            ("musical_instrument", [3]), ("lute", [4]), ("axe", [3]), ("goose", [1])]


def _wordnet(folder: Path) -> Path:
    lines: list[str] = []
    offsets: list[int] = []
    at = len(b"  1 a licence header line sorts first\n")
    for name, ups in _SYNSETS:  # every pointer is 8 digits: offsets are known in advance
        offsets.append(at)
        lines.append(f"{at:08d} 03 n 01 {name} 0 {len(ups):03d}"
                     + "".join(f" @ {u:08d} n 0000" for u in ups) + " | a gloss  \n")
        at += len(lines[-1].encode())
    fixed = []
    for line, (_, ups) in zip(lines, _SYNSETS, strict=True):
        for u in ups:
            line = line.replace(f" @ {u:08d} ", f" @ {offsets[u]:08d} ", 1)
        fixed.append(line)
    data = "  1 a licence header line sorts first\n" + "".join(fixed)
    (folder / "data.noun").write_text(data)
    index = sorted(f"{name} n 1 1 @ 1 0 {offsets[i]:08d}  \n"
                   for i, (name, _) in enumerate(_SYNSETS))
    (folder / "index.noun").write_text("  1 a licence header line sorts first\n"
                                       + "".join(index))
    (folder / "noun.exc").write_text("geese goose\n")
    return folder


def test_the_reader_walks_up_the_kinds_of_its_own_small_wordnet(tmp_path: Path) -> None:
    lex = Lexicon(_wordnet(tmp_path))
    assert lex.available
    assert lex.senses("lute") and lex.senses("Lutes") == lex.senses("lute")
    assert lex.senses("geese") == lex.senses("goose")
    assert lex.senses("banjo") == ()
    assert lex.depth(lex.senses("lute")[0]) == 5
    assert kind_of("lutes", ["musical_instrument"], lex)
    assert kind_of("lute", ["lute"], lex)
    assert not kind_of("axe", ["musical_instrument"], lex)  # a sibling, not a kind
    assert not kind_of("lute", ["device"], lex)  # too near the root to tell things apart


def test_without_wordnet_nothing_is_a_kind_of_anything(tmp_path: Path) -> None:
    lex = Lexicon(tmp_path / "nowhere")
    assert not lex.available
    assert lex.senses("lute") == ()
    assert not kind_of("lute", ["instrument"], lex)


needs_wordnet = pytest.mark.skipif(not lexicon().available,
                                   reason="WordNet (Debian's wordnet-base) is not installed")


@needs_wordnet
def test_kinds_from_the_machines_wordnet() -> None:
    assert kind_of("harp", ["instrument"])
    assert kind_of("courgettes", ["vegetable"])
    assert kind_of("mackerel", ["fish"])
    assert kind_of("crimson", ["colour"])
    assert kind_of("axolotl", ["amphibian"])
    assert not kind_of("harp", ["thing"])
    assert not kind_of("boots", ["instrument"])
    assert kind_of("stepmum", ["stepmother's"])  # not in WordNet: "mum" of "mother"
    assert not kind_of("stepmum", ["stepfather"])


@needs_wordnet
def test_a_statement_is_found_by_the_kind_of_thing_the_ask_names() -> None:
    with MemoryStore() as memory:
        told(memory, "My allotment is full of courgettes this year.",
             "I spent Sunday fixing my bike.", "My aunt sent me a postcard from Malta.",
             "I fancy a quiet night in.")
        got = notes(memory, "Which vegetable do I grow?")
        assert got and "courgettes" in got[0]
    with MemoryStore() as memory:
        told(memory, "We keep an axolotl in the kitchen.", "My flat has no lift.",
             "I bought new boots yesterday.", "I love rainy days.")
        got = notes(memory, "What amphibian do we have?")
        assert got and "axolotl" in got[0]
    assert relevant("I play the oboe in a wind quintet.", "What instrument am I learning?")
    assert not relevant("I bought new boots yesterday.", "What instrument am I learning?")


def test_someone_of_the_users_and_i_is_one_subject_not_two_clauses() -> None:
    assert split("My neighbour Gwen and I share a greenhouse.") == (
        "My neighbour Gwen and I share a greenhouse",)
    assert split("My uncle and I went sailing, but he got seasick.") == (
        "My uncle and I went sailing", "he got seasick") or len(
        split("My uncle and I went sailing, but he got seasick.")) == 1
    assert len(split("My name is Tove and I fix boilers.")) == 2


def test_a_word_asking_the_kind_of_answer_leaves_the_pronoun_pointing_back() -> None:
    assert points_back("Which town is that in?")
    assert points_back("What country is it in?")
    assert not points_back("What year is it?")
    assert not points_back("What month is it now?")
    assert not points_back("What bakery is it?")  # a subject of its own


def test_a_statement_opening_with_a_clause_of_time_or_place_tells() -> None:
    assert is_statement("When I lived in Aberdeen, I delivered post by bike.")
    assert is_statement("Where we grew up there were no trains.")
    assert not is_statement("When did I start my course?")
    assert not is_statement("Where am I going on Friday")
    with MemoryStore() as memory:
        told(memory, "When I was training as a chef in Lyon, I burnt my hand.")
        got = notes(memory, "Where did I train?")
        assert got and "Lyon" in got[0]
