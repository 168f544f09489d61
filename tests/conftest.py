"""Suite-wide settings: async tests run on asyncio (``anyio_backend``: Textual and the
runtime run on it); hypothesis runs derandomized, so every run tries the same examples;
saved prompt prefixes go to a fresh folder per session, so no test restores what an earlier
session (or the user's own runs) left in ``~/.cache/terrarium``; ``nats_server`` is the one
real ``nats-server -js`` fixture the NATS tests share."""

from __future__ import annotations

import gc
import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from terrarium.channels.bus import EventBus, EventSubscription
from terrarium.paths import cache_dir
from tests.nats_fixtures import NATS_SERVER, NatsServer

_TESTS = str(Path(__file__).resolve().parent)

_ENCODER_FILES = cache_dir() / "all-MiniLM-L6-v2"  # the user's, extracted by `terrarium models`
os.environ["TERRARIUM_CACHE_DIR"] = tempfile.mkdtemp(prefix="terrarium-test-cache-")

settings.register_profile("terrarium", derandomize=True, print_blob=True)
settings.load_profile("terrarium")


@pytest.fixture(autouse=True, scope="session")
def _sentence_encoder_loaded() -> None:
    """Recall ranks notes by meaning, and the reply guard judges a note by it, once the
    sentence encoder is loaded (a run's first recall loads it): loaded up front where its
    package is installed, so no test's outcome depends on whether an earlier test of the
    process loaded it. Read from the user's cache when `terrarium models` extracted it
    there (read only), else extracted into the tests' own."""
    from terrarium.store import meaning

    ready = (_ENCODER_FILES / "model.safetensors").is_file() and \
        (_ENCODER_FILES / "tokenizer.json").is_file()
    meaning.encoder(_ENCODER_FILES if ready else None)


@pytest.fixture(autouse=True)
def _close_test_subscriptions(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Event subscriptions a test opens itself (``bus.subscribe()`` called from a test
    file) are closed when the test ends, so their streams are not left for the collector
    to report inside some later test. Subscriptions the library opens are not touched:
    leaving one open is a leak for the warnings to show."""
    mine: list[EventSubscription] = []
    subscribe = EventBus.subscribe

    def tracked(bus: EventBus, *args: Any, **kwargs: Any) -> EventSubscription:
        sub = subscribe(bus, *args, **kwargs)
        caller = sys._getframe(1).f_code.co_filename
        if caller.startswith(_TESTS) and not caller.endswith("conftest.py"):
            mine.append(sub)
        return sub

    monkeypatch.setattr(EventBus, "subscribe", tracked)
    yield
    for sub in mine:
        sub.close()


@pytest.fixture(autouse=True)
def _no_socket_left_to_the_collector(request: pytest.FixtureRequest) -> Iterator[None]:
    """tests/serve only (its tests hold real clients of real servers): a test fails if it
    left an open socket that only a reference cycle still reaches. The collector would
    close it whenever it next runs, and report it inside whichever test runs then, or at
    the end of the session; an unclosed SDK client whose test frame a ``pytest.raises``
    kept in a cycle did that. Decided by reachability, not by the warning, which shows
    only when the socket happens to be finalized before its client; right after the test,
    since the next automatic collection may free the cycle silently (a check once a file
    missed it). Cost: ~40 ms a test to find open sockets, ~115 ms more to collect when
    there are (about 3.6 of the folder's 30 s of CPU)."""
    yield
    if request.node.path.parent.name != "serve":
        return
    # type(), not isinstance(): a dead weakref proxy among the objects raises at the latter
    open_ids = {id(o) for o in gc.get_objects()
                if issubclass(type(o), socket.socket) and o.fileno() >= 0}
    if not open_ids:
        return
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection frees is kept to look at
    try:
        gc.collect()
        left = [repr(o) for o in gc.garbage if id(o) in open_ids]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not left, f"sockets left to the collector (close their client): {left}"


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
