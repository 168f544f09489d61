"""The words of a spoken reply, and what they say of the user's words (the reply guard's
measures, apart from its streaming logic in :mod:`terrarium.controller.guard`).

Asked about themselves, the user must hear what they told, not what the 135M model made up
(:func:`invents`: "Ruth, you were born in New York City." after only "My name is Ruth.");
asked anything, an answer that restates the question before answering it repeats the user,
and is said without the restated part (:func:`answer_only`: "It is Canberra.").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from terrarium.store import forms
from terrarium.store.asked import (
    NEAR_IS_ABOUT,
    asks_kind,
    lacks,
    may_refer_by_meaning,
    names_kind_asked,
    points_back,
    refers_by_meaning,
)
from terrarium.store.clauses import sentences, told_part
from terrarium.store.corrections import goes_on, is_correction, opens_aside, without_marks
from terrarium.store.similar import nearness
from terrarium.store.spoken import punctuated
from terrarium.store.subjects import (
    ATTITUDES,
    RELATED,
    about_user,
    has_number,
    is_statement,
    refers_to_told,
    relevant,
    stem,
    subject_terms,
)

__all__ = [
    "AUXILIARIES",
    "LETTER_WORD",
    "NOT_WORDS",
    "NUMBER_WORDS",
    "SAID_BACK_NEAR",
    "WORD",
    "about_question",
    "announces",
    "answer_only",
    "asked_about_user",
    "asked_part",
    "cannot_answer",
    "held_back",
    "invents",
    "lcs",
    "may_restate",
    "misanswers",
    "misses_class",
    "misses_modifier",
    "misses_named",
    "misses_number",
    "names_for_kind",
    "note_about",
    "only_their_name",
    "shares_root",
    "unsure",
    "words",
]

_WORD = re.compile(r"[A-Za-z0-9']+")
WORD = _WORD
"""A word as :func:`words` reads it (for callers that need where each one is)."""
LETTER_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
"""A word of letters, with its contraction ("don't"): where a sentence may be cut after it
(``yes_no_end``, ``pro_form``)."""
NOT_WORDS = frozenset({"not", "never"})
"""What may follow an auxiliary and still belong to it ("should not", "can never")."""


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` (apostrophes kept inside)."""
    return [w.lower().strip("'") for w in _WORD.findall(text)]


def lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence: the user's words repeated in order."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


_NOT_NAMED = frozenset({"i", "i'm", "i've", "i'll", "i'd", "ok", "okay"})
_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve "
                 "thirteen fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_AS_DIGITS = {**{w: str(i) for i, w in enumerate(_NUMBER_WORDS)},
              **{w: str(20 + 10 * i) for i, w in enumerate(_TENS)}}
_AS_WORDS = {d: w for w, d in _AS_DIGITS.items()}
NUMBER_WORDS = frozenset(_AS_DIGITS)
"""Numbers said as words, "zero" to "nineteen" and the tens ("twenty" … "ninety")."""


_COMPOUND = re.compile(r"\b(" + "|".join(_TENS) + r")[- ](one|two|three|four|five|six|"
                       r"seven|eight|nine)\b", re.I)


def _numbers_both_ways(text: str) -> set[str]:
    """The words of ``text``, each number also as digits or as a word: "eight" told, "8"
    said; "fifty-two" told, "52" said."""
    known = set(words(text))
    more = {_AS_DIGITS[w] for w in known if w in _AS_DIGITS}
    more |= {_AS_WORDS[w] for w in known if w in _AS_WORDS}
    for m in _COMPOUND.finditer(text):
        more.add(str(int(_AS_DIGITS[m.group(1).lower()]) + int(_AS_DIGITS[m.group(2).lower()])))
    return known | more


