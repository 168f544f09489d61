"""``bench/voice.py --socket``: time to first audio over the audio socket against in-process.

Each round runs the same utterances twice: in one process (the team's own models, as
``terrarium run``), and through a real ``terrarium serve`` (uvicorn, in its own process) on
the same team, one session, each utterance sent as the audio socket's text frame
``{"type": "text", "text": ...}``; even rounds in one process first, odd rounds the socket
first (the first of the two meets the machine's drift first and saves the prompt
prefixes the second restores).

Where the clocks start and stop (the two are comparable):

- in one process: from ``rt.send_user(text)`` to the speaker's first ``sentence_synthesized``
  event (its own timestamp: the first piece is audio and goes to the audio sink);
- over the socket: from the client's send of the text frame to the first binary (PCM16)
  frame the client received. The text frame stands where the transcription's result
  would: the server hands it to the session as ``send_user`` does (no VAD, no speech
  recognition, which the in-process figure has neither).

Also printed: the server's own figure for each socket utterance (the first ``sentence``
frame's ``first_audio_ms``: from the text handed to the team to the first-audio event, on
the server's clock), so the difference splits into what the served runtime took and what
the socket took (text frame in, PCM out). The replies are the same in both modes (the
embedded server's fixed sampling seed), so utterance i of one mode is paired with
utterance i of the other and the median of the paired differences is printed beside the
difference of the percentiles.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
from voice import (
    READY_TIMEOUT,
    ROOT,
    TTFA_TARGET_MS,
    UTTERANCE_TIMEOUT,
    UTTERANCES,
    VOICE,
    Layout,
    Tracker,
    pct,
    send_all,
)
from voice_stages import log_events, stage_rows, stage_table

from terrarium.config import Team, load_team
from terrarium.llm.settings import ModelSettings
from terrarium.runtime.recording import LOG_FILE
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

__all__ = ["socket_main"]

# more arguments for `terrarium serve` (a bisection: "--turns-at-once 0"); the loop is
# chosen by TERRARIUM_UVLOOP=0 (asyncio's) as for the CLI
SERVE_ARGS = os.environ.get("BENCH_SERVE_ARGS", "").split()
# the server's CPU by function (cProfile) into this file (BENCH_SERVE_PROFILE=FILE)
PROFILE = ([str(Path(__file__).with_name("serve_profiled.py")),
            os.environ["BENCH_SERVE_PROFILE"]]
           if os.environ.get("BENCH_SERVE_PROFILE") else ["-m", "terrarium"])
SERVE_BANNER = re.compile(r"^serving .* on http://([0-9.]+):([0-9]+)")
NAN = float("nan")


@dataclass
class SocketSample:
    """One utterance over the audio socket: from the client's send of its text frame to the
    first PCM frame the client received (ms), and the server's own figure, from the text
    handed to the team to the first-audio event (NaN: no audio)."""

    client: float = NAN
    server: float = NAN
    sent: float = NAN  # the text frame's send, and the first PCM frame's arrival (wall clock)
    received: float = NAN


@dataclass
class SocketRound:
    in_process: list[float]  # per utterance, warm-up included (NaN: no audio)
    socket: list[SocketSample]
    local_stages: list[dict[str, float]]  # per utterance (voice_stages.py)
    socket_stages: list[dict[str, float]]


async def in_process(layout: Layout, texts: list[str], runs_dir: Path
                     ) -> tuple[list[float], list[dict[str, float]]]:
    """Every creature in this process (as ``terrarium run``): time to first audio of each
    utterance, from the send to the first-audio event's own timestamp; and its stages."""
    team = load_team(layout.path)
    tracker = Tracker()
    opts = RuntimeOptions(runs_dir=runs_dir, audio="none", on_event=tracker.add)
    async with TeamRuntime(team, opts) as rt:
        with anyio.fail_after(READY_TIMEOUT):
            await tracker.until(lambda: tracker.warmed(warming(team)))
        cpu0 = time.thread_time(), time.process_time()
        sent = await send_all(rt, tracker, layout, texts)
        CPU["in one process"] = (time.thread_time() - cpu0[0], time.process_time() - cpu0[1])
    out = []
    for t0, t1 in zip(sent, [*sent[1:], float("inf")], strict=True):
        firsts = [e.ts for e in tracker.events if isinstance(e, layout.first)
                  and getattr(e, "creature", None) == layout.last and t0 <= e.ts < t1]
        out.append((min(firsts) - t0) * 1000 if firsts else NAN)
    return out, stage_rows(tracker.events, sent)


