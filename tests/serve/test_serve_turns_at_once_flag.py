"""``terrarium serve --turns-at-once N``: the server's turn gate from the command line (the
default 1, 0 for none), refused below 0 with argparse's sentence."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from terrarium.cli.command import build_parser
from terrarium.cli.serve import serve_settings
from terrarium.config import load_team
from terrarium.serve import create_app
from tests.serve_helpers import CHAT


def _settings(tmp_path: Path, *flags: str) -> object:
    args = build_parser().parse_args(["serve", str(CHAT), "--runs-dir", str(tmp_path),
                                      *flags])
    return serve_settings(args, None, [])


def test_the_flag_sets_the_gate(tmp_path: Path) -> None:
    default = _settings(tmp_path)
    assert default.turns_at_once == 1  # type: ignore[attr-defined]
    three = _settings(tmp_path, "--turns-at-once", "3")
    assert three.turns_at_once == 3  # type: ignore[attr-defined]
    gate = create_app(load_team(CHAT), three).state.manager.gate  # type: ignore[arg-type]
    assert gate is not None and gate.limit == 3
    none = _settings(tmp_path, "--turns-at-once", "0")
    assert create_app(load_team(CHAT), none).state.manager.gate is None  # type: ignore[arg-type]


def test_a_negative_limit_is_refused_with_a_sentence(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "terrarium", "serve", str(CHAT),
                          "--runs-dir", str(tmp_path), "--turns-at-once", "-1"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert "--turns-at-once: -1 is below 0" in res.stderr
    assert "Traceback" not in res.stderr
    res = subprocess.run([sys.executable, "-m", "terrarium", "serve", "--help"],
                         capture_output=True, text=True, timeout=120)
    assert "--turns-at-once N" in res.stdout
