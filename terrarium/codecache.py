"""Code compiled at run time, kept between starts: the methods ``dataclasses`` writes, the
string annotations ``typing`` compiles, and the prompt templates.

Python caches a module's bytecode (``.pyc``), but not the code made while it runs:
``dataclasses`` writes the source of each class's ``__init__``, ``__repr__``, ``__eq__``,
``__setattr__``… as text and ``exec``\\ s it (compiling those texts was two thirds of
building a dataclass, 1.2 of 1.8 ms for a frozen, slotted event: ~0.17 s of CPU of a
second ``terrarium run`` with its 210 dataclasses), ``typing`` compiles each string
annotation it evaluates (~1,200 at a start, ~35 ms: pydantic's models and its core
schema's typed dicts), and Jinja parses and compiles each prompt template
(``prompt/templates.py``). While :func:`code_cache` is active these come
from one file of the cache folder: a second start compiles none of them.

Nothing else changes: ``dataclasses`` still writes the same text and runs it with the
same globals and locals; only the compile of a text seen before is skipped (compiled as
``exec`` does, without this module's ``__future__`` flags). The file holds what the last
process used, written whole and then renamed; one that is missing, damaged or from another
Python is ignored (and rewritten). Like ``.pyc`` files and the saved prompt prefixes, the
cache folder is trusted as the user's own.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from types import CodeType
from typing import Any

__all__ = ["CodeCache", "active", "cache_file", "code_cache"]

_FILENAME = "<string>"  # what exec() names a text it compiles
_ACTIVE: CodeCache | None = None


def cache_file() -> Path:
    """``<cache dir>/code/<python>-<bytecode magic>-O<level>.marshal``: code objects load
    only in the interpreter that made them."""
    from terrarium.paths import cache_dir

    tag = (f"{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}"
           f"-O{sys.flags.optimize}")
    return cache_dir() / "code" / f"{tag}.marshal"


class CodeCache:
    """Compiled things by key (a dataclass method's source text, a template's digest):
    :meth:`exec` stands in for ``builtins.exec``; :meth:`get` and :meth:`put` keep any
    value ``marshal`` can write."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, Any] = _load(path)
        self.used: dict[str, Any] = {}
        self.compiled = 0  # things compiled by this process (not found in the file)

    def get(self, key: str) -> Any:
        """The value kept under ``key`` (None if there is none); kept for the next start."""
        value = self.used.get(key)
        if value is None:
            value = self.known.get(key)
            if value is not None:
                self.used[key] = value
        return value

    def put(self, key: str, value: Any) -> None:
        """Keep ``value``, just compiled, under ``key``."""
        self.compiled += 1
        self.used[key] = value

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """``exec(source, globals, locals)`` with ``source``'s code from the cache."""
        if isinstance(source, str):
            code = self.get(source)
            if type(code) is not CodeType:
                # as exec() compiles a text: the caller's (dataclasses') flags, which
                # are none, not this module's ``from __future__ import annotations``
                code = compile(source, _FILENAME, "exec", dont_inherit=True)
                self.put(source, code)
            source = code
        builtins.exec(source, globals, locals)

    def compile(self, source: Any, filename: Any, mode: str, flags: int = 0,
                dont_inherit: bool = False, optimize: int = -1) -> Any:
        """``compile()`` for ``typing`` (each string annotation a ``ForwardRef`` compiles:
        ~1,200 of them at a start, pydantic's), from the cache for plain text."""
        if not (isinstance(source, str) and isinstance(filename, str) and flags == 0
                and optimize == -1):
            return builtins.compile(source, filename, mode, flags, dont_inherit, optimize)
        key = f"compile:{mode}:{filename}\x00{source}"
        code = self.get(key)
        if type(code) is not CodeType:
            # typing's flags, which are none (not this module's)
            code = builtins.compile(source, filename, mode, dont_inherit=True)
            self.put(key, code)
        return code

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


def _load(path: Path) -> dict[str, Any]:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and v is not None}


def active() -> CodeCache | None:
    """The cache of this process's command, if it keeps one (:func:`code_cache`)."""
    return _ACTIVE


@contextlib.contextmanager
def code_cache(path: Path | None = None) -> Iterator[CodeCache | None]:
    """While inside, dataclasses compile their methods, and templates their code, from
    the cache at ``path`` (default :func:`cache_file`); saved and let go on the way out.
    Yields None, doing nothing, with ``TERRARIUM_CODE_CACHE=0`` or when something else
    already replaced ``dataclasses``' ``exec`` (or another cache is active)."""
    global _ACTIVE
    if (os.environ.get("TERRARIUM_CODE_CACHE", "").strip() in ("0", "no", "off", "false")
            or "exec" in vars(dataclasses) or _ACTIVE is not None):
        yield None
        return
    cache = CodeCache(path or cache_file())
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]
    hooked_typing = "compile" not in vars(typing)
    if hooked_typing:
        typing.compile = cache.compile  # type: ignore[attr-defined]
    _ACTIVE = cache
    try:
        yield cache
    finally:
        _ACTIVE = None
        with contextlib.suppress(AttributeError):
            del dataclasses.exec  # type: ignore[attr-defined]
        if hooked_typing:
            with contextlib.suppress(AttributeError):
                del typing.compile  # type: ignore[attr-defined]
        cache.save()
