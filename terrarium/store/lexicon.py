"""What kind of thing a word names, from WordNet's nouns: "piano" is a musical instrument,
"blue" a colour, "tortoise" a reptile, "sister" a sibling, and "son" and "boy" name one
thing. Recall uses it to find the statement that answers an ask worded by the kind of
thing ("What instrument do I teach?" after "I give piano lessons."), which no word list
fitted to seen phrasings covers.

The data is WordNet 3.0 as Debian's ``wordnet-base`` installs it (``/usr/share/wordnet``:
``index.noun``, ``data.noun``, ``noun.exc``; scripts/setup.sh installs it). Nothing is
loaded up front: a word is found by a binary search of the sorted ``index.noun`` through
``mmap`` and a synset read at its byte offset in ``data.noun`` (the format's own design),
each answer cached, so the first use costs no load time and a turn a few hundred
look-ups of microseconds. Without the files every question here answers "no": recall then
works by its words and categories alone, as before.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterable
from functools import lru_cache
from os.path import commonprefix
from pathlib import Path

__all__ = ["KIND_STEPS", "MIN_KIND_DEPTH", "TOLD_SENSES", "WORDNET", "Lexicon",
           "defined_by", "defines", "glossed_as", "kind_of", "lexicon"]

WORDNET = Path("/usr/share/wordnet")
"""Where Debian's ``wordnet-base`` puts WordNet 3.0's database files."""

KIND_STEPS = 8
"""How many hypernym steps up from a word its kind may be ("gecko" → lizard → saurian →
diapsid → reptile → vertebrate → chordate → animal is seven; "piano" → keyboard
instrument → musical instrument two). Further up, kinds are too general to tell one
statement from another."""

MIN_KIND_DEPTH = 4
"""A kind must be at least this many steps below WordNet's root ("entity"): "thing",
"object" and "whole" are kinds of almost everything."""

_OF = frozenset("""that which who whom whose where when of in on at for from with by to as
into than before after about under over""".split())
"""The words after which a definition says what its thing is of, or for ("a woman's surname
before marriage")."""

_RULES = (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y"), ("s", ""))
"""WordNet's own rules for a noun's plural (morphy)."""


class Lexicon:
    """WordNet's nouns in ``folder``; every look-up is "none" when its files are missing."""

    def __init__(self, folder: Path = WORDNET) -> None:
        self.folder = folder
        self._index: mmap.mmap | None = None
        self._data: mmap.mmap | None = None
        self._exc: dict[str, str] | None = None
        self._opened = False
        self.senses = lru_cache(maxsize=8192)(self._senses)
        self.hypernyms = lru_cache(maxsize=16384)(self._hypernyms)
        self.above = lru_cache(maxsize=8192)(self._above)
        self.depth = lru_cache(maxsize=4096)(self._depth)
        self.gloss = lru_cache(maxsize=4096)(self._gloss)
        self.genus = lru_cache(maxsize=4096)(self._genus)

    @property
    def available(self) -> bool:
        """Whether the WordNet files are there."""
        self._open()
        return self._index is not None

    def _open(self) -> None:
        if self._opened:
            return
        self._opened = True
        try:
            with (self.folder / "index.noun").open("rb") as f:
                self._index = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            with (self.folder / "data.noun").open("rb") as f:
                self._data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            exc = (self.folder / "noun.exc").read_text(encoding="latin-1")
            self._exc = dict(ln.split()[:2] for ln in exc.splitlines() if len(ln.split()) > 1)
        except (OSError, ValueError):
            self._index = self._data = None

    def _line(self, key: bytes) -> bytes | None:
        """The line of ``index.noun`` for lemma ``key`` (binary search on the sorted file)."""
        index = self._index
        if index is None:
            return None
        lo, hi = 0, len(index)
        while lo < hi:
            mid = (lo + hi) // 2
            start = index.rfind(b"\n", 0, mid) + 1
            end = index.find(b"\n", start)
            end = len(index) if end < 0 else end
            line = index[start:end]
            lemma = line.split(b" ", 1)[0]
            if line.startswith(b" ") or lemma < key:  # the licence header sorts first
                lo = end + 1
            elif lemma > key:
                hi = start
            else:
                return line
        return None

    def _senses(self, word: str) -> tuple[int, ...]:
        """The synset offsets of ``word`` as a noun (its plural undone), most used first."""
        self._open()
        w = re.sub(r"'s$", "", word.lower()).strip("'").replace(" ", "_")
        if not w.isascii() or not w or self._index is None:
            return ()
        tries = [w]
        if self._exc and w in self._exc:
            tries.append(self._exc[w])
        tries += [w[: -len(a)] + b for a, b in _RULES if w.endswith(a) and len(w) > len(a) + 2]
        for t in tries:
            line = self._line(t.encode())
            if line is not None:
                fields = line.split()
                count = int(fields[2])
                return tuple(int(x) for x in fields[-count:])
        return ()

    def _hypernyms(self, offset: int) -> tuple[int, ...]:
        """The synsets one step up from ``offset`` (hypernyms, and the kind of an instance)."""
        data = self._data
        if data is None:
            return ()
        end = data.find(b"\n", offset)
        fields = data[offset:end if end >= 0 else len(data)].split(b" | ")[0].split()
        words = int(fields[3], 16)
        at = 4 + 2 * words
        pointers = int(fields[at])
        out: list[int] = []
        for i in range(pointers):
            symbol, target, pos = fields[at + 1 + 4 * i: at + 4 + 4 * i]
            if symbol in (b"@", b"@i") and pos == b"n":
                out.append(int(target))
        return tuple(out)

    def _gloss(self, offset: int) -> frozenset[str]:
        """The words of the definition of synset ``offset`` (lower case, a plural undone):
        "niece" -> "a daughter of your brother or sister"."""
        said = self._definition(offset)
        return frozenset(_singular(w) for w in re.findall(r"[a-z]+", said.lower()))

    def _definition(self, offset: int) -> str:
        """The definition of synset ``offset``, up to its first example ("" without the
        data files)."""
        data = self._data
        if data is None:
            return ""
        end = data.find(b"\n", offset)
        line = data[offset:end if end >= 0 else len(data)].decode("latin-1")
        return line.split(" | ", 1)[1].split(";")[0] if " | " in line else ""

    def _genus(self, offset: int) -> frozenset[str]:
        """The words of the definition of synset ``offset`` before what it is said of (its
        first preposition or relative word): the kind of thing it is ("the Romance language
        spoken in Portugal" -> the, romance, language, spoken; "the name that precedes the
        surname" -> the, name)."""
        said = self._definition(offset)
        words: list[str] = []
        for w in re.findall(r"[a-z]+", said.lower()):
            if w in _OF:
                break
            words.append(_singular(w))
        return frozenset(words)

    def _above(self, offset: int) -> frozenset[int]:
        """``offset`` and every synset up to ``KIND_STEPS`` steps above it."""
        seen = {offset}
        layer = {offset}
        for _ in range(KIND_STEPS):
            layer = {h for o in layer for h in self.hypernyms(o)} - seen
            seen |= layer
        return frozenset(seen)

    def _depth(self, offset: int) -> int:
        """Steps from ``offset`` up to WordNet's root, by the shortest way."""
        layer, steps = {offset}, 0
        while layer and steps < 32:
            ups = {h for o in layer for h in self.hypernyms(o)}
            if not ups:
                return steps
            layer, steps = ups, steps + 1
        return steps


TOLD_SENSES = 3
"""How many of a told word's senses, most used first, are read: "boots" are footwear (and a
car's luggage compartment), only in a rare sense an instrument (of torture). Every sense of
the word asked is (but the ones too general, :data:`MIN_KIND_DEPTH`): "instrument" is a
musical one only in its sixth, and a told word must fall under it to count."""


def _kinds(lex: Lexicon, word: str) -> frozenset[int]:
    """The senses of ``word`` specific enough to be a kind asked about."""
    return frozenset(s for s in lex.senses(word) if lex.depth(s) >= MIN_KIND_DEPTH)


def kind_of(word: str, kinds: Iterable[str], lex: Lexicon | None = None,
            senses: int = TOLD_SENSES) -> bool:
    """Whether ``word`` names one of ``kinds`` or a thing of that kind, by a sense of each
    (of ``word``'s first ``senses``): "piano" of "instrument", "blue" of "colour", "son" of
    "boy"."""
    lex = lex or lexicon()
    if not _PLAIN.fullmatch(word):
        return False
    if not lex.senses(word):  # "stepdad" of "stepfather": "dad" of "father"
        return any(kind_of(word[i:], [k[i:]], lex, senses) for k in kinds
                   for i in range(_MIN_SHARED, _shared_start(word, k) + 1))
    wanted = frozenset().union(*(_kinds(lex, k) for k in kinds))
    return bool(wanted) and any(lex.above(s) & wanted for s in lex.senses(word)[:senses])


def _singular(word: str) -> str:
    """``word`` with a plural's "s" undone, the same for a definition's words and the kinds
    asked, so they meet ("daughters", "daughter"; "boss" and "bus" stay)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") \
        else word


def defined_by(word: str, kinds: Iterable[str], lex: Lexicon | None = None) -> bool:
    """Whether a sense of ``word`` (of its first :data:`TOLD_SENSES`) is defined by every
    one of ``kinds`` (two at least): "niece" ("a daughter of your brother or sister") by
    "brother" and "daughter", "brother-in-law" ("the brother of your spouse; the husband of
    your sister") by "sister" and "husband". One kind alone defines too much ("mother": "a
    woman who has given birth to a child")."""
    lex = lex or lexicon()
    wanted = {_singular(re.sub(r"'s?$", "", k.lower())) for k in kinds}
    if len(wanted) < 2 or not _PLAIN.fullmatch(word):
        return False
    return any(wanted <= lex.gloss(s) for s in lex.senses(word)[:TOLD_SENSES])


def defines(word: str, told: Iterable[str], lex: Lexicon | None = None) -> bool:
    """Whether the definition of ``word``'s first sense holds one of the words ``told`` of
    four letters or more ("husband": "a married man; a woman's partner in marriage" holds
    "married" of "Tobias and I got married in 2019.")."""
    lex = lex or lexicon()
    senses = lex.senses(word) if _PLAIN.fullmatch(word) else ()
    said = {w.lower() for w in told if len(w) > 3}
    return bool(senses) and bool(said & lex.gloss(senses[0]))


def glossed_as(word: str, kind: str, lex: Lexicon | None = None) -> bool:
    """Whether a sense of ``word`` (of its first :data:`TOLD_SENSES`; two words told together
    as one, "maiden name") is defined as a ``kind``, the kind named before what its
    definition says it is of (:meth:`Lexicon.genus`): "Portuguese" ("the Romance language
    spoken in Portugal and Brazil") of "language", "maiden name" ("a woman's surname before
    marriage") of "surname"; not "first name" ("the name that precedes the surname"). The
    kinds WordNet's hypernyms put too high to ask by (:data:`MIN_KIND_DEPTH`: a language is
    a kind of communication) are in the words that define a thing of them."""
    lex = lex or lexicon()
    wanted = _singular(re.sub(r"'s?$", "", kind.lower()))
    if len(wanted) < _MIN_SHARED or not _PLAIN.fullmatch(word.replace(" ", "-")):
        return False
    return any(wanted in lex.genus(s) for s in lex.senses(word)[:TOLD_SENSES])


_MIN_SHARED = 4
"""A word WordNet lacks is compared by what follows a start it shares with the kind, of at
least this many letters ("step", "grand")."""


def _shared_start(a: str, b: str) -> int:
    """How many letters ``a`` and ``b`` start with in common, case aside."""
    return len(commonprefix([a.lower(), b.lower()]))  # noqa: RUF071 (letters, not a path)


_PLAIN = re.compile(r"[A-Za-z][A-Za-z'-]+")


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The machine's WordNet (:data:`WORDNET`)."""
    return Lexicon()
