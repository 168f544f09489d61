"""A real ``nats-server -js`` for the distributed tests: a free port, a temporary store.

Skipped (with the reason) only where the binary is missing; ``.ci/run`` fails instead,
so CI always runs these tests.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["NATS_SERVER", "NatsServer", "free_port"]

NATS_SERVER = shutil.which("nats-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class NatsServer:
    """One running server; ``url`` is what ``--broker`` takes."""

    def __init__(self, store: Path, *extra: str) -> None:
        assert NATS_SERVER is not None
        self.port = free_port()
        self.url = f"nats://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(store),
             *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    raise RuntimeError(f"nats-server exited: {err}") from None
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("nats-server did not start listening within 10 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr is not None:  # no unclosed pipe left for the collector
            self.proc.stderr.close()