def shares_root(a: str, b: str) -> bool:
    """Whether two word stems share a root the crude stem misses: "snow" and "snowy",
    "climb" and "climber" (one starts the other, at least four letters long, and is at
    most two letters longer: "build" is not "building")."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 4 and long_.startswith(short) and len(long_) - len(short) <= 2


def invents(sentence: str, notes: str, question: str) -> bool:
    """Whether ``sentence`` names something (a capitalised word past its first, or a
    number) that neither what the user told (``notes``) nor ``question`` holds: asked
    "Where was I born?" after "My name is Ruth.", "Ruth, you were born in New York City."
    (a place never told)."""
    known = _numbers_both_ways(f"{notes} {question}")
    for i, m in enumerate(_WORD.finditer(sentence)):
        w = m.group(0).strip("'")
        named = (i > 0 and w[:1].isupper()) or any(c.isdigit() for c in w)
        if named and w.lower() not in known and w.lower() not in _NOT_NAMED:
            return True
    return False


_RESTATED = re.compile(r"^\s*(?P<head>[^,;:]+?)\s+(?P<verb>is|are|was|were)\s+(?P<rest>\S.*)$",
                       re.I | re.S)
_PRONOUN = {"is": "It is", "was": "It was", "are": "They are", "were": "They were"}


_YES_NO = re.compile(r"^\W*(?P<word>yes|no)\b[,.!]?\s+(?P<rest>(?P<who>you|it|they|he|she|we|i)\s+"
                     r"(?P<aux>\w+(?:n't)?)\b.*)$", re.I | re.S)
AUXILIARIES = frozenset("""do don't does doesn't did didn't can can't cannot could couldn't is
isn't are aren't was wasn't were weren't will won't would wouldn't should shouldn't have haven't
has hasn't need needn't must""".split())


def _short_yes_no(user: str, sentence: str) -> str | None:
    """"No, you don't need a plug adapter in Morocco." to "Do I need a plug adapter in
    Morocco?" -> "No, you don't.": a yes or no that says the question again after it."""
    m = _YES_NO.match(sentence)
    if m is None or m.group("aux").lower() not in AUXILIARIES:
        return None
    u = words(user)
    if lcs(words(m.group("rest")), u) < max(3, (len(u) + 1) // 2):
        return None
    return f"{m.group('word').capitalize()}, {m.group('who').lower()} {m.group('aux').lower()}."


def answer_only(user: str, sentence: str) -> str | None:
    """``sentence`` without the question it restates: "The capital of Peru is Lima." to
    "What's the capital of Peru?" -> "It is Lima." (said whole, it repeats the user), "No,
    you don't need a visa." -> "No, you don't."; None when it does not start by restating
    the question (in the user's words, but one)."""
    short = _short_yes_no(user, sentence)
    if short is not None:
        return short
    m = _RESTATED.match(sentence)
    if m is None:
        return None
    head = words(m.group("head"))
    if len(head) < 2 or lcs(head, words(user)) < len(head) - 1:
        return None
    if not words(m.group("rest")):
        return None
    return f"{_PRONOUN[m.group('verb').lower()]} {m.group('rest')}"


def may_restate(user: str, head: str) -> bool:
    """Whether a sentence starting with ``head`` may still be said by :func:`answer_only`:
    it does already, or its words so far restate the question and its verb is still to
    come ("The capital of Peru" ...)."""
    if answer_only(user, head) is not None:
        return True
    ws = words(head)
    return not _COPULA & set(ws) and lcs(ws, words(user)) >= len(ws) - 1


_COPULA = frozenset({"is", "are", "was", "were"})


def asked_part(user: str) -> str:
    """What ``user`` asks, read as a question is (``spoken.punctuated``: a spoken one may
    lack its "?"), without what it told in passing ("Is it safe to fly while pregnant? I'm
    due in August.": the question; the rest is recalled later)."""
    user = punctuated(user)
    if told_part(user):
        user = " ".join(s for s in sentences(user) if not is_statement(s)) or user
    return user


def asked_about_user(user: str, notes: Sequence[str]) -> bool:
    """Whether ``user`` asks about themselves or what they told, so the reply must use the
    ``notes``: a question about them ("Where am I from?"), about something they told
    without "my" ("What colour is the car?" after "My car's a green Skoda."), or one that
    points back at the conversation's subject and was handed notes for it ("How old will
    she be?" after "When is my daughter's birthday?"). Without "my", the notes may be
    linked to it by meaning only ("What colour is the family car?" after "Our hatchback is
    a bright orange Honda.", :func:`refers_by_meaning`, with the encoder loaded). A spoken
    question without its "?" asks all the same (``spoken.punctuated``)."""
    user = asked_part(user)
    if about_user(user) or refers_to_told(user, notes) or (points_back(user) and bool(notes)):
        return True
    near = nearness(user, notes) if notes and may_refer_by_meaning(user) else None
    return bool(near) and refers_by_meaning(user, dict(zip(notes, near, strict=True)))


def cannot_answer(user: str, notes: Sequence[str]) -> bool:
    """Whether nothing the user told (``notes``) can answer ``user``'s question about
    them: nothing was told, or it is about another thing than asked ("my dog's name" after
    only a cat; "Which town am I from?" after only a job): "I don't know that yet." at
    once, without the model. A follow-up's notes were chosen for the conversation's subject
    ("When's that trip?" after "Where am I taking the kids?"): only none is no answer."""
    user = punctuated(user)
    return not notes or (not points_back(user) and (lacks(user, notes)
                                                    or _no_place_named(user, notes)
                                                    or _no_clock_time(user, notes)
                                                    or _no_number_told(user, notes)))


_ASKS_PLACE_KIND = re.compile(r"\b(which|what)\s+(city|town|country|village)\b", re.I)


def _no_place_named(user: str, notes: Sequence[str]) -> bool:
    """Whether ``user`` asks which city, town, country or village, and no note names one
    (a capitalised word past its first): "We live in a flat above a chip shop." tells no
    city (read from the question's form and the note's names, not from a list of places)."""
    return (_ASKS_PLACE_KIND.search(user) is not None
            and not any(forms.tells_place(n) or forms.tells_name(n) for n in notes))


_ASKS_CLOCK = re.compile(r"\bwhat\s+time\b|\bat\s+what\s+time\b", re.I)
_CLOCK_TOLD = re.compile(r"\d|\b(o'clock|noon|midday|midnight|half|quarter|am|pm|one|two|"
                         r"three|four|five|six|seven|eight|nine|ten|eleven|twelve|morning|"
                         r"afternoon|evening|lunchtime|teatime|tonight|first thing)\b", re.I)


def _no_clock_time(user: str, notes: Sequence[str]) -> bool:
    """Whether ``user`` asks what time, and no note tells one (a number, "half nine",
    "noon", a part of the day): "I'm seeing the dentist on Friday." tells a day, no time."""
    return (_ASKS_CLOCK.search(user) is not None
            and not any(_CLOCK_TOLD.search(n) for n in notes))


_NUMBER_ASKED = re.compile(r"\bhow\s+(old|much)\b|\bwhat\s+age\b|"
                           r"\b(what|what's|which)\b[^.?!]*\bnumber\b", re.I)
_SOME_AMOUNT = re.compile(r"\b(\w+teens?|\w+ties|teenager|toddler|baby|newborn|infant|retired|"
                          r"half|quarter|couple|pair|few|dozen|\w+fold)\b|\d", re.I)


def _no_number_told(user: str, notes: Sequence[str]) -> bool:
    """Whether ``user`` asks a number ("how old", "how much", "what age", "which … number")
    and no note holds one (a number, in figures or words, or an amount or an age told in
    words: "in her thirties", "half", "a toddler"): "How old is my cat?" after only "I have
    a cat.", "What's my sister's phone number?" after only "My sister is a teacher." (read
    from the question's form and the notes' words; "how many" is left out: "the twins"
    answers it)."""
    return (_NUMBER_ASKED.search(user) is not None
            and not any(has_number(n) or _SOME_AMOUNT.search(n) for n in notes))


_NOT_KIND = frozenset("""a an the and or but of to in on at for with is am are was were be
have has had my i i'm i've me we our it its this that called named name""".split())


def names_for_kind(sentence: str, notes: str, question: str) -> bool:
    """Whether ``sentence`` answers a question of what kind ("What kind of pet do I
    have?") with a name, not the kind: of what the user told it says only capitalised
    names ("Sheldon"), no word told in lower case ("tortoise")."""
    if not asks_kind(question):
        return False
    asked = {stem(w) for w in words(question)}
    kinds = {stem(m.group(0)) for m in _WORD.finditer(notes)
             if (m.group(0)[:1].islower() or _starts_sentence(notes, m.start()))
             and m.group(0).lower() not in _NOT_KIND} - asked
    said = {stem(w) for w in words(sentence)}
    return kinds.isdisjoint(said) and not any(shares_root(a, b) for a in said for b in kinds)


def _starts_sentence(text: str, at: int) -> bool:
    """Whether the word at ``at`` opens a sentence of ``text`` ("Snowy days ..."): its
    capital says nothing of a name."""
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?"




def _follows(n: str) -> bool:
    """Whether a sentence told right after another goes on about it: an aside or a
    correction ("Well, ...", "Sorry, no, Comet."), or one pointing back ("It's in Swansea.")."""
    return opens_aside(n) or goes_on(n)


def about_question(facts: str, question: str) -> str:
    """The sentences of ``facts`` about what ``question`` asks, with an aside, correction
    or pointing-back sentence told within two sentences after one of them ("My bike is
    called Rocket. I ride it daily. Sorry, no, Comet, with a C."; "My brother bought a
    house. It's in Swansea."): it may name no subject itself, yet an answer from it uses
    what was told about the question."""
    told = sentences(facts)
    keep = {i for i, n in enumerate(told) if relevant(n, question)}
    return " ".join(n for i, n in enumerate(told) if i in keep or (
        (i - 1 in keep or i - 2 in keep) and _follows(n)))


_FEELINGS = frozenset(stem(w) for g in ATTITUDES for w in g) | {stem("dislike")}


def _only_feeling(question: str) -> bool:
    """Whether ``question`` asks only how the user feels ("What did I say I don't like?"):
    then a like or a dislike told is the answer, though it names no subject."""
    own = {stem(w) for w in subject_terms(question, related=False)}
    return bool(own) and own <= _FEELINGS


SAID_BACK_NEAR = 0.18
"""With no note about the question by words or ``NEAR_IS_ABOUT``, a note at least this near
in meaning is still said back when the model's answer fails, if it has the form asked
(session 17: "I had my gallbladder out in April." for "What operation did I have?", 0.27;
"I wear contact lenses, minus three in both eyes." for "what's my prescription", 0.20; on
the dev sets the told answers said "I don't know that yet." this way were 0.20 to 0.32
near, the never-told asks it would have answered wrongly 0.14 ("I love baking bread." for
"What is my favourite film?") or held no number where one was asked)."""


def note_about(question: str, notes: Sequence[str]) -> str | None:
    """The note to say back when the model's answer fails: a sentence about the question's
    subject (by its words, category or form; a like alone is not: "I love baking bread."
    is no favourite film, unless only a like is asked; or at least ``NEAR_IS_ABOUT`` near
    in meaning), with what was told right after it about the same thing; of such, a
    correction wins ("Oh wait, they moved it to the 16th."). The notes come best first
    (recall's order), so the first about it wins, but one that does not say what the
    question asks (:func:`misanswers`: "The class is on Tuesday evenings." for "What
    class do I go to?" when "... my pottery class." was handed too) gives way to a later
    one that does. For a question pointing back ("When is it?"), the first note, chosen
    for the conversation's subject. With none about it, the nearest at least
    ``SAID_BACK_NEAR`` near that has the form asked. A question asking a number is not
    answered by a note without one ("What age is my daughter?" after "My daughter plays
    the violin."). None: nothing to say back."""
    parts = [x for n in notes for x in sentences(n)]
    feel = _only_feeling(question)
    rel = [relevant(n, question, attitudes=feel) for n in parts]
    if not any(rel):  # "Which languages do I know?": "I picked up Portuguese ..." (WordNet)
        rel = [names_kind_asked(n, question) for n in parts]
    near: list[float] = []
    if parts and not rel[0]:  # a note before the first one about it by words may be so
        # by meaning ("Where do I work out?": "My gym is the one next to the station."
        # 0.50, before "I re-read Terry Pratchett every winter.", a place by its form)
        near = nearness(question, parts) or []
    about = [i for i, r in enumerate(rel) if r or (near and near[i] >= NEAR_IS_ABOUT)]
    if not about and points_back(question) and parts:
        about = [0]
    strict = not about  # only near: said back only with the form asked, and not for a
    if strict:  # like alone ("I love gardening." is no favourite book, 0.26 near)
        liked = [not feel and relevant(n, question) for n in parts]
        about = sorted((i for i, x in enumerate(near) if x >= SAID_BACK_NEAR and not liked[i]),
                       key=near.__getitem__, reverse=True)
    told = " ".join(parts)
    said = [_said_back(parts, i) for i in about]
    # the first that says what is asked: a number asked ("How long have I lived in
    # Glasgow?" is answered by "... for ten years", not "I'm from Swansea."), which one
    fit = [s for s in said if not misses_number(s, question)
           and misanswers(s, told, question, first=True) is None]
    if fit:
        return fit[0]
    counted = [s for s in said if not misses_number(s, question)]
    return None if strict or not counted else counted[0]


def _said_back(parts: Sequence[str], i: int) -> str:
    """The note ``parts[i]`` with what was told right after it about the same thing, in at
    most two sentences: a correction alone, without its "Oh wait,"."""
    after = [n for n in parts[i + 1:i + 3] if _follows(n)]
    fixes = [n for n in after if is_correction(n)]
    return without_marks(fixes[-1]) if fixes else " ".join([parts[i], *after[:1]])


_ASKS_NUMBER = re.compile(r"\bhow\s+(old|many|much|tall|heavy|far|long)\b|"
                          r"\b(what|which)('s|\s+is)?\s+(my\s+|the\s+)?(number|year|age)\b|"
                          r"\b(my|our|the|his|her)\s+(rating|score|weight|height|age|salary|"
                          r"rent|budget|handicap|pin|price)\b", re.I)
"""A question asking a number: "how old", "what year", "my weight"."""


def misses_number(sentence: str, question: str) -> bool:
    """Whether ``sentence`` answers a question asking a number ("How old am I?", "How many
    kids do I have?") without one: "You're a taxi driver right?" uses what was told, but
    not the number asked."""
    return (_ASKS_NUMBER.search(question) is not None and not has_number(sentence)
            and not _ORDINAL_LIKE.search(sentence))


_ORDINAL_LIKE = re.compile(r"\b(final|last|first|next|\w+teenth|\w+ieth)\b", re.I)
"""Which year: "your final year" answers it as "your second year" does."""


_ASKS_NAMED = re.compile(r"^\W*(and\s+)?(where|where's|when|when's|who|who's|whose)\b|"
                         r"\b(what|which)\s+(city|town|country|day|date|street|place)\b|"
                         r"\bwhat\s+time\b|\b(names?|called)\b", re.I)
_NAMED_WORD = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z]+\b|\b\d+[a-z]*\b")


