"""The one team a command works on, from its PATH: a package (``kohaku.yaml``) is not one.

``run``, ``serve``, ``worker``, ``prompt``, ``tools`` and ``graph`` each take one
terrarium or creature. Given a package, they refuse it as what it is, a wrong PATH
(exit 2, as every configuration error: nothing started), and name what inside it to give
instead, by name and folder, with the command to type; before, each said "is a package"
with an example unrelated to it, and exited 1 as if the run had failed.
"""

from __future__ import annotations

import os
from pathlib import Path

from terrarium.config import Team, load_any
from terrarium.config.packages import MANIFEST, PackageIndex
from terrarium.errors import ConfigError, ConfigErrors, Location

__all__ = ["load_one_team", "package_refusal"]


def load_one_team(path: Path, command: str, creature: str = "") -> Team:
    """The team at ``path``; a package is refused (``package_refusal``)."""
    result = load_any(path)
    if isinstance(result, Team):
        return result
    raise package_refusal(path, *result, command, creature)


def package_refusal(path: Path, index: PackageIndex, teams: list[Team], command: str,
                    creature: str = "") -> ConfigErrors:
    """``command`` was given the package at ``path``: its terrariums and creatures, each
    as the command that would take it; with ``creature`` (``prompt``, ``tools``), those
    that have a creature of that name, when any does."""
    root = (path.parent if path.is_file() else path).resolve()
    pkg = index.owning(root / MANIFEST)
    entries: list[tuple[Path, str, list[str]]] = []  # (folder, what, its creatures' names)
    for team in teams:
        entries.append((team.folder, f"terrarium {team.name!r}", list(team.everyone)))
    if pkg is not None and command != "graph":  # a creature's graph is one box
        for rel in pkg.manifest.creatures:
            folder = root / rel
            entries.append((folder, f"creature {folder.stem!r}", [folder.stem]))
    if creature and any(creature in names for _, _, names in entries):
        entries = [e for e in entries if creature in e[2]]
    tail = f" {creature}" if creature else ""
    if entries:
        lines = [f"terrarium {command} {_shown(folder)}{tail}" for folder, _, _ in entries]
        width = max(len(line) for line in lines)
        hint = "give one of them instead:\n      " + "\n      ".join(
            f"{line:<{width}}   # {what}" for line, (_, what, _) in zip(lines, entries,
                                                                     strict=True))
    else:
        hint = "its manifest lists no terrarium or creature; give a terrarium or creature folder"
    name = f" {pkg.name!r}" if pkg is not None else ""
    return ConfigErrors([ConfigError(
        f"{path} is the package{name} ({MANIFEST}), and `terrarium {command}` takes one "
        "terrarium or creature, not a package", location=Location(root / MANIFEST),
        suggestion=hint)])


def _shown(folder: Path) -> str:
    """The folder as the user would type it: relative to here when under it."""
    try:
        return os.path.relpath(folder) if folder.is_relative_to(Path.cwd()) else str(folder)
    except ValueError:  # another drive (Windows)
        return str(folder)
