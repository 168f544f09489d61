"""Every example in the README's Examples table, run with the command the table gives,
then its log checked for what the table says it shows (issue 25).

The commands are taken from the table itself (so an edit of the table is what is
tested) and run through bash in a scratch folder holding a link to ``examples/``, with a
``terrarium`` on PATH that runs this checkout. Two deviations, both said where they
happen: ``/tmp/shop`` becomes a scratch folder of this test (a shared path would collide),
and ``remote_endpoint``'s "edit base_url" is done on a copy pointed at a local fake
OpenAI-compatible server.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from terrarium.channels.log import DurableLog
from terrarium.events import (
    JobStarted,
    SubagentEnded,
    SubagentStarted,
    TranscriptAppended,
    UtteranceWritten,
)
from terrarium.runtime.runtime import LOG_FILE

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 300  # seconds: a bound against hangs, never a measured figure


def table() -> dict[str, str]:
    """Example name -> the table's "run it" cell."""
    rows: dict[str, str] = {}
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Examples", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        if m := re.match(r"\| `examples/([a-z_]+)` \|", line):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            rows[m.group(1)] = cells[-1]
    return rows


def commands(cell: str) -> list[str]:
    """The shell commands in a cell: each backticked text that runs terrarium."""
    return [c.replace("\\|", "|") for c in re.findall(r"`([^`]+)`", cell)
            if "terrarium " in c]


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "terrarium"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m terrarium "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return tmp_path


def shell(cmd: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1",
            # terrarium's venv active, as the table asks for mcp_catalogue
            "PATH": os.pathsep.join([str(cwd / "bin"), str(Path(sys.executable).parent),
                                     os.environ.get("PATH", "")]), **(env or {})}
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=full, input=stdin,
                          capture_output=True, text=True, timeout=LIMIT, check=False)


def run_cell(name: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
             ) -> list[subprocess.CompletedProcess[str]]:
    out = []
    for cmd in commands(table()[name]):
        res = shell(cmd, cwd, stdin, env)
        assert res.returncode == 0, (cmd, res.stdout, res.stderr)
        out.append(res)
    assert out, f"the table gives no command for {name}"
    return out


def calls(cwd: Path, creature: str | None = None) -> list[tuple[str, str, str]]:
    """(creature, kind, name or text) of every tool call and result in the only run."""
    with DurableLog(cwd / "runs" / LOG_FILE) as log:
        [run] = log.runs()
        events = log.typed_events(run.run_id)
    return [(e.creature, e.entry.kind, e.entry.name or e.entry.text) for e in events
            if isinstance(e, TranscriptAppended) and e.entry.kind in ("tool_call",)
            and (creature is None or e.creature == creature)]


def events_of(cwd: Path) -> list[object]:
    with DurableLog(cwd / "runs" / LOG_FILE) as log:
        [run] = log.runs()
        return list(log.typed_events(run.run_id))


def test_the_table_lists_every_example_folder() -> None:
    folders = {p.name for p in (ROOT / "examples").iterdir() if p.is_dir()}
    assert set(table()) == folders


def test_scripted_newsroom(scratch: Path) -> None:
    [res] = run_cell("scripted_newsroom", scratch)
    assert "archivist> On the wire: a new story is out." in res.stdout.splitlines()
    assert "  [stories] reporter -> editor" in res.stdout.splitlines()  # -v: the traffic
    assert ("editor", "tool_call", "memory_write") in calls(scratch)
    with DurableLog(scratch / "runs" / LOG_FILE) as log:
        [run] = log.runs()
        sent = [env.channel for env, _ in log.messages(run.run_id)]
    assert sent == ["tips", "stories", "published"]


def test_notes_creature_makes_its_memory_calls(scratch: Path) -> None:
    [res] = run_cell("notes_creature", scratch)
    made = [name for _, _, name in calls(scratch, "notes")]
    assert made == ["memory_write", "memory_search"]
    assert "notes> Your notes say: the boat leaves at nine." in res.stdout.splitlines()
    results = [e.entry.text for e in events_of(scratch) if isinstance(e, TranscriptAppended)
               and e.entry.kind == "tool_result" and e.entry.name == "memory_search"]
    assert results and "The boat leaves at nine." in results[0]  # found what it wrote


