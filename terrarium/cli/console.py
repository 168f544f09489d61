"""What ``terrarium run`` prints while a team works: streamed outputs, audio, problems.

Runs as a bus subscriber, so a slow terminal never slows the team (it is told what it
missed instead). Start-up progress (model loading, creatures warming, ready) comes before
that subscriber exists, so :meth:`ConsolePrinter.progress` is handed to the run as its
``on_event`` instead; while a start-up step takes longer than a second, a ticker thread
prints a line with its elapsed time at least every :data:`TICK` seconds, so a long first
start is never a frozen screen.

Every problem (a refusal, an invalid call, a dropped or empty output, a tool error, a
give-up) is one line (``cli/problems.py``) and counts in the closing summary. A creature's
``stdout`` output writes to the terminal itself (through :meth:`ConsolePrinter.sink_stream`);
while such a line is open, the console's own lines wait for it to end, so nothing is glued.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any, TextIO

import anyio

from terrarium.channels.bus import EventBus, EventSubscription
from terrarium.cli.problems import Problem, ProblemTracker
from terrarium.events import (
    ApprovalDecided,
    ApprovalRequested,
    CreatureWarmed,
    CreatureWarming,
    Event,
    JobEnded,
    JobStarted,
    McpStarted,
    McpStarting,
    MessageSent,
    ModelLoaded,
    ModelLoading,
    ModelRetry,
    OutputText,
    PrefixCacheProblem,
    PrefixProgress,
    PrefixRestored,
    Restart,
    SpeechCut,
    SubagentEnded,
    SubagentStarted,
    TeamReady,
    TranscriptAppended,
    UtteranceWritten,
)

__all__ = ["TICK", "ConsolePrinter", "payload_lines"]

TICK = 1.5
"""Seconds between progress lines while a start-up step runs (the promise: under 2 s)."""
_QUIET = 1.0  # a step shorter than this gets no progress line at all


class _SinkStream:
    """The text stream a creature's ``stdout`` output writes to: the console's own, with
    the console told whether a line is open (its lines wait until that line ends). Blank
    lines between a reply's rounds are left out, and a reply that goes on after console
    lines were printed in its middle starts its next line with its prefix again."""

    def __init__(self, printer: ConsolePrinter) -> None:
        self._p = printer
        self._prefix = ""  # the current utterance's `name> ` (PrintOutput writes it alone)
        self._col0 = True

    def write(self, text: str) -> int:
        p = self._p
        p.catch_up()  # what happened before this text is told before it
        with p._lock:
            if p._open is not None:  # a streamed output of the console's own is open
                p.out.write("\n")
                p._open = None
            if self._col0 and text.endswith("> ") and "\n" not in text:
                self._prefix = text  # an utterance begins
                p.out.write(text)
                self._col0 = False
            else:
                pieces = text.split("\n")
                for i, piece in enumerate(pieces):
                    if piece:
                        if self._col0:
                            p.out.write(self._prefix)
                            self._col0 = False
                        p.out.write(piece)
                    if i < len(pieces) - 1 and not self._col0:
                        p.out.write("\n")
                        self._col0 = True
            p._sink_open = not self._col0
            if self._col0:
                p._flush_waiting()
            p.out.flush()
        return len(text)

    def flush(self) -> None:
        self._p.out.flush()


class ConsolePrinter:
    """Formats events as short lines; streamed text is printed as it arrives."""

    def __init__(
        self, out: TextIO | None = None, *, verbose: bool = False,
        printed_elsewhere: frozenset[tuple[str, str]] = frozenset(),
        replies_of: frozenset[str] = frozenset(),
        clock: Any = time.monotonic,
    ) -> None:
        self.out = out or sys.stdout
        self.verbose = verbose
        self.skip = printed_elsewhere  # (creature, output) pairs a stdout sink already prints
        self.replies_of = replies_of  # creatures whose replies no output shows (the root)
        self.problems = ProblemTracker()
        self.ready = threading.Event()  # set at TeamReady: the `you>` prompt may show
        self._said_ready = False
        self._open: tuple[str, str] | None = None
        self._sink_open = False
        self._waiting: list[str] = []
        self._lock = threading.RLock()
        self._clock = clock
        self._started = clock()
        self._steps: dict[str, tuple[str, float]] = {}  # key -> (what, since)
        self._sends: dict[tuple[str, str], Mapping[str, Any]] = {}  # last send args (-v)
        self._approvals: dict[str, Mapping[str, Any]] = {}
        self._sub: EventSubscription | None = None
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    # ------------------------------------------------------------------ writing
    def sink_stream(self) -> _SinkStream:
        """The stream to give the runtime's ``stdout`` outputs (``RuntimeOptions.stdout``)."""
        return _SinkStream(self)

    def say(self, text: str) -> None:
        """A line of ``run``'s own, in order with the event lines."""
        self._line(text)

    def tell(self, problem: Problem) -> None:
        """A problem ``run`` met itself (its input refused), already counted: its line."""
        self._line(problem.line())

    def _line(self, text: str) -> None:
        with self._lock:
            if self._sink_open:  # a creature's stdout line is open: this waits for its end
                self._waiting.append(text)
                return
            if self._open is not None:
                self.out.write("\n")
                self._open = None
            self.out.write(text + "\n")
            self.out.flush()

    def _flush_waiting(self) -> None:
        waiting, self._waiting = self._waiting, []
        for text in waiting:
            self.out.write(text + "\n")
        self.out.flush()

    def close(self) -> None:
        """The run is over: tell what is left, stop the ticker, end an open line, print
        what waited."""
        self.catch_up()  # the ticker goes on: prefixes may still be warming (stop_ticker)
        with self._lock:
            if self._sink_open or self._open is not None:
                self.out.write("\n")
            self._sink_open = False
            self._open = None
            self._flush_waiting()

    # ------------------------------------------------------------------ events
    def handle(self, ev: Event) -> None:
        if isinstance(ev, OutputText):
            if (ev.creature, ev.output) in self.skip:
                return
            key = (ev.creature, ev.output)
            with self._lock:
                if self._open != key:
                    if self._open is not None:
                        self.out.write("\n")
                    self.out.write(f"{ev.creature} ({ev.output})> ")
                    self._open = key
                self.out.write(ev.text)
                self.out.flush()
            return
        if isinstance(ev, ApprovalRequested):
            self._approvals[ev.request_id] = ev.args
            return
        if isinstance(ev, ApprovalDecided):
            self.problems.feed(ev)  # counted; told here with the call it was about
            args = self._approvals.pop(ev.request_id, {})
            if ev.by in ("nobody", "--yes"):
                # the terminal prompt shows its own decisions; these were taken without one
                word = "approved (--yes)" if ev.approved else f"refused: {ev.reason}"
                shown = _call_text(ev.tool, args)
                self._line(f"  [approval] {ev.creature} -> {ev.tool}: {word}"
                           + (f": {shown}" if shown else ""))
            return
        if isinstance(ev, TeamReady):  # also heard here, should on_event not have told it
            self.ready.set()
            return
        problem = self.problems.feed(ev)
        if problem is not None:
            self._line(problem.line())
            return
        if isinstance(ev, TranscriptAppended):
            e = ev.entry
            if ev.creature in self.replies_of and e.kind == "assistant":
                self._line(f"{ev.creature}> {e.text.strip()}")
            elif self.verbose and e.kind == "tool_call" and e.name and e.name.startswith("send_"):
                self._sends[(ev.creature, e.name.removeprefix("send_"))] = e.data.get("args", {})
        elif isinstance(ev, UtteranceWritten):
            self._line(_audio_line(ev))
        elif isinstance(ev, SpeechCut):
            self._line(f"  [barge-in] {ev.creature} stopped; {len(ev.cut_text)} sentence(s) cut")
        elif isinstance(ev, ModelRetry):
            self._line(f"  [retry] {ev.creature or 'model'}: attempt {ev.attempt} failed "
                       f"({ev.reason}); trying {ev.url} again in {ev.delay:.1f} s")
        elif isinstance(ev, Restart):
            self._line(f"  [restart] {ev.creature} attempt {ev.attempt} in {ev.delay:.1f} s")
        elif self.verbose:
            self._verbose(ev)

    def _verbose(self, ev: Event) -> None:
        """``-v``: channel traffic with each payload on its own indented lines."""
        if isinstance(ev, MessageSent):
            payload = ev.payload or self._sends.pop((ev.sender, ev.channel), {})
            self._line(f"  [{ev.channel}] {ev.sender} -> {', '.join(ev.delivered_to) or '-'}")
            for line in payload_lines(payload):
                self._line(f"      {line}")
        elif isinstance(ev, SubagentStarted):
            self._line(f"  [sub-agent] {ev.creature} -> {ev.subagent}: {_short(ev.task)}")
        elif isinstance(ev, SubagentEnded):
            self._line(f"  [sub-agent] {ev.subagent} -> {ev.creature}: done in "
                       f"{ev.rounds} round(s): {_short(ev.result)}")
        elif isinstance(ev, JobStarted):
            self._line(f"  [job] {ev.creature} started {ev.job_id}: {_call_text(ev.call, ev.args)}")
        elif isinstance(ev, JobEnded):
            self._line(f"  [job] {ev.job_id} of {ev.creature} {ev.status}: {_short(ev.result)}")

    # ------------------------------------------------------------------ start-up
    def progress(self, ev: Event) -> None:
        """Start-up lines: so the seconds before the first word are not silent."""
        now = self._clock()
        if isinstance(ev, McpStarting):
            self._steps["mcp"] = (f"starting MCP servers {', '.join(ev.servers)}", now)
            self._line(f"starting MCP servers {', '.join(ev.servers)}...")
        elif isinstance(ev, McpStarted):
            self._steps.pop("mcp", None)
            self._line(f"MCP servers up in {ev.seconds:.1f} s")
        elif isinstance(ev, ModelLoading):
            self._steps["model"] = (f"loading model {ev.model}", now)
            self._line(f"loading model {ev.model} ({ev.slots} slot{'s' * (ev.slots != 1)})...")
        elif isinstance(ev, ModelLoaded):
            self._steps.pop("model", None)
            self._line(f"model loaded in {ev.seconds:.1f} s")
        elif isinstance(ev, CreatureWarming):
            what = f"warming {ev.creature}"
            if ev.prefix_tokens:
                what += f": evaluating its prompt prefix (~{ev.prefix_tokens:,} tokens, estimated)"
            self._steps[f"warm:{ev.creature}"] = (what, now)
            self._line(f"warming {ev.creature}...")
        elif isinstance(ev, PrefixProgress):
            key = f"warm:{ev.creature}"
            since = self._steps.get(key, ("", now))[1]
            what = (f"warming {ev.creature}: prompt prefix {ev.done:,}/{ev.total:,} tokens "
                    "evaluated" if ev.done else
                    f"warming {ev.creature}: evaluating its prompt prefix ({ev.total:,} tokens)")
            self._steps[key] = (what, since)
        elif isinstance(ev, PrefixRestored):
            self._line(f"  {ev.creature}: prompt prefix restored from cache "
                       f"({ev.tokens} tokens in {ev.ms:.0f} ms)")
        elif isinstance(ev, PrefixCacheProblem):
            self._line(f"  [cache] {ev.creature}: {ev.problem}")
        elif isinstance(ev, CreatureWarmed):
            self._steps.pop(f"warm:{ev.creature}", None)
            how = {"restored": "prefix from cache", "none": "nothing to evaluate",
                   "evaluated": f"prefix evaluated, {ev.tokens} tokens"
                                + (", saved for the next start" if ev.saved else "")}[ev.prefix]
            self._line(f"  {ev.creature} warm in {ev.seconds:.1f} s ({how})")
        elif isinstance(ev, TeamReady) and not self._said_ready:
            self._said_ready = True  # a start may tell it twice (its warm-up, its start)
            # prefixes not in the cache are evaluated after this, while the team listens
            # (a creature's first turn waits for its own): their progress goes on
            self._steps = {k: v for k, v in self._steps.items() if k.startswith("warm:")}
            self._line(f"ready in {ev.seconds:.1f} s"
                       + ("; still warming " + ", ".join(k[5:] for k in self._steps)
                          + " (a first reply waits for it)" if self._steps else ""))
            self.ready.set()

    def start_ticker(self) -> None:
        """Print a progress line every :data:`TICK` s while a start-up step is running."""
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, daemon=True,
                                            name="console progress")
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(TICK):
            self.tick()

    def tick(self) -> None:
        """One progress line until the team is ready and warm: the elapsed time and each
        step that has run for over a second (model load, MCP servers, a creature's prefix
        evaluation with its size), or ``starting`` before ready when no step is named."""
        now = self._clock()
        steps = [(what, now - since) for what, since in list(self._steps.values())
                 if now - since >= _QUIET]
        if now - self._started < _QUIET or (self.ready.is_set() and not steps):
            return
        doing = "; ".join(f"{what} ({secs:.1f} s)" for what, secs in steps) or "starting"
        self._line(f"  ... {now - self._started:.1f} s: {doing}")

    def starting(self) -> str:
        """The start-up steps in progress, as a phrase (``loading model X; warming a``)."""
        return "; ".join(what for what, _ in list(self._steps.values()))

    def warming(self) -> list[str]:
        """The creatures whose prompt prefix is still being evaluated."""
        return [k[5:] for k in list(self._steps) if k.startswith("warm:")]

    def stop_ticker(self) -> None:
        self._stop.set()

    async def wait_ready(self, limit: float) -> None:
        """Until the team is ready (its start-up lines are out), at most ``limit`` s. The
        flag is a thread's event (tests feed :meth:`progress` outside any event loop)."""
        with anyio.move_on_after(limit):
            while not self.ready.is_set():  # noqa: ASYNC110
                await anyio.sleep(0.02)

    def catch_up(self) -> None:
        """Handle every event already published (in the event loop's thread only)."""
        if self._sub is not None:
            for ev in self._sub.drain():
                self.handle(ev)

    async def run(self, bus: EventBus) -> None:
        with bus.subscribe(capacity=4096) as sub:
            self._sub = sub
            try:
                async for ev in sub:
                    self.handle(ev)
            finally:
                self.catch_up()
                self._sub = None


