"""A correction of what the user just said: the newest word on a subject wins.

People correct themselves in passing: "My name is Jon." then "Actually, it's Jonathan.";
"A table for four." then "No, make that six."; "My train is at seven." then "Oh wait, it's
at nine.". The correction alone ("it's at nine") says nothing a later question can find, and
the statement it corrects says the wrong thing, so recall hands over the statement with the
new value put in (:func:`apply_correction`: "My train is at nine.") in place of both.

The new value takes the place of the previous statement's word of the same kind: a number
(digits, number words, ordinals, times), a day or a month, a colour, or a name (a
capitalised word). A correction whose kind cannot be matched ("Actually, I live in Porto
now.") is a statement of its own: the newer statement wins by recency where it is ranked.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["apply_correction", "correct_inline", "correction_value", "goes_on", "is_correction",
           "marks_change", "opens_aside", "swap_value", "tells_habit", "without_marks"]

_MARKS = re.compile(
    r"^\W*(?:(?:oh|um|uh|er|hmm|well|wait|hang on|sorry|oops|no|nope|actually|correction|"
    r"my mistake|my bad|scratch that|change of plans?|plans? changed|update)\b[\s,.!;:-]*)+", re.I)
"""The words that open a correction: "Actually,", "Oh wait, no,", "Sorry,"."""
_STRONG = re.compile(r"\b(wait|sorry|oops|no|nope|actually|correction|mistake|my bad|"
                     r"scratch that|change of plans?|plans? changed|update)\b", re.I)
_MEANT = re.compile(r"i meant?\s+(?!that\b|it\b|to\b|like\b|you\b)\w", re.I)
"""A correction without a word of correcting before it: "Oh, I mean 42.", "I meant
Tuesday." (not "I mean it.", "I meant to call.")."""
_VALUE = re.compile(
    r"^(?:it's|it is|it was|that's|that is|make (?:that|it)|i meant|i mean|i said|"
    r"it should be|should be|rather|not \w+(?: \w+)?,? but)\s+(?P<value>[^,.;!?]+)", re.I)
"""The new value after the marks: "it's Jonathan", "make that six", "I meant Tuesday"."""

_NUMBER_WORDS = frozenset("""zero one two three four five six seven eight nine ten eleven
twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty
fifty sixty seventy eighty ninety hundred first second third fourth fifth sixth seventh
eighth ninth tenth eleventh twelfth noon midnight half quarter""".split())
_DAYS = frozenset("""monday tuesday wednesday thursday friday saturday sunday today tomorrow
tonight yesterday january february march april may june july august september october
november december""".split())
_COLOURS = frozenset("""red blue green yellow black white grey gray pink purple orange brown
silver gold beige navy""".split())
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9':]*")
_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'll", "I'd"})


def _kind(word: str, *, initial: bool = False) -> str | None:
    """The kind of value ``word`` is, or None: a number, a day, a colour or a name."""
    w = word.lower()
    if re.fullmatch(r"\d+(?::\d+)?(?:st|nd|rd|th|am|pm)?", w) or w in _NUMBER_WORDS:
        return "number"
    if w in _DAYS:
        return "day"
    if w in _COLOURS:
        return "colour"
    if word[:1].isupper() and not initial and word not in _NOT_NAMES:
        return "name"
    return None


def opens_aside(text: str) -> bool:
    """Whether ``text`` opens with a word of hesitation or correcting ("Well, ...", "Hang
    on, ...", "Sorry, ..."): said right after a statement, it goes on about the same thing
    (a softer test than :func:`is_correction`)."""
    return _MARKS.match(text) is not None or is_correction(text)


_GOES_ON = re.compile(r"^\W*(?:(?:and|oh|well|so)\b[\s,]*)?(?:it|it's|its|she|she's|he|he's|"
                      r"they|they're|they've|her|his|their|that's|there|both|one)\b(?!\s+is\s+"
                      r"(?:raining|sunny|cold|hot|late|early)\b)", re.I)


