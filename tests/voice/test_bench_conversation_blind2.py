"""The blind dialogue sets of ``bench/conversation.py`` written at the end (issue 30:
``blind2``, ``blind3`` of session 10, ``blind4`` of session 11, ``blind5`` of session 13,
``blind6`` of session 14, ``blind7`` of session 15, ``blind8`` of session 18, ``blind9``
of session 19, ``blind10`` of session 20 and ``blind11`` of session 24) are well formed: each
loads through the benchmark's own loader as ``--set <name>`` (and in ``--set all``, not in
the default), is big enough to judge by, and every recall ask can be answered from what the
user said before it — and only from that: not from the question's own words, and not by a
reply that happens to contain a common word. The model is not run here."""

from __future__ import annotations

import re
import sys
from types import ModuleType
from typing import NamedTuple

import pytest

from tests.script_loader import ROOT, load_script

bench = load_script(ROOT / "bench" / "conversation.py", "bench_conversation")
UNKNOWN = sys.modules["conversation_data"].UNKNOWN


class Size(NamedTuple):
    """The least each set must hold (each later brief asked for more than the one before)."""

    dialogues: int
    asks: int
    never_said: int


SIZES = {"blind2": Size(60, 70, 6), "blind3": Size(100, 110, 10),
         "blind4": Size(120, 150, 12), "blind5": Size(150, 180, 15),
         "blind6": Size(150, 180, 15), "blind7": Size(150, 180, 15),
         "blind8": Size(150, 180, 15), "blind9": Size(150, 180, 15),
         "blind10": Size(150, 180, 15), "blind11": Size(150, 180, 15)}
SETS = pytest.mark.parametrize("name", sorted(SIZES))


def data(name: str) -> ModuleType:
    """The set's own module (``bench/conversation_<name>.py``), loaded by the benchmark."""
    return sys.modules[f"conversation_{name}"]

# Words any reply may contain: an expected word inside one of them would score by chance
# ("two" in "network", "owl" in "knowledge", "cat" in "category").
COMMON = frozenset("""
the and you your yours that this there they them then than what when where which who
how why with without about from into over under after before again also just only really
know knowledge don't didn't not sorry remember recall told tell said say mention name
names help happy great good nice like love liked favourite favorite food work working
live living home house city town place country family friend friends people person time
today tonight tomorrow yesterday week weekend month year years day days morning evening
night often always never sometimes someone anyone everyone something anything nothing
network phone done gone weight height listen answer question questions information
category education important different interesting certainly course sure maybe perhaps
think thought could would should might must will can here hear heard well still able
thanks thank welcome please great okay yes right wrong true first last next other another
many much more most some any every each all both few little long short high low old new
young big small same sure sounds enjoy enjoyed hope wonderful lovely delicious
""".split())
NUMBER_WORDS = frozenset("""
one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
hundred thousand and
""".split())
# The words of a question that are not its subject.
ASK_WORDS = frozenset("""
what which who whom how when where why is are was do does did i my me s the a an in of to
for at on you your remember remind tell again please can could
""".split())
INDIRECT = re.compile(r"^(remind me|do you (still )?remember|can you (tell|say)|tell me|"
                      r"i forgot)|did (i|the \w+) (say|tell)|\bagain\?$", re.I)


def _asks(name: str) -> list[tuple[str, tuple[str, ...], str]]:
    """Every recall ask: (question, expected words, what the user said before it)."""
    out = []
    for dialogue in bench.SETS[name]():
        earlier = ""
        for say in dialogue:
            if say.expect and say.expect != (UNKNOWN,):
                out.append((say.text, say.expect, earlier))
            earlier += " " + say.text
    return out


