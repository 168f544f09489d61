"""The public surface: what ``import terrarium`` offers is pinned, and ``terrarium.run`` works."""

from __future__ import annotations

from pathlib import Path

import anyio

import terrarium

ROOT = Path(__file__).resolve().parent.parent

PUBLIC = [
    "ChannelRefusal",
    "ChatModel",
    "ChatRequest",
    "ConfigError",
    "ConfigErrors",
    "ControllerSettings",
    "EmbeddedServer",
    "Event",
    "ModelError",
    "OpenAIClient",
    "RunReport",
    "RuntimeFailure",
    "RuntimeOptions",
    "ScriptedModel",
    "Supervision",
    "Team",
    "TeamRuntime",
    "TemplateError",
    "TerrariumError",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "TurnResult",
    "__version__",
    "load_any",
    "load_single_creature",
    "load_team",
    "run",
]


def test_exported_names_are_pinned() -> None:
    assert sorted(terrarium.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(terrarium, name) is not None


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