# CPU seconds of the last run of each mode over all its utterances: (the event loop's
# thread, the whole process: the embedded model's threads and Piper's included); in one
# process the loop's thread also runs the bench's own event tracking
CPU: dict[str, tuple[float, float]] = {}


def proc_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds of a process's main thread (its event loop) and of all its threads."""
    tick = os.sysconf("SC_CLK_TCK")

    def used(stat: str) -> float:
        fields = Path(stat).read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime + stime

    return used(f"/proc/{pid}/task/{pid}/stat"), used(f"/proc/{pid}/stat")


def warming(team: Team) -> set[str]:
    """The creatures whose prompt prefix is warmed (an embedded model's) before the
    utterances start: a scripted one's is not (``--framework``)."""
    return {n for n, c in team.creatures.items()
            if (c.config.controller or ModelSettings()).provider == "embedded"}


def spawn_serve(path: Path, runs_dir: Path, out: Path) -> subprocess.Popen[bytes]:
    """``terrarium serve PATH --port 0`` (any free port; its banner says which)."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open(out, "wb") as f:  # the child keeps its own descriptor
        return subprocess.Popen(
            [sys.executable, "-u", *PROFILE, "serve", str(path), "--port", "0",
             "--runs-dir", str(runs_dir), "--rate", "1000", *SERVE_ARGS],
            stdout=f, stderr=subprocess.STDOUT, env=env, cwd=ROOT)


def _said(out: Path) -> str:
    return out.read_text(errors="replace")


async def served_at(proc: subprocess.Popen[bytes], out: Path) -> str:
    """The server's address, once its banner is out (its model may still be loading)."""
    with anyio.fail_after(READY_TIMEOUT):
        while True:
            said = _said(out)
            if proc.poll() is not None:
                raise RuntimeError(f"terrarium serve exited ({proc.returncode}):\n"
                                   + said[-3000:])
            for line in said.splitlines():
                if (m := SERVE_BANNER.match(line)) is not None:
                    return f"{m.group(1)}:{m.group(2)}"
            await anyio.sleep(0.1)


