"""The team's start as one line of the monitor's notice bar, folded from start-up events."""

from __future__ import annotations

from collections.abc import Callable

from terrarium.events import (
    CreatureWarmed,
    CreatureWarming,
    Event,
    ModelLoaded,
    ModelLoading,
    PrefixProgress,
    TeamReady,
)


class StartProgress:
    """The team's start as one line for the notice bar: what is loading or warming, for
    how long, until the team is ready (then how long it took)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.began = clock()
        self.steps: dict[str, tuple[str, float]] = {}
        self.ready: float | None = None

    def feed(self, events: list[Event]) -> bool:
        """Fold start-up events; True when the line changed."""
        changed = False
        now = self.clock()
        for e in events:
            if isinstance(e, ModelLoading):
                self.steps["model"] = (f"loading model {e.model}", now)
            elif isinstance(e, ModelLoaded):
                self.steps.pop("model", None)
            elif isinstance(e, CreatureWarming):
                size = f" (prefix ~{e.prefix_tokens:,} tokens)" if e.prefix_tokens else ""
                self.steps[f"warm:{e.creature}"] = (f"warming {e.creature}{size}", now)
            elif isinstance(e, PrefixProgress):
                since = self.steps.get(f"warm:{e.creature}", ("", now))[1]
                self.steps[f"warm:{e.creature}"] = (
                    f"warming {e.creature} (prefix {e.done:,}/{e.total:,} tokens)", since)
            elif isinstance(e, CreatureWarmed):
                self.steps.pop(f"warm:{e.creature}", None)
            elif isinstance(e, TeamReady):
                self.steps.clear()
                self.ready = e.seconds
            else:
                continue
            changed = True
        return changed

    def line(self) -> str:
        if self.ready is not None:
            return f"ready in {self.ready:.1f} s"
        now = self.clock()
        doing = "; ".join(f"{what}: {now - since:.0f} s" for what, since in
                          self.steps.values()) or "starting the team"
        return f"{doing} ... ({now - self.began:.0f} s since start)"


__all__ = ["StartProgress"]
