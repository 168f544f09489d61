"""pydantic v2 schemas of the files above a creature: a ``terrarium.yaml`` (the team, its
creatures' wiring and its channels), a ``kohaku.yaml`` package manifest and a
``channels/NAME.yaml`` message schema. A creature's own ``config.yaml`` is in
:mod:`terrarium.config.models`, which re-exports these.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from terrarium.config.strict import Strict
from terrarium.voice.speech_config import TranscriptionSettings


class CreatureChannels(Strict):
    listen: list[str] = Field(default_factory=list, description="Channels this creature reads.")
    can_send: list[str] = Field(
        default_factory=list, description="Channels this creature may send on."
    )


class OutputWiring(Strict):
    """KohakuTerrarium's form: turn-end text delivered to a creature (through a channel)."""

    to: str = Field(description="A channel, or a creature (or `root`) to deliver to.")
    with_content: bool = Field(True, description="false: a content-free ping (not supported).")
    prompt: str | None = Field(None, description="Receiver prompt template (not supported).")
    prompt_format: Literal["simple", "jinja"] = Field("simple", description="Template kind.")


class CreatureEntry(Strict):
    name: str = Field(description="Name of the creature inside this terrarium.")
    config: str | None = Field(
        None, description="Creature folder or config.yaml (relative or `@package/...`)."
    )
    base_config: str | None = Field(
        None, description="Like `config`, and any creature key given beside it (prompt file, "
        "controller, tools, ...) overrides that config for this terrarium."
    )
    channels: CreatureChannels = Field(default_factory=CreatureChannels, description="Wiring.")
    output_wiring: list[str | OutputWiring] = Field(
        default_factory=list, description="Where this creature's turn-end text goes: channels, "
        "or creatures (each gets a queue channel named after it that it listens to)."
    )


class ChannelDecl(Strict):
    type: Literal["queue", "broadcast"] = Field(
        "queue", description="queue: one listener per message; broadcast: every listener."
    )
    description: str = Field("", description="What flows on this channel.")
    message_schema: str | dict[str, Any] | None = Field(
        None,
        alias="schema",
        description="A schema name from channels/, a dotted pydantic path, or an inline schema.",
    )
    capacity: int = Field(64, ge=1, le=1_000_000, description="Per-receiver buffer size.")
    max_bytes: int = Field(
        65536, ge=64, le=64 * 1024 * 1024,
        description="Largest message (its payload as UTF-8 JSON); a bigger send is refused "
        "to the sender with the reason.",
    )


class RootSpec(Strict):
    config: str | None = Field(
        None, description="Config of the root creature that operates the team."
    )
    base_config: str | None = Field(
        None, description="Like `config`, with creature keys beside it as overrides (and the "
        "root then hears every channel, as in KohakuTerrarium)."
    )
    listen: list[str] | Literal["*"] = Field(
        default_factory=list, description="Channels the root hears (`*`: every channel)."
    )


class TerrariumSpec(Strict):
    name: str = Field(description="Name of the team.")
    root: RootSpec | None = Field(None, description="Optional operator creature.")
    input_channel: str | None = Field(
        None, description="Channel that user input is sent on (payload `{text: ...}`)."
    )
    creatures: list[CreatureEntry] = Field(min_length=1, description="The team.")
    channels: dict[str, ChannelDecl] = Field(default_factory=dict, description="Channels by name.")
    workspace: str | None = Field(
        None, description="One folder every creature without a `workspace` of its own works "
        "in, as in KohakuTerrarium: `shared` (runs/RUN_ID/workspace) or a folder (relative to "
        "this file). Default: each creature its own runs/RUN_ID/workspace/NAME.",
    )
    transport: Literal["memory", "nats"] = Field(
        "memory", description="Channel transport: `memory` (one process) or `nats` (NATS "
        "JetStream, creatures hosted by workers on many machines; `--broker URL`)."
    )
    transcription: TranscriptionSettings | None = Field(
        None, description="Speech in (`terrarium run --wav FILE` / `--listen`): utterances "
        "cut by voice activity detection are sent to an OpenAI-compatible "
        "`/v1/audio/transcriptions` endpoint and their text is user input."
    )


class TerrariumFile(Strict):
    """A ``terrarium.yaml``."""

    terrarium: TerrariumSpec


class PackageSkill(Strict):
    name: str = Field(description="Skill name creatures may list in `skills`.")
    path: str = Field(description="Skill folder (holding SKILL.md) or markdown file.")
    description: str = Field("", description="One line about the skill.")


class KohakuPackage(Strict):
    """A ``kohaku.yaml`` package manifest."""

    name: str = Field(description="Package name, used in `@name/path` references.")
    version: str = Field("0.0.0", description="Package version.")
    description: str = Field("", description="One line about the package.")
    author: str | None = Field(None, description="Who wrote the package (metadata).")
    license: str | None = Field(None, description="Package license (metadata).")
    repository: str | None = Field(None, description="Where the source lives (metadata).")
    homepage: str | None = Field(None, description="Project page (metadata).")
    keywords: list[str] = Field(default_factory=list, description="Search words (metadata).")
    skills: list[PackageSkill] = Field(
        default_factory=list, description="Skills the package offers, by name."
    )
    llm_profiles: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Named model settings (`controller:` keys); a "
        "creature uses one with `controller.llm: NAME`."
    )
    creatures: list[str] = Field(default_factory=list, description="Creature folders.")
    terrariums: list[str] = Field(default_factory=list, description="Terrarium folders.")
    channels: list[str] = Field(
        default_factory=list, description="Channel schema files or folders."
    )
    framework_hints: dict[str, str] = Field(
        default_factory=dict, description="Package-wide framework hint overrides."
    )


class ChannelSchemaFile(Strict):
    """A ``channels/NAME.yaml`` message schema."""

    name: str | None = Field(None, description="Schema name (default: the file name).")
    description: str = Field("", description="What the message means.")
    fields: dict[str, Any] = Field(description="Field specs by name.")


__all__ = [
    "ChannelDecl",
    "ChannelSchemaFile",
    "CreatureChannels",
    "CreatureEntry",
    "KohakuPackage",
    "OutputWiring",
    "PackageSkill",
    "RootSpec",
    "TerrariumFile",
    "TerrariumSpec",
]