def test_mcp_catalogue(scratch: Path) -> None:
    listed, ran = run_cell("mcp_catalogue", scratch)
    assert re.search(r"catalogue__\w+ +mcp: catalogue", listed.stdout), listed.stdout
    assert any("__" in name for _, _, name in calls(scratch, "catalogue")), ran.stdout
    lines = ran.stdout.splitlines()  # the server's start is told, not a silent wait
    assert lines[0] == "starting MCP servers catalogue/catalogue..."
    assert any(re.fullmatch(r"MCP servers up in [\d.]+ s", ln) for ln in lines)


def test_code_fixers(scratch: Path) -> None:
    shop = scratch / "shop"  # instead of /tmp/shop, which other runs could share
    [cmd] = commands(table()["code_fixers"])
    res = shell(cmd.replace("/tmp/shop", str(shop)), scratch)
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert "Approved: all 4 tests pass" in res.stdout
    made = {(c, n) for c, _, n in calls(scratch)}
    assert {("worker", "shell"), ("worker", "edit"), ("reviewer", "shell")} <= made
    assert "[approval] worker -> edit: approved (--yes)" in res.stdout


def test_python_tool_reply_states_its_tools_result(scratch: Path) -> None:
    [res] = run_cell("python_tool", scratch)
    results = [e.entry.text for e in events_of(scratch) if isinstance(e, TranscriptAppended)
               and e.entry.kind == "tool_result" and e.entry.name == "text_stats"]
    assert results == ["meeting.md: 5 lines, 23 words, 154 characters; most common: "
                       "release (3), planning (2)"]
    [reply] = [ln for ln in res.stdout.splitlines() if ln.startswith("stats> ")]
    for figure in ("5 lines", "23 words", "release (3)", "planning (2)"):
        assert figure in reply, reply  # what the tool returned, not "listed above"


def test_research_team_shows_jobs_and_sub_agents(scratch: Path) -> None:
    [res] = run_cell("research_team", scratch)
    lines = res.stdout.splitlines()
    ready = lines.index(next(ln for ln in lines if ln.startswith("ready in ")))
    first_reply = next(i for i, ln in enumerate(lines) if ln.startswith("lead> "))
    assert ready < first_reply  # the lead's text comes after `ready`
    assert any(ln.startswith("  [job] lead started job-1: ") for ln in lines)
    assert any(ln.startswith("  [sub-agent] lead -> historian: ") for ln in lines)
    assert any(ln.startswith("  [sub-agent] scientist -> lead: done") for ln in lines)
    evs = events_of(scratch)
    assert sorted(e.call for e in evs if isinstance(e, JobStarted)) == ["historian",
                                                                       "scientist"]
    assert sorted(e.subagent for e in evs if isinstance(e, SubagentStarted)) == [
        "historian", "scientist"]
    assert all(e.ok for e in evs if isinstance(e, SubagentEnded))
    assert [n for _, _, n in calls(scratch, "lead")].count("wait") == 2


def test_remote_endpoint_on_a_local_server_without_a_key(scratch: Path) -> None:
    from shared_server_fakes import FakeLlama

    server = FakeLlama()
    url = server.start()
    try:
        # "edit base_url": on a copy, pointed at the fake server (no key is set anywhere)
        (scratch / "examples").unlink()
        shutil.copytree(ROOT / "examples" / "remote_endpoint",
                        scratch / "examples" / "remote_endpoint")
        cfg = scratch / "examples" / "remote_endpoint" / "config.yaml"
        cfg.write_text(cfg.read_text().replace("http://127.0.0.1:11434/v1", f"{url}/v1"))
        env = {k: "" for k in ("OPENAI_API_KEY",)}
        [res] = run_cell("remote_endpoint", scratch, stdin="Hello!\n", env=env)
    finally:
        server.stop()
    assert any(ln.startswith("remote> served by ") for ln in res.stdout.splitlines()), \
        res.stdout


@pytest.mark.embedded
@pytest.mark.tts
def test_voice_assistant(scratch: Path) -> None:
    [res] = run_cell("voice_assistant", scratch, stdin="Hi, my name is Ada. I love green tea.\n")
    assert "speaker (tts)> " in res.stdout
    assert any(isinstance(e, UtteranceWritten) and e.path for e in events_of(scratch))
