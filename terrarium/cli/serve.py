"""``terrarium serve PATH``: host one team for many sessions over HTTP and WebSocket.

Safe by default: it binds 127.0.0.1; binding anything else needs a token (``--token-env
VAR`` names the environment variable that holds it, so it never shows in ``ps``), and the
server refuses to start without one.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from terrarium import secrecy
from terrarium.cli.run import load_runnable
from terrarium.config import Team
from terrarium.errors import TerrariumError

if TYPE_CHECKING:
    from terrarium.serve import ServeSettings

__all__ = ["check_bind", "cmd_serve", "serve_settings"]


def _token(args: argparse.Namespace) -> str | None:
    var = args.token_env
    if not var:
        return None
    token = secrecy.env(var) or ""  # the process entry took it out of the environment
    if not token.strip():
        raise TerrariumError(f"--token-env names {var}, but that environment variable is "
                             "not set (or empty)", suggestion=f"export {var}=<a long random "
                             "token>, e.g. from `python -c 'import secrets; "
                             "print(secrets.token_urlsafe(32))'`")
    if len(token) < 16:
        raise TerrariumError(f"the token in {var} is shorter than 16 characters; anyone "
                             "could guess it", suggestion="use a long random token")
    return token


def _remote(args: argparse.Namespace, team: Team) -> list[str]:
    """The ``--remote`` creatures (``a,b`` or repeated), checked against the team."""
    names = [n.strip() for spec in getattr(args, "remote", None) or []
             for n in spec.split(",") if n.strip()]
    if not names:
        return []
    if not args.broker:
        raise TerrariumError("--remote runs creatures in `terrarium worker`s, which reach "
                             "the sessions through a broker; none was given",
                             suggestion="add --broker nats://HOST:PORT")
    for n in names:
        if n not in team.creatures:
            known = ", ".join(sorted(team.creatures))
            raise TerrariumError(f"there is no creature {n!r} in {team.name!r} to run in a "
                                 "worker", suggestion=f"one of: {known}")
    return sorted(dict.fromkeys(names))


def check_bind(host: str, port: int) -> None:
    """Refuse, before the server starts, an address it could not listen on: a host name
    that does not resolve, an address not of this machine, a port in use. Told by uvicorn
    instead, each was a traceback and exit 3 (which means "degraded")."""
    if not host.strip():
        raise TerrariumError("--host is empty", suggestion="give an address to listen on, "
                             "e.g. --host 127.0.0.1 (or 0.0.0.0 for every interface)")
    if host.startswith("[") and host.endswith("]"):
        raise TerrariumError(f"--host {host}: an IPv6 address is given without brackets here",
                             suggestion=f"--host {host[1:-1]}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
        raise TerrariumError(f"cannot serve on --host {host!r}: {reason}",
                             suggestion="give an address or name of this machine, e.g. "
                             "--host 127.0.0.1 (or 0.0.0.0 for every interface)") from None
    family, kind, proto, _, address = infos[0]
    try:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
            sock.bind(address)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise TerrariumError(f"port {port} on {host} is already in use (another server?)",
                                 suggestion="stop that one, or give another --port (0: any "
                                 "free port)") from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise TerrariumError(f"{host} is not an address of this machine",
                                 suggestion="give one of its addresses, e.g. --host "
                                 "127.0.0.1 (or 0.0.0.0 for every interface)") from None
        if exc.errno == errno.EACCES:
            raise TerrariumError(f"not allowed to listen on port {port} (ports below 1024 "
                                 "need privileges)", suggestion="give a port of 1024 or "
                                 "more, e.g. --port 8765") from None
        raise TerrariumError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                             suggestion="check --host and --port") from None


def _given(args: argparse.Namespace, name: str, default: float) -> float:
    """An option's value, or its default when it was not given (None, or not parsed)."""
    value = getattr(args, name, None)
    return default if value is None else float(value)


def serve_settings(args: argparse.Namespace, token: str | None,
                   remote: list[str]) -> ServeSettings:
    """The server's settings from ``terrarium serve``'s options."""
    from terrarium.serve import ServeSettings

    return ServeSettings(runs_dir=Path(args.runs_dir), host=args.host, port=args.port,
                         broker=args.broker, token=token, remote=remote,
                         ack_wait=_given(args, "ack_wait", 30.0),
                         remote_wait=_given(args, "remote_wait", 5.0),
                         allow_origins=list(args.allow_origin),
                         idle_unload=args.idle_unload,
                         approval_timeout=args.approval_timeout, rate=args.rate,
                         turns_at_once=getattr(args, "turns_at_once", 1))


def _loop_options() -> dict[str, bool]:
    """uvloop when installed (uvicorn[standard] brings it): the loop `uvicorn.run` would pick,
    so the CLI serves on the loop bench/serve.py measures. TERRARIUM_UVLOOP=0 keeps asyncio's."""
    import importlib.util
    import os

    wanted = os.environ.get("TERRARIUM_UVLOOP", "1") != "0"
    return {"use_uvloop": wanted and importlib.util.find_spec("uvloop") is not None}


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from terrarium.serve import create_app
    from terrarium.serve.app import UVICORN_OPTIONS
    from terrarium.serve.security import is_loopback

    team = load_runnable(Path(args.path), "serve")
    check_bind(args.host, args.port)
    token = _token(args)
    if not is_loopback(args.host) and token is None:
        raise TerrariumError(f"refusing to serve on {args.host} without a token: anyone who "
                             "reaches that address could drive the team",
                             suggestion="set --token-env VAR (and export VAR), or bind "
                             "127.0.0.1")
    remote = _remote(args, team)
    settings = serve_settings(args, token, remote)
    app = create_app(team, settings)
    config = uvicorn.Config(app, host=args.host, port=args.port, **UVICORN_OPTIONS)
    server = uvicorn.Server(config)

    async def run_server() -> None:
        try:
            await server.serve()
        except SystemExit:  # uvicorn's "could not start" (told below, not as a traceback)
            server.should_exit = True

    async def serve() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_server)
            while not server.started and not server.should_exit:  # noqa: ASYNC110 (uvicorn/runtime flags, no event)
                await anyio.sleep(0.02)
            if server.started:
                port = args.port
                for s in server.servers:
                    for sock in s.sockets:
                        port = sock.getsockname()[1]
                auth = " (bearer token required)" if token else ""
                host = f"[{args.host}]" if ":" in args.host else args.host
                print(f"serving {team.name!r} on http://{host}:{port}{auth}; "
                      f"log {settings.runs_dir / 'terrarium.sqlite3'}", flush=True)
                if remote:
                    print(f"{', '.join(remote)} run in workers: terrarium worker "
                          f"{args.path} --broker URL --sessions --creatures "
                          f"{','.join(remote)}", flush=True)
            # Ctrl-C: end the open event streams, so the server need not wait for them
            while not server.should_exit:  # noqa: ASYNC110 (uvicorn's flag, no event)
                await anyio.sleep(0.1)
            app.state.manager.close_streams()

    anyio.run(serve, backend_options=_loop_options())
    if not server.started:
        print(f"error: could not serve on {args.host}:{args.port}", file=sys.stderr)
        return 1
    return 0