@SETS
def test_the_set_loads_as_its_own_set_and_in_all_only(name: str) -> None:
    dialogues = bench.SETS[name]()
    assert len(dialogues) >= SIZES[name].dialogues
    assert len(dialogues) == len(getattr(data(name), name.upper()))
    assert all(isinstance(say, bench.Say) and say.text for d in dialogues for say in d)
    assert all(2 <= len(d) <= 7 for d in dialogues)
    assert name in bench.GROUPS["all"]
    assert name not in bench.GROUPS["both"]  # the default run is unchanged
    # a dialogue is known by its number: no two are the same, no telling is said twice
    assert len({tuple(say.text for say in d) for d in dialogues}) == len(dialogues)
    tellings = [d[0].text for d in dialogues if not d[0].expect]
    assert len(set(tellings)) == len(tellings)


@SETS
def test_every_recall_ask_is_answered_by_an_earlier_turn_and_not_by_itself(name: str) -> None:
    asks = _asks(name)
    assert len(asks) >= SIZES[name].asks
    for question, expect, earlier in asks:
        assert UNKNOWN not in expect, question
        # the form listed first is the one the user said
        assert expect[0].lower() in earlier.lower(), question
        assert not any(e.lower() in question.lower() for e in expect), question


@SETS
def test_expected_words_are_not_common_words_nor_parts_of_them(name: str) -> None:
    for question, expect, _ in _asks(name):
        first = expect[0]
        assert len(first) >= 4 or (any(c.isdigit() for c in first) and len(first) >= 2), \
            (question, first)
        for e in expect:
            low = e.lower()
            if set(re.findall(r"[a-z]+", low)) <= NUMBER_WORDS:
                continue  # "twenty twelve", "sixty-two": number forms the issue asks for
            assert not any(low in w for w in COMMON), (question, e)


@SETS
def test_the_set_has_each_kind_of_turn_the_brief_asks_for(name: str) -> None:
    turns = [say for d in bench.SETS[name]() for say in d]
    never_said = [s for s in turns if s.expect == (UNKNOWN,)]
    ordinary = [s for s in turns if not s.expect and s.text.endswith("?")]
    indirect = [s for s in turns if s.expect and s.expect != (UNKNOWN,)
                and INDIRECT.search(s.text)]
    assert len(never_said) >= SIZES[name].never_said
    assert len(ordinary) >= 25  # questions not about the user, to be answered
    assert len(indirect) >= 10
    cats = data(name).BY_CATEGORY
    assert all(len(ds) >= 3 for ds in cats.values()), {k: len(v) for k, v in cats.items()}
    # some asks come three to five turns after what they ask for
    assert len(cats["after a longer gap"]) >= 3
    for d in cats["after a longer gap"]:
        first_ask = next(i for i, t in enumerate(d) if len(t) > 1)
        assert first_ask >= 4, d


@SETS
def test_never_said_asks_follow_nothing_that_answers_them(name: str) -> None:
    """Only in the never-said dialogues, only as their last turn, and the question names a
    subject the dialogue never mentioned ("cat" after a rabbit, "city" after a flat)."""
    dialogues = data(name).BY_CATEGORY["never said"]
    assert len(dialogues) >= SIZES[name].never_said
    for d in dialogues:
        assert [t for t in d if len(t) > 1] == [d[-1]] and d[-1][1:] == (UNKNOWN,)
        before = set(re.findall(r"[a-z]+", " ".join(t[0] for t in d[:-1]).lower()))
        subject = set(re.findall(r"[a-z]+", d[-1][0].lower())) - ASK_WORDS
        assert subject - before, d
    others = [t for k, ds in data(name).BY_CATEGORY.items() if k != "never said"
              for d in ds for t in d]
    assert not any(UNKNOWN in t[1:] for t in others)


# The kinds of turn blind4's brief named (more than blind3's); blind5's brief names the
# same with dates as "dates and birthdays", and asks for two or three kinds of the writer's own;
# blind6's, blind7's, blind8's, blind9's, blind10's and blind11's briefs the same as blind5's.
KINDS = ("names and nicknames", "origin and home", "places", "pets", "allergies and diet",
         "health", "dates", "family", "work and study", "likes and dislikes", "numbers",
         "vehicles and possessions", "schedules and plans", "languages", "hobbies",
         "preferences changed later", "corrections", "follow-ups", "asked in other words",
         "several facts at once", "after a longer gap", "advice that depends on a told fact",
         "never said", "ordinary questions only")
