"""Whether anything the user told holds an answer of the form a question asks.

A question's form says what kind of answer it wants: "Where is the wedding?" a place, "When
is my conference?" a day or a time, "How many players are in our team?" a number. Next to a
fact told of the same thing ("Our wedding is on the fourteenth of August.", "I'm going to
Lisbon for a conference.", "Our team is called the Otters.") the subject words match, so
retrieval hands the fact over and a 135M model answers with it ("Your wedding is on the
fourteenth of August."). When no note holds an answer of that form at all, nothing told
can answer: the honest reply is "I don't know that yet." (:func:`form_untold`, read by
``asked.lacks``). Read from the form of the question and of the notes (a preposition of
place before a word that is no time, a day, a month, a number), not from lists of
questions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from terrarium.store.forms import DAYS_AND_MONTHS
from terrarium.store.lexicon import kind_of
from terrarium.store.subjects import has_number

__all__ = ["asks_count", "asks_when", "asks_where", "form_untold", "is_time_word",
           "tells_amount", "tells_somewhere", "tells_when"]

_TIME_WORDS = frozenset((*DAYS_AND_MONTHS, *"""today tonight tomorrow yesterday morning mornings
afternoon afternoons evening evenings night nights noon midday midnight dawn dusk lunchtime
teatime breakfast lunch dinner weekend weekends week weeks weekday weekdays month months year
years day days hour hours minute minutes moment spring summer autumn fall winter christmas
easter halloween thanksgiving hanukkah diwali eid ramadan new term semester holidays
o'clock am pm daily weekly monthly yearly annually fortnight fortnightly decade decades
century birthday anniversary""".split()))
"""Words of when: a day, a month, a part of the day or the year, a feast."""
_WHEN_WORD = re.compile(r"\b(ago|since|until|till|before|after|during|every|each|soon|later|"
                        r"early|late|once|twice|recently|lately|nowadays|now|when|while|"
                        r"\d+(st|nd|rd|th)?|\w+teenth|\w+tieth)\b", re.I)
"""Words that say when without naming a day ("two years ago", "after the match", "every
Friday", "when I was ten", "1998")."""
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_SPATIAL = re.compile(r"\b(in|at|on|from|to|near|by|under|behind|beside|inside|outside|above|"
                      r"below|beneath|over|opposite|into|onto|off|round|around|across|along|"
                      r"past|up|down|next to|close to|out of|away from)\s+"
                      r"(?:(?:the|a|an|my|our|his|her|their|your|this|that|some|one|its|"
                      r"\w+'s)\s+)?(\w+)", re.I)
"""A preposition of place and the word after it (and after an article or owner): "in a
bakery", "at my sister's flat", "under the mat", "from Ghana"."""
_SOMEWHERE = re.compile(r"\b(home|abroad|overseas|here|there|locally|nearby|upstairs|"
                        r"downstairs|next door|elsewhere|everywhere|somewhere|away)\b", re.I)
_PLACES = ("location", "structure", "establishment", "institution")
"""WordNet's kinds of a place one is at: a shop, a school, a hospital, a farm, a park."""
_CAPITAL = re.compile(r"(?<!^)(?<![.!?]\s)\b(?!I\b|I'm\b|I've\b|I'll\b|I'd\b)[A-Z][A-Za-z0-9]+")
"""A capitalised word past a sentence's first: a name (of a place too: "Leeds is home"), or
a code of one ("My parking space is B14.")."""
_ASKS_WHERE = re.compile(r"^\W*(and\s+|so\s+|remind me\s+|tell me\s+)?(where|where's|"
                         r"whereabouts)\b", re.I)
_ASKS_WHEN = re.compile(r"^\W*(and\s+|so\s+|remind me\s+|tell me\s+)?(when|when's)\b|"
                        r"\b(what|which)\s+(day|date|month)\b|\bwhat\s+time\b|"
                        r"\bat\s+what\s+time\b|\bwhat\s+year\b", re.I)
_ASKS_COUNT = re.compile(r"\bhow\s+(many|old|much)\b|\bwhat\s+age\b", re.I)
_ASKS_AGE = re.compile(r"\bhow\s+old\b|\bwhat\s+age\b", re.I)
_AGE = re.compile(r"\b(teens?|\w+ties|teenager|toddler|baby|babies|newborn|infant|retired|"
                  r"pensioner|grown|grown-up|little|young|old|older|younger|eldest|oldest|"
                  r"youngest|elderly|half|born|birthday|age|aged|kid|puppy|kitten)\b", re.I)
"""Words that say how old without a number ("in her forties", "retired", "a puppy")."""
_AMOUNT = re.compile(r"\b(a|an|few|couple|pair|pairs|twins?|triplets|dozens?|several|both|"
                     r"single|only|lots|lot|loads|many|none|no|half|quarter|another|any|each|"
                     r"every|all|some|plenty|much|more|less|fewer|most|enough|price|cost|"
                     r"costs|paid|pay|free|cheap|expensive)\b|[$£€]", re.I)
"""Words that say how many or how much without a number ("a cat", "twin boys", "a couple
of hens", "loads")."""


def is_time_word(word: str) -> bool:
    """Whether ``word`` says when: a day, a month, a part of the day or year, a number."""
    w = word.lower()
    return (w in _TIME_WORDS or w.removesuffix("s") in _TIME_WORDS  # "on Tuesdays"
            or _WHEN_WORD.fullmatch(w) is not None or has_number(w))


def asks_where(question: str) -> bool:
    """Whether ``question`` asks where ("Where is the wedding?", "Remind me where ...")."""
    return _ASKS_WHERE.match(question) is not None


def asks_when(question: str) -> bool:
    """Whether ``question`` asks when ("When is my conference?", "What day ...?")."""
    return _ASKS_WHEN.search(question) is not None


def asks_count(question: str) -> bool:
    """Whether ``question`` asks a number ("How many players ...?", "How old is Biscuit?")."""
    return _ASKS_COUNT.search(question) is not None


def tells_somewhere(note: str, besides: frozenset[str] = frozenset()) -> bool:
    """Whether ``note`` says where anything is: a preposition of place before a word that is
    no time ("in a bakery", "at the library", "from Ghana"; not "on the fourteenth of
    August", "in June", "at six"), a word of place ("home", "abroad", "next door"), or a
    capitalised name past the sentence's first word that is no day or month. A word of
    ``besides`` (the question's own) is no answer: "Tariq" names whom "Where does Tariq
    live?" asks of, not where."""
    if any(m.group(0).lower() not in besides for m in _SOMEWHERE.finditer(note)):
        return True
    if any(w.lower() not in besides and kind_of(w.lower(), _PLACES)
           for w in _WORD.findall(note) if len(w) > 3):
        return True  # "I own a flower shop.": a shop is a place (WordNet)
    if any(not is_time_word(m.group(2)) and m.group(2).lower() not in besides
           for m in _SPATIAL.finditer(note)):
        return True
    return any(m.group(0).lower().removesuffix("s") not in DAYS_AND_MONTHS
               and m.group(0).lower() not in besides for m in _CAPITAL.finditer(note))


def tells_when(note: str, besides: frozenset[str] = frozenset()) -> bool:
    """Whether ``note`` says when: a day, a month, a time, a year, a part of the day or the
    year, or a word of when ("ago", "after", "every", "since"); a number too ("at six"). A
    word of ``besides`` (the question's own: "birthday" of "When is my birthday?") is no
    answer."""
    return any(is_time_word(w) and w.lower() not in besides for w in _WORD.findall(note))


def tells_amount(note: str, *, age: bool = False) -> bool:
    """Whether ``note`` says how many (or with ``age``, how old): a number, or a word of
    amount ("a", "a couple", "twins") or of age ("retired", "in her forties")."""
    return has_number(note) or (_AGE if age else _AMOUNT).search(note) is not None


def form_untold(question: str, notes: Sequence[str]) -> bool:
    """Whether ``question`` asks a place, a time or a number and no note holds one of that
    form: "Where is the wedding?" after only "Our wedding is on the fourteenth of August.",
    "When is Henrietta's birthday?" after only "My boss is a woman called Henrietta.", "How
    many players are in our team?" after only "Our team is called the Otters."."""
    if not notes:
        return False
    own = frozenset(w.lower() for w in _WORD.findall(question))
    if asks_where(question) and not any(tells_somewhere(n, own) for n in notes):
        return True
    if asks_when(question) and not any(tells_when(n, own) for n in notes):
        return True
    age = _ASKS_AGE.search(question) is not None
    return asks_count(question) and not any(tells_amount(n, age=age) for n in notes)
