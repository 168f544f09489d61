"""What the embedded server asks llama.cpp for at start (a fake binding records it): the
start-time and reproducibility settings of issue 17, without loading a model."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from terrarium.llm.embedded import SAMPLING_SEED, EmbeddedServer


class Anything:
    """A parameter tree: any attribute read is a new branch; writes are kept."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        child = Anything()
        setattr(self, name, child)
        return child


@pytest.fixture
def started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    made: list[Any] = []

    def server(params: Any) -> Any:
        made.append(params)
        return types.SimpleNamespace(listening_address="127.0.0.1:9")

    fake = types.ModuleType("xllamacpp")
    fake.CommonParams = Anything  # type: ignore[attr-defined]
    fake.llama_flash_attn_type = Anything()  # type: ignore[attr-defined]
    fake.Server = server  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "xllamacpp", fake)
    monkeypatch.setattr(EmbeddedServer, "_wait_healthy", lambda self: None)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    EmbeddedServer(model=model).start()
    return made


def test_no_second_load_to_fit_params_and_a_fixed_seed(started: list[Any]) -> None:
    (params,) = started
    assert params.fit_params is False  # the fit loads the model once more, for nothing on a CPU
    assert params.sampling.seed == SAMPLING_SEED
    assert params.warmup is False


def test_the_openmp_wait_policy_is_not_left_for_child_processes(started: list[Any]) -> None:
    assert "OMP_WAIT_POLICY" not in os.environ


def test_a_wait_policy_the_user_set_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          started: list[Any]) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    model = tmp_path / "m.gguf"
    EmbeddedServer(model=model).start()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_generation_and_prompt_evaluation_threads_apart(tmp_path: Path,
                                                        started: list[Any]) -> None:
    EmbeddedServer(model=tmp_path / "m.gguf", threads=2, gen_threads=1).start()
    params = started[-1]
    assert (params.cpuparams.n_threads, params.cpuparams_batch.n_threads) == (1, 2)


def test_generation_threads_default_to_the_threads(started: list[Any]) -> None:
    (params,) = started
    assert params.cpuparams.n_threads == params.cpuparams_batch.n_threads >= 1


def test_a_shape_remembered_before_gen_threads_still_matches(tmp_path: Path) -> None:
    from dataclasses import asdict

    from terrarium.llm.server_process import ServerShape

    shape = EmbeddedServer(model=tmp_path / "m.gguf", threads=2).shape(tmp_path / "m.gguf")
    old = {k: v for k, v in asdict(shape).items() if k != "gen_threads"}
    assert ServerShape(**old) == shape
    apart = EmbeddedServer(threads=2, gen_threads=1).shape(tmp_path / "m.gguf")
    assert apart != shape and apart.gen_threads == 1


@pytest.mark.parametrize(("value", "want"), [("1", 1), (" 3 ", 3), ("0", 2), ("two", 2),
                                             ("-1", 2), ("", 2)])
def test_the_environment_may_set_the_generation_threads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, want: int) -> None:
    monkeypatch.setenv("TERRARIUM_GEN_THREADS", value)
    server = EmbeddedServer(model=tmp_path / "m.gguf", threads=2)
    assert (server.gen_threads, server.threads) == (want, 2)
    assert EmbeddedServer(threads=2, gen_threads=2).gen_threads == 2  # an argument wins
