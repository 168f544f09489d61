"""PromptBuilder: assemble the byte-stable prefix once, rebuild only the tail each step.

The prefix (persona → tools → guidance → skills → channels → hints → outputs → plugins) is
rendered at construction, so template and registry mistakes fail before the first turn and a
llama.cpp slot can reuse the cached prefix on every step. Only :meth:`build` runs per step.

A restart with the same frozen inputs is cheap: views, sections, call facts and the joined,
hashed and counted prefix are memoized in the builder's :class:`PromptCache` on the identity
of the input tuples (pass the runtime's cache to share that work across creatures), while
every duplicate check still runs on the first sight of a tuple; the persona is rendered again
only when a variable's value is not a plain immutable one (see ``PromptCache.persona``).
The very same inputs object (with plain variables and static plugins) assembles nothing at
all: its finished prefix is kept (``PromptCache.assembled``).
"""

from __future__ import annotations

from typing import Any

from terrarium.errors import PromptError
from terrarium.formats.base import CallFormat
from terrarium.prompt.budget import DEFAULT_TOKENIZER, TailBudgets, Tokenizer
from terrarium.prompt.built import BuiltPrompt, SectionInfo, join_sections
from terrarium.prompt.cache import PromptCache
from terrarium.prompt.calls import INFO_TOOL
from terrarium.prompt.inputs import PromptInputs, ToolView
from terrarium.prompt.owners import SectionRegistry, VariableRegistry
from terrarium.prompt.tail import TailAssembler, TailState

__all__ = ["INFO_TOOL", "PromptBuilder", "PromptCache", "ToolView", "join_sections"]

_ASSEMBLED = ("tools", "skills", "_skill_map", "channels", "named_outputs", "plugins", "team",
              "call_names", "variables", "section_registry", "prefix", "prefix_hash",
              "prefix_sections", "prefix_texts", "prefix_tokens")
"""What the constructor computes from the inputs before the tail: kept per frozen inputs."""


class PromptBuilder:
    """One creature run's prompt: prefix rendered here, tail rebuilt by :meth:`build`."""

    def __init__(
        self,
        inputs: PromptInputs,
        fmt: CallFormat,
        tokenizer: Tokenizer | None = None,
        budgets: TailBudgets | None = None,
        cache: PromptCache | None = None,
    ) -> None:
        self.inputs = inputs
        self.cache = cache if cache is not None else PromptCache()
        self.fmt = fmt
        self.tokenizer: Tokenizer = tokenizer or DEFAULT_TOKENIZER
        self.budgets = budgets or TailBudgets()
        self.native = not fmt.textual
        done = self.cache.assembled(inputs, fmt, self.tokenizer)
        if done is not None:  # the same frozen inputs: the same prefix, checks passed
            for name, value in done.items():
                setattr(self, name, value)
        else:
            self.variables = VariableRegistry()
            self.section_registry = SectionRegistry()
            self._register_facts()
            self._render_prefix()
            self.cache.keep_assembled(inputs, fmt, self.tokenizer,
                                      {n: getattr(self, n) for n in _ASSEMBLED})
        self._tail = TailAssembler(
            self._skill_map,
            self.tokenizer,
            self.budgets,
            self._available(),
            self.cache.turn_tokens(self.tokenizer),
        )

    # -- registries ------------------------------------------------------------------
    def _register_facts(self) -> None:
        i, cache = self.inputs, self.cache
        # Each view sorts and refuses duplicate names once per input tuple (identity-cached):
        # a restart with the same frozen inputs neither re-sorts nor re-registers them.
        self.tools, _ = cache.tools_view(i.tools)
        self.skills, self._skill_map = cache.skills_view(i.skills)
        self.channels = cache.channels_view(i.channels)
        self.named_outputs = cache.outputs_view(i.named_outputs)
        self.plugins = cache.plugins_view(i.plugins)
        self.team = cache.team_view(i.team)
        self.call_names = cache.call_names(i.tools, self.tools, self.channels, self.named_outputs)
        defaults = [o for o in self.named_outputs if o.default]
        if len(defaults) > 1:
            raise PromptError(
                f"The creature {i.creature!r} has {len(defaults)} default named outputs "
                f"({', '.join(o.name for o in defaults)}); at most one may take plain text."
            )

        self.variables.register_many(
            [
                ("creature", i.creature, "config"),
                ("agent_name", i.creature, "config"),  # KohakuTerrarium's name for it
                ("tool_format", self.fmt.name, "config"),
                ("skill_mode", i.skill_mode, "config"),
                ("model", i.model, "controller"),
                ("context_window", i.context_window, "controller"),
                ("cwd", str(i.cwd), "runtime"),
                ("tools", cache.tool_views(self.tools), "tools"),
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
        i, cache = self.inputs, self.cache
        file = str(i.persona_file) if i.persona_file is not None else "<persona>"
        template = cache.template(i.persona_source, file, i.persona_files)
        template.check_variables(self.variables.names())
        variables = self.variables
        values = {n: variables.get(n) for n, _ in template.needs if n in variables}
        persona = cache.persona(template, values, (self.call_names, type(self.fmt)),
                                lambda: template.render(values))

        dynamic = i.skill_mode == "dynamic"
        facts, info_note, reach = cache.call_facts(
            self.tools, self.channels, self.named_outputs, self.fmt, self.native, i.skill_mode
        )
        if dynamic and self.tools and not facts.info_tool:
            raise PromptError(
                f"The creature {i.creature!r} uses skill_mode 'dynamic', which shows only a "
                f"one-line index per tool, but has no {INFO_TOOL!r} tool to read full docs.",
                suggestion=f"add the {INFO_TOOL!r} tool or use skill_mode 'static'",
            )

        parts: list[tuple[str, str]] = [("persona", persona)]
        parts.append(("tools", cache.tools_section(self.tools, dynamic, info_note)))
        parts.append(("tool_guidance", cache.guidance_section(self.tools)))
        parts.append(
            ("skills", cache.skills_section(self.skills, i.skill_index_budget_bytes, reach))
        )
        parts.append(
            (
                "channels",
                cache.channels_section(
                    i.creature, self.channels, self.team, self.fmt, self.native
                ),
            )
        )
        parts += [(f"hint:{k}", text) for k, text in cache.hints(i.hint_overrides, facts)]
        parts.append(
            ("outputs", cache.outputs_section(self.named_outputs, self.fmt, self.native))
        )
        for p in self.plugins:
            parts.append((f"plugin:{p.name}", p.render().strip("\n")))

        kept = tuple((name, text) for name, text in parts if text.strip())
        self.section_registry.register_many(
            (name, name, "the aggregator" if ":" not in name else name.split(":", 1)[0])
            for name, _ in kept
        )
        prefix = cache.prefix(kept, self.tokenizer)
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
                suggestion="shorten the persona or the skill index, or use a model with a "
                "larger window (`controller.llm: PRESET`, `controller.context_window`, or "
                "TERRARIUM_LLM for every creature that names no model)",
            )
        return left

    def room(self) -> int:
        """Tokens the tail (context sections and conversation) may use in all."""
        return self._available()

    # -- per step --------------------------------------------------------------------
    def context(self, state: TailState) -> dict[str, str]:
        """The context sections of ``state`` alone (no conversation), capped, in tail order.

        The controller pins these into the history itself, only where and when they change
        (see ``ContextPins.pin`` in controller/pinning.py), instead of a fresh block on every step.
        """
        texts, _, _ = self._tail.context_sections(state)
        return texts

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
