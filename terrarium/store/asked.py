"""What a question about the user asks for, and whether what they told can answer it.

Two things retrieval by subject words cannot settle alone:

- A follow-up names its subject only by pointing back ("How old will she be?", "When is
  it?" after "When is my daughter's birthday?"): its subject is the conversation's, so it
  is searched with the previous utterance's words too (:func:`points_back`).
- A question may ask about a thing the user never told, next to one they did: "What's my
  dog's name?" after only "I have a cat called Mochi.", "Which town am I from?" after only
  "I work as a plumber.", "What's my last name?" after only "I'm Wanda.". Handed the
  statement, a 135M model answers with it anyway ("Mochi is your dog."); the honest answer
  is "I don't know that yet." (:func:`lacks`). It is decided from the question's form and
  the notes' words, before the model is asked.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence

from terrarium.store import forms
from terrarium.store.keep import asked_back
from terrarium.store.lexicon import defined_by, defines, glossed_as, kind_of
from terrarium.store.similar import nearest
from terrarium.store.subjects import (
    RELATED,
    asked_of,
    asks_advice,
    has_number,
    is_statement,
    may_refer,
    mentions_user,
    relevant,
    stem,
    subject_terms,
    tells_kind,
)
from terrarium.store.told_form import form_untold
from terrarium.store.told_of import attribute_untold, kind_untold, may_name

__all__ = ["KINDS", "NEAR_IS_ABOUT", "REFERS_NEAR", "asks_kind", "generic", "lacks",
           "may_refer_by_meaning", "names_kind_asked", "names_someone", "points_back",
           "refers_by_meaning"]

_KIND_TABLE = (
    # the words of asking about one kind | more words that tell of it
    "dog dogs puppy pup hound | retriever labrador poodle terrier spaniel collie husky "
    "beagle shepherd bulldog dachshund greyhound whippet pug corgi",
    "cat cats kitten kitty |",
    "rabbit rabbits bunny |",
    "bird birds | parrot budgie canary",
    "parrot parrots budgie canary |",
    "horse horses pony |",
    "tortoise turtle |",
    "hamster hamsters |",
    "fish goldfish |",
    "snake snakes |",
    "lizard lizards gecko iguana |",
    "wife | spouse partner",
    "husband | spouse partner",
    "partner spouse | wife husband girlfriend boyfriend fiance fiancee",
    "mother mum mom mam mummy mommy |",
    "father dad daddy papa |",
    "sister sisters |",
    "brother brothers |",
    "son sons | boy boys",
    "daughter daughters | girl girls",
    "kid kids child children baby babies | son sons daughter daughters boy boys girl girls",
    "grandmother grandma granny gran nan nana |",
    "grandfather grandpa granddad grandad |",
)
"""Things a user has one of several kinds of: asked about their dog, a cat is no answer."""


def _kinds() -> dict[str, frozenset[str]]:
    kinds: dict[str, frozenset[str]] = {}
    for row in _KIND_TABLE:
        heads, _, more = row.partition("|")
        tell = {stem(x) for x in (*heads.split(), *more.split())}
        for w in heads.split():
            kinds[stem(w)] = kinds.get(stem(w), frozenset()) | tell
    return kinds


KINDS = _kinds()
"""A kind's word (stemmed) -> the words (stemmed) that tell of one of it."""
_KIND_WORDS = frozenset().union(*KINDS.values(), *(
    (stem(w) for w in g) for g in RELATED if {"pet", "family"} & g))
"""Every word that tells of a kind: a note holding none tells of no known kind at all ("a
bearded dragon"), so it may still be the one asked of ("my lizard")."""
_KNOWN = frozenset(stem(w) for g in RELATED for w in g)
"""The words of every known subject (:data:`RELATED`)."""
_WHEN = frozenset(stem(w) for g in RELATED if "april" in g for w in g)
"""The words of when (a day, a month, a time of day): said of a thing, not what it is."""
_SURNAME_STEM = stem("surname")
_NAMES = frozenset(stem(w) for w in RELATED[0])
"""The words of the name category ("name", "called", "nickname")."""
_NAMING = frozenset(stem(w) for w in "call calls called go known".split())
"""The words that name a thing ("a bearded dragon called Zeppelin"): of no subject."""
_ASKS_NAME = re.compile(r"\b(names?|named|called|nicknames?|surname|call (me|us|him|her|"
                        r"them|it|you)|go(es)? by|known as)\b", re.I)