def misses_named(sentence: str, told: str, question: str) -> bool:
    """Whether ``sentence`` answers a question of where, when, who or what name ("Where's
    my cousin's flat?") without any of the names, places, days or numbers ``told`` holds
    beyond the question's own: "Your cousin rented a flat." after "My cousin rented a flat.
    It's above the bakery on Queen Street." restates what was told, not what was asked."""
    if _ASKS_NAMED.search(question) is None:
        return False
    asked = set(words(question))
    said = _numbers_both_ways(sentence)
    when = forms.time_words(told) - asked if forms.asks_time(question) else set()
    if when and not forms.asks_place(question):
        # "When?" after "We're off to Oslo in May.": "Oslo" is no answer, "May" is
        return not when & said
    said |= {w[:-2] for w in said if w.endswith("'s")}  # "at Nonna's": "nonna"
    if forms.asks_place(question) and not forms.asks_time(question):
        # where: a name after "in", "at", "on" ... is a place, a day or a person is not
        # ("Where did I book?": "At eight on Saturday." names no place of "... at Nonna's")
        named = _places(told) - forms.time_words(told) - asked
    else:
        named = {m.group(0).lower() for m in _NAMED_WORD.finditer(told)} - asked
    named -= _NOT_NAMED
    return bool(named) and not named & said


