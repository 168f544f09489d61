"""Connecting to the NATS broker: the URL from the command line, secrets from the environment.

Secrets never sit in ``terrarium.yaml`` nor on a command line (where ``ps`` shows them):
each process reads them from its own environment. ``tls://`` URLs use TLS with the
system's trust store, or the CA in ``TERRARIUM_NATS_CA`` (plus a client certificate for
mutual TLS).
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import nats
from nats.aio.client import Client

from terrarium import secrecy
from terrarium.errors import RuntimeFailure

__all__ = ["CREDENTIAL_VARIABLES", "connect_broker", "connect_options"]

# what each variable holds; `terrarium worker --help` and the README list them
CREDENTIAL_VARIABLES: Mapping[str, str] = {
    "TERRARIUM_NATS_USER": "user name (with TERRARIUM_NATS_PASSWORD)",
    "TERRARIUM_NATS_PASSWORD": "password for TERRARIUM_NATS_USER",
    "TERRARIUM_NATS_TOKEN": "authentication token",
    "TERRARIUM_NATS_NKEY_SEED": "file holding an nkey seed (SU...)",
    "TERRARIUM_NATS_CREDS": "credentials file (JWT + nkey seed, from `nsc`)",
    "TERRARIUM_NATS_CA": "CA certificate file for tls:// brokers",
    "TERRARIUM_NATS_CERT": "client certificate file (mutual TLS, with TERRARIUM_NATS_KEY)",
    "TERRARIUM_NATS_KEY": "client key file for TERRARIUM_NATS_CERT",
}


def _check_server(server: str) -> str:
    """The scheme of one broker URL, or a sentence saying what is wrong with it."""
    shown = secrecy.redact_url(server)
    example = "e.g. --broker nats://127.0.0.1:4222"
    try:
        parts = urlsplit(server)
        secrecy.register(parts.password)  # never printed again from here on
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number
    except ValueError as exc:
        raise RuntimeFailure(f"the broker URL {shown!r} is not a valid URL ({exc})",
                             suggestion=example) from None
    if parts.scheme not in ("nats", "tls"):
        raise RuntimeFailure(f"the broker URL {shown!r} is not a nats:// or tls:// URL",
                             suggestion=example)
    if not parts.hostname:
        raise RuntimeFailure(f"the broker URL {shown!r} names no host", suggestion=example)
    return parts.scheme


def connect_options(url: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The keyword arguments for ``nats.connect``: servers, credentials, TLS."""
    env = secrecy.secret_env() if env is None else env
    servers = [u.strip() for u in url.split(",")]
    schemes = {_check_server(u) for u in servers}
    scheme = "tls" if "tls" in schemes else "nats"
    opts: dict[str, Any] = {"servers": servers}
    user, password = env.get("TERRARIUM_NATS_USER"), env.get("TERRARIUM_NATS_PASSWORD")
    if user:
        opts["user"], opts["password"] = user, password or ""
    if env.get("TERRARIUM_NATS_TOKEN"):
        opts["token"] = env["TERRARIUM_NATS_TOKEN"]
    if env.get("TERRARIUM_NATS_NKEY_SEED"):
        opts["nkeys_seed"] = env["TERRARIUM_NATS_NKEY_SEED"]
    if env.get("TERRARIUM_NATS_CREDS"):
        opts["user_credentials"] = env["TERRARIUM_NATS_CREDS"]
    ca, cert = env.get("TERRARIUM_NATS_CA"), env.get("TERRARIUM_NATS_CERT")
    if scheme == "tls" or ca or cert:
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca or None)
        if cert:
            ctx.load_cert_chain(cert, env.get("TERRARIUM_NATS_KEY") or None)
        opts["tls"] = ctx
    return opts


async def connect_broker(url: str, *, name: str = "terrarium",
                         env: Mapping[str, str] | None = None, deadline: float = 10.0,
                         on_lost: Callable[[], Awaitable[None]] | None = None,
                         on_back: Callable[[], Awaitable[None]] | None = None) -> Client:
    """A connection to the broker, or a sentence saying why there is none. ``on_lost`` and
    ``on_back`` are told when the connection drops and when a reconnect succeeds."""
    opts = connect_options(url, env)
    errors: list[BaseException] = []

    async def on_error(exc: BaseException) -> None:  # keep the reason; nats-py retries
        errors.append(exc)

    try:
        # once connected, reconnect for ever (a broker restart is survived); the first
        # connection gets ``deadline`` seconds, so a wrong URL or password is a sentence
        with anyio.fail_after(deadline):
            told: dict[str, Any] = {}
            if on_lost is not None:
                told["disconnected_cb"] = on_lost
            if on_back is not None:
                told["reconnected_cb"] = on_back
            return await nats.connect(name=name, connect_timeout=min(5, deadline),
                                      max_reconnect_attempts=-1, reconnect_time_wait=0.5,
                                      allow_reconnect=True, error_cb=on_error, **told, **opts)
    except Exception as exc:  # nats raises several unrelated types for "could not connect"
        cause: BaseException = exc
        if errors and isinstance(exc, TimeoutError):  # the retries' reason; a refusal first
            refused = [e for e in errors if "authoriz" in str(e).lower()]
            cause = (refused or errors)[-1]
        raise RuntimeFailure(
            f"could not connect to the NATS broker at {secrecy.redact_url(url)}: "
            f"{type(cause).__name__}: {secrecy.redact(str(cause))}",
            suggestion="is nats-server running with JetStream (-js), and are the "
            "TERRARIUM_NATS_* credentials right?") from exc
