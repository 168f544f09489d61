"""The prompt aggregator: deterministic two-zone prompts from facts the runtime owns."""

from terrarium.prompt.budget import (
    TRUNCATED_MARKER,
    EstimateTokenizer,
    TailBudgets,
    Tokenizer,
)
from terrarium.prompt.builder import INFO_TOOL, PromptBuilder, ToolView
from terrarium.prompt.built_prompt import BuiltPrompt, SectionInfo
from terrarium.prompt.cache import PromptCache
from terrarium.prompt.hints import HINT_KEYS
from terrarium.prompt.inputs import (
    ChannelView,
    FieldView,
    NamedOutputView,
    PromptInputs,
    PromptPlugin,
    Skill,
    StaticPlugin,
    TeamMember,
)
from terrarium.prompt.ownership import OwnerTable, SectionTable, VariableTable
from terrarium.prompt.report import format_prompt_report, format_section_map
from terrarium.prompt.tail import TAIL_ORDER, StatusSpec, TailState, Turn, fold_summary
from terrarium.prompt.templates import compile_template

__all__ = [
    "HINT_KEYS",
    "INFO_TOOL",
    "TAIL_ORDER",
    "TRUNCATED_MARKER",
    "BuiltPrompt",
    "ChannelView",
    "EstimateTokenizer",
    "FieldView",
    "NamedOutputView",
    "OwnerTable",
    "PromptBuilder",
    "PromptCache",
    "PromptInputs",
    "PromptPlugin",
    "SectionInfo",
    "SectionTable",
    "Skill",
    "StaticPlugin",
    "StatusSpec",
    "TailBudgets",
    "TailState",
    "TeamMember",
    "Tokenizer",
    "ToolView",
    "Turn",
    "VariableTable",
    "compile_template",
    "fold_summary",
    "format_prompt_report",
    "format_section_map",
]
