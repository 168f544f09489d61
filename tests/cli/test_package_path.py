"""A package (``kohaku.yaml``) given to a command that takes one team is a wrong PATH:
exit 2 like every configuration error (README: nothing started), naming the package and
what inside it to give instead, each as the command to type. Before: exit 1 (a failed
run) and an example unrelated to the package given."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from terrarium.cli import main


def _package(tmp_path: Path) -> Path:
    """A package with one terrarium (two creatures) and one creature of its own."""
    root = tmp_path / "pkg"
    for folder, name in (("team/alpha", "alpha"), ("team/beta", "beta"), ("solo", "solo")):
        (root / folder).mkdir(parents=True)
        (root / folder / "config.yaml").write_text(yaml.safe_dump({
            "name": name, "controller": {"provider": "scripted", "script": "script.yaml"}}))
        (root / folder / "script.yaml").write_text("default_reply: ok\n")
    (root / "team" / "terrarium.yaml").write_text(yaml.safe_dump({"terrarium": {
        "name": "duo", "input_channel": "inbox",
        "creatures": [{"name": "alpha", "config": "alpha", "channels": {"listen": ["inbox"]}},
                      {"name": "beta", "config": "beta"}],
        "channels": {"inbox": {"type": "queue"}}}}))
    (root / "kohaku.yaml").write_text(yaml.safe_dump({
        "name": "mypkg", "creatures": ["solo"], "terrariums": ["team"]}))
    return root


@pytest.mark.parametrize("argv", [
    ["run", "{pkg}", "--input", "hi"], ["run", "{pkg}/kohaku.yaml"], ["serve", "{pkg}"],
    ["worker", "{pkg}", "--broker", "nats://127.0.0.1:1"], ["graph", "{pkg}"],
    ["prompt", "{pkg}", "beta"], ["tools", "{pkg}", "solo"]])
def test_a_package_is_refused_with_what_to_give_instead(
        argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = _package(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = [a.format(pkg=pkg) for a in argv]
    command = args[0]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{pkg / 'kohaku.yaml'}: {args[1]} is the package 'mypkg' (kohaku.yaml), and " \
           f"`terrarium {command}` takes one terrarium or creature, not a package" in err
    offered = [ln.split("#")[0].strip() for ln in err.splitlines() if "   # " in ln]
    if command in ("run", "serve", "worker"):
        assert offered == [f"terrarium {command} pkg/team", f"terrarium {command} pkg/solo"]
    elif command == "graph":  # a creature alone is not worth a graph
        assert offered == ["terrarium graph pkg/team"]
    elif command == "prompt":  # only where a creature of that name is
        assert offered == ["terrarium prompt pkg/team beta"]
    else:
        assert offered == ["terrarium tools pkg/solo solo"]
    assert "Traceback" not in err