_AT_PLACE = re.compile(r"\b(in|from|to|at|near|outside|around|by|on|off|above|behind|"
                       r"opposite|past|into)\s+(the\s+)?$", re.I)


def _places(told: str) -> set[str]:
    """The names ``told`` puts after a word of place ("in Leeds", "on Queen Street", "at
    Nonna's"), each word of a name of several."""
    out: set[str] = set()
    last = -1
    for m in _NAMED_WORD.finditer(told):
        if _AT_PLACE.search(told[:m.start()]) or (last >= 0 and not told[last:m.start()].strip()):
            out.add(m.group(0).lower())
            last = m.end()
        else:
            last = -1
    return out


_UNSURE = re.compile(r"\b(i'm|i am)\s+not\s+sure\b|\bi\s+(don't|do\s+not)\s+know\b|"
                     r"\bno\s+idea\b", re.I)


def unsure(sentence: str) -> bool:
    """Whether ``sentence`` says the speaker does not know or is not sure ("No, I'm not sure
    of that."): after something was spoken (the told fact said first with advice, an
    answer) it takes back what was said, and the guard does not speak it (session 17: three
    of the five replies on dev6 to dev8 that gave up unasked were such)."""
    return _UNSURE.search(sentence) is not None


_LEAD_IN = re.compile(r"^\W*(sure[,!.]?\s+|okay[,!.]?\s+|of course[,!.]?\s+)?(here\s+(are|is)|"
                      r"here's|these\s+are|the\s+following)\b", re.I)


