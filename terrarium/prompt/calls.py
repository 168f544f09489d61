"""The calls a creature can make, and the facts the hints are drawn from.

Both are pure functions of the sorted views (and the call format's class), so a
``PromptCache`` memoizes them on the identity of those tuples; where they need another memo
(the sorted tools, a tool's example arguments) the cache hands it in as a callable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from terrarium.formats.base import CallFormat, output_call_name, send_call_name
from terrarium.prompt.examples import fields_example, model_example
from terrarium.prompt.hints import HintFacts, syntax_help_of
from terrarium.prompt.inputs import ChannelView, NamedOutputView
from terrarium.prompt.ownership import OwnerTable
from terrarium.prompt.views import sort_tools, tool_owner
from terrarium.tools.base import Tool

__all__ = ["INFO_TOOL", "call_facts", "call_names"]

INFO_TOOL = "info"

Example = Callable[[type[BaseModel]], tuple[tuple[str, Any], ...]]


def call_names(
    raw_tools: tuple[type[Tool], ...],
    tools: tuple[type[Tool], ...],
    channels: tuple[ChannelView, ...],
    outputs: tuple[NamedOutputView, ...],
    *,
    tools_view: Callable[
        [tuple[type[Tool], ...]], tuple[tuple[type[Tool], ...], frozenset[str]]
    ] = sort_tools,
) -> tuple[str, ...]:
    """Every call this creature can make, sorted; a send or output call may not shadow a tool."""
    calls: OwnerTable[str] = OwnerTable("call name")
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


def call_facts(
    tools: tuple[type[Tool], ...],
    channels: tuple[ChannelView, ...],
    outputs: tuple[NamedOutputView, ...],
    fmt: CallFormat,
    native: bool,
    skill_mode: str,
    *,
    example: Example = model_example,
) -> tuple[HintFacts, str, str]:
    """(hint facts, info note, skill reach line): all a pure function of the sorted views."""
    has_info = any(t.name == INFO_TOOL for t in tools)
    example_name, example_args = _example_call(tools, channels, outputs, example)
    if has_info:
        info_example = "" if native else _info_example(tools, fmt, example_name, example)
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


def _info_example(
    tools: tuple[type[Tool], ...], fmt: CallFormat, example_name: str, example: Example
) -> str:
    """An info call about the same tool the hints use as their example."""
    info = next(t for t in tools if t.name == INFO_TOOL)
    target = example_name if any(t.name == example_name for t in tools) else INFO_TOOL
    args = dict(example(info.args_model))
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
    example: Example,
) -> tuple[str, dict[str, Any]]:
    """The call shown in the hints: first tool with arguments, else a send or output."""
    for t in tools:
        if t.name != INFO_TOOL and example(t.args_model):
            return t.name, dict(example(t.args_model))
    for t in tools:
        if t.name != INFO_TOOL:
            return t.name, dict(example(t.args_model))
    for t in tools:
        return t.name, dict(example(t.args_model))
    for c in channels:
        if c.can_send:
            return send_call_name(c.name), fields_example(c.fields)
    for o in outputs:
        if not o.default:
            return output_call_name(o.name), {"text": "..."}
    return "", {}
