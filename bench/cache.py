"""Prompt-cache benchmark on the embedded model: a raw session, then real controllers.

Part 1, the raw session: one slot, a fixed long system prompt (the byte-stable prefix) and a
growing conversation sent directly. With ``cache_prompt`` and a pinned ``id_slot`` each step
should evaluate only its new tokens. Prints per step prompt_tokens, cached_tokens and
prompt-eval ms, then Σcached/Σprompt and the prompt-eval time saved against a no-cache
baseline measured in the same run (the same requests at several points of the session
replayed with ``cache_prompt: false`` on another slot; median ms per prompt token).

Part 2, scenarios through terrarium's own Controller (default settings, the same persona):
plain chat, tool rounds, rounds with notices and refused sends, and a three-creature team
sharing one server (one slot each). Each step prints the prompt tokens the server evaluated
(``prompt_n``) beside the ideal: the tokens of what is new since the creature's previous
request (its reply, the incoming message, tool results, notices; never the status block),
counted from the same requests with the model's tokenizer and the chat template's few
tokens per message. Target: Σevaluated/Σideal ≤ 1.05 after each creature's first request.
Plain chat lets the model write its replies; the other scenarios replay scripted replies
(the server still evaluates every prompt, with ``max_tokens: 1``) so that the rounds happen.

Run: ``python bench/cache.py [--steps 32] [--baseline-runs 4] [--turns 12] [--only NAME]``
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import yaml

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller, Incoming
from terrarium.errors import ChannelRefusal
from terrarium.llm.completion import complete
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.openai_client import OpenAIClient
from terrarium.llm.tokenizer import LlamaTokenizer
from terrarium.llm.types import ChatMessage, ChatRequest, StreamDelta, Usage

TOOLS = [
    ("read_file", "Read a text file inside the creature's readable paths."),
    ("write_file", "Write a text file inside the creature's writable paths."),
    ("memory_write", "Store a fact in long-term memory with a short title."),
    ("memory_search", "Search long-term memory by keywords, best matches first."),
    ("send_router", "Send a typed message to the router creature."),
    ("send_speaker", "Send a typed message to the speaker creature."),
    ("info", "Show the full documentation of a tool."),
    ("output_tts", "Speak text aloud through the voice output."),
]


def system_prompt() -> str:
    """A deterministic prompt of roughly 1,200 tokens, shaped like an assembled creature."""
    parts = [
        "You are Fern, the router creature of a voice assistant team. You listen on the "
        "channel `requests` and decide who answers. Keep answers short and factual.",
        "## Tools",
    ]
    for name, doc in TOOLS:
        parts.append(f"- {name}: {doc}")
        parts.append(
            f"  Call it as [/{name}] with arguments on their own lines, then [{name}/]. "
            f"Arguments are validated against the schema of {name}; a wrong type is refused "
            "with the reason, and the reason comes back to you as the tool result."
        )
    parts.append("## Guidance")
    for i in range(1, 25):
        parts.append(
            f"{i}. Rule {i}: before acting, restate the user's goal in one clause, check "
            f"which channel owns the fact (rule {i} applies to channel group {i % 4}), and "
            "prefer one precise call over several vague ones."
        )
    parts.append("## Channels")
    for ch in ("requests", "replies", "events", "speech"):
        parts.append(
            f"- {ch} (queue): messages with fields text (str), sender (str), priority (int). "
            f"Only the router may send on {ch} when the user is speaking."
        )
    return "\n".join(parts)


QUESTIONS = [
    "What is the capital of France?",
    "How many legs does a spider have?",
    "Name a primary colour.",
    "What is two plus three?",
    "Which planet is closest to the sun?",
    "What do bees make?",
    "Say hello in Spanish.",
    "What is the opposite of hot?",
]


def step_request(system: str, history: list[ChatMessage], *, slot: int, cache: bool) -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage(role="system", content=system), *history],
        temperature=0.0,
        max_tokens=12,
        seed=42,
        id_slot=slot,
        cache_prompt=cache,
    )


async def raw_session(srv: EmbeddedServer, tok: LlamaTokenizer, steps: int,
                      baseline_runs: int) -> None:
    """Part 1: the same session sent directly, without the controller."""
    if True:  # keeps the original body's indentation (and its figures) unchanged
        system = system_prompt()
        print(f"system prompt: {tok.count(system)} tokens ({len(system)} bytes)")
        model = srv.client(slot=0, max_tokens=12, temperature=0.0)
        history: list[ChatMessage] = []
        rows = []
        snapshots: list[list[ChatMessage]] = []
        every = max(1, steps // baseline_runs)
        print(
            f"{'step':>4} {'prompt':>7} {'cached':>7} {'evald':>6} {'prompt_ms':>10} "
            f"{'ratio':>6} {'tok/s':>6}"
        )
        for i in range(steps):
            history.append(ChatMessage(role="user", content=QUESTIONS[i % len(QUESTIONS)]))
            req = step_request(system, history, slot=0, cache=True)
            out = await complete(model, req)
            u = model.last_usage
            assert u is not None
            rows.append(u)
            if (i + 1) % every == 0 and len(snapshots) < baseline_runs:
                snapshots.append(list(history))
            history.append(ChatMessage(role="assistant", content=out.text))
            ratio = u.cached_tokens / u.prompt_tokens if u.prompt_tokens else 0.0
            tps = u.tokens_per_second or 0.0
            print(
                f"{i + 1:>4} {u.prompt_tokens:>7} {u.cached_tokens:>7} {u.prompt_n or 0:>6} "
                f"{u.prompt_ms or 0:>10.1f} {ratio:>6.3f} {tps:>6.0f}"
            )

        sum_prompt = sum(u.prompt_tokens for u in rows)
        sum_cached = sum(u.cached_tokens for u in rows)
        sum_ms = sum(u.prompt_ms or 0.0 for u in rows)

        # Baseline: same requests, no cache, on slot 1, at evenly spaced points.
        base = srv.client(slot=1, max_tokens=12, temperature=0.0)
        per_token: list[float] = []
        for snap in snapshots:
            await complete(base, step_request(system, snap, slot=1, cache=False))
            b = base.last_usage
            assert b is not None and b.prompt_ms is not None
            evaluated = b.prompt_n or b.prompt_tokens
            per_token.append(b.prompt_ms / evaluated)
            print(
                f"baseline (no cache): {b.prompt_tokens} prompt tokens, {evaluated} evaluated,"
                f" {b.prompt_ms:.1f} ms ({b.prompt_ms / evaluated:.3f} ms/token)"
            )
        ms_per_token = statistics.median(per_token)
        est_nocache_ms = sum_prompt * ms_per_token
        tps_all = [u.tokens_per_second for u in rows if u.tokens_per_second]
        print()
        print(f"steps: {steps}")
        print(f"Σprompt_tokens = {sum_prompt}, Σcached_tokens = {sum_cached}")
        print(
            f"overall cached ratio Σcached/Σprompt = {sum_cached / sum_prompt:.4f} (target ≥ 0.95)"
        )
        print(f"prompt-eval time with cache: {sum_ms:.0f} ms")
        print(
            f"no-cache prompt eval: median {ms_per_token:.3f} ms/token over {len(per_token)} "
            f"runs -> estimated {est_nocache_ms:.0f} ms for the same session"
        )
        print(
            f"estimated prompt-eval time saved: {est_nocache_ms - sum_ms:.0f} ms "
            f"({est_nocache_ms / max(sum_ms, 1e-9):.1f}x less prompt-eval time)"
        )
        print(f"generation speed: median {statistics.median(tps_all):.0f} tokens/s")

# -- part 2: scenarios through the controller -------------------------------------------

FACTS = "The sky over the bench is green today. The tea is oolong. The cat is asleep."


@dataclass
class Step:
    creature: str
    messages: list[ChatMessage]
    reply: str
    usage: Usage | None


@dataclass
class Measured:
    """A model for the controller: the real server evaluates every prompt on the creature's
    slot; the reply is the model's own, or the next scripted one (then only one token is
    generated, so the slot holds the prompt and the scripted reply is new next time)."""

    creature: str
    client: OpenAIClient
    log: list[Step]
    script: list[str] | None = None
    name: str = "bench"
    last_usage: Usage | None = None

    def describe(self) -> str:
        return f"bench model for {self.creature}"

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        text = ""
        if self.script is None:
            async for delta in self.client.stream(request):
                text += delta.text
                yield delta
        else:
            measure = request.model_copy(update={"max_tokens": 1, "grammar": None})
            async for _ in self.client.stream(measure):
                pass
            text = self.script.pop(0) if self.script else "Done."
            for i in range(0, len(text), 16):
                yield StreamDelta(text=text[i:i + 16])
            yield StreamDelta(finish_reason="stop")
        self.last_usage = self.client.last_usage
        self.log.append(Step(self.creature, list(request.messages), text, self.last_usage))


_SECTION = re.compile(r"\n\n(?=## )")


def new_content(prev: Sequence[ChatMessage], cur: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages of ``cur`` that ``prev`` did not have (the reply, the incoming message,
    results, notices), wherever they stand; a context block counts without its status."""
    pool = Counter((m.role, m.content) for m in prev)
    out: list[ChatMessage] = []
    for m in cur:
        key = (m.role, m.content)
        if pool[key] > 0:
            pool[key] -= 1
            continue
        content = m.content or ""
        if m.role == "system" and content.startswith("## "):
            kept = [p for p in _SECTION.split(content) if not p.startswith("## Status")]
            if not kept:
                continue
            content = "\n\n".join(kept)
        out.append(ChatMessage(role=m.role, content=content))
    return out


