"""Voice benchmark: time to first audio through router → speaker → Piper, on the embedded model.

For each utterance: t0 = the user's text is sent; first audio = the first clip of the
speaker's reply reached the audio sink (a sink of the bench's that notes the time). The model
calls are timed by a thin proxy and the runtime's events carry their own timestamps, so the
time to first audio is cut into its parts, in order (their sum is the time to first audio):
to the speaker's turn start, to its model request, to the first token (prompt evaluation),
to the first piece the segmenter could cut from the model's raw text (generation), held
until that piece is queued for synthesis (the reply guard, the sink), to the synthesis
start, synthesis, to the audio sink. The model's and the voice's parts are the ones marked
"model:" and "voice:"; the rest is the framework's share:

    framework share = time to first audio − router model time (request → routing call closed)
                      − speaker model time to its first piece − synthesis of that piece

Prints every utterance (``-v``: its parts, the speaker's token usage per call and its
generation ms per token), then p50/p90 of time to first audio, of the framework share and
of each part. Run: ``python bench/voice.py [--utterances 12] [--warmup 2] [--runs 3]``.
``--against TREE --runs 3`` alternates runs of this checkout's code and of another
checkout's (a git worktree of main: ``git worktree add --detach /tmp/main-tree main``), each
in a fresh process with that tree's code and team, and summarizes each (same-run A/B).
``--with-env NAME=VALUE --runs 3`` alternates runs of this checkout as the environment
says and with that setting added (the OpenMP runtimes' A/B of issue 29:
``--with-env TERRARIUM_OPENMP=llvm``; each summary names the runtime it ran under).
``--framework`` runs the same with scripted models (every delta at once) and a 2 ms fake
voice: what is left is the framework's own path (target: its share p90 <= 15 ms).

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
of a real ``terrarium serve`` (target: within 30 ms of in-process), with where the time
went per stage in both modes (bench/voice_stages.py: from the events' own stamps, paired
per utterance) and each mode's CPU per utterance (the event loop's thread, the whole
process). ``--socket --framework``: the same team on scripted models, so the served
runtime's own waits stand out of the model's noise. ``BENCH_SERVE_ARGS="--turns-at-once
0"`` passes arguments to the server (a bisection), ``TERRARIUM_UVLOOP=0`` runs it on
asyncio's loop, ``BENCH_SERVE_PROFILE=FILE`` profiles it (bench/serve_profiled.py).

``--cold-start [--runs 5]`` measures something else: the time from starting the process
``terrarium run examples/voice_assistant`` to its "ready in" line (the team takes input;
what still warms then is in docs/performance.md), and the CPU the process had used by then,
at a first start (an empty prefix cache) and at a
second start (the cache the previous start saved), the median of ``--runs`` each (``--against
TREE``: another checkout's in turn with this one's, a before/after in one run). Compiled
bytecode is kept between the starts, as an installed package has it (``--no-bytecode``: as
PYTHONDONTWRITEBYTECODE leaves it, compiled anew at each start).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
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

import terrarium
from terrarium.channels.nats import connect_broker
from terrarium.channels.nats.follow import follow_run
from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.events import (
    CreatureWarmed,
    Event,
    SentenceQueued,
    SentenceSynthesized,
    TranscriptAppended,
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

# the checkout whose code is imported (PYTHONPATH): its team is the one measured, so this
# bench can measure another checkout's code (``--against``)
ROOT = Path(terrarium.__file__).resolve().parent.parent
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
    usage: Any = None  # the model's usage once the call ended (None: closed early)


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
    def llama_cpp(self) -> bool:
        # forwarded: the runtime warms the prompt prefix of models whose server keeps a
        # per-slot cache, as it does for its own; without it the first model-written reply
        # of each run evaluated the speaker's whole prefix (cached 0: 20 s on a busy machine)
        return bool(getattr(self.inner, "llama_cpp", False))

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
        try:
            # closed with this wrapper, so a paused reply stops the server at once
            async with aclosing(self.inner.stream(request)) as deltas:
                async for delta in deltas:
                    call.deltas.append((time.perf_counter(), delta.text))
                    yield delta
        finally:
            call.end = time.perf_counter()
            call.usage = self.inner.last_usage


class TimedAudio:
    """An audio sink that discards the audio and notes when each utterance's first clip
    reached it: the first audio out, as a sound device would get it."""

    def __init__(self) -> None:
        self.first: dict[str, float] = {}
        self._utterance = ""

    async def begin(self, utterance_id: str, sample_rate: int) -> None:
        self._utterance = utterance_id

    async def play(self, clip: Any) -> None:
        self.first.setdefault(self._utterance, time.perf_counter())

    async def finish(self) -> Any:
        from terrarium.voice.audio import UtteranceAudio
        return UtteranceAudio(utterance_id=self._utterance)

    async def abort(self) -> Any:
        return await self.finish()


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


def openmp_label(environ: dict[str, str] | None = None) -> str:
    """The OpenMP runtime and setting the embedded model runs under, as this environment
    says (``TERRARIUM_OPENMP``, ``OMP_WAIT_POLICY``, ``KMP_BLOCKTIME``): the A/B of
    issue 29 is this bench run under each."""
    from terrarium.llm.embedded import openmp_choice, wait_policy
    from terrarium.llm.server_child import LLVM_BLOCKTIME

    env = dict(os.environ) if environ is None else environ
    runtime = openmp_choice(env)
    if runtime != "gnu":
        return f"OpenMP {runtime}, KMP_BLOCKTIME {env.get('KMP_BLOCKTIME', LLVM_BLOCKTIME)}"
    return f"OpenMP gnu, {wait_policy(env)}"


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


# The parts of one model-written reply's time to first audio, in order; their sum is the
# time to first audio. "model" parts are the model's and the voice's, the rest is the
# framework's share (the router's model time, when it runs, is taken out of "to turn").
PARTS = (
    ("to turn", "the send to the speaker's turn start (the router's turn, the hop)"),
    ("to request", "the turn start to the speaker's model request (recall, prompt)"),
    ("first token", "model: the request to its first token (prompt evaluation)"),
    ("first piece", "model: the first token to the first piece the segmenter could cut"),
    ("held", "that piece to its queueing for synthesis (the reply guard, the sink)"),
    ("to synth", "queued to synthesis start (the synthesis queue)"),
    ("synth", "voice: Piper synthesizing the first piece"),
    ("to audio", "synthesized to the audio sink's first clip"),
)
MODEL_PARTS = frozenset({"first token", "first piece", "synth"})


@dataclass
class Row:
    """One model-written reply: its time to first audio, parts and figures (ms)."""

    text: str
    ttfa: float
    router: float
    parts: dict[str, float]
    piece: str
    usage: str
    gen_ms: float  # ms per generated token of the speaker's first call (delta to delta)
    event_hop: float  # synthesized -> the bench's on_event (the bus and the log, not audio)
    # the work before the first audio, which a busy machine does not change: the speaker's
    # tokens evaluated and generated before its first piece was queued for synthesis
    evaluated: int = 0
    tokens: int = 0
    # early synthesis (the tts output's synthesize_early): its first piece was synthesized
    # from the model's text before the guard let it through ("used"), or one was and was
    # thrown away ("wasted"), or none was ("")
    early: str = ""

    @property
    def share(self) -> float:
        return sum(v for k, v in self.parts.items() if k not in MODEL_PARTS) - self.router


@dataclass
class RunResult:
    rows: list[Row]
    fixed: list[float]  # replies the runtime said itself: time to first audio
    speed: tuple[float, float, float, float]  # calibration before / after (eval, gen)


def _early_counts(rt: Any) -> tuple[int, int]:
    """Early first pieces the runtime's tts outputs synthesized so far, and spoke."""
    counts = [getattr(t, "early_counts", (0, 0)) for t in getattr(rt, "tts", [])]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def _early_kind(before: tuple[int, int], after: tuple[int, int]) -> str:
    made, used = after[0] - before[0], after[1] - before[1]
    more = f" ({made} made: a first sentence dropped)" if made > 1 else ""
    return f"used{more}" if used else f"wasted{more}" if made else ""


