"""``web_fetch``: GET one http(s) page and return it as readable text, refusing SSRF.

Extractor: markdownify over BeautifulSoup (stdlib ``html.parser``), after dropping
``script``/``style``/``nav``-like noise. Chosen over trafilatura, which pulls in lxml,
justext, htmldate, courlan and more for a main-content heuristic a model does not need
(it can skim), and over html2text, which is GPL-3.0 (this project is MIT). markdownify and
beautifulsoup4 are MIT, pure Python, maintained, and keep links and headings as Markdown.

SSRF: only ``http``/``https``; the host is resolved and *every* address it resolves to must
be public (not loopback, private, link-local, multicast, reserved or unspecified), unless
the creature sets ``allow_private: true`` or lists the host in ``allow_hosts``. Redirects
are followed by hand, each hop checked the same way before it is connected to. IPv6
spellings of inside addresses are refused too: site-local ``fec0::/10``, 6to4 (``2002::/16``)
embedding a refused IPv4 address, and every other form that embeds one (IPv4-mapped and
-compatible, NAT64 ``64:ff9b::/96`` and ``64:ff9b:1::/48``, Teredo ``2001::/32``).

DNS rebinding: the connection goes to the very address that was checked (the request is
sent to the IP, with the ``Host`` header and TLS server name of the original host, so
virtual hosts and certificates work as before); httpx never resolves the name again.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable
from typing import ClassVar

import anyio
import httpx
from pydantic import BaseModel, ConfigDict, Field

from terrarium.errors import ToolError
from terrarium.tools.base import Tool, ToolContext

__all__ = ["Resolver", "WebFetchArgs", "WebFetchOptions", "WebFetchTool", "check_url",
           "html_to_text"]

Resolver = Callable[[str, int], Awaitable[list[str]]]
NOISE_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "head", "title")
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml",
              "application/javascript")
USER_AGENT = "terrarium-web-fetch/0.1"


class WebFetchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, description="the http:// or https:// address to fetch")


class WebFetchOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    allow_private: bool = Field(
        default=False, description="allow loopback, private and link-local addresses"
    )
    allow_hosts: list[str] = Field(
        default_factory=list, description="hosts (names or IPs) allowed even if private"
    )
    timeout: float = Field(default=20.0, gt=0, le=120, description="seconds for the whole fetch")
    max_bytes: int = Field(default=2_000_000, ge=1000, le=20_000_000,
                           description="bytes of the body read at most")
    max_chars: int = Field(default=20_000, ge=500, le=200_000,
                           description="characters of text returned at most")
    max_redirects: int = Field(default=5, ge=0, le=20, description="redirects followed at most")


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, through the system resolver (off the loop)."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def _embedded(ip: ipaddress.IPv6Address) -> str | None:
    """Why an IPv6 address that spells an IPv4 one (or a site-local one) is refused."""
    if ip.ipv4_mapped is not None:
        return _forbidden(ip.ipv4_mapped)
    if ip.sixtofour is not None:  # 2002:AABB:CCDD::/48 is AA.BB.CC.DD's network
        inner = _forbidden(ip.sixtofour)
        return f"6to4 {inner}" if inner else None
    if ip.is_site_local:
        return "site-local"
    if any(ip in net for net in _NAT64):
        return "NAT64"
    if ip.teredo is not None:
        return "Teredo"
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:  # ::a.b.c.d (:: and ::1 are labelled below)
        return "IPv4-compatible"
    return None


def _forbidden(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address) and (why := _embedded(ip)) is not None:
        return why
    for label, flag in (("loopback", ip.is_loopback), ("unspecified", ip.is_unspecified),
                        ("link-local", ip.is_link_local), ("multicast", ip.is_multicast),
                        ("private", ip.is_private), ("reserved", ip.is_reserved)):
        if flag:
            return label
    if not ip.is_global:
        return "non-public"
    return None


async def check_url(url: httpx.URL, options: WebFetchOptions, resolve: Resolver) -> list[str]:
    """The addresses to connect to for ``url``; a ToolError unless it is http(s) and its host
    resolves only to allowed addresses (any address, with ``allow_private`` or a host in
    ``allow_hosts``)."""
    if url.scheme not in ("http", "https"):
        raise ToolError(
            f"web_fetch only fetches http:// and https:// addresses, not {url.scheme or 'a'}:"
            " ones."
        )
    host = url.host
    if not host:
        raise ToolError(f"The address {str(url)!r} has no host.")
    allowed = options.allow_private or host in options.allow_hosts
    try:
        literal: list[str] | None = [str(ipaddress.ip_address(host))]
    except ValueError:
        literal = None
    try:
        resolved = literal or await resolve(
            host, url.port or (443 if url.scheme == "https" else 80)
        )
    except OSError as exc:
        raise ToolError(f"The host {host!r} could not be resolved: {exc}.") from None
    addresses = [ipaddress.ip_address(a.split("%")[0]) for a in resolved]
    if not addresses:
        raise ToolError(f"The host {host!r} resolved to no address.")
    for ip in addresses:
        if not allowed and (why := _forbidden(ip)) is not None:
            article = "an" if why[0].lower() in "aeiou" else "a"
            raise ToolError(
                f"web_fetch refused {str(url)!r}: {host} is {article} {why} address ({ip}); "
                "this creature may only fetch public addresses."
            )
    return [str(ip) for ip in addresses]


async def _send_pinned(client: httpx.AsyncClient, url: httpx.URL,
                       addresses: list[str]) -> httpx.Response:
    """GET ``url`` from one of the checked ``addresses`` (in order, the next one when a
    connection fails), never resolving the host again: the request goes to the IP, with
    the original ``Host`` header and, for https, the original TLS server name."""
    extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
    last: httpx.ConnectError | None = None
    for address in addresses:
        pinned = url.copy_with(host=address)
        request = client.build_request("GET", pinned, headers={"Host": url.netloc.decode()},
                                       extensions=extensions)
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError as exc:
            last = exc
    assert last is not None
    raise last


def html_to_text(html: str) -> tuple[str, str]:
    """(title, Markdown text) of an HTML page, noise tags dropped, blank runs collapsed."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(NOISE_TAGS):
        tag.decompose()
    body = soup.body or soup
    text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(body)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return title, re.sub(r"\n{3,}", "\n\n", text).strip()


