"""What the aggregator is given: plain, frozen views of facts the runtime already validated.

The config glue turns validated YAML into these; the aggregator never reads YAML itself, so
the prompt can only say what the runtime actually wired.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from terrarium.tools.base import Tool

SkillMode = Literal["dynamic", "static"]
ChannelType = Literal["queue", "broadcast"]


@dataclass(frozen=True, slots=True)
class FieldView:
    """One field of a channel's message schema, as the prompt shows it."""

    name: str
    type_label: str  # e.g. "str", "int", "list[str]", "enum[a|b]", "object{...}"
    required: bool
    description: str = ""
    default: Any | None = None
    filled: str = ""  # for the sender: the send_fill source the runtime fills it from
    example: Any = None  # the schema's example value, shown instead of a placeholder


@dataclass(frozen=True, slots=True)
class ChannelView:
    """A channel as seen by one creature: its wiring and its schema."""

    name: str
    type: ChannelType
    description: str
    schema_name: str
    fields: tuple[FieldView, ...] = ()
    listen: bool = False
    can_send: bool = False
    listeners: tuple[str, ...] = ()
    senders: tuple[str, ...] = ()
    templated: bool = False  # the listener words these messages itself (message_templates)


@dataclass(frozen=True, slots=True)
class Skill:
    """A named block of know-how; ``source`` is who provided it (its owner)."""

    name: str
    summary: str
    body: str
    source: str


@dataclass(frozen=True, slots=True)
class NamedOutputView:
    """A sink the creature writes to; the default one receives plain text outside calls."""

    name: str
    kind: str
    description: str = ""
    default: bool = False


@runtime_checkable
class PromptPlugin(Protocol):
    """Contributes static text to the prefix; sorted by priority, then name."""

    name: str
    priority: int

    def render(self) -> str: ...


@dataclass(frozen=True, slots=True)
class StaticPlugin:
    """The simplest plugin: fixed text (handy for config-declared plugins and tests)."""

    name: str
    priority: int
    text: str

    def render(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class ToolView:
    """What a persona template may read about a tool (never the class itself)."""

    name: str
    summary: str


@dataclass(frozen=True, slots=True)
class TeamMember:
    """Another creature on the same terrarium."""

    name: str
    description: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptInputs:
    """Everything one creature's prompt is assembled from (per creature run).

    The call format is not among them: the builder is given the format object itself and
    reads its name from there, so the two cannot disagree.
    """

    creature: str
    persona_source: str
    persona_file: Path | None = None
    # every persona file joined along base_config: an include written in a parent's file is
    # found where that file lives, wherever the child is
    persona_files: tuple[Path, ...] = ()
    skill_mode: SkillMode
    tools: tuple[type[Tool], ...] = ()
    skills: tuple[Skill, ...] = ()
    channels: tuple[ChannelView, ...] = ()
    team: tuple[TeamMember, ...] = ()
    hint_overrides: Mapping[str, str] = field(default_factory=dict)
    named_outputs: tuple[NamedOutputView, ...] = ()
    plugins: tuple[PromptPlugin, ...] = ()
    skill_index_budget_bytes: int  # the default lives in the config model
    model: str
    context_window: int
    cwd: Path
    extra_variables: Mapping[str, Any] = field(default_factory=dict)


__all__ = [
    "ChannelType",
    "ChannelView",
    "FieldView",
    "NamedOutputView",
    "PromptInputs",
    "PromptPlugin",
    "Skill",
    "SkillMode",
    "StaticPlugin",
    "TeamMember",
    "ToolView",
]
