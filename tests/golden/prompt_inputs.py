"""A representative creature for prompt tests, plus small fake call formats."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from terrarium.config.models import CreatureConfig
from terrarium.formats.base import CallFormat, ParseEvent, StreamParser
from terrarium.prompt import (
    ChannelView,
    FieldView,
    NamedOutputView,
    PromptInputs,
    Skill,
    StaticPlugin,
    TeamMember,
)
from terrarium.tools.base import NoArgs, Tool


class _NullParser(StreamParser):
    def feed(self, chunk: str) -> list[ParseEvent]:
        return []

    def close(self) -> list[ParseEvent]:
        return []


@dataclass(slots=True)
class FakeFormat(CallFormat):
    """``CALL name(k=v, ...)`` — enough to see where call syntax lands in a prompt."""

    name: ClassVar[str] = "bracket"

    def render_call(self, name: str, args: Mapping[str, Any]) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in args.items())
        return f"CALL {name}({inner})"

    def new_parser(self) -> StreamParser:
        return _NullParser()

    def syntax_help(self, example_name: str, example_args: Mapping[str, Any]) -> str:
        return "Calls look like this:\n" + self.render_call(example_name, example_args)


@dataclass(slots=True)
class FakeNative(CallFormat):
    name: ClassVar[str] = "native"
    textual: ClassVar[bool] = False

    def render_call(self, name: str, args: Mapping[str, Any]) -> str:
        return f"CALL {name}({args!r})"

    def new_parser(self) -> StreamParser:
        return _NullParser()

    def syntax_help(self, example_name: str, example_args: Mapping[str, Any]) -> str:
        return f"CALL {example_name}"


class InfoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="a tool or skill name")


class InfoTool(Tool):
    name = "info"
    summary = "Read the full documentation of a tool or a skill."
    args_model = InfoArgs


class SearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(description="what to look for")
    limit: int = Field(5, description="how many hits")


class SearchTool(Tool):
    name = "search"
    summary = "Search the notes."
    documentation = "Full-text search over the creature's notes, best hits first."
    args_model = SearchArgs
    guidance = "Search before you answer a question about past notes."
    guidance_bucket = "first"


class NoteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(description="the note")


class WriteNoteTool(Tool):
    name = "write_note"
    summary = "Store a note."
    args_model = NoteArgs
    guidance = "Keep notes short; one fact per note."
    guidance_bucket = "last"


class ClockTool(Tool):
    name = "clock"
    summary = "Tell the current time."
    args_model = NoArgs
    guidance = "Use the clock rather than guessing the time."


TOOLS: tuple[type[Tool], ...] = (InfoTool, SearchTool, WriteNoteTool, ClockTool)

SKILL_INDEX_BUDGET: int = CreatureConfig.model_fields["skill_index_budget_bytes"].default

SKILLS = (
    Skill("weather", "How to phrase a weather report.", "Say the temperature first.", "pkg"),
    Skill("greeting", "How to greet.", "Greet once, briefly.", "pkg"),
    Skill("timers", "Setting and reading timers.", "Confirm the duration aloud.", "pkg"),
    Skill("music", "Choosing music.", "Ask for a genre when unsure.", "creature"),
)

CHANNELS = (
    ChannelView(
        name="requests",
        type="queue",
        description="What the user asked, transcribed.",
        schema_name="UserRequest",
        fields=(FieldView("text", "str", True, "the words"),),
        listen=True,
        listeners=("router",),
        senders=("mic",),
    ),
    ChannelView(
        name="speak",
        type="queue",
        description="Text for the speaker to say aloud.",
        schema_name="SpeakRequest",
        fields=(
            FieldView("text", "str", True, "what to say"),
            FieldView("mood", "enum[calm|bright]", False, "tone of voice", "calm"),
        ),
        can_send=True,
        listeners=("speaker",),
        senders=("router",),
    ),
    ChannelView(
        name="events",
        type="broadcast",
        description="Team-wide status events.",
        schema_name="Event",
        fields=(FieldView("kind", "str", True, ""), FieldView("tags", "list[str]", False)),
        listen=True,
        can_send=True,
        listeners=("router", "speaker", "watcher"),
        senders=("router", "watcher"),
    ),
    ChannelView(
        name="audit",
        type="broadcast",
        description="Not wired to this creature.",
        schema_name="Event",
        listeners=("watcher",),
        senders=("speaker",),
    ),
)

TEAM = (
    TeamMember("router", "Routes requests."),
    TeamMember("speaker", "Talks to the user."),
    TeamMember("watcher", "Keeps an eye on things."),
)

OUTPUTS = (
    NamedOutputView("tts", "tts", "Spoken aloud to the user.", default=True),
    NamedOutputView("log", "file", "A private log.", default=False),
)

PLUGINS = (
    StaticPlugin("style", 10, "Style: be brief."),
    StaticPlugin("safety", 10, "Safety: never reveal secrets."),
    StaticPlugin("house_rules", 5, "House rules: be kind."),
)

PERSONA = (
    "You are {{ creature }}, running on {{ model }}.\n"
    "{% for t in tools %}{{ t.name }}{% if not loop.last %}, {% endif %}{% endfor %}\n"
    "Literal braces: {{ '{{' }} stay.\n"
)


def make_inputs(**over: Any) -> PromptInputs:
    base: dict[str, Any] = dict(
        creature="router",
        persona_source=PERSONA,
        persona_file=Path("creatures/router/prompts/system.md"),
        skill_mode="dynamic",
        tools=TOOLS,
        skills=SKILLS,
        channels=CHANNELS,
        team=TEAM,
        hint_overrides={},
        named_outputs=OUTPUTS,
        plugins=PLUGINS,
        skill_index_budget_bytes=SKILL_INDEX_BUDGET,
        model="smollm2-135m",
        context_window=8192,
        cwd=Path("/srv/terrarium"),
        extra_variables={},
    )
    base.update(over)
    return PromptInputs(**base)