def announces(head: str) -> bool:
    """Whether a sentence starting with ``head`` announces what follows ("Here are some
    tips for sleeping during the day: 1."): it restates the request and says nothing
    itself, so it is not spoken from its start but judged whole (the echo rule)."""
    return _LEAD_IN.match(head) is not None


_THEIR_NAME = re.compile(r"\b(?:I'm|I am|my name is|call me|name's)\s+([A-Z][a-z]+)")
_ASKS_NAME = re.compile(r"\b(name|names|called|call|who)\b", re.I)


def only_their_name(head: str, notes: str, question: str) -> bool:
    """Whether ``head`` uses nothing of what was told but the user's own name ("You're
    Bilal, ..." to "What do I do for a living?"): it addresses them, and has not answered
    yet, so it is not spoken from its start (a name question is answered by it)."""
    if _ASKS_NAME.search(question):
        return False
    theirs = {m.group(1).lower() for m in _THEIR_NAME.finditer(notes)}
    if not theirs:
        return False
    told = {w for w in words(notes) if w not in theirs and w not in _NOT_KIND}
    told -= set(words(question))
    said = set(words(head))
    return bool(said & theirs) and not said & told


def held_back(head: str, told: str, notes: str, question: str) -> bool:
    """Whether the start ``head`` of an answer about the user (which uses the notes
    ``told`` about the question, or else any ``notes``) must wait for more before it is
    spoken: it names where a kind was asked, has no number where one was asked, or uses
    only the user's name."""
    return (names_for_kind(head, told or notes, question) or misses_number(head, question)
            or misses_class(head, told or notes, question)
            or misses_named(head, told, question) or only_their_name(head, notes, question)
            or misses_modifier(head, told or notes, question))


