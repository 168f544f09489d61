"""The closing summary of ``terrarium run`` (and its ``--json``) agrees with what the run
printed and with its exit code: an input of the user's refused at the channel is counted
(before: ``[refused] your input was not sent`` and then "no problems"); an input a creature
could not take is printed and degrades the run, as docs/running.md says (before: not a
word); a background job the end of the run cut off is counted (before: "no problems",
then exit 3); ``--max-turns`` holds for a single creature and "ready" is said once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "runtime_fixtures"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
TOO_BIG_FOR_CONTEXT = "hello " + "word " * 40_000  # fits the channel, not the window
TOO_BIG_FOR_CHANNEL = "hello " + "x" * 70_000  # over the trio inbox's 64 KiB


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "terrarium", "run", *args, "--audio", "none"], cwd=ROOT,
        env=ENV, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60, check=False)


def summary_line(out: str) -> str:
    [line] = [ln for ln in out.splitlines() if ln.startswith("run ") and " turn(s), " in ln]
    return line


def test_a_refused_user_input_is_counted_in_the_summary_and_the_run_still_exits_0(
        tmp_path: Path) -> None:
    res = run_cli(str(FIXTURES / "trio"), "--input", TOO_BIG_FOR_CHANNEL, "--input",
                  "hello again", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr  # told at once, the run goes on (documented)
    assert "[refused] your input was not sent: The message is 70017 bytes" in res.stdout
    assert "1 refusal (1 input of yours not sent)" in summary_line(res.stdout)
    assert "no problems" not in res.stdout


def test_a_refused_user_input_is_in_the_json_summary(tmp_path: Path) -> None:
    res = run_cli(str(FIXTURES / "trio"), "--input", TOO_BIG_FOR_CHANNEL, "--input",
                  "hello again", "--runs-dir", str(tmp_path), "--json")
    summary = json.loads(res.stdout.splitlines()[-1])
    assert (res.returncode, summary["exit_code"], summary["status"]) == (0, 0, "completed")
    assert summary["problems"] == {"refused": 1}
    assert summary["unresolved"] == []
    [not_sent] = summary["inputs_not_sent"]
    assert not_sent["kind"] == "refused" and "takes at most 65536" in not_sent["why"]


def test_an_input_a_creature_could_not_take_is_said_counted_and_degrades_the_run(
        tmp_path: Path) -> None:
    res = run_cli(str(FIXTURES / "narrow"), "--runs-dir", str(tmp_path),
                  stdin=f"{TOO_BIG_FOR_CONTEXT}\nhello again\n")
    assert res.returncode == 3, res.stderr
    assert "  [refused] solo: your input on inbox: The conversation cannot fit the context " \
           "window" in res.stdout
    assert "solo> Hello to you." in res.stdout  # and the creature went on
    assert "1 refusal (1 message a creature could not take)" in summary_line(res.stdout)
    assert "error: solo: could not take your input on inbox: The conversation" in res.stderr


def test_a_single_creature_that_cannot_take_its_input_says_so(tmp_path: Path) -> None:
    res = run_cli(str(FIXTURES / "narrow" / "solo"), "--runs-dir", str(tmp_path), "--json",
                  stdin=f"{TOO_BIG_FOR_CONTEXT}\nhello again\n")
    assert res.returncode == 3, res.stderr
    assert "  [refused] solo: your input: The conversation cannot fit" in res.stdout
    summary = json.loads(res.stdout.splitlines()[-1])
    assert summary["problems"] == {"refused": 1}
    [lost] = summary["unresolved"]
    assert (lost["creature"], lost["what"]) == ("solo", "your input")


def _napper(tmp_path: Path) -> Path:
    """A single creature whose background job outlives the turn that started it."""
    folder = tmp_path / "napper"
    folder.mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump({
        "name": "napper", "controller": {"provider": "scripted", "script": "script.yaml"},
        "skill_mode": "static", "tools": ["tests.runtime_fixtures.tools:Nap"],
        "background": {"nap": True}}))
    (folder / "script.yaml").write_text(yaml.safe_dump({"steps": [
        {"match": "go", "reply": "[/nap]\n@@label=now\n[nap/]"},
        {"match": "Started nap as job-1", "reply": "Napping in the background."},
        {"match": "[job from job-1]", "reply": "Woke up refreshed."}]}))
    return folder


def test_a_job_cut_off_by_max_turns_is_in_the_summary_that_exit_3_ends(
        tmp_path: Path) -> None:
    res = run_cli(str(_napper(tmp_path)), "--input", "go", "--max-turns", "1",
                  "--runs-dir", str(tmp_path / "runs"))
    assert res.returncode == 3, res.stderr
    assert "1 job cut off by the end of the run" in summary_line(res.stdout)
    assert "error: napper: job-1 (nap) was cancelled by the end of the run" in res.stderr
    assert res.stderr.count("job-1 (nap) was cancelled") == 1


def test_max_turns_holds_for_a_single_creature(tmp_path: Path) -> None:
    res = run_cli(str(ROOT / "examples" / "notes_creature"), "--input", "hi", "--input",
                  "hello", "--input", "again", "--max-turns", "1", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("notes> ") == 1
    assert "stopping: --max-turns 1 reached" in res.stdout
    assert " 1 turn(s), " in summary_line(res.stdout)


def test_ready_is_said_once(tmp_path: Path) -> None:
    res = run_cli(str(ROOT / "examples" / "notes_creature"), "--input", "hi",
                  "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert len([ln for ln in res.stdout.splitlines() if ln.startswith("ready in ")]) == 1