BRIEFED = {"blind4": KINDS,
           "blind5": tuple("dates and birthdays" if k == "dates" else k for k in KINDS)}
BRIEFED["blind6"] = BRIEFED["blind7"] = BRIEFED["blind8"] = BRIEFED["blind9"] = BRIEFED["blind5"]
BRIEFED["blind10"] = BRIEFED["blind11"] = BRIEFED["blind5"]


@pytest.mark.parametrize("name", sorted(BRIEFED))
def test_the_set_has_the_categories_its_brief_names_and_repeats_no_other_set(name: str) -> None:
    """A set written blind must not happen to repeat another set's telling or ask word for
    word (it would not be new)."""
    cats = data(name).BY_CATEGORY
    for kind in BRIEFED[name]:
        assert len(cats.get(kind, [])) >= 5, kind
    assert not any(len(turn) > 1 for d in cats["ordinary questions only"] for turn in d)
    mine = {_plain(say.text) for d in bench.SETS[name]() for say in d}
    mine = {text for text in mine if len(text) > 20}  # "thanks", "good morning" may recur
    for other in [n for n in bench.SETS if n != name]:
        theirs = {_plain(say.text) for d in bench.SETS[other]() for say in d}
        shared = sorted(mine & theirs)  # only these are shown: a blind writer reads no other set
        assert not shared, (other, shared)


# How many categories of the writer's own each brief asked for: blind5's two or three;
# blind6's two or three, and its session's extra named four more examples to add; blind7's
# two or three; blind8's, blind9's, blind10's and blind11's two or three.
OWN_KINDS = {"blind5": (2, 3), "blind6": (2, 4), "blind7": (2, 3), "blind8": (2, 3),
             "blind9": (2, 3), "blind10": (2, 3),
             "blind11": (2, 3)}


@pytest.mark.parametrize("name", sorted(OWN_KINDS))
def test_the_set_has_kinds_of_its_own_and_no_category_too_big_or_small(name: str) -> None:
    """blind5's to blind11's briefs: five to fourteen dialogues a category
    (fifteen for the never-said asks they want about fifteen of), about 150-170 dialogues,
    about 180-200 recall asks, categories the writer added, and no more than about fifteen
    never-said asks."""
    cats = data(name).BY_CATEGORY
    least, most = OWN_KINDS[name]
    assert least <= len(set(cats) - set(BRIEFED[name])) <= most, sorted(cats)
    assert all(5 <= len(ds) <= 14 for k, ds in cats.items() if k != "never said"), \
        {k: len(v) for k, v in cats.items()}
    assert 13 <= len(cats["never said"]) <= 17
    assert 150 <= len(bench.SETS[name]()) <= 170
    assert 180 <= len(_asks(name)) <= 200


@pytest.mark.parametrize(("name", "in_passing"), [("blind6", 5), ("blind7", 8)])
def test_asks_in_other_words_and_told_in_passing_facts(name: str, in_passing: int) -> None:
    """blind6's brief asked for more facts told in passing and more asks worded unlike the
    telling than blind5 had (blind7's for eight or more of each): those categories are
    there, and in "asked in other words" the ask shares no word but function words with
    what it asks for (the answer is a word the telling used and the ask does not)."""
    cats = data(name).BY_CATEGORY
    assert len(cats["told in passing"]) >= in_passing
    assert len(cats["asked in other words"]) >= 8
    for d in cats["asked in other words"]:
        for i, turn in enumerate(d):
            if len(turn) > 1:
                told = set(re.findall(r"[a-z]+", " ".join(t[0] for t in d[:i]).lower()))
                asked = set(re.findall(r"[a-z]+", turn[0].lower())) - ASK_WORDS
                assert not any(e.lower() in asked for e in turn[1:]), turn
                assert asked - told, turn  # worded otherwise, not the telling turned round