class WebFetchTool(Tool):
    name: ClassVar[str] = "web_fetch"
    summary: ClassVar[str] = "fetch a web page and read it as text"
    documentation: ClassVar[str] = (
        "GETs url (http or https only) and returns the final address, the status, the "
        "title and the page as Markdown-like text (HTML converted; plain text and JSON as "
        "they are). Long pages are cut with a [truncated] note. Redirects are followed. "
        "Addresses on this machine or a private network are refused unless the creature "
        "allows them."
    )
    args_model: ClassVar[type[BaseModel]] = WebFetchArgs
    options_model: ClassVar[type[BaseModel] | None] = WebFetchOptions
    concurrency_safe: ClassVar[bool] = True
    # tests inject a fake resolver; the runtime leaves the system one
    resolver: Resolver = staticmethod(system_resolver)  # type: ignore[assignment]

    async def run(self, args: BaseModel, ctx: ToolContext) -> str:
        assert isinstance(args, WebFetchArgs)
        options: WebFetchOptions = self.options(ctx)
        try:
            url = httpx.URL(args.url.strip())
        except (httpx.InvalidURL, ValueError) as exc:
            raise ToolError(f"The address {args.url!r} is not a valid URL: {exc}.") from None
        try:
            with anyio.fail_after(options.timeout):
                return await self._fetch(url, options)
        except TimeoutError:
            raise ToolError(
                f"Fetching {args.url!r} took longer than {options.timeout:g} s and was stopped."
            ) from None
        except httpx.HTTPError as exc:
            raise ToolError(f"Fetching {args.url!r} failed: {type(exc).__name__}: {exc}.") from None

    async def _fetch(self, url: httpx.URL, options: WebFetchOptions) -> str:
        timeout = httpx.Timeout(options.timeout)
        headers = {"User-Agent": USER_AGENT, "Accept": "text/html, text/*;q=0.9, */*;q=0.5"}
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False,
                                     trust_env=False, headers=headers) as client:
            for _hop in range(options.max_redirects + 1):
                addresses = await check_url(url, options, self.resolver)
                resp = await _send_pinned(client, url, addresses)
                try:
                    if resp.is_redirect and "location" in resp.headers:
                        url = url.join(resp.headers["location"])
                        continue
                    body = bytearray()
                    truncated = False
                    async for chunk in resp.aiter_bytes():
                        body += chunk
                        if len(body) > options.max_bytes:
                            del body[options.max_bytes:]
                            truncated = True
                            break
                    return self._render(url, resp, bytes(body), truncated, options)
                finally:
                    await resp.aclose()
        raise ToolError(f"Too many redirects (more than {options.max_redirects}); stopped.")

    @staticmethod
    def _render(url: httpx.URL, resp: httpx.Response, body: bytes, truncated: bool,
                options: WebFetchOptions) -> str:
        ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype and not ctype.startswith(TEXT_TYPES):
            raise ToolError(
                f"{url} returned {ctype} ({len(body)} bytes read), which is not text; "
                "web_fetch only reads text pages."
            )
        charset = resp.charset_encoding or "utf-8"
        try:
            raw = body.decode(charset, errors="replace")
        except LookupError:
            raw = body.decode("utf-8", errors="replace")
        title = ""
        looks_html = "html" in ctype or (not ctype and "<html" in raw[:2000].lower())
        text = raw
        if looks_html:
            title, text = html_to_text(raw)
        head = [f"URL: {url}", f"Status: {resp.status_code}"]
        if title:
            head.append(f"Title: {title}")
        if len(text) > options.max_chars:
            text = text[: options.max_chars] + (
                f"\n[truncated: showed {options.max_chars} of {len(text)} characters]"
            )
        elif truncated:
            text += f"\n[truncated: the page is larger than {options.max_bytes} bytes]"
        return "\n".join(head) + "\n\n" + text
