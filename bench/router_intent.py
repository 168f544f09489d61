"""How often the voice router's model picks the right intent, on the embedded model.

The router writes one judgment per utterance (an `intent`, see channels/speech_request.yaml);
this runs it over a fixed set of labelled sentences, none of which appear in its prompt,
and prints each choice, who made it (one of the router's ``choice_rules``, or the model's
own likelihood of each intent) and the share that was right.
``--no-rules`` leaves the rules out, so the model decides every sentence.
Run: ``python bench/router_intent.py [--no-rules]``
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import anyio
from voice import UTTERANCES  # bench/voice.py, beside this script

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller, Incoming
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.factory import make_model

ROOT = Path(__file__).resolve().parent.parent
# the voice benchmark's utterances (labelled in order), then a few more
VOICE_LABELS = ["greeting", "statement", "question", "request", "question", "question",
                "question", "request", "question", "request", "question", "thanks"]
LABELLED = [
    *zip(UTTERANCES, VOICE_LABELS, strict=True),
    ("Good morning!", "greeting"),
    ("Thanks a lot.", "thanks"),
    ("Bye for now.", "goodbye"),
    ("Turn on the lights please.", "request"),
    ("Where is Paris?", "question"),
    ("I had pasta for lunch.", "statement"),
]


async def main(rules: bool) -> None:
    team = load_team(ROOT / "examples" / "voice_assistant")
    if not rules:
        team.creatures["router"].config.choice_rules = []
    parts = assemble(team, "router")
    sent: list[dict[str, Any]] = []

    async def send(channel: str, payload: dict[str, Any]) -> int:
        sent.append(payload)
        return 1

    async with EmbeddedServer(slots=1) as server:
        model = make_model(parts.settings, embedded=server, slot=0)
        ctl = Controller(parts, model, send=send)
        right = by_model = model_right = 0
        for text, label in LABELLED:
            before = len(sent)
            model.last_choice = None  # type: ignore[attr-defined]
            await ctl.run_turn([Incoming(text=text, channel="user_input", sender="user",
                                         payload={"text": text})])
            got = sent[-1].get("intent") if len(sent) > before else None
            right += got == label
            mark = "ok " if got == label else "   "
            scored = getattr(model, "last_choice", None)
            how = "rule"
            if scored is not None:
                by_model += 1
                model_right += got == label
                top = sorted(scored.scores.items(), key=lambda kv: -kv[1])[:3]
                how = "model " + " ".join(f"{k}={v:+.1f}" for k, v in top)
            print(f"{mark} {text!r:42} -> {got} (expected {label}) [{how}]")
    print(f"\nright: {right} of {len(LABELLED)} ({right / len(LABELLED) * 100:.0f} %); "
          f"the model's likelihood decided {by_model}, {model_right} of them right")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-rules", action="store_true", help="the model decides every sentence")
    anyio.run(main, not p.parse_args().no_rules)
