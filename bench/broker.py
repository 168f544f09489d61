"""The benches' own NATS broker: ``nats-server -js`` on a free port with a temporary store
(bench/distributed.py, bench/voice.py --broker)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["nats_server"]


@contextmanager
def nats_server(url: str | None) -> Iterator[str]:
    """``url``, or a ``nats-server -js`` of our own on a free port with a temporary store,
    stopped after; it yields once the server accepts connections."""
    if url is not None:
        yield url
        return
    binary = shutil.which("nats-server")
    if binary is None:
        raise SystemExit("nats-server is not installed (apt-get install nats-server)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    with tempfile.TemporaryDirectory(prefix="terrarium-bench-nats-") as store:
        server = subprocess.Popen([binary, "-js", "-a", "127.0.0.1", "-p", str(port),
                                   "-sd", store], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit("nats-server did not start") from None
                    time.sleep(0.05)
            yield f"nats://127.0.0.1:{port}"
        finally:
            server.terminate()
            server.wait()
