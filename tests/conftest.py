"""Suite-wide settings: async tests run on asyncio (``anyio_backend``: Textual and the
runtime run on it); hypothesis runs derandomized, so every run tries the same examples;
saved prompt prefixes go to a fresh folder per session, so no test restores what an earlier
session (or the user's own runs) left in ``~/.cache/terrarium``; ``nats_server`` is the one
real ``nats-server -js`` fixture the NATS tests share."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.nats_fixtures import NATS_SERVER, NatsServer

os.environ["TERRARIUM_CACHE_DIR"] = tempfile.mkdtemp(prefix="terrarium-test-cache-")

settings.register_profile("terrarium", derandomize=True, print_blob=True)
settings.load_profile("terrarium")


@pytest.fixture
def anyio_backend() -> str:
    """The one event loop every ``pytest.mark.anyio`` test runs on."""
    return "asyncio"


@pytest.fixture()
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    """A real ``nats-server -js`` on a free port with a temporary store, stopped after."""
    if NATS_SERVER is None:
        pytest.skip("nats-server is not installed (apt-get install nats-server; "
                    "scripts/setup.sh does it)")
    server = NatsServer(tmp_path / "jetstream")
    try:
        yield server
    finally:
        server.stop()
