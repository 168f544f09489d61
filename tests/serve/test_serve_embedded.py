"""Many sessions, one embedded model server: the voice assistant served to two sessions
on the embedded model (the voice is a fake, so only the model is real). Each session
remembers its own user; both sessions' creatures use the one server the app started."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest

from terrarium.config import load_team
from terrarium.serve import ServeSettings, create_app
from terrarium.voice import AudioClip, CallableSynthesizer

pytestmark = pytest.mark.embedded

ROOT = Path(__file__).resolve().parents[2]


def silence(text: str) -> AudioClip:
    return AudioClip(pcm=b"\x00\x00" * 1600, sample_rate=16000)


def test_two_sessions_share_one_model_server_and_keep_their_own_memory(tmp_path: Path
                                                                       ) -> None:
    team = load_team(ROOT / "examples" / "voice_assistant")
    app = create_app(team, ServeSettings(runs_dir=tmp_path / "runs", reply_timeout=300),
                     synthesizer=CallableSynthesizer(silence, 16000))

    async def go() -> None:
        async with app.router.lifespan_context(app), httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://t",
                timeout=600) as c:
            mgr = app.state.manager
            assert mgr.embedded is not None

            async def say(user: str, text: str) -> str:
                r = await c.post("/v1/chat/completions", json={
                    "model": team.name, "user": user,
                    "messages": [{"role": "user", "content": text}]})
                assert r.status_code == 200, r.text
                return str(r.json()["choices"][0]["message"]["content"])

            await say("ada", "My name is Ada.")
            await say("bob", "I like green tea.")
            lives = list(mgr.loaded.values())
            assert len(lives) == 2
            assert all(live.rt.embedded is mgr.embedded for live in lives)
            answer = await say("ada", "What is my name?")
            assert "Ada" in answer, answer
            other = await say("bob", "What is my name?")
            assert "Ada" not in other, other

    anyio.run(go)
