"""PromptCache: every memo of the prompt aggregator, in one object its owner holds.

Assembling a prefix is a pure function of frozen inputs, so the work behind it (sorted
views, sections, call facts, the joined and hashed prefix, compiled templates) can be reused
when a creature restarts, and across the creatures of one team, which share channel views,
hints, tools and skills. Those memos live here and nowhere else: the runtime owns one per
team run and hands it to every creature's builder; a builder given none makes its own. No
module keeps a memo, so two runtimes in one process never share entries, and a test that
wants the cold path simply makes a new cache.

Each table keeps the key, bound and eviction it had as a module-level cache: the per-class
and per-source memos are ``functools.lru_cache`` instances; the identity-keyed ones are
:class:`~terrarium.prompt.views.IdentityCache` / :class:`~terrarium.prompt.views.IdentityMemo`;
the hand-written ones clear themselves when full.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache, partial
from typing import Any

from terrarium.formats.base import CallFormat
from terrarium.prompt.budget import Tokenizer
from terrarium.prompt.built import Prefix, finish_prefix
from terrarium.prompt.calls import call_facts, call_names
from terrarium.prompt.examples import model_example
from terrarium.prompt.hints import HintFacts, resolve_hints
from terrarium.prompt.inputs import ChannelView, PromptInputs, Skill, StaticPlugin, ToolView
from terrarium.prompt.sections import (
    channel_block,
    channels_section,
    guidance_section,
    outputs_section,
    skills_section,
    tool_full_doc,
    tools_section,
)
from terrarium.prompt.templates import compile_template
from terrarium.prompt.views import (
    IdentityCache,
    IdentityMemo,
    _key_part,
    sort_plugins,
    sort_skills,
    sort_tools,
    unique_sorted,
)
from terrarium.tools.base import Tool

_PLAIN = frozenset({str, int, float, bool, type(None), tuple, frozenset})
"""Variable types a memoized persona may depend on: values that cannot change in place
(the views are frozen tuples, compared by identity)."""

__all__ = ["PromptCache"]

Kept = tuple[tuple[str, str], ...]  # the (name, text) prefix sections that are not empty


def _tool_view(tool: type[Tool]) -> ToolView:
    return ToolView(tool.name, tool.summary)


class PromptCache:
    """The aggregator's memo tables; share one across builders to share their work."""

    def __init__(self) -> None:
        # -- per class or source: class attributes and template text never change at run time
        # a tool as its persona-facing view
        self.tool_view = lru_cache(maxsize=1024)(_tool_view)
        # a tool's full docs, for the static tools section
        self.tool_doc = lru_cache(maxsize=1024)(tool_full_doc)
        # a tool's example arguments, for the hints' example calls
        self.model_example = lru_cache(maxsize=1024)(model_example)
        # a persona parsed, checked and compiled once, not on every restart
        self.template = lru_cache(maxsize=128)(compile_template)

        # -- per input tuple (identity): sorted and duplicate-checked once, not per restart
        self.tools_view = IdentityCache(sort_tools)
        self.skills_view = IdentityCache(sort_skills)
        self.channels_view = IdentityCache(unique_sorted("channel", "terrarium wiring"))
        self.team_view = IdentityCache(unique_sorted("team member", "terrarium wiring"))
        self.outputs_view = IdentityCache(unique_sorted("named output", "output.named_outputs"))
        self.plugins_view = IdentityCache(sort_plugins)
        # the sorted tools as the ToolViews a persona reads
        self.tool_views = IdentityCache(self._tool_views_of)

        # -- per sorted views (identity) and format class: call facts and prefix sections,
        # returned as the very same objects, so the prefix memo below hashes them for free
        self.call_names = IdentityMemo(partial(call_names, tools_view=self.tools_view))
        self.call_facts = IdentityMemo(partial(call_facts, example=self.model_example))
        self.tools_section = IdentityMemo(partial(tools_section, full_doc=self.tool_doc))
        self.guidance_section = IdentityMemo(guidance_section)
        self.channels_section = IdentityMemo(partial(channels_section, block=self.channel_block))
        self.outputs_section = IdentityMemo(outputs_section)

        # -- hand-written tables (see their methods)
        self._skill_index: dict[int, tuple[Sequence[Skill], dict[tuple[int, str], str]]] = {}
        self._channel_blocks: dict[tuple[ChannelView, type, bool], str] = {}
        self._hints: dict[
            tuple[int, frozenset[tuple[str, str]]], tuple[HintFacts, list[tuple[str, str]]]
        ] = {}
        self._prefixes: weakref.WeakKeyDictionary[Any, dict[Kept, Prefix]] = (
            weakref.WeakKeyDictionary()
        )
        self._turn_tokens: weakref.WeakKeyDictionary[Any, dict[str, int]] = (
            weakref.WeakKeyDictionary()
        )
        self._personas: dict[tuple[Any, ...], tuple[Any, tuple[Any, ...], str]] = {}
        self._assembled: dict[tuple[Any, ...], tuple[Any, Any, dict[str, Any]]] = {}

    def _tool_views_of(self, tools: tuple[type[Tool], ...]) -> tuple[ToolView, ...]:
        return tuple(map(self.tool_view, tools))

    def _assembly_key(self, inputs: PromptInputs, fmt: CallFormat, tokenizer: Any
                      ) -> tuple[Any, ...] | None:
        """None when the inputs may change in place or render differently (a variable of a
        mutable type, a plugin that is not static): then they are assembled every time."""
        extra = inputs.extra_variables
        if not all(type(v) in _PLAIN for v in extra.values()) or not all(
                type(p) is StaticPlugin for p in inputs.plugins):
            return None
        try:
            return (id(inputs), type(fmt), fmt.textual, id(tokenizer),
                    frozenset(inputs.hint_overrides.items()),
                    frozenset((k, _key_part(v)) for k, v in extra.items()))
        except TypeError:
            return None

    def assembled(self, inputs: PromptInputs, fmt: CallFormat, tokenizer: Any
                  ) -> dict[str, Any] | None:
        """What a builder computed from these very inputs before (``keep_assembled``)."""
        key = self._assembly_key(inputs, fmt, tokenizer)
        hit = self._assembled.get(key) if key is not None else None
        if hit is None or hit[0] is not inputs or hit[1] is not tokenizer:
            return None
        return hit[2]

    def keep_assembled(self, inputs: PromptInputs, fmt: CallFormat, tokenizer: Any,
                       done: dict[str, Any]) -> None:
        key = self._assembly_key(inputs, fmt, tokenizer)
        if key is None:
            return
        if len(self._assembled) >= 128:
            self._assembled.clear()
        self._assembled[key] = (inputs, tokenizer, done)  # keeps both alive: ids stay theirs

    def persona(self, template: Any, values: Mapping[str, Any], call_key: Any,
                render: Callable[[], str]) -> str:
        """The rendered persona, memoized on the compiled template and its variables' values
        (tuples of the views above by identity; ``call`` stands for ``call_key``, what an
        example call depends on). A variable of a mutable type (a dict or list from
        ``variables:``) is never memoized: it renders anew, as before. A restart with the
        same frozen inputs renders nothing (a third of a warm assembly with 60 tools)."""
        if not all(n == "call" or type(v) in _PLAIN for n, v in values.items()):
            return render()  # a value that might change in place
        parts = tuple((n, call_key if n == "call" else _key_part(v)) for n, v in values.items())
        key = (id(template), parts)
        hit = self._personas.get(key)
        held = tuple(v for v in values.values() if type(v) is tuple)
        if hit is not None and hit[0] is template and len(hit[1]) == len(held) and all(
                a is b for a, b in zip(hit[1], held, strict=True)):
            return hit[2]
        text = render()
        if len(self._personas) >= 256:
            self._personas.clear()
        self._personas[key] = (template, held, text)  # keeps the tuples alive: ids stay theirs
        return text

    def skills_section(self, skills: Sequence[Skill], budget: int, reach: str) -> str:
        """The skill index, memoized on the identity of the (sorted) skills tuple."""
        table = self._skill_index
        hit = table.get(id(skills))
        if hit is None or hit[0] is not skills:
            if len(table) > 256:
                table.clear()
            hit = table[id(skills)] = (skills, {})
        text = hit[1].get((budget, reach))
        if text is None:
            text = hit[1][(budget, reach)] = skills_section(skills, budget, reach)
        return text

    def channel_block(self, c: ChannelView, fmt: CallFormat, native: bool) -> str:
        """One channel's block, by value: creatures of a team see the same channel views."""
        key = (c, type(fmt), native)
        hit = self._channel_blocks.get(key)
        if hit is not None:
            return hit
        text = channel_block(c, fmt, native)
        if len(self._channel_blocks) > 1024:
            self._channel_blocks.clear()
        self._channel_blocks[key] = text
        return text

    def hints(self, overrides: Mapping[str, str], facts: HintFacts) -> list[tuple[str, str]]:
        """resolve_hints, memoized on the (cached) facts object and the override values."""
        key = (id(facts), frozenset(overrides.items()))
        hit = self._hints.get(key)
        if hit is not None and hit[0] is facts:
            return hit[1]
        hints = resolve_hints(overrides, facts)
        if len(self._hints) > 512:
            self._hints.clear()
        self._hints[key] = (facts, hints)
        return hints

    def prefix(self, kept: Kept, tokenizer: Tokenizer) -> Prefix:
        """The joined, hashed and counted prefix, memoized per tokenizer on the section texts.

        Memoized sections come back as the same string objects with their hashes cached, so
        the lookup hashes only the persona and hints (small) and skips joining, hashing and
        counting 10+ KB on every restart.
        """
        try:
            memo = self._prefixes.setdefault(tokenizer, {})
        except TypeError:  # not weak-referenceable: compute every time, still correct
            memo = {}
        hit = memo.get(kept)
        if hit is not None:
            return hit
        prefix = finish_prefix(kept, tokenizer)
        if len(memo) > 256:
            memo.clear()
        memo[kept] = prefix
        return prefix

    def turn_tokens(self, tokenizer: Tokenizer) -> dict[str, int]:
        """A text → count memo shared by every builder using this tokenizer (turns recur)."""
        try:
            return self._turn_tokens.setdefault(tokenizer, {})
        except TypeError:  # not weak-referenceable: a private memo is still correct
            return {}