def ideal_tokens(tok: LlamaTokenizer, messages: Sequence[ChatMessage]) -> int:
    """Tokens of ``messages`` as ChatML shows them: <|im_start|>role\ncontent<|im_end|>\n."""
    return sum(tok.count(m.content or "") + tok.count(f"{m.role}\n") + 3 for m in messages)


@dataclass
class Scenario:
    name: str
    rows: list[tuple[str, int, int, int]] = field(default_factory=list)  # who, step, evald, ideal
    folds: list[tuple[str, int, int, int]] = field(default_factory=list)  # the fold steps


def folded(prev: Sequence[ChatMessage], cur: Sequence[ChatMessage]) -> bool:
    """Whether old turns were folded between the two requests (the documented cache break:
    the summary line after the system prompt is new or changed)."""
    def summary(ms: Sequence[ChatMessage]) -> str:
        second = ms[1].content or "" if len(ms) > 1 and ms[1].role == "system" else ""
        return second if second.startswith("[earlier:") else ""

    return summary(cur) != summary(prev)


def totals(rows: Sequence[tuple[str, int, int, int]]) -> tuple[float, float, float]:
    ev = sum(r[2] for r in rows)
    ideal = sum(r[3] for r in rows)
    n = max(1, len(rows))
    return ev / n, ideal / n, ev / max(ideal, 1)