def _usage_line(u: Any) -> str:
    if u is None:
        return "usage unknown (closed early)"
    return (f"prompt {u.prompt_tokens} cached {u.cached_tokens} evaluated {u.prompt_n} in "
            f"{u.prompt_ms or 0:.0f} ms; generated {u.completion_tokens} in "
            f"{u.predicted_ms or 0:.0f} ms")


SCRIPTED_REPLY = ("Here is a short answer for you, with a clause or two in it. It ends "
                  "with a second sentence.")


class FakeVoice:
    """A synthesizer that takes a fixed 2 ms (``--framework``: the voice's cost left out)."""

    sample_rate = 22050

    def synthesize(self, text: str) -> Any:
        from terrarium.voice.synth import AudioClip
        time.sleep(0.002)
        return AudioClip(pcm=b"\0\0" * 2205, sample_rate=self.sample_rate)


async def run_once(n: int, warmup: int, verbose: bool, framework: bool = False) -> RunResult:
    """One run: a fresh server and team, ``warmup`` + ``n`` utterances, each timed.
    ``framework``: scripted models (every delta at once) and a 2 ms fake voice instead, so
    what is measured is the framework's own path alone, free of the model's and the voice's
    noise on a shared machine."""
    if framework:
        from terrarium.llm.scripted import ScriptedModel
        router = TimedModel(ScriptedModel([{"reply": "question", "repeat": True}],
                                          continuation=True, name="router"))
        speaker = TimedModel(ScriptedModel([{"reply": SCRIPTED_REPLY, "repeat": True}],
                                           chunk_size=4, continuation=True, name="speaker"))
        rows, fixed = await _utterances(n, warmup, verbose, router, speaker, FakeVoice())
        return RunResult(rows, fixed, (0.0, 0.0, 0.0, 0.0))
    async with EmbeddedServer(slots=3) as server:  # slot 2: the speed calibration
        before = await calibrate(server, 2)
        team = load_team(ROOT / "examples" / "voice_assistant")
        # the same clients the runtime would make (config max_tokens, penalties, slots)
        router = TimedModel(make_model(assemble(team, "router").settings, embedded=server,
                                       slot=0))
        speaker = TimedModel(make_model(assemble(team, "speaker").settings, embedded=server,
                                        slot=1))
        rows, fixed = await _utterances(n, warmup, verbose, router, speaker, None)
        after = await calibrate(server, 2)
    return RunResult(rows, fixed, (*before, *after))


