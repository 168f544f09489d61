"""Voice benchmark: time to first audio through router → speaker → Piper, on the embedded model.

For each utterance: t0 = the user's text is sent; first audio = the first sentence of the
speaker's reply has been synthesized and handed to the audio sink. The model calls are timed
by a thin proxy, so the framework's own share can be separated out:

    framework share = time to first audio − router model time (request → routing call closed)
                      − speaker model time to its first sentence − synthesis of that sentence

Prints every utterance, then p50/p90 of time to first audio and of the framework share, and
the share of each part. Run: ``python bench/voice.py [--utterances 12] [--warmup 2]``

``--broker [URL]`` runs the same utterances twice per round: in one process (the
team's own models, ``terrarium run``), and with the router and the speaker hosted by two
``terrarium worker`` processes on a NATS broker (the run started here, hosting nothing:
``--host-creatures none``); time to first audio is taken from each first
``sentence_synthesized`` event's own timestamp (in the broker mode read back from the run's
log stream on the broker); even rounds in one process first, odd rounds across workers
first. Without a URL it starts its own ``nats-server -js`` on a free
port with a temporary store. Prints p50/p90 of each mode per round, the median over
``--rounds``, and the difference (target: broker p50 within 30 ms of in-process), and
whether the two workers shared one embedded model server (``llm/shared_server.py``: they
do unless ``TERRARIUM_SHARE_MODEL=0``), from each worker's ``model:`` line.

``--socket`` (bench/voice_socket.py): the same, in one process and over the audio socket
of a real ``terrarium serve`` (target: within 30 ms of in-process).

``--cold-start [--runs 5]`` measures something else: the time from starting the process
``terrarium run examples/voice_assistant`` to its "ready in" line (every creature's prompt
prefix in its slot and the voice loaded), at a first start (an empty prefix cache) and at a
second start (the cache the previous start saved), the median of ``--runs`` each. Compiled
bytecode is kept between the starts, as an installed package has it (``--no-bytecode``: as
PYTHONDONTWRITEBYTECODE leaves it, compiled anew at each start).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from broker import nats_server

from terrarium.channels.nats import connect_broker
from terrarium.channels.nats.follow import follow_run
from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.events import (
    CreatureWarmed,
    Event,
    SentenceQueued,
    SentenceSynthesized,
    TurnEnded,
    TurnStarted,
    UtteranceWritten,
)
from terrarium.formats import CallEvent
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.factory import make_model
from terrarium.llm.types import ChatMessage, ChatRequest, StreamDelta
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.voice import SegmenterConfig, SentenceSegmenter

ROOT = Path(__file__).resolve().parent.parent
UTTERANCES = [
    "Hi, my name is Ada.",
    "I love green tea in the morning.",
    "What is the weather like on Mars?",
    "Tell me a short fact about cats.",
    "Can you recommend a good book?",
    "What is my name?",
    "How do I boil an egg?",
    "Say something nice about Mondays.",
    "What should I cook for dinner?",
    "Give me a tip for sleeping better.",
    "What drink do I like in the morning?",
    "Thanks, that is all for now.",
]


@dataclass
class Call:
    start: float
    deltas: list[tuple[float, str]] = field(default_factory=list)
    end: float = 0.0


class TimedModel:
    """Forwards to a real model and records when each delta arrived."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[Call] = []

    @property
    def last_usage(self) -> Any:
        return self.inner.last_usage

    @property
    def supports_continuation(self) -> bool:
        # forwarded: the controller starts replies for (value frames) and pauses (first
        # audio) only models that can continue one
        return bool(getattr(self.inner, "supports_continuation", False))

    def describe(self) -> str:
        return self.inner.describe()

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        call = Call(time.perf_counter())
        self.calls.append(call)
        # closed with this wrapper, so a paused reply stops the server at once (as unwrapped)
        async with aclosing(self.inner.stream(request)) as deltas:
            async for delta in deltas:
                call.deltas.append((time.perf_counter(), delta.text))
                yield delta
        call.end = time.perf_counter()