"""A name asked: "go" or "call" alone asks none ("Where did we go?")."""
_COUNTED = frozenset(stem(w) for w in "old age aged many much number count".split())
_SURNAME = re.compile(r"\b(surname|last name|family name)\b", re.I)
_FULL_NAME = re.compile(r"\b(?!(?:I|The|My|Our|We|This|That|It|In|On|At|Hi|Hey|Hello|"
                        r"Morning|Good)\b)[A-Z][a-z]+ [A-Z][a-z]+\b")
_NAMED = re.compile(r"(?<!^)(?<![.!?] )(?<!\bin )(?<!\bat )(?<!\bfrom )(?<!\bto )"
                    r"(?<!\bnear )\b[A-Z][a-z]+")
"""A name told bare ("a brother, Declan"), not a place ("a brother in Denver")."""
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_AS_A_CHILD = re.compile(r"\b(as|when I was|when we were)\s+(an?\s+)?(kid|kids|child|children|"
                         r"boy|girl|teenager|teen|baby)\b", re.I)
_YEAR_ASKED = re.compile(r"\b(what|which)\s+year\b|\bin\s+what\s+year\b", re.I)
_YEAR_TOLD = re.compile(r"\b\d{4}s?\b|'\d\d\b|\b(ago|last|this|next|new|brand|year|years|"
                        r"nineties|eighties|seventies|sixties|fifties|noughties)\b", re.I)
"""A year asked, and one told: in figures ("1998", "'19"), or by when ("two years ago",
"last year", "brand new", "the nineties")."""
_ADDRESS = re.compile(r"\b(address|street|postcode|zip code|house number)\b", re.I)


_LATELY = re.compile(r"\b(these days|nowadays|lately|recently|at the moment|right now|"
                     r"any ?more|these past \w+|this (week|year|month))\b", re.I)
"""When, not what: "What am I into these days?" asks no date."""


def _stems(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text)}


NEAR_IS_ABOUT = 0.35
"""A note this near a question in meaning (the sentence encoder, when loaded) is about its
subject, though no word or category links them; as near as a statement must be to join the
notes (``recall.MEANING_JOINS``). Only the last test of :func:`lacks` asks it: a kind of
thing, a surname, an address or a name asked and not told are still no answer ("What's my
hamster called?" after "I have a rabbit called Dot.", cosine 0.45)."""


