"""Replay a conversation run's model texts through this tree's reply guard, without the model.

The answer check measured apart from retrieval: ``bench/conversation.py --json run.json``
keeps, for every turn, the speaker's message (the notes it was handed) and everything its
model wrote; this feeds each recall ask's text through the reply guard of the tree it runs
in and scores the reply again. A guard change is then measured in seconds on the turns the
model answered in that run (the model's text is the same at temperature 0; a guard that
would have let it write further cannot be judged here, nor can a change of retrieval).

Run: ``python bench/replay_guard.py run.json [--set blind2] [-v]`` (``-v``: each ask whose
verdict changes, with the reply before and after).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from terrarium.config import load_team
from terrarium.controller.guard import ReplyGuard

ROOT = Path(__file__).resolve().parent.parent


def notes_of(message: str) -> str:
    """The notes in a speaker's message ("Note: ...\\nQuestion: ..."), or ""."""
    if not message.startswith("Note: "):
        return ""
    return message[len("Note: "):].split("\nQuestion:")[0]


def replay(row: dict[str, Any], spec: Any) -> str:
    """The reply this tree's guard makes of the row's model text (the run's own reply for a
    turn the runtime answered itself)."""
    if not row["written"] or row["intent"] in spec.replies:
        return str(row["reply"])
    guard = ReplyGuard.for_turn(spec, [{spec.words_field: row["user"],
                                        spec.intent_field: row["intent"],
                                        spec.facts_field: notes_of(row.get("message", ""))}])
    if guard is None:
        return str(row["reply"])
    if guard.fixed is not None:
        return guard.fixed
    w = row["written"]
    return ("".join(guard.feed(w[i:i + 4]) for i in range(0, len(w), 4))
            + guard.finish()).strip()


def main(path: Path, sets: list[str] | None, verbose: bool) -> None:
    spec = load_team(ROOT / "examples" / "voice_assistant").creatures["speaker"].config.reply_guard
    data = json.loads(path.read_text())
    for name in sets or list(data):
        asks = [r for r in data[name]["rows"] if r["recalled"] is not None]
        if asks and "message" not in asks[0]:
            print(f"{name}: the run kept no speaker messages (run bench/conversation.py anew)")
            continue
        now = 0
        for r in asks:
            reply = replay(r, spec)
            hit = any(e.lower() in reply.lower() for e in r["expect"])
            now += hit
            if verbose and hit != bool(r["recalled"]):
                print(f"{'+' if hit else '-'} {r['user']!r}\n    was {r['reply']!r}\n"
                      f"    now {reply!r}")
        was = sum(bool(r["recalled"]) for r in asks)
        print(f"{name}: recall as run {was} of {len(asks)}, through this guard {now} of "
              f"{len(asks)}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", type=Path, help="a bench/conversation.py --json file")
    p.add_argument("--set", action="append", default=None, help="only this set (repeatable)")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()
    main(a.json, a.set, a.verbose)
