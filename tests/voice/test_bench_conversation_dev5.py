"""The session 13 second-round dev cases of ``bench/conversation.py`` (``--set dev5``) are
well formed: they load through the benchmark's own loader, every recall ask's first expected
word was said by the user before it (not in the question itself), and ``bench/retrieval.py``
(the notes without a model, counted as the speaker's template shows them) hands every
answer over, the later value where the user changed it. The model is not run here."""

from __future__ import annotations

import sys

import anyio
import pytest

from terrarium.store.lexicon import lexicon
from tests.script_loader import ROOT, load_script

bench = load_script(ROOT / "bench" / "conversation.py", "bench_conversation")
retrieval = load_script(ROOT / "bench" / "retrieval.py", "bench_retrieval")
UNKNOWN = sys.modules["conversation_data"].UNKNOWN


def test_dev5_loads_and_every_ask_was_told_before() -> None:
    dialogues = bench.SETS["dev5"]()
    assert len(dialogues) >= 50
    asks = 0
    for script in dialogues:
        for i, say in enumerate(script):
            if not say.expect or say.expect[0] == UNKNOWN:
                continue
            asks += 1
            before = " ".join(s.text for s in script[:i]).lower()
            assert say.expect[0].lower() in before, (say.text, say.expect)
            assert say.expect[0].lower() not in say.text.lower(), say.text
    assert asks >= 75


@pytest.mark.skipif(not lexicon().available, reason="WordNet (wordnet-base) not installed")
def test_dev5_answers_are_all_handed_over() -> None:
    limits = retrieval.router_limits()
    missed = []
    for script in bench.SETS["dev5"]():
        turns = [(s.text, ("UNKNOWN",) if s.expect == (UNKNOWN,) else s.expect) for s in script]
        missed += [text for text, _, _, ok in anyio.run(retrieval.handed, turns, limits)
                   if not ok]
    assert missed == []


def test_the_speaker_is_shown_the_previous_utterance_only_before_a_follow_on() -> None:
    assert retrieval.message("Where is it?", (), ("My van is in Leeds.",)) == ("Where is it?",)
    assert retrieval.message("And where is it?", (), ("My van is in Leeds.",)) == (
        "My van is in Leeds.", "And where is it?")
    assert retrieval.message("Where is it?", ("My van is in Leeds.",), ("Hi.",)) == (
        "My van is in Leeds.", "Where is it?")