def lacks(question: str, notes: Sequence[str]) -> bool:
    """Whether ``notes`` (what the user told) cannot answer ``question`` about them: it asks
    of a kind of thing none of them holds ("my dog's name" after only a cat), a surname
    when no note holds one, or a known subject ("town", "from") no note is about (no word
    or category in common, no number for "how old") while each of them is about a known
    subject of its own ("I work as a plumber."). A question or a note of no known subject
    ("What am I into lately?", "Penicillin gives me a rash.") is left to the model."""
    said = set().union(*(_stems(n) for n in notes)) if notes else set()
    asked = _AS_A_CHILD.sub(" ", _LATELY.sub(" ", question))  # "as a kid": no kid of theirs
    words = subject_terms(asked, related=False)
    own = [stem(w) for w in words]
    kinds = [word for w, word in zip(own, words, strict=True) if _tells_of(w, word)]
    if not _defined(kinds, notes):  # "my brother's daughter": "my niece" (WordNet's gloss)
        for w, word in zip(own, words, strict=True):
            tell = _tells_of(w, word)
            if tell and not tell & said and _KIND_WORDS & said and not any(
                    tells_kind(word, n) for n in notes):
                return True  # "my dog" with only a cat told (not with "two whippets")
    if _SURNAME_STEM in own:  # "My maiden name was Abernethy." tells one (WordNet's gloss)
        return not any(_SURNAME.search(n) or _FULL_NAME.search(n) or _glossed(n, ["surname"])
                       for n in notes)
    if _YEAR_ASKED.search(question) and not any(_YEAR_TOLD.search(n) for n in notes):
        return True  # "What year is my car?" after only "I drive a green Skoda."
    if _ADDRESS.search(question) and not any(_NAMED.search(n) or has_number(n) for n in notes):
        return True  # an address is a number or a street's name: "We moved here in May."
    if form_untold(question, notes):
        return True  # "Where is the wedding?" after only "Our wedding is on the 14th of May."
    if kind_untold(question, notes):
        return True  # "Which airline am I flying with?" after only "I'm flying to Lisbon."
    names = _ASKS_NAME.search(question) is not None
    if names and not any(_NAMES & _stems(n) or _names_one(n) for n in notes) and not (
            _thing_named(words, question, notes)):
        return True  # a name asked, and none told: "a brother in Denver" names a place
    known = [w for w in own if w in _KNOWN]
    if not known or not notes or _FOLLOW_ON.match(question):
        return False  # "And which colour did I go for?": on from what was just told
    if attribute_untold(question, notes):
        return True  # "What does Orla do for a living?" after only "My sister Orla lives in
        # Cardiff.": told of her, not what is asked of her
    if any(relevant(n, question) for n in notes):
        return False
    if any(_glossed(n, words) for n in notes):
        return False  # "Which languages do I know?" and "I picked up Portuguese ...": a
        # thing told that WordNet defines as one of the kind asked
    if _of_category(known, notes):
        return False  # "When do we leave?" and "We booked the honeymoon, ... the second of
        # May.": a honeymoon is a holiday (WordNet), and leaving is of holidays
    if (nearest(question, notes) or 0.0) >= NEAR_IS_ABOUT:
        # about it in meaning, with no word in common: "Which brand of guitar do I own?"
        # and "I play a battered Fender I got at sixteen." (cosine 0.46)
        return False
    if not all((_KNOWN - _NAMING - _WHEN) & _stems(n) for n in notes):
        return False  # something told of no known subject ("Penicillin gives me a rash.";
        # a name says nothing of what: "a bearded dragon called Zeppelin"; nor does when:
        # "I take levothyroxine every morning." for "Which tablets am I on?")
    if names:
        return False  # a name told bare: "I've got a brother, Declan."
    if forms.asks_person(question) and any(forms.tells_name(n) and not _OWN_NAME.match(n)
                                           for n in notes):
        return False  # "Who am I married to?" and "It's our anniversary, twenty years with
        # Mark.": no word in common, but someone's name is told; left to the model
    return not (set(own) & _COUNTED and any(has_number(n) for n in notes))


_A_KIND_NAMED = re.compile(r"\b(a|an)\s+[A-Z][a-z]+(\s+[A-Z][a-z]+)*")
"""A capitalised word after "a" or "an" names a kind, a make or a breed, not one thing: "My
cat is a Maine Coon.", "I drive a Volvo."."""


def _names_one(note: str) -> bool:
    """Whether ``note`` tells a name bare (:data:`_NAMED`) that is no day or month, nor a
    kind after "a" (:data:`_A_KIND_NAMED`): "My dentist appointment is this Tuesday." names
    no dentist, "My cat is a Maine Coon." no cat."""
    note = _A_KIND_NAMED.sub(lambda m: m.group(0).lower(), note)
    return any(m.group(0).lower() not in forms.DAYS_AND_MONTHS for m in _NAMED.finditer(note))


def _tells_of(own: str, word: str) -> frozenset[str]:
    """The words (stemmed) that tell of one of the kind ``word`` (stemmed ``own``) asks:
    :data:`KINDS`'s, or for a kin word WordNet files under "relative" ("aunt", "cousin",
    "nephew", "sister-in-law"), the word itself: asked for the aunt's name, an uncle told
    is no answer."""
    if own in KINDS:
        return KINDS[own]
    return frozenset({own}) if len(word) > 3 and kind_of(word, ["relative"]) else frozenset()


_OWN_NAME = re.compile(r"^\W*(?i:i'm|i am|my name is|my name's|call me)\s+[A-Z]")
"""A note telling the user's own name: no answer to "who" is someone else."""


_CATEGORY_OF = {stem(w): g for g in RELATED for w in g}


