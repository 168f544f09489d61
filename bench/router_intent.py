"""How often the voice router picks the right intent, on the embedded model.

The router writes one judgment per utterance (an `intent`, see channels/speech_request.yaml);
this runs it over labelled sentences (bench/router_intent_data.py), none of which appear in
its prompt, twice: as shipped (its ``choice_rules`` first, the model's own likelihood of each
intent for the rest) and model-only (no rules, the model decides every sentence). It prints
each choice with the model's top scores, the share right per set and mode, what the wrong
ones were taken for, and the router's time per turn (median).

``--set bench`` is the 18 the issue reports; ``held-out`` is the set changes are judged on
(so nothing is tuned on the 18); ``all`` both. ``--no-rules`` runs the model-only pass alone.
``--at-field`` reads the model's likelihood at the value's place in the call instead of
after the router's ``choice_ask`` (the way it was before), for comparison.
Run: ``python bench/router_intent.py [--set bench|held-out|all] [--no-rules] [--at-field] [-q]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from router_intent_data import SETS  # beside this script

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller, Incoming
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.factory import make_model

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Mode:
    """One way of running the router over the sentences, and what it got."""

    name: str
    ctl: Controller
    model: Any
    sent: list[dict[str, Any]]
    right: dict[str, int] = field(default_factory=Counter)
    total: dict[str, int] = field(default_factory=Counter)
    wrong: Counter[tuple[str, str]] = field(default_factory=Counter)
    turn_ms: list[float] = field(default_factory=list)  # turns the model decided
    by_model: int = 0

    async def ask(self, text: str) -> tuple[str | None, str]:
        """The intent the router sends for ``text`` and how it was decided."""
        before = len(self.sent)
        self.model.last_choice = None
        start = time.perf_counter()
        await self.ctl.run_turn([Incoming(text=text, channel="user_input", sender="user",
                                          payload={"text": text})])
        ms = (time.perf_counter() - start) * 1000.0
        got = self.sent[-1].get("intent") if len(self.sent) > before else None
        scored = getattr(self.model, "last_choice", None)
        if scored is None:
            return got, "rule"
        self.by_model += 1
        self.turn_ms.append(ms)
        top = sorted(scored.scores.items(), key=lambda kv: -kv[1])[:3]
        return got, "model " + " ".join(f"{k}={v:+.1f}" for k, v in top)

    def count(self, set_name: str, label: str, got: str | None) -> None:
        self.total[set_name] += 1
        self.right[set_name] += got == label
        if got != label:
            self.wrong[(label, str(got))] += 1


def mode(server: EmbeddedServer, name: str, rules: bool, slot: int,
         at_field: bool = False) -> Mode:
    team = load_team(ROOT / "examples" / "voice_assistant")
    if not rules:
        team.creatures["router"].config.choice_rules = []
    parts = assemble(team, "router")
    if at_field:  # the model's likelihood read at the value's place in the call instead
        parts.settings.extra_body.pop("choice_ask", None)
    sent: list[dict[str, Any]] = []

    async def send(channel: str, payload: dict[str, Any]) -> int:
        sent.append(payload)
        return 1

    model = make_model(parts.settings, embedded=server, slot=slot)
    return Mode(name, Controller(parts, model, send=send), model, sent)


async def main(which: str, rules: bool, quiet: bool, at_field: bool) -> None:
    sets = ["bench", "held-out"] if which == "all" else [which]
    # each mode on its own slot, so neither finds the other's request already evaluated
    async with EmbeddedServer(slots=2) as server:
        modes = [mode(server, "model-only", rules=False, slot=0, at_field=at_field)]
        if rules:
            modes.append(mode(server, "rules+model", rules=True, slot=1, at_field=at_field))
        for m in modes:  # the prefix in each slot first, as a started team has it
            await m.ctl.warm_prefix()
        for set_name in sets:
            if not quiet:
                print(f"-- {set_name}")
            for text, label in SETS[set_name]:
                line = []
                for m in modes:
                    got, how = await m.ask(text)
                    m.count(set_name, label, got)
                    line.append(f"{'ok' if got == label else '--'} {m.name}: {got} [{how}]")
                if not quiet:
                    print(f"{text!r:46} ({label})  " + "  |  ".join(line))
    print()
    for m in modes:
        for set_name in sets:
            r, n = m.right[set_name], m.total[set_name]
            print(f"{m.name:12} {set_name:9} right: {r:3} of {n:3} ({r / n * 100:3.0f} %)")
        wrong = ", ".join(f"{want}->{got} x{k}" for (want, got), k in m.wrong.most_common())
        print(f"{'':12} wrong (expected->chosen): {wrong or 'none'}")
        if m.turn_ms:
            print(f"{'':12} the model decided {m.by_model}; router turn median "
                  f"{statistics.median(m.turn_ms):.0f} ms over those")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", choices=["bench", "held-out", "all"], default="bench",
                   help="which labelled sentences (default: the 18 of the issue)")
    p.add_argument("--no-rules", action="store_true", help="only the model-only pass")
    p.add_argument("--at-field", action="store_true",
                   help="score at the value's place in the call, not the router's choice_ask")
    p.add_argument("-q", "--quiet", action="store_true", help="only the summary")
    a = p.parse_args()
    anyio.run(main, a.set, not a.no_rules, a.quiet, a.at_field)
