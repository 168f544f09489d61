"""Long-term memory around a turn: what is recalled into it, and what it records.

Before a turn the creature's newest records and the best matches for its inputs are looked
up (``memory_recent``, ``memory_recall``); they reach the prompt tail (``memory_in_prompt``)
and the fields the runtime fills into sends (``send_fill``). The inputs are then recorded
(``memory_record``), after the lookup, so a turn never recalls its own input.

What the user says about themselves ("my name is Ada", "I live in Lisbon") is also kept as
facts (``memory_facts``), read by :func:`terrarium.store.extract_facts` without a model, and
the ones matching a new input are recalled: "What is my name?" finds "Ada is my name.".

Notes (``memory_notes``) do not depend on such patterns: they are the user's own earlier
statements about what the new input asks, however they were phrased. For an input that
mentions the user ("What is my dog called?", "What should I cook?"; not "Tell me about
dogs."), the creature's records are searched (FTS5) with the input's subject words and the
words related to them (:func:`terrarium.store.subjects.subject_terms`: "dog", "called",
"name", "pet", ...), and the statements among the hits ranked by how many of the input's
own words they hold, then related ones, newest first on a tie; for a question about the
user (:func:`terrarium.store.subjects.about_user`, read from the question's form: "Where am
I from?", "What do people call me?"; not advice) their most recent statements follow ("My
surname is Okafor." for "my last name": no word in common), since such a question is most
often about what they just said. A question that does not mention the user gets notes when
it asks about something they told ("What's the cat called?" after "Our cat Tigger hid
again."), and the newest word on a subject wins: a correction ("Actually, it's Jonathan.")
is handed over put into the statement it corrects (:func:`corrected`), and of the facts
the user has one of (a name, an age) only the newest is recalled. A follow-up that names
its subject only by a pronoun ("How old will she be?", :func:`points_back`) is searched
with the previous utterance's words too, when that one was about the user: the
conversation's subject carries over.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from terrarium.controller.incoming import Incoming
from terrarium.store import MemoryHit, MemoryStore, clauses, extract_facts, forms, normalize_fact
from terrarium.store.asked import (
    may_refer_by_meaning,
    names_someone,
    points_back,
    refers_by_meaning,
)
from terrarium.store.corrected import corrected, joined
from terrarium.store.lexicon import kind_of
from terrarium.store.similar import keep_vector, similarities
from terrarium.store.spoken import punctuated
from terrarium.store.subjects import (
    NEUTRAL,
    RELATED,
    about_user,
    asked_of,
    asks_advice,
    holds_answer_form,
    is_statement,
    may_refer,
    mentions_user,
    names_kind,
    names_person,
    refers_to_told,
    relevant,
    stem,
    strip_opening,
    subject_terms,
)

__all__ = ["ADVICE_LOOKBACK", "FUSE_K", "MEANING_JOINS", "NOTE_CANDIDATES", "RECENT_FLOOR",
           "USER_FACT", "Recalled", "advice_note", "facts_owner", "fused", "notes_for",
           "recall", "record", "tells"]

USER_FACT = "user_fact"
"""The source of a fact the user stated about themselves."""


def facts_owner(creature: str) -> str:
    """Whose facts the user's are in the store: kept apart from the creature's records of
    what it received, so "I live in Lisbon." is both a record and a fact (the store keeps
    one copy of a text per owner)."""
    return f"{creature}:user"


@dataclass(frozen=True, slots=True)
class Recalled:
    """What memory gave one turn."""

    recent: tuple[str, ...] = ()  # this creature's newest records, oldest to newest
    matches: tuple[str, ...] = ()  # the best matches for the inputs, not among ``recent``
    facts: tuple[str, ...] = ()  # the user's own facts that match the inputs
    notes: tuple[str, ...] = ()  # the user's earlier statements about what the inputs ask

    def prompt_lines(self) -> tuple[str, ...]:
        """The facts as the prompt tail shows them."""
        return (*(f"recently: {t}" for t in self.recent), *self.matches)


NOTE_CANDIDATES = 24
"""How many search hits (and recent records) are ranked for the notes."""


async def notes_for(memory: MemoryStore, question: str, *, creature: str, limit: int,
                    facts: Sequence[str] = (), by_meaning: bool = True) -> tuple[str, ...]:
    """Up to ``limit`` of the user's earlier statements (``creature``'s records) about what
    ``question`` asks, best first; the user's ``facts`` about it come first (the facts'
    search matches any word: "Where am I from?" finds "I love green tea." by "I").

    A statement the user corrected ("My name is Jon." then "Actually, it's Jonathan.") is
    handed over corrected, in place of both, and its facts are dropped. A question that
    does not speak of the user gets notes only when it asks about something they told
    ("What's the cat called?" after "Our cat Tigger hid again.", :func:`refers_to_told`)."""
    facts = [f for f in facts if relevant(f, question) and not _of_another(f, question)]
    asked = question
    speaks = mentions_user(question)
    back = not speaks and points_back(question)
    if not speaks and not back and not may_refer(question):
        return tuple(facts)[:limit]  # "Tell me about dogs.": not about what the user told
    newest = await memory.arecent(NOTE_CANDIDATES, creature=creature)
    fixed = joined(corrected([h.text for h in reversed(newest)]),
                   [h.text for h in reversed(newest)])
    # "Can you suggest a cake? It's for my son Theo's birthday.": what a question told in
    # passing is a statement of the user's too, handed over without the question
    fixed = {**{h.text: part for h in newest if (part := clauses.told_part(h.text))}, **fixed}
    if back:  # "How old will she be?": the subject is the previous utterance's
        previous = _conversation(newest)
        if names_someone(question) and not names_person(previous):
            # "Which airline does he fly for?" after "My cousin Ivo is a pilot." and "I'm so
            # tired today.": "he" is the one last told of, not the user's tiredness
            previous = _told_of_person(newest[:4]) or previous
        told = [fixed.get(h.text, h.text) for h in newest if tells(h.text)]
        if newest and not _of_user(previous) and _of_user(fixed.get(newest[0].text, "")):
            # "Where's his house?" after "My brother just bought a house." "It's in
            # Swansea.": the last statement goes on from one about the user
            previous = fixed[newest[0].text]
        # "What's the dog called?" "What breed is he?": an ask about what was told goes on
        if not (_of_user(previous) or any(refers_to_told(p, told)
                                          for p in clauses.sentences(previous))
                or (by_meaning and await _refers_by_meaning(memory, previous, creature))):
            # "What breed is she?" after "How much should a big cat eat?": the world
            # question was about what the user told of last ("My cat's a Ragdoll ..."),
            # so she is theirs (not after "Who wrote Dracula?")
            last = _told_last(newest[:4]) if names_someone(question) else ""
            # or it holds what the pronoun ask asks ("What is he learning?" after "My
            # grandson ... is learning the violin." and a question about the weather)
            previous = last if last and (relevant(last, previous, attitudes=False) or
                                         _shares_asked(last, question)) else ""
            if not previous:
                return ()  # "When is Arlo's birthday?" after "My nephew Arlo ..." was about them
        facts = [f for f in facts if relevant(f, previous)]
        question = f"{previous} {question}"
    found = await _matches(memory, question, creature=creature, newest=newest)
    mine = back or about_user(question)
    near: dict[str, float] | None = None
    if not speaks and not back:
        # by words, or by meaning for an ask of one thing: "What do hamsters eat?" is as
        # near "I have a hamster." (cosine 0.68) as "What colour is the family car?" is to
        # "Our hatchback is a bright orange Honda." (0.51), and only the second is about
        # what was told
        if not refers_to_told(question, [fixed.get(t, t) for t in found]):
            # by meaning only an ask of one thing (not advice, nor of a kind in general,
            # asked.may_refer_by_meaning); any other is not embedded (~10 ms of CPU)
            if not (by_meaning and may_refer_by_meaning(question)):
                return tuple(facts)[:limit]
            near = await similarities(memory, question, creature=creature)
            if not refers_by_meaning(question, near):
                return tuple(facts)[:limit]
        mine = True
    if near is None:
        near = await similarities(memory, question, creature=creature) if by_meaning else {}
    recent = [h.text for h in newest if tells(h.text)]
    found = _subject_first(fused(found, near, recent if mine else []), asked)
    dropped = {f.sentence for old, new in fixed.items() if new != old
               for f in extract_facts(old)}
    added = [f.sentence for new in fixed.values() for f in extract_facts(new)
             if relevant(f.sentence, question)]
    said, left_out = _clauses_asked(found, fixed, asked)
    facts = [*reversed(added), *(f for f in facts if f not in dropped and f not in left_out)]
    # "What do people call me?": the name they go by is in what they said ("I'm Cornelius,
    # but everyone says Neil."), not in the fact of their full name
    notes = [*said, *facts] if _GOES_BY.search(question) else [*facts, *said]
    return tuple(dict.fromkeys(_own_first(notes, asked, back)))[:limit]


_NAME_IN = re.compile(r"(?<=\s)(?!I\b|I'm\b|I've\b)[A-Z][a-z]+")
_GOES_ON_FROM = re.compile(r"^\W*(and|what about|how about)\b", re.I)


def _own_first(notes: list[str], asked: str, back: bool) -> list[str]:
    """``notes`` with the one holding what ``asked`` itself says first: a name it says ("And
    how long have I lived in Glasgow?": "I've been living in Glasgow …" before the fact "I
    live in Swansea."), or, for a follow-up (its words mixed with the previous utterance's),
    the kind of answer its form asks ("And when's the show?": "The school play is on the
    twentieth." before "Our Poppy is playing the innkeeper.")."""
    if len(notes) < 2:
        return notes
    names = set(_NAME_IN.findall(asked.strip()))
    if names:
        def holds(n: str) -> bool:
            return bool(names & set(re.findall(r"[A-Za-z]+", n)))
    elif back or _GOES_ON_FROM.match(asked):
        def holds(n: str) -> bool:
            return forms.fits(n, asked)
    else:
        return notes
    if holds(notes[0]):
        return notes
    first = next((n for n in notes if holds(n)), None)
    return notes if first is None else [first, *(n for n in notes if n != first)]


def _subject_first(found: list[str], asked: str) -> list[str]:
    """``found`` with the statements holding a word of what ``asked`` is about (its own
    words but those of asking about a thing: "husband" of "What's my husband's name?", not
    "name") first, in their order: a statement near the ask in meaning by its words of asking
    ("My best friend is called Zara.", "My name is Harriet.") is no note before "My husband
    Tom is a carpenter."."""
    subject = asked_of(asked)
    if not subject:
        return found
    def holds(text: str) -> bool:
        return bool(subject & {stem(w) for w in subject_terms_own(text)})
    return [*(t for t in found if holds(t)), *(t for t in found if not holds(t))]


MEANING_JOINS = 0.35
"""A statement this near the ask in meaning (cosine of their sentence vectors,
``store/similar.py``) is a candidate note though it shares no word with it."""
RECENT_FLOOR = 0.1
"""A recent statement further than this from the ask in meaning is no note: "What's my blood
type?" after only "My cat sleeps on the radiator." is handed nothing, and the reply is "I
don't know that yet." (on the developers' sets, 24 of 39 never-told asks were handed a note,
against 30 without the floor; no ask's answer was lost)."""
FUSE_K = 2
"""Reciprocal-rank fusion's constant: a note's score is the sum of 1 / (FUSE_K + rank) over
the rankings it is in (by words, by meaning); small, as the lists are short and the first
note matters most."""


def fused(by_words: Sequence[str], near: dict[str, float],
          recent: Sequence[str] = ()) -> list[str]:
    """The candidate statements best first: those ranked by the words they share with the
    ask (``by_words``) and those near it in meaning (``near``: cosine by text, at least
    ``MEANING_JOINS``), by reciprocal-rank fusion; then the user's ``recent`` statements
    by how near they are, but those further than ``RECENT_FLOOR``. Without ``near`` (no
    encoder): ``by_words``, then ``recent``, as before."""
    if not near:
        return [*by_words, *recent]
    told = set(by_words) | set(recent)
    by_meaning = sorted((t for t, c in near.items() if c >= MEANING_JOINS and
                         (t in told or tells(t))), key=lambda t: -near[t])
    score: dict[str, float] = {}
    for ranking in (by_words, by_meaning):
        for rank, text in enumerate(ranking):
            score[text] = score.get(text, 0.0) + 1.0 / (FUSE_K + rank)
    best = sorted(score, key=lambda t: (-score[t], -near.get(t, 0.0)))
    kept = [t for t in recent if near.get(t, 1.0) >= RECENT_FLOOR]
    return [*best, *sorted(kept, key=lambda t: -near.get(t, 0.0))]


def _clauses_asked(found: Sequence[str], fixed: dict[str, str],
                   asked: str) -> tuple[list[str], set[str]]:
    """What of each statement ``found`` to hand over, and the facts read from the clauses
    left out: of "I live in Quebec, speak French at home and work as a translator." only
    the clause asked about ("I speak French at home." for "What language do I speak at
    home?"), so the model answers from it and the guard holds the reply to it; the fact
    "I live in Quebec." read from the same statement goes too. A corrected statement is
    handed over whole, as corrected."""
    said: list[str] = []
    left_out: set[str] = set()
    for t in found:
        if t in fixed:
            said.append(strip_opening(fixed[t]))
            continue
        whole = strip_opening(t)
        part = clauses.about(whole, asked)
        said.append(part)
        if part != whole:
            kept = {f.sentence for f in extract_facts(part)}
            left_out |= {f.sentence for f in extract_facts(whole)} - kept
    return said, left_out


_I_OR_ME = re.compile(r"\b(i|me|i'm|i've|i'd|i'll|myself)\b", re.I)
_KIN = frozenset(stem(w) for g in RELATED if "sister" in g for w in g)


def _of_another(fact: str, question: str) -> bool:
    """Whether ``question`` asks of another living being of the user's ("my son", "my
    boyfriend", "the dog": a family word, or one whose first sense in WordNet is an
    organism) that ``fact``, one of the user's own ("I am 41 years old.", "Gemma is my
    name."), does not name: "How old is my son?" is not answered by the user's age. Not
    when the question speaks of the user as "I" or "me" ("What do my friends call me?")."""
    if _I_OR_ME.search(question):
        return False
    said = {stem(w) for w in subject_terms(fact, related=False)}
    return any(stem(w) not in said and (stem(w) in _KIN or kind_of(w, ["organism"], senses=1))
               for w in subject_terms(question, related=False))


def tells(text: str) -> bool:
    """Whether ``text`` tells something of the user's: a statement, or a question or request
    that tells in passing (:func:`terrarium.store.clauses.told_part`: "What goes well with
    lamb? My in-laws are over on Sunday.")."""
    return is_statement(text) or bool(clauses.told_part(text))


async def _refers_by_meaning(memory: MemoryStore, previous: str, creature: str) -> bool:
    """Whether the ask before a follow-up was about what the user told by meaning
    (:func:`refers_by_meaning`): "And what's the other one called?" after "Which rabbit is
    brown?" (linked to "We adopted two rabbits ..." and "Clover's the brown one." by
    meaning, no one statement holding both words) goes on from it. Embedded only here,
    when words did not link it (~2 ms of CPU)."""
    asked = clauses.sentences(previous)[-1] if previous else ""
    if not asked or not may_refer_by_meaning(asked):
        return False
    return refers_by_meaning(asked, await similarities(memory, asked, creature=creature))


def _conversation(newest: Sequence[MemoryHit]) -> str:
    """The previous utterance, with the ones before it while each went on from the last
    ("What's the beagle's name?" "And the collie?" "And how old is he?"): the
    conversation's subject is in the first of them."""
    said: list[str] = []
    for hit in newest[:3]:
        said.insert(0, hit.text)
        if not points_back(hit.text):
            break
    return " ".join(said)


_GOES_BY = re.compile(r"\b(call|calls|go by|goes by|known as|nicknames?|prefer|usually|"
                      r"everyone|people|friends|(actual|real|full|proper|legal) name)\b", re.I)
"""A question of which of their names: the one they go by, or their real one."""


def _told_of_person(newest: Sequence[MemoryHit]) -> str:
    """The newest of ``newest`` in which the user told of someone, or ""."""
    return next((h.text for h in newest if is_statement(h.text) and mentions_user(h.text)
                 and names_person(h.text)), "")


def _shares_asked(told: str, question: str) -> bool:
    """Whether ``told`` holds one of the words ``question`` asks of, itself (not a number
    for "how old": "How old was he then?" after "Who wrote Dracula?" is of the author)."""
    return bool(asked_of(question) & {stem(w) for w in subject_terms_own(told)})


def _told_last(newest: Sequence[MemoryHit]) -> str:
    """The newest of ``newest`` in which the user told something of themselves, or ""."""
    return next((h.text for h in newest if is_statement(h.text) and mentions_user(h.text)), "")


def _of_user(text: str) -> bool:
    """Whether ``text`` (the previous utterance) was about the user: a question about them
    or something they told of themselves (not advice, not a question about the world)."""
    return about_user(text) or (mentions_user(text) and is_statement(text))


async def _matches(memory: MemoryStore, question: str, *, creature: str,
                   newest: Sequence[MemoryHit] = ()) -> list[str]:
    """The user's statements found by ``question``'s subject words, ranked by how many of
    its own words they hold (twice) and then related ones, the newer first on a tie."""
    terms = subject_terms(question)
    if not terms:
        return []
    own = {stem(t) for t in subject_terms_own(question)}
    if own - NEUTRAL:  # "What's my husband's name?": about the husband; "name" only asks
        own -= NEUTRAL  # (before, "My name is Harriet." tied "My husband Tom is ...")
    related = {stem(t) for t in terms} - own
    scored: dict[str, tuple[int, int]] = {}
    # one query (its first 32 terms: the question's own words, then related ones), and the
    # newest records scored by every related word ("dog" finds "retriever", past the 32):
    # a bigger query is slower than the whole turn's recall was (issue 29)
    hits = await memory.asearch(" ".join(terms), limit=NOTE_CANDIDATES, creature=creature)
    for hit in [*hits, *newest]:
        if not tells(hit.text):
            continue
        said = subject_terms_own(hit.text)
        stems = {stem(w) for w in said}
        score = 2 * len(stems & own) + len(stems & related)
        # "What reptile do I own?" after "I've got a tortoise called Sheldon.": a word of
        # the kind the question names is as good as its own word (WordNet, lexicon.py)
        score += 2 * names_kind(said, question)
        # "How old is my lad?" after "My nephew Idris turns nine on Friday.": a statement
        # holding the kind of answer asked (a number, place, day, name) is ahead of one
        # holding nothing asked
        score += holds_answer_form(hit.text, question)
        if score:
            scored[hit.text] = (score, hit.id)
    return [t for t, _ in sorted(scored.items(), key=lambda p: (-p[1][0], -p[1][1]))]


def subject_terms_own(text: str) -> list[str]:
    """The subject words of ``text`` itself, without related ones."""
    return subject_terms(text, related=False)


async def recall(memory: MemoryStore | None, inputs: Sequence[Incoming], *, creature: str,
                 recent: int, matches: int, facts: int = 0, notes: int = 0,
                 by_meaning: bool = True) -> Recalled:
    """Up to ``recent`` newest records of ``creature``, ``matches`` best matches,
    ``facts`` of the user's facts that match the inputs and ``notes`` of the user's
    earlier statements about what they ask (ranked by meaning too, with ``by_meaning``
    and the encoder installed)."""
    if memory is None:
        return Recalled()
    newest: list[str] = []
    found: list[str] = []
    own: list[str] = []
    if facts:
        query = " ".join(i.search_text for i in inputs)
        hits = await memory.asearch(query, limit=2 * facts, creature=facts_owner(creature),
                                    source=USER_FACT)
        own = newest_of_kind([(h.id, h.text) for h in hits])[:facts]
    if recent:
        hits = await memory.arecent(recent, creature=creature)
        newest = [h.text for h in reversed(hits)]
    if matches:
        query = " ".join(i.search_text for i in inputs)
        hits = await memory.asearch(query, limit=matches)
        found = [h.text for h in hits if h.text not in newest and h.text not in own]
    said: tuple[str, ...] = ()
    if notes:
        # "when's the interview": speech without its question mark asks all the same
        question = " ".join(punctuated(i.search_text) for i in inputs)
        said = await notes_for(memory, question, creature=creature, limit=notes, facts=own,
                               by_meaning=by_meaning)
        if not said and asks_advice(question):
            said = await advice_note(memory, creature=creature)
    return Recalled(tuple(newest), tuple(found), tuple(own), said)


ADVICE_LOOKBACK = 3
"""How many of the newest records an advice ask looks back over for what the user just told
of themselves (:func:`advice_note`)."""


async def advice_note(memory: MemoryStore, *, creature: str) -> tuple[str, ...]:
    """For an advice ask that no note matched by its words ("What should I cook tonight?"
    after "I'm vegetarian."; "Any tips for the drive?" after "I've got an old Fiat."): what
    the user told of themselves just before, among the newest ``ADVICE_LOOKBACK`` records,
    since advice is most often asked about what they just said and a word search cannot
    link "cook" to "vegetarian". Not their name alone ("Hi, I'm Ada."): no advice turns on
    it. The reply guard makes sure the reply takes it into account (``advice_note``)."""
    newest = await memory.arecent(ADVICE_LOOKBACK, creature=creature)
    last = _told_last(newest)
    facts = extract_facts(last) if last else []
    if not last or (facts and all(f.kind == "name" for f in facts)):
        return ()
    return (strip_opening(last),)


_ONE_OF_A_KIND = (re.compile(r" is my name\.$"), re.compile(r"^I am \S+ years old\.$"))
"""Facts the user has one of at a time: a name (the newest a nickname or a correction), an
age."""


def newest_of_kind(facts: Sequence[tuple[int, str]]) -> list[str]:
    """The facts (id, sentence; best first) without the older ones of a kind the user has
    one of: "Jonathan is my name." told after "Jon is my name." leaves that one out."""
    newest = {k: max((i for i, t in facts if k.search(t)), default=-1) for k in _ONE_OF_A_KIND}
    return [t for i, t in facts
            if all(not k.search(t) or i == newest[k] for k in _ONE_OF_A_KIND)]


async def record(memory: MemoryStore, inputs: Sequence[Incoming], *, creature: str,
                 facts: bool = False, texts: bool = True, meaning: bool = False) -> None:
    """Write the text of every input to memory, with the channel it came on as the source;
    with ``facts``, also what it says about the user, as facts of their own; with
    ``meaning``, its sentence vector beside it (``store/similar.py``; for notes)."""
    for item in inputs:
        text = punctuated(item.search_text)  # recorded as asked, for the follow-ups after it
        if not text.strip():
            continue
        if texts:
            wrote = await memory.awrite(text, creature=creature, source=item.channel or "user")
            if meaning:
                await keep_vector(memory, wrote.id, normalize_fact(text))
        if facts:
            for fact in extract_facts(text):
                await memory.awrite(fact.sentence, creature=facts_owner(creature),
                                    tags=fact.tags, source=USER_FACT)
