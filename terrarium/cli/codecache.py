"""Compiled generated code kept between starts: the methods ``dataclasses`` writes.

Python caches a module's bytecode (``.pyc``), but not the code ``dataclasses`` generates
for each class at import: it writes the source of ``__init__``, ``__repr__``, ``__eq__``,
``__setattr__``… as text and ``exec``\\ s it, and compiling those texts was two thirds of
building a dataclass (1.2 of 1.8 ms for a frozen, slotted event), ~0.17 s of CPU of the
~1.1 s a second ``terrarium run`` spent before its runtime (210 dataclasses). This module
keeps the compiled code objects in one file of the cache folder, keyed by their source
text: a second start compiles none of them.

Nothing else changes: ``dataclasses`` still writes the same text and runs it with the
same globals and locals; only the compile of a text it has seen before is skipped
(compiled as ``exec`` does, without this module's ``__future__`` flags). The file holds
what the last process used and is written whole, then renamed; one that is missing,
damaged or from another Python is ignored (and rewritten). Like ``.pyc`` files and the
saved prompt prefixes, the cache folder is trusted as the user's own.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import CodeType
from typing import Any

__all__ = ["CodeCache", "cache_file", "code_cache"]

_FILENAME = "<string>"  # what exec() names a text it compiles


def cache_file() -> Path:
    """``<cache dir>/code/<python>-<bytecode magic>-O<level>.marshal``: code objects load
    only in the interpreter that made them."""
    from terrarium.paths import cache_dir

    tag = (f"{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}"
           f"-O{sys.flags.optimize}")
    return cache_dir() / "code" / f"{tag}.marshal"


class CodeCache:
    """Code objects by source text; :meth:`exec` stands in for ``builtins.exec``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, CodeType] = _load(path)
        self.used: dict[str, CodeType] = {}
        self.compiled = 0  # texts compiled by this process (not found in the file)

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """``exec(source, globals, locals)`` with ``source``'s code from the cache."""
        if isinstance(source, str):
            code = self.used.get(source) or self.known.get(source)
            if code is None:
                # as exec() compiles a text: the caller's (dataclasses') flags, which
                # are none, not this module's ``from __future__ import annotations``
                code = compile(source, _FILENAME, "exec", dont_inherit=True)
                self.compiled += 1
            self.used[source] = code
            source = code
        builtins.exec(source, globals, locals)

    def save(self) -> None:
        """Write what this process used, if that differs from the file; a file that
        cannot be written only costs the next start its compiles."""
        if self.used.keys() == self.known.keys():
            return
        with contextlib.suppress(OSError, ValueError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            part = self.path.with_suffix(f".{os.getpid()}.part")
            part.write_bytes(marshal.dumps(self.used))
            os.replace(part, self.path)
            self.known = dict(self.used)


def _load(path: Path) -> dict[str, CodeType]:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, CodeType)}


@contextlib.contextmanager
def code_cache(path: Path | None = None) -> Iterator[CodeCache | None]:
    """While inside, every dataclass built compiles its methods from the cache at ``path``
    (default :func:`cache_file`); saved and removed on the way out. Yields None, doing
    nothing, with ``TERRARIUM_CODE_CACHE=0`` or when something else already replaced
    ``dataclasses``' ``exec``."""
    if (os.environ.get("TERRARIUM_CODE_CACHE", "").strip() in ("0", "no", "off", "false")
            or "exec" in vars(dataclasses)):
        yield None
        return
    cache = CodeCache(path or cache_file())
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]
    try:
        yield cache
    finally:
        with contextlib.suppress(AttributeError):
            del dataclasses.exec  # type: ignore[attr-defined]
        cache.save()
