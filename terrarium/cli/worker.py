"""``terrarium worker PATH --broker URL``: host some of a distributed run's creatures.

A worker joins the newest running run of the team on the broker (or ``--run RUN_ID``),
waiting for one to start; it refuses a run whose config hash differs from its own copy
of the team. It hosts every team creature, or those ``--creatures`` names, and stops when
the run ends. Several workers may host the same creature: on a queue channel they share
the load; when one dies, the messages it held go to another after the run's ack wait.
Workers of a team on one machine share one embedded model server (``--no-share-model``:
one of its own; ``llm/shared_server.py``) and say which they use.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from terrarium.channels.nats import connect_broker, latest_run, wait_run_end
from terrarium.cli.run import load_checked, parse_creatures, unsandboxed_note
from terrarium.errors import RuntimeFailure
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.shared_server import SharedEmbeddedServer
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.runtime.session_workers import SessionWorker
from terrarium.secrecy import redact_url

if TYPE_CHECKING:
    from terrarium.config import Team
    from terrarium.runtime.preflight import DryStart

__all__ = ["cmd_worker", "model_line", "sessions_command", "worker_command"]


def model_line(server: EmbeddedServer) -> str:
    """Which embedded model server this worker uses: its own, or the team's shared one."""
    if isinstance(server, SharedEmbeddedServer):
        return server.describe_share()
    return f"started an embedded model server of its own at {server.base_url} (not shared)"


def cmd_worker(args: argparse.Namespace) -> int:
    return anyio.run(worker_command, args)


async def worker_command(args: argparse.Namespace) -> int:
    team, checked = load_checked(Path(args.path), "worker")
    host = parse_creatures(args.creatures, sorted(team.creatures))
    if getattr(args, "sessions", False):
        return await sessions_command(args, team, checked, host)
    run_id = args.run
    if run_id is None:
        nc = await connect_broker(args.broker, name="terrarium worker (looking for a run)")
        try:
            rec = await latest_run(nc.jetstream(), team.name, wait=args.wait)
        finally:
            await nc.close()
        if rec is None:
            raise RuntimeFailure(
                f"no running run of {team.name!r} on {args.broker} after {args.wait:g} s",
                suggestion=f"start one: terrarium run {args.path} --broker {args.broker}")
        run_id = rec["run_id"]
    name = f"worker {socket.gethostname()}:{os.getpid()}"
    opts = RuntimeOptions(runs_dir=Path(args.runs_dir), audio=args.audio, broker=args.broker,
                          join=run_id, host=host, worker_name=name,
                          share_model=getattr(args, "share_model", None))
    async with TeamRuntime(team, opts, checked=checked) as rt:
        hosting = ", ".join(sorted(n for n in rt.statuses)) or "nothing"
        print(f"{name} joined run {run_id} of {team.name!r}; hosting {hosting}", flush=True)
        if rt.embedded is not None:
            print(f"model: {model_line(rt.embedded)}", flush=True)
        if note := unsandboxed_note(team):
            print(note, file=sys.stderr, flush=True)
        assert rt.transport is not None
        status = await wait_run_end(rt.transport.js, team.name, run_id)
        # the run is over: what this worker holds is done or will never be acked
        print(f"run {run_id} ended ({status}); {rt.turns_total} turn(s) here", flush=True)
    return 0


async def sessions_command(args: argparse.Namespace, team: Team, checked: DryStart,
                           host: frozenset[str] | None) -> int:
    """``--sessions``: host the remote creatures of every session ``terrarium serve`` loads,
    until Ctrl-C (runtime/session_workers.py)."""
    if args.run:
        raise RuntimeFailure("--sessions serves every session of the team; it takes no --run",
                             suggestion="leave out --run")
    name = f"worker {socket.gethostname()}:{os.getpid()}"
    opts = RuntimeOptions(runs_dir=Path(args.runs_dir), audio=args.audio, broker=args.broker,
                          worker_name=name, share_model=getattr(args, "share_model", None))

    def say(line: str) -> None:
        print(line, flush=True)

    worker = SessionWorker(team, opts, creatures=host, name=name, checked=checked, say=say)
    hosting = ", ".join(sorted(host)) if host is not None else "any remote creature"
    print(f"{name} serving the sessions of {team.name!r} on {redact_url(args.broker)}; "
          f"hosting {hosting}", flush=True)
    if note := unsandboxed_note(team):
        print(note, file=sys.stderr, flush=True)
    try:
        await worker.run()
    finally:
        print(f"{name} stopped; {worker.turns} turn(s) here", flush=True)
    return 0