def goes_on(text: str) -> bool:
    """Whether ``text`` opens by pointing back at what was just said ("It's in Swansea,
    right by the beach." after "My brother just bought a house."; "She named it Custard.";
    "We named him Waffles.")
    or is a short hedged fragment ("Probably a cockapoo."): it tells more of the same thing,
    so it belongs with the statement before it."""
    return _GOES_ON.match(text) is not None or _NAMED_IT.match(text) is not None or (
        _HEDGED.match(text) is not None and len(_TOKEN.findall(text)) <= 5)


_NAMED_IT = re.compile(r"^\W*(?:and\s+|so\s+)?(?:we|i)\s+(?:(?:have|'ve|just|finally)\s+)?"
                       r"(?:named|called|call|christened|nicknamed)\s+(?:him|her|it|them)\b", re.I)
"""A statement naming what was just told of by a pronoun: "We named him Waffles." after "My
partner Dana and I just adopted a puppy."."""
_HEDGED = re.compile(r"^\W*(?:probably|maybe|possibly|perhaps|hopefully|likely|most\s+likely|"
                     r"definitely|either)\b(?!\s+(?:i|we|you)\b)", re.I)
"""A short hedged fragment goes on from the statement before it: "Probably a cockapoo."
after "We're thinking of getting a puppy." (not "Maybe I should rest.", a thought of its
own)."""


def without_marks(text: str) -> str:
    """``text`` without the words that open a correction: "Oh wait, they moved it to the
    16th." -> "They moved it to the 16th."."""
    rest = _MARKS.sub("", text, count=1).strip()
    return rest[:1].upper() + rest[1:] if rest else text


def is_correction(text: str) -> bool:
    """Whether ``text`` opens as a correction ("Actually, ...", "No, make that ...")."""
    m = _MARKS.match(text)
    if m is not None and _STRONG.search(m.group(0)):
        return True
    rest = text[m.end() if m else 0:]
    # "Oh, I mean 42.", "Make that seven."
    return _MEANT.match(rest) is not None or _MAKE_THAT.match(rest) is not None


_MAKE_THAT = re.compile(r"make\s+(?:that|it)\s+(?!clear\b|quick\b|snappy\b|work\b|happen\b)\w",
                        re.I)


_AFTER_VALUE = re.compile(r"(?:\s+(?:now|then|instead|actually|after\s+all|though|sorry|"
                          r"anyway))+$", re.I)


def correction_value(text: str) -> str | None:
    """The new value a correction gives ("Actually, it's Jonathan, I prefer it." ->
    "Jonathan"; "Oh wait, no, it's at nine." -> "at nine"), or None: not a correction
    of one value."""
    if not is_correction(text):
        return None
    marks = _MARKS.match(text)  # none before "I meant Tuesday."
    rest = text[marks.end() if marks else 0:]
    m = _VALUE.match(rest)
    if m:  # "it's Sunday now": the word after the value says when, not what
        return _AFTER_VALUE.sub("", m.group("value").strip())
    # "Oh wait, they moved it to the 16th.": one number, day or colour told anew
    tokens = _TOKEN.findall(rest)
    valued = [i for i, t in enumerate(tokens) if _kind(t, initial=i == 0) in ("number", "day",
                                                                               "colour")]
    if len(valued) == 1:
        return tokens[valued[0]]
    if len(valued) > 1 and valued == list(range(valued[0], valued[-1] + 1)) and all(
            _kind(tokens[i]) == "number" for i in valued):
        return " ".join(tokens[i] for i in valued)  # "eight thirty": one time told anew
    return None


def apply_correction(previous: str, correction: str) -> str | None:
    """``previous`` with the value ``correction`` gives in place of its word of the same
    kind ("My flight is at seven." + "Wait, no, it's at nine." -> "My flight is at
    nine."), or None: no value, or none of its kind in ``previous``."""
    value = correction_value(correction)
    if value is None:
        return None
    tokens = _TOKEN.findall(value)
    if not tokens:
        return None
    key = tokens[-1]
    kind = _kind(key)
    if kind == "number":  # "eight thirty" in place of "seven": the number run at the end
        run = list(itertools.takewhile(lambda t: _kind(t) == "number", reversed(tokens)))
        key = " ".join(reversed(run))
    if kind is None and key[:1].isupper():
        kind = "name"
    if kind is None:
        return None
    for i, m in enumerate(_TOKEN.finditer(previous)):
        if _kind(m.group(0), initial=i == 0) == kind:
            new = key if kind == "name" or not m.group(0)[:1].isupper() else key.capitalize()
            return previous[:m.start()] + new + previous[m.end():]
    return None


