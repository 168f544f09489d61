"""Every CLI command over the whole broken-config corpus: a config problem is a located
sentence and an exit code, never a Python traceback.

In-process through :func:`terrarium.cli.main` (fast); a few cases also as a real
subprocess, where a traceback would show on stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from terrarium.cli import main

CASES = sorted((Path(__file__).parents[1] / "broken_configs").glob("*.yaml"))
ROOT = Path(__file__).resolve().parents[2]

# the exit code each command gives a broken config (README, "Exit codes"); ``tools`` only
# lists tools, so a persona mistake does not stop it; ``log`` reads no config at all (it
# lists the failed runs, or finds no run log)
EXPECTED = {"validate": {2}, "prompt": {2}, "tools": {0, 2}, "run": {2},
            "migrate": {0, 1, 2}, "log": {0, 1}}


def _write(case: Path, tmp: Path) -> Path:
    spec = yaml.safe_load(case.read_text())
    for rel, text in spec["files"].items():
        target = tmp / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("cp1252" if rel in spec.get("cp1252", ()) else "utf-8"))
    for link, dest in spec.get("symlinks", {}).items():
        (tmp / link).symlink_to(tmp / dest)
    return tmp / spec.get("path", ".")


def _commands(path: Path, tmp: Path) -> list[tuple[str, list[str]]]:
    runs = str(tmp / "runs")
    return [
        ("validate", ["validate", str(path)]),
        ("prompt", ["prompt", str(path), "b"]),
        ("tools", ["tools", str(path), "b"]),
        ("run", ["run", str(path), "--timeout", "1", "--input", "x", "--runs-dir", runs,
                 "--audio", "none"]),
        ("migrate", ["migrate", str(path), str(tmp / "migrated")]),
        ("log", ["log", "--runs-dir", runs]),
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_every_command_refuses_without_traceback(
    case: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(case, tmp_path / "cfg")
    for name, argv in _commands(path, tmp_path):
        code = main(argv)  # an exception escaping here is the traceback a user would see
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err, (name, out, err)
        assert code in EXPECTED[name], f"{name}: exit {code}\n{out}\n{err}"
        if code:
            assert (out + err).strip(), f"{name} exited {code} and said nothing"


SUBPROCESS = ["yaml_syntax_error", "persona_not_utf8", "persona_unknown_call"]


@pytest.mark.parametrize("stem", SUBPROCESS)
def test_real_process_prints_no_traceback(stem: str, tmp_path: Path) -> None:
    path = _write(Path(__file__).parents[1] / "broken_configs" / f"{stem}.yaml", tmp_path / "cfg")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, argv in _commands(path, tmp_path):
        if name not in ("validate", "prompt", "run"):
            continue
        proc = subprocess.run([sys.executable, "-m", "terrarium", *argv], capture_output=True,
                              text=True, env=env, timeout=60)
        assert "Traceback" not in proc.stdout + proc.stderr, (name, proc.stderr)
        assert proc.returncode in EXPECTED[name], (name, proc.returncode, proc.stderr)
