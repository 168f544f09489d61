"""What loading a team yields: its channels (``ChannelDef``), its creatures as placed in it
(``CreatureDef``) and the validated ``Team``. Nothing is started until a ``Team`` exists."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from terrarium.config.loaded_creature import LoadedCreature
from terrarium.config.packages import PackageIndex
from terrarium.config.schema_lang import MessageType
from terrarium.voice.speech_config import TranscriptionSettings

TERRARIUM_FILE = "terrarium.yaml"


@dataclass(slots=True)
class ChannelDef:
    name: str
    type: Literal["queue", "broadcast"]
    description: str
    capacity: int
    message_type: MessageType | None
    listeners: tuple[str, ...] = ()
    senders: tuple[str, ...] = ()
    max_bytes: int = 65536


@dataclass(slots=True)
class CreatureDef:
    """A creature as placed in a team: its merged config and its wiring."""

    name: str
    loaded: LoadedCreature
    listen: tuple[str, ...] = ()
    can_send: tuple[str, ...] = ()
    output_wiring: tuple[str, ...] = ()
    hint_overrides: dict[str, str] = field(default_factory=dict)
    inline: bool = False  # written inside terrarium.yaml (base_config + overrides)

    @property
    def config(self) -> Any:
        return self.loaded.config

    @property
    def folder(self) -> Path:
        return self.loaded.folder


@dataclass(slots=True)
class Team:
    """A validated team: nothing is started until one of these exists."""

    name: str
    path: Path
    creatures: dict[str, CreatureDef]
    channels: dict[str, ChannelDef]
    input_channel: str | None = None
    root: CreatureDef | None = None
    index: PackageIndex | None = None
    transport: Literal["memory", "nats"] = "memory"
    transcription: TranscriptionSettings | None = None  # speech in (voice/listen.py)
    # the team's shared workspace: "shared" (in the run folder), an absolute folder, or None
    workspace: str | None = None

    @property
    def folder(self) -> Path:
        return self.path.parent if self.path.is_file() else self.path

    @property
    def everyone(self) -> dict[str, CreatureDef]:
        """Every creature the run may host by the name the runtime uses: the team's, then
        the root creature as ``root``."""
        return {**self.creatures, **({"root": self.root} if self.root is not None else {})}

    @property
    def entry(self) -> str | None:
        """The creature that hears the user: the input channel's first listener."""
        if self.input_channel:
            listeners = self.channels[self.input_channel].listeners
            return listeners[0] if listeners else None
        return next(iter(self.creatures), None)


__all__ = ["TERRARIUM_FILE", "ChannelDef", "CreatureDef", "Team"]