_CHANGE = re.compile(
    r"\b(?:these\s+days|nowadays|lately|any\s*more|no\s+longer|not\s+any\s+longer|"
    r"instead|changed\s+my\s+mind|gone\s+off|went\s+off|gone\s+back|went\s+back|"
    r"switched|moved\s+on|(?:i|we)\s+(?:now|only)\s+\w+|started\s+\w+ing\b[^.]*\bagain|"
    r"(?:i'm|we're|i\s+am|we\s+are)\s+(?:more\s+)?into\b[^.]*\bnow)\b", re.I)
"""Words telling that what follows replaces what was so before: "These days I prefer
purple.", "I've gone off tea.", "I started eating meat again.", "Now I only drink oat
milk." (not a bare "now": "I'm tired now." changes nothing told)."""


def marks_change(text: str) -> bool:
    """Whether ``text`` (a statement) says a preference or habit changed: the newest word
    on its subject, in place of an older statement of it ("My favourite tea was green." then
    "These days I prefer rooibos.")."""
    return _CHANGE.search(text) is not None


_HABIT = re.compile(r"\b(?:favou?rites?|love|loves|like|likes|prefer|prefers|enjoy|enjoys|into|"
                    r"fan\s+of|used\s+to|always|usually|every|mostly|only)\b", re.I)


def tells_habit(text: str) -> bool:
    """Whether ``text`` tells a liking or a habit ("My favourite fruit is mango.", "I always
    cycle to work."), which a later change replaces; not "My brother lives in Derry."."""
    return _HABIT.search(text) is not None


_PHRASE = r"[A-Za-z0-9][\w'-]*(?:\s+[\w'-]+){0,2}"
_TAKE_BACK = r"^\W*(?:(?:oh|no|sorry|oops|wait|actually|well|um|er)\b[\s,.!]*)*"
"""The marks a correction naming what it takes back may open with ("Oh no, sorry, ...")."""
_NOT_THIS = re.compile(
    _TAKE_BACK + r"not\s+(?P<old>" + _PHRASE +
    r")\s*,?\s+(?:but\s+|it's\s+|it\s+is\s+)?(?P<new>" + _PHRASE + r")"
    r"(?:\s*,?\s*(?:sorry|actually|then|though|my\s+mistake|my\s+bad))?\W*$", re.I)
"""A correction naming the word it takes back first: "Not cats, dogs, sorry."."""
_THIS_NOT = re.compile(
    _TAKE_BACK + r"(?:it's\s+|it\s+is\s+|"
    r"i\s+said\s+|that's\s+)?(?P<new>" + _PHRASE + r")\s*,\s*not\s+(?P<old>" + _PHRASE +
    r")\W*$", re.I)
"""… or last: "It's dogs, not cats.", "Tuesday, not Thursday."."""
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.I)
_FILLER = frozenset("""thanks thank really sure much bad great fine ok okay yet now today at all
i i'm we he she they you it that this""".split())


def swap_value(previous: str, text: str) -> str | None:
    """``previous`` with the word ``text`` takes back replaced by the one it gives ("I'm
    allergic to cats." + "Not cats, dogs, sorry." -> "I'm allergic to dogs."), or None:
    ``text`` is no such correction, or the word taken back is not in ``previous``. Any
    kind of word, since the correction names the one it replaces ("Not bad, thanks." and
    "Not really, I ..." take nothing back)."""
    m = _NOT_THIS.match(text.strip()) or _THIS_NOT.match(text.strip())
    if m is None:
        return None
    old, new = (_ARTICLE.sub("", m.group(k).strip()) for k in ("old", "new"))
    if not old or not new:
        return None
    if {w.lower() for w in (old.split()[0], new.split()[0], new.split()[-1])} & _FILLER:
        return None
    found = re.search(rf"\b{re.escape(old)}\b", previous, re.I)
    if found is None or old.lower() == new.lower():
        return None
    return previous[:found.start()] + new + previous[found.end():]


