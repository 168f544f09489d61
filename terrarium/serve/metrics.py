"""Prometheus text for ``GET /metrics``: turns, tokens, cached ratio, time to first audio,
inbox depths, sessions. Counted from the sessions' events as they are published (the
``SessionEvents`` listeners), and read from the loaded runtimes when scraped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from terrarium.events import Event, TurnEnded, UtteranceWritten

if TYPE_CHECKING:
    from terrarium.serve.manager import SessionManager

__all__ = ["ServeMetrics"]


class _Live(Collector):
    """What is true at scrape time: sessions, inbox depths, the cached ratio."""

    def __init__(self, metrics: ServeMetrics) -> None:
        self.m = metrics

    def collect(self) -> Iterator[GaugeMetricFamily]:
        mgr = self.m.manager
        if mgr is None:
            return
        loaded = GaugeMetricFamily("terrarium_sessions_loaded", "Sessions loaded in memory.")
        loaded.add_metric([], len(mgr.loaded))
        yield loaded
        stored = GaugeMetricFamily("terrarium_sessions_stored", "Sessions in the log.")
        stored.add_metric([], mgr.store.count())
        yield stored
        depth = GaugeMetricFamily("terrarium_inbox_depth",
                                  "Unread messages per creature over loaded sessions.",
                                  labels=["creature"])
        totals: dict[str, int] = dict.fromkeys(mgr.team.creatures, 0)
        for live in list(mgr.loaded.values()):
            rt = live.rt
            if rt is None or rt.hub is None:
                continue
            for name in totals:
                if mgr.team.creatures[name].listen:
                    totals[name] += rt.hub.subscribe(name).pending()
        for name, n in sorted(totals.items()):
            depth.add_metric([name], n)
        yield depth
        ratio = GaugeMetricFamily("terrarium_cached_ratio",
                                  "Cached prompt tokens / prompt tokens, since start.")
        ratio.add_metric([], self.m.cached / self.m.prompt if self.m.prompt else 0.0)
        yield ratio


class ServeMetrics:
    """One registry per app (tests make many apps in one process)."""

    OBSERVES = (TurnEnded, UtteranceWritten)  # what ``observe`` looks at (SessionEvents)

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.manager: SessionManager | None = None
        self.prompt = 0
        self.cached = 0
        self.turns = Counter("terrarium_turns", "Creature turns finished.", ["creature"],
                             registry=self.registry)
        self.tokens = Counter("terrarium_tokens", "Model tokens.", ["kind"],
                              registry=self.registry)
        self.first_audio = Histogram(
            "terrarium_time_to_first_audio_seconds", "From a reply's start to its first audio.",
            buckets=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0), registry=self.registry)
        self.inputs = Counter("terrarium_inputs", "Inputs accepted.", registry=self.registry)
        self._children: dict[str, tuple[Any, ...]] = {}  # creature -> its turn counters
        # creature -> [turns, prompt, cached, completion] counted since the last scrape: a
        # turn adds plain ints (four counter increments, each under a lock, were a tenth of
        # a served turn's accounting); ``render`` adds them to the counters first
        self._pending: dict[str, list[int]] = {}
        self.registry.register(_Live(self))

    def observe(self, seq: int, ev: Event) -> None:
        """A ``SessionEvents`` listener: count what matters as it is published."""
        if isinstance(ev, TurnEnded):
            pending = self._pending.get(ev.creature)
            if pending is None:
                if ev.creature not in self._children:  # (its counters made at its first turn)
                    self._children[ev.creature] = (
                        self.turns.labels(ev.creature), *(self.tokens.labels(k) for k in (
                            "prompt", "cached", "completion")))
                pending = self._pending[ev.creature] = [0, 0, 0, 0]
            pending[0] += 1
            pending[1] += ev.prompt_tokens
            pending[2] += ev.cached_tokens
            pending[3] += ev.completion_tokens
            self.prompt += ev.prompt_tokens
            self.cached += ev.cached_tokens
        elif isinstance(ev, UtteranceWritten) and ev.metrics.time_to_first_audio is not None:
            # from the reply's start (the model's first token) to its first audio
            self.first_audio.observe(ev.metrics.time_to_first_audio)

    def render(self) -> bytes:
        self.flush()
        return generate_latest(self.registry)

    def flush(self) -> None:
        """Add the turns and tokens counted since the last scrape to the counters."""
        pending, self._pending = self._pending, {}
        for creature, counts in pending.items():
            for counter, n in zip(self._children[creature], counts, strict=True):
                counter.inc(n)
