"""``compaction: summarize`` on the scripted model: the fold line written by the model (or
a sub-agent) once per fold block, reused while the fold stays put, the deterministic line
when the summary call fails, and the config errors of the long form."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from terrarium.config import load_single_creature
from terrarium.controller.assembly import CreatureParts, assemble
from terrarium.controller.compaction import SUMMARY_INSTRUCTION
from terrarium.controller.loop import Controller, Incoming
from terrarium.controller.subagent import Subagents
from terrarium.errors import ConfigErrors, ModelError
from terrarium.events import Event, FoldSummarized
from terrarium.llm.base import ChatModel
from terrarium.llm.factory import make_model
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest, StreamDelta
from terrarium.prompt.tail import FOLD_BLOCK
from terrarium.tools.delegate import STATE_SUBAGENTS

WINDOW = {"provider": "openai", "base_url": "http://x/v1", "context_window": 1536}
ASK = SUMMARY_INSTRUCTION.split(":", 1)[0]


class Summarizing(ScriptedModel):
    """The scripted model; summary requests (known by their instruction) answered apart."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__([], default_reply="Fine. " + "ok " * 30)
        self.summaries: list[ChatRequest] = []
        self.fail = fail

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        if (request.messages[0].content or "").startswith(ASK):
            self.summaries.append(request)
            if self.fail:
                raise ModelError("the summary server is down")
            yield StreamDelta(text=f"They talked; summary number {len(self.summaries)}.")
            return
        async for delta in super().stream(request):
            yield delta


def write(root: Path, name: str, **config: Any) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    body = {"name": name, "skill_mode": "static", **config}
    (folder / "config.yaml").write_text(yaml.safe_dump(body),
                                        encoding="utf-8")
    return folder


def factory(parts: CreatureParts, label: str) -> ChatModel:
    return make_model(parts.settings, base_dir=parts.cdef.folder)


def run(folder: Path, model: ChatModel, turns: int = 30
        ) -> tuple[Controller, list[Event], list[int]]:
    """``turns`` long turns; returns the controller, its events and each turn's fold."""
    events: list[Event] = []
    parts = assemble(load_single_creature(folder), folder.name)
    ctl = Controller(parts, model, emit=events.append)
    ctl.tool_ctx.state[STATE_SUBAGENTS] = Subagents.for_parts(
        parts, make_model=factory, emit=events.append)
    folds: list[int] = []
    for i in range(turns):
        anyio.run(ctl.run_turn, [Incoming(text=f"message {i}: " + "blah " * 40)])
        assert ctl.last_prompt is not None
        folds.append(ctl.last_prompt.folded_turns)
    return ctl, events, folds


def fold_line(request: ChatRequest) -> str | None:
    second = request.messages[1]
    text = second.content or ""
    return text if second.role == "system" and text.startswith("[earlier:") else None


def test_the_summary_is_asked_once_per_fold_block_and_reused(tmp_path: Path) -> None:
    model = Summarizing()
    folder = write(tmp_path, "w", controller=WINDOW, compaction="summarize")
    _, events, folds = run(folder, model)
    blocks = sorted({f for f in folds if f})
    assert len(blocks) >= 2 and all(b % FOLD_BLOCK == 0 for b in blocks)
    assert len(model.summaries) == len(blocks)  # once per block, not once per turn
    done = [e for e in events if isinstance(e, FoldSummarized)]
    assert [(e.turns, e.ok, e.by) for e in done] == [(b, True, "model") for b in blocks]
    # every request while a block is folded shows that block's summary, byte for byte
    lines = [fold_line(r) for r in model.requests]
    shown = [line for line in lines if line is not None]
    assert len(shown) > len(blocks)
    assert set(shown) == {e.text for e in done}
    assert all("summary number" in line for line in shown)
    # a growing fold summarizes only its new block, on top of the previous summary
    second = model.summaries[1].messages[1].content or ""
    assert second.startswith("Summary of the conversation before this:\n[earlier: 8 turns")
    # the summary requests leave the creature's slot and prompt cache alone
    assert all(r.id_slot is None and not r.cache_prompt for r in model.summaries)


def test_a_failed_summary_falls_back_to_the_fold_line(tmp_path: Path) -> None:
    model = Summarizing(fail=True)
    folder = write(tmp_path, "w", controller=WINDOW, compaction="summarize")
    _, events, folds = run(folder, model)
    blocks = sorted({f for f in folds if f})
    assert blocks and len(model.summaries) == len(blocks)  # not asked again every turn
    failed = [e for e in events if isinstance(e, FoldSummarized)]
    assert failed and all(not e.ok and "down" in e.error for e in failed)
    shown = {fold_line(r) for r in model.requests} - {None}
    assert shown == {e.text for e in failed}
    assert all(e.text.startswith(f"[earlier: {e.turns} turns folded (") for e in failed)
    assert len(model.requests) == 30  # every turn still ran


def test_a_named_subagent_writes_the_summary(tmp_path: Path) -> None:
    scribe = write(tmp_path, "scribe", controller={"provider": "scripted",
                                                   "script": "script.yaml"})
    (scribe / "script.yaml").write_text(
        yaml.safe_dump({"default_reply": "The scribe's summary."}), encoding="utf-8")
    model = Summarizing()
    folder = write(tmp_path, "w", controller=WINDOW, subagents={"scribe": "../scribe"},
                   compaction={"mode": "summarize", "subagent": "scribe"})
    _, events, folds = run(folder, model, turns=20)
    assert model.summaries == []  # the creature's own model was not asked
    done = [e for e in events if isinstance(e, FoldSummarized)]
    assert done and all(e.ok and e.by == "subagent:scribe" for e in done)
    assert len(done) == len({f for f in folds if f})
    assert any("The scribe's summary." in (fold_line(r) or "") for r in model.requests)


def test_the_default_fold_asks_no_model(tmp_path: Path) -> None:
    model = Summarizing()
    _, events, folds = run(write(tmp_path, "w", controller=WINDOW), model, turns=20)
    assert any(folds) and model.summaries == []
    assert not any(isinstance(e, FoldSummarized) for e in events)


def test_an_unknown_summarizing_subagent_is_a_located_config_error(tmp_path: Path) -> None:
    write(tmp_path, "scribe")
    folder = write(tmp_path, "w", subagents={"scribe": "../scribe"},
                   compaction={"mode": "summarize", "subagent": "scrib"})
    with pytest.raises(ConfigErrors) as err:
        load_single_creature(folder)
    text = str(err.value)
    assert "compaction names the sub-agent 'scrib'" in text
    assert "config.yaml:" in text and "scribe" in text  # where, and did you mean


@pytest.mark.parametrize("compaction, message", [
    ({"mode": "fold", "subagent": "scribe"}, "needs `mode: summarize`"),
    ("squash", "compaction"),
])
def test_bad_compaction_forms_are_config_errors(tmp_path: Path, compaction: Any,
                                               message: str) -> None:
    folder = write(tmp_path, "w", compaction=compaction)
    with pytest.raises(ConfigErrors, match=message):
        load_single_creature(folder)
