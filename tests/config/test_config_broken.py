"""The broken-config corpus: each case must fail validation with exit 2, naming file/line/key.

Each ``tests/broken_configs/*.yaml`` holds ``files`` (relative path → contents) written to a
temporary folder (those listed under ``cp1252`` in that encoding), the ``path`` to validate,
and ``expect``: the file, line and key the first matching error must name and a fragment of
its message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from terrarium.cli import main

CASES = sorted((Path(__file__).parents[1] / "broken_configs").glob("*.yaml"))


def test_corpus_is_big_enough() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_broken_config(case: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = yaml.safe_load(case.read_text())
    for rel, text in spec["files"].items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        # files listed under ``cp1252`` are written as an old Windows editor would
        target.write_bytes(text.encode("cp1252" if rel in spec.get("cp1252", ()) else "utf-8"))
    for link, dest in spec.get("symlinks", {}).items():
        (tmp_path / link).symlink_to(tmp_path / dest)
    code = main(["validate", str(tmp_path / spec.get("path", "."))])
    err = capsys.readouterr().err
    assert code == 2, err
    exp = spec["expect"]
    where = f"{tmp_path / exp['file']}:{exp['line']}"
    lines = err.splitlines()
    hits = [ln for ln in lines if where + ":" in ln or ln.startswith(where + " ")]
    assert hits, f"no error at {where}:\n{err}"
    matching = [ln for ln in hits if exp.get("key", "") in ln and exp["message"] in ln]
    assert matching, f"expected key {exp.get('key')!r} and {exp['message']!r} at {where}:\n{err}"
    if "hint" in exp:
        assert exp["hint"] in err
    if "count" in exp:
        assert err.splitlines()[0].startswith(f"{exp['count']} configuration error")
