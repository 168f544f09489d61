"""Which tools exist: the built-ins, tools named by dotted path, and a creature's registry.

A creature's ``ToolRegistry`` is the one source the prompt (index, docs, guidance), the
call parsers and grammar (``specs()``) and the ``info`` tool all read, so they agree.
Registering a name twice is an error that names both owners, so a clash between, say, a
creature's own tool and a built-in is found at load rather than silently shadowed.

A ``module:Class`` reference is looked up first in the creature's folder (``module.py`` or
a ``module/`` package beside its config.yaml, so a creature carries its own tools), then
as an importable module (an installed package, or one on ``PYTHONPATH``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType

from terrarium.errors import RegistryError, TerrariumError, did_you_mean
from terrarium.formats.base import CallSpec
from terrarium.tools.base import Tool

_BUILTIN_REFS: dict[str, str] = {
    "ask_user": "ask:AskUserTool",
    "edit": "edits:EditTool",
    "glob": "find:GlobTool",
    "grep": "grep:GrepTool",
    "info": "info:InfoTool",
    "memory_search": "memory:MemorySearchTool",
    "memory_write": "memory:MemoryWriteTool",
    "multi_edit": "edits:MultiEditTool",
    "read_file": "files:ReadFileTool",
    "shell": "shell:ShellTool",
    "think": "think:ThinkTool",
    "tree": "tree:TreeTool",
    "web_fetch": "web:WebFetchTool",
    "write_file": "files:WriteFileTool",
}


class _BuiltinTools(Mapping[str, type[Tool]]):
    """The built-in tools by name, each module imported when its tool is first looked up:
    a run loads the tools its creatures list, not all fourteen with their argument models
    (a tenth of a start's imports; docs/performance.md)."""

    def __init__(self, refs: Mapping[str, str]) -> None:
        self._refs = dict(refs)
        self._loaded: dict[str, type[Tool]] = {}

    def __getitem__(self, name: str) -> type[Tool]:
        cls = self._loaded.get(name)
        if cls is None:
            module, _, attr = self._refs[name].partition(":")  # KeyError: not a built-in
            cls = getattr(importlib.import_module(f"terrarium.tools.{module}"), attr)
            self._loaded[name] = cls
        return cls

    def __contains__(self, name: object) -> bool:
        return name in self._refs

    def __iter__(self) -> Iterator[str]:
        return iter(self._refs)

    def __len__(self) -> int:
        return len(self._refs)


BUILTIN_TOOLS: Mapping[str, type[Tool]] = _BuiltinTools(_BUILTIN_REFS)
"""Built-in tools by name; a creature's ``tools:`` list may name any of these."""


def known_tool_names() -> list[str]:
    """The built-in tool names, sorted (for validation messages and suggestions)."""
    return sorted(BUILTIN_TOOLS)


def _local_module(module_name: str, base: Path) -> ModuleType | None:
    """``module_name`` loaded from a file (or package) under ``base``; None if there is none.

    Loaded under a name private to that folder, so two creatures may each have a
    ``tools.py`` of their own; loaded once per run (``sys.modules`` keeps it).
    """
    rel = Path(*module_name.split("."))
    for file in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
        if file.is_file():
            break
    else:
        return None
    file = file.resolve()
    tag = hashlib.sha1(str(file).encode()).hexdigest()[:10]
    private = f"_terrarium_tools_{tag}.{module_name}"
    if private in sys.modules:
        return sys.modules[private]
    spec = importlib.util.spec_from_file_location(
        private, file,
        submodule_search_locations=[str(file.parent)] if file.name == "__init__.py" else None)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[private] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[private]
        raise
    return module


def resolve_tool(ref: str, base: Path | None = None) -> type[Tool]:
    """The tool class for a built-in name or a ``package.module:ClassName`` reference
    (looked up in the folder ``base`` first, when given: the creature's own tools)."""
    ref = ref.strip()
    if ":" not in ref:
        if ref in BUILTIN_TOOLS:
            return BUILTIN_TOOLS[ref]
        raise TerrariumError(
            f"There is no built-in tool named {ref!r}; known tools are "
            f"{', '.join(known_tool_names())}, or use 'package.module:ClassName'.",
            suggestion=did_you_mean(ref, known_tool_names()),
        )
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr or ":" in attr:
        raise TerrariumError(
            f"The tool reference {ref!r} is malformed; write it as 'package.module:ClassName'."
        )
    try:
        local = _local_module(module_name, base) if base is not None else None
        module = local if local is not None else importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        where = f" nor found as {module_name.replace('.', '/')}.py in {base}" if base else ""
        raise TerrariumError(
            f"The tool reference {ref!r} names module {module_name!r}, "
            f"which could not be imported ({exc}){where}."
        ) from exc
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            public = sorted(
                n
                for n, v in vars(module).items()
                if isinstance(v, type) and issubclass(v, Tool) and v is not Tool
            )
            raise TerrariumError(
                f"Module {module_name!r} has no attribute {attr!r} for tool reference {ref!r}.",
                suggestion=did_you_mean(attr, public),
            )
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and issubclass(obj, Tool)) or obj is Tool:
        raise TerrariumError(
            f"The tool reference {ref!r} points at {obj!r}, which is not a Tool subclass."
        )
    if not isinstance(getattr(obj, "name", None), str) or not getattr(obj, "summary", None):
        raise TerrariumError(
            f"The tool class {ref!r} must set the class attributes 'name' and 'summary'."
        )
    return obj


class ToolRegistry:
    """The tools one creature may call, each with the owner that registered it."""

    def __init__(self) -> None:
        self._tools: dict[str, type[Tool]] = {}
        self._owners: dict[str, str] = {}

    def register(self, tool_cls: type[Tool], owner: str) -> None:
        """Add a tool; ``owner`` says who asked (e.g. ``"builtin"``, a config file path)."""
        name = tool_cls.name
        if name in self._tools:
            raise RegistryError(
                f"The tool {name!r} is registered twice: first by {self._owners[name]}, "
                f"then by {owner}."
            )
        self._tools[name] = tool_cls
        self._owners[name] = owner

    def get(self, name: str) -> type[Tool]:
        """The tool class called ``name``; a RegistryError with a suggestion if unknown."""
        try:
            return self._tools[name]
        except KeyError:
            raise RegistryError(
                f"This creature has no tool named {name!r}; it has "
                f"{', '.join(self.names()) or 'no tools'}.",
                suggestion=did_you_mean(name, self.names()),
            ) from None

    def owner(self, name: str) -> str:
        """Who registered ``name``."""
        self.get(name)
        return self._owners[name]

    def names(self) -> list[str]:
        """Registered tool names, sorted, so everything derived from them is deterministic."""
        return sorted(self._tools)

    def tools(self) -> list[type[Tool]]:
        """Registered tool classes in name order."""
        return [self._tools[n] for n in self.names()]

    def specs(self) -> list[CallSpec]:
        """One CallSpec per tool in name order, for call formats and grammars."""
        return [
            CallSpec(name=t.name, description=t.summary, args_model=t.args_model)
            for t in self.tools()
        ]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._tools)

    @classmethod
    def from_refs(cls, refs: list[str], owner: str, base: Path | None = None) -> ToolRegistry:
        """A registry of the tools named by ``refs`` (built-in names or dotted paths;
        ``base``: the creature's folder, searched first for a ref's module)."""
        reg = cls()
        for ref in refs:
            reg.register(resolve_tool(ref, base), owner)
        return reg


__all__ = [
    "BUILTIN_TOOLS",
    "ToolRegistry",
    "known_tool_names",
    "resolve_tool",
]
