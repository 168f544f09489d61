"""Prompt-cache benchmark: a 32-step session of one creature on the embedded model.

One slot, a fixed long system prompt (the byte-stable prefix) and a growing conversation.
With ``cache_prompt`` and a pinned ``id_slot`` each step should evaluate only its new tokens.
Prints per step prompt_tokens, cached_tokens and prompt-eval ms, then Σcached/Σprompt and the
prompt-eval time saved against a no-cache baseline measured in the same run (the same
requests at several points of the session replayed with ``cache_prompt: false`` on another
slot; median ms per prompt token).

Run: ``python bench/cache.py [--steps 32] [--baseline-runs 4]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import anyio

from terrarium.llm.completion import complete
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.types import ChatMessage, ChatRequest

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


async def run(steps: int, baseline_runs: int) -> None:
    async with EmbeddedServer(slots=2, ctx_per_slot=4096) as srv:
        tok = srv.tokenizer()
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
        tok.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--baseline-runs", type=int, default=4)
    args = ap.parse_args()
    t0 = time.monotonic()
    anyio.run(run, args.steps, args.baseline_runs)
    print(f"wall time: {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    main()
