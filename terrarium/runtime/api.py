"""What a running team exposes to watchers (the TUI, tests, a root creature).

The monitor reads these views and events and calls these methods; it never reaches into
the runtime's internals, and the runtime never waits for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from terrarium.channels.bus import EventBus
from terrarium.config import Team
from terrarium.events import CreatureStateName, TranscriptEntry
from terrarium.prompt.built_prompt import BuiltPrompt


@dataclass(slots=True)
class CreatureStatus:
    """Live numbers for one creature (mutated by the runtime, read by watchers)."""

    name: str
    model: str
    state: CreatureStateName = "idle"
    turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cached_tokens: int = 0
    restarts: int = 0
    last_error: str | None = None

    @property
    def cached_ratio(self) -> float:
        return self.cached_tokens / self.tokens_in if self.tokens_in else 0.0


class TeamHandle(Protocol):
    """The watcher-facing surface of a running (or replayed) team."""

    team: Team
    run_id: str
    bus: EventBus
    log_path: Path | None

    @property
    def statuses(self) -> Mapping[str, CreatureStatus]: ...

    def transcript(self, creature: str) -> Sequence[TranscriptEntry]: ...

    def prompt(self, creature: str) -> BuiltPrompt | None:
        """The prompt the creature was last given (None before its first turn)."""
        ...

    def check_payload(self, channel: str, payload: Mapping[str, Any]) -> str | None:
        """Why ``payload`` would be refused on ``channel`` as the user, or None if it is fine."""
        ...

    async def send_user(self, text: str) -> None:
        """Send ``text`` as the user to the team's input channel (barge-in included)."""
        ...

    async def send(self, channel: str, payload: Mapping[str, Any]) -> None:
        """Send a typed message as the user; raises ChannelRefusal with the reason."""
        ...


__all__ = [
    "CreatureStatus",
    "TeamHandle",
]
