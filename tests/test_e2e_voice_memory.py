"""End-to-end on the embedded model and Piper: the voice assistant remembers a name.

A name told in one utterance and asked for in the next must come back in the spoken reply:
the router keeps "Ada is my name." as a fact without the model, recalls it for "What is my
name?", and the speaker's message carries it (issue 17).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from terrarium.config import load_team
from terrarium.events import SentenceSynthesized
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

pytestmark = [pytest.mark.embedded, pytest.mark.tts]
ROOT = Path(__file__).resolve().parent.parent


def test_a_name_told_is_spoken_back_when_asked(tmp_path: Path) -> None:
    team = load_team(ROOT / "examples" / "voice_assistant")
    for creature in team.creatures.values():  # greedy decoding: the same run every time
        creature.config.controller.temperature = 0.0
    heard: list[str] = []

    def on_event(ev: object) -> None:
        if isinstance(ev, SentenceSynthesized) and ev.creature == "speaker":
            heard.append(ev.text)

    async def go() -> str:
        opts = RuntimeOptions(runs_dir=tmp_path, audio="none", clock=lambda: None,
                              on_event=on_event)
        async with TeamRuntime(team, opts) as rt:
            await rt.send_user("Hi, my name is Ada.")
            with anyio.fail_after(240):
                await rt.wait_idle()
            before = len(heard)
            await rt.send_user("What is my name?")
            with anyio.fail_after(240):
                await rt.wait_idle()
            return " ".join(heard[before:])

    reply = anyio.run(go)
    assert "Ada" in reply, reply
