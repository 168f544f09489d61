"""Record one scripted run of the demo team, and a frozen TeamHandle over the result.

Snapshot tests run the app in their own event loop, so they cannot share a live runtime;
they get a FrozenHandle (the live run's final views, its log, a bus to replay events on).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
from pydantic import ValidationError

from terrarium.channels.bus import EventBus
from terrarium.channels.payload import describe_validation_error
from terrarium.config import Team, load_team
from terrarium.errors import ChannelRefusal
from terrarium.events import Event, TranscriptEntry
from terrarium.prompt.built import BuiltPrompt
from terrarium.runtime.api import CreatureStatus
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

TEAM_DIR = Path(__file__).parent / "team"
FIXED_NOW = datetime(2025, 1, 1, 12, 0)


@dataclass
class Recording:
    team: Team
    run_id: str
    log_path: Path
    statuses: dict[str, CreatureStatus]
    transcripts: dict[str, list[TranscriptEntry]]
    prompts: dict[str, BuiltPrompt | None]
    events: list[Event]


def record(runs_dir: Path, team_dir: Path = TEAM_DIR) -> Recording:
    """Run the demo team on its scripts: a greeting, a composed note, a refused note."""

    async def main() -> Recording:
        team = load_team(team_dir)
        seen: list[Event] = []
        opts = RuntimeOptions(runs_dir=runs_dir, audio="none", clock=lambda: FIXED_NOW,
                              on_event=seen.append)
        async with TeamRuntime(team, opts) as rt:
            await rt.send_user("hello there")
            await rt.wait_idle()
            await rt.send("notes", {"topic": "lunch", "priority": 2})
            await rt.wait_idle()
            try:
                await rt.send("notes", {"topic": "no priority"})
            except ChannelRefusal:
                pass
            await anyio.sleep(0.1)  # the event recorder writes in batches
            assert rt.log_path is not None
            return Recording(
                team,
                rt.run_id,
                rt.log_path,
                {n: copy.copy(s) for n, s in rt.statuses.items()},
                {n: list(rt.transcript(n)) for n in team.creatures},
                {n: rt.prompt(n) for n in team.creatures},
                seen,
            )

    return anyio.run(main)


@dataclass
class FrozenHandle:
    """A TeamHandle frozen at the end of a recorded run; sends are kept, not delivered."""

    rec: Recording
    bus: EventBus = field(default_factory=EventBus)
    sent: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.team = self.rec.team
        self.run_id = self.rec.run_id
        self.log_path: Path | None = self.rec.log_path

    @property
    def statuses(self) -> Mapping[str, CreatureStatus]:
        return self.rec.statuses

    def transcript(self, creature: str) -> Sequence[TranscriptEntry]:
        return tuple(self.rec.transcripts.get(creature, ()))

    def prompt(self, creature: str) -> BuiltPrompt | None:
        return self.rec.prompts.get(creature)

    def check_payload(self, channel: str, payload: Mapping[str, Any]) -> str | None:
        ch = self.team.channels.get(channel)
        if ch is None:
            return f"There is no channel {channel!r}."
        if ch.message_type is None:
            return None
        try:
            ch.message_type.model.model_validate(dict(payload))
        except ValidationError as exc:
            return f"The payload does not match: {describe_validation_error(exc)}."
        return None

    async def send_user(self, text: str) -> None:
        await self.send(self.team.input_channel or "", {"text": text})

    async def send(self, channel: str, payload: Mapping[str, Any]) -> None:
        reason = self.check_payload(channel, payload)
        if reason:
            raise ChannelRefusal(reason)
        self.sent.append((channel, dict(payload)))

    def replay_events(self) -> None:
        for e in self.rec.events:
            self.bus.publish(e)
