"""Connecting to the NATS broker: the URL from the command line, secrets from the environment.

Secrets never sit in ``terrarium.yaml`` nor on a command line (where ``ps`` shows them):
each process reads them from its own environment. ``tls://`` URLs use TLS with the
system's trust store, or the CA in ``TERRARIUM_NATS_CA`` (plus a client certificate for
mutual TLS).
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import nats
from nats.aio.client import Client

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


def connect_options(url: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The keyword arguments for ``nats.connect``: servers, credentials, TLS."""
    env = os.environ if env is None else env
    scheme = urlsplit(url).scheme
    if scheme not in ("nats", "tls"):
        raise RuntimeFailure(f"the broker URL {url!r} is not a nats:// or tls:// URL",
                             suggestion="e.g. --broker nats://127.0.0.1:4222")
    opts: dict[str, Any] = {"servers": [u.strip() for u in url.split(",")]}
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
                         env: Mapping[str, str] | None = None, deadline: float = 10.0
                         ) -> Client:
    """A connection to the broker, or a sentence saying why there is none."""
    opts = connect_options(url, env)
    errors: list[BaseException] = []

    async def on_error(exc: BaseException) -> None:  # keep the reason; nats-py retries
        errors.append(exc)

    try:
        # once connected, reconnect for ever (a broker restart is survived); the first
        # connection gets ``deadline`` seconds, so a wrong URL or password is a sentence
        with anyio.fail_after(deadline):
            return await nats.connect(name=name, connect_timeout=min(5, deadline),
                                      max_reconnect_attempts=-1, reconnect_time_wait=0.5,
                                      allow_reconnect=True, error_cb=on_error, **opts)
    except Exception as exc:  # nats raises several unrelated types for "could not connect"
        cause: BaseException = exc
        if errors and isinstance(exc, TimeoutError):  # the retries' reason; a refusal first
            refused = [e for e in errors if "authoriz" in str(e).lower()]
            cause = (refused or errors)[-1]
        raise RuntimeFailure(
            f"could not connect to the NATS broker at {url}: {type(cause).__name__}: {cause}",
            suggestion="is nats-server running with JetStream (-js), and are the "
            "TERRARIUM_NATS_* credentials right?") from exc