async def _utterances(n: int, warmup: int, verbose: bool, router: TimedModel,
                      speaker: TimedModel, voice: Any) -> tuple[list[Row], list[float]]:
    """The team with these models (and ``voice``, None: its own), the utterances timed."""
    team = load_team(ROOT / "examples" / "voice_assistant")
    router_fmt = assemble(team, "router").fmt
    tts = team.creatures["speaker"].config.output.named_outputs["tts"]
    segmenter = SegmenterConfig(first_clause_chars=tts.first_clause_chars,
                                first_piece_max_chars=tts.first_piece_max_chars)
    wall0, perf0 = time.time(), time.perf_counter()

    def perf(ts: float) -> float:  # an event's own timestamp on the bench's clock
        return ts - wall0 + perf0

    events: list[tuple[float, Any]] = []
    audio = TimedAudio()

    # the runtime warms the prompt prefixes of models with a per-slot cache after it is up;
    # the utterances start once both are in their slots, as a user speaks after "ready"
    cold = {name for name, m in (("router", router), ("speaker", speaker)) if m.llama_cpp}
    warm = anyio.Event()
    if not cold:
        warm.set()

    def on_event(ev: Any) -> None:
        events.append((time.perf_counter(), ev))
        if isinstance(ev, CreatureWarmed):
            cold.discard(ev.creature)
            if not cold:
                warm.set()

    rows: list[Row] = []
    fixed_rows: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        extra: dict[str, Any] = {}
        if "audio_sink" in RuntimeOptions.__dataclass_fields__:
            extra["audio_sink"] = lambda _name: audio
        opts = RuntimeOptions(runs_dir=Path(tmp), models={"router": router,
                                                           "speaker": speaker},
                              on_event=on_event, synthesizer=voice, **extra)
        async with TeamRuntime(team, opts) as rt:
            with anyio.fail_after(900):
                await warm.wait()
            for i in range(n + warmup):
                text = UTTERANCES[i % len(UTTERANCES)]
                before_r, before_s, before_e = (len(router.calls), len(speaker.calls),
                                                len(events))
                early0 = _early_counts(rt)
                t0 = time.perf_counter()
                await rt.send_user(text)
                await rt.wait_idle(poll=0.005)
                await anyio.sleep(0.05)  # the log's writer hands the last events on
                evs = events[before_e:]
                synth = [(t, e) for t, e in evs if isinstance(e, SentenceSynthesized)
                         and getattr(e, "creature", "speaker") == "speaker"]
                r_calls = router.calls[before_r:]
                s_calls = speaker.calls[before_s:]
                if not synth:
                    print(f"{i:>2} no audio for {text!r} (router calls {len(r_calls)}, "
                          f"speaker calls {len(s_calls)})")
                    continue
                got, first = synth[0]
                uid = first.utterance_id
                t_audio = audio.first.get(uid, perf(first.ts))
                ttfa = (t_audio - t0) * 1000
                if not s_calls:  # the reply guard said a fixed reply: no model at all
                    print(f"{i:>2} ttfa {ttfa:7.0f} ms | runtime reply, no model: "
                          f"{first.text!r}")
                    if i >= warmup:
                        fixed_rows.append(ttfa)
                    continue
                call = s_calls[0]
                turn = next((perf(e.ts) for _, e in evs if isinstance(e, TurnStarted)
                             and e.creature == "speaker"), call.start)
                queued = next((perf(e.ts) for _, e in evs if isinstance(e, SentenceQueued)
                               and e.utterance_id == uid), perf(first.ts))
                tokens = [t for t, d in call.deltas if d]
                t_tok = tokens[0] if tokens else call.end
                t_piece = max(first_sentence_time(call, segmenter) or call.end, t_tok)
                t_synth = perf(first.ts)
                synth0 = t_synth - first.synth_ms / 1000
                marks = [t0, turn, call.start, t_tok, t_piece, queued, synth0, t_synth,
                         t_audio]
                parts = {name: (b - a) * 1000 for (name, _), a, b
                         in zip(PARTS, marks[:-1], marks[1:], strict=True)}
                r_model = ((call_closed_time(r_calls[-1], router_fmt) - r_calls[0].start)
                           * 1000 if r_calls else 0.0)
                gen = ((tokens[-1] - tokens[0]) * 1000 / (len(tokens) - 1)
                       if len(tokens) > 1 else 0.0)
                row = Row(text, ttfa, r_model, parts, first.text,
                          " | ".join(_usage_line(c.usage) for c in s_calls), gen,
                          (got - t_synth) * 1000,
                          evaluated=getattr(call.usage, "prompt_n", 0) or 0,
                          tokens=sum(1 for t in tokens if t <= queued),
                          early=_early_kind(early0, _early_counts(rt)))
                tag = "warm-up" if i < warmup else ""
                if verbose:
                    said = "".join(d for c in s_calls for _, d in c.deltas)
                    print(f"     the model wrote: {said!r}")
                    for _, e in evs:
                        if (isinstance(e, TranscriptAppended) and e.creature == "speaker"
                                and e.entry.kind == "notice"):
                            print(f"     notice: {e.entry.text}")
                    print(f"     speaker: {row.usage}")
                    steps = [f"{type(e).__name__}({getattr(e, 'creature', '')}) "
                             f"{(perf(e.ts) - t0) * 1000:.1f}" for _, e in evs
                             if perf(e.ts) <= turn]
                    print(f"     to the turn: {', '.join(steps)}")
                    print(f"     first piece: {row.piece!r}; generation {gen:.1f} ms/token"
                          + (f"; synthesized early: {row.early}" if row.early else ""))
                    print("     " + "  ".join(f"{k} {v:.0f}" for k, v in parts.items())
                          + f"  (event to the bench {row.event_hop:.0f} ms)")
                print(f"{i:>2} ttfa {ttfa:7.0f} ms | router model {r_model:6.0f} | speaker "
                      f"first piece {parts['first token'] + parts['first piece']:6.0f} | "
                      f"synth {first.synth_ms:5.0f} | framework {row.share:6.1f} ms {tag}",
                      flush=True)
                if i >= warmup:
                    rows.append(row)
    return rows, fixed_rows


