"""``bench/engine.py``'s planning and ratios: a run as shipped runs bare twice (OpenMP's
default, and the wait policy the embedded server ran with in that run), so the one run the
lead makes quietly answers both "as shipped" and "the same policy"; ratios are taken run by
run, with their range; ``--variants`` names only start arguments the server has."""

from __future__ import annotations

import pytest

from terrarium.llm.embedded import WAIT_POLICY, EmbeddedServer, wait_policy
from terrarium.llm.server_process import child_env
from tests.script_loader import ROOT, load_script

bench = load_script(ROOT / "bench" / "engine.py", "bench_engine_plan")
Kind = bench.Kind
SAME = bench.SAME


def test_as_shipped_runs_bare_under_both_policies_and_compares_each() -> None:
    kinds = bench.plan(None)
    assert kinds == [Kind("embedded"), Kind("bare"), Kind("bare", SAME)]
    assert [(what, e.key, b.key) for what, e, b in bench.comparisons(kinds)] == [
        ("as shipped", "embedded", "bare"),
        ("the same policy", "embedded", "bare same-policy"),
    ]


def test_named_policies_compare_like_with_like_only() -> None:
    kinds = bench.plan(["PASSIVE", "ACTIVE"])
    assert [k.key for k in kinds] == ["embedded PASSIVE", "bare PASSIVE",
                                      "embedded ACTIVE", "bare ACTIVE"]
    assert [(what, e.policy, b.policy) for what, e, b in bench.comparisons(kinds)] == [
        ("both PASSIVE", "PASSIVE", "PASSIVE"), ("both ACTIVE", "ACTIVE", "ACTIVE")]


def test_variants_threads_and_embedded_only() -> None:
    kinds = bench.plan(["PASSIVE"], variants=["batch=256", "flash_attention=1 batch=512"])
    assert [k.key for k in kinds] == ["embedded [batch=256] PASSIVE",
                                      "embedded [flash_attention=1 batch=512] PASSIVE",
                                      "bare PASSIVE"]
    # each variant against the one bare kind, named
    assert [(what, e.variant) for what, e, _ in bench.comparisons(kinds)] == [
        ("both PASSIVE, embedded [batch=256]", "batch=256"),
        ("both PASSIVE, embedded [flash_attention=1 batch=512]",
         "flash_attention=1 batch=512")]
    threaded = bench.plan(["PASSIVE"], threads=["2:2", "1:2"])
    assert [(e.threads, b.threads) for _, e, b in bench.comparisons(threaded)] == [
        ("2:2", "2:2"), ("1:2", "1:2")]
    alone = bench.plan(["PASSIVE", "spin:100"], embedded_only=True)
    assert [k.mode for k in alone] == ["embedded", "embedded"]
    assert bench.comparisons(alone) == []


def test_ratios_are_run_by_run_with_their_range() -> None:
    e = [{"pp": 90.0, "tg": 20.0, "cpu_ms": 1000.0, "policy": "PASSIVE"},
         {"pp": 40.0, "tg": 12.0, "cpu_ms": 1100.0, "policy": "PASSIVE"},
         {"pp": 100.0, "tg": 30.0, "cpu_ms": 900.0, "policy": "PASSIVE"}]
    b = [{"pp": 100.0, "tg": 20.0, "cpu_ms": 1000.0, "policy": "default"},
         {"pp": 50.0, "tg": 10.0, "cpu_ms": 1000.0, "policy": "default"},
         {"pp": 80.0, "tg": 40.0, "cpu_ms": 1000.0, "policy": "default"}]
    assert bench.pair_ratios(e, b, "pp") == (0.9, 0.8, 1.25)
    assert bench.pair_ratios(e, b, "tg") == (1.0, 0.75, 1.2)
    lines = bench.compare("as shipped", e, b)
    assert "as shipped (PASSIVE against default)" in lines[0]
    assert "prompt 0.90x (0.80-1.25), generation 1.00x (0.75-1.20)" in lines[0]
    assert lines[0].endswith("NOT met")
    assert "1.00x (0.90-1.10" in lines[1]
    # one ratio above and one below: the lower decides
    assert bench.compare("x", e[2:], b[2:])[0].endswith("target >= 0.95x NOT met")
    assert bench.compare("x", e[:1], e[:1])[0].endswith("target >= 0.95x met")


def test_a_turn_compares_its_cpu_times() -> None:
    e = [{"pp": 90.0, "tg": 30.0, "cpu_first_ms": 130.0, "cpu_gen_ms": 26.0}]
    b = [{"pp": 80.0, "tg": 30.0, "cpu_first_ms": 160.0, "cpu_gen_ms": 26.0}]
    lines = bench.compare("as shipped", e, b)
    assert len(lines) == 2
    assert "a turn's first token 0.81x (0.81-0.81), a generated token 1.00x" in lines[1]


def test_variants_are_the_servers_own_arguments() -> None:
    assert bench.variant_kwargs("flash_attention=1 batch=512 poll=0") == {
        "flash_attention": True, "batch": 512, "poll": 0}
    assert bench.variant_kwargs(None) == {}
    EmbeddedServer(**bench.variant_kwargs("flash_attention=0 batch=128"))  # accepted
    for bad in ("threads=2", "batch=big", "batch"):
        with pytest.raises(SystemExit):
            bench.variant_kwargs(bad)


def test_policy_env_sets_exactly_one_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    monkeypatch.setenv("GOMP_SPINCOUNT", "5")
    assert "OMP_WAIT_POLICY" not in bench.policy_env("default")
    assert "GOMP_SPINCOUNT" not in bench.policy_env("default")
    spin = bench.policy_env("spin:100")
    assert (spin["GOMP_SPINCOUNT"], "OMP_WAIT_POLICY" in spin) == ("100", False)
    assert bench.policy_env("PASSIVE")["OMP_WAIT_POLICY"] == "PASSIVE"
    # the child is told, so an embedded one under OpenMP's own policy loads the binding
    # before the server would set PASSIVE
    assert bench.policy_env("default")[bench.POLICY_ENV] == "default"


def test_policy_env_for_llvm_s_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    from terrarium.llm.server_child import OPENMP_ENV

    assert bench.OPENMP_ENV == OPENMP_ENV
    monkeypatch.setenv("KMP_LIBRARY", "serial")
    llvm = bench.policy_env("libomp:20")
    assert (llvm[OPENMP_ENV], llvm["KMP_BLOCKTIME"]) == ("llvm", "20")
    assert "OMP_WAIT_POLICY" not in llvm and "KMP_LIBRARY" not in llvm
    assert bench.policy_env("libomp:5:turnaround")["KMP_LIBRARY"] == "turnaround"
    monkeypatch.setenv(OPENMP_ENV, "llvm")
    monkeypatch.setenv("KMP_BLOCKTIME", "50")
    # the other policies are libgomp's (adaptive, the default, is not): none of libomp's
    # settings reach them
    passive = bench.policy_env("PASSIVE")
    assert passive[OPENMP_ENV] == "gnu"
    assert not {"KMP_BLOCKTIME", "KMP_LIBRARY"} & set(passive)
    assert bench.policy_env("adaptive")[OPENMP_ENV] == "adaptive"


def test_the_servers_policy_is_the_users_or_passive() -> None:
    assert WAIT_POLICY == "PASSIVE"
    assert wait_policy({}) == "PASSIVE"
    assert wait_policy({"OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"
    assert wait_policy({"OMP_WAIT_POLICY": ""}) == "default"  # OpenMP's own
    # the head start's child runs under the same policy as the in-process server
    assert child_env({})["OMP_WAIT_POLICY"] == wait_policy({})