# The kinds blind7's brief gave weight to, eight to twelve dialogues each.
WEIGHTED7 = ("told in passing", "follow-ups", "asks without my", "health",
             "schedules and plans", "asked in other words", "other people's facts")
_LEANS = re.compile(r"^and\b|\b(he|she|it|his|her|they|them|their)\b", re.I)


def test_blind7_weights_what_its_brief_asked_for() -> None:
    """blind7's brief: eight to twelve dialogues of each weighted kind; the asks "without
    my" have no "my"; a follow-up's later ask leans on the one before (a pronoun or "and
    …") instead of naming its subject again; and some asks come after five turns."""
    cats = data("blind7").BY_CATEGORY
    assert all(8 <= len(cats[k]) <= 12 for k in WEIGHTED7), {k: len(cats[k]) for k in WEIGHTED7}
    for d in cats["asks without my"]:
        asks = [t[0] for t in d if len(t) > 1]
        assert asks and not any(re.search(r"\bmy\b", a, re.I) for a in asks), d
    for d in cats["follow-ups"]:
        asks = [t[0] for t in d if len(t) > 1]
        assert len(asks) >= 2 and all(_LEANS.search(a) for a in asks[1:]), d
    firsts = [next(i for i, t in enumerate(d) if len(t) > 1) for d in cats["after a longer gap"]]
    assert sum(i >= 5 for i in firsts) >= 1, firsts


