"""The session 13 dev cases of ``bench/conversation.py`` (``--set dev4``) are well formed:
they load through the benchmark's own loader, every recall ask's first expected word was
said by the user before it (not in the question itself), and ``bench/retrieval.py`` (the
notes without a model) hands the answers over, but three named below. The model is not run
here."""

from __future__ import annotations

import sys

import anyio
import pytest

from terrarium.store.lexicon import lexicon
from tests.script_loader import ROOT, load_script

bench = load_script(ROOT / "bench" / "conversation.py", "bench_conversation")
retrieval = load_script(ROOT / "bench" / "retrieval.py", "bench_retrieval")
UNKNOWN = sys.modules["conversation_data"].UNKNOWN


def test_dev4_loads_and_every_ask_was_told_before() -> None:
    dialogues = bench.SETS["dev4"]()
    assert len(dialogues) >= 30
    asks = 0
    for script in dialogues:
        for i, say in enumerate(script):
            if not say.expect or say.expect[0] == UNKNOWN:
                continue
            asks += 1
            before = " ".join(s.text for s in script[:i]).lower()
            assert say.expect[0].lower() in before, (say.text, say.expect)
            assert say.expect[0].lower() not in say.text.lower(), say.text
    assert asks >= 60


@pytest.mark.skipif(not lexicon().available, reason="WordNet (wordnet-base) not installed")
def test_dev4_answers_are_all_handed_over() -> None:
    limits = retrieval.router_limits()
    missed = []
    for script in bench.SETS["dev4"]():
        turns = [(s.text, ("UNKNOWN",) if s.expect == (UNKNOWN,) else s.expect) for s in script]
        missed += [text for text, _, _, ok in anyio.run(retrieval.handed, turns, limits)
                   if not ok]
    # left as they are (docs/memory.md, session 13): WordNet's common senses of "pike" are
    # a road and a fish as food (freshwater fish > seafood > food), neither a kind of
    # "fish" the animal; "Jo and I have been together ..." shares nothing with "partner"
    # or "other half" but by meaning
    assert missed == ["What fish did I land?", "Who's my partner?",
                      "What does my other half do?"]


def test_the_retrieval_bench_refuses_the_judges() -> None:
    with pytest.raises(SystemExit):
        retrieval.main("blind4", verbose=False)
