"""pydantic v2 schemas of every YAML file terrarium reads: a creature's ``config.yaml``
here, and re-exported from :mod:`terrarium.config.team_models` the files above a creature
(``terrarium.yaml``, ``kohaku.yaml``, ``channels/NAME.yaml``), so every name is here.

Field names follow KohakuTerrarium's config keys (``config/kohaku_compat.py`` translates
the ones that differ). Every model forbids unknown keys; :mod:`terrarium.config.located`
turns pydantic's complaints into located ``ConfigError``s with "did you mean" suggestions.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from terrarium.config.strict import Strict
from terrarium.config.team_models import (
    ChannelDecl,
    ChannelSchemaFile,
    CreatureChannels,
    CreatureEntry,
    KohakuPackage,
    OutputWiring,
    PackageSkill,
    RootSpec,
    TerrariumFile,
    TerrariumSpec,
)
from terrarium.llm.settings import ModelSettings
from terrarium.prompt.tail import StatusSpec

HINT_KEYS = ("output_model", "execution_dynamic", "execution_static", "execution_native")
OUTPUT_TYPES = ("tts", "stdout", "file")
MAX_ITERATIONS = 100  # model rounds in one turn, at most
FillSource = Literal["input", "recalled", "recent", "facts", "notes"]


@functools.lru_cache(maxsize=512)
def rule_regex(pattern: str) -> re.Pattern[str]:
    """A choice rule's pattern, compiled once (case-insensitive)."""
    return re.compile(pattern, re.IGNORECASE)


class ChoiceRule(Strict):
    """Decides a one-value call's value when the input matches, without asking the model."""

    pattern: str = Field(description="A regular expression searched in the input, "
                         "case-insensitively.")
    unless: str | None = Field(None, description="A regular expression that, found in the "
                               "input (case-insensitively), keeps the rule from deciding: "
                               "\"thanks\" is not the intent of \"Thanks! And where do I "
                               "live?\". One pattern can serve several rules (a YAML anchor).")
    value: str = Field(description="The value chosen when it matches.")

    @field_validator("pattern", "unless")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                rule_regex(v)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return v

    def decides(self, text: str) -> bool:
        """Whether this rule decides for ``text``: its pattern is found, its ``unless`` not."""
        return rule_regex(self.pattern).search(text) is not None and (
            self.unless is None or rule_regex(self.unless).search(text) is None)


class ReplyGuardSpec(Strict):
    """A spoken reply's guard (terrarium/controller/guard.py): fixed replies by intent, and
    no echo of the user's words."""

    words_field: str = Field("user_said", description="The incoming field holding the "
                             "user's words, which a reply must not repeat.")
    intent_field: str = Field("intent", description="The incoming field holding the intent.")
    facts_field: str | None = Field(None, description="The incoming field holding the user's "
                                    "facts (\"Ada is my name.\"): a reply with nothing but "
                                    "echoes says them back to the user (\"Ada is your name.\").")
    replies: dict[str, str] = Field(default_factory=dict, description="Intent -> the reply "
                                    "the runtime speaks itself, without the model.")
    echo_reply: str = Field("Sorry, I am not sure about that.", description="Said instead "
                            "of a reply whose every sentence repeats the user's words (or was "
                            "cut off), when there are no facts to say.")
    unknown_reply: str | None = Field(None, description="For a question about the user "
                                      "(\"Where am I from?\"): said when nothing they told "
                                      "is recalled (`facts_field` empty), and instead of a "
                                      "reply that uses nothing of what was recalled when none "
                                      "of it is about the question. Such replies are checked "
                                      "whole: never of the user as the speaker, never about "
                                      "chatbots.")
    release_first_clause: bool = Field(False, description="Speak the reply's first sentence "
                                       "from its start, and then whole, once its first words "
                                       "leave the echo far: the rest would have to repeat at "
                                       "least four more of the user's words (guard.safe_start)"
                                       ", instead of holding it to its "
                                       "end: the first audio starts on the first clause. For "
                                       "replies that end only at a sentence end (a tts "
                                       "output's max_sentences).")
    ask_again: int = Field(0, ge=0, le=2, description="With `release_first_clause`: when "
                           "the rest of a first sentence spoken from its start would repeat "
                           "the user with no clause end to stop at and no phrase of the "
                           "user's to leave out, ask the model this many "
                           "times at most to continue what was spoken instead, steered away "
                           "from the user's words not yet said (logit_bias); then it is "
                           "spoken as written. Needs a model that continues a reply and "
                           "knows its tokens (the embedded one); 0: spoken as written.")
    say_note: bool = Field(False, description="For a question about the user with a note "
                           "about it (reply_words.note_about): say that note back to them "
                           "(\"You're originally from Nairobi.\"), at once and without the "
                           "model, as `unknown_reply` is said when none is; with false the "
                           "model answers and the note is said only when its answer fails.")


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
        "break at this length is cut at its last word break, or at the first one after it "
        "when a long word crosses it (a long opening clause would hold back the first audio)."
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
    synthesize_early: bool = Field(
        False, description="For `tts` outputs whose creature has a reply guard: synthesize "
        "a reply's first piece from the model's own text while the guard still holds it "
        "(beside the model), and speak that audio if the guard lets the same piece through."
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


class EnvValue(Strict):
    """A value read from the environment when the server starts, never written in the YAML.

    ``{env: MY_TOKEN}`` is the variable's value; ``{env: MY_TOKEN, prefix: "Bearer "}`` puts
    text before it (an Authorization header).
    """

    env: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                     description="Name of the environment variable.")
    prefix: str = Field("", description="Text put before the variable's value.")


