"""The prefix sections after the persona, each a pure function of sorted views.

Every function returns "" when the creature has nothing for that section, so the builder can
drop empty sections entirely (no header over nothing). Inputs are already sorted by the
builder; nothing here depends on registration order. Being pure functions of frozen tuples,
the sections are memoized on the identity of those tuples by a ``PromptCache`` (see
``views.IdentityMemo``): a creature restart returns the very same string objects, whose
hashes Python has cached. Where a section needs a memoized part (a tool's docs, a channel's
block), the cache hands it in as a callable.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

from terrarium.errors import PromptError
from terrarium.formats.base import CallFormat, output_call_name, send_call_name
from terrarium.prompt.examples import fields_example
from terrarium.prompt.inputs import ChannelView, NamedOutputView, Skill, TeamMember
from terrarium.tools.base import Tool

__all__ = [
    "FILL_WORDS",
    "channel_block",
    "channels_section",
    "guidance_section",
    "outputs_section",
    "skills_section",
    "tool_full_doc",
    "tools_section",
]

_BUCKETS = ("first", "normal", "last")


def tool_full_doc(tool: type[Tool]) -> str:
    """A tool's full docs; class attributes never change at run time, so a cache may keep them."""
    return tool.full_doc().strip()


def tools_section(
    tools: Sequence[type[Tool]],
    dynamic: bool,
    info_note: str,
    *,
    full_doc: Callable[[type[Tool]], str] = tool_full_doc,
) -> str:
    """Dynamic: a one-line index plus the ``info`` note; static: every tool's full docs."""
    if not tools:
        return ""
    if dynamic:
        lines = ["## Tools"]
        lines += [f"- {t.name}: {t.summary}" for t in tools]
        if info_note:
            lines.append(info_note)
        return "\n".join(lines)
    return "## Tools\n\n" + "\n\n".join(full_doc(t) for t in tools)


def guidance_section(tools: Sequence[type[Tool]]) -> str:
    """Each tool's own guidance, bucketed first/normal/last, alphabetical inside a bucket."""
    blocks: dict[str, list[str]] = {b: [] for b in _BUCKETS}
    for t in tools:  # already sorted by name
        text = t.guidance.strip()
        if text:
            blocks[t.guidance_bucket].append(text)
    body = [text for b in _BUCKETS for text in blocks[b]]
    if not body:
        return ""
    return "## Tool guidance\n\n" + "\n\n".join(body)


def skills_section(skills: Sequence[Skill], budget: int, reach: str) -> str:
    """Skill index within ``budget`` UTF-8 bytes, header and overflow line included."""
    if not skills:
        return ""
    header = f"## Skills\n{reach}\n"
    used = len(header.encode("utf-8"))
    lines: list[str] = []
    cum: list[int] = [used]  # cum[k]: bytes of header + the first k lines
    for s in skills:  # build lines only while they can still fit
        line = f"- {s.name}: {s.summary}\n"
        used += len(line.encode("utf-8"))
        if used > budget:
            break
        lines.append(line)
        cum.append(used)
    n = len(skills)
    if len(lines) == n:
        return (header + "".join(lines)).rstrip("\n")
    for kept in range(len(lines), -1, -1):  # usually the first or second try fits
        footer = _overflow(n - kept, skills[kept - 1].name if kept else None)
        if cum[kept] + len(footer.encode("utf-8")) <= budget:
            return (header + "".join(lines[:kept]) + footer).rstrip("\n")
    raise PromptError(
        f"The skill index budget of {budget} bytes cannot hold even the skill index "
        f"header and its overflow line.",
        suggestion="raise skill_index_budget_bytes in the creature's config",
    )


def _overflow(left_out: int, last_shown: str | None) -> str:
    after = f" (their names sort after {last_shown!r})" if last_shown else ""
    s = "" if left_out == 1 else "s"
    return (
        f"- … {left_out} more skill{s} not listed here for space{after}; "
        "read any of them by name the same way.\n"
    )


# how the prompt names a send_fill source: "filled in by the runtime from ..."
FILL_WORDS = types.MappingProxyType(
    {"input": "the input", "recalled": "the recalled facts", "recent": "the recent facts",
     "facts": "the user's own facts", "notes": "the user's own facts"}
)