def payload_lines(payload: Mapping[str, Any]) -> list[str]:
    """A message's fields as ``key: value`` lines (nested or long values as JSON)."""
    lines: list[str] = []
    for key, value in payload.items():
        if isinstance(value, str):
            text = value
        else:
            text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        parts = text.splitlines() or [""]
        lines.append(f"{key}: {parts[0]}")
        lines.extend(f"  {p}" for p in parts[1:])
    return lines


def _call_text(tool: str, args: Mapping[str, Any]) -> str:
    """What a call does, for a line: a shell command as itself, else the arguments."""
    if not args:
        return ""
    command = args.get("command")
    if isinstance(command, str) and len(args) <= 2:
        return _short(command)
    return _short(json.dumps(dict(args), ensure_ascii=False, sort_keys=True))


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _audio_line(ev: UtteranceWritten) -> str:
    m = ev.metrics

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v * 1000:.0f} ms"

    rtf = m.real_time_factor or 0.0
    cut = " (cut)" if ev.aborted else ""
    where = ev.path or "not written (--audio none)"
    return (f"  [audio] {where} {ev.duration:.2f} s{cut} | first token "
            f"{ms(m.time_to_first_token)}, first sentence {ms(m.time_to_first_sentence)}, "
            f"first audio {ms(m.time_to_first_audio)}, synthesis RTF {rtf:.3f}")
