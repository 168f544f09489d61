"""A recorded run, replayed read-only from the durable log as a TeamHandle.

``terrarium monitor RUN_ID`` shows a finished (or still running) run with the same panels
as a live one. The log gives the run's events back typed (``DurableLog.typed_events``);
statuses, transcripts, prompt maps and channel traffic are rebuilt by folding them up to a
cursor, reading their fields, so the monitor can step through the run like a time slider.
Sub-agent runs and background jobs are not creatures here: the monitor folds them from the
same events (``tui/delegation.py``) and shows them nested under their creature.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from terrarium import events as ev
from terrarium.channels.bus import EventBus
from terrarium.channels.log import DurableLog, RunInfo
from terrarium.config import Team, load_any
from terrarium.errors import ChannelRefusal, TerrariumError
from terrarium.events import TranscriptEntry
from terrarium.prompt.built_prompt import BuiltPrompt
from terrarium.runtime.api import CreatureStatus
from terrarium.tui.delegation import is_subagent_label
from terrarium.tui.text import PromptView, model_label

READ_ONLY = "This is a replay of a recorded run, so nothing can be sent."


def _empty_team(run: RunInfo) -> Team:
    return Team(run.terrarium, Path(run.path or "."), {}, {})


def load_recorded_team(run: RunInfo) -> tuple[Team, str | None]:
    """The team at the run's recorded path, or an empty stand-in and the reason why."""
    if not run.path:
        return _empty_team(run), "The run did not record its terrarium path."
    try:
        loaded = load_any(Path(run.path))
    except TerrariumError as exc:
        first = exc.render().splitlines()[0]
        return _empty_team(run), f"The terrarium at {run.path} no longer loads: {first}"
    if not isinstance(loaded, Team):
        return _empty_team(run), f"{run.path} is a package, not one terrarium."
    return loaded, None


class FoldedRun:
    """Creature statuses, transcripts and prompt maps folded from a run's events.

    The replay folds the log's events up to its cursor; the live monitor of a distributed
    run folds them as the broker hands them over. A creature an event names that the team
    does not (the stand-in team of a run whose files are gone) is added on first sight.
    """

    def __init__(self, team: Team, names: Sequence[str] = ()) -> None:
        self.team = team
        self.statuses: dict[str, CreatureStatus] = {}
        self.transcripts: dict[str, list[TranscriptEntry]] = {}
        self.prompts: dict[str, PromptView] = {}
        for n in sorted({*team.creatures, *names}):
            self.add(n)

    def add(self, name: str) -> None:
        if name not in self.statuses:
            model = model_label(self.team, name) if name in self.team.creatures else "?"
            self.statuses[name] = CreatureStatus(name, model)
            self.transcripts.setdefault(name, [])

    def fold(self, e: ev.Event) -> None:
        creature = getattr(e, "creature", None)
        st = self.statuses.get(creature) if isinstance(creature, str) else None
        if isinstance(e, ev.CreatureState) and st is not None:
            st.state = e.state
        elif isinstance(e, ev.TurnEnded) and st is not None:
            st.turns += 1
            st.tokens_in += e.prompt_tokens
            st.tokens_out += e.completion_tokens
            st.cached_tokens += e.cached_tokens
            if e.error:
                st.last_error = e.error
        elif isinstance(e, ev.Restart) and st is not None:
            st.restarts += 1
            st.state = "restarting"
        elif isinstance(e, ev.ErrorEvent) and st is not None:
            st.last_error = e.message
        elif isinstance(e, ev.TranscriptAppended):
            self.transcripts.setdefault(e.creature, []).append(e.entry)
        elif isinstance(e, ev.PromptBuilt):
            self.prompts[e.creature] = PromptView.from_event(e)


class FoldedHandle:
    """The read-only ``TeamHandle`` part a replay and a followed run share: everything is
    read from ``_run`` (a :class:`FoldedRun`) and every send is refused with ``refusal``."""

    _run: FoldedRun
    refusal: str = READ_ONLY

    @property
    def statuses(self) -> Mapping[str, CreatureStatus]:
        return self._run.statuses

    def transcript(self, creature: str) -> Sequence[TranscriptEntry]:
        return tuple(self._run.transcripts.get(creature, ()))

    def prompt(self, creature: str) -> BuiltPrompt | None:
        """No live prompt object is at hand; see ``prompt_view`` for the logged map."""
        return None

    def prompt_view(self, creature: str) -> PromptView | None:
        return self._run.prompts.get(creature)

    def check_payload(self, channel: str, payload: Mapping[str, Any]) -> str | None:
        return self.refusal

    async def send_user(self, text: str) -> None:
        raise ChannelRefusal(self.refusal)

    async def send(self, channel: str, payload: Mapping[str, Any]) -> None:
        raise ChannelRefusal(self.refusal)


class ReplayHandle(FoldedHandle):
    """TeamHandle over a recorded run; ``seek``/``step`` move the cursor through its events."""

    def __init__(self, log_path: Path | str, run_id: str, *, team: Team | None = None) -> None:
        self.log_path: Path | None = Path(log_path)
        self.run_id = run_id
        self.bus = EventBus()
        with DurableLog(self.log_path) as log:
            self.run = log.run(run_id)
            events = log.typed_events(run_id)
            messages = log.messages(run_id)
            refusals = log.refusals(run_id)
        self.team_note: str | None = None
        if team is None:
            team, self.team_note = load_recorded_team(self.run)
        self.team = team
        self.payloads: dict[str, dict[str, Any]] = {env.id: env.payload for env, _ in messages}
        if not any(isinstance(e, ev.MessageSent) for e in events):
            events += [ev.MessageSent(ts=env.ts, message_id=env.id, channel=env.channel,
                                      sender=env.sender, delivered_to=tuple(rcv))
                       for env, rcv in messages]
        if not any(isinstance(e, ev.MessageRefused) for e in events):
            events += [ev.MessageRefused(ts=r.ts, sender=r.sender, channel=r.channel,
                                         reason=r.reason) for r in refusals]
        events.sort(key=lambda e: e.ts)  # stable: same-time events keep their log order
        self.events: tuple[ev.Event, ...] = tuple(events)
        names = set(team.creatures)
        for e in self.events:
            creature = getattr(e, "creature", None)
            if isinstance(creature, str) and not is_subagent_label(creature):
                names.add(creature)  # sub-agents nest under theirs (MonitorState.work)
        self._names = sorted(names)
        self.position = 0
        self._reset()
        self.seek(len(self.events))

    # -- cursor ------------------------------------------------------------------------

    @property
    def total(self) -> int:
        return len(self.events)

    def _reset(self) -> None:
        self._run = FoldedRun(self.team, self._names)
        self.position = 0

    def seek(self, position: int) -> int:
        """Show the run as it was after ``position`` events; returns the clamped position."""
        position = max(0, min(position, self.total))
        if position < self.position:
            self._reset()
        for e in self.events[self.position:position]:
            self._fold(e)
        self.position = position
        return position

    def step(self, delta: int) -> int:
        return self.seek(self.position + delta)

    def applied(self) -> Sequence[ev.Event]:
        """The events up to the cursor, in order (the monitor folds them again for traffic)."""
        return self.events[: self.position]

    @property
    def elapsed(self) -> float:
        """Seconds from the run's start to the event under the cursor."""
        if not self.position:
            return 0.0
        return max(self.events[self.position - 1].ts - self.run.started, 0.0)

    def _fold(self, e: ev.Event) -> None:
        self._run.fold(e)


__all__ = [
    "READ_ONLY",
    "FoldedHandle",
    "FoldedRun",
    "ReplayHandle",
    "load_recorded_team",
]