def call_closed_time(call: Call, fmt: Any) -> float:
    """When the router's routing call was complete: the runtime sends it at that moment."""
    parser = fmt.new_parser()
    for t, text in call.deltas:
        if any(isinstance(ev, CallEvent) for ev in parser.feed(text)):
            return t
    return call.end


def first_sentence_time(call: Call, config: SegmenterConfig) -> float | None:
    """When the speaker's first spoken piece was complete (same segmenter rules as its tts)."""
    seg = SentenceSegmenter(config)
    for t, text in call.deltas:
        if seg.feed(text):
            return t
    return call.end if call.deltas else None


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


CALIBRATION_SYSTEM = "You are a helpful assistant who answers briefly. " * 40


async def calibrate(server: EmbeddedServer, slot: int, rounds: int = 3) -> tuple[float, float]:
    """This machine's speed right now: ms per evaluated prompt token and per generated token.

    The host's speed drifts between runs (the same request took 141 ms and 202 ms minutes
    apart), so the run's own figures are printed beside a fixed request timed in the same run.
    """
    client = server.client(slot, temperature=0.0, max_tokens=16)
    evals, gens = [], []
    for i in range(rounds + 1):
        words = " ".join(f"w{i}x{j}" for j in range(12))  # ~32 fresh tokens
        req = ChatRequest(messages=[ChatMessage(role="system", content=CALIBRATION_SYSTEM),
                                    ChatMessage(role="user", content=words)],
                          cache_prompt=True)
        async for _ in client.stream(req):
            pass
        u = client.last_usage
        if i and u is not None and u.prompt_n and u.completion_tokens:
            evals.append((u.prompt_ms or 0) / u.prompt_n)
            gens.append((u.predicted_ms or 0) / u.completion_tokens)
    return statistics.median(evals), statistics.median(gens)