def summarize(results: list[RunResult], label: str = "", framework: bool = False,
              environ: dict[str, str] | None = None) -> dict[str, float]:
    """Print the figures of ``results`` (pooled over runs, and each run's p50/p90);
    return the headline ones. ``framework``: they come from the scripted models;
    ``environ``: the environment they ran in (default: this one)."""
    rows = [r for res in results for r in res.rows]
    fixed = [f for res in results for f in res.fixed]
    if not rows:
        print("no measurements")
        return {}
    cols: list[tuple[str, list[float]]] = [
        ("time to first audio", [r.ttfa for r in rows]),
        ("router model", [r.router for r in rows]),
        ("speaker to first piece", [r.parts["first token"] + r.parts["first piece"]
                                    for r in rows]),
        ("first-piece synthesis", [r.parts["synth"] for r in rows]),
        ("framework share", [r.share for r in rows]),
    ]
    head = f"{label}: " if label else ""
    made_by = ("scripted models + a 2 ms fake voice" if framework
               else f"embedded SmolLM2-135M ({openmp_label(environ)}) + Piper")
    print(f"\n{head}{len(rows)} model-written replies in {len(results)} run(s), {made_by}:")
    for name, vals in cols:
        print(f"  {name:<26} p50 {pct(vals, 0.5):7.1f} ms   p90 {pct(vals, 0.9):7.1f} ms   "
              f"mean {statistics.fmean(vals):7.1f} ms")
    print("  the parts (p50 / p90 / mean ms):")
    for name, what in PARTS:
        vals = [r.parts[name] for r in rows]
        print(f"    {name:<12} {pct(vals, 0.5):7.1f} {pct(vals, 0.9):7.1f} "
              f"{statistics.fmean(vals):7.1f}   {what}")
    gens = [r.gen_ms for r in rows if r.gen_ms]
    if gens:
        print(f"  speaker generation, first call: p50 {pct(gens, 0.5):.1f} ms per token")
    # the work on the way to the first audio, the same on a busy machine as on a quiet one
    work = [("prompt tokens evaluated", [float(r.evaluated) for r in rows]),
            ("tokens generated before the first piece was queued", [float(r.tokens) for r in rows]),
            ("characters of the first piece", [float(len(r.piece)) for r in rows])]
    for name, vals in work:
        print(f"  speaker {name}: p50 {pct(vals, 0.5):.0f}, p90 {pct(vals, 0.9):.0f}, "
              f"mean {statistics.fmean(vals):.1f}")
    early = [r for r in rows if r.early]
    if early:
        used = [r for r in early if r.early.startswith("used")]
        print(f"  first pieces synthesized early (before the guard let them through): "
              f"{len(early)} of {len(rows)}, {len(used)} spoken, {len(early) - len(used)} "
              f"thrown away; the wait for the first piece's audio after it was let through "
              f"(synth) p50 {pct([r.parts['synth'] for r in used], 0.5) if used else 0:.1f} "
              f"ms where spoken")
    hops = [r.event_hop for r in rows]
    print(f"  (the event's way to the bench, not on the audio path: p50 {pct(hops, 0.5):.1f} "
          f"ms, p90 {pct(hops, 0.9):.1f} ms)")
    if len(results) > 1:
        for j, res in enumerate(results):
            v = [r.ttfa for r in res.rows]
            s = [r.share for r in res.rows]
            if v:
                print(f"  run {j}: time to first audio p50 {pct(v, 0.5):6.1f} p90 "
                      f"{pct(v, 0.9):6.1f} ms; framework share p50 {pct(s, 0.5):5.1f} p90 "
                      f"{pct(s, 0.9):5.1f} ms")
    if fixed:
        print(f"  {len(fixed)} more utterances answered by the runtime (greeting, thanks, "
              f"goodbye, statement; no model): time to first audio p50 "
              f"{pct(fixed, 0.5):.1f} ms, p90 {pct(fixed, 0.9):.1f} ms")
        both = [r.ttfa for r in rows] + fixed
        print(f"  all {len(both)} utterances: time to first audio p50 {pct(both, 0.5):.1f} ms, "
              f"p90 {pct(both, 0.9):.1f} ms")
    for res in results:
        b_e, b_g, a_e, a_g = res.speed
        print(f"  machine speed (fixed request, before / after): prompt evaluation "
              f"{b_e:.2f} / {a_e:.2f} ms per token, generation {b_g:.2f} / {a_g:.2f} ms per "
              "token")
    ttfa = [r.ttfa for r in rows]
    share = [r.share for r in rows]
    return {"p50": pct(ttfa, 0.5), "p90": pct(ttfa, 0.9), "share50": pct(share, 0.5),
            "share90": pct(share, 0.9)}


