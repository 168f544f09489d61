"""PromptBuilder: assemble the byte-stable prefix once, rebuild only the tail each step.

The prefix (persona → tools → guidance → skills → channels → hints → outputs → plugins) is
rendered at construction, so template and registry mistakes fail before the first turn and a
llama.cpp slot can reuse the cached prefix on every step. Only :meth:`build` runs per step.

A restart with the same frozen inputs is cheap: views, sections, call facts and the joined,
hashed and counted prefix are memoized on the identity of the input tuples, while every
duplicate check still runs on the first sight of a tuple and the persona is rendered anew.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Any

from terrarium.errors import PromptError
from terrarium.formats.base import CallFormat, output_call_name, send_call_name
from terrarium.prompt.budget import DEFAULT_TOKENIZER, TailBudgets, Tokenizer
from terrarium.prompt.built import BuiltPrompt, SectionInfo
from terrarium.prompt.examples import fields_example, model_example
from terrarium.prompt.hints import HintFacts, resolve_hints, syntax_help_of
from terrarium.prompt.inputs import (
    ChannelView,
    FieldView,
    NamedOutputView,
    PromptInputs,
    Skill,
    TeamMember,
)
from terrarium.prompt.owners import Registry, SectionRegistry, VariableRegistry
from terrarium.prompt.sections import (
    channels_section,
    clear_section_caches,
    guidance_section,
    outputs_section,
    skills_section,
    tools_section,
)
from terrarium.prompt.tail import TailAssembler, TailState
from terrarium.prompt.templates import compile_template, register_data_view
from terrarium.prompt.views import (
    IdentityCache,
    channels_view,
    clear_view_caches,
    identity_memo,
    outputs_view,
    plugins_view,
    skills_view,
    team_view,
    tool_owner,
    tools_view,
)
from terrarium.tools.base import Tool

INFO_TOOL = "info"


@dataclass(frozen=True, slots=True)
class ToolView:
    """What a persona template may read about a tool (never the class itself)."""

    name: str
    summary: str


_BY_NAME = attrgetter("name")
for _view in (ToolView, ChannelView, FieldView, Skill, TeamMember, NamedOutputView):
    register_data_view(_view)


@lru_cache(maxsize=1024)
def _tool_view(tool: type[Tool]) -> ToolView:
    return ToolView(tool.name, tool.summary)


def _tool_views_of(tools: tuple[type[Tool], ...]) -> tuple[ToolView, ...]:
    return tuple(map(_tool_view, tools))


_tool_views = IdentityCache(_tool_views_of)


@identity_memo
def _call_names(
    raw_tools: tuple[type[Tool], ...],
    tools: tuple[type[Tool], ...],
    channels: tuple[ChannelView, ...],
    outputs: tuple[NamedOutputView, ...],
) -> tuple[str, ...]:
    """Every call this creature can make, sorted; a send or output call may not shadow a tool."""
    calls: Registry[str] = Registry("call name")
    calls.register_many(
        (send_call_name(c.name), "send", f"channel {c.name!r}") for c in channels if c.can_send
    )
    calls.register_many(
        (output_call_name(o.name), "output", f"named output {o.name!r}")
        for o in outputs
        if not o.default
    )
    _, tool_names = tools_view(raw_tools)
    if not tool_names.isdisjoint(calls.as_dict()):  # slow path only to name the clash
        calls.register_many((t.name, "tool", tool_owner(t)) for t in tools)
    return tuple(sorted(tool_names.union(calls.as_dict())))


@identity_memo
def _call_facts(
    tools: tuple[type[Tool], ...],
    channels: tuple[ChannelView, ...],
    outputs: tuple[NamedOutputView, ...],
    fmt: CallFormat,
    native: bool,
    skill_mode: str,
) -> tuple[HintFacts, str, str]:
    """(hint facts, info note, skill reach line): all a pure function of the sorted views."""
    has_info = any(t.name == INFO_TOOL for t in tools)
    example_name, example_args = _example_call(tools, channels, outputs)
    if has_info:
        info_example = "" if native else _info_example(tools, fmt, example_name)
        info_note = (
            f"Full documentation of a tool comes from an `{INFO_TOOL}` call with the tool's name."
        )
        reach = f"Read a skill's full text with an `{INFO_TOOL}` call giving its name."
    else:
        info_example = info_note = ""
        reach = "Ask for a skill by name and its full text is loaded into your context."
    show = not native and bool(example_name)
    facts = HintFacts(
        native=native,
        skill_mode=skill_mode,
        tool_names=tuple(t.name for t in tools),
        info_tool=has_info,
        info_example=info_example,
        example_call=fmt.render_call(example_name, example_args) if show else "",
        syntax_help=syntax_help_of(fmt, example_name, example_args) if show else "",
        has_sends=any(c.can_send for c in channels),
        # how channel messages look is said only for those not worded by a template
        listens=any(c.listen and not c.templated for c in channels),
        default_output=next((f"`{o.name}` output ({o.kind})" for o in outputs if o.default), ""),
        extra_outputs=any(not o.default for o in outputs),
    )
    return facts, info_note, reach


def _info_example(tools: tuple[type[Tool], ...], fmt: CallFormat, example_name: str) -> str:
    """An info call about the same tool the hints use as their example."""
    info = next(t for t in tools if t.name == INFO_TOOL)
    target = example_name if any(t.name == example_name for t in tools) else INFO_TOOL
    args = dict(model_example(info.args_model))
    str_keys = [k for k, v in args.items() if isinstance(v, str)]
    if str_keys:
        args[str_keys[0]] = target
    elif not args:
        args = {"name": target}
    return fmt.render_call(INFO_TOOL, args)


def _example_call(
    tools: tuple[type[Tool], ...],
    channels: tuple[ChannelView, ...],
    outputs: tuple[NamedOutputView, ...],
) -> tuple[str, dict[str, Any]]:
    """The call shown in the hints: first tool with arguments, else a send or output."""
    for t in tools:
        if t.name != INFO_TOOL and model_example(t.args_model):
            return t.name, dict(model_example(t.args_model))
    for t in tools:
        if t.name != INFO_TOOL:
            return t.name, dict(model_example(t.args_model))
    for t in tools:
        return t.name, dict(model_example(t.args_model))
    for c in channels:
        if c.can_send:
            return send_call_name(c.name), fields_example(c.fields)
    for o in outputs:
        if not o.default:
            return output_call_name(o.name), {"text": "..."}
    return "", {}


_HintKey = tuple[int, frozenset[tuple[str, str]]]
_HINTS: dict[_HintKey, tuple[HintFacts, list[tuple[str, str]]]] = {}


def _hints(overrides: Mapping[str, str], facts: HintFacts) -> list[tuple[str, str]]:
    """resolve_hints, memoized on the (cached) facts object and the override values."""
    key = (id(facts), frozenset(overrides.items()))
    hit = _HINTS.get(key)
    if hit is not None and hit[0] is facts:
        return hit[1]
    hints = resolve_hints(overrides, facts)
    if len(_HINTS) > 512:
        _HINTS.clear()
    _HINTS[key] = (facts, hints)
    return hints


@dataclass(frozen=True, slots=True)
class _Prefix:
    text: str
    sha256: str
    sections: tuple[SectionInfo, ...]
    tokens: int


_Kept = tuple[tuple[str, str], ...]
_PREFIXES: weakref.WeakKeyDictionary[Any, dict[_Kept, _Prefix]] = weakref.WeakKeyDictionary()


def _finish_prefix(kept: _Kept, tokenizer: Tokenizer) -> _Prefix:
    """Join, hash and count the kept sections, memoized per tokenizer on the section texts.

    Memoized sections come back as the same string objects with their hashes cached, so the
    lookup hashes only the persona and hints (small) and skips joining, hashing and counting
    10+ KB on every restart.
    """
    try:
        memo = _PREFIXES.setdefault(tokenizer, {})
    except TypeError:  # not weak-referenceable: compute every time, still correct
        memo = {}
    hit = memo.get(kept)
    if hit is not None:
        return hit
    text = join_sections([t for _, t in kept])
    count = tokenizer.count
    sections = tuple(
        SectionInfo(name, "prefix", len(t.encode("utf-8")), count(t)) for name, t in kept
    )
    # Section counts plus two per blank-line separator: for the estimate this is never below
    # counting the whole, and it avoids counting the 10+ KB prefix a second time.
    tokens = sum(info.tokens for info in sections) + 2 * (len(sections) - 1)
    prefix = _Prefix(text, hashlib.sha256(text.encode("utf-8")).hexdigest(), sections, tokens)
    if len(memo) > 256:
        memo.clear()
    memo[kept] = prefix
    return prefix


def clear_prompt_caches() -> None:
    """Forget every memo of the aggregator, for benchmarks and tests of the cold path."""
    clear_view_caches()
    clear_section_caches()
    compile_template.cache_clear()
    model_example.cache_clear()
    _tool_view.cache_clear()
    _tool_views.clear()
    _HINTS.clear()
    _PREFIXES.clear()


def join_sections(parts: list[str]) -> str:
    """Blank line between sections; a section's own trailing newline is kept verbatim."""
    out: list[str] = []
    for i, text in enumerate(parts):
        out.append(text)
        if i + 1 < len(parts):
            out.append("\n" if text.endswith("\n") else "\n\n")
    text = "".join(out)
    return text if text.endswith("\n") else text + "\n"


