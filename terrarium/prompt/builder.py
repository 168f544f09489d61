"""PromptBuilder: assemble the byte-stable prefix once, rebuild only the tail each step.

The prefix (persona → tools → guidance → skills → channels → hints → outputs → plugins) is
rendered at construction, so template and registry mistakes fail before the first turn and a
llama.cpp slot can reuse the cached prefix on every step. Only :meth:`build` runs per step.
"""

from __future__ import annotations

import hashlib
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
from terrarium.prompt.registry import Registry, SectionRegistry, VariableRegistry
from terrarium.prompt.sections import (
    channels_section,
    guidance_section,
    outputs_section,
    skills_section,
    tools_section,
)
from terrarium.prompt.tail import TailAssembler, TailState
from terrarium.prompt.templates import compile_template, register_data_view
from terrarium.prompt.views import skills_view, sorted_view, tool_owner, tools_view
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


def _plugin_key(p: Any) -> tuple[int, str]:
    return (p.priority, p.name)


def _owner_of(obj: Any) -> str:
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


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
        self.native = inputs.tool_format == "native"
        if fmt.name != inputs.tool_format or fmt.textual == self.native:
            raise PromptError(
                f"The creature {inputs.creature!r} uses the {inputs.tool_format!r} call format "
                f"but was given the {fmt.name!r} format."
            )
        self.variables = VariableRegistry()
        self.section_registry = SectionRegistry()
        self._register_facts()
        self._render_prefix()
        self._tail = TailAssembler(self._skill_map, self.tokenizer, self.budgets, self._available())

    # -- registries ------------------------------------------------------------------
    def _register_facts(self) -> None:
        i = self.inputs
        self.tools, tool_names = tools_view(i.tools)
        self.skills, self._skill_map = skills_view(i.skills)
        calls: Registry[str] = Registry("call name")
        calls.register_many(
            (send_call_name(c.name), "send", f"channel {c.name!r}")
            for c in i.channels
            if c.can_send
        )
        calls.register_many(
            (output_call_name(o.name), "output", f"named output {o.name!r}")
            for o in i.named_outputs
            if not o.default
        )
        if not tool_names.isdisjoint(calls.as_dict()):  # slow path only to name the clash
            calls.register_many((t.name, "tool", tool_owner(t)) for t in self.tools)
        channels = Registry[Any]("channel")
        channels.register_many((c.name, c, "terrarium wiring") for c in i.channels)
        outputs = Registry[Any]("named output")
        outputs.register_many((o.name, o, "output.named_outputs") for o in i.named_outputs)
        plugins = Registry[Any]("prompt plugin")
        plugins.register_many((p.name, p, f"plugin {_owner_of(p)}") for p in i.plugins)
        team = Registry[Any]("team member")
        team.register_many((m.name, m, "terrarium wiring") for m in i.team)
        defaults = [o for o in i.named_outputs if o.default]
        if len(defaults) > 1:
            raise PromptError(
                f"The creature {i.creature!r} has {len(defaults)} default named outputs "
                f"({', '.join(sorted(o.name for o in defaults))}); at most one may take "
                "plain text."
            )

        self.channels = sorted_view(i.channels)
        self.named_outputs = sorted_view(i.named_outputs)
        self.plugins = tuple(sorted(i.plugins, key=_plugin_key))
        self.team = sorted_view(i.team)
        self.call_names = tuple(sorted(tool_names.union(calls.as_dict())))

        reg = self.variables.register
        reg("creature", i.creature, "config")
        reg("tool_format", i.tool_format, "config")
        reg("skill_mode", i.skill_mode, "config")
        reg("model", i.model, "controller")
        reg("context_window", i.context_window, "controller")
        reg("cwd", str(i.cwd), "runtime")
        reg("tools", tuple(map(_tool_view, self.tools)), "tools")
        reg("channels", self.channels, "channels")
        reg("team", self.team, "terrarium")
        reg("named_outputs", self.named_outputs, "output")
        reg("skills", self.skills, "skills")
        reg("call", self._render_example_call, "format")
        for name, value in i.extra_variables.items():
            reg(name, value, "extra_variables")

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
        needed = {name for name, _ in template.needs}
        values = {n: self.variables.get(n) for n in needed if n in self.variables}
        persona = template.render(values)

        has_info = any(t.name == INFO_TOOL for t in self.tools)
        dynamic = i.skill_mode == "dynamic"
        if dynamic and self.tools and not has_info:
            raise PromptError(
                f"The creature {i.creature!r} uses skill_mode 'dynamic', which shows only a "
                f"one-line index per tool, but has no {INFO_TOOL!r} tool to read full docs.",
                suggestion=f"add the {INFO_TOOL!r} tool or use skill_mode 'static'",
            )
        example_name, example_args = self._example_call()
        info_example = self._info_example(example_name) if has_info else ""
        if has_info:
            info_note = (
                f"Full documentation of a tool comes from an `{INFO_TOOL}` call with the "
                "tool's name."
            )
            reach = f"Read a skill's full text with an `{INFO_TOOL}` call giving its name."
        else:
            info_note = ""
            reach = "Ask for a skill by name and its full text is loaded into your context."

        facts = HintFacts(
            native=self.native,
            skill_mode=i.skill_mode,
            tool_names=tuple(t.name for t in self.tools),
            info_tool=has_info,
            info_example=info_example,
            example_call=(
                ""
                if self.native or not example_name
                else self.fmt.render_call(example_name, example_args)
            ),
            syntax_help=(
                ""
                if self.native or not example_name
                else syntax_help_of(self.fmt, example_name, example_args)
            ),
            has_sends=any(c.can_send for c in self.channels),
            listens=any(c.listen for c in self.channels),
            default_output=next(
                (f"`{o.name}` output ({o.kind})" for o in self.named_outputs if o.default), ""
            ),
            extra_outputs=any(not o.default for o in self.named_outputs),
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
        parts += [(f"hint:{k}", text) for k, text in resolve_hints(i.hint_overrides, facts)]
        parts.append(("outputs", outputs_section(self.named_outputs, self.fmt, self.native)))
        for p in self.plugins:
            parts.append((f"plugin:{p.name}", p.render().strip("\n")))

        kept = [(name, text) for name, text in parts if text.strip()]
        for name, _ in kept:
            self.section_registry.register(
                name, name, "the aggregator" if ":" not in name else name.split(":", 1)[0]
            )
        self.prefix = join_sections([t for _, t in kept])
        self.prefix_hash = hashlib.sha256(self.prefix.encode("utf-8")).hexdigest()
        count = self.tokenizer.count
        self.prefix_sections: tuple[SectionInfo, ...] = tuple(
            SectionInfo(name, "prefix", len(text.encode("utf-8")), count(text))
            for name, text in kept
        )
        self.prefix_texts: dict[str, str] = dict(kept)
        # Section counts plus two per blank-line separator: for the estimate this is never
        # below counting the whole, and it avoids counting the 10+ KB prefix a second time.
        self.prefix_tokens = sum(info.tokens for info in self.prefix_sections) + 2 * (
            len(self.prefix_sections) - 1
        )

    def _info_example(self, example_name: str) -> str:
        """An info call about the same tool the hints use as their example."""
        if self.native:
            return ""
        info = next(t for t in self.tools if t.name == INFO_TOOL)
        tool_names = {t.name for t in self.tools}
        target = example_name if example_name in tool_names else INFO_TOOL
        args = dict(model_example(info.args_model))
        str_keys = [k for k, v in args.items() if isinstance(v, str)]
        if str_keys:
            args[str_keys[0]] = target
        elif not args:
            args = {"name": target}
        return self.fmt.render_call(INFO_TOOL, args)

    def _example_call(self) -> tuple[str, dict[str, Any]]:
        """The call shown in the hints: first tool with arguments, else a send or output."""
        for t in self.tools:
            if t.name != INFO_TOOL and model_example(t.args_model):
                return t.name, dict(model_example(t.args_model))
        for t in self.tools:
            if t.name != INFO_TOOL:
                return t.name, dict(model_example(t.args_model))
        for t in self.tools:
            return t.name, dict(model_example(t.args_model))
        for c in self.channels:
            if c.can_send:
                return send_call_name(c.name), fields_example(c.fields)
        for o in self.named_outputs:
            if not o.default:
                return output_call_name(o.name), {"text": "..."}
        return "", {}

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