async def main(n: int, warmup: int, verbose: bool, runs: int = 1,
               framework: bool = False) -> None:
    results = []
    for j in range(runs):
        if runs > 1:
            print(f"run {j}", flush=True)
        results.append(await run_once(n, warmup, verbose, framework))
    fig = summarize(results, framework=framework)
    if fig:
        ok = fig["p50"] <= 300 and fig["p90"] <= 450 and fig["share90"] <= 15
        print(f"  targets (p50 <= 300 ms, p90 <= 450 ms, framework share p90 <= 15 ms): "
              f"{'met' if ok else 'NOT met'}; load average {os.getloadavg()[0]:.1f}")


def against(tree: Path | None, n: int, warmup: int, runs: int, verbose: bool,
            framework: bool = False, settings: dict[str, str] | None = None) -> None:
    """``runs`` rounds of this checkout's code and ``tree``'s (or, with ``settings``, of
    this checkout as the environment says and with ``settings`` added to it), alternating,
    each in a fresh process (this bench, the tree's ``terrarium`` and team); each summarized."""
    variants: dict[str, tuple[Path, dict[str, str]]] = {"this": (ROOT, {})}
    if tree is not None:
        variants["other"] = (tree.resolve(), {})
    if settings:
        variants["with " + " ".join(f"{k}={v}" for k, v in settings.items())] = (ROOT, settings)
    out: dict[str, list[str]] = {k: [] for k in variants}
    for j in range(runs):
        for label, (path, extra) in variants.items():
            load = os.getloadavg()[0]
            print(f"round {j}: {label} ({path}), load {load:.1f}", flush=True)
            env = dict(os.environ, PYTHONPATH=str(path), **extra)
            cmd = [sys.executable, __file__, "--utterances", str(n), "--warmup", str(warmup),
                   "--json"] + (["-v"] if verbose else []) + (
                       ["--framework"] if framework else [])
            proc = subprocess.run(cmd, env=env, cwd=path, capture_output=True, text=True)
            if proc.returncode:
                raise SystemExit(f"{label} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
            lines = proc.stdout.splitlines()
            out[label] += [x for x in lines if x.startswith("{")]
            if verbose:
                print("\n".join(x for x in lines if not x.startswith("{")))
    for label, (path, extra) in variants.items():
        # the header names the OpenMP runtime of that variant's environment
        summarize([_from_json(x) for x in out[label]], f"{label} ({path})", framework,
                  environ={**os.environ, **extra})
    print(f"  load average at the end {os.getloadavg()[0]:.1f}")


def env_settings(items: list[str] | None) -> dict[str, str]:
    """``--with-env NAME=VALUE``'s settings; SystemExit for an item without ``=``."""
    out: dict[str, str] = {}
    for item in items or []:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise SystemExit(f"--with-env: {item!r} is not NAME=VALUE")
        out[name] = value
    return out


def _to_json(res: RunResult) -> str:
    return json.dumps({"rows": [dataclasses.asdict(r) for r in res.rows],
                       "fixed": res.fixed, "speed": res.speed})


def _from_json(line: str) -> RunResult:
    d = json.loads(line)
    return RunResult([Row(**r) for r in d["rows"]], d["fixed"], tuple(d["speed"]))


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
    cpu: float | None = None  # CPU seconds the run's own process had used at its ready line


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux's /proc), the
    figure a busy machine changes least; None where there is no /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


FIRST_INPUT = "Hi, my name is Ada. I love green tea."  # the README's main command


def start_once(cache: Path, timeout: float = 180.0, pycache: Path | None = None,
               say: str | None = FIRST_INPUT, root: Path = ROOT) -> Start:
    """Start ``terrarium run examples/voice_assistant --input SAY`` with prefix cache
    ``cache``; note when it says it is ready and when the first reply's audio is written
    (its ``[audio]`` line: the whole reply synthesized, so an upper bound of the first
    audio), then let it end, reading what it says to the end (the prefixes restored are
    counted in all of it: a creature the reply did not need may say so after it).
    ``say=None``: no input; end it at ready by closing its input.

    ``pycache``: where the run's compiled bytecode is kept, as an installed package has it
    (None: as this environment says; PYTHONDONTWRITEBYTECODE compiles every module anew at
    every start, ~0.17 s of CPU here). ``root``: the checkout whose code and team run
    (``--against``: another one, for a before/after in one run)."""
    env = dict(os.environ, TERRARIUM_CACHE_DIR=str(cache), PYTHONPATH=str(root))
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    with tempfile.TemporaryDirectory() as runs:
        cmd = [sys.executable, "-u", "-m", "terrarium", "run",
               str(root / "examples" / "voice_assistant"), "--audio", "none" if say is None
               else "wav", "--runs-dir", runs, "--timeout", str(timeout)]
        if say is not None:
            cmd += ["--input", say]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=env, cwd=root)
        assert proc.stdout is not None and proc.stdin is not None
        lines: list[str] = []
        ready = runtime_ready = load = audio = cpu = None
        try:
            for line in proc.stdout:
                lines.append(line.rstrip())
                if (m := LOADED.match(line)) is not None:
                    load = float(m.group(1))
                if (m := READY.match(line)) is not None:
                    ready = time.perf_counter() - t0
                    cpu = process_cpu(proc.pid)
                    runtime_ready = float(m.group(1))
                    if say is None:
                        break
                if "[audio]" in line and audio is None:
                    audio = time.perf_counter() - t0
                    # end of input: the run stops by itself; its last lines are read to
                    # the end (a restore told after the reply's audio counts too)
                    proc.stdin.close()
        finally:
            if not proc.stdin.closed:
                proc.stdin.close()  # end of input: the run stops by itself
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.terminate()
                proc.wait()
    if ready is None or runtime_ready is None:
        raise SystemExit("the run never said it was ready:\n" + "\n".join(lines))
    restored = sum("restored from cache" in x for x in lines)
    return Start(ready, runtime_ready, load or 0.0, restored, audio, lines, cpu)