def _of_category(known: Sequence[str], notes: Sequence[str]) -> bool:
    """Whether a note names a thing WordNet files under a word of the category of a word
    ``known`` asks (stems of :data:`RELATED`'s words): "honeymoon" is a kind of "holiday",
    so "When do we leave?" (the category of trips) is about the honeymoon told."""
    kinds = sorted(frozenset().union(*(_CATEGORY_OF.get(w, frozenset()) for w in known)))
    if not kinds:
        return False
    said = {w.lower() for n in notes for w in _WORD.findall(n) if len(w) > 3}
    return any(stem(w) not in _KNOWN and kind_of(w, kinds) for w in sorted(said))


def _thing_named(words: Sequence[str], question: str, notes: Sequence[str]) -> bool:
    """Whether ``question`` asks the name of a thing (nothing living, by each word's first
    sense in WordNet) that a note speaks of: a thing's name is often told in lower case
    ("What's the name of the pill for my blood pressure?" and "I've been prescribed
    amlodipine for my blood pressure."); a person's or a pet's is a capitalised name."""
    asked = [w for w in words if stem(w) not in _NAMES]
    own = {w.lower() for w in _WORD.findall(question)}
    return bool(asked) and not any(kind_of(w, ["organism"], senses=1) for w in asked) \
        and any(relevant(n, question) and any(
            may_name(w, k, first=i == 0)
            for i, w in enumerate(_WORD.findall(_A_KIND_NAMED.sub(" ", n)))
            if w.lower() not in own for k in asked) for n in notes)
    # a word that may be its name, not the question's own: "My PIN at the gym is 4471."
    # names no gym


def names_kind_asked(note: str, question: str) -> bool:
    """Whether ``note`` names a thing WordNet defines as one of the kinds ``question`` asks
    of ("I picked up Portuguese ..." for "Which languages do I know?")."""
    return _glossed(note, subject_terms(question, related=False))


def _glossed(note: str, kinds: Sequence[str]) -> bool:
    """Whether a word of ``note``, or two told together ("maiden name"), is defined as one
    of ``kinds`` (:func:`terrarium.store.lexicon.glossed_as`)."""
    words = _WORD.findall(note)
    said = [w for w in words if len(w) > 3]
    said += [f"{a} {b}" for a, b in itertools.pairwise(words) if len(a + b) > 6]
    return any(glossed_as(w, k) for w in said for k in kinds if len(k) > 3)


def _defined(kinds: Sequence[str], notes: Sequence[str]) -> bool:
    """Whether a word of ``notes`` is defined by the ``kinds`` asked together ("What's my
    brother's daughter's name?" and "My niece is called Zuzanna.": a niece is "a daughter of
    your brother or sister", :func:`terrarium.store.lexicon.defined_by`)."""
    if len(kinds) == 1:  # "Who is my husband?": "a married man ..." of "... got married"
        # and "How many siblings ...?": "a person's brother or sister" of "three sisters"
        return any(defines(re.sub(r"'s?$", "", kinds[0]), _and_singular(_WORD.findall(n)))
                   for n in notes)
    return any(defined_by(w, kinds) for n in notes for w in _WORD.findall(n))


def _and_singular(words: Sequence[str]) -> list[str]:
    """``words`` and the singular of each plural ("sisters", "sister")."""
    return [*words, *(w[:-1] for w in words if len(w) > 4 and w.endswith("s")
                      and not w.endswith("ss"))]


_BACK = re.compile(r"\b(it|its|she|her|he|his|him|they|them|their|that|those)\b", re.I)
_ASKING_BACK = re.compile(r"^\W*(and\s+|so\s+)?(what|what's|where|where's|when|when's|who|"
                          r"who's|which|how)\b", re.I)
_CLOCK = re.compile(r"\b(time|day|date|month|year|weather|raining|sunny|cold|hot)\b", re.I)
""""What time is it?": an "it" that points at nothing told."""


_IT_DONE = re.compile(r"^\W*(and\s+|so\s+)?(where|when|how|how\s+often|how\s+long)\s+(is|was|"
                      r"are|were|does|did|do|will|would|can|could|has|had)\s+(it|they)"
                      r"(\s+(?!going\b|doing\b)[a-z]+){0,2}\W*$", re.I)
"""A question asking only what is done with a thing just spoken of, the pronoun its subject
and at most two words after it ("Where is it kept?", "When does it open?", "How long was it
parked?"): those words are no subject of their own."""


