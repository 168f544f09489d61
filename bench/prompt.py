"""Prompt aggregator benchmark: full assembly and tail-only rebuild.

Creature: 40 tools, 200 skills, 12 channels, 8 plugins, 50 conversation turns, bracket
format; then the same creature with 60 tools: every built-in plus MCP tools of three
servers, built by the MCP adapter from static JSON schemas (no server is started).
Prints the median of N runs in microseconds, and the ratio against a baseline
measured in the same run: a cold assembly (a new, empty ``PromptCache``), i.e. what the first
creature start pays. Baseline and measured runs
are interleaved round-robin so machine load (other work on the 2 cores) hits them alike.

"warm" is a creature (re)start with the same frozen inputs; "new input tuples" rebuilds the
tuples (same elements), so the identity-keyed views and sections are recomputed while the
per-class/per-item memos (tool docs, channel blocks, templates) still hit.

    python bench/prompt.py [--runs 200]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, create_model

from terrarium.config.models import CreatureConfig
from terrarium.formats import get_format
from terrarium.prompt import (
    ChannelView,
    FieldView,
    NamedOutputView,
    PromptBuilder,
    PromptCache,
    PromptInputs,
    Skill,
    StaticPlugin,
    TailState,
    TeamMember,
    Turn,
)
from terrarium.tools.base import Tool
from terrarium.tools.mcp.adapter import mcp_tool_class
from terrarium.tools.registry import BUILTIN_TOOLS

SKILL_INDEX_BUDGET: int = CreatureConfig.model_fields["skill_index_budget_bytes"].default

PERSONA = """You are {{ creature }}, a helpful creature running on {{ model }} in {{ cwd }}.
You have {{ tools|length }} tools and {{ skills|length }} skills.
{% for c in channels %}{% if c.listen %}- you hear {{ c.name }}
{% endif %}{% endfor %}Be concise.
"""


def make_tools(n: int) -> tuple[type[Tool], ...]:
    class InfoArgs(BaseModel):
        model_config = ConfigDict(extra="forbid")
        name: str = Field(description="tool or skill name")

    tools: list[type[Tool]] = [
        type("Info", (Tool,), {"name": "info", "summary": "Full docs.", "args_model": InfoArgs})
    ]
    for i in range(n - 1):
        args = create_model(  # type: ignore[call-overload]
            f"Args{i}",
            __config__=ConfigDict(extra="forbid"),
            query=(str, Field(description="what")),
            limit=(int, Field(5, description="how many")),
        )
        tools.append(
            type(
                f"Tool{i}",
                (Tool,),
                {
                    "name": f"tool_{i:02d}",
                    "summary": f"Does thing number {i} well.",
                    "documentation": f"Long documentation for tool {i}. " * 3,
                    "args_model": args,
                    "guidance": f"Use tool_{i:02d} when thing {i} matters." if i % 3 else "",
                    "guidance_bucket": ("first", "normal", "last")[i % 3],
                },
            )
        )
    return tuple(tools)


def _mcp_schema(i: int) -> dict[str, object]:
    """A tool schema shaped like real MCP servers' (enums, bounds, arrays, nested objects)."""
    props: dict[str, object] = {
        "query": {"type": "string", "description": f"what to look for ({i})"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10,
                  "description": "how many results"},
    }
    if i % 2:
        props["state"] = {"type": "string", "enum": ["open", "closed", "all"],
                          "description": "which items"}
    if i % 3:
        props["labels"] = {"type": "array", "items": {"type": "string"},
                           "description": "labels to filter by"}
    if i % 5 == 0:
        props["options"] = {"type": "object", "properties": {"deep": {"type": "boolean"}},
                            "description": "extra options"}
    if i % 4 == 0:
        props["draft"] = {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None}
    return {"type": "object", "properties": props, "required": ["query"]}


def make_mcp_mix(n: int = 60) -> tuple[type[Tool], ...]:
    """Every built-in tool, then MCP adapter tools of three servers up to ``n`` tools."""
    tools: list[type[Tool]] = list(BUILTIN_TOOLS.values())
    servers = ("github", "files", "search")
    for i in range(n - len(tools)):
        server = servers[i % len(servers)]
        tools.append(mcp_tool_class(
            server, f"action_{i:02d}",
            f"Perform action {i} on the {server} service.\nLonger notes about action {i}.",
            _mcp_schema(i)))
    return tuple(sorted(tools, key=lambda t: t.name))


