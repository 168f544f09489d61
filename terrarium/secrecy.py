"""Secrets: held by terrarium, out of the environment commands can read, redacted in output.

Why this module exists: a shell command is a child of the terrarium process, and a child
can read its parent's ``/proc/<pid>/environ`` (the environment the process was *started*
with, whatever ``os.environ`` holds later). So a process that runs commands must not keep
keys in its environment at all. :func:`take_secrets` moves every secret-looking variable
(and the ones a config names) out of ``os.environ`` into this module's store, and blanks
their bytes in the process's initial environment block, which is what ``/proc`` shows.
Terrarium reads them back through :func:`env` exactly where it needs them (the model
client, MCP headers, the broker connection) and hands them on only there.

:func:`redact` is the one redaction helper of the code base: registered secret values and
the password of a ``scheme://user:password@host`` URL become ``***``. The event log runs it
over every row it writes, and every place that prints a URL runs :func:`redact_url`.

Limits (said plainly in docs/security.md): a process running as the same user can still
read this process's memory where ptrace rules allow it (root always can); the bubblewrap
sandbox of the shell tool is what takes the parent out of a command's sight entirely.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping

__all__ = [
    "MASK",
    "env",
    "forget",
    "is_secret_name",
    "may_need_redaction",
    "owns_environment",
    "redact",
    "redact_url",
    "register",
    "secret_env",
    "take_secrets",
]

MASK = "***"
# names that hold secrets by convention: OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY,
# TERRARIUM_NATS_PASSWORD, ... (PWD/OLDPWD are folders, not passwords)
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|KEY|KEYS|TOKEN|TOKENS|SECRET|SECRETS|PASSWORD|PASSWD|PASS|"
    r"CREDENTIALS?|CREDS|AUTH|SEED|COOKIE|PRIVATE)(?:_|$)", re.IGNORECASE)
_NOT_SECRET = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "GPG_AGENT_INFO",
                         "XAUTHORITY", "TERRARIUM_NATS_USER"})
# the userinfo of a URL: scheme://user:password@ or scheme://token@
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s/@:]*)"
                              r"(?::(?P<password>[^\s/@]*))?@(?=[^\s@])")
_MIN_SECRET = 4  # shorter values would mask ordinary words

# True once the process entry took the secrets (``terrarium.cli.entry``): commands may then
# take the ones a loaded config names too. A library caller's environment is left alone.
owns_environment = False

_lock = threading.Lock()
_store: dict[str, str] = {}
_values: set[str] = set()
_ordered: tuple[str, ...] = ()  # the values, the longest first
_ordered_utf8: tuple[bytes, ...] = ()  # the same as UTF-8 (see may_need_redaction)
_pattern: re.Pattern[str] | None = None


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret."""
    return name not in _NOT_SECRET and bool(_SECRET_NAME.search(name))


def register(value: str | None) -> None:
    """Mask ``value`` wherever :func:`redact` runs from now on (a key, a URL password)."""
    global _pattern, _ordered, _ordered_utf8
    if not value or len(value) < _MIN_SECRET:
        return
    with _lock:
        if value in _values:
            return
        _values.add(value)
        _ordered = tuple(sorted(_values, key=len, reverse=True))  # the longest first
        _ordered_utf8 = tuple(v.encode("utf-8", "surrogatepass") for v in _ordered)
        _pattern = re.compile("|".join(re.escape(v) for v in _ordered))


def forget() -> None:
    """Drop every held and registered secret (tests; a process that starts over)."""
    global _pattern, _ordered, _ordered_utf8
    with _lock:
        _store.clear()
        _values.clear()
        _ordered = ()
        _ordered_utf8 = ()
        _pattern = None


def env(name: str) -> str | None:
    """The variable ``name``: from the environment if it is there, else from the store."""
    value = os.environ.get(name)
    return value if value is not None else _store.get(name)


class _SecretEnv(Mapping[str, str]):
    """The environment with the held secrets added back, read-only (for code that takes a
    mapping, such as the broker connection)."""

    def __getitem__(self, key: str) -> str:
        value = env(key)
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter({**_store, **os.environ})

    def __len__(self) -> int:
        return len({**_store, **os.environ})


def secret_env() -> Mapping[str, str]:
    """A read-only view of the environment plus the secrets :func:`take_secrets` holds."""
    return _SecretEnv()


def take_secrets(names: Iterable[str] = ()) -> list[str]:
    """Move secret variables (by name pattern, plus ``names``) out of the environment.

    Each value is kept here (:func:`env` reads it) and registered for redaction; the
    variable is removed from ``os.environ`` and its bytes in the process's initial
    environment block are blanked, so ``/proc/<pid>/environ`` no longer shows it. Returns
    the names taken.
    """
    wanted = set(names)
    taken = [k for k in os.environ if k in wanted or is_secret_name(k)]
    for name in taken:
        value = os.environ.pop(name)
        with _lock:
            _store[name] = value
        register(value)
    if taken:
        _blank_initial_environment(taken)
    return sorted(taken)


def _blank_initial_environment(names: Iterable[str]) -> None:
    """Zero ``NAME=value`` entries in the environment block ``/proc/self/environ`` shows.

    Linux only; elsewhere (or if the block cannot be found) it does nothing: the value is
    already out of ``os.environ`` and of every child's environment.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # env_start, env_end (proc(5))
        if not 0 < start < end or end - start > 1 << 24:
            return
        block = ctypes.string_at(start, end - start)
    except (OSError, ValueError, IndexError):
        return
    for name in names:
        key = name.encode() + b"="
        pos = 0
        while (i := block.find(key, pos)) >= 0:
            stop = block.find(b"\0", i)
            stop = len(block) if stop < 0 else stop
            if i == 0 or block[i - 1] == 0:
                ctypes.memset(start + i, 0, stop - i)
            pos = stop


def _url_credentials(m: re.Match[str]) -> str:
    if m.group("password") is None:  # scheme://token@host: the token is the secret
        return f"{m.group('scheme')}{MASK}@" if m.group("user") else m.group(0)
    return f"{m.group('scheme')}{m.group('user')}:{MASK}@"


def may_need_redaction(data: bytes) -> bool:
    """Whether texts whose UTF-8 bytes are in ``data`` could need :func:`redact`: a
    registered secret's bytes in it, or both marks of a URL's credentials (``://`` and
    ``@``). False is certain (a writer may test many values encoded together at once and
    skip them all); True may be a false alarm."""
    if b"@" in data and b"://" in data:
        return True
    for value in _ordered_utf8:
        if value in data:
            return True
    return False


def redact(text: str) -> str:
    """``text`` with registered secret values and URL passwords replaced by ``***``."""
    if not text:
        return text
    pattern = _pattern
    if pattern is not None:
        for value in _ordered:  # a substring test per secret is far cheaper than the regex
            if value in text:
                text = pattern.sub(MASK, text)
                break
    if "@" in text and "://" in text:
        text = _URL_CREDENTIALS.sub(_url_credentials, text)
    return text


def redact_url(url: str) -> str:
    """A URL fit to print: its password (or bare token) masked; the rest as given."""
    return redact(url)
