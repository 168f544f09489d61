"""A fake llama.cpp server for the shared-server tests, and a process that owns one.

``FakeShared`` is a :class:`SharedEmbeddedServer` whose "model load" starts a tiny HTTP
server in a thread (``/health``, ``/v1/chat/completions`` streaming "served by <pid>
slot <n>") instead of llama.cpp. Run as a script it is another process of the team:

    python shared_server_fakes.py REGISTRY MODEL TEAM SLOTS

prints ``waiting``, starts (attaching or launching), prints one JSON line (url, attached,
owner_pid, pid), then obeys stdin: ``stop`` stops its server but keeps the process (prints
``stopped``); end of input stops and exits.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from terrarium.errors import ModelError
from terrarium.llm.shared_server import SharedEmbeddedServer

__all__ = ["FakeLlama", "FakeShared"]


class FakeLlama:
    """An OpenAI-compatible streaming endpoint that says which process served it."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self._httpd: ThreadingHTTPServer | None = None

    def start(self) -> str:
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path == "/health":
                    self._send(200, "application/json", b'{"status": "ok"}')
                else:
                    self._send(404, "text/plain", b"no")

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                bodies.append(body)
                text = f"served by {os.getpid()} slot {body.get('id_slot')}"
                chunks = [
                    {"choices": [{"index": 0, "delta": {"content": text}}]},
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                ]
                data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
                self._send(200, "text/event-stream", data + b"data: [DONE]\n\n")

            def _send(self, status: int, ctype: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None


class FakeShared(SharedEmbeddedServer):
    """A shared server whose launch is a :class:`FakeLlama` (``fail``: the launch fails)."""

    def __init__(self, *, fail: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fail = fail
        self.launches = 0
        self.fake: FakeLlama | None = None

    def _launch(self) -> None:
        if self.fail:
            raise ModelError("the fake model would not load")
        self.launches += 1
        self.fake = FakeLlama()
        self._base_url = self.fake.start()
        self.loaded_model = self.model_file

    def _release(self) -> None:
        if self.fake is not None:
            self.fake.stop()
            self.fake = None


def main(registry: str, model: str, team: str, slots: str) -> None:
    server = FakeShared(team=team, registry=Path(registry), model=Path(model), slots=int(slots))
    print("waiting", flush=True)
    server.start()
    print(json.dumps({"url": server.base_url, "attached": server.attached,
                      "owner_pid": server.owner_pid, "pid": os.getpid()}), flush=True)
    for line in sys.stdin:
        if line.strip() == "stop":
            server.stop()
            print("stopped", flush=True)
    server.stop()


if __name__ == "__main__":
    main(*sys.argv[1:5])
