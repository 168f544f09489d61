"""``terrarium run`` keeps the garbage collector off from its start to its ``ready``
(``cli.command.StartCollector``), in its own process only."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from terrarium.cli.command import StartCollector

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 120  # seconds: a bound against hangs, never a measured figure


@pytest.fixture(autouse=True)
def _collector_as_it_was() -> Iterator[None]:
    was = gc.isenabled()
    yield
    gc.unfreeze()
    if was:
        gc.enable()


def test_off_until_ready_then_on_with_the_start_frozen() -> None:
    gc.enable()
    with StartCollector(True) as collector:
        assert not gc.isenabled()
        collector.ready()
        assert gc.isenabled() and gc.get_freeze_count() > 0
    assert gc.isenabled()


def test_on_again_when_the_run_ends_before_it_is_ready() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), StartCollector(True):
        assert not gc.isenabled()
        raise RuntimeError("the start failed")
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_caller_of_main_keeps_its_collector() -> None:
    gc.enable()
    with StartCollector(False) as collector:
        assert gc.isenabled()
        collector.ready()
    assert gc.isenabled() and gc.get_freeze_count() == 0


PROBE = """
import gc, sys
import terrarium.cli.run as run
seen = []
real = run._on_ready
def on_ready(args):
    seen.append(gc.isenabled())
    real(args)
    seen.append(gc.isenabled())
run._on_ready = on_ready
from terrarium.cli.command import entry
code = entry()
print("collector at ready", seen, flush=True)
sys.exit(code)
"""


def test_the_command_turns_it_back_on_at_ready(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERRARIUM_CACHE_DIR": str(tmp_path)}
    res = subprocess.run([sys.executable, "-c", PROBE, "run", "examples/scripted_newsroom",
                          "--input", "A comet was seen over Oslo.", "--runs-dir",
                          str(tmp_path / "runs")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=LIMIT, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "collector at ready [False, True]" in res.stdout