# A header or environment value: literal text (not for secrets), or {env: NAME, prefix: ...}.
SecretValue = str | EnvValue


class McpServerConfig(Strict):
    """One MCP server: started with ``command`` (stdio) or reached at ``url`` (HTTP).

    One model for both kinds, so a mistyped key gets one clear "unknown key" with a
    suggestion; which keys go with which kind is checked with the creature
    (``config.creature``).
    """

    command: str | None = Field(None, description="stdio: the program to run (on PATH, or a "
                                "path relative to this file).")
    args: list[str] = Field(default_factory=list, description="stdio: its arguments.")
    env: dict[str, SecretValue] = Field(
        default_factory=dict, description="stdio: extra environment variables, literal text "
        "or `{env: NAME}` (taken from terrarium's own environment)."
    )
    cwd: str | None = Field(None, description="stdio: working directory (relative to this "
                            "file; default: the folder of the file that declares the server).")
    url: str | None = Field(None, pattern=r"^https?://",
                            description="streamable HTTP: the server's MCP endpoint URL.")
    headers: dict[str, SecretValue] = Field(
        default_factory=dict, description="streamable HTTP: headers, literal text or "
        "`{env: NAME}` / `{env: NAME, prefix: 'Bearer '}` (secrets stay out of the YAML)."
    )
    timeout: float = Field(60.0, gt=0, le=3600, description="Seconds a tool call may take.")
    startup_timeout: float = Field(30.0, gt=0, le=600, description="Seconds to connect and "
                                   "list the tools at start.")

    @property
    def kind(self) -> Literal["stdio", "http"]:
        return "http" if self.url is not None else "stdio"


class LifecyclePluginConfig(Strict):
    """A Python plugin hooked into the turn loop (``terrarium.controller.plugins``)."""

    module: str = Field(description="`package.module:Class`, or a shipped plugin's name: "
                        "`tool_budget`, `redactor`.")
    name: str | None = Field(None, description="Unique name (default: the class's `name`).")
    priority: int = Field(100, description="Lower runs first; ties are ordered by name.")
    options: dict[str, Any] = Field(default_factory=dict, description="Passed to the plugin.")


def _cron_valid(expr: str) -> bool:
    """Whether croniter reads ``expr``; imported on first use, since most teams have no cron
    trigger and croniter costs ~20 ms at every start."""
    from croniter import croniter

    return bool(croniter.is_valid(expr))


def _cron_fires(expr: str) -> bool:
    """Whether a valid cron expression names any moment at all (``0 0 30 2 *``, February
    30th, names none: croniter gives up looking)."""
    from croniter import CroniterBadDateError, croniter

    try:
        croniter(expr).get_next(float)
    except CroniterBadDateError:
        return False
    return True


class TriggerConfig(Strict):
    """Something that wakes a creature without anyone writing to it."""

    type: Literal["timer", "cron", "idle", "startup"] = Field(
        description="timer: every `every` seconds; cron: on the `cron` schedule; idle: after "
        "`after` seconds without input; startup: once when the run starts.")
    name: str | None = Field(None, description="Shown as the message's sender detail "
                             "(default: the type).")
    every: float | None = Field(None, gt=0, description="timer: seconds between firings.")
    cron: str | None = Field(None, description="cron: a five-field cron expression.")
    after: float | None = Field(None, gt=0, description="idle: seconds without input.")
    text: str = Field("", description="The message text (default: says which trigger fired).")
    channel: str | None = Field(None, description="Send on this channel (as `trigger`) "
                                "instead of straight into the creature's inbox.")

    @model_validator(mode="after")
    def _needs_its_key(self) -> TriggerConfig:
        need = {"timer": "every", "cron": "cron", "idle": "after"}.get(self.type)
        if need is not None and getattr(self, need) is None:
            raise ValueError(f"a {self.type} trigger needs `{need}`")
        if self.cron is not None and not _cron_valid(self.cron):
            raise ValueError(f"{self.cron!r} is not a cron expression (five fields: "
                             "minute hour day-of-month month day-of-week)")
        if self.cron is not None and not _cron_fires(self.cron):
            raise ValueError(f"the cron expression {self.cron!r} never fires: no date "
                             "matches it (such as February 30th)")
        return self