def cold_start(runs: int, verbose: bool, bytecode: bool = True, vs: Path | None = None
               ) -> None:
    """First and second start, ``runs`` of each: median, min and max. ``bytecode``: the
    modules' compiled bytecode is kept between starts, as after an install (an untimed
    start of each checkout compiles it first). ``vs`` (``--against``): another checkout (a
    baseline) started the same way in turn with this one, first and second start each, so
    both meet the same machine."""
    trees = {"this": ROOT} if vs is None else {"this": ROOT, "vs": vs.resolve()}
    results: dict[str, dict[str, list[Start]]] = {t: {"first": [], "second": []}
                                                  for t in trees}
    with tempfile.TemporaryDirectory() as tmp:
        pycache = Path(tmp) / "pycache" if bytecode else None
        if pycache is not None:
            # one untimed start per checkout compiles its bytecode (and, the first, all of
            # the venv's), as an install does: timed, it made the first checkout's first
            # start of run 0 ~3 s of CPU slower than the other's
            for tree, root in trees.items():
                start_once(Path(tmp) / f"{tree}-compile", pycache=pycache, say=None,
                           root=root)
        for i in range(runs):
            for tree, root in trees.items():
                first_cache = Path(tmp) / f"{tree}-first-{i}"  # empty: nothing to restore
                got = results[tree]
                got["first"].append(start_once(first_cache, pycache=pycache, root=root))
                # what the first one saved (prompt prefixes, the voice's optimized graph)
                got["second"].append(start_once(first_cache, pycache=pycache, root=root))
                for kind in ("first", "second"):
                    r = got[kind][-1]
                    heard = f"{r.audio:5.2f} s" if r.audio is not None else "never"
                    label = f"{tree:<4} " if vs is not None else ""
                    cpu = f"{r.cpu:4.2f} s" if r.cpu is not None else "?"
                    print(f"{i:>2} {label}{kind:<6} ready {r.ready:5.2f} s after the process "
                          f"started (CPU {cpu}; runtime {r.runtime_ready:4.1f} s, model load "
                          f"{r.model_load:3.1f} s, {r.restored} prefix(es) restored), first "
                          f"reply's audio {heard}; load average {os.getloadavg()[0]:.1f}",
                          flush=True)
                    shown = r.lines if verbose else [x for x in r.lines if "[cache]" in x]
                    if shown:
                        print("     " + "\n     ".join(shown))
    for tree, root in trees.items():
        where = f" ({root})" if vs is not None else ""
        print(f"\ncold start of examples/voice_assistant --input {FIRST_INPUT!r}{where}, "
              f"{runs} run(s) each (from the process's start; bytecode "
              f"{'kept between starts, as installed' if bytecode else 'compiled at every start'}):")
        _cold_summary(results[tree], runs)