def report(sc: Scenario, tok: LlamaTokenizer, log: list[Step]) -> Scenario:
    last: dict[str, Step] = {}
    print(f"\n== scenario: {sc.name} ==")
    print(f"{'step':>4} {'creature':>9} {'prompt':>7} {'cached':>7} {'evald':>6} {'ideal':>6}")
    for i, st in enumerate(log, 1):
        u = st.usage
        evald = (u.prompt_n if u.prompt_n is not None else u.prompt_tokens) if u else 0
        prev = last.get(st.creature)
        ideal = -1 if prev is None else ideal_tokens(tok, new_content(prev.messages, st.messages))
        last[st.creature] = st
        fold = prev is not None and folded(prev.messages, st.messages)
        if fold:
            sc.folds.append((st.creature, i, evald, ideal))
        elif prev is not None:
            sc.rows.append((st.creature, i, evald, ideal))
        print(f"{i:>4} {st.creature:>9} {u.prompt_tokens if u else 0:>7} "
              f"{u.cached_tokens if u else 0:>7} {evald:>6} "
              f"{'first' if ideal < 0 else ideal:>6}{'  (old turns folded)' if fold else ''}")
    ev, ideal, ratio = totals(sc.rows)
    print(f"{sc.name}: evaluated {ev:.1f} tokens/step, ideal {ideal:.1f} tokens/step, "
          f"evaluated/ideal = {ratio:.3f} (target ≤ 1.05; first requests and "
          f"{len(sc.folds)} fold step(s) left out)")
    return sc


def write_creature(root: Path, name: str, extra: dict[str, Any]) -> None:
    folder = root / name
    folder.mkdir()
    (folder / "persona.md").write_text(system_prompt().replace("Fern", name.capitalize()),
                                       encoding="utf-8")
    (folder / "facts.txt").write_text(FACTS, encoding="utf-8")
    body = {"name": name, "system_prompt_file": "persona.md", "readable_paths": ["."],
            "tools": ["read_file", "info"], "max_iterations": 6, **extra}
    (folder / "config.yaml").write_text(yaml.safe_dump(body), encoding="utf-8")


def write_team(root: Path, names: Sequence[str]) -> Path:
    """A team of ``names`` (defaults everywhere); each may send on ``notes``."""
    team = {"terrarium": {
        "name": "bench", "input_channel": "inbox",
        "creatures": [{"name": n, "config": n,
                       "channels": {"listen": ["inbox", "notes"] if i == 0 else ["inbox"],
                                    "can_send": ["notes"]}}
                      for i, n in enumerate(names)],
        "channels": {"inbox": {"type": "broadcast", "schema": {"fields": {"text": "str"}}},
                     "notes": {"type": "queue", "schema": {"fields": {"summary": "str"}}}},
    }}
    (root / "terrarium.yaml").write_text(yaml.safe_dump(team, sort_keys=False),
                                         encoding="utf-8")
    for n in names:
        write_creature(root, n, {})
    return root