def make_inputs(skill_mode: str = "dynamic",
                tools: tuple[type[Tool], ...] | None = None) -> PromptInputs:
    channels = tuple(
        ChannelView(
            name=f"chan_{i:02d}",
            type="queue" if i % 2 else "broadcast",
            description=f"Channel {i} carries messages of kind {i}.",
            schema_name=f"Msg{i}",
            fields=(
                FieldView("text", "str", True, "the text"),
                FieldView("priority", "int", False, "priority", 0),
                FieldView("tags", "list[str]", False, "tags"),
            ),
            listen=i % 3 != 0,
            can_send=i % 2 == 0,
            listeners=("a", "b"),
            senders=("c",),
        )
        for i in range(12)
    )
    return PromptInputs(
        creature="router",
        persona_source=PERSONA,
        persona_file=Path("creatures/router/prompts/system.md"),
        skill_mode=skill_mode,  # type: ignore[arg-type]
        tools=make_tools(40) if tools is None else tools,
        skills=tuple(
            Skill(f"skill_{i:03d}", f"How to handle situation {i}.", f"Body {i}.", "pkg")
            for i in range(200)
        ),
        channels=channels,
        team=tuple(TeamMember(f"member_{i}", f"Member {i}.") for i in range(6)),
        named_outputs=(
            NamedOutputView("tts", "tts", "spoken", default=True),
            NamedOutputView("log", "file", "log"),
        ),
        plugins=tuple(
            StaticPlugin(f"plugin_{i}", i % 3, f"Plugin {i} says hello.") for i in range(8)
        ),
        skill_index_budget_bytes=SKILL_INDEX_BUDGET,
        model="smollm2-135m",
        context_window=32768,
        cwd=Path("/srv"),
    )


STATE = TailState(
    step=50,
    loaded_skills=("skill_001", "skill_002"),
    memory="The user likes jazz. " * 5,
    recalled=("fact one", "fact two", "fact three"),
    conversation=tuple(
        Turn("user" if i % 2 == 0 else "assistant", f"Message {i} about topic {i % 7}. " * 4)
        for i in range(50)
    ),
    notice="A timer fired.",
)


def medians_us(fns: dict[str, tuple[Callable[[], object], int]], runs: int) -> dict[str, float]:
    """Median µs per function, runs interleaved; ``(fn, every)`` runs fn every n-th round."""
    times: dict[str, list[int]] = {name: [] for name in fns}
    for r in range(runs):
        for name, (fn, every) in fns.items():
            if r % every:
                continue
            t0 = time.perf_counter_ns()
            fn()
            times[name].append(time.perf_counter_ns() - t0)
    return {name: statistics.median(ts) / 1000 for name, ts in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    runs = ap.parse_args().runs
    fmt = get_format("bracket")
    mix = make_mcp_mix(60)
    cases = [(mode, mode, None) for mode in ("dynamic", "static")]
    cases += [(f"{mode}, 60 tools built-in+MCP", mode, mix) for mode in ("dynamic", "static")]
    for label, mode, tools in cases:
        inputs = make_inputs(mode, tools)
        cache = PromptCache()  # what the runtime shares across a team's creatures
        builder = PromptBuilder(inputs, fmt, cache=cache)
        builder.build(STATE)  # warm caches (templates, tool docs, examples, turn counts)

        def full(inputs: PromptInputs = inputs, cache: PromptCache = cache) -> object:
            return PromptBuilder(inputs, fmt, cache=cache).build(STATE)

        def fresh(inputs: PromptInputs = inputs, cache: PromptCache = cache) -> object:
            copy = dataclasses.replace(
                inputs,
                tools=tuple(list(inputs.tools)),
                skills=tuple(list(inputs.skills)),
                channels=tuple(list(inputs.channels)),
                team=tuple(list(inputs.team)),
                named_outputs=tuple(list(inputs.named_outputs)),
            )
            return PromptBuilder(copy, fmt, cache=cache).build(STATE)

        def cold(inputs: PromptInputs = inputs) -> object:
            return PromptBuilder(inputs, fmt, cache=PromptCache()).build(STATE)

        def tail(builder: PromptBuilder = builder) -> object:
            return builder.build(STATE)

        runs = max(runs, 80)  # the cold baseline runs every 4th round: ≥ 20 samples
        m = medians_us(
            {"cold": (cold, 4), "full": (full, 1), "fresh": (fresh, 1), "tail": (tail, 1)}, runs
        )
        cold_us, full_us, fresh_us, tail_us = m["cold"], m["full"], m["fresh"], m["tail"]
        prefix = builder.prefix
        print(
            f"[{label}] prefix {len(prefix.encode())} B, {builder.prefix_tokens} tok; "
            f"{len(builder.prefix_sections)} prefix sections"
        )
        print(f"[{label}] full assembly (warm caches) median {full_us:8.1f} µs  "
              "(target ≤ 150 with 60 tools)")
        print(
            f"[{label}] full assembly (new input tuples) {fresh_us:6.1f} µs  (sorted views rebuilt)"
        )
        print(f"[{label}] tail-only rebuild           median {tail_us:8.1f} µs  (target ≤ 50)")
        print(
            f"[{label}] baseline cold assembly      median {cold_us:8.1f} µs  "
            f"→ warm is {cold_us / full_us:.1f}× faster; tail is {full_us / tail_us:.1f}× "
            "cheaper than full"
        )


if __name__ == "__main__":
    main()