def _group(word: str, *, less: str = "") -> frozenset[str]:
    """The stems of the everyday category holding ``word``, without the words ``less``."""
    group = next(g for g in RELATED if word in g)
    return frozenset(stem(w) for w in group - set(less.split()))


_CLASSES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"\b(colou?rs?)\b", re.I), _group("purple", less="colour color colours colors")),
    (re.compile(r"\b(breed|breeds|what kind of dog)\b", re.I),
     _group("collie", less="dog dogs puppy pup")),
    (re.compile(r"\b(make|brand|what car)\b", re.I),
     _group("volvo", less="car cars drive drives vehicle bike motorbike motorcycle ride rides "
                          "make brand model")),
    (re.compile(r"\b(which|what) (day|month)\b|\bwhat date\b", re.I),
     _group("tuesday", less="time day date today tonight tomorrow morning afternoon evening "
                            "night week weekend o'clock noon midnight")),
    (re.compile(r"\bweather\b", re.I), _group("rainy", less="weather")),
)
"""Questions whose answer is one word of a known class (a colour, a breed, a make, a day or
month, a kind of weather): the word told of that class must be said."""


def misses_class(sentence: str, told: str, question: str) -> bool:
    """Whether ``sentence`` answers a question of a colour, breed, make, day or weather ("What
    colour is it?") without the word of that class ``told`` holds ("white"): "The van is a
    VW." uses what was told, but not what was asked."""
    said = {stem(w) for w in words(sentence)}
    for asks, members in _CLASSES:
        if not asks.search(question):
            continue
        given = {stem(w) for w in words(told)} & members
        if given and not any(g in said or any(shares_root(g, w) for w in said) for g in given):
            return True
    return False


