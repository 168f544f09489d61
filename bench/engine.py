"""Engine benchmark: the embedded model server against bare xllamacpp, same model and prompt.

What a start and a turn cost on the embedded model is llama.cpp's prompt evaluation
(tokens/s) and generation (tokens/s). This bench measures both, in one run, for:

* **embedded**: ``EmbeddedServer`` exactly as the runtime starts it (the voice team's two
  slots of 4,096 tokens, its threads, flash attention, polling, no warm-up decode), asked
  over HTTP on 127.0.0.1 as the creatures ask it;
* **bare**: ``xllamacpp.Server`` with the binding's own defaults except the model, the
  slots and context, and the threads (so flash attention "auto", which is on for this CPU,
  batches of 2,048 in micro-batches of 512, poll 50), asked in-process
  (``handle_completions``, no HTTP).

Each measurement runs in a fresh child process (OpenMP reads its wait policy once, when it
loads), alternating embedded and bare, ``--runs`` of each; a child does one short request
to warm up, then ``--reps`` requests of the same prompt (``cache_prompt`` off, so every one
evaluates the whole prompt) generating ``--gen`` tokens, and reports llama.cpp's own
timings (so HTTP is not in the figures). The prompt is the voice router's assembled prompt
prefix, the largest thing a first start evaluates.

Without ``--policies`` each run has three children: the embedded server as shipped (it
sets ``PASSIVE`` itself, ``embedded.wait_policy``), bare xllamacpp as shipped (OpenMP's
default: spin, then sleep) and bare again under the policy the embedded child reported
(``bare same-policy``), so one run prints both ratios, embedded / bare *as shipped* and
under *the same policy*: the first is what a user gets, the second what the server's
settings cost. Ratios are taken run by run (the children of a run ran one after the
other), as the median and the range of the pairs, with the process's CPU time a request
beside them (a busy machine changes it far less than wall time; under a spinning policy
it counts the spinning too). ``--policies PASSIVE,ACTIVE,...`` runs each kind under each
OpenMP wait policy instead (``default`` = unset; ``spin:N`` = unset with
``GOMP_SPINCOUNT=N``; ``libomp:N`` = LLVM's OpenMP runtime instead of libgomp,
``TERRARIUM_OPENMP=llvm``, with ``KMP_BLOCKTIME=N`` ms; ``libomp:N:turnaround`` with
``KMP_LIBRARY=turnaround`` too: its spinning threads do not yield; ``adaptive`` =
``TERRARIUM_OPENMP=adaptive``, libomp spinning while other processes leave the cores
free), alternating (an embedded child
under ``default`` or ``spin:N`` loads the binding before the server would set PASSIVE;
every child reports the policy it ran under, and the runtime it found in its memory map);
with ``--embedded-only`` it is an A/B of the policies for the embedded server alone.
``--idle S`` (with ``--turn``) then also measures the CPU the child burns in the ``S``
seconds after its last request (% of one core): what spinning costs a machine at rest.

``--variants 'flash_attention=1 batch=512,...'`` runs the embedded server with each set of
its start arguments in turn (``flash_attention``, ``batch``, ``poll``), each against bare:
what each of the server's settings costs (flash attention, session 13: the whole
difference on the router's prefix; see docs/performance.md, "The engine").

``--turn`` measures a speaker's turn instead (what time to first audio waits on): the
prompt prefix evaluated once into the slot, then ``--reps`` requests, each that prefix plus
a short user turn of its own (~14 new tokens, as the voice bench's questions), generating
``--gen`` tokens: the first token's time (prompt evaluation of the new tokens) and the
generation ms per token. ``--threads 2:2,1:2`` runs the embedded server with each
generation:prompt-evaluation thread count in turn (llama.cpp's ``n_threads`` and
``n_threads_batch``), alternating, in fresh processes.

``--models A.gguf,B.gguf`` runs each kind with each model file in turn (an A/B of
quantizations: the shipped Q4_1 has no batched kernel in this llama.cpp build, Q4_0 has).
Each child also reports the process's CPU time (a request; with ``--turn``, the first
token's and a generated token's), which a busy machine changes far less than wall time.

The OpenMP runtimes' A/B (session 14): ``python bench/engine.py --turn --embedded-only
--policies PASSIVE,ACTIVE,default,libomp:20,libomp:50 --runs 5 --reps 4 --gen 16
--idle 5``.

Run: ``python bench/engine.py [--runs 5] [--reps 3] [--gen 64]``; the settings:
``python bench/engine.py --policies PASSIVE --variants 'flash_attention=0,flash_attention=1'
--runs 5 --reps 2 --gen 32``; the thread A/B of a turn:
``python bench/engine.py --turn --embedded-only --threads 2:2,1:2 --runs 5 --reps 6 --gen 8``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
CTX_PER_SLOT = 4096
SLOTS = 2  # the voice team: router and speaker
VARIANT_KEYS = ("flash_attention", "batch", "poll")  # what --variants may set
SAME = "same"  # bare under the policy the embedded server ran with in that run
POLICY_ENV = "ENGINE_BENCH_POLICY"  # a child's policy as --policies named it
OPENMP_ENV = "TERRARIUM_OPENMP"  # server_child.OPENMP_ENV: gnu, llvm or adaptive


def router_prefix() -> str:
    """The voice router's prompt prefix as the model sees it (chat template applied by
    llama.cpp in the runtime; here the system text alone, which is what dominates)."""
    from terrarium.config import load_team
    from terrarium.controller.assembly import assemble
    from terrarium.prompt.builder import PromptBuilder
    from terrarium.prompt.tail import TailState

    parts = assemble(load_team(ROOT / "examples" / "voice_assistant"), "router")
    built = PromptBuilder(parts.inputs, parts.fmt).build(TailState(step=0, status=False))
    return str(built.messages()[0]["content"])


# ---------------------------------------------------------------------- child process
def _request(prompt: str, gen: int) -> dict[str, Any]:
    return {"prompt": prompt, "n_predict": gen, "ignore_eos": True, "temperature": 0.0,
            "cache_prompt": False, "id_slot": 0, "stream": False}


TURNS = ["Tell me something about cats.", "What is the weather like on Mars?",
         "How do I boil an egg?", "Say something nice about Mondays.",
         "What should I cook for dinner?", "What is a good book to read?",
         "How can I sleep better?", "Why is the sky blue?"]


def _chat(prefix: str, user: str) -> str:
    """The prefix and one user turn in the model's chat template (ChatML), as the server
    would apply it: the prefix's tokens are the same in every request, as a slot keeps."""
    return (f"<|im_start|>system\n{prefix}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            "<|im_start|>assistant\n")


def turns(ask: Any, prompt: str, reps: int, gen: int) -> dict[str, Any]:
    """A speaker's turns: the prefix in the slot, then each request a new short user turn:
    its first token (ms, and the process's CPU ms for it) and generation (ms per token),
    medians of ``reps``."""
    ask({**_request(_chat(prompt, "Hello."), 1), "cache_prompt": True})
    first: list[float] = []
    cpu_first: list[float] = []
    per_token: list[float] = []
    cpu_per_token: list[float] = []
    n_prompt: list[int] = []
    for i in range(reps):
        body = {**_request(_chat(prompt, TURNS[i % len(TURNS)]), gen), "cache_prompt": True}
        # the first token alone: prompt evaluation of the new turn, and its CPU time, which
        # a busy machine changes far less than the wall time
        cpu = time.process_time()
        t = ask({**body, "n_predict": 1})["timings"]
        cpu_first.append(1000.0 * (time.process_time() - cpu))
        n_prompt.append(int(t["prompt_n"]))
        first.append(float(t["prompt_ms"]))
        # the same request generating ``gen`` (its prompt all in the slot: one token
        # evaluated): generation ms and the process's CPU time per token generated
        cpu = time.process_time()
        t = ask(body)["timings"]
        per_token.append(float(t["predicted_ms"]) / max(1, int(t["predicted_n"])))
        cpu_per_token.append(1000.0 * (time.process_time() - cpu)
                             / (int(t["predicted_n"]) + int(t["prompt_n"])))
    return {"prompt_tokens": statistics.median(n_prompt), "first_ms": statistics.median(first),
            "cpu_first_ms": statistics.median(cpu_first),
            "gen_ms": statistics.median(per_token),
            "cpu_gen_ms": statistics.median(cpu_per_token),
            "pp": 1000.0 * statistics.median(n_prompt) / statistics.median(first),
            "tg": 1000.0 / statistics.median(per_token)}


def variant_kwargs(variant: str | None) -> dict[str, int | bool]:
    """``--variants``' one entry, e.g. ``flash_attention=1 batch=512``: the embedded
    server's start arguments it sets (whole numbers; ``flash_attention`` a flag)."""
    out: dict[str, int | bool] = {}
    for item in (variant or "").split():
        name, _, value = item.partition("=")
        if name not in VARIANT_KEYS or not value.isdigit():
            raise SystemExit(f"--variants: {item!r} is not one of "
                             f"{', '.join(k + '=N' for k in VARIANT_KEYS)}")
        out[name] = bool(int(value)) if name == "flash_attention" else int(value)
    return out


def openmp_loaded() -> str:
    """Which OpenMP runtime this process has loaded (``llvm`` with its block time when
    libomp is in its memory map: it then answers the binding's calls, ``gnu`` else)."""
    maps = Path("/proc/self/maps").read_text(encoding="utf-8", errors="replace")
    if "libomp" not in maps:
        return "gnu"
    import ctypes

    from terrarium.llm.server_child import LLVM_LIBRARY
    return f"llvm (KMP_BLOCKTIME {ctypes.CDLL(LLVM_LIBRARY).kmp_get_blocktime()} ms)"


def idle_cpu(seconds: float) -> float:
    """The CPU this process burns in ``seconds`` of doing nothing, % of one core."""
    cpu = time.process_time()
    time.sleep(seconds)
    return 100.0 * (time.process_time() - cpu) / seconds


def child(mode: str, prompt_file: Path, reps: int, gen: int, threads_arg: str | None = None,
          turn: bool = False, model: Path | None = None, variant: str | None = None,
          idle: float = 0.0) -> None:
    """One server, one warm-up request, ``reps`` timed ones; prints one JSON line."""
    prompt = prompt_file.read_text(encoding="utf-8")
    began = time.perf_counter()
    gen_threads, batch_threads = (int(x) for x in threads_arg.split(":")) if threads_arg \
        else (None, None)
    if mode == "embedded":
        import httpx

        from terrarium.llm.embedded import EmbeddedServer, openmp_choice, wait_policy

        policy = (os.environ.get(POLICY_ENV)
                  or ("adaptive" if openmp_choice() == "adaptive" else wait_policy()))
        if (POLICY_ENV in os.environ and "OMP_WAIT_POLICY" not in os.environ
                and openmp_choice() == "gnu"):
            # OpenMP's own policy (``default``, ``spin:N``): libgomp loaded before the
            # server would set PASSIVE for it (in sessions 11-12 "embedded default" ran
            # PASSIVE, and "spin:N" PASSIVE with that spin count)
            import xllamacpp
        server = EmbeddedServer(slots=SLOTS, ctx_per_slot=CTX_PER_SLOT, threads=batch_threads,
                                gen_threads=gen_threads, model=model,
                                **variant_kwargs(variant))  # type: ignore[arg-type]
        server.start()
        http = httpx.Client(timeout=600.0, verify=False)

        def ask(body: dict[str, Any]) -> dict[str, Any]:
            r = http.post(f"{server.base_url}/completion", json=body)
            r.raise_for_status()
            return dict(r.json())
        threads = f"{server.gen_threads}:{server.threads}"
    else:
        from terrarium.llm.openmp_build import shim_settings
        from terrarium.llm.server_child import load_openmp

        os.environ.update(shim_settings(os.environ))  # (its library, under ``adaptive``)
        load_openmp(own=(os.getpid(),))  # libomp before the binding, under ``libomp:N``
        import xllamacpp

        from terrarium.llm.embedded import model_path

        policy = (os.environ.get(POLICY_ENV) or os.environ.get("OMP_WAIT_POLICY", "").strip()
                  or "default")

        n = max(1, min(os.cpu_count() or 2, 8))
        params = xllamacpp.CommonParams()
        params.model.path = str(model or model_path())
        params.n_parallel = SLOTS
        params.n_ctx = CTX_PER_SLOT * SLOTS
        params.cpuparams.n_threads = gen_threads or batch_threads or n
        params.cpuparams_batch.n_threads = batch_threads or n
        threads = f"{params.cpuparams.n_threads}:{params.cpuparams_batch.n_threads}"
        bare = xllamacpp.Server(params)

        def ask(body: dict[str, Any]) -> dict[str, Any]:
            out = bare.handle_completions(body)
            return dict(json.loads(out) if isinstance(out, str) else out)
    loaded = time.perf_counter() - began
    ask(_request("Hello", 4))  # pages and threads warm, as in any run after its start
    if turn:
        out = turns(ask, prompt, reps, gen)
        print(json.dumps({"mode": mode, "load_s": time.perf_counter() - began,
                          "threads": threads, "policy": policy, "openmp": openmp_loaded(),
                          **out, **({"idle_pct": idle_cpu(idle)} if idle else {})}),
              flush=True)
        return
    pp: list[float] = []
    tg: list[float] = []
    cpu_ms: list[float] = []  # the process's CPU time a request: load changes it far less
    n_prompt = 0
    for _ in range(reps):
        cpu = time.process_time()
        t = ask(_request(prompt, gen))["timings"]
        cpu_ms.append(1000.0 * (time.process_time() - cpu))
        n_prompt = int(t["prompt_n"])
        pp.append(float(t["prompt_per_second"]))
        tg.append(float(t["predicted_per_second"]))
    print(json.dumps({"mode": mode, "load_s": loaded, "prompt_tokens": n_prompt,
                      "threads": threads, "policy": policy, "pp": statistics.median(pp),
                      "tg": statistics.median(tg), "cpu_ms": statistics.median(cpu_ms)}),
          flush=True)


# ---------------------------------------------------------------------- parent
def policy_env(policy: str) -> dict[str, str]:
    """The environment of a child for an OpenMP wait policy."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{POLICY_ENV: policy})
    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME", "KMP_LIBRARY",
                 OPENMP_ENV):
        env.pop(name, None)
    if not (policy == "adaptive" or policy.startswith("libomp:")):
        env[OPENMP_ENV] = "gnu"  # libgomp's own policies (adaptive is the runtime's default)
    if policy.startswith("spin:"):
        env["GOMP_SPINCOUNT"] = policy.split(":", 1)[1]
    elif policy == "adaptive":
        env[OPENMP_ENV] = "adaptive"
    elif policy.startswith("libomp:"):
        _, blocktime, *library = policy.split(":")
        env.update({OPENMP_ENV: "llvm", "KMP_BLOCKTIME": blocktime,
                    **({"KMP_LIBRARY": library[0]} if library else {})})
    elif policy != "default":
        env["OMP_WAIT_POLICY"] = policy
    return env


def run_child(kind: Kind, prompt_file: Path, reps: int, gen: int, turn: bool = False,
              policy: str | None = None, idle: float = 0.0) -> dict[str, Any]:
    """One child of ``kind``; ``policy``: the wait policy it runs under when the kind's
    own is :data:`SAME` (the one the embedded child reported this run)."""
    want = policy if kind.policy == SAME else kind.policy
    env = policy_env(want) if want else dict(os.environ, PYTHONPATH=str(ROOT))
    if kind.mode == "bare" and not want:  # the binding as it comes: libgomp, its default
        env[OPENMP_ENV] = "gnu"
    extra = ((["--threads", kind.threads] if kind.threads else [])
             + (["--turn"] if turn else []) + (["--model", kind.model] if kind.model else [])
             + (["--variant", kind.variant] if kind.variant else [])
             + (["--idle", str(idle)] if idle else []))
    out = subprocess.run([sys.executable, __file__, "--child", kind.mode, "--prompt-file",
                          str(prompt_file), "--reps", str(reps), "--gen", str(gen), *extra],
                         env=env, capture_output=True, text=True, check=False, cwd=ROOT)
    lines = [x for x in out.stdout.splitlines() if x.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"the {kind.mode} child failed:\n{out.stderr[-2000:]}")
    return dict(json.loads(lines[-1]))


class Kind(NamedTuple):
    """One kind of child: which server, under which wait policy (None: as shipped;
    :data:`SAME`: the embedded server's of the same run), threads, model file and (the
    embedded server's) start arguments."""

    mode: str
    policy: str | None = None
    threads: str | None = None
    model: str | None = None
    variant: str | None = None

    @property
    def key(self) -> str:
        policy = "same-policy" if self.policy == SAME else self.policy
        return " ".join(x for x in (self.mode, self.variant and f"[{self.variant}]", policy,
                                    self.threads and f"threads {self.threads}",
                                    self.model and Path(self.model).name) if x)


def plan(policies: list[str] | None, embedded_only: bool = False,
         threads: list[str] | None = None, models: list[str] | None = None,
         variants: list[str] | None = None) -> list[Kind]:
    """The kinds of one run, in the order they alternate. As shipped (no ``policies``)
    bare runs twice: under OpenMP's default (as shipped) and under the policy the
    embedded server ran with (:data:`SAME`), so one run answers both ratios."""
    out: list[Kind] = []
    for f in models or [None]:
        for t in threads or [None]:
            for p in policies or [None]:
                out += [Kind("embedded", p, t, f, v) for v in variants or [None]]
                if embedded_only:
                    continue
                out += [Kind("bare", p, t, f)] + ([Kind("bare", SAME, t, f)] if p is None
                                                  else [])
    return out


def comparisons(kinds: list[Kind]) -> list[tuple[str, Kind, Kind]]:
    """(what, embedded kind, bare kind): each embedded kind against the bare kinds of its
    threads and model under its policy (as shipped: both bare kinds)."""
    out: list[tuple[str, Kind, Kind]] = []
    for e in (k for k in kinds if k.mode == "embedded"):
        for b in (k for k in kinds if k.mode == "bare" and k[2:4] == e[2:4]):
            if b.policy == e.policy:
                what = "as shipped" if e.policy is None else f"both {e.policy}"
            elif e.policy is None and b.policy == SAME:
                what = "the same policy"
            else:
                continue
            out.append((what + (f", embedded [{e.variant}]" if e.variant else ""), e, b))
    return out


def pair_ratios(a: list[dict[str, Any]], b: list[dict[str, Any]],
                field: str) -> tuple[float, float, float]:
    """``field`` of ``a`` over ``b``, run by run (the children of one run ran next to
    each other): the median, the smallest and the largest ratio."""
    ratios = [x[field] / y[field] for x, y in zip(a, b, strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)


def compare(what: str, e: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[str]:
    """The lines that compare embedded rows ``e`` with bare rows ``b`` (run by run)."""
    pp, tg = pair_ratios(e, b, "pp"), pair_ratios(e, b, "tg")
    ok = min(pp[0], tg[0]) >= 0.95
    pe, pb = ("/".join(sorted({str(r.get("policy")) for r in rows})) for rows in (e, b))
    lines = [f"  embedded / bare, {what} ({pe} against {pb}), pair by pair (median of "
             f"{len(e)}, "
             f"range): prompt {pp[0]:.2f}x ({pp[1]:.2f}-{pp[2]:.2f}), generation "
             f"{tg[0]:.2f}x ({tg[1]:.2f}-{tg[2]:.2f}): target >= 0.95x "
             f"{'met' if ok else 'NOT met'}"]
    if "cpu_first_ms" in e[0] and "cpu_first_ms" in b[0]:
        first, per = pair_ratios(e, b, "cpu_first_ms"), pair_ratios(e, b, "cpu_gen_ms")
        lines.append(f"    CPU time, embedded / bare: a turn's first token {first[0]:.2f}x "
                     f"({first[1]:.2f}-{first[2]:.2f}), a generated token {per[0]:.2f}x "
                     f"({per[1]:.2f}-{per[2]:.2f})")
    if "cpu_ms" in e[0] and "cpu_ms" in b[0]:
        cpu = pair_ratios(e, b, "cpu_ms")
        lines.append(f"    CPU time a request (prompt + generation), embedded / bare: "
                     f"{cpu[0]:.2f}x ({cpu[1]:.2f}-{cpu[2]:.2f}; embedded "
                     f"{statistics.median(r['cpu_ms'] for r in e):.0f} ms, bare "
                     f"{statistics.median(r['cpu_ms'] for r in b):.0f} ms)")
    return lines


def summarize(label: str, rows: list[dict[str, Any]]) -> None:
    pp = statistics.median(r["pp"] for r in rows)
    tg = statistics.median(r["tg"] for r in rows)
    print(f"  {label:<24} prompt {pp:7.1f} tok/s (min {min(r['pp'] for r in rows):6.1f}, "
          f"max {max(r['pp'] for r in rows):6.1f})   generation {tg:6.1f} tok/s "
          f"(min {min(r['tg'] for r in rows):5.1f}, max {max(r['tg'] for r in rows):5.1f})")
    if "first_ms" in rows[0]:
        first = statistics.median(r["first_ms"] for r in rows)
        per = statistics.median(r["gen_ms"] for r in rows)
        cpu = statistics.median(r["cpu_gen_ms"] for r in rows)
        cpu1 = statistics.median(r["cpu_first_ms"] for r in rows)
        print(f"  {'':<24} a turn: first token {first:6.1f} ms (CPU {cpu1:6.1f} ms), "
              f"generation {per:5.1f} ms "
              f"per token; first token + 7 tokens {first + 7 * per:6.1f} ms; CPU time "
              f"{cpu:5.1f} ms per token generated")
    if "idle_pct" in rows[0]:
        idle = statistics.median(r["idle_pct"] for r in rows)
        print(f"  {'':<24} idle after a request: {idle:.1f} % "
              f"of a core (max {max(r['idle_pct'] for r in rows):.1f} %); OpenMP: "
              f"{'/'.join(sorted({str(r.get('openmp')) for r in rows}))}")


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _line(i: int, kind: Kind, r: dict[str, Any], turn: bool) -> str:
    what = (f"first token {r['first_ms']:6.1f} ms (CPU {r['cpu_first_ms']:6.1f}), "
            f"{r['gen_ms']:5.1f} ms (CPU {r['cpu_gen_ms']:5.1f} ms) per token, "
            if turn else "")
    cpu = f"CPU {r['cpu_ms']:6.0f} ms a request, " if "cpu_ms" in r else ""
    cpu += f"idle {r['idle_pct']:.1f} % of a core, " if "idle_pct" in r else ""
    cpu += f"{r['openmp']}, " if "openmp" in r else ""
    return (f"{i:>2} {kind.key:<24} {what}prompt {r['pp']:7.1f} tok/s  generation "
            f"{r['tg']:6.1f} tok/s  ({cpu}{r['prompt_tokens']} prompt tokens, "
            f"{r['threads']} threads, {r.get('policy')}, load {r['load_s']:.2f} s; "
            f"load average {_load()})")


def main(runs: int, reps: int, gen: int, policies: list[str] | None,
         embedded_only: bool = False, chars: int | None = None,
         threads: list[str] | None = None, turn: bool = False,
         models: list[str] | None = None, variants: list[str] | None = None,
         idle: float = 0.0) -> None:
    kinds = plan(policies, embedded_only, threads, models, variants)
    results: dict[Kind, list[dict[str, Any]]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        prompt_file = Path(tmp) / "prompt.txt"
        prompt_file.write_text(router_prefix()[:chars], encoding="utf-8")
        for i in range(runs):
            embedded_policy: str | None = None
            for kind in kinds:
                r = run_child(kind, prompt_file, reps, gen, turn, embedded_policy, idle)
                if kind.mode == "embedded" and kind.policy is None:
                    embedded_policy = str(r["policy"])
                results[kind].append(r)
                print(_line(i, kind, r, turn), flush=True)
    print(f"\nmedian of {runs} run(s), each the median of {reps} request(s) "
          f"({gen} tokens generated each):")
    for kind, rows in results.items():
        summarize(kind.key, rows)
    for what, e, b in comparisons(kinds):
        print("\n".join(compare(what, results[e], results[b])))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5, help="child processes of each kind")
    p.add_argument("--reps", type=int, default=3, help="timed requests per child")
    p.add_argument("--gen", type=int, default=64, help="tokens generated per request")
    p.add_argument("--policies", default=None,
                   help="OpenMP wait policies to run each kind under (default: as shipped: "
                        "the embedded server's own, the binding's default for bare), e.g. "
                        "PASSIVE,ACTIVE,default,spin:10000")
    p.add_argument("--embedded-only", action="store_true",
                   help="only the embedded server (an A/B of --policies)")
    p.add_argument("--prompt-chars", type=int, default=None,
                   help="only the prompt's first N characters (a shorter run)")
    p.add_argument("--threads", default=None, metavar="G:B,...",
                   help="generation:prompt-evaluation thread counts to run each kind with, "
                        "e.g. 2:2,1:2 (default: as shipped)")
    p.add_argument("--turn", action="store_true",
                   help="a speaker's turn: the prefix cached, a short user turn evaluated")
    p.add_argument("--models", default=None, metavar="FILE,...",
                   help="GGUF files to run each kind with in turn (default: the shipped one)")
    p.add_argument("--variants", default=None, metavar="'K=N K=N',...",
                   help="the embedded server's start arguments to run it with in turn "
                        f"({', '.join(VARIANT_KEYS)}), e.g. "
                        "'flash_attention=0 batch=256,flash_attention=1 batch=512'")
    p.add_argument("--idle", type=float, default=0.0, metavar="S",
                   help="with --turn: also the CPU each child burns in the S seconds after "
                        "its last request (%% of a core)")
    p.add_argument("--model", default=None, help=argparse.SUPPRESS)
    p.add_argument("--variant", default=None, help=argparse.SUPPRESS)
    p.add_argument("--child", choices=["embedded", "bare"], help=argparse.SUPPRESS)
    p.add_argument("--prompt-file", type=Path, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        child(a.child, a.prompt_file, a.reps, a.gen, a.threads, a.turn,
              Path(a.model) if a.model else None, a.variant, a.idle)
    else:
        main(a.runs, a.reps, a.gen, a.policies.split(",") if a.policies else None,
             a.embedded_only, a.prompt_chars, a.threads.split(",") if a.threads else None,
             a.turn, a.models.split(",") if a.models else None,
             a.variants.split(",") if a.variants else None, a.idle)