async def main(n: int, warmup: int, verbose: bool) -> None:
    team = load_team(ROOT / "examples" / "voice_assistant")
    router_fmt = assemble(team, "router").fmt
    tts = team.creatures["speaker"].config.output.named_outputs["tts"]
    segmenter = SegmenterConfig(first_clause_chars=tts.first_clause_chars,
                                first_piece_max_chars=tts.first_piece_max_chars)
    async with EmbeddedServer(slots=3) as server:  # slot 2: the speed calibration
        before = await calibrate(server, 2)
        # the same clients the runtime would make (config max_tokens, penalties, slots)
        router = TimedModel(make_model(assemble(team, "router").settings, embedded=server,
                                       slot=0))
        speaker = TimedModel(make_model(assemble(team, "speaker").settings, embedded=server,
                                        slot=1))
        first_audio: dict[str, float] = {}
        synth_ms: dict[str, float] = {}
        first_piece: dict[str, str] = {}

        def on_event(ev: Any) -> None:
            if isinstance(ev, SentenceSynthesized):
                uid = ev.utterance_id
                if uid not in first_audio:
                    first_audio[uid] = time.perf_counter()
                    synth_ms[uid] = ev.synth_ms
                    first_piece[uid] = ev.text

        with tempfile.TemporaryDirectory() as tmp:
            opts = RuntimeOptions(runs_dir=Path(tmp), models={"router": router,
                                                               "speaker": speaker},
                                  on_event=on_event)
            async with TeamRuntime(team, opts) as rt:
                rows = []
                fixed_rows: list[float] = []
                for i in range(n + warmup):
                    text = UTTERANCES[i % len(UTTERANCES)]
                    before_r, before_s = len(router.calls), len(speaker.calls)
                    seen = set(first_audio)
                    t0 = time.perf_counter()
                    await rt.send_user(text)
                    await rt.wait_idle(poll=0.005)
                    new = [u for u in first_audio if u not in seen]
                    r_calls = router.calls[before_r:]
                    s_calls = speaker.calls[before_s:]
                    # no router call: its choice_rules decided the intent without the model
                    if not new:
                        print(f"{i:>2} no audio for {text!r} (router calls {len(r_calls)}, "
                              f"speaker calls {len(s_calls)})")
                        continue
                    if not s_calls:  # the reply guard said a fixed reply: no model at all
                        ttfa = (first_audio[new[0]] - t0) * 1000
                        print(f"{i:>2} ttfa {ttfa:7.0f} ms | runtime reply, no model: "
                              f"{first_piece[new[0]]!r}")
                        if i >= warmup:
                            fixed_rows.append(ttfa)
                        continue
                    uid = new[0]
                    ttfa = (first_audio[uid] - t0) * 1000
                    r_model = ((call_closed_time(r_calls[-1], router_fmt) - r_calls[0].start) * 1000
                               if r_calls else 0.0)
                    s_first = first_sentence_time(s_calls[0], segmenter)
                    s_model = ((s_first or s_calls[0].end) - s_calls[0].start) * 1000
                    share = ttfa - r_model - s_model - synth_ms[uid]
                    tag = "warm-up" if i < warmup else ""
                    if verbose:
                        for who, m in (("router", router), ("speaker", speaker)):
                            u = m.last_usage
                            if u is not None:
                                print(f"     {who}: prompt {u.prompt_tokens} cached "
                                      f"{u.cached_tokens} evaluated {u.prompt_n} in "
                                      f"{u.prompt_ms or 0:.0f} ms; generated "
                                      f"{u.completion_tokens} in {u.predicted_ms or 0:.0f} ms")
                    if verbose:
                        print(f"     first piece: {first_piece[uid]!r}")
                    print(f"{i:>2} ttfa {ttfa:7.0f} ms | router model {r_model:6.0f} | speaker "
                          f"first sentence {s_model:6.0f} | synth {synth_ms[uid]:5.0f} | "
                          f"framework {share:6.1f} ms {tag}")
                    if i >= warmup:
                        rows.append((ttfa, r_model, s_model, synth_ms[uid], share))
        after = await calibrate(server, 2)
    if not rows:
        print("no measurements")
        return
    cols = list(zip(*rows, strict=True))
    names = ["time to first audio", "router model", "speaker to first sentence",
             "first-sentence synthesis", "framework share"]
    print(f"\n{len(rows)} utterances (after {warmup} warm-up), embedded SmolLM2-135M + Piper:")
    for name, col in zip(names, cols, strict=True):
        vals = list(col)
        print(f"  {name:<26} p50 {pct(vals, 0.5):7.1f} ms   p90 {pct(vals, 0.9):7.1f} ms   "
              f"mean {statistics.fmean(vals):7.1f} ms")
    if fixed_rows:
        print(f"  {len(fixed_rows)} more utterances answered by the runtime (greeting, thanks, "
              f"goodbye, statement; no model): time to first audio p50 "
              f"{pct(fixed_rows, 0.5):.1f} ms, p90 {pct(fixed_rows, 0.9):.1f} ms")
        both = list(cols[0]) + fixed_rows
        print(f"  all {len(both)} utterances: time to first audio p50 {pct(both, 0.5):.1f} ms, "
              f"p90 {pct(both, 0.9):.1f} ms")
    ttfa50 = pct(list(cols[0]), 0.5)
    print(f"  framework share of time to first audio (p50): "
          f"{pct(list(cols[4]), 0.5) / ttfa50 * 100:.1f} %")
    print(f"  machine speed in this run (fixed request, before / after): prompt evaluation "
          f"{before[0]:.2f} / {after[0]:.2f} ms per token, generation {before[1]:.2f} / "
          f"{after[1]:.2f} ms per token")


READY = re.compile(r"^ready in ([0-9.]+) s")
LOADED = re.compile(r"^model loaded in ([0-9.]+) s")


@dataclass
class Start:
    ready: float  # seconds from starting the process to its "ready in" line
    runtime_ready: float  # the run's own figure: from the runtime's start to ready
    model_load: float
    restored: int  # creatures whose prefix came from the cache
    audio: float | None = None  # seconds from starting the process to the first reply's WAV
    lines: list[str] = field(default_factory=list)


FIRST_INPUT = "Hi, my name is Ada. I love green tea."  # the README's main command


