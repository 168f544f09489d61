"""Helpers of the web page's browser tests: a real ``terrarium serve`` subprocess on a free
port, and Debian's chromium driven by Playwright (``executable_path``: no browser download).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Screenshots go to a temporary folder, so a test run leaves the checkout clean;
# TERRARIUM_SCREENSHOT_DIR=docs/images refreshes the ones the docs and README show.
IMAGES = Path(os.environ.get("TERRARIUM_SCREENSHOT_DIR")
              or Path(tempfile.gettempdir()) / "terrarium-web-screenshots")
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
START_LIMIT = 90.0  # seconds: a bound against hangs, never a measured figure


def need_browser() -> None:
    """Skip (with the reason) where the browser tests cannot run."""
    if not CHROMIUM.exists() and shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)")
    pytest.importorskip("playwright.sync_api")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[str]
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    token: str | None = None

    def request(self, method: str, path: str, body: Any = None, *, auth: bool = True
                ) -> tuple[int, Any]:
        """One JSON request to the API (status, parsed body or None)."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if auth and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as res:
                raw = res.read()
                return res.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            return exc.code, json.loads(raw) if raw else None


@contextmanager
def serve(team: Path, runs: Path, *extra: str, env: dict[str, str] | None = None,
          token: str | None = None) -> Iterator[Server]:
    """``terrarium serve TEAM`` on a free port until the block ends; waits for /readyz."""
    port = free_port()
    log = runs / "serve.log"
    runs.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "terrarium", "serve", str(team), "--port", str(port),
             "--runs-dir", str(runs), *extra],
            cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT, text=True)
    server = Server(f"http://127.0.0.1:{port}", proc, log, full_env, token)
    try:
        deadline = time.monotonic() + START_LIMIT
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"terrarium serve exited: {log.read_text()[-3000:]}")
            try:
                if server.request("GET", "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"terrarium serve never got ready: {log.read_text()[-3000:]}")
            time.sleep(0.1)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def browser(*args: str) -> Iterator[Any]:
    """A headless chromium (Debian's) for the block."""
    from playwright.sync_api import sync_playwright

    exe = str(CHROMIUM) if CHROMIUM.exists() else shutil.which("chromium")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True,
                              args=[*CHROMIUM_ARGS, *args])
        try:
            yield b
        finally:
            b.close()


@dataclass
class Console:
    """Everything the page logged as an error (console errors and uncaught exceptions)."""

    errors: list[str] = field(default_factory=list)

    def watch(self, page: Any) -> Any:
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        return page


def shot(page: Any, name: str) -> Path:
    """Save the page as IMAGES/web-NAME.png (docs/images holds the ones the docs show)."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    path = IMAGES / f"web-{name}.png"
    page.screenshot(path=str(path))
    return path


def open_tab(page: Any, name: str) -> None:
    page.click(f"#tab-{name}")
    page.wait_for_selector(f"#view-{name}:not([hidden])")


def new_session(page: Any, name: str = "") -> str:
    open_tab(page, "sessions")
    before = page.evaluate("terrariumState.session?.id ?? null")
    if name:
        page.fill("#new-session-name", name)
    page.click("#new-session button[type=submit]")
    # with a session already open, #conn is live before the new one is: wait for the new id
    page.wait_for_function("(before) => terrariumState.session && "
                           "terrariumState.session.id !== before", arg=before)
    page.wait_for_selector("#conn.live")
    return str(page.evaluate("terrariumState.session.id"))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]
