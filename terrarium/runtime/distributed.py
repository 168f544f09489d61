"""A run past one machine: choosing the transport, the config hash, and the run's record
on the broker.

The process that starts a run (``terrarium run --broker URL``) creates its streams and
announces it (with the team's config hash) in the broker's runs stream; a worker
(``terrarium worker``) joins the newest running run of its team, and refuses one whose
config hash differs from its own copy of the team: creatures built from different configs
would disagree about schemas and wiring.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from terrarium.channels.log import RunStatus
from terrarium.config import Team
from terrarium.errors import RuntimeFailure
from terrarium.runtime.options import ROOT, RuntimeOptions
from terrarium.runtime.recording import Recorder
from terrarium.secrecy import redact_url

if TYPE_CHECKING:  # nats-py loads only for a run on a broker
    from terrarium.channels.nats import NatsTransport

__all__ = ["BROKER_ENV", "announce", "broker_url", "check_join", "open_transport",
           "session_fields", "team_hash", "watch_broker"]

BROKER_ENV = "TERRARIUM_BROKER"  # the broker for `transport: nats` without --broker
_CONFIG_SUFFIXES = {".yaml", ".yml", ".md", ".txt", ".j2", ".jinja", ".json", ".toml"}
_SKIP_DIRS = {"runs", ".git", "__pycache__", ".venv", "node_modules"}


def team_hash(team: Team) -> str:
    """A hash of every config file of the team (terrarium.yaml, creatures, prompts, scripts).

    Keyed by each file's path inside its folder (not the absolute path), so two machines
    with the same team in different places agree. What the creatures work on is not config:
    their workspaces and writable paths are left out (a workspace with files in the team
    folder differs between the machines by the time a replacement worker takes over).
    """
    folders = {team.folder.resolve()}
    data: set[Path] = set()
    for c in team.everyone.values():
        folder = Path(c.folder).resolve()
        folders.add(folder)
        cfg = c.config
        for place in ([cfg.workspace] if cfg.workspace else []) + list(cfg.writable_paths):
            data.add((folder / place).resolve())
    entries: dict[str, bytes] = {}
    for folder in sorted(folders):
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS
                                 and (Path(dirpath) / d).resolve() not in data)
            for fn in filenames:
                p = Path(dirpath) / fn
                if p.suffix.lower() in _CONFIG_SUFFIXES:
                    key = f"{folder.name}/{p.relative_to(folder).as_posix()}"
                    entries[key] = p.read_bytes()
    h = hashlib.sha256()
    for key in sorted(entries):
        h.update(key.encode() + b"\0" + hashlib.sha256(entries[key]).digest())
    return h.hexdigest()


def broker_url(team: Team, options: RuntimeOptions) -> str | None:
    """The broker this run uses, or None for the in-memory transport."""
    if options.broker:
        return options.broker
    if team.transport == "nats":
        url = os.environ.get(BROKER_ENV)
        if not url:
            raise RuntimeFailure(
                f"terrarium {team.name!r} sets transport: nats, but no broker was given",
                suggestion=f"pass --broker nats://HOST:PORT or set {BROKER_ENV}")
        return url
    return None


def open_transport(team: Team, options: RuntimeOptions, run_id: str) -> NatsTransport | None:
    """The run's NATS transport (not yet entered), or None for in-memory channels."""
    url = broker_url(team, options)
    if url is None:
        return None
    joining = options.join is not None
    from terrarium.channels.nats import NatsTransport

    return NatsTransport(url, run_id, provision=not joining, ack_wait=options.ack_wait,
                         prefetch=options.prefetch, publish_window=options.publish_window,
                         source=options.worker_name or ("worker" if joining else "run"))


async def check_join(transport: NatsTransport, team: Team) -> None:
    """A worker's check: the run exists, still runs, and has this team's config hash."""
    run_id = transport.run_id
    from terrarium.channels.nats import run_record

    rec = await run_record(transport.js, team.name, run_id)
    if rec is None:
        raise RuntimeFailure(f"there is no run {run_id} of {team.name!r} on the broker",
                             suggestion="start it with `terrarium run PATH --broker URL`")
    mine = team_hash(team)
    if rec.get("config_hash") != mine:
        raise RuntimeFailure(
            f"refusing to join run {run_id}: its config hash {rec.get('config_hash', '?')[:12]}"
            f" differs from this team's {mine[:12]} (the team's files differ on this machine)",
            suggestion="use the same terrarium folder (same files) on every machine")
    if rec.get("status") != "running":
        raise RuntimeFailure(f"run {run_id} has ended ({rec.get('status')}); nothing to join")


def session_fields(team: Team, options: RuntimeOptions) -> dict[str, Any]:
    """What a session's run adds to its runs record: the session, the creatures it leaves
    to workers (``terrarium worker --sessions`` hosts only those) and the ack wait (the
    workers' claims expire after it)."""
    if options.session is None:
        return {}
    remote = sorted(n for n in team.creatures
                    if options.host is not None and n not in options.host)
    return {"session": options.session, "remote": remote, "ack_wait": options.ack_wait}


async def announce(transport: NatsTransport, team: Team, status: str, started: float,
                   *, config_hash: str | None = None,
                   extra: Mapping[str, Any] | None = None) -> None:
    """Record the run (or its new status) in the broker's runs stream."""
    ended = None if status == "running" else time.time()
    from terrarium.channels.nats import publish_run

    await publish_run(transport.js, {
        "run_id": transport.run_id, "terrarium": team.name, "path": str(team.path),
        "config_hash": config_hash or team_hash(team), "status": status,
        "started": started, "ended": ended, **(extra or {})})


async def announce_end(transport: NatsTransport, team: Team, status: RunStatus, started: float,
                       recorder: Recorder, extra: Mapping[str, Any] | None = None) -> None:
    """Tell every process of a run past one machine that it is over (its final status)."""
    assert recorder.log is not None
    try:
        recorder.log.set_run_status(recorder.run_id, status)  # mirrored to the broker's log
        await transport.flush()
        await announce(transport, team, status, started, extra=extra)
    except Exception as exc:  # the local log still has the status
        recorder.entry(next(iter(recorder.statuses), ROOT), "error",
                       f"could not announce the run's end: {exc}", 0)


async def watch_broker(transport: NatsTransport, give_up: float) -> None:
    """End the run with a sentence once the broker has been gone ``give_up`` seconds: the
    transport reconnects on its own meanwhile (a broker restart is survived), but a broker
    gone for good must not leave the run waiting silently until ``--timeout``."""
    while True:
        await anyio.sleep(min(0.5, give_up / 4))
        if transport.lost_for() >= give_up:
            raise RuntimeFailure(
                f"lost the NATS broker at {redact_url(transport.url)} and could not reconnect "
                f"for {give_up:g} s; giving up",
                suggestion="is nats-server still running? The log keeps what was done; "
                "continue with --resume RUN_ID once it is back")