async def refuse_some(channel: str, payload: dict[str, Any]) -> int:
    if "refuse" in str(payload.get("summary", "")):
        raise ChannelRefusal("nobody listens on notes right now")
    return 1


def controllers(srv: EmbeddedServer, root: Path, names: Sequence[str], log: list[Step],
                scripts: dict[str, list[str] | None]) -> dict[str, Controller]:
    team = load_team(write_team(root, names))
    out = {}
    for slot, n in enumerate(names):  # one slot per creature, as the runtime assigns them
        client = srv.client(slot=slot, max_tokens=12, temperature=0.0)
        model = Measured(n, client, log, scripts.get(n))
        out[n] = Controller(assemble(team, n), model, send=refuse_some, slot=slot,
                            clock=datetime.now)
    return out


def call(tool: str, **args: str) -> str:
    body = "".join(f"@@{k}={v}\n" for k, v in args.items())
    return f"[/{tool}]\n{body}[{tool}/]"


def turn_text(i: int) -> Incoming:
    q = QUESTIONS[i % len(QUESTIONS)]
    return Incoming(text=q, channel="inbox", sender="user", payload={"text": q})


SCRIPTS: dict[str, Callable[[int], list[str]]] = {
    # the model reads a file, then answers
    "tools": lambda i: [f"Let me check.\n{call('read_file', path='facts.txt')}",
                        f"Answer {i}: the sky is green."],
    # a call left unclosed (a notice), a refused send, then the answer
    "notices": lambda i: ["Checking [/read_file]\n@@path=facts.txt\n",
                          f"Noting it.\n{call('send_notes', summary=f'refuse {i}')}",
                          f"Answer {i}: noted."],
}


async def scenario(srv: EmbeddedServer, tok: LlamaTokenizer, name: str, turns: int) -> Scenario:
    log: list[Step] = []
    with tempfile.TemporaryDirectory() as tmp:
        if name == "team":
            names = ["router", "worker", "speaker"]
            scripts: dict[str, list[str] | None] = {
                "router": [f"Routing {i}: to the worker." for i in range(turns)],
                "worker": [r for i in range(turns) for r in SCRIPTS["tools"](i)],
                "speaker": [f"Spoken {i}: the sky is green." for i in range(turns)],
            }
            ctls = controllers(srv, Path(tmp), names, log, scripts)
            for i in range(turns):
                for n in names:
                    await ctls[n].run_turn([turn_text(i)])
        else:
            script = (None if name == "plain"
                      else [r for i in range(turns) for r in SCRIPTS[name](i)])
            ctl = controllers(srv, Path(tmp), ["fern"], log, {"fern": script})["fern"]
            for i in range(turns):
                await ctl.run_turn([turn_text(i)])
    return report(Scenario(name), tok, log)


SCENARIOS = ("plain", "tools", "notices", "team")


async def run(steps: int, baseline_runs: int, turns: int, only: str | None) -> None:
    # 8192 per slot: the controller budgets a 4096-token window with an estimate, not the
    # model's tokenizer, so a long session may hold somewhat more real tokens
    async with EmbeddedServer(slots=3, ctx_per_slot=8192) as srv:
        tok = srv.tokenizer()
        if only in (None, "raw"):
            await raw_session(srv, tok, steps, baseline_runs)
        done = [await scenario(srv, tok, name, turns) for name in SCENARIOS
                if only in (None, name)]
        if done:
            print("\nsummary (tokens evaluated per step, after each creature's first request)")
            for sc in done:
                ev, ideal, ratio = totals(sc.rows)
                fold = f", {len(sc.folds)} fold step(s) left out" if sc.folds else ""
                print(f"  {sc.name:<8} evaluated {ev:6.1f}  ideal {ideal:6.1f}  "
                      f"ratio {ratio:.3f}  over {len(sc.rows)} steps{fold}")
        tok.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--baseline-runs", type=int, default=4)
    ap.add_argument("--turns", type=int, default=12, help="turns per scenario (per creature)")
    ap.add_argument("--only", choices=("raw", *SCENARIOS), default=None)
    args = ap.parse_args()
    t0 = time.monotonic()
    anyio.run(run, args.steps, args.baseline_runs, args.turns, args.only)
    print(f"wall time: {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    main()
