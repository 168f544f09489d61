"""Secrets stay out of reach: a shell command cannot read the keys of the process that runs
it (sandboxed or not), no secret value lands in the event log, and credentials in URLs
(a model's ``base_url``, a broker URL) are masked wherever they are printed."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from terrarium import secrecy
from terrarium.channels.log import DurableLog
from terrarium.channels.nats.connect import connect_options
from terrarium.errors import RuntimeFailure
from terrarium.events import TurnEnded
from terrarium.runtime.recording import LOG_FILE

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-0123456789abcdefSECRET"
TOKEN = "ghp_tokenTOKENtoken0123456789"
ROUTER = "or-key-named-by-the-config-only"


@pytest.fixture(autouse=True)
def _clean_store() -> Iterator[None]:
    secrecy.forget()
    yield
    secrecy.forget()


def env_for_child(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **extra}


def terrarium(*args: str, env: dict[str, str], cwd: Path = ROOT
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "terrarium", *args], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120, check=False)


def snoop_creature(tmp_path: Path, sandbox: Any) -> Path:
    """A creature whose model runs a command that hunts for keys in every environment it
    can see, its parent's first. Its config names OPENROUTER as its key's variable (a name
    that does not look like a secret's)."""
    folder = tmp_path / "snoop"
    folder.mkdir()
    hunt = ("cat /proc/$PPID/environ | tr '\\0' '\\n'; "
            "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a SECRET; env")
    (folder / "config.yaml").write_text(yaml.safe_dump({
        "name": "snoop", "controller": {"provider": "scripted", "script": "script.yaml",
                                        "api_key_env": "OPENROUTER"},
        "skill_mode": "static", "tools": ["shell"], "workspace": "ws",
        "tool_options": {"shell": {"sandbox": sandbox}}}))
    (folder / "script.yaml").write_text(yaml.safe_dump({"steps": [
        {"match": "go", "reply": f"[/shell]\n@@command={hunt}\n[shell/]"},
        {"match": "exit code", "reply": "Looked."}]}))
    return folder


@pytest.mark.parametrize("sandbox", [pytest.param("auto", id="sandbox"),
                                     pytest.param(False, id="plain")])
def test_a_shell_command_cannot_read_the_keys_of_its_parent(tmp_path: Path,
                                                           sandbox: Any) -> None:
    folder = snoop_creature(tmp_path, sandbox)
    runs = tmp_path / "runs"
    res = terrarium("run", str(folder), "--input", "go", "--runs-dir", str(runs),
                    env=env_for_child(OPENAI_API_KEY=KEY, GITHUB_TOKEN=TOKEN,
                                      OPENROUTER=ROUTER))
    assert res.returncode == 0, res.stderr
    with DurableLog(runs / LOG_FILE) as log:
        [run] = log.runs()
        [turn] = log.turns(run.run_id)
    seen = turn.calls[0]["result"]
    assert "exit code 0" in seen and "PATH=" in seen  # the command ran and printed
    for secret in (KEY, TOKEN, ROUTER):
        assert secret not in seen
        assert secret not in res.stdout + res.stderr
    for f in runs.iterdir():  # nor anywhere in the log files
        if f.is_file():
            assert KEY.encode() not in f.read_bytes()


def test_taken_secrets_leave_the_environment_and_stay_usable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", KEY)
    monkeypatch.setenv("TERRARIUM_NATS_PASSWORD", "natspass123")
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    taken = secrecy.take_secrets(["PLAIN_NAMED_BY_CONFIG"])
    assert taken == ["MY_SERVICE_API_KEY", "TERRARIUM_NATS_PASSWORD"]
    assert "MY_SERVICE_API_KEY" not in os.environ and os.environ["PLAIN_SETTING"] == "kept"
    assert secrecy.env("MY_SERVICE_API_KEY") == KEY  # where terrarium needs it
    monkeypatch.setenv("TERRARIUM_NATS_USER", "bob")  # a name, not a secret: stays
    assert connect_options("nats://h:4222")["password"] == "natspass123"
    assert secrecy.redact(f"key={KEY}!") == "key=***!"


def test_the_log_never_holds_a_secret_value(tmp_path: Path) -> None:
    secrecy.register(KEY)
    with DurableLog(tmp_path / "log.sqlite3") as log:
        run_id = log.start_run("t", tmp_path)
        log.record_event(run_id, TurnEnded(creature="w", turn_index=1, error=f"the key is {KEY}"))
        [ev] = [e for e in log.events(run_id) if e["kind"] == "turn_ended"]
    assert f"the key is {secrecy.MASK}" in str(ev)
    for f in tmp_path.iterdir():
        assert KEY.encode() not in f.read_bytes()


@pytest.mark.parametrize(("text", "shown"), [
    ("http://user:pw123@host/v1", "http://user:***@host/v1"),
    ("see https://TOKEN123@github.com/x.git now", "see https://***@github.com/x.git now"),
    ("nats://a:b@h:4222,nats://c:d@k:4222", "nats://a:***@h:4222,nats://c:***@k:4222"),
    ("mail me: bob@example.com at http://host/x", "mail me: bob@example.com at http://host/x"),
])
def test_url_credentials_are_masked(text: str, shown: str) -> None:
    assert secrecy.redact(text) == shown


def url_creature(tmp_path: Path) -> Path:
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "config.yaml").write_text(
        'name: c\ncontroller: {base_url: "http://user:${PW}@127.0.0.1:9/v1", model: m, '
        "max_retries: 0}\n")
    return folder


