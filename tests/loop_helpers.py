"""Helpers for driving one creature's Controller on the scripted model: a one-creature team
written to a temp folder and assembled as the runtime does, a turn run to its end, the text of
a request, and a bracket call written as the model writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import yaml

from terrarium.config import load_single_creature
from terrarium.controller.assembly import CreatureParts, assemble
from terrarium.controller.loop import Controller, Incoming, TurnResult
from terrarium.llm.types import ChatRequest

TOOLS = "tests.runtime_fixtures.tools"


def make_parts(tmp_path: Path, **config: Any) -> CreatureParts:
    folder = tmp_path / "solo"
    folder.mkdir(exist_ok=True)
    body = {"name": "solo", "controller": {"provider": "scripted", "script": "script.yaml"},
            "skill_mode": "static", **config}
    (folder / "config.yaml").write_text(yaml.safe_dump(body), encoding="utf-8")
    (folder / "script.yaml").write_text("steps: []\n", encoding="utf-8")
    team = load_single_creature(folder)
    return assemble(team, "solo")


def run(ctl: Controller, text: str) -> TurnResult:
    async def go() -> TurnResult:
        with anyio.fail_after(20):
            return await ctl.run_turn([Incoming(text=text)])

    return anyio.run(go)


def request_text(req: ChatRequest) -> str:
    return "\n".join(m.content or "" for m in req.messages)


def last_user(req: ChatRequest) -> str:
    return next(m.content or "" for m in reversed(req.messages) if m.role == "user")


def call(tool: str, /, **args: Any) -> str:
    body = "".join(f"@@{k}={v}\n" for k, v in args.items())
    return f"[/{tool}]\n{body}[{tool}/]"