class PromptBuilder:
    """One creature run's prompt: prefix rendered here, tail rebuilt by :meth:`build`."""

    def __init__(
        self,
        inputs: PromptInputs,
        fmt: CallFormat,
        tokenizer: Tokenizer | None = None,
        budgets: TailBudgets | None = None,
    ) -> None:
        self.inputs = inputs
        self.fmt = fmt
        self.tokenizer: Tokenizer = tokenizer or DEFAULT_TOKENIZER
        self.budgets = budgets or TailBudgets()
        self.native = not fmt.textual
        self.variables = VariableRegistry()
        self.section_registry = SectionRegistry()
        self._register_facts()
        self._render_prefix()
        self._tail = TailAssembler(self._skill_map, self.tokenizer, self.budgets, self._available())

    # -- registries ------------------------------------------------------------------
    def _register_facts(self) -> None:
        i = self.inputs
        # Each view sorts and refuses duplicate names once per input tuple (identity-cached):
        # a restart with the same frozen inputs neither re-sorts nor re-registers them.
        self.tools, _ = tools_view(i.tools)
        self.skills, self._skill_map = skills_view(i.skills)
        self.channels = channels_view(i.channels)
        self.named_outputs = outputs_view(i.named_outputs)
        self.plugins = plugins_view(i.plugins)
        self.team = team_view(i.team)
        self.call_names = _call_names(i.tools, self.tools, self.channels, self.named_outputs)
        defaults = [o for o in self.named_outputs if o.default]
        if len(defaults) > 1:
            raise PromptError(
                f"The creature {i.creature!r} has {len(defaults)} default named outputs "
                f"({', '.join(o.name for o in defaults)}); at most one may take plain text."
            )

        self.variables.register_many(
            [
                ("creature", i.creature, "config"),
                ("tool_format", self.fmt.name, "config"),
                ("skill_mode", i.skill_mode, "config"),
                ("model", i.model, "controller"),
                ("context_window", i.context_window, "controller"),
                ("cwd", str(i.cwd), "runtime"),
                ("tools", _tool_views(self.tools), "tools"),
                ("channels", self.channels, "channels"),
                ("team", self.team, "terrarium"),
                ("named_outputs", self.named_outputs, "output"),
                ("skills", self.skills, "skills"),
                ("call", self._render_example_call, "format"),
                *((name, value, "extra_variables") for name, value in i.extra_variables.items()),
            ]
        )

    def _render_example_call(self, name: str, args: dict[str, Any] | None = None) -> str:
        """``{{ call("name", {...}) }}`` in a persona: an example written by the format itself.

        Only known calls may be shown, and the text is exactly what the parser accepts, so a
        few-shot example in a persona cannot drift from the creature's real call syntax.
        """
        if name not in self.call_names:
            raise PromptError(
                f"The persona of {self.inputs.creature!r} shows an example call {name!r}, "
                f"which this creature cannot make.",
                suggestion=f"known calls: {', '.join(self.call_names) or 'none'}",
            )
        return self.fmt.render_call(name, dict(args or {}))

    # -- prefix ----------------------------------------------------------------------
    def _render_prefix(self) -> None:
        i = self.inputs
        file = str(i.persona_file) if i.persona_file is not None else "<persona>"
        template = compile_template(i.persona_source, file)
        template.check_variables(self.variables.names())
        variables = self.variables
        values = {n: variables.get(n) for n, _ in template.needs if n in variables}
        persona = template.render(values)

        dynamic = i.skill_mode == "dynamic"
        facts, info_note, reach = _call_facts(
            self.tools, self.channels, self.named_outputs, self.fmt, self.native, i.skill_mode
        )
        if dynamic and self.tools and not facts.info_tool:
            raise PromptError(
                f"The creature {i.creature!r} uses skill_mode 'dynamic', which shows only a "
                f"one-line index per tool, but has no {INFO_TOOL!r} tool to read full docs.",
                suggestion=f"add the {INFO_TOOL!r} tool or use skill_mode 'static'",
            )

        parts: list[tuple[str, str]] = [("persona", persona)]
        parts.append(("tools", tools_section(self.tools, dynamic, info_note)))
        parts.append(("tool_guidance", guidance_section(self.tools)))
        parts.append(("skills", skills_section(self.skills, i.skill_index_budget_bytes, reach)))
        parts.append(
            (
                "channels",
                channels_section(i.creature, self.channels, self.team, self.fmt, self.native),
            )
        )
        parts += [(f"hint:{k}", text) for k, text in _hints(i.hint_overrides, facts)]
        parts.append(("outputs", outputs_section(self.named_outputs, self.fmt, self.native)))
        for p in self.plugins:
            parts.append((f"plugin:{p.name}", p.render().strip("\n")))

        kept = tuple((name, text) for name, text in parts if text.strip())
        self.section_registry.register_many(
            (name, name, "the aggregator" if ":" not in name else name.split(":", 1)[0])
            for name, _ in kept
        )
        prefix = _finish_prefix(kept, self.tokenizer)
        self.prefix = prefix.text
        self.prefix_hash = prefix.sha256
        self.prefix_sections: tuple[SectionInfo, ...] = prefix.sections
        self.prefix_texts: dict[str, str] = dict(kept)
        self.prefix_tokens = prefix.tokens

    def _available(self) -> int:
        b = self.budgets
        left = self.inputs.context_window - self.prefix_tokens - b.reply_reserve - b.margin
        if left <= 0:
            raise PromptError(
                f"The prefix of {self.inputs.creature!r} needs {self.prefix_tokens} tokens, "
                f"which with the reply reserve ({b.reply_reserve}) and margin ({b.margin}) "
                f"leaves nothing of the {self.inputs.context_window}-token context window.",
                suggestion="shorten the persona or the skill index, or use a larger window",
            )
        return left

    # -- per step --------------------------------------------------------------------
    def build(self, state: TailState) -> BuiltPrompt:
        """Rebuild only the tail; the prefix object is reused as-is (same bytes, same hash)."""
        tail = self._tail.build(state)
        return BuiltPrompt(
            creature=self.inputs.creature,
            step=state.step,
            prefix=self.prefix,
            prefix_hash=self.prefix_hash,
            prefix_sections=self.prefix_sections,
            prefix_texts=self.prefix_texts,
            prefix_tokens=self.prefix_tokens,
            tail=tail,
        )