class SubagentConfig(Strict):
    """A creature this one can hand a task to, as a tool call, and get its answer from."""

    config: str = Field(description="The sub-agent's creature folder or config.yaml "
                        "(relative to this file).")
    description: str = Field("", description="What to hand it (default: its description).")
    overrides: dict[str, Any] = Field(
        default_factory=dict, description="Creature keys that override its config here.")
    inputs: dict[str, Literal["str", "int", "float", "bool"]] = Field(
        default_factory=dict, description="Extra typed arguments of the call: name → type "
        "(str, int, float, bool), handed to the sub-agent with the task.")
    max_iterations: int | None = Field(None, ge=1, le=100, description="Rounds per run.")
    max_tokens: int | None = Field(None, ge=1, description="Completion tokens per model call.")
    timeout: float = Field(300.0, gt=0, description="Seconds a run may take.")


class CompactionConfig(Strict):
    """How the oldest turns fold when the conversation outgrows the context window."""

    mode: Literal["fold", "summarize"] = Field(
        "fold", description="fold: one deterministic line (counts, the first ask); summarize: "
        "a summary written by the creature's model (or `subagent`), once per fold block.")
    subagent: str | None = Field(
        None, description="With summarize: the sub-agent (a key of `subagents`) that writes "
        "the summary instead of the creature's own model.")
    max_tokens: int = Field(
        200, ge=64, le=4096, description="With summarize: the summary's length at most; the "
        "fold budgets its line at this many tokens.")

    @classmethod
    def of(cls, value: str | CompactionConfig) -> CompactionConfig:
        """The long form of a creature's ``compaction`` (a bare mode is ``{mode: ...}``)."""
        return value if isinstance(value, CompactionConfig) else cls(mode=value)  # type: ignore[arg-type]

    @model_validator(mode="after")
    def _subagent_summarizes(self) -> CompactionConfig:
        if self.subagent is not None and self.mode != "summarize":
            raise ValueError("`subagent` names who summarizes: it needs `mode: summarize`")
        return self


