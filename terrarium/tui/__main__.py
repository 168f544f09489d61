"""``python -m terrarium.tui PATH`` runs a team under the monitor; ``--replay LOG RUN_ID``
replays a recorded run. The ``terrarium`` CLI offers the same through ``run --tui`` and
``monitor``; this entry point exists so the monitor can be tried on its own."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from terrarium.config import Team, load_any
from terrarium.errors import TerrariumError
from terrarium.tui.launch import monitor_replay, run_team_with_monitor


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m terrarium.tui")
    ap.add_argument("path", nargs="?", help="terrarium or creature folder to run")
    ap.add_argument("--runs", default="runs", help="folder for the event log (default: runs)")
    ap.add_argument("--audio", default="none", help="wav | device | none (default: none)")
    ap.add_argument("--replay", nargs=2, metavar=("LOG", "RUN_ID"),
                    help="replay a recorded run from its event log instead")
    args = ap.parse_args(argv)
    try:
        if args.replay:
            return monitor_replay(Path(args.replay[0]), args.replay[1])
        if not args.path:
            ap.error("give a terrarium PATH or --replay LOG RUN_ID")
        team = load_any(Path(args.path))
        if not isinstance(team, Team):
            ap.error(f"{args.path} is a package; give one of its terrariums")
        from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
        from terrarium.tui.human import MonitorHuman

        human = MonitorHuman()
        opts = RuntimeOptions(runs_dir=Path(args.runs), audio=args.audio,
                              approver=human.approve, answerer=human.answer)
        return anyio.run(lambda: run_team_with_monitor(
            team, lambda t: TeamRuntime(t, opts), human=human))
    except TerrariumError as exc:
        print(exc.render(), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
