"""pydantic v2 schemas of every YAML file terrarium reads.

Field names follow KohakuTerrarium's vocabulary (DESIGN.md §3). Every model forbids
unknown keys; :mod:`terrarium.config.errors` turns pydantic's complaints into located
``ConfigError``s with "did you mean" suggestions.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from terrarium.llm.settings import ControllerSettings

HINT_KEYS = ("output_model", "execution_dynamic", "execution_static", "execution_native")
OUTPUT_TYPES = ("tts", "stdout", "file")
FillSource = Literal["input", "recalled", "recent", "facts"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ChoiceRule(Strict):
    """Decides a one-value call's value when the input matches, without asking the model."""

    pattern: str = Field(description="A regular expression searched in the input, "
                         "case-insensitively.")
    value: str = Field(description="The value chosen when it matches.")


class NamedOutput(Strict):
    """A sink a creature can write text to."""

    type: Literal["tts", "stdout", "file"] = Field(
        description="tts: spoken by Piper; stdout: printed; file: appended to `path`."
    )
    description: str = Field("", description="What this output is for (shown in the prompt).")
    path: str | None = Field(None, description="For `file` outputs: the file to append to.")
    voice: str | None = Field(
        None, description="For `tts` outputs: path of a Piper .onnx voice (default: bundled joe)."
    )
    first_clause_chars: int | None = Field(
        None, ge=4, description="For `tts` outputs: let the first piece of a reply end at a "
        "comma once it is this long, so speech starts sooner."
    )
    first_piece_max_chars: int | None = Field(
        None, ge=8, description="For `tts` outputs: a reply's first piece still without a "
        "break at this length is cut at its last word break (a long opening clause would "
        "hold back the first audio)."
    )
    max_sentences: int | None = Field(
        None, ge=1, le=20, description="For `tts` outputs that are a creature's default: a "
        "reply ends after this many sentences (the grammar makes the model stop there; "
        "needs a grammar, as llama.cpp backends have)."
    )
    yield_first_audio: bool = Field(
        True, description="For `tts` outputs: pause the model while the first piece of a "
        "reply is synthesized, when the model runs on this machine and can continue a reply."
    )


class OutputConfig(Strict):
    default: str | None = Field(
        None, description="Named output that receives the creature's plain text as it streams."
    )
    named_outputs: dict[str, NamedOutput] = Field(
        default_factory=dict, description="Named outputs by name."
    )


class PromptPluginConfig(Strict):
    name: str = Field(description="Unique plugin name.")
    priority: int = Field(100, description="Lower comes first; ties are ordered by name.")
    text: str | None = Field(None, description="Static text added to the prompt prefix.")
    file: str | None = Field(None, description="A file whose text is added (relative path).")


