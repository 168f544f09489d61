"""The part of a statement that holds several facts which a question asks about.

"I live in Quebec, speak French at home and work as a translator." holds three facts.
Handed the whole sentence for "What language do I speak at home?", SmolLM2-135M answers
with the first ("You live in Quebec."), and the reply guard accepts it: it uses what was
told. Handed only the clause the question is about ("I speak French at home."), it answers
from it, the guard holds it to that clause, and the fallback says that clause back. The
clauses are found by form (commas, "and", "but", "though", "while" between parts of three
words or more), never by a list of phrasings; one that points back ("she's three") or is
a bare fragment ("Juno", "nine") stays with the part before it.
"""

from __future__ import annotations

import functools
import re

from terrarium.store import forms
from terrarium.store.lexicon import kind_of
from terrarium.store.subjects import (
    NEUTRAL,
    has_number,
    is_statement,
    mentions_user,
    stem,
    subject_terms,
    tells_known,
)

__all__ = ["about", "sentences", "split", "told_part"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, split after ``.``, ``!`` or ``?`` and a space, none empty:
    recall, the reply guard and its loop check each read sentences the same way."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


_BETWEEN = re.compile(r"\s*[,;]\s*(?:(?:and|but|though|although|so|while|whereas)\s+)?|"
                      r"\s+(?:and|but|though|although|while|whereas)\s+", re.I)
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_PREDICATE = re.compile(r"^(is|was|are|were|has|had|isn't|wasn't|hasn't)\b", re.I)
"""A part opening with the verb of a subject named before it: "Tomás, my oldest mate from
school, is a firefighter now." ("is a firefighter now" tells nothing without "Tomás"; "I live
in Quebec, speak French ..." has the statement's own "I" for "speak")."""
_POINTS_BACK = re.compile(r"^(she|he|it|they|who|which|whose|that|her|his|its|their|both|"
                          r"she's|he's|it's|they're|who's|one|mostly|mainly|all|each|"
                          r"about|around|roughly|nearly|where|the\s+(?:same\s+)?ones?|an?)\b",
                          re.I)
"""A part pointing back at the part before it, a pronoun, a relative or an apposition ("...,
the one where I tore a ligament", "..., where I grew up", "my sister had her baby, a little
boy called Rumi"): it says nothing without it."""
_AMOUNT = re.compile(r"^(\d[\d.,:]*[a-z]*|one|two|three|four|five|six|seven|eight|nine|ten|"
                     r"eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|"
                     r"ninety|hundred|a\s+hundred|a\s+thousand|half\s+a)\b(?!\s+of\s+(?:us|"
                     r"them|you)\b)(?!.*\b(?:i|we|he|she|they|you|i'm|we're)\b)", re.I)
"""A part naming an amount with no subject of its own ("I weighed myself this morning,
eighty two kilos, ...", "we drove for hours, 300 miles in all"): the measure of what the part
before it told, not a fact of its own."""
_AMOUNT_WORDS = 4
_ONE_BACK = re.compile(r"\b(?:a|an|another|the)\s+(?:[a-z]+\s+)?ones?\s*$", re.I)
"""A part ending on "a new one", "another one", "the old ones": "one" names the thing of
the part before it ("the cat knocked my phone into the bath, so I had to get a new one, a
Pixel this time"), so it stays with it."""
_INNER_END = re.compile(r"[.!?]\s+\S")
_MIN_WORDS = 3
_COUNTS = re.compile(r"\bhow\s+(many|much|old|long|tall|far)\b|\b(number|age)\b", re.I)
_HAS_SUBJECT = re.compile(r"^(i|i'm|i've|i'd|i'll|my|we|we're|we've|our|the|a|an|this|"
                          r"these|those|there|by|in|on|at|for|from|as|when|since|after|"
                          r"before|every|most|some)\b", re.I)
_DETERMINER = re.compile(r"^(a|an|the|some|two|three|four|five|six|seven|eight|nine|ten|"
                         r"yeah|yes|ok|okay|well|oh|um|uh|like|ha|haha|lol)\b", re.I)
_PERSON_FIRST = re.compile(r"^(i|i'm|i've|my|we|we're|we've|our)\b", re.I)
_NO_VERB = re.compile(r"^(so|no|not|mostly|mainly|just|only|very|really|especially|except|"
                      r"even|also|too|maybe|plus|then|now|though)\b", re.I)
_NAME_ASK = re.compile(r"\b(names?|called|call|surname|nicknames?)\b", re.I)
_GERUND = re.compile(r"^\w+ing\b", re.I)
_OPENS_WITH_I = re.compile(r"^\W*(?:[A-Za-z]+,\s+)?(i|we)\b", re.I)
_BY_NAME = re.compile(r"\W*(my|our)(\s+(?!is\b|was\b|are\b|were\b|has\b|had\b)[\w-]+){1,3}"
                      r"\s+and\s+", re.I)
"""A sentence's start naming someone of the user's before "and I" ("My partner Dana and")."""
_WITH_ME = re.compile(r"(i|me)\b", re.I)
_ONE_THING = re.compile(r"\b(a|an|the|some|my|our)\s+[\w-]+\s+and\s+$", re.I)
"""An article and one word just before a bare "and" ("a fish and", "the salt and"): what
follows may name the same thing ("chip shop"), not tell another fact."""
_AND = re.compile(r"\s+and\s+", re.I)
_OBJECT_AND = re.compile(r"\b(me|us|him|them)\s+and\s+$", re.I)
"""An object pronoun just before a bare "and" ("just me and the twins tonight"): what
follows is joined to it, another of the same, not a clause of its own."""
_STARTS_APART = re.compile(r"^(i|i'm|i've|i'd|i'll|my|we|we're|we've|our|he|she|they|it|"
                           r"his|her|their|its|a|an|the|some|two|three|four|five|[A-Z]\w*|"
                           r"\w+(ed|s))\b")
"""A part that tells on its own after "and": a subject, an article, a name or a verb."""
_NOUN_PAIR = re.compile(r"^[a-z]+\s+(?!(?:a|an|the|in|on|at|as|to|for|with|from|my|our|his|"
                        r"her|their|it|them|me|us|some|every|all|up|out|off|down|over|about|"
                        r"by|into|twice|once|every|each)\b)[a-z]+\b")
"""Two lowercase words, the second no article, preposition or pronoun: a thing named
("chip shop"), not a verb and what it takes ("sing in a choir", "sold my bike")."""


def _fragment(piece: str) -> bool:
    """A part too short to tell a fact of its own: "Juno", "nine"; "I'm Ana" tells one."""
    n = len(_WORD.findall(piece))
    if n < 2:
        return True
    # "a VW", "Lola fourteen", "so yeah" tell nothing alone; "coach rowing", "I'm Ana" do
    return n < _MIN_WORDS and not _PERSON_FIRST.match(piece) and (
        piece[:1].isupper() or piece[:1].isdigit() or _DETERMINER.match(piece) is not None
        or _NO_VERB.match(piece) is not None)


def _amount(piece: str) -> bool:
    """A short part naming an amount and no subject ("eighty two kilos", "300 miles in
    all"): it stays with the part before it."""
    return _AMOUNT.match(piece) is not None and len(_WORD.findall(piece)) <= _AMOUNT_WORDS


@functools.lru_cache(maxsize=512)
def split(statement: str) -> tuple[str, ...]:
    """The clauses of a one-sentence ``statement`` (the statement alone when it has one, or
    several sentences): "By day I'm an accountant, by night I play bass." -> "By day I'm an
    accountant", "by night I play bass"."""
    text = statement.strip().rstrip(".!")
    if _INNER_END.search(text) or "?" in text:
        return (statement.strip(),)
    spans: list[list[int]] = []
    start = 0
    for m in _BETWEEN.finditer(text):
        spans.append([start, m.start(), m.end()])
        start = m.end()
    spans.append([start, len(text), len(text)])
    parts: list[list[int]] = []
    for span in spans:
        piece = text[span[0]:span[1]]
        if len(parts) == 1 and _WITH_ME.match(piece) and _BY_NAME.fullmatch(text[:span[0]]):
            parts[-1][1] = span[1]  # "My partner Dana and I adopted ...": one subject
            continue
        if parts and _ONE_THING.search(text[:span[0]]) and _AND.fullmatch(
                text[parts[-1][1]:span[0]]) and _NOUN_PAIR.match(piece) and \
                not _STARTS_APART.match(piece):
            parts[-1][1] = span[1]  # "ran a fish and chip shop": one thing, not two clauses
            continue
        if parts and _OBJECT_AND.search(text[:span[0]]):
            parts[-1][1] = span[1]  # "it's just me and the twins": one thing said of both
            continue
        if parts and (_fragment(piece) or _POINTS_BACK.match(piece)
                      or _PREDICATE.match(piece) or _amount(piece)
                      or _ONE_BACK.search(piece)):
            parts[-1][1] = span[1]  # "Juno", "she's three": with the part before
            continue
        parts.append(span)
    if len(parts) > 1 and _fragment(text[parts[0][0]:parts[0][1]]):
        parts[1][0] = parts[0][0]  # a fragment first ("Well", "Oh"): with the next part
        parts.pop(0)
    return tuple(text[a:b].strip() for a, b, _ in parts) or (statement.strip(),)


def _score(clause: str, own: frozenset[str], related: frozenset[str],
           question: str, kinds: tuple[str, ...] = ()) -> tuple[int, int, int]:
    """How much of ``question``'s subject ``clause`` holds, then whether it holds the kind
    of answer its form asks (a place, a day, a name): the form alone picks no clause. The
    last is how many of the question's own words (or a number asked) it holds; a word
    naming a thing of a kind the question says (``kinds``, by WordNet: "boys" of
    "children"; not a word of its category, "job" of "work") counts as one of them."""
    said = subject_terms(clause, related=False)
    stems = {stem(w) for w in said}
    counted = 3 if _COUNTS.search(question) and has_number(clause) else 0
    hits = len(stems & own) + sum(1 for w in said if kinds and stem(w) not in own | related
                                  and kind_of(w, kinds))
    return (2 * hits + len(stems & related) + counted, int(forms.fits(clause, question)),
            hits + counted)


def _best(clauses: tuple[str, ...], question: str) -> list[int]:
    """The indices of the clauses most about ``question`` ([] when none is, or all are)."""
    # the words of asking about a thing ("called", "day") pick no part, nor do their
    # categories: "What's my brother called?" is about the brother, not "My mum's called
    # Hilde"; "What's my day job?" is about the job, not "by night ..."
    own = frozenset(stem(t) for t in subject_terms(question, related=False)) - NEUTRAL
    related = frozenset(stem(t) for o in own for t in subject_terms(o)) - own - NEUTRAL
    kinds = tuple(w for w in subject_terms(question, related=False) if stem(w) in own)
    scores = [_score(c, own, related, question, kinds) for c in clauses]
    top = max(scores)
    if top[0] <= 0 or all(s == top for s in scores):
        return []
    if not top[2] and (sum(1 for s in scores if s[0]) > 1 or _NAME_ASK.search(question)):
        return []  # only related words, in more than one clause (or asked a name, which a
        # part naming none of the question's words may hold): no clear part asked
    return [i for i, s in enumerate(scores) if s == top]


def about(statement: str, question: str) -> str:
    """The clauses of ``statement`` that ``question`` is about, as a sentence in the user's
    words ("I live in Quebec, speak French at home and work as a translator." for "What
    language do I speak at home?" -> "I speak French at home."), or ``statement`` itself
    when it holds one clause, or the question favours none (or all). A follow-up is read by
    its own words alone ("And the dog?" after "What's my son called?" picks the dog's
    clause): "And before that?", "And what does he do?" name none, so they get the
    statement whole, not the clause the question before them picked."""
    clauses = split(statement)
    if len(clauses) < 2:
        return statement
    best = _best(clauses, question)
    if not best:
        return statement
    if _split_between(clauses, best, question):
        return statement  # "My mum's birthday is in May and my dad's is in October." for
        # "When is Dad's birthday?": the part naming Dad says "birthday" only by the other
    if not all(tells_known(c) or _OWN_NAME.search(c) for i, c in enumerate(clauses)
               if i not in best):
        return statement  # "Chess is my thing, I play most evenings.": the part left out
        # may hold the answer ("chess") though it names no subject the question asks
    if _taken_back(statement, clauses, best) or (
            _YES_NO.match(question) and best[0] > 0 and _taken_back(statement, clauses,
                                                                    [best[0] - 1])):
        return statement  # "I used to smoke but I quit three years ago." for "Do I smoke?";
        # a yes or no asked of the part after it: "I'm vegetarian but I eat fish." for "Do
        # I eat meat?"
    picked = [clauses[i] for i in best]
    if _answers(statement, question) and not any(_answers(c, question) for c in picked):
        return statement  # "Who's my boss?": "Had a mare at work" is about work, the name
        # asked for is in the part left out ("my manager Priyanka shouted at me")
    first = picked[0]
    if any(_NO_VERB.match(c) for c in picked):
        return statement  # "so no bread or pasta": says nothing without the part before
    if best[0] > 0 and not _HAS_SUBJECT.match(first) and not first[:1].isupper():
        # "speak French at home": the subject is the statement's own "I"; not "My wife,
        # Oksana, teaches ...", nor "I'm 38, turning 39 ..." ("I turning")
        m = _OPENS_WITH_I.match(clauses[0])
        if m is None or _GERUND.match(first):
            return statement
        first = f"{m.group(1)} {first}"
    text = ", ".join([first[:1].upper() + first[1:], *picked[1:]]).strip()
    return text if text.endswith((".", "!")) else f"{text}."


_OWN_NAME = re.compile(r"\b(?i:i'm|i am|my name's|my name is|call me)\s+[A-Z][a-z]+\W*$")
"""A part telling the user's name ("Quick intro, I'm Ingrid"): of a known subject, the name."""
_YES_NO = re.compile(r"^\W*(?:and\s+)?(?:am|is|are|was|were|do|does|did|can|could|have|has|"
                     r"had|will|would|should)\s+(?:i|we|my|our)\b", re.I)
_BUT_I = re.compile(r"\W+(?:but|though|although|except|only)\s+(?:now\s+|then\s+)?(?:i|we)\b",
                    re.I)


def _taken_back(statement: str, clauses: tuple[str, ...], best: list[int]) -> bool:
    """Whether the part picked last is followed by one of the user's own, turned against it
    by "but" ("I used to smoke but I quit …", "We booked Rome, but we cancelled"): alone,
    the part picked says what is no longer so."""
    i = best[-1]
    if i + 1 >= len(clauses):
        return False
    at = statement.find(clauses[i])
    nxt = statement.find(clauses[i + 1], at + len(clauses[i])) if at >= 0 else -1
    return nxt > 0 and _BUT_I.fullmatch(statement[at + len(clauses[i]):nxt] + " " +
                                         clauses[i + 1].split()[0]) is not None


def _split_between(clauses: tuple[str, ...], best: list[int], question: str) -> bool:
    """Whether the question's own words are split between the clauses (the parts picked
    hold fewer of them than the statement does): a part that leaves out what the part
    before it said ("… and my daughter to eggs", "… and my dad's is in October") is read
    with it."""
    own = frozenset(stem(t) for t in subject_terms(question, related=False)) - NEUTRAL
    if len(own) < 2:
        return False
    held = [own & {stem(w) for w in subject_terms(c, related=False)} for c in clauses]
    picked = frozenset().union(*(held[i] for i in best))
    return len(frozenset().union(*held)) > len(picked)


def _answers(part: str, question: str) -> bool:
    """Whether ``part`` holds the kind of answer ``question``'s form asks (a place, a time, a
    name; a name for "who")."""
    return forms.fits(part, question) or (forms.asks_person(question)
                                          and forms.tells_name(part))


_ASKS_AFTER = re.compile(r",\s+(?:so\s+|and\s+|but\s+)?(?=(?:what|what's|where|where's|when|"
                         r"when's|who|who's|which|how|why|should|shall|can|could|would|will|"
                         r"do|does|did|is|are|any)\b)[^,]*\?$", re.I)
"""A question closing a sentence that opened by telling: "I'm taking my mum to Crete next
week, what should I pack?"."""


_TOLD_FRAME = re.compile(r"^\W*(?:(?:did|have)\s+i\s+(?:ever\s+|already\s+)?(?:mention(?:ed)?|"
                         r"tell\s+you|told\s+you|say|said)|did\s+you\s+know|you\s+know|"
                         r"(?:is|isn't|was)\s+it\s+(?:\w+\s+)?\w+\s+that|"
                         r"should\s+i\s+(?:be\s+)?(?:worry|worried|concerned)\s+that)"
                         r"(?:\s+that)?(?=\s+(?:i|i'm|i've|my|we|we're|our)\b)", re.I)
"""A question that tells by asking whether it was told, or what to make of it: "Did I
mention my husband is a firefighter?", "Is it normal that my dog Bruno sleeps eighteen hours
a day?", "Should I worry that my son only eats pasta?"."""


_REMIND_TO = re.compile(r"^\W*(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
                        r"(?:remind\s+me|(?:don't|do\s+not)\s+let\s+me\s+forget)\s+to\s+(?=\w)",
                        re.I)
"""A task the user asks to be reminded of tells what they need to do: "Remind me to call my
aunt Mavis on her birthday, it's the 30th." -> "I need to call my aunt Mavis …"."""


_BECAUSE = re.compile(r"^(since|as|because|now that|seeing as|given that)\s+(?=(i|we|my|our)\b)",
                      re.I)
"""A reason opening the telling start of a question: what follows it is told."""


@functools.lru_cache(maxsize=512)
def told_part(text: str) -> str:
    """What ``text``, a question or a request, tells of the user in passing, or "": its
    sentences that tell and speak of them ("Can you suggest a cake? It's for my son Theo's
    birthday." -> "It's for my son Theo's birthday."), or a sentence's telling start
    before the question closing it ("We're off to Crete on Friday, what should I pack?"
    -> "We're off to Crete on Friday."). Nothing for a statement (it tells whole), nor for
    a question with nothing told ("What should I pack for Crete?")."""
    if is_statement(text):
        return ""
    kept: list[str] = []
    for sentence in sentences(text):
        m = _ASKS_AFTER.search(sentence)
        part = f"{sentence[:m.start()].strip()}." if m else sentence
        if (frame := _TOLD_FRAME.match(sentence)) is not None:  # "Did I mention my ...?"
            rest = sentence[frame.end():].strip().rstrip("?").rstrip()
            part = f"{rest[:1].upper()}{rest[1:]}."
        elif (task := _REMIND_TO.match(sentence)) is not None:  # "Remind me to call ..."
            part = f"I need to {sentence[task.end():].strip().rstrip('.!?')}."
        if m and (reason := _BECAUSE.match(part)):  # "Since I'm on nights, when ...?"
            part = part[reason.end():]
            part = part[:1].upper() + part[1:]
        if is_statement(part) and mentions_user(part) and len(_WORD.findall(part)) >= _MIN_WORDS:
            kept.append(part)
    return " ".join(kept)
