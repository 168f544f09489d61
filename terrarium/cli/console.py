"""What ``terrarium run`` prints while a team works: streamed outputs, audio, problems.

Runs as a bus subscriber, so a slow terminal never slows the team (it is told what it
missed instead). Start-up progress (model loading, creatures warming, ready) comes before
that subscriber exists, so :meth:`ConsolePrinter.progress` is handed to the run as its
``on_event`` instead.
"""

from __future__ import annotations

import sys
from typing import TextIO

from terrarium.channels.bus import EventBus
from terrarium.events import (
    ApprovalDecided,
    CreatureState,
    CreatureWarmed,
    CreatureWarming,
    ErrorEvent,
    Event,
    MessageRefused,
    MessageSent,
    Missed,
    ModelLoaded,
    ModelLoading,
    OutputText,
    PrefixCacheProblem,
    PrefixRestored,
    Restart,
    SpeechCut,
    TeamReady,
    TranscriptAppended,
    UtteranceWritten,
)


class ConsolePrinter:
    """Formats events as short lines; streamed text is printed as it arrives."""

    def __init__(
        self, out: TextIO | None = None, *, verbose: bool = False,
        printed_elsewhere: frozenset[tuple[str, str]] = frozenset(),
        replies_of: frozenset[str] = frozenset(),
    ) -> None:
        self.out = out or sys.stdout
        self.verbose = verbose
        self.skip = printed_elsewhere  # (creature, output) pairs a stdout sink already prints
        self.replies_of = replies_of  # creatures whose replies no output shows (the root)
        self._open: tuple[str, str] | None = None

    def _line(self, text: str) -> None:
        if self._open is not None:
            self.out.write("\n")
            self._open = None
        self.out.write(text + "\n")
        self.out.flush()

    def handle(self, ev: Event) -> None:
        if isinstance(ev, OutputText):
            if (ev.creature, ev.output) in self.skip:
                return
            key = (ev.creature, ev.output)
            if self._open != key:
                if self._open is not None:
                    self.out.write("\n")
                self.out.write(f"{ev.creature} ({ev.output})> ")
                self._open = key
            self.out.write(ev.text)
            self.out.flush()
        elif (isinstance(ev, TranscriptAppended) and ev.creature in self.replies_of
              and ev.entry.kind == "assistant"):
            self._line(f"{ev.creature}> {ev.entry.text.strip()}")
        elif isinstance(ev, UtteranceWritten):
            self._line(_audio_line(ev))
        elif isinstance(ev, SpeechCut):
            self._line(f"  [barge-in] {ev.creature} stopped; {len(ev.cut_text)} sentence(s) cut")
        elif isinstance(ev, MessageRefused) and ev.sender != "user":  # run says those itself
            self._line(f"  [refused] {ev.sender} -> {ev.channel}: {ev.reason}")
        elif isinstance(ev, ErrorEvent):
            self._line(f"  [error] {ev.creature}: {ev.message}")
        elif isinstance(ev, Restart):
            self._line(f"  [restart] {ev.creature} attempt {ev.attempt} in {ev.delay:.1f} s")
        elif isinstance(ev, CreatureState) and ev.state == "failed":
            self._line(f"  [failed] {ev.creature} gave up (the reason is above)")
        elif isinstance(ev, ApprovalDecided) and ev.by in ("nobody", "--yes"):
            # the terminal prompt shows its own decisions; these were taken without one
            word = "approved (--yes)" if ev.approved else f"refused: {ev.reason}"
            self._line(f"  [approval] {ev.creature} -> {ev.tool}: {word}")
        elif isinstance(ev, Missed):
            self._line(f"  [console] {ev.count} events not shown (terminal too slow)")
        elif self.verbose and isinstance(ev, MessageSent):
            self._line(f"  [{ev.channel}] {ev.sender} -> {', '.join(ev.delivered_to)}")

    def progress(self, ev: Event) -> None:
        """Start-up lines: so the seconds before the first word are not silent."""
        if isinstance(ev, ModelLoading):
            self._line(f"loading model {ev.model} ({ev.slots} slot{'s' * (ev.slots != 1)})...")
        elif isinstance(ev, ModelLoaded):
            self._line(f"model loaded in {ev.seconds:.1f} s")
        elif isinstance(ev, CreatureWarming):
            self._line(f"warming {ev.creature}...")
        elif isinstance(ev, PrefixRestored):
            self._line(f"  {ev.creature}: prompt prefix restored from cache "
                       f"({ev.tokens} tokens in {ev.ms:.0f} ms)")
        elif isinstance(ev, PrefixCacheProblem):
            self._line(f"  [cache] {ev.creature}: {ev.problem}")
        elif isinstance(ev, CreatureWarmed):
            how = {"restored": "prefix from cache", "none": "nothing to evaluate",
                   "evaluated": f"prefix evaluated, {ev.tokens} tokens"
                                + (", saved for the next start" if ev.saved else "")}[ev.prefix]
            self._line(f"  {ev.creature} warm in {ev.seconds:.1f} s ({how})")
        elif isinstance(ev, TeamReady):
            self._line(f"ready in {ev.seconds:.1f} s")

    async def run(self, bus: EventBus) -> None:
        with bus.subscribe(capacity=4096) as sub:
            async for ev in sub:
                self.handle(ev)


def _audio_line(ev: UtteranceWritten) -> str:
    m = ev.metrics

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v * 1000:.0f} ms"

    rtf = m.real_time_factor or 0.0
    cut = " (cut)" if ev.aborted else ""
    return (f"  [audio] {ev.path} {ev.duration:.2f} s{cut} | first token "
            f"{ms(m.time_to_first_token)}, first sentence {ms(m.time_to_first_sentence)}, "
            f"first audio {ms(m.time_to_first_audio)}, synthesis RTF {rtf:.3f}")


__all__ = [
    "ConsolePrinter",
]