_INLINE = re.compile(
    r"\s*,\s*(?:(?:oh|um|uh|er|well|no|nope|sorry|wait|hang\s+on|oops|actually|i\s+mean|"
    r"i\s+meant|or\s+rather|rather|my\s+mistake|my\s+bad)\b[\s,.!]*)+", re.I)
"""Words correcting what was just said, inside a sentence: "…, no wait, …", "…, sorry, …",
"three, actually four …", "…, I mean …"."""
_INLINE_STRONG = re.compile(r"\b(no|nope|sorry|wait|hang\s+on|oops|actually|mean|meant|rather|"
                            r"mistake|bad)\b", re.I)
_NEW_CLAUSE = re.compile(r"\s+(?:is|was|are|were|has|had|does|did|will|would|can|could|"
                         r"seems?|looks?|sounds?)\b", re.I)
"""A verb right after the value: what follows the correcting words is a clause of its own."""
_SLIP_NEAR = 2
"""A slip corrected is among the last words before the correcting ones."""
_RESTATED = frozenset("my our his her their the a an".split())
"""A correction restating a phrase opens as it did: "My sister, no wait, my cousin Lena …"."""


def correct_inline(sentence: str) -> str | None:
    """``sentence`` with a correction inside it put in place of what it corrects, or None:
    none. After the correcting words ("…, sorry, …", "…, no wait, …", "…, actually …")
    the rest of the sentence replaces the sentence's last word of the kind the rest opens
    with (a number, a day, a colour, a name: "The party is on Friday, sorry, Saturday the
    fourth." -> "The party is on Saturday the fourth."; "I've got three, actually four
    plants." -> "I've got four plants."), or a phrase restated from its first word ("My
    sister, no wait, my cousin Lena is getting married." -> "My cousin Lena is getting
    married."). Words of another kind after them correct nothing ("I live in Leeds,
    actually, near the station." stays as it is)."""
    text = sentence
    for _ in range(3):  # a sentence may correct itself more than once
        new = _correct_once(text)
        if new is None:
            break
        text = new
    return text if text != sentence else None


def _correct_once(text: str) -> str | None:
    for m in _INLINE.finditer(text):
        if not _INLINE_STRONG.search(m.group(0)):
            continue
        before, rest = text[:m.start()], text[m.end():]
        first = _TOKEN.match(rest)
        if first is None or not before.strip():
            continue
        word = first.group(0)
        kind = _kind(word)
        tokens = list(_TOKEN.finditer(before))
        if kind is not None and _NEW_CLAUSE.match(rest, first.end()):
            continue  # "I love London, actually, Paris is better.": a clause of its own
        if kind is not None:
            same = [(i, t) for i, t in enumerate(tokens) if _kind(t.group(0), initial=i == 0)
                    == kind]
            if not same:
                continue
            i, at = same[-1]
            if i < len(tokens) - _SLIP_NEAR:
                continue  # "I saw Jo on Tuesday, sorry, Mum just called.": no slip corrected
            if kind == "number":  # "eighty two, sorry, eighty three": the run of numbers
                while i > 0 and _kind(tokens[i - 1].group(0)) == "number":
                    i -= 1
                at = tokens[i]
            start = at.start()
        elif word.lower() in _RESTATED:
            same = [i for i, t in enumerate(tokens) if t.group(0).lower() == word.lower()]
            if not same or same[-1] < len(tokens) - _SLIP_NEAR:
                continue
            start = tokens[same[-1]].start()
        else:
            continue
        head = before[:start]
        out = head + rest
        return out[:1].upper() + out[1:] if not head else out
    return None