class CreatureConfig(Strict):
    """A creature's ``config.yaml``."""

    name: str | None = Field(None, description="The creature's name (required after merging).")
    version: str | None = Field(None, description="Informational version of this creature.")
    description: str = Field("", description="One line shown to teammates.")
    base_config: str | None = Field(
        None, description="A config to inherit from: a relative path or `@package/path`."
    )
    system_prompt_file: str | None = Field(
        None, description="Jinja2 persona template (relative to this file)."
    )
    allow_outside_paths: bool = Field(
        False, description="Let this file's `system_prompt_file` and prompt plugin files lie "
        "outside its folder and its package (refused otherwise; symlinks are followed first)."
    )
    prompt_mode: Literal["concat", "replace"] = Field(
        "concat", description="concat: the persona is the prompt files along the base_config "
        "chain, parent first, joined by a blank line; replace: this file's prompt only."
    )
    no_inherit: list[str] = Field(
        default_factory=list, description="Keys whose inherited value is dropped, not merged."
    )
    controller: ModelSettings | None = Field(None, description="LLM settings.")
    tools: list[str] = Field(
        default_factory=list, description="Tool names or dotted paths `pkg.mod:Class`."
    )
    skills: list[str] = Field(
        default_factory=list, description="Skill markdown files or folders (relative paths), "
        "names of package skills, or `*` for every package skill."
    )
    skill_mode: Literal["dynamic", "static"] = Field(
        "dynamic", description="dynamic: index + `info` on demand; static: full docs inline."
    )
    # the registered formats (terrarium.formats.FORMAT_NAMES); tests/config/test_config_settings.py
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
    max_iterations: int = Field(6, ge=1, le=MAX_ITERATIONS, description="Model rounds per "
                                "turn at most (KohakuTerrarium's run-wide budget of 0, null or "
                                f"over {MAX_ITERATIONS} is a \"not supported\" line).")
    tool_choice: Literal["auto", "required"] = Field(
        "auto", description="required: every reply must be calls only (grammar-enforced)."
    )
    prompt_status: bool | StatusSpec = Field(
        True, description="The status block of the prompt tail: true (the date, by the day), "
        "false (none), or {date: day|minute|second|off, step: false|true}. It is re-sent only "
        "when it changes, so a timestamp or step counter costs its tokens on every step."
    )
    history_turns: int | None = Field(
        None, ge=0, description="Keep only this many earlier messages at each turn's start "
        "(0: every turn starts fresh; default: all that fit the window, old ones folded)."
    )
    double_texting: Literal["enqueue", "merge"] = Field(
        "enqueue", description="Messages that wait while a turn runs: enqueue (a turn each) or "
        "merge (a turn takes every message waiting on its channel, in order; docs/serve.md).")
    double_texting_wait: float = Field(
        0.0, ge=0, le=5, description="merge: seconds a turn waits for more messages on its "
        "channel before it starts (each one restarts the wait; 10 times it at most).")
    compaction: Literal["fold", "summarize"] | CompactionConfig = Field(
        "fold", description="How old turns fold when the window is full: fold (a "
        "deterministic line), summarize (the creature's model summarizes each fold block), "
        "or {mode: summarize, subagent: NAME, max_tokens: N}."
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
    memory_notes: int = Field(
        0, ge=0, le=10, description="Recall this many of the user's own earlier statements "
        "about what each new input asks, however they were phrased (searched with its "
        "subject words and related ones; for a question about the user, their latest "
        "statements follow): send_fill source `notes`. Needs `memory_record`."
    )
    choice_rules: list[ChoiceRule] = Field(
        default_factory=list, description="For a creature whose every reply is one call of "
        "one fixed-choice value: patterns that decide the value from the input without the "
        "model (first match wins); otherwise the model's likelihood of each value decides."
    )
    reply_guard: ReplyGuardSpec | None = Field(
        None, description="Fixed replies by intent and no echo of the user's words, for a "
        "creature whose default output is spoken."
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
        "memory_facts) or `notes` (the user's earlier statements about the input, needs "
        "memory_notes)."
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
    workspace: str | None = Field(
        None, description="Folder the file and shell tools work in (relative to this file; "
        "created when missing; default: runs/RUN_ID/workspace/NAME for a creature with "
        "shell, edit, multi_edit, grep, glob or tree)."
    )
    tool_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per-tool settings: tool name → options, e.g. "
        "`shell: {timeout: 30, allowed_commands: ['pytest*']}`; each tool checks its own keys."
    )
    channel_call: bool = Field(
        False, description="Also offer one `send_channel(channel, message)` call for every "
        "channel the creature may send on (KohakuTerrarium's form; `send_channel` or "
        "`send_message` in `tools` sets it), besides each channel's `send_<channel>` call."
    )
    approve: list[str] = Field(
        default_factory=list, description="Tools whose every call waits for a human's yes "
        "(terminal prompt or monitor; `terrarium run --yes` approves all), e.g. "
        "`[shell, edit, write_file]`; `*`: every tool. A no, or nobody there to ask, comes "
        "back to the model as the call's result."
    )
    prompt_plugins: list[PromptPluginConfig] = Field(
        default_factory=list, description="Extra static prompt blocks."
    )
    mcp_servers: dict[str, McpServerConfig] = Field(
        default_factory=dict, description="MCP servers by name: `{command, args, env}` "
        "(stdio) or `{url, headers}` (streamable HTTP). Each server's tools become this "
        "creature's tools, named `<server>__<tool>`."
    )
    variables: dict[str, Any] = Field(
        default_factory=dict, description="Extra template variables (owner: config)."
    )
    plugins: list[LifecyclePluginConfig] = Field(
        default_factory=list, description="Lifecycle plugins hooked into the turn loop.")
    triggers: list[TriggerConfig] = Field(
        default_factory=list, description="Timers, cron schedules, idle and startup wake-ups.")
    subagents: dict[str, str | SubagentConfig] = Field(
        default_factory=dict, description="name → a creature config (or {config, overrides, "
        "limits}); each is a tool whose answer is the sub-agent's final reply.")
    subagent_depth: int = Field(
        2, ge=1, le=8, description="How deep sub-agents may nest (a sub-agent's own).")
    subagent_concurrency: int = Field(
        4, ge=1, le=64, description="Sub-agent runs at once, per creature's run.")
    background: dict[str, bool] = Field(
        default_factory=dict, description="Calls (tools or sub-agents) that may run as "
        "background jobs → whether they do by default; each gets a `background` argument, "
        "and the creature gets `jobs`, `wait` and `read_job`.")


__all__ = [
    "HINT_KEYS",
    "MAX_ITERATIONS",
    "OUTPUT_TYPES",
    "ChannelDecl",
    "ChannelSchemaFile",
    "ChoiceRule",
    "CreatureChannels",
    "CreatureConfig",
    "CreatureEntry",
    "EnvValue",
    "FillSource",
    "KohakuPackage",
    "LifecyclePluginConfig",
    "McpServerConfig",
    "NamedOutput",
    "OutputConfig",
    "OutputWiring",
    "PackageSkill",
    "PromptPluginConfig",
    "RootSpec",
    "SecretValue",
    "Strict",
    "SubagentConfig",
    "TerrariumFile",
    "TerrariumSpec",
    "TriggerConfig",
]