def start_once(cache: Path, timeout: float = 180.0, pycache: Path | None = None,
               say: str | None = FIRST_INPUT) -> Start:
    """Start ``terrarium run examples/voice_assistant --input SAY`` with prefix cache
    ``cache``; note when it says it is ready and when the first reply's audio is written
    (its ``[audio]`` line: the whole reply synthesized, so an upper bound of the first
    audio), then let it end. ``say=None``: no input; end it at ready by closing its input.

    ``pycache``: where the run's compiled bytecode is kept, as an installed package has it
    (None: as this environment says; PYTHONDONTWRITEBYTECODE compiles every module anew at
    every start, ~0.17 s of CPU here)."""
    env = dict(os.environ, TERRARIUM_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    with tempfile.TemporaryDirectory() as runs:
        cmd = [sys.executable, "-u", "-m", "terrarium", "run",
               str(ROOT / "examples" / "voice_assistant"), "--audio", "none" if say is None
               else "wav", "--runs-dir", runs, "--timeout", str(timeout)]
        if say is not None:
            cmd += ["--input", say]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=env, cwd=ROOT)
        assert proc.stdout is not None and proc.stdin is not None
        lines: list[str] = []
        ready = runtime_ready = load = audio = None
        try:
            for line in proc.stdout:
                lines.append(line.rstrip())
                if (m := LOADED.match(line)) is not None:
                    load = float(m.group(1))
                if (m := READY.match(line)) is not None:
                    ready = time.perf_counter() - t0
                    runtime_ready = float(m.group(1))
                    if say is None:
                        break
                if "[audio]" in line and audio is None:
                    audio = time.perf_counter() - t0
                    break
        finally:
            proc.stdin.close()  # end of input: the run stops by itself
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.terminate()
                proc.wait()
    if ready is None or runtime_ready is None:
        raise SystemExit("the run never said it was ready:\n" + "\n".join(lines))
    restored = sum("restored from cache" in x for x in lines)
    return Start(ready, runtime_ready, load or 0.0, restored, audio, lines)


def cold_start(runs: int, verbose: bool, bytecode: bool = True) -> None:
    """First and second start, ``runs`` of each: median, min and max. ``bytecode``: the
    modules' compiled bytecode is kept between starts, as after an install (the first
    start of the first run compiles it)."""
    results: dict[str, list[Start]] = {"first": [], "second": []}
    with tempfile.TemporaryDirectory() as tmp:
        pycache = Path(tmp) / "pycache" if bytecode else None
        for i in range(runs):
            first_cache = Path(tmp) / f"first-{i}"  # empty: nothing to restore
            results["first"].append(start_once(first_cache, pycache=pycache))
            # what the first one saved (prompt prefixes, the voice's optimized graph)
            results["second"].append(start_once(first_cache, pycache=pycache))
            for kind in ("first", "second"):
                r = results[kind][-1]
                heard = f"{r.audio:5.2f} s" if r.audio is not None else "never"
                print(f"{i:>2} {kind:<6} ready {r.ready:5.2f} s after the process started "
                      f"(runtime {r.runtime_ready:4.1f} s, model load {r.model_load:3.1f} s, "
                      f"{r.restored} prefix(es) restored), first reply's audio {heard}",
                      flush=True)
                shown = r.lines if verbose else [x for x in r.lines if "[cache]" in x]
                if shown:
                    print("     " + "\n     ".join(shown))
    print(f"\ncold start of examples/voice_assistant --input {FIRST_INPUT!r}, {runs} run(s) "
          "each (from the process's start; bytecode "
          f"{'kept between starts, as installed' if bytecode else 'compiled at every start'}):")
    for kind, rs in results.items():
        vals = [r.ready for r in rs]
        heard = [r.audio for r in rs if r.audio is not None]
        audio = (f"; first reply's audio median {statistics.median(heard):5.2f} s"
                 if heard else "; no audio")
        print(f"  {kind} start  ready median {statistics.median(vals):5.2f} s   min "
              f"{min(vals):5.2f} s   max {max(vals):5.2f} s   (runtime's own: median "
              f"{statistics.median(r.runtime_ready for r in rs):4.2f} s){audio}")
    first = statistics.median(r.ready for r in results["first"])
    second = statistics.median(r.ready for r in results["second"])
    heard = [r.audio for r in results["first"] if r.audio is not None]
    first_audio = statistics.median(heard) if len(heard) == runs else float("inf")
    print(f"  targets: first start <= 5 s: {'met' if first <= 5.0 else 'NOT met'}; first "
          f"reply's audio <= 8 s: {'met' if first_audio <= 8.0 else 'NOT met'}; second "
          f"start <= 1.0 s: {'met' if second <= 1.0 else 'NOT met'}")