def test_a_password_in_base_url_is_never_printed(tmp_path: Path) -> None:
    folder = url_creature(tmp_path)
    env = env_for_child(PW="hunter2pass")
    checked = terrarium("validate", str(folder), env=env)
    assert checked.returncode == 0, checked.stderr
    assert "http://user:***@127.0.0.1:9/v1" in checked.stdout
    ran = terrarium("run", str(folder), "--input", "hi", "--runs-dir", str(tmp_path / "runs"),
                    env=env)
    assert ran.returncode == 1  # nothing listens on port 9
    assert "user:***@127.0.0.1:9" in ran.stdout + ran.stderr
    for out in (checked.stdout + checked.stderr, ran.stdout + ran.stderr):
        assert "hunter2pass" not in out
    for f in (tmp_path / "runs").iterdir():
        if f.is_file():
            assert b"hunter2pass" not in f.read_bytes()


def test_a_password_in_the_broker_url_is_never_printed(tmp_path: Path) -> None:
    folder = url_creature(tmp_path)
    ran = terrarium("run", str(folder), "--input", "hi", "--runs-dir", str(tmp_path / "runs"),
                    "--broker", "nats://bob:brokerpw99@127.0.0.1:1", env=env_for_child(PW="x"))
    assert ran.returncode == 1
    assert "could not connect to the NATS broker at nats://bob:***@127.0.0.1:1" in ran.stderr
    assert "brokerpw99" not in ran.stdout + ran.stderr


@pytest.mark.parametrize(("url", "why"), [
    ("nats://[::bad", "is not a valid URL (Invalid IPv6 URL)"),
    ("nats://host:port", "is not a valid URL (Port could not be cast to integer value"),
    ("http://host:4222", "is not a nats:// or tls:// URL"),
    ("nats://", "names no host"),
])
def test_a_malformed_broker_url_is_one_sentence(url: str, why: str) -> None:
    with pytest.raises(RuntimeFailure) as err:
        connect_options(url, env={})
    assert why in err.value.message


def test_a_malformed_broker_url_on_the_command_line(tmp_path: Path) -> None:
    ran = terrarium("run", str(url_creature(tmp_path)), "--input", "hi", "--runs-dir",
                    str(tmp_path / "runs"), "--broker", "nats://[::bad", env=env_for_child(PW="x"))
    assert ran.returncode == 1
    assert ran.stderr.startswith("error: the broker URL 'nats://[::bad' is not a valid URL")
    assert "Traceback" not in ran.stderr


def test_a_taken_secret_still_reaches_where_it_is_asked_for(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A command a creature passes a token to on purpose (``pass_env``) and the server's
    ``--token-env`` still get theirs after the process entry took them."""
    import argparse

    import anyio

    from terrarium.cli.serve import _token
    from terrarium.tools.base import ToolContext
    from terrarium.tools.runner import run_tool
    from terrarium.tools.shell import ShellTool

    monkeypatch.setenv("DEPLOY_TOKEN", "deploy-token-value")
    monkeypatch.setenv("MY_SERVE_TOKEN", "serve-token-0123456789")
    secrecy.take_secrets()
    assert "DEPLOY_TOKEN" not in os.environ
    ctx = ToolContext(creature="w", cwd=tmp_path, workspace=tmp_path,
                      tool_options={"shell": {"pass_env": ["DEPLOY_TOKEN"]}})
    res = anyio.run(run_tool, ShellTool, {"command": "echo $DEPLOY_TOKEN"}, ctx)
    assert res.text == "deploy-token-value\n[exit code 0]"
    assert _token(argparse.Namespace(token_env="MY_SERVE_TOKEN")) == "serve-token-0123456789"
