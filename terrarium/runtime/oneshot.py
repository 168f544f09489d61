"""``terrarium.run``: load a team, give it some user input, wait until it is quiet, report.

The shortest way in from Python, for scripts and notebooks. Anything longer-lived (a chat
loop, a monitor, barge-in) uses :class:`~terrarium.runtime.runtime.TeamRuntime` directly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from terrarium.config import Team, load_any
from terrarium.controller.loop import TurnResult
from terrarium.errors import TerrariumError
from terrarium.runtime.options import RuntimeOptions
from terrarium.runtime.runtime import TeamRuntime

__all__ = ["RunReport", "run"]


@dataclass(slots=True)
class RunReport:
    """What a finished :func:`run` did: its id, where its log is, and every turn's result."""

    run_id: str
    log_path: Path | None
    turns: list[tuple[str, TurnResult]] = field(default_factory=list)

    def replies(self, creature: str) -> list[str]:
        """The text of each of ``creature``'s turns, in order (empty turns left out)."""
        return [r.text for name, r in self.turns if name == creature and r.text]


async def run(
    team: Team | str | Path,
    inputs: Iterable[str] = (),
    *,
    options: RuntimeOptions | None = None,
) -> RunReport:
    """Run ``team`` (a loaded Team, or a path to a terrarium or creature folder).

    Each input goes to the team's input channel (a one-creature team gets it directly), and
    the next one is sent once the team has gone quiet, as ``terrarium run --input`` does.
    """
    if not isinstance(team, Team):
        loaded = load_any(Path(team))
        if not isinstance(loaded, Team):
            raise TerrariumError(f"{team} is a package; run one of its terrariums or creatures")
        team = loaded
    single = not team.channels and len(team.creatures) == 1
    async with TeamRuntime(team, options) as rt:
        for text in inputs:
            if single:
                await rt.ask(next(iter(team.creatures)), text)
            else:
                await rt.send_user(text)
            await rt.wait_idle()
        return RunReport(rt.run_id, rt.log_path, list(rt.results))
