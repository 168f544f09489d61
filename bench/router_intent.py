"""How often the voice router's model picks the right intent, on the embedded model.

The router writes one judgment per utterance (an `intent`, see channels/speech_request.yaml);
this runs it over a fixed set of labelled sentences, none of which appear in its prompt,
and prints each choice and the share that was right. Run: ``python bench/router_intent.py``
"""

from __future__ import annotations

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


async def main() -> None:
    team = load_team(ROOT / "examples" / "voice_assistant")
    parts = assemble(team, "router")
    sent: list[dict[str, Any]] = []

    async def send(channel: str, payload: dict[str, Any]) -> int:
        sent.append(payload)
        return 1

    async with EmbeddedServer(slots=1) as server:
        ctl = Controller(parts, make_model(parts.settings, embedded=server, slot=0), send=send)
        right = 0
        for text, label in LABELLED:
            before = len(sent)
            await ctl.run_turn([Incoming(text=text, channel="user_input", sender="user",
                                         payload={"text": text})])
            got = sent[-1].get("intent") if len(sent) > before else None
            right += got == label
            mark = "ok " if got == label else "   "
            print(f"{mark} {text!r:42} -> {got} (expected {label})")
    print(f"\nright: {right} of {len(LABELLED)} ({right / len(LABELLED) * 100:.0f} %)")


if __name__ == "__main__":
    anyio.run(main)
