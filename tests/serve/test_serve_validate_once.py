"""An API input is checked once: by the session's hub (``ChannelHub.check``), whose send
then takes the checked body as it is; a bad input is still a 422 naming the field (and
nothing is sent or recorded), and a bad message from anyone else is still refused and
recorded by the hub."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from terrarium.channels.payload import PayloadRules
from terrarium.config import load_team
from terrarium.errors import ChannelRefusal
from terrarium.serve import ServeSettings, create_app
from tests.serve_helpers import CHAT

pytestmark = pytest.mark.anyio


async def test_an_input_is_validated_once_and_a_bad_one_is_still_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    team = load_team(CHAT)
    checks: list[str] = []
    inner = PayloadRules.check_one

    def counted(self: PayloadRules, channel: str, payload: Any) -> dict[str, Any]:
        checks.append(channel)
        return inner(self, channel, payload)

    monkeypatch.setattr(PayloadRules, "check_one", counted)
    model = team.channels["inbox"].message_type.model  # the manager's own check, before

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the input was validated a second time")

    monkeypatch.setattr(model, "model_validate", never)
    app = create_app(team, ServeSettings(runs_dir=tmp_path / "runs", warm_up=False))
    mgr = app.state.manager
    async with anyio.create_task_group() as tg:
        await tg.start(mgr.run)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            sid = (await c.post("/v1/sessions", json={})).json()["id"]
            live = await mgr.load(sid)
            checks.clear()
            r = await c.post(f"/v1/sessions/{sid}/input",
                             json={"payload": {"text": "hi", "mood": "urgent"}})
            assert r.status_code == 202
            assert checks == ["inbox"]  # once, though the hub's send checks every other
            sent = [m for m, _ in mgr.log.messages(live.info.run_id) if m.channel == "inbox"]
            assert sent[-1].payload == {"text": "hi", "mood": "urgent"}
            monkeypatch.undo()  # (the 422's sentence validates again, off the hot path)
            bad = await c.post(f"/v1/sessions/{sid}/input",
                               json={"payload": {"text": "hi", "mood": "sleepy"}})
            assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "mood"
            assert "mood" in bad.json()["detail"]
            big = await c.post(f"/v1/sessions/{sid}/input", json={"text": "x" * 3000})
            assert big.status_code == 413 and "max_bytes" in big.json()["detail"]
            assert len([m for m, _ in mgr.log.messages(live.info.run_id)
                        if m.channel == "inbox"]) == 1  # neither was sent
            assert mgr.log.refusals(live.info.run_id) == []  # nor recorded
            # anyone else's bad message: the hub refuses and records it, as before
            rt = live.rt
            assert rt is not None and rt.hub is not None
            with pytest.raises(ChannelRefusal):
                await rt.hub.send("router", "to_bot", {"note": 3})
            assert [x.sender for x in mgr.log.refusals(live.info.run_id)] == ["router"]
        tg.cancel_scope.cancel()
    mgr.log.close()