# ---------------------------------------------------------------------- across workers
TTFA_TARGET_MS = 30.0  # broker p50 within this of the in-process p50
UTTERANCE_TIMEOUT = 120.0  # seconds one utterance may take before it counts as no audio
READY_TIMEOUT = 600.0  # the workers' start: model load and warm-up on a shared machine


@dataclass(frozen=True)
class Layout:
    """What the across-workers bench runs: the team, the creatures each worker process
    hosts, the creature whose turn ends an utterance (``last``), the event of that
    creature that marks the utterance's first audio, and the creatures whose turn start is
    timed from the send too (where along the way a difference arises)."""

    path: Path
    workers: tuple[tuple[str, ...], ...]
    last: str
    starts: tuple[str, ...]
    first: type[Event] = SentenceSynthesized


VOICE = Layout(ROOT / "examples" / "voice_assistant", (("router",), ("speaker",)), "speaker",
               ("router", "speaker"))


@dataclass
class Sample:
    """One utterance, in ms from the send: first audio, and each timed creature's turn start.

    (A ``message_sent`` event is no mark of the send: on a broker it is stamped after the
    broker's acknowledgement, which can come after the listener began its turn.)"""

    ttfa: float
    starts: list[float]
    index: int = -1  # which utterance (the same text in both modes: paired by it)


# the events a wait's condition looks for: only these wake it
MILESTONES: tuple[type[Event], ...] = (CreatureWarmed, TurnEnded, UtteranceWritten)


class Tracker:
    """Every event of the run as it arrives, and a wait for a condition on them.

    Only a milestone event wakes the wait: in one process every streamed token is an
    event, and a condition that scans the utterance's events at each of them cost the run
    it measures CPU on its own event loop (quadratic in the events of an utterance)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._changed = anyio.Event()

    def add(self, ev: Event) -> None:
        self.events.append(ev)
        if isinstance(ev, MILESTONES):
            self._changed.set()

    async def until(self, cond: Callable[[], bool]) -> None:
        while not cond():
            self._changed = anyio.Event()  # add() runs on this loop: nothing slips between
            await self._changed.wait()

    def warmed(self, creatures: set[str]) -> bool:
        return creatures <= {e.creature for e in self.events if isinstance(e, CreatureWarmed)}


def start_ms(events: list[Event], t0: float, creature: str) -> float:
    """From ``t0`` to ``creature``'s first turn start among ``events``, in ms (NaN: none)."""
    began = next((e.ts for e in events if isinstance(e, TurnStarted)
                  and e.creature == creature), None)
    return (began - t0) * 1000 if began is not None else float("nan")


def utterance_done(events: list[Event], last: str) -> bool:
    """``last``'s turn ended and every utterance it queued was written (or cut)."""
    ended = any(isinstance(e, TurnEnded) and e.creature == last for e in events)
    queued = {e.utterance_id for e in events if isinstance(e, SentenceQueued)}
    written = {e.utterance_id for e in events if isinstance(e, UtteranceWritten)}
    return ended and queued <= written


async def send_all(rt: TeamRuntime, tracker: Tracker, layout: Layout, texts: list[str]
                   ) -> list[float]:
    """Send each text once the previous utterance is done; when each was sent (the clock
    of the events' own timestamps)."""
    sent: list[float] = []
    for text in texts:
        start = len(tracker.events)
        sent.append(time.time())
        await rt.send_user(text)
        with anyio.move_on_after(UTTERANCE_TIMEOUT):
            await tracker.until(lambda s=start: utterance_done(tracker.events[s:], layout.last))
    return sent


