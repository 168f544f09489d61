"""The run experience through the command line, as a user runs it (issue 25; issue 27
item 2): nothing fails silently, `-v` keeps payloads on their own lines, the closing
summary counts problems and exit 3 means degraded, `--timeout` ends the process with
stdin left open, `log` reads well and scripts well, and the first-steps commands
(`--version`, `init`, completion, `--help` examples, `validate --json`) work.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest

from terrarium.channels.log import DurableLog
from terrarium.cli.console import TICK, ConsolePrinter
from terrarium.cli.timeline import parse_since
from terrarium.events import (
    CreatureWarmed,
    CreatureWarming,
    ModelLoaded,
    ModelLoading,
    PrefixProgress,
    RunStarted,
    TeamReady,
)
from terrarium.runtime.runtime import LOG_FILE

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "runtime_fixtures"
ALERTS = FIXTURES / "alerts"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
LIMIT = 120  # seconds: a bound against hangs, never a measured figure
INVALID = ("Argument 'priority' of call 'send_alerts' must be one of 'low', 'high', "
           "not 'urgent'.")


def terrarium(*args: str, stdin: str | None = None, cwd: Path = ROOT
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "terrarium", *args], cwd=cwd, env=ENV, input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True, text=True, timeout=LIMIT, check=False)


def run_alerts(tmp_path: Path, text: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return terrarium("run", str(ALERTS), "--input", text, "--runs-dir", str(tmp_path),
                     "--audio", "none", *extra)


def only_run(runs: Path) -> str:
    with DurableLog(runs / LOG_FILE) as log:
        [run] = log.runs()
        return run.run_id


# -- problems: one line each, counted, exit 3 when never made good --------------------------

def test_an_invalid_call_made_good_is_one_line_and_counted(tmp_path: Path) -> None:
    res = run_alerts(tmp_path, "it is fixed")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert f"  [invalid] desk: call send_alerts: {INVALID}" in lines
    [summary] = [ln for ln in lines if ln.startswith("run ") and "turn(s)" in ln]
    assert ": 2 turn(s), 1 invalid call;" in summary  # desk and pager: the fix went out


def test_a_refusal_never_made_good_exits_3_and_says_so(tmp_path: Path) -> None:
    res = run_alerts(tmp_path, "it is lost")
    assert res.returncode == 3, res.stderr
    assert f"  [invalid] clerk: call send_alerts: {INVALID}" in res.stdout.splitlines()
    assert "1 invalid call (1 not made good)" in res.stdout
    assert f"error: clerk: call send_alerts was never made good: {INVALID}" in res.stderr
    rid = only_run(tmp_path)
    assert f"run {rid} degraded" in res.stderr
    with DurableLog(tmp_path / LOG_FILE) as log:
        assert log.run(rid).status == "degraded"


def test_an_empty_turn_sends_nothing_on_its_wiring_and_says_so(tmp_path: Path) -> None:
    res = run_alerts(tmp_path, "write it down", "--json")
    assert res.returncode == 0, res.stderr
    assert ("  [empty] scribe: nothing sent on alerts_text: the turn ended without text "
            "(its calls: write_file)") in res.stdout.splitlines()
    summary = json.loads(res.stdout.splitlines()[-1])
    assert summary["problems"] == {"empty": 1} and summary["exit_code"] == 0
    assert summary["status"] == "completed" and summary["turns"] == 2
    with DurableLog(tmp_path / LOG_FILE) as log:
        channels = [env.channel for env, _ in log.messages(summary["run_id"])]
    assert "alerts_text" not in channels  # the reader never got an empty message


def test_run_json_tells_the_degraded_run_as_data(tmp_path: Path) -> None:
    res = run_alerts(tmp_path, "it is lost", "--json")
    assert res.returncode == 3
    summary = json.loads(res.stdout.splitlines()[-1])
    assert (summary["status"], summary["exit_code"]) == ("degraded", 3)
    assert summary["problems"] == {"invalid": 1}
    assert summary["unresolved"] == [{"kind": "invalid", "creature": "clerk",
                                      "what": "call send_alerts", "why": INVALID}]
    assert not any(ln.startswith("run ") and "turn(s)" in ln for ln in res.stdout.splitlines())


def test_verbose_payloads_stand_on_their_own_lines(tmp_path: Path) -> None:
    res = terrarium("run", "examples/scripted_newsroom", "--input",
                    "A comet was seen over Oslo.", "-v", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "archivist> On the wire: a new story is out." in lines  # nothing glued on
    i = lines.index("  [stories] reporter -> editor")
    assert lines[i + 1:i + 5] == [
        "      headline: Comet lights up the sky over Oslo",
        "      body: Skywatchers saw a bright comet after midnight. Astronomers say it "
        "returns in 2031.",
        "      urgent: false",
        "      section: science"]
    j = lines.index("  [published] editor -> archivist")
    assert lines[j + 1] == ("      text: SCIENCE: Comet lights up the sky over Oslo. It "
                            "returns in 2031.")
    ready = next(k for k, ln in enumerate(lines) if ln.startswith("ready in "))
    assert ready < i  # start-up lines first, then the traffic


def test_a_server_that_is_down_is_retried_aloud_then_given_up_with_a_hint(tmp_path: Path
                                                                            ) -> None:
    team = tmp_path / "team"
    (team / "down").mkdir(parents=True)
    (team / "up").mkdir()
    (team / "terrarium.yaml").write_text(
        "terrarium:\n  name: downed\n  input_channel: inbox\n  creatures:\n"
        "    - {name: down, config: down, channels: {listen: [inbox]}}\n"
        "    - {name: up, config: up, channels: {listen: [other]}}\n"
        "  channels:\n    inbox: {type: queue}\n    other: {type: queue}\n")
    # port 9 (discard) on loopback: nothing listens, so every attempt fails to connect
    (team / "down" / "config.yaml").write_text(
        "name: down\ncontroller: {provider: openai, base_url: 'http://127.0.0.1:9/v1', "
        "model: m, max_retries: 1}\n")
    (team / "up" / "config.yaml").write_text(
        "name: up\ncontroller: {provider: scripted, script: s.yaml}\n")
    (team / "up" / "s.yaml").write_text("default_reply: ok\n")
    res = terrarium("run", str(team), "--input", "hello", "--runs-dir", str(tmp_path / "r"))
    assert res.returncode == 3, (res.stdout, res.stderr)
    retry = [ln for ln in res.stdout.splitlines() if ln.startswith("  [retry] down:")]
    assert retry and all("could not connect" in ln and "http://127.0.0.1:9/v1/chat/"
                         "completions again in" in ln for ln in retry)
    [gave_up] = [ln for ln in res.stdout.splitlines() if ln.startswith("  [gave up] down:")]
    assert "3 failed attempts in a row" in gave_up
    assert "is the model server at http://127.0.0.1:9/v1 running?" in gave_up
    assert "1 give-up" in res.stdout


# -- --timeout ends the process whatever stdin is (issue 27, item 2) ---------------------------

@pytest.mark.parametrize("team", ["trio", "solo"])
def test_timeout_ends_the_process_with_stdin_left_open(tmp_path: Path, team: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "terrarium", "run", str(FIXTURES / team), "--timeout", "1",
         "--audio", "none", "--runs-dir", str(tmp_path)], cwd=ROOT, env=ENV,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=LIMIT)  # stdin stays open: nobody types, nothing closes it
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("--timeout did not end the process while stdin was open")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
    out = proc.stdout.read() if proc.stdout else ""
    assert proc.returncode == 124, out
    assert "stopping: --timeout 1 s reached" in out


# -- log: readable, scriptable, filtered ---------------------------------------------------------

def test_log_reads_as_a_timeline_and_filters(tmp_path: Path) -> None:
    res = run_alerts(tmp_path, "it is fixed")
    assert res.returncode == 0, res.stderr
    rid = only_run(tmp_path)
    shown = terrarium("log", rid, "--runs-dir", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert re.match(rf"run {rid}  alerts  started \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d, took "
                    r"[\d.,]+ (ms|s)  status completed$", lines[0])
    stamp = r"\d\d:\d\d:\d\d\.\d{3} +\+[\d,]+ ms  "
    assert all(re.match(stamp, ln) for ln in lines[1:]), lines
    assert not any("0000000000" in ln.split("  ")[0] for ln in lines[1:])  # no epoch stamps
    assert not any("{'" in ln for ln in lines)  # no Python reprs
    assert any(re.match(stamp + r"creature_warmed +desk +seconds=[\d,]+ ms", ln)
               for ln in lines)
    assert any(re.match(stamp + r"message +desk \[alerts\] +\S+ → pager: text: Server "
                        r"down; priority: high$", ln) for ln in lines)
    assert not any(" message_sent " in ln for ln in lines)  # the message line says it
    only = terrarium("log", rid, "--runs-dir", str(tmp_path), "--creature", "desk",
                     "--kind", "tool_result")
    body = only.stdout.splitlines()[1:]
    assert len(body) == 2, body
    assert "tool_result send_alerts (failed): " + INVALID[:40] in body[0]
    assert "tool_result send_alerts: Sent on alerts to 1 listener." in body[1]
    js = terrarium("log", rid, "--runs-dir", str(tmp_path), "--json", "--kind", "refused,turn")
    rows = [json.loads(ln) for ln in js.stdout.splitlines()]
    assert {r["kind"] for r in rows} == {"turn"}
    assert {r["creature"] for r in rows} == {"desk", "pager"}
    assert all(isinstance(r["ts"], float) and "T" in r["time"] for r in rows)
    later = terrarium("log", rid, "--runs-dir", str(tmp_path), "--since", "2099-01-01 00:00")
    assert later.stdout.splitlines()[1:] == ["(nothing recorded that matches)"]


def test_the_run_list_shows_start_duration_status_and_a_dead_process(tmp_path: Path) -> None:
    with DurableLog(tmp_path / LOG_FILE) as log:
        rid = log.start_run("ghost", "/nowhere")
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()  # a pid that no longer exists
        log.record_event(rid, RunStarted(run_id=rid, terrarium="ghost", path="/nowhere",
                                         pid=dead.pid))
        done = log.start_run("finished", "/somewhere")
        log.set_run_status(done, "completed")
    res = terrarium("log", "--runs-dir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["RUN", "STARTED", "DURATION", "STATUS", "TERRARIUM"]
    [ghost] = [ln for ln in lines if ln.startswith(rid)]
    assert f"running? pid {dead.pid} is gone" in ghost and ghost.endswith("ghost")
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", ghost)
    [fin] = [ln for ln in lines if ln.startswith(done)]
    assert re.search(r" [\d.]+ (ms|s)  completed ", fin)
    js = [json.loads(ln) for ln in terrarium("log", "--runs-dir", str(tmp_path),
                                             "--json").stdout.splitlines()]
    assert {r["run_id"]: r["alive"] for r in js} == {rid: False, done: None}


def test_since_understands_ago_clock_and_date() -> None:
    from datetime import datetime

    now = datetime(2026, 12, 1, 15, 0, 0)
    assert parse_since("10m", now) == datetime(2026, 12, 1, 14, 50).timestamp()
    assert parse_since("14:05", now) == datetime(2026, 12, 1, 14, 5).timestamp()
    assert parse_since("2026-11-30 09:00", now) == datetime(2026, 11, 30, 9).timestamp()
    with pytest.raises(Exception, match="neither a time ago"):
        parse_since("yesterday", now)


# -- first steps -----------------------------------------------------------------------------

def test_version_and_completion() -> None:
    from terrarium import __version__

    res = terrarium("--version")
    assert (res.returncode, res.stdout.strip()) == (0, f"terrarium {__version__}")
    bash = terrarium("completion", "bash")
    assert bash.returncode == 0 and "complete" in bash.stdout and "validate" in bash.stdout
    assert "--max-turns" in bash.stdout


def test_every_command_help_has_examples() -> None:
    from terrarium.cli.command import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    names = sorted(sub.choices)  # type: ignore[union-attr]
    assert {"run", "validate", "log", "init", "completion"} <= set(names)
    for name in names:
        res = terrarium(name, "--help")
        assert res.returncode == 0, name
        assert "\nexamples:\n  terrarium " in res.stdout, name


@pytest.mark.parametrize("kind", ["team", "creature"])
def test_init_writes_something_that_validates_and_runs(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "mine"
    res = terrarium("init", kind, str(folder))
    assert res.returncode == 0, res.stderr
    assert terrarium("validate", str(folder)).returncode == 0
    text = "Hello, I am Ada." if kind == "team" else "Remember that the boat leaves at nine."
    ran = terrarium("run", str(folder), "--input", text, "--runs-dir", str(tmp_path / "r"))
    assert ran.returncode == 0, ran.stderr
    said = ("writer> Greeter says, happily: Nice to meet you! I will remember your name."
            if kind == "team" else "mine> Noted: the boat leaves at nine.")
    assert said in ran.stdout.splitlines()
    assert ", no problems;" in ran.stdout
    again = terrarium("init", str(folder))
    assert again.returncode == 1 and "already exists and is not an empty folder" in again.stderr


def test_validate_json_valid_and_invalid(tmp_path: Path) -> None:
    res = terrarium("validate", "examples/research_team", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    lead = data["terrariums"][0]["creatures"]["lead"]
    assert data["valid"] and lead["tools"] == ["historian", "scientist", "jobs", "read_job",
                                               "wait"]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.yaml").write_text("name: x\ntools:\n\t- info\n")
    res = terrarium("validate", str(bad), "--json")
    assert res.returncode == 2
    [err] = json.loads(res.stdout)["errors"]
    assert (err["line"], err["hint"]) == (3, "tabs are not allowed in YAML indentation; "
                                             "indent with spaces")
    plain = terrarium("validate", str(bad))
    assert "  hint: tabs are not allowed in YAML indentation; indent with spaces" in plain.stderr


def test_tools_and_validate_name_sub_agents_and_jobs() -> None:
    res = terrarium("tools", "examples/research_team", "lead")
    assert res.returncode == 0, res.stderr
    assert "Subagent_" not in res.stdout and "terrarium.controller.jobs" not in res.stdout
    rows = {ln.split()[0]: ln for ln in res.stdout.splitlines()[1:]}
    assert "sub-agent: examples/research_team/historian, background by default" in \
        rows["historian"]
    assert "background jobs" in rows["wait"]
    shown = terrarium("validate", "examples/research_team")
    assert "tools: historian, scientist, jobs, read_job, wait" in shown.stdout


def test_models_pull_does_not_run_pip_when_the_model_is_there() -> None:
    from terrarium.llm.embedded import model_info

    info = model_info()
    if not info["present"] or info["package_version"] != info["wanted_version"]:
        pytest.skip("the embedded model package is not installed here")
    res = terrarium("models", "pull")
    assert res.returncode == 0, res.stderr
    assert "running: " not in res.stdout  # pip was not started
    assert res.stdout.startswith("model already installed: ")


def test_remote_endpoint_needs_no_key_for_a_local_server() -> None:
    text = (ROOT / "examples" / "remote_endpoint" / "config.yaml").read_text()
    assert not re.search(r"^\s*api_key_env:", text, re.M)
    res = terrarium("validate", "examples/remote_endpoint")
    assert res.returncode == 0 and "key from" not in res.stdout


# -- progress while starting --------------------------------------------------------------------

class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_progress_line_names_each_long_step_with_its_elapsed_time() -> None:
    out, clock = StringIO(), FakeClock()
    printer = ConsolePrinter(out, clock=clock)
    printer.progress(ModelLoading(model="SmolLM2", slots=2))
    clock.now += 0.5
    printer.tick()  # under a second: nothing to say yet
    clock.now += TICK
    printer.tick()
    printer.progress(ModelLoaded(model="SmolLM2", seconds=2.0))
    printer.progress(CreatureWarming(creature="router", prefix_tokens=1598))
    clock.now += TICK
    printer.tick()  # the warm-up is 1.5 s old
    printer.progress(PrefixProgress(creature="router", done=512, total=1598))
    clock.now += TICK
    printer.tick()  # the server said how far it is
    printer.progress(TeamReady(seconds=5.1))  # ready, the router still warming
    clock.now += TICK
    printer.tick()
    printer.progress(CreatureWarmed(creature="router", seconds=6.0, prefix="evaluated",
                                    tokens=1598))
    clock.now += TICK
    printer.tick()  # ready and warm: no more progress lines
    assert out.getvalue().splitlines() == [
        "loading model SmolLM2 (2 slots)...",
        "  ... 2.0 s: loading model SmolLM2 (2.0 s)",
        "model loaded in 2.0 s",
        "warming router...",
        "  ... 3.5 s: warming router: evaluating its prompt prefix (~1,598 tokens, "
        "estimated) (1.5 s)",
        "  ... 5.0 s: warming router: prompt prefix 512/1,598 tokens evaluated (3.0 s)",
        "ready in 5.1 s; still warming router (a first reply waits for it)",
        "  ... 6.5 s: warming router: prompt prefix 512/1,598 tokens evaluated (4.5 s)",
        "  router warm in 6.0 s (prefix evaluated, 1598 tokens)",
    ]
    assert TICK < 2.0


@pytest.mark.embedded
def test_the_main_command_prints_progress_at_least_every_2_s_until_ready(tmp_path: Path
                                                                         ) -> None:
    """The README's main command, as written (runs dir aside): the progress lines' own
    elapsed stamps start early and never leave a gap over 2 s until every creature is
    warm (`ready` comes first; a prefix the cache lacks is evaluated after it)."""
    env = {**ENV, "TERRARIUM_CACHE_DIR": str(tmp_path / "cache")}  # a first start: no cache
    res = subprocess.run(
        [sys.executable, "-m", "terrarium", "run", str(ROOT / "examples" / "voice_assistant"),
         "--input", "Hi, my name is Ada. I love green tea.", "--runs-dir",
         str(tmp_path / "runs")], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=900, check=False)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    # ready, then every creature warm (a first reply waits for its creature's prefix)
    warm = max(i for i, ln in enumerate(lines) if re.match(r"  \w+ warm in ", ln))
    stamps = [float(m.group(1)) for ln in lines[:warm]
              if (m := re.match(r"  \.\.\. ([\d.]+) s: ", ln))]
    # the ticker thread prints every TICK (1.5 s, under the 2 s promise); a loaded machine
    # wakes it late, which stretches one gap, while a tick that printed nothing doubles it.
    # So the check is the printer's: no gap as long as two ticks (the promise's wall-clock
    # side, each tick on time, is the fake-clock test above)
    if stamps:
        assert stamps[0] <= 3 * TICK  # the first tick past the quiet second, or the next
        assert all(b - a < 2 * TICK for a, b in itertools.pairwise(stamps)), stamps
    assert not any(ln.startswith("  ... ") for ln in lines[warm + 1:])


def test_progress_lines_stop_once_ready_in_a_real_run(tmp_path: Path) -> None:
    res = run_alerts(tmp_path, "it is fixed")
    assert res.returncode == 0
    lines = res.stdout.splitlines()
    ready = next(i for i, ln in enumerate(lines) if ln.startswith("ready in "))
    assert not any(ln.startswith("  ... ") for ln in lines[ready:])