class CreatureConfig(Strict):
    """A creature's ``config.yaml``."""

    name: str | None = Field(None, description="The creature's name (required after merging).")
    description: str = Field("", description="One line shown to teammates.")
    base_config: str | None = Field(
        None, description="A config to inherit from: a relative path or `@package/path`."
    )
    system_prompt_file: str | None = Field(
        None, description="Jinja2 persona template (relative to this file)."
    )
    controller: ControllerSettings | None = Field(None, description="LLM settings.")
    tools: list[str] = Field(
        default_factory=list, description="Tool names or dotted paths `pkg.mod:Class`."
    )
    skills: list[str] = Field(
        default_factory=list, description="Skill markdown files (relative paths)."
    )
    skill_mode: Literal["dynamic", "static"] = Field(
        "dynamic", description="dynamic: index + `info` on demand; static: full docs inline."
    )
    # the registered formats (terrarium.formats.FORMAT_NAMES); tests/test_config_settings.py
    # keeps the two equal, the order here is the order of the validation message
    tool_format: Literal["bracket", "xml", "native"] = Field(
        "bracket", description="Call syntax the model writes."
    )
    output: OutputConfig = Field(default_factory=OutputConfig, description="Named outputs.")
    framework_hint_overrides: dict[str, str] = Field(
        default_factory=dict, description="Override or omit ('') framework hint blocks."
    )
    skill_index_budget_bytes: int = Field(
        4096, ge=64, description="UTF-8 byte budget of the skill index."
    )
    max_iterations: int = Field(6, ge=1, le=100, description="Model rounds per turn at most.")
    tool_choice: Literal["auto", "required"] = Field(
        "auto", description="required: every reply must be calls only (grammar-enforced)."
    )
    prompt_status: bool = Field(
        True, description="Show the status block (step number, date) in the prompt tail; "
        "false saves its tokens on every turn of a latency-critical creature."
    )
    history_turns: int | None = Field(
        None, ge=0, description="Keep only this many earlier messages at each turn's start "
        "(0: every turn starts fresh; default: all that fit the window, old ones folded)."
    )
    memory_record: bool = Field(
        False, description="Write the text of every message this creature receives to memory."
    )
    memory_recent: int = Field(
        0, ge=0, le=50, description="The newest facts this creature recorded, recalled into "
        "the prompt tail each turn (recent exchanges, even without history)."
    )
    memory_recall: int = Field(
        0, ge=0, le=50, description="Facts recalled from memory into the prompt tail each turn."
    )
    memory_facts: int = Field(
        0, ge=0, le=20, description="Keep what the user says about themselves (name, age, "
        "place, likes, job, read from their words without a model) as facts, and recall this "
        "many that match each new input (send_fill source `facts`)."
    )
    choice_rules: list[ChoiceRule] = Field(
        default_factory=list, description="For a creature whose every reply is one call of "
        "one fixed-choice value: patterns that decide the value from the input without the "
        "model (first match wins); otherwise the model's likelihood of each value decides."
    )
    memory_in_prompt: bool = Field(
        True, description="Show the recent and recalled facts in the prompt tail; false keeps "
        "them out (a shorter prompt is faster) and leaves them to `send_fill`."
    )
    send_fill: dict[str, dict[str, FillSource]] = Field(
        default_factory=dict, description="Message fields the runtime fills in, so the model "
        "never writes them: channel → field → `input` (the text this turn answers, verbatim), "
        "`recalled` (the memory matches, needs memory_recall) or `recent` (the newest "
        "records, needs memory_recent) or `facts` (the user's matching facts, needs "
        "memory_facts)."
    )
    message_templates: dict[str, str] = Field(
        default_factory=dict, description="How messages on a channel this creature listens to "
        "reach its model: channel → Jinja template over the message's fields (default: a "
        "`[channel from sender]` header and `key: value` lines)."
    )
    readable_paths: list[str] = Field(
        default_factory=list, description="Roots `read_file` may read (relative to this file)."
    )
    writable_paths: list[str] = Field(
        default_factory=list, description="Roots `write_file` may write."
    )
    prompt_plugins: list[PromptPluginConfig] = Field(
        default_factory=list, description="Extra static prompt blocks."
    )
    variables: dict[str, Any] = Field(
        default_factory=dict, description="Extra template variables (owner: config)."
    )


class CreatureChannels(Strict):
    listen: list[str] = Field(default_factory=list, description="Channels this creature reads.")
    can_send: list[str] = Field(
        default_factory=list, description="Channels this creature may send on."
    )


class CreatureEntry(Strict):
    name: str = Field(description="Name of the creature inside this terrarium.")
    config: str = Field(description="Creature folder or config.yaml (relative or `@package/...`).")
    channels: CreatureChannels = Field(default_factory=CreatureChannels, description="Wiring.")
    output_wiring: list[str] = Field(
        default_factory=list, description="Channels that receive this creature's turn-end text."
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


class RootSpec(Strict):
    config: str = Field(description="Config of the root creature that operates the team.")


class TerrariumSpec(Strict):
    name: str = Field(description="Name of the team.")
    root: RootSpec | None = Field(None, description="Optional operator creature.")
    input_channel: str | None = Field(
        None, description="Channel that user input is sent on (payload `{text: ...}`)."
    )
    creatures: list[CreatureEntry] = Field(min_length=1, description="The team.")
    channels: dict[str, ChannelDecl] = Field(default_factory=dict, description="Channels by name.")


class TerrariumFile(Strict):
    """A ``terrarium.yaml``."""

    terrarium: TerrariumSpec


class KohakuPackage(Strict):
    """A ``kohaku.yaml`` package manifest."""

    name: str = Field(description="Package name, used in `@name/path` references.")
    version: str = Field("0.0.0", description="Package version.")
    description: str = Field("", description="One line about the package.")
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