def samples(events: list[Event], sent: list[float], layout: Layout, texts: list[str],
            warmup: int, label: str, verbose: bool) -> list[Sample]:
    """Each utterance's events (those stamped from its send to the next one's; the run's
    events may arrive out of order from several processes): time to first audio, from the
    send to the first-audio event's own timestamp, and to each timed creature's turn start."""
    out: list[Sample] = []
    bounds = [*sent[1:], float("inf")]
    for i, (text, t0, t1) in enumerate(zip(texts, sent, bounds, strict=True)):
        got = sorted((e for e in events if t0 <= e.ts < t1), key=lambda e: e.ts)
        firsts = [e.ts for e in got if isinstance(e, layout.first)
                  and getattr(e, "creature", None) == layout.last]
        if not firsts:
            print(f"  {label:<10} {i:>2} no audio for {text!r}", flush=True)
            continue
        sample = Sample((firsts[0] - t0) * 1000, [start_ms(got, t0, c) for c in layout.starts],
                        i)
        if verbose:
            tag = " (warm-up)" if i < warmup else ""
            starts = "  ".join(f"{c} {v:6.1f}" for c, v in zip(layout.starts, sample.starts,
                                                                 strict=True))
            print(f"  {label:<10} {i:>2} ttfa {sample.ttfa:7.1f} ms  (turn start: {starts})"
                  f"  {text!r}{tag}", flush=True)
        if i >= warmup:
            out.append(sample)
    return out


async def in_process(layout: Layout, texts: list[str], warmup: int, runs_dir: Path,
                     verbose: bool) -> list[Sample]:
    """Every creature in this process, the team's own models (as ``terrarium run``)."""
    team = load_team(layout.path)
    tracker = Tracker()
    opts = RuntimeOptions(runs_dir=runs_dir, audio="none", on_event=tracker.add)
    async with TeamRuntime(team, opts) as rt:
        with anyio.fail_after(READY_TIMEOUT):
            await tracker.until(lambda: tracker.warmed(set(team.creatures)))
        sent = await send_all(rt, tracker, layout, texts)
    return samples(tracker.events, sent, layout, texts, warmup, "in-process", verbose)


def spawn_worker(path: Path, url: str, run_id: str, creatures: tuple[str, ...],
                 runs_dir: Path, out: Path) -> subprocess.Popen[bytes]:
    """``terrarium worker PATH --broker URL --run RUN --creatures ... --audio none``."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open(out, "wb") as f:  # the child keeps its own descriptor
        return subprocess.Popen(
            [sys.executable, "-u", "-m", "terrarium", "worker", str(path), "--broker", url,
             "--run", run_id, "--creatures", ",".join(creatures), "--audio", "none",
             "--runs-dir", str(runs_dir)],
            stdout=f, stderr=subprocess.STDOUT, env=env, cwd=ROOT)


def model_lines(procs: list[tuple[subprocess.Popen[bytes], Path]]) -> list[str]:
    """What each worker said about its embedded model server (``model: ...``)."""
    out = []
    for i, (_, path) in enumerate(procs):
        said = [x.removeprefix("model: ") for x in path.read_text(errors="replace").splitlines()
                if x.startswith("model: ")]
        out.append(f"worker {i}: {said[0] if said else 'said nothing about its model'}")
    return out


def shared_server(lines: list[str]) -> bool:
    """Whether the workers used one embedded server: one started it, the others shared it."""
    return (sum("sharing the embedded model server" in x for x in lines) == len(lines) - 1
            and sum("started the embedded model server" in x for x in lines) == 1)


async def across_workers(layout: Layout, url: str, texts: list[str], warmup: int, tmp: Path,
                         verbose: bool, models: list[str] | None = None) -> list[Sample]:
    """The run started here hosting nothing (``--host-creatures none``), each of
    ``layout.workers`` in its own ``terrarium worker`` process; events come back through
    the run's log stream on the broker, read to the run's end."""
    team = load_team(layout.path)
    tracker = Tracker()
    hosted = {n for names in layout.workers for n in names}
    opts = RuntimeOptions(runs_dir=tmp / "run", audio="none", broker=url, host=frozenset())
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []
    nc = await connect_broker(url, name="bench/voice.py (following the run)")

    async def follow(run_id: str) -> None:
        async for batch in follow_run(nc.jetstream(), run_id, team.name, idle=0.2):
            for ev in batch.events:
                tracker.add(ev)

    async def watch() -> None:  # a worker that dies before the end is the bench's failure
        while True:
            await anyio.sleep(0.5)
            for p, out in procs:
                if p.poll() is not None:
                    raise RuntimeError(f"worker exited ({p.returncode}):\n"
                                       + out.read_text(errors="replace")[-3000:])

    try:
        async with anyio.create_task_group() as tg:  # the follower returns at the run's end
            async with TeamRuntime(team, opts) as rt, anyio.create_task_group() as watching:
                tg.start_soon(follow, rt.run_id)
                for i, names in enumerate(layout.workers):
                    out = tmp / f"worker{i}.out"
                    procs.append((spawn_worker(layout.path, url, rt.run_id, names,
                                               tmp / f"w{i}", out), out))
                watching.start_soon(watch)
                with anyio.fail_after(READY_TIMEOUT):
                    await tracker.until(lambda: tracker.warmed(hosted))
                sent = await send_all(rt, tracker, layout, texts)
                watching.cancel_scope.cancel()
        # the run has ended: each worker sees it and stops by itself
        for p, _ in procs:
            p.wait(timeout=60)
    finally:
        await nc.close()
        for p, _ in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if models is not None:
            models.extend(model_lines(procs))
    return samples(tracker.events, sent, layout, texts, warmup, "broker", verbose)


@dataclass
class Round:
    in_process: list[Sample]
    broker: list[Sample]
    models: list[str] = field(default_factory=list)  # each worker's model server line


def _p(samples: list[Sample], q: float, start: int | None = None) -> float:
    """Percentile ``q`` of time to first audio, or to timed creature ``start``'s turn."""
    vals = [s.ttfa if start is None else s.starts[start] for s in samples]
    vals = [v for v in vals if v == v]  # a turn start not seen (NaN) is left out
    return pct(vals, q) if vals else float("nan")


