"""What loading a creature yields: its merged config with the provenance of each value
(``LoadedCreature``, ``Origin``), a skill file read (``SkillDoc``), and where a creature
reference's config file is. Below both the loader (config/creature.py) and its checks
(config/creature_checks.py), so each can use it without importing the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from terrarium.config.models import CreatureConfig
from terrarium.config.yamlio import KeyPath, YamlDoc
from terrarium.errors import ConfigError

CONFIG_FILE = "config.yaml"


@dataclass(frozen=True, slots=True)
class SkillDoc:
    name: str
    summary: str
    body: str
    source: Path


@dataclass(slots=True)
class Origin:
    """Where a value was written, so later checks can point at the right file and line."""

    doc: YamlDoc
    key_path: KeyPath

    def error(self, message: str, suggestion: str | None = None) -> ConfigError:
        return self.doc.error(self.key_path, message, suggestion)


@dataclass(slots=True)
class LoadedCreature:
    """A creature config after inheritance, with the provenance of its path-valued keys."""

    config: CreatureConfig
    path: Path
    doc: YamlDoc
    chain: list[Path]
    origins: dict[KeyPath, Origin] = field(default_factory=dict)
    prompt_files: list[Path] = field(default_factory=list)  # the persona, joined in order

    @property
    def folder(self) -> Path:
        return self.path.parent

    def persona_text(self) -> str | None:
        """The persona template: the prompt files joined by a blank line (None: default)."""
        files = self.prompt_files or (
            [Path(self.config.system_prompt_file)] if self.config.system_prompt_file else [])
        if not files:
            return None
        return "\n\n".join(f.read_text(encoding="utf-8") for f in files)

    def where(self, *key_path: str | int) -> Origin:
        return self.origins.get(tuple(key_path), Origin(self.doc, tuple(key_path)))


def config_file(path: Path) -> Path:
    """A creature reference may name its folder or its config file."""
    return path / CONFIG_FILE if path.is_dir() else path


# the other names KohakuTerrarium looks for a creature's config under, in its order
KT_CONFIG_FILES = ("config.yml", "config.json", "config.toml")


def kt_config_hint(folder: Path) -> str | None:
    """When ``folder`` has no config.yaml but one of KohakuTerrarium's other names: the
    suggestion that says so (None otherwise)."""
    if (folder / CONFIG_FILE).is_file():
        return None
    found = next((n for n in KT_CONFIG_FILES if (folder / n).is_file()), None)
    if found is None:
        return None
    return (f"KohakuTerrarium's {found} is not read here: terrarium reads only {CONFIG_FILE} "
            f"(`terrarium migrate` writes it from {found})")


__all__ = ["CONFIG_FILE", "KT_CONFIG_FILES", "LoadedCreature", "Origin", "SkillDoc",
           "config_file", "kt_config_hint"]