async def over_socket(layout: Layout, texts: list[str], tmp: Path, verbose: bool
                      ) -> tuple[list[SocketSample], list[dict[str, float]]]:
    """The team in a ``terrarium serve`` process; one session; each text sent as the audio
    socket's text frame once the previous reply's audio has ended.

    The session's events WebSocket is read only until every creature is warm, then closed:
    a voice client reads the audio socket alone, and following every event (each token's
    ``output_text``) would cost both processes CPU at the very moment measured."""
    import httpx
    from websockets.asyncio.client import connect

    from terrarium.events import event_from_dict

    out = tmp / "serve.out"
    proc = spawn_serve(layout.path, tmp / "runs", out)
    rows: list[SocketSample] = []
    try:
        addr = await served_at(proc, out)
        async with httpx.AsyncClient(base_url=f"http://{addr}", timeout=60) as http:
            with anyio.fail_after(READY_TIMEOUT):
                while (await http.get("/readyz")).status_code != 200:  # noqa: ASYNC110 (HTTP)
                    await anyio.sleep(0.1)
            sid = (await http.post("/v1/sessions", json={})).json()["id"]
        # the audio socket loads the session (and holds it loaded)
        async with connect(f"ws://{addr}/v1/sessions/{sid}/audio", max_size=None,
                           open_timeout=READY_TIMEOUT) as audio:
            tracker = Tracker()
            async with connect(f"ws://{addr}/v1/sessions/{sid}/events/ws?after=0",
                               max_size=None) as events:
                with anyio.fail_after(READY_TIMEOUT):
                    while not tracker.warmed(warming(load_team(layout.path))):
                        try:
                            tracker.add(event_from_dict(json.loads(await events.recv())))
                        except ValueError:
                            pass
            cpu0 = proc_cpu(proc.pid)
            for i, text in enumerate(texts):
                sample = SocketSample()
                t0, sample.sent = time.perf_counter(), time.time()
                await audio.send(json.dumps({"type": "text", "text": text}))
                heard = ended = False
                with anyio.move_on_after(UTTERANCE_TIMEOUT):
                    # the socket's frames are in order: what comes before the server's
                    # "heard" frame for this text is the previous reply's rest
                    while not ended:
                        frame = await audio.recv()
                        if isinstance(frame, bytes):
                            if heard and sample.client != sample.client:
                                sample.client = (time.perf_counter() - t0) * 1000
                                sample.received = time.time()
                            continue
                        data = json.loads(frame)
                        kind = data.get("type")
                        heard = heard or kind == "heard"
                        if heard and kind == "sentence" and sample.server != sample.server:
                            sample.server = float(data.get("first_audio_ms", NAN))
                        ended = (heard and kind == "end"
                                 and data.get("creature") == layout.last)
                if verbose:
                    print(f"  {'socket':<10} {i:>2} ttfa {sample.client:7.1f} ms at the client"
                          f"  (server {sample.server:7.1f} ms)  {text!r}", flush=True)
                rows.append(sample)
            cpu1 = proc_cpu(proc.pid)
            CPU["over the socket"] = (cpu1[0] - cpu0[0], cpu1[1] - cpu0[1])
    finally:
        if proc.poll() is None:
            proc.terminate()  # uvicorn's graceful shutdown: the sessions stop, the log closes
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    # the stages from the session's numbered events, read back from the server's log
    events = log_events(tmp / "runs" / LOG_FILE) if (tmp / "runs" / LOG_FILE).exists() else []
    return rows, stage_rows(events, [s.sent for s in rows], [s.received for s in rows])


def _real(vals: list[float]) -> list[float]:
    return [v for v in vals if v == v]


async def compare(layout: Layout, texts: list[str], warmup: int, rounds: int,
                  verbose: bool) -> list[SocketRound]:
    """``rounds`` times: the utterances in one process and over the audio socket, in turn
    first (what runs first meets a machine that drifts, and saves the prompt prefixes)."""
    out: list[SocketRound] = []
    for r in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            if r % 2:
                remote, rstages = await over_socket(layout, texts, Path(tmp) / "socket",
                                                    verbose)
            local, lstages = await in_process(layout, texts, Path(tmp) / "local")
            if verbose:
                for i, (text, v) in enumerate(zip(texts, local, strict=True)):
                    print(f"  {'in-process':<10} {i:>2} ttfa {v:7.1f} ms  {text!r}", flush=True)
            if not r % 2:
                remote, rstages = await over_socket(layout, texts, Path(tmp) / "socket",
                                                    verbose)
        rnd = SocketRound(local[warmup:], remote[warmup:], lstages[warmup:], rstages[warmup:])
        out.append(rnd)
        n = len(texts)
        print(f"round {r}  CPU per utterance (ms): "
              + ";  ".join(f"{k}: event loop thread {v[0] / n * 1000:.1f}, whole process "
                           f"{v[1] / n * 1000:.1f}" for k, v in CPU.items()), flush=True)
        for name, vals in (("in-process", rnd.in_process),
                           ("socket", [s.client for s in rnd.socket]),
                           ("(server)", [s.server for s in rnd.socket])):
            if _real(vals):
                print(f"round {r}  {name:<10}  p50 {pct(_real(vals), 0.5):7.1f} ms   p90 "
                      f"{pct(_real(vals), 0.9):7.1f} ms   ({len(_real(vals))} utterances)",
                      flush=True)
    return out