async def compare(layout: Layout, url: str, texts: list[str], warmup: int, rounds: int,
                  verbose: bool) -> list[Round]:
    """``rounds`` times: the utterances in one process and across workers, in turn first
    (what runs first meets a machine that drifts, and saves the prompt prefixes)."""
    out: list[Round] = []
    for r in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            models: list[str] = []
            if r % 2:
                remote = await across_workers(layout, url, texts, warmup,
                                              Path(tmp) / "broker", verbose, models)
            local = await in_process(layout, texts, warmup, Path(tmp) / "local", verbose)
            if not r % 2:
                remote = await across_workers(layout, url, texts, warmup,
                                              Path(tmp) / "broker", verbose, models)
        out.append(Round(local, remote, models))
        print(f"round {r}  the workers' model servers "
              f"({'ONE shared' if shared_server(models) else 'NOT shared'}):", flush=True)
        for line in models:
            print(f"           {line}", flush=True)
        for name, vals in (("in-process", local), ("broker", remote)):
            if vals:
                starts = ", ".join(f"{c} {_p(vals, 0.5, j):.1f}"
                                   for j, c in enumerate(layout.starts))
                print(f"round {r}  {name:<10}  p50 {_p(vals, 0.5):7.1f} ms   p90 "
                      f"{_p(vals, 0.9):7.1f} ms   (turn start p50: {starts} ms; "
                      f"{len(vals)} utterances)", flush=True)
    return out