def _field_line(f: Any) -> str:
    if f.filled:  # the sender never writes it, so neither required nor optional applies
        desc = f": {f.description}" if f.description else ""
        source = FILL_WORDS.get(f.filled, f.filled)
        return f"- {f.name} ({f.type_label}){desc} — filled in by the runtime from {source}"
    req = "required" if f.required else "optional"
    if not f.required and f.default is not None:
        req += f", default {f.default!r}"
    desc = f": {f.description}" if f.description else ""
    return f"- {f.name} ({f.type_label}, {req}){desc}"


def channel_block(c: ChannelView, fmt: CallFormat, native: bool) -> str:
    """One channel's description; a pure function of the (frozen) view and the format class."""
    roles = [r for r, on in (("you listen", c.listen), ("you send", c.can_send)) if on]
    lines = [f"### `{c.name}` ({c.type}; {', '.join(roles)})"]
    if c.description:
        lines.append(c.description.strip())
    if c.fields:
        lines.append(f"Message schema `{c.schema_name}`:")
        lines += [_field_line(f) for f in c.fields]
    who = []
    if c.listeners:
        who.append("Listeners: " + ", ".join(sorted(c.listeners)) + ".")
    if c.senders:
        who.append("Senders: " + ", ".join(sorted(c.senders)) + ".")
    if who:
        lines.append(" ".join(who))
    if c.can_send:
        call = send_call_name(c.name)
        if native:
            which = "fields not filled in by the runtime" if any(
                f.filled for f in c.fields) else "fields"
            lines.append(f"Send with the `{call}` call; its arguments are the schema {which}.")
        else:
            lines.append("Send with:")
            lines.append(fmt.render_call(call, fields_example(c.fields)))
    return "\n".join(lines)


def channels_section(
    creature: str,
    channels: Sequence[ChannelView],
    team: Sequence[TeamMember],
    fmt: CallFormat,
    native: bool,
    *,
    block: Callable[[ChannelView, CallFormat, bool], str] = channel_block,
) -> str:
    """Topology as this creature sees it: what it hears, what it may send, and to whom."""
    mine = [c for c in channels if c.listen or c.can_send]
    if not mine:
        return ""
    listen = [c.name for c in mine if c.listen]
    send = [c.name for c in mine if c.can_send]
    lines = ["## Channels"]
    if listen:
        lines.append("You listen on: " + ", ".join(f"`{n}`" for n in listen) + ".")
    if send:
        lines.append("You may send on: " + ", ".join(f"`{n}`" for n in send) + ".")
    kinds = {c.type for c in mine}
    if "queue" in kinds:
        lines.append("A queue channel delivers each message to exactly one listener.")
    if "broadcast" in kinds:
        lines.append(
            "A broadcast channel delivers every message to every listener except its sender."
        )
    for c in mine:
        lines.append("")
        lines.append(block(c, fmt, native))
    others = [m for m in team if m.name != creature]
    if others:
        lines.append("")
        lines.append(f"### Team (you are `{creature}`)")
        lines += [
            f"- `{m.name}`" + (f": {m.description.strip()}" if m.description else "")
            for m in others
        ]
    return "\n".join(lines)


def outputs_section(outputs: Sequence[NamedOutputView], fmt: CallFormat, native: bool) -> str:
    """Where text goes: the default output takes plain text, others need their call."""
    if not outputs:
        return ""
    lines = ["## Outputs"]
    for o in outputs:
        desc = f": {o.description.strip()}" if o.description else ""
        if o.default:
            lines.append(f"- `{o.name}` ({o.kind}, default){desc}")
            lines.append("  Plain text you write outside calls goes here.")
        else:
            lines.append(f"- `{o.name}` ({o.kind}){desc}")
            call = output_call_name(o.name)
            if native:
                lines.append(f"  Write to it with the `{call}` call (argument: text).")
            else:
                lines.append("  Write to it with:")
                lines.append(fmt.render_call(call, {"text": "..."}))
    return "\n".join(lines)
