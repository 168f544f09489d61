"""The dataclasses' generated methods compiled once and kept (``terrarium/cli/codecache.py``):
a class built from the cache is the class built without it, and a second process compiles
none of what the first one saved."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from terrarium.codecache import CodeCache, cache_file, code_cache

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 120  # seconds: a bound against hangs, never a measured figure


def _make() -> type:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Sample:
        name: str
        count: int = 0
        tags: tuple[str, ...] = ()

    return Sample


def test_a_class_from_the_cache_is_the_class_without_it(tmp_path: Path) -> None:
    plain = _make()
    with code_cache(tmp_path / "code.marshal") as cache:
        assert cache is not None
        cached = _make()
    assert cache.compiled > 0
    for cls in (plain, cached):
        a, b = cls(name="a", count=2), cls(name="a", count=2)
        assert a == b and hash(a) == hash(b) and a != cls(name="b")
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.count = 3  # type: ignore[misc]
    assert repr(cached(name="x")) == repr(plain(name="x")).replace(
        plain.__qualname__, cached.__qualname__)
    # compiled as exec() compiles dataclasses' text: no `from __future__ import
    # annotations` leaking in from the cache's own module
    assert cached.__init__.__annotations__ == plain.__init__.__annotations__
    assert cached.__init__.__code__.co_filename == plain.__init__.__code__.co_filename


def test_a_second_process_compiles_nothing_the_first_saved(tmp_path: Path) -> None:
    path = tmp_path / "code.marshal"
    with code_cache(path) as first:
        _make()
    assert first is not None and first.compiled > 0 and path.is_file()
    with code_cache(path) as second:
        _make()
    assert second is not None and second.compiled == 0
    assert "exec" not in vars(dataclasses)  # nothing of it left behind


def test_string_annotations_are_compiled_once_too(tmp_path: Path) -> None:
    """typing compiles each string annotation (a ForwardRef): kept the same way."""
    path = tmp_path / "code.marshal"
    plain = typing.ForwardRef("dict[str, int] | None")
    for expect_compiled in (1, 0):
        with code_cache(path) as cache:
            assert cache is not None
            ref = typing.ForwardRef("dict[str, int] | None")
            assert cache.compiled == expect_compiled
            with pytest.raises(SyntaxError):
                typing.ForwardRef("dict[")  # a bad one is refused as before, never kept
        assert ref == plain and ref._evaluate(None, None, frozenset()) == dict[str, int] | None
        assert ref.__forward_code__.co_code == plain.__forward_code__.co_code
    assert "compile" not in vars(typing)


def test_a_damaged_or_foreign_file_is_ignored_and_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "code.marshal"
    path.write_bytes(b"\x00not marshal at all")
    with code_cache(path) as cache:
        _make()
    assert cache is not None and cache.compiled > 0
    assert CodeCache(path).known  # rewritten with what was used


def test_it_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERRARIUM_CODE_CACHE", "0")
    with code_cache(tmp_path / "code.marshal") as cache:
        _make()
    assert cache is None and not (tmp_path / "code.marshal").exists()


def test_the_command_keeps_its_dataclasses_code_in_the_cache_folder(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERRARIUM_CACHE_DIR": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "terrarium", "validate",
                          "examples/scripted_newsroom"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=LIMIT, check=False)
    assert res.returncode == 0, res.stderr
    saved = CodeCache(tmp_path / cache_file().relative_to(cache_file().parents[1]))
    assert len(saved.known) > 50  # the events', the config's, the runtime's classes