_FOLLOW_ON = re.compile(r"^\W*(and|what about|how about)\b", re.I)
"""A question going on from the last ("And the collie?", "What about his sister?")."""
_BARE_ASK = re.compile(r"^\W*(since when|until when|what|which|who|whom|whose|where|when|how long|"
                       r"how much|how many|how old)\b", re.I)
"""A question of two words at most asks of what was just said ("Which day?", "Since
when?", "What time?"); not "Why?" (a reason)."""
_ASKED_AGAIN = re.compile(r"[\s,]+(again|then|exactly)(?=\W*$)", re.I)
"""A word of asking back closing a bare ask is not its subject: "What time again?", "Which
day, then?" ask as "What time?" does."""
_LEADING_PREPOSITION = re.compile(r"^\W*(and\s+)?(to|in|on|at|for|from|since|until|by|with|"
                                  r"of|about)\s+(?=\w)", re.I)
"""A bare ask may open with the preposition of the statement it asks of: "Flying to Lima."
-> "To where?"."""
_PERSON = re.compile(r"\b(she|her|hers|he|his|him|they|them|their)\b", re.I)
def names_someone(question: str) -> bool:
    """Whether ``question`` names a person or an animal by a pronoun ("What breed is
    she?"): one the user told of."""
    return _PERSON.search(question) is not None


_THAT = re.compile(r"\b(that|those)\s+(?!is\b|was\b|are\b|were\b|do\b|does\b|did\b)[a-z]+",
                   re.I)
""""When's that trip?": the trip just spoken of."""
_KIND_OF_IT = re.compile(r"^\W*(and\s+|so\s+)?(which|what)\s+[a-z]+\s+(is|was|are|were|does|did|"
                         r"do|will)\s+(it|they|that)\s+(at|in|on|from|for|with|by|near)\W*$|"
                         r"^\W*(and\s+|so\s+)?how\s+(many|much)\s+[a-z]+\s+(is|was|are|were|"
                         r"does|did|do|will)\s+(it|they|that)(\s+[a-z]+)?\W*$", re.I)
"""A question of the place or thing a pronoun is at ("Which hospital is it at?", "What ward
is it on?", "Which airport is it from?"): the noun says what kind of thing the answer is, the
pronoun is the conversation's subject (not "What bakery is it?", a subject of its own); and
the unit a count of it is asked in ("How many tries did it take?", "How much money was
it?")."""
_RECALL_ASK = re.compile(r"^\W*(do|can|could|would)\s+you\s+(still\s+)?(remember|recall|"
                         r"tell me)\b", re.I)


def points_back(question: str) -> bool:
    """Whether ``question`` takes its subject from the conversation's: it does not speak
    of the user, and it goes on from the last question ("And the collie?", "And what
    time?"), is a bare ask ("Which day?", "Since when?"), names a person or an animal told
    of only by a pronoun ("What breed is she?", "Where's his house?", "Do you remember her
    name?"), or has a pronoun and no subject word of its own beyond the words of asking
    ("When is it?"; not "What time is it?")."""
    q = question.strip()
    if not q.endswith("?") or mentions_user(q):
        return False
    n = len(_WORD.findall(q))
    bare = _LEADING_PREPOSITION.sub("", q)  # "To where?", "For how long?", "On which day?"
    bare = _ASKED_AGAIN.sub("", bare)  # "What time again?", "Which day, then?"
    if (_FOLLOW_ON.match(q) and n <= 6) or (len(_WORD.findall(bare)) <= 2
                                            and _BARE_ASK.match(bare)):
        return True
    if not (_ASKING_BACK.match(q) or _RECALL_ASK.match(q)):
        return False
    if _PERSON.search(q) or _THAT.search(q):
        return True
    if _IT_DONE.match(q) and not _CLOCK.search(q):
        return True  # "Where is it kept?": "kept" says what is asked of it, not what it is
    if _CLOCK.search(q):
        return False
    if _KIND_OF_IT.match(q):
        return True  # "Which hospital is it at?": the kind of answer asked, of "it"
    if not _BACK.search(q):
        # "Who's coming along?", "Who else is going?": no subject of its own at all, but
        # the words of asking about a thing ("coming", "going") and particles
        return not asked_of(q) - _PARTICLES
    # "Which city is it in?": a word asking the kind of answer (city, day, name) is no
    # subject of its own, the pronoun's is the conversation's
    return not asked_of(q) - _FORM_STEMS


