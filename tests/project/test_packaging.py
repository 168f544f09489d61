"""An installed wheel finds its own creatures, channels and examples (not the source tree)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_installed_wheel_carries_its_data(tmp_path: Path) -> None:
    wheels, target = tmp_path / "wheels", tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels),
                    str(ROOT)], check=True)
    wheel = next(wheels.glob("terrarium-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(target), str(wheel)], check=True)
    code = (
        "import terrarium.paths as p, sys\n"
        "from terrarium.cli import main\n"
        "print(p.data_root())\n"
        "sys.exit(main(['validate', str(p.examples_dir() / 'voice_assistant')]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first == str(target / "terrarium" / "_data")
    assert "'voice_assistant'" in out.stdout and "is valid" in out.stdout