def _cold_summary(results: dict[str, list[Start]], runs: int) -> None:
    for kind, rs in results.items():
        vals = [r.ready for r in rs]
        heard = [r.audio for r in rs if r.audio is not None]
        audio = (f"; first reply's audio median {statistics.median(heard):5.2f} s"
                 if heard else "; no audio")
        cpus = [r.cpu for r in rs if r.cpu is not None]
        if cpus:  # the process's own CPU to ready: what a quiet machine's wall time nears
            audio += f"; CPU to ready median {statistics.median(cpus):4.2f} s"
        print(f"  {kind} start  ready median {statistics.median(vals):5.2f} s   min "
              f"{min(vals):5.2f} s   max {max(vals):5.2f} s   (runtime's own: median "
              f"{statistics.median(r.runtime_ready for r in rs):4.2f} s; before the runtime: "
              f"median {statistics.median(r.ready - r.runtime_ready for r in rs):4.2f} s)"
              f"{audio}")
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
    p.add_argument("--runs", type=int, default=None,
                   help="runs of the utterances (default 1), or starts of each kind "
                        "(--cold-start, default 5), or rounds of each tree (--against, default 3)")
    p.add_argument("--against", type=Path, default=None, metavar="TREE",
                   help="alternate runs of this checkout and of another one's code and team "
                        "(e.g. a git worktree of main), each in a fresh process; with "
                        "--cold-start, that checkout's first and second starts in turn")
    p.add_argument("--with-env", action="append", default=None, metavar="NAME=VALUE",
                   help="alternate runs of this checkout as the environment says and with "
                        "this setting added (repeatable), e.g. TERRARIUM_OPENMP=llvm")
    p.add_argument("--framework", action="store_true",
                   help="scripted models and a 2 ms fake voice: the framework's own path only")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--no-bytecode", action="store_true", help="--cold-start: compile the "
                   "modules at every start (PYTHONDONTWRITEBYTECODE) instead of keeping it")
    p.add_argument("--broker", nargs="?", const="", default=None, metavar="URL",
                   help="in one process and router and speaker in two workers on this NATS "
                        "broker (no URL: start a nats-server here)")
    p.add_argument("--socket", action="store_true",
                   help="in one process and over the audio socket of `terrarium serve`")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds of both modes (--broker, --socket)")
    a = p.parse_args()
    if a.runs is None:
        a.runs = 5 if a.cold_start else 3 if a.against or a.with_env else 1
    if a.socket:  # bench/voice_socket.py
        from voice_socket import socket_main

        socket_main(a.utterances, a.warmup, a.rounds, a.verbose, a.framework)
    elif a.broker is not None:
        broker_main(a.broker or None, a.utterances, a.warmup, a.rounds, a.verbose)
    elif a.cold_start:
        cold_start(a.runs, a.verbose, bytecode=not a.no_bytecode, vs=a.against)
    elif a.against is not None or a.with_env:
        against(a.against, a.utterances, a.warmup, a.runs, a.verbose, a.framework,
                env_settings(a.with_env))
    elif a.json:
        print(_to_json(anyio.run(run_once, a.utterances, a.warmup, a.verbose, a.framework)))
    else:
        anyio.run(main, a.utterances, a.warmup, a.verbose, a.runs, a.framework)