_FORM_STEMS = frozenset(stem(w) for w in forms.FORM_WORDS)
_PARTICLES = frozenset(stem(w) for w in "along else too also then now anyway exactly".split())
"""Words that add nothing to what a question is about ("Who's coming along?")."""


_KIND_ASK = re.compile(r"\b(what|which)\s+(kind|type|sort|breed)s?\s+of\b", re.I)


def asks_kind(question: str) -> bool:
    """Whether ``question`` asks what kind of thing ("What kind of pet do I have?"): the
    answer is the thing ("a tortoise"), not its name."""
    return _KIND_ASK.search(question) is not None


REFERS_NEAR = 0.45
"""A statement this near a question that does not speak of the user, shares no word with it
and asks of no kind of thing in general (:func:`generic`), is what it asks about: "What
colour is the family car?" and "Our hatchback is a bright orange Honda." (0.51), "Which
joint is injured?" and "My left knee got wrecked playing rugby at school." (0.47). A world
question near something told asks of a kind in general ("What do hamsters like to eat?",
0.58 to "My son has a hamster named Nugget."; "How long does it take to charge an
electric car?", 0.46) or asks advice ("What's a good treat for a rabbit?")."""

_GENERIC = re.compile(
    r"\b(a|an|usually|normally|generally|typically|people|anyone|someone|everyone)\b|"
    r"\b(do|are|can|could|should|would|will|must|were)\s+(?!(?:the|my|our|your|his|her|"
    r"their|its|these|those|this|we|us|they|them|it|i|you|yours|ours|theirs|hers|his)\b)"
    r"[a-z]+[^s\W]s\b", re.I)
"""A question of a kind in general: an indefinite article ("a big cat", "an electric
car"), "usually", people at large, or a bare plural as its subject ("What do hamsters
eat?", "Are foxes ...")."""


def generic(question: str) -> bool:
    """Whether ``question`` asks of a kind of thing in general ("What do hamsters eat?",
    "How long does a PhD usually take?"), not of one the user told of ("What's the dog
    called?")."""
    return _GENERIC.search(question) is not None


def may_refer_by_meaning(question: str) -> bool:
    """Whether ``question`` could be linked to what was told by meaning alone
    (:func:`refers_by_meaning`): a wh-question that does not speak of the user, asks no
    advice and of no kind in general. Read before any embedding is made."""
    return (may_refer(question) and bool(_WH_ASKED.search(question))
            and not mentions_user(question) and not asks_advice(question)
            and not generic(question))


_WH_ASKED = re.compile(r"\b(what|what's|where|where's|when|when's|who|who's|whom|whose|which|"
                       r"how)\b|\bagain\W*$", re.I)
"""A question of what, where, when, who, which or how, or asked again ("Allotment number
again?"): one whether ("Is it okay to skip breakfast?", 0.53 to "I get migraines if I skip
meals.") is linked by words only."""


def refers_by_meaning(question: str, near: Mapping[str, float]) -> bool:
    """Whether ``question``, a wh-question that does not speak of the user, asks about
    something they told, by meaning (``near``: the cosine of the question and each record,
    by text): not advice, nor a question of a kind in general (:func:`generic`), and a
    statement at least ``NEAR_IS_ABOUT`` near holds a word it is about ("When is the
    plumber due?" after "The plumber's coming Wednesday ...", 0.59; "What was the kid next
    door playing?" after "Couldn't sleep, the kid next door was practising the tuba ...",
    0.48), or one at least ``REFERS_NEAR`` near holds none. Told without "my" too: what
    the user tells of their day is theirs. (Words alone: ``subjects.refers_to_told``.)"""
    if not near or not may_refer_by_meaning(question):
        return False
    own = asked_of(asked_back(question)[0]) - _FORM_STEMS
    for text, cosine in near.items():
        if cosine < NEAR_IS_ABOUT or not is_statement(text):
            continue
        if cosine >= REFERS_NEAR or own & _stems(text):
            return True
    return False
