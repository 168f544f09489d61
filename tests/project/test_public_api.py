"""The public surface: what ``import terrarium`` offers is pinned, and ``terrarium.run`` works."""

from __future__ import annotations

from pathlib import Path

import anyio

import terrarium

ROOT = Path(__file__).resolve().parents[2]

def test_public_names_are_the_type_checking_block_and_each_resolves() -> None:
    """The public names are written once (terrarium/__init__.py's TYPE_CHECKING block):
    ``__all__`` is made from it, and each name is the object its module defines."""
    import importlib

    from terrarium.lazy import _type_checking_imports

    table = _type_checking_imports((ROOT / "terrarium" / "__init__.py").read_text())
    assert terrarium.__all__ == sorted([*table, "__version__"])
    assert {"TeamRuntime", "run", "load_team", "Tool", "ModelSettings", "TerrariumError"} <= set(
        table)
    for name, module in table.items():
        assert getattr(terrarium, name) is getattr(importlib.import_module(module), name), name
    assert sorted(set(dir(terrarium)) & set(table)) == sorted(table)


def test_an_unknown_name_is_an_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        terrarium.Nope  # noqa: B018


def test_every_error_is_a_terrarium_error_or_a_value_error() -> None:
    from terrarium import errors

    for name in errors.__all__:
        obj = getattr(errors, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            assert issubclass(obj, terrarium.TerrariumError | ValueError), name


def test_run_drives_a_team_to_quiet(tmp_path: Path) -> None:
    opts = terrarium.RuntimeOptions(runs_dir=tmp_path, audio="none", warm_up=False)

    async def go() -> terrarium.RunReport:
        return await terrarium.run(ROOT / "examples" / "scripted_newsroom",
                                   ["A comet was seen over Oslo."], options=opts)

    report = anyio.run(go)
    assert report.run_id
    assert report.log_path is not None and report.log_path.exists()
    creatures = {name for name, _ in report.turns}
    assert len(creatures) >= 2  # the input was routed on through the team


def test_run_refuses_a_package() -> None:
    import pytest

    with pytest.raises(terrarium.TerrariumError, match="package"):
        anyio.run(terrarium.run, ROOT)


def test_every_module_declares_all_and_its_names_exist() -> None:
    import importlib
    import pkgutil

    missing: list[str] = []
    for info in pkgutil.walk_packages(terrarium.__path__, "terrarium."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        names = getattr(module, "__all__", None)
        if names is None:
            missing.append(f"{info.name}: no __all__")
            continue
        missing += [f"{info.name}.{n}" for n in names if not hasattr(module, n)]
    assert not missing, missing
