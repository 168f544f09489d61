"""Memory record/recall through the runtime: a fact told earlier is recalled into a later
request's "## Recalled" section, and it survives a resume because it lives in the run dir.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from terrarium.config import load_team
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

MEMO = Path(__file__).parents[1] / "runtime_fixtures" / "memo"
FACT = "My sister Alma lives in Reykjavik"


def recalled_section(req: ChatRequest) -> str:
    text = "\n".join(m.content or "" for m in req.messages)
    if "## Recalled" not in text:
        return ""
    return text.split("## Recalled", 1)[1].split("\n## ", 1)[0]


def run(tmp_path: Path, utterances: list[str], resume: str | None = None
        ) -> tuple[ScriptedModel, str]:
    model = ScriptedModel([], default_reply="Noted.")
    opts = RuntimeOptions(runs_dir=tmp_path, audio="none", resume=resume,
                          models={"router": model})

    async def go() -> str:
        async with TeamRuntime(load_team(MEMO), opts) as rt:
            with anyio.fail_after(30):
                for text in utterances:
                    await rt.send_user(text)
                    await rt.wait_idle()
            return rt.run_id

    return model, anyio.run(go)


def test_fact_is_recalled_in_a_later_request(tmp_path: Path) -> None:
    model, _ = run(tmp_path, [FACT, "The weather is mild", "Where does Alma live?"])
    assert len(model.requests) == 3
    assert recalled_section(model.requests[0]) == ""  # nothing was known yet
    later = recalled_section(model.requests[2])
    assert FACT in later
    assert "The weather is mild" not in later  # recall is by relevance, not everything


def test_memory_survives_resume(tmp_path: Path) -> None:
    _, run_id = run(tmp_path, [FACT])
    assert (tmp_path / run_id / "memory.sqlite3").is_file()
    model, again = run(tmp_path, ["Where does Alma live?"], resume=run_id)
    assert again == run_id
    assert FACT in recalled_section(model.requests[0])


def test_a_new_run_starts_with_empty_memory(tmp_path: Path) -> None:
    run(tmp_path, [FACT])
    model, _ = run(tmp_path, ["Where does Alma live?"])
    assert FACT not in recalled_section(model.requests[0])