_WHICH = re.compile(r"\b(which|what)\s+(?:kind\s+of\s+|sort\s+of\s+|type\s+of\s+)?([a-z]+)\b",
                    re.I)


def misses_modifier(sentence: str, told: str, question: str) -> bool:
    """Whether ``sentence`` answers "Which seat do I like?" (which or what of a thing) after
    "Book me a window seat." without the word ``told`` puts before that thing ("window"):
    the told word that tells which one. Read from the question's form and the note's order
    of words, not from a list: "You can book a seat." uses "book", but not what was asked."""
    m = _WHICH.search(question)
    if m is None:
        return False
    head = stem(m.group(2))
    told_words = words(told)
    asked = {stem(w) for w in words(question)}
    which = {stem(b) for b, w in itertools.pairwise(told_words)
             if stem(w) == head and b not in _NOT_KIND and stem(b) not in asked}
    said = {stem(w) for w in words(sentence)}
    return bool(which) and which.isdisjoint(said)


def misanswers(sentence: str, told: str, question: str, *, first: bool) -> str | None:
    """Why ``sentence`` (the ``first`` of a reply, or a later one) does not answer what
    ``question`` about the user asks, though it uses what they ``told``; None: it may."""
    if names_for_kind(sentence, told, question):
        return "a name where a kind was asked"
    if first and misses_number(sentence, question):
        return "no number where one was asked"
    if first and misses_named(sentence, told, question):
        return "none of the names told where one was asked"
    if first and misses_class(sentence, told, question):
        return "not the word told of the kind asked (a colour, a day, a breed)"
    if first and misses_modifier(sentence, told, question):
        return "not the word told of which one was asked"
    return None
