"""The blind dialogue set of ``bench/conversation.py`` (issue 30) is well formed: it loads
through the benchmark's own loader as ``--set blind`` (and in ``--set all``), has at least
45 dialogues, and every recall ask can be answered from what the user said before it — and
only from that, not from the question's own words. The model is not run here."""

from __future__ import annotations

import re
import sys

from tests.script_loader import ROOT, load_script

bench = load_script(ROOT / "bench" / "conversation.py", "bench_conversation")
blind_data = sys.modules["conversation_blind"]
UNKNOWN = sys.modules["conversation_data"].UNKNOWN


def test_blind_set_loads_as_its_own_set_and_in_all() -> None:
    dialogues = bench.SETS["blind"]()
    assert len(dialogues) >= 45
    assert len(dialogues) == len(blind_data.BLIND)
    assert all(isinstance(say, bench.Say) and say.text for d in dialogues for say in d)
    assert "blind" in bench.GROUPS["all"]
    assert "blind" not in bench.GROUPS["both"]  # the default run is unchanged


def test_every_recall_ask_is_answered_by_an_earlier_turn_and_not_by_itself() -> None:
    asks = 0
    for dialogue in bench.SETS["blind"]():
        earlier = ""
        for say in dialogue:
            if say.expect and say.expect != (UNKNOWN,):
                asks += 1
                assert UNKNOWN not in say.expect, say.text
                assert any(e.lower() in earlier.lower() for e in say.expect), say.text
                assert not any(e.lower() in say.text.lower() for e in say.expect), say.text
            earlier += " " + say.text
    assert asks >= 60


def test_the_set_has_each_kind_of_turn_the_issue_asks_for() -> None:
    turns = [say for d in bench.SETS["blind"]() for say in d]
    never_said = [s for s in turns if s.expect == (UNKNOWN,)]
    ordinary = [s for s in turns if not s.expect and s.text.endswith("?")]
    indirect = [s for s in turns if s.expect and re.search(
        r"^(remind me|do you remember|tell me|can you tell me)|did i (say|tell)", s.text, re.I)]
    assert len(never_said) >= 5
    assert len(ordinary) >= 20  # questions not about the user, to be answered
    assert len(indirect) >= 8
    cats = blind_data.BY_CATEGORY
    assert all(len(ds) >= 2 for ds in cats.values()), {k: len(v) for k, v in cats.items()}
    # a never-said ask follows only what does not answer it: no recall in the same dialogue
    for d in blind_data.BY_CATEGORY["never said"]:
        assert [t for t in d if len(t) > 1] == [d[-1]] and d[-1][1:] == (UNKNOWN,)
