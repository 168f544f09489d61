"""End-to-end on the embedded model (SmolLM2-135M in llama.cpp) and the real Piper voice.

Model output is not asserted word for word (a 135M model is not a reliable writer); what is
asserted is what the framework guarantees: well-formed calls, typed delivery, recorded
turns, speech without markdown, audio of plausible length.
"""

from __future__ import annotations

import re
import wave
from pathlib import Path

import anyio
import pytest

from terrarium.channels.log import DurableLog
from terrarium.config import load_single_creature, load_team
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

pytestmark = pytest.mark.embedded
ROOT = Path(__file__).resolve().parents[2]
MARKDOWN = re.compile(r"[#*_`\[\]<>|~]|^\s*[-+] ", re.M)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_single_creature_makes_a_well_formed_tool_call(tmp_path: Path) -> None:
    write(tmp_path, {"note/config.yaml": (
        "name: note\nsystem_prompt_file: p.md\ntools: [memory_write]\nskill_mode: static\n"
        "tool_choice: required\nmax_iterations: 1\ncontroller: {max_tokens: 96, temperature: 0}\n"),
        "note/p.md": "You are {{ creature }}. Save what the user says with memory_write.\n"})
    team = load_single_creature(tmp_path / "note")

    async def go() -> None:
        opts = RuntimeOptions(runs_dir=tmp_path / "runs", clock=lambda: None)
        async with TeamRuntime(team, opts) as rt:
            result = await rt.ask("note", "My favourite colour is green.")
            assert result is not None
            assert [c.name for c in result.calls] == ["memory_write"]
            assert result.calls[0].ok, result.calls[0].result
            assert rt.memory is not None and rt.memory.count() == 1

    anyio.run(go)


def test_three_creature_team_on_the_embedded_model(tmp_path: Path) -> None:
    base = ("controller: {max_tokens: 96, temperature: 0}\ntool_choice: required\n"
            "max_iterations: 1\n")
    write(tmp_path, {
        "terrarium.yaml": (
            "terrarium:\n  name: relay\n  input_channel: inbox\n  creatures:\n"
            "    - {name: a, config: a, channels: {listen: [inbox], can_send: [ab]}}\n"
            "    - {name: b, config: b, channels: {listen: [ab], can_send: [bc]}}\n"
            "    - {name: c, config: c, channels: {listen: [bc]}}\n"
            "  channels:\n    inbox: {schema: {fields: {text: str}}}\n"
            "    ab: {schema: {fields: {topic: str}}}\n"
            "    bc: {schema: {fields: {summary: str}}}\n"),
        "a/config.yaml": "name: a\n" + base,
        "b/config.yaml": "name: b\n" + base,
        "c/config.yaml": "name: c\ncontroller: {max_tokens: 24, temperature: 0}\n",
    })
    team = load_team(tmp_path)

    async def go() -> str:
        # greedy decoding and no date in the tail: the same prompt gives the same reply
        opts = RuntimeOptions(runs_dir=tmp_path / "runs", clock=lambda: None)
        async with TeamRuntime(team, opts) as rt:
            await rt.send_user("Tell the team about tea.")
            with anyio.fail_after(240):
                await rt.wait_idle()
            assert {name for name, _ in rt.results} == {"a", "b", "c"}
            return rt.run_id

    run_id = anyio.run(go)
    with DurableLog(tmp_path / "runs" / "terrarium.sqlite3") as log:
        msgs = log.messages(run_id)
        assert [env.channel for env, _ in msgs] == ["inbox", "ab", "bc"]
        assert all(env.payload for env, _ in msgs)
        assert {t.creature for t in log.turns(run_id)} == {"a", "b", "c"}


@pytest.mark.tts
def test_voice_assistant_speaks_a_plausible_wav(tmp_path: Path) -> None:
    team = load_team(ROOT / "examples" / "voice_assistant")
    for creature in team.creatures.values():  # greedy decoding: the same run every time
        creature.config.controller.temperature = 0.0

    async def go() -> tuple[str, Path]:
        async with TeamRuntime(team, RuntimeOptions(runs_dir=tmp_path, clock=lambda: None)) as rt:
            await rt.send_user("Hello! My name is Ada and I like green tea.")
            with anyio.fail_after(240):
                await rt.wait_idle()
            spoken = [r.text for name, r in rt.results if name == "speaker"]
            assert spoken, "the speaker never spoke"
            assert rt.run_dir is not None
            return spoken[0], rt.run_dir / "audio"

    text, audio_dir = anyio.run(go)
    assert text.strip()
    assert not MARKDOWN.search(text), text
    wavs = sorted(audio_dir.glob("*.wav"))
    assert len(wavs) == 1
    with wave.open(str(wavs[0])) as w:
        seconds = w.getnframes() / w.getframerate()
    words = len(text.split())
    assert 0.5 < seconds < words / 1.2 + 2.0, (seconds, text)


def test_prompt_report_with_exact_token_counts(capsys: pytest.CaptureFixture[str]) -> None:
    from terrarium.cli import main

    path = str(ROOT / "examples" / "voice_assistant")
    assert main(["prompt", path, "speaker", "--json"]) == 0
    estimate = capsys.readouterr().out
    assert main(["prompt", path, "speaker", "--json", "--exact"]) == 0
    exact = capsys.readouterr().out
    import json

    a, b = json.loads(estimate), json.loads(exact)
    assert a["prefix_hash"] == b["prefix_hash"]  # same bytes, counted two ways
    assert [s["bytes"] for s in a["sections"]] == [s["bytes"] for s in b["sections"]]
    assert all(s["tokens"] > 0 for s in b["sections"])


def test_smollm2_calls_a_built_in_tool_under_the_grammar_and_it_runs(tmp_path: Path) -> None:
    """Issue 13: the 135M model, held to the generated grammar, calls a built-in workspace
    tool (`tree`) and the tool really lists the workspace."""
    write(tmp_path, {
        "lister/config.yaml": (
            "name: lister\nsystem_prompt_file: p.md\ntools: [tree]\nskill_mode: static\n"
            "workspace: ../ws\ntool_choice: required\nmax_iterations: 1\n"
            "controller: {max_tokens: 96, temperature: 0}\n"),
        "lister/p.md": "You are {{ creature }}. Show the user's files with the tree tool.\n",
        "ws/notes.txt": "buy milk\n",
        "ws/src/app.py": "print('hi')\n"})
    team = load_single_creature(tmp_path / "lister")

    async def go() -> None:
        opts = RuntimeOptions(runs_dir=tmp_path / "runs", clock=lambda: None)
        async with TeamRuntime(team, opts) as rt:
            result = await rt.ask("lister", "Which files do I have?")
            assert result is not None
            assert [(c.name, c.kind) for c in result.calls] == [("tree", "tool")]
            call = result.calls[0]
            if call.ok:  # any well-formed arguments list the real workspace
                assert "notes.txt" in call.result or "src" in call.result, call.result
            else:  # a path the model made up: the tool itself ran and said so
                assert "invalid" not in call.result.lower(), call.result

    anyio.run(go)
