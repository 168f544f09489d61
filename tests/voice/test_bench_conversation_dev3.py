"""The session 11 dev cases of ``bench/conversation.py`` (``--set dev3``) are well formed:
they load through the benchmark's own loader, and every recall ask's first expected word was
said by the user before it (not in the question itself). The model is not run here."""

from __future__ import annotations

import sys

from tests.script_loader import ROOT, load_script

bench = load_script(ROOT / "bench" / "conversation.py", "bench_conversation")
UNKNOWN = sys.modules["conversation_data"].UNKNOWN


def test_dev3_loads_and_every_ask_was_told_before() -> None:
    dialogues = bench.SETS["dev3"]()
    assert len(dialogues) >= 20
    asks = 0
    for script in dialogues:
        for i, say in enumerate(script):
            if not say.expect or say.expect[0] == UNKNOWN:
                continue
            asks += 1
            before = " ".join(s.text for s in script[:i]).lower()
            assert say.expect[0].lower() in before, (say.text, say.expect)
            assert say.expect[0].lower() not in say.text.lower(), say.text
    assert asks >= 30