def _plain(text: str) -> str:
    """The words of a turn, without case or punctuation: "Hi!" is "hi"."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


_YES_NO = re.compile(r"^(am|is|are|do|does|did|can|have|has|was)\b", re.I)
_REQUEST = re.compile(r"^(remind me|tell me)\b", re.I)


def test_blind8_has_the_turns_its_brief_asked_for() -> None:
    """blind8's brief: about 25-35 ordinary questions of the world or small talk, of 3-14
    words, most in their own category; asks phrased as requests ("remind me …") and as yes/no
    questions; the asks "in other words" worded unlike the telling; an ask five turns after
    its telling."""
    cats = data("blind8").BY_CATEGORY
    turns = [say for d in bench.SETS["blind8"]() for say in d]
    ordinary = [s.text for s in turns if not s.expect and s.text.endswith("?")]
    assert 25 <= len(ordinary) <= 35, len(ordinary)
    assert all(3 <= len(text.split()) <= 14 for text in ordinary), ordinary
    own = [t[0] for d in cats["ordinary questions only"] for t in d if t[0].endswith("?")]
    assert len(own) > len(ordinary) / 2
    asks = [s.text for s in turns if s.expect and s.expect != (UNKNOWN,)]
    assert sum(bool(_REQUEST.search(a)) for a in asks) >= 4
    assert sum(bool(_YES_NO.search(a)) for a in asks) >= 5
    for d in cats["asked in other words"]:
        for i, turn in enumerate(d):
            if len(turn) > 1:
                told = set(re.findall(r"[a-z]+", " ".join(t[0] for t in d[:i]).lower()))
                asked = set(re.findall(r"[a-z]+", turn[0].lower())) - ASK_WORDS
                assert not any(e.lower() in asked for e in turn[1:]), turn
                assert asked - told, turn
    firsts = [next(i for i, t in enumerate(d) if len(t) > 1) for d in cats["after a longer gap"]]
    assert sum(i >= 5 for i in firsts) >= 1, firsts


_QUESTION = re.compile(r"^(what|whats|why|how|is|are|can|could|do|does|should|which|who|"
                       r"where|when)\b", re.I)
_CORRECTED = re.compile(r"\b(no wait|sorry|i mean|no hang on|correction|scratch that|"
                        r"actually)\b|\b(\d+|\w+) no \d+\b", re.I)
_HEDGED = re.compile(r"\bi think\b|don't quote me|i'm sure", re.I)
_NEGATED = re.compile(r"\b(don'?t|can'?t|not|never|no)\b", re.I)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def _ordinary(cats: dict[str, list[list[tuple[str, ...]]]]) -> tuple[list[str], list[str]]:
    """The ordinary questions of a set: those of their own category, and those between
    tellings and asks elsewhere."""
    own = [t[0] for d in cats["ordinary questions only"] for t in d
           if t[0].endswith("?") or _QUESTION.search(t[0])]
    elsewhere = [t[0] for k, ds in cats.items() if k != "ordinary questions only"
                 for d in ds for t in d if len(t) == 1 and t[0].endswith("?")]
    return own, elsewhere


def _close_asks_other_words_and_a_gap(cats: dict[str, list[list[tuple[str, ...]]]]) -> None:
    """What blind9's and blind10's briefs both asked for: never-said asks next to what was
    told, asks "in other words" worded unlike the telling, an ask five turns after it."""
    close = [d for d in cats["never said"]
             if (_words(d[-1][0]) - ASK_WORDS) & _words(" ".join(t[0] for t in d[:-1]))]
    assert len(close) >= 5, close
    for d in cats["asked in other words"]:
        for i, turn in enumerate(d):
            if len(turn) > 1:
                asked = _words(turn[0]) - ASK_WORDS
                assert not any(e.lower() in asked for e in turn[1:]), turn
                assert asked - _words(" ".join(t[0] for t in d[:i])), turn
    firsts = [next(i for i, t in enumerate(d) if len(t) > 1) for d in cats["after a longer gap"]]
    assert sum(i >= 5 for i in firsts) >= 1, firsts


def test_blind9_has_the_turns_its_brief_asked_for() -> None:
    """blind9's brief: about 35-45 ordinary questions of the world or small talk, of 3-14
    words, most in their own category (there, some said without a question mark, as speech
    to text gives them); asks as requests and as yes/no questions; self-corrections, hedged
    tellings and negations; never-said asks next to what was told (the dog's name told, its
    age asked); asks "in other words" worded unlike the telling; an ask five turns after its
    telling."""
    cats = data("blind9").BY_CATEGORY
    own, elsewhere = _ordinary(cats)
    ordinary = own + elsewhere
    assert 35 <= len(ordinary) <= 45, len(ordinary)
    assert all(3 <= len(text.split()) <= 14 for text in ordinary), ordinary
    assert len(own) > len(ordinary) / 2 and elsewhere
    assert any(not text.endswith("?") for text in own)
    turns = [say for d in bench.SETS["blind9"]() for say in d]
    asks = [s.text for s in turns if s.expect and s.expect != (UNKNOWN,)]
    tellings = [s.text for s in turns if not s.expect]
    assert sum(bool(_REQUEST.search(a)) for a in asks) >= 4
    assert sum(bool(_YES_NO.search(a)) for a in asks) >= 5
    assert sum(bool(_CORRECTED.search(t)) for t in tellings) >= 8
    assert sum(bool(_HEDGED.search(t)) for t in tellings) >= 3
    assert sum(bool(_NEGATED.search(t)) for t in tellings) >= 8
    # without punctuation, as speech to text gives it: no capital, no full stop or comma
    assert sum(not re.search(r"[A-Z.,!?]", t) for t in tellings) >= 40
    _close_asks_other_words_and_a_gap(cats)


_EITHER_OR = re.compile(r"\bor\b.*\?$", re.I)


def test_blind10_has_the_turns_its_brief_asked_for() -> None:
    """blind10's brief: about 35-45 ordinary questions of the world or small talk, of 3-16
    words, some long (10-16 words), most in their own category, some between tellings and
    asks; asks as "do you remember …", "what did I say …", "can you remind me …" and as
    either-or questions (the told word expected, not said in the ask); two people's facts in
    one turn; facts told inside stories; British and American spellings; never-said asks
    next to what was told; asks "in other words" worded unlike the telling; an ask after
    unrelated turns, one five turns after its telling."""
    cats = data("blind10").BY_CATEGORY
    own, elsewhere = _ordinary(cats)
    ordinary = own + elsewhere
    assert 35 <= len(ordinary) <= 45, len(ordinary)
    assert all(3 <= len(text.split()) <= 16 for text in ordinary), ordinary
    assert sum(10 <= len(text.split()) <= 16 for text in ordinary) >= 5
    assert len(own) > len(ordinary) / 2 and elsewhere
    turns = [say for d in bench.SETS["blind10"]() for say in d]
    asks = [s.text for s in turns if s.expect and s.expect != (UNKNOWN,)]
    tellings = " ".join(s.text for s in turns if not s.expect)
    assert sum(a.lower().startswith("do you remember") for a in asks) >= 3
    assert sum(bool(re.search(r"\bdid i say\b", a, re.I)) for a in asks) >= 3
    assert sum(a.lower().startswith("can you remind me") for a in asks) >= 2
    assert sum(bool(_EITHER_OR.search(a)) for a in asks) >= 5
    for d in cats["either-or asks"]:
        assert any(_EITHER_OR.search(t[0]) for t in d if len(t) > 1), d
    assert len(cats["two people in one turn"]) >= 5
    assert len(cats["told inside a story"]) >= 5
    assert re.search(r"\bcolou?r\b", tellings) and re.search(r"\bcolou?r-", tellings)
    assert re.search(r"favourite", tellings) and re.search(r"favorite", tellings)
    _close_asks_other_words_and_a_gap(cats)


_DOING = re.compile(r"^(should i|is it okay to|can i)\b", re.I)
_HOW_OFTEN = re.compile(r"^how (long|often) should\b", re.I)


def test_blind11_has_the_turns_its_brief_asked_for() -> None:
    """blind11's brief: about 40-50 ordinary questions of the world or small talk, of 3-16
    words, some long, most in their own category, the rest between tellings and asks, as
    people ask a voice assistant ("Should I …", "Is it okay to …", "Can I …", "do … really
    …", "what's the best way to …", "how long/often should I …"); asks as "remind me …",
    "do you remember …", "what did I say …" and either-or; facts told in passing; British
    and American spellings; never-said asks next to what was told; asks "in other words"
    worded unlike the telling; an ask after several unrelated turns."""
    cats = data("blind11").BY_CATEGORY
    own, elsewhere = _ordinary(cats)
    ordinary = own + elsewhere
    assert 40 <= len(ordinary) <= 50, len(ordinary)
    assert all(3 <= len(text.split()) <= 16 for text in ordinary), ordinary
    assert sum(10 <= len(text.split()) <= 16 for text in ordinary) >= 5
    assert len(own) > len(ordinary) / 2 and elsewhere
    assert sum(bool(_DOING.search(t)) for t in ordinary) >= 6
    assert sum(bool(re.search(r"^(do|does)\b.*\breally\b", t, re.I)) for t in ordinary) >= 3
    assert sum(bool(re.search(r"\bbest way\b", t, re.I)) for t in ordinary) >= 2
    assert sum(bool(_HOW_OFTEN.search(t)) for t in ordinary) >= 3
    turns = [say for d in bench.SETS["blind11"]() for say in d]
    asks = [s.text for s in turns if s.expect and s.expect != (UNKNOWN,)]
    tellings = " ".join(s.text for s in turns if not s.expect)
    assert sum(bool(_REQUEST.search(a)) for a in asks) >= 3
    assert sum(a.lower().startswith("do you remember") for a in asks) >= 3
    assert sum(bool(re.search(r"\bdid i say\b", a, re.I)) for a in asks) >= 3
    assert sum(bool(_EITHER_OR.search(a)) for a in asks) >= 5
    for d in cats["either-or asks"]:
        assert any(_EITHER_OR.search(t[0]) for t in d if len(t) > 1), d
    assert len(cats["told in passing"]) >= 5
    assert re.search(r"\bcolour", tellings) and re.search(r"\bcolor\b", tellings)
    assert re.search(r"favourite", tellings) and re.search(r"favorite", tellings)
    _close_asks_other_words_and_a_gap(cats)