def report(rounds: list[SocketRound]) -> None:
    """The median over rounds of each mode's p50 and p90, the socket's difference (of the
    percentiles, and the median of the paired per-utterance differences), and its split."""
    done = [r for r in rounds if _real(r.in_process) and _real([s.client for s in r.socket])]
    if not done:
        print("no measurements")
        return
    modes = {"in one process": [r.in_process for r in done],
             "over the audio socket (client)": [[s.client for s in r.socket] for r in done],
             "  the server's own figure": [[s.server for s in r.socket] for r in done]}
    fig = {k: {q: statistics.median(pct(_real(v), q) for v in runs) for q in (0.5, 0.9)}
           for k, runs in modes.items()}
    print(f"\ntime to first audio, median of {len(done)} round(s) (in one process: from "
          "send_user to the first-audio event; over the socket: from the client's text frame "
          "to its first PCM frame):")
    for k, f in fig.items():
        print(f"  {k:<34} p50 {f[0.5]:7.1f} ms   p90 {f[0.9]:7.1f} ms")
    a, b = fig["in one process"], fig["over the audio socket (client)"]
    d50, d90 = b[0.5] - a[0.5], b[0.9] - a[0.9]
    print(f"  difference (socket - in one process)   p50 {d50:+7.1f} ms   p90 {d90:+7.1f} ms")
    paired = [s.client - v for r in done for v, s in zip(r.in_process, r.socket, strict=True)]
    wire = [s.client - s.server for r in done for s in r.socket]
    served = [s.server - v for r in done for v, s in zip(r.in_process, r.socket, strict=True)]
    for label, vals in (("paired per utterance (socket - in one process)", paired),
                        ("  in the served runtime (server figure - in one process)", served),
                        ("  on the socket (client figure - server figure)", wire)):
        if _real(vals):
            print(f"  {label:<58} median {statistics.median(_real(vals)):+7.1f} ms "
                  f"({len(_real(vals))} pairs)")
    print(f"  target: socket p50 within {TTFA_TARGET_MS:g} ms of in-process: "
          f"{'met' if abs(d50) <= TTFA_TARGET_MS else 'NOT met'}")
    stage_table([row for r in done for row in r.local_stages],
                [row for r in done for row in r.socket_stages])


SCRIPTS = {"router": "continuation: true\nsteps: [{reply: question, repeat: true}]\n",
           "speaker": ("continuation: true\nchunk: 4\nsteps: [{reply: 'Here is a short answer "
                       "for you, with a clause or two in it. It ends with a second sentence.', "
                       "repeat: true}]\n")}


def framework_layout(folder: Path) -> Layout:
    """The voice team with scripted models (every delta at once) in ``folder``: what is
    left of the time to first audio is the framework's path (and Piper), so a wait of the
    served runtime's machinery (the turn gate, a commit) stands out from the model's noise."""
    folder.mkdir(parents=True, exist_ok=True)
    team = (VOICE.path / "terrarium.yaml").read_text()
    for name, script in SCRIPTS.items():
        (folder / f"{name}.yaml").write_text(script)
        team = team.replace(
            f'config: "@terrarium/creatures/{name}"',
            f'base_config: "@terrarium/creatures/{name}"\n      controller: '
            f'{{provider: scripted, llama_cpp: true, grammar: true, '
            f'script: {folder / (name + ".yaml")}}}')
    (folder / "terrarium.yaml").write_text(team)
    return dataclasses.replace(VOICE, path=folder)


def socket_main(n: int, warmup: int, rounds: int, verbose: bool,
                framework: bool = False) -> None:
    texts = [UTTERANCES[i % len(UTTERANCES)] for i in range(n + warmup)]
    print(f"{n} utterances after {warmup} warm-up, {rounds} round(s), each round in one "
          "process and over the audio socket of `terrarium serve`, in turn first"
          + (" (scripted models)" if framework else ""), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        layout = framework_layout(Path(tmp)) if framework else VOICE
        report(anyio.run(compare, layout, texts, warmup, rounds, verbose))
