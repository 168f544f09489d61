"""web_fetch: HTML to text, limits, and SSRF refusals (schemes, loopback, private,
link-local, and a redirect hop that is checked before it is connected to).

Only 127.0.0.1 is ever connected to: a tiny HTTP server started here. Refused addresses
are refused before any connection, which is what the tests show.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anyio
import httpx
import pytest

from terrarium.tools.base import ToolContext
from terrarium.tools.runner import ToolResult, run_tool
from terrarium.tools.web import WebFetchTool, html_to_text

PAGE = b"""<html><head><title>Test page</title><style>p{color:red}</style>
<script>var secret = 1;</script></head>
<body><nav>menu</nav><h1>Hello</h1><p>Some <b>bold</b> text and a
<a href="/next">link</a>.</p><ul><li>one</li><li>two</li></ul></body></html>"""


class Server:
    seen: ClassVar[list[str]] = []


def make_handler(routes: dict[str, tuple[int, dict[str, str], bytes]]) -> type:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            Server.seen.append(self.path)
            status, headers, body = routes.get(self.path, (404, {}, b"not here"))
            if self.path == "/host":  # echoes the Host header it was sent
                body += str(self.headers["Host"]).encode()
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def server() -> Iterator[str]:
    Server.seen.clear()
    routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(routes))
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    html = {"Content-Type": "text/html; charset=utf-8"}
    routes.update({
        "/page": (200, html, PAGE),
        "/text": (200, {"Content-Type": "text/plain"}, b"plain words"),
        "/json": (200, {"Content-Type": "application/json"}, b'{"a": 1}'),
        "/image": (200, {"Content-Type": "image/png"}, b"\x89PNG...."),
        "/big": (200, {"Content-Type": "text/plain"}, b"x" * 50_000),
        "/to-page": (302, {"Location": "/page"}, b""),
        "/to-metadata": (302, {"Location": "http://169.254.169.254/latest/meta-data/"}, b""),
        "/to-private": (301, {"Location": "http://10.0.0.7/admin"}, b""),
        "/to-localhost": (307, {"Location": base.replace("127.0.0.1", "localhost") + "/secret"},
                          b""),
        "/to-evil": (302, {"Location": f"http://evil.test:{httpd.server_address[1]}/secret"},
                     b""),
        "/to-file": (302, {"Location": "file:///etc/passwd"}, b""),
        "/loop": (302, {"Location": "/loop"}, b""),
        "/secret": (200, {"Content-Type": "text/plain"}, b"TOP SECRET"),
        "/host": (200, {"Content-Type": "text/plain"}, b"Host: "),
    })
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield base
    finally:
        httpd.shutdown()
        httpd.server_close()


def ctx(tmp_path: Path, **options: Any) -> ToolContext:
    return ToolContext(creature="w", cwd=tmp_path, tool_options={"web_fetch": options})


def fetch(url: str, c: ToolContext, tool: type[WebFetchTool] = WebFetchTool) -> ToolResult:
    return anyio.run(run_tool, tool, {"url": url}, c)


LOCAL = {"allow_hosts": ["127.0.0.1"]}  # the test server only; everything else as default


def test_html_becomes_text(server: str, tmp_path: Path) -> None:
    res = fetch(server + "/page", ctx(tmp_path, **LOCAL))
    assert res.ok, res.text
    head, _, body = res.text.partition("\n\n")
    assert head == f"URL: {server}/page\nStatus: 200\nTitle: Test page"
    assert "# Hello" in body and "**bold**" in body and "[link](/next)" in body
    assert "- one" in body
    assert "secret" not in body and "color" not in body


def test_html_to_text_unit() -> None:
    title, text = html_to_text("<title>T</title><h2>Sub</h2><p>a<br>b</p><script>x</script>")
    assert title == "T" and text.startswith("## Sub") and "x" not in text


def test_plain_and_json_as_is(server: str, tmp_path: Path) -> None:
    c = ctx(tmp_path, **LOCAL)
    assert fetch(server + "/text", c).text.endswith("\n\nplain words")
    assert fetch(server + "/json", c).text.endswith('\n\n{"a": 1}')


def test_binary_refused(server: str, tmp_path: Path) -> None:
    res = fetch(server + "/image", ctx(tmp_path, **LOCAL))
    assert not res.ok and "image/png" in res.text and "not text" in res.text


def test_size_limits(server: str, tmp_path: Path) -> None:
    res = fetch(server + "/big", ctx(tmp_path, max_chars=1000, **LOCAL))
    assert res.ok and res.text.endswith("[truncated: showed 1000 of 50000 characters]")
    res = fetch(server + "/big", ctx(tmp_path, max_bytes=2000, **LOCAL))
    assert res.ok and res.text.endswith("[truncated: the page is larger than 2000 bytes]")


def test_redirect_followed_and_loop_stopped(server: str, tmp_path: Path) -> None:
    c = ctx(tmp_path, **LOCAL)
    res = fetch(server + "/to-page", c)
    assert res.ok and res.text.startswith(f"URL: {server}/page\n")
    res = fetch(server + "/loop", ctx(tmp_path, max_redirects=3, **LOCAL))
    assert not res.ok and "Too many redirects" in res.text


def test_http_error_status_is_reported(server: str, tmp_path: Path) -> None:
    res = fetch(server + "/missing", ctx(tmp_path, **LOCAL))
    assert res.ok and "Status: 404" in res.text


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x",
                                 "gopher://example.com/", "javascript:alert(1)"])
def test_non_http_schemes_refused(url: str, tmp_path: Path) -> None:
    res = fetch(url, ctx(tmp_path, allow_private=True))
    assert not res.ok and "only fetches http:// and https://" in res.text


@pytest.mark.parametrize(("url", "why"), [
    ("http://127.0.0.1:9/", "loopback"),
    ("http://localhost:9/", "loopback"),
    ("http://[::1]:9/", "loopback"),
    ("http://10.1.2.3/", "private"),
    ("http://192.168.0.1/", "private"),
    ("http://172.16.5.4/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[::ffff:10.0.0.1]/", "private"),
    ("http://0.0.0.0:9/", "unspecified"),
])
def test_internal_addresses_refused(url: str, why: str, tmp_path: Path) -> None:
    res = fetch(url, ctx(tmp_path))
    assert not res.ok, res.text
    article = "an" if why[0] in "aeiou" else "a"
    assert f"is {article} {why} address" in res.text


def test_local_server_refused_without_allowance(server: str, tmp_path: Path) -> None:
    res = fetch(server + "/secret", ctx(tmp_path))
    assert not res.ok and "loopback" in res.text
    assert Server.seen == []  # refused before connecting


@pytest.mark.parametrize(("path", "why"), [
    ("/to-metadata", "link-local"),
    ("/to-private", "private"),
    ("/to-localhost", "loopback"),
])
def test_redirect_to_internal_refused(server: str, tmp_path: Path, path: str,
                                      why: str) -> None:
    res = fetch(server + path, ctx(tmp_path, **LOCAL))
    assert not res.ok and f"is a {why} address" in res.text
    assert Server.seen == [path]  # the first hop only: the target was never requested


def test_redirect_to_name_resolving_inside_refused(server: str, tmp_path: Path) -> None:
    class FakeDNS(WebFetchTool):
        @staticmethod
        async def resolver(host: str, port: int) -> list[str]:
            return {"evil.test": ["8.8.8.8", "127.0.0.1"]}[host]  # one bad address is enough

    res = fetch(server + "/to-evil", ctx(tmp_path, **LOCAL), FakeDNS)
    assert not res.ok and "evil.test is a loopback address (127.0.0.1)" in res.text
    assert Server.seen == ["/to-evil"]


def test_redirect_to_other_scheme_refused(server: str, tmp_path: Path) -> None:
    res = fetch(server + "/to-file", ctx(tmp_path, **LOCAL))
    assert not res.ok and "only fetches http" in res.text


def test_allow_private_option(server: str, tmp_path: Path) -> None:
    res = fetch(server.replace("127.0.0.1", "localhost") + "/secret",
                ctx(tmp_path, allow_private=True))
    assert res.ok and res.text.endswith("TOP SECRET")


def test_unresolvable_and_invalid(tmp_path: Path) -> None:
    class NoDNS(WebFetchTool):
        @staticmethod
        async def resolver(host: str, port: int) -> list[str]:
            raise OSError("Name or service not known")

    res = fetch("http://nowhere.invalid/", ctx(tmp_path), NoDNS)
    assert not res.ok and "could not be resolved" in res.text
    assert not fetch("http://", ctx(tmp_path)).ok


def test_unknown_option_is_an_error(tmp_path: Path) -> None:
    res = fetch("http://example.com/", ctx(tmp_path, allow_privates=True))
    assert not res.ok and "options for web_fetch are invalid" in res.text


def test_flags() -> None:
    assert WebFetchTool.concurrency_safe is True


@pytest.mark.parametrize(("url", "why"), [
    ("http://[2002:7f00:1::]/", "6to4 loopback"),         # 6to4 of 127.0.0.1
    ("http://[2002:a00:1::5]/", "6to4 private"),          # 6to4 of 10.0.0.1
    ("http://[2002:a9fe:a9fe::]/", "6to4 link-local"),    # 6to4 of 169.254.169.254
    ("http://[fec0::1]/", "site-local"),
    ("http://[fed0:1::2]/", "site-local"),
    ("http://[64:ff9b::7f00:1]/", "NAT64"),
    ("http://[64:ff9b:1::a00:1]/", "NAT64"),
    ("http://[::127.0.0.1]/", "IPv4-compatible"),
    ("http://[::ffff:127.0.0.1]/", "loopback"),
    ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "Teredo"),
])
def test_ipv6_spellings_of_inside_addresses_refused(url: str, why: str,
                                                   tmp_path: Path) -> None:
    res = fetch(url, ctx(tmp_path))
    assert not res.ok, res.text
    article = "an" if why[0].lower() in "aeiou" else "a"
    assert f"is {article} {why} address" in res.text, res.text


def test_a_6to4_address_of_a_public_host_passes_the_check() -> None:
    from terrarium.tools.web import WebFetchOptions, check_url

    async def nobody(host: str, port: int) -> list[str]:
        raise AssertionError("a literal is not resolved")

    url = httpx.URL("http://[2002:808:808::1]/")  # 6to4 of 8.8.8.8: public
    assert anyio.run(check_url, url, WebFetchOptions(), nobody) == ["2002:808:808::1"]


def test_the_connection_goes_to_the_checked_address(server: str, tmp_path: Path) -> None:
    """The name is resolved once, by the check; the request goes to that address with the
    name in its Host header (the system resolver does not know pinned.test at all)."""
    port = server.rsplit(":", 1)[1]

    class FakeDNS(WebFetchTool):
        @staticmethod
        async def resolver(host: str, port: int) -> list[str]:
            return {"pinned.test": ["127.0.0.1"]}[host]

    res = fetch(f"http://pinned.test:{port}/host", ctx(tmp_path, allow_hosts=["pinned.test"]),
                FakeDNS)
    assert res.ok, res.text
    assert res.text.startswith(f"URL: http://pinned.test:{port}/host\n")
    assert res.text.endswith(f"Host: pinned.test:{port}")


def test_dns_rebinding_cannot_turn_the_fetch_inward(server: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The name first resolves to a public address (the check passes), then to loopback:
    a second resolution for the connection would reach the local server."""
    port = int(server.rsplit(":", 1)[1])
    real = socket.getaddrinfo
    answers = iter(["192.0.2.1", "127.0.0.1", "127.0.0.1", "127.0.0.1"])
    asked: list[str] = []

    def rebinding(host: Any, *args: Any, **kw: Any) -> Any:
        if host in ("rebind.test", b"rebind.test"):
            asked.append("rebind.test")
            return real(next(answers), *args, **kw)
        return real(host, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    monkeypatch.setattr("terrarium.tools.web._forbidden",
                        lambda ip: "loopback" if ip.is_loopback else None)  # 192.0.2.1 "public"
    res = fetch(f"http://rebind.test:{port}/secret", ctx(tmp_path, timeout=2))
    assert "TOP SECRET" not in res.text
    assert Server.seen == []  # the local server was never reached
    assert asked == ["rebind.test"]  # resolved once, by the check