def report(rounds: list[Round], starts: tuple[str, ...]) -> None:
    """The median over rounds of each mode's p50 and p90, and the broker's difference;
    then the same for the send to each timed creature's turn start (p50)."""
    done = [r for r in rounds if r.in_process and r.broker]
    if not done:
        print("no measurements")
        return
    fig = {kind: {q: statistics.median(_p(getattr(r, kind), q) for r in done)
                  for q in (0.5, 0.9)} for kind in ("in_process", "broker")}
    start = {kind: [statistics.median(_p(getattr(r, kind), 0.5, j) for r in done)
                    for j in range(len(starts))] for kind in ("in_process", "broker")}
    print(f"\ntime to first audio, median of {len(done)} round(s):")
    for kind, label in (("in_process", "in one process"), ("broker", "router + speaker in "
                                                            "two workers (NATS)")):
        print(f"  {label:<38} p50 {fig[kind][0.5]:7.1f} ms   p90 {fig[kind][0.9]:7.1f} ms")
    d50 = fig["broker"][0.5] - fig["in_process"][0.5]
    d90 = fig["broker"][0.9] - fig["in_process"][0.9]
    print(f"  difference (broker - in one process)    p50 {d50:+7.1f} ms   p90 {d90:+7.1f} ms")
    paired = paired_ms(done, None)
    if paired:
        print(f"  paired per utterance (broker - in one process): median "
              f"{statistics.median(paired):+7.1f} ms ({len(paired)} pairs; the replies are the "
              "same, the model's time is not)")
    print(f"  target: broker p50 within {TTFA_TARGET_MS:g} ms of in-process: "
          f"{'met' if abs(d50) <= TTFA_TARGET_MS else 'NOT met'}")
    shared = sum(shared_server(r.models) for r in done)
    print(f"  the workers shared one embedded model server in {shared} of {len(done)} "
          f"round(s)")
    print("from the send to each creature's turn start, p50 (median of rounds), and the "
          "paired median (the hops, where the broker's cost shows unblurred by the model):")
    for j, c in enumerate(starts):
        a, b = start["in_process"][j], start["broker"][j]
        hop = paired_ms(done, j)
        pair = f"   paired {statistics.median(hop):+6.1f} ms" if hop else ""
        print(f"  {c:<12} in one process {a:7.1f} ms   across workers {b:7.1f} ms   "
              f"difference {b - a:+6.1f} ms{pair}")


def paired_ms(rounds: list[Round], start: int | None) -> list[float]:
    """Per utterance of each round, broker minus in one process: time to first audio
    (``start`` None), or to timed creature ``start``'s turn start (NaNs left out)."""
    out = []
    for r in rounds:
        local = {s.index: s for s in r.in_process}
        for b in r.broker:
            a = local.get(b.index)
            if a is None:
                continue
            d = b.ttfa - a.ttfa if start is None else b.starts[start] - a.starts[start]
            if d == d:
                out.append(d)
    return out


def broker_main(url: str | None, n: int, warmup: int, rounds: int, verbose: bool) -> None:
    texts = [UTTERANCES[i % len(UTTERANCES)] for i in range(n + warmup)]
    with nats_server(url) as broker:
        print(f"broker {broker}; {n} utterances after {warmup} warm-up, {rounds} round(s), "
              "in one process and across two workers, in turn first", flush=True)
        report(anyio.run(compare, VOICE, broker, texts, warmup, rounds, verbose), VOICE.starts)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--utterances", type=int, default=12)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("-v", "--verbose", action="store_true", help="print token usage per call")
    p.add_argument("--cold-start", action="store_true",
                   help="measure process start to ready, first and second start")
    p.add_argument("--runs", type=int, default=5, help="starts of each kind (--cold-start)")
    p.add_argument("--no-bytecode", action="store_true", help="--cold-start: compile the "
                   "modules at every start (PYTHONDONTWRITEBYTECODE) instead of keeping it")
    p.add_argument("--broker", nargs="?", const="", default=None, metavar="URL",
                   help="in one process, then router and speaker in two workers on this NATS "
                        "broker (no URL: start a nats-server here)")
    p.add_argument("--socket", action="store_true",
                   help="in one process, then over the audio socket of `terrarium serve`")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds of both modes (--broker, --socket)")
    a = p.parse_args()
    if a.socket:  # bench/voice_socket.py
        from voice_socket import socket_main

        socket_main(a.utterances, a.warmup, a.rounds, a.verbose)
    elif a.broker is not None:
        broker_main(a.broker or None, a.utterances, a.warmup, a.rounds, a.verbose)
    elif a.cold_start:
        cold_start(a.runs, a.verbose, bytecode=not a.no_bytecode)
    else:
        anyio.run(main, a.utterances, a.warmup, a.verbose)
