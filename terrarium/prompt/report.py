"""What ``terrarium prompt PATH CREATURE`` prints: the prompt, its section map, its hash."""

from __future__ import annotations

from terrarium.prompt.built_prompt import BuiltPrompt


def format_section_map(built: BuiltPrompt) -> str:
    """A fixed-width table: name, zone, bytes, tokens, then totals."""
    rows = [(s.name, s.zone, str(s.bytes), str(s.tokens)) for s in built.sections]
    total_b = sum(s.bytes for s in built.sections)
    total_t = sum(s.tokens for s in built.sections)
    head = ("section", "zone", "bytes", "tokens")
    foot = ("total", "", str(total_b), str(total_t))
    w = [max(len(r[c]) for r in [head, *rows, foot]) for c in range(4)]

    def fmt(r: tuple[str, str, str, str]) -> str:
        return f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:>{w[2]}}  {r[3]:>{w[3]}}".rstrip()

    rule = "-" * (sum(w) + 6)
    return "\n".join([fmt(head), rule, *(fmt(r) for r in rows), rule, fmt(foot)])


def format_prompt_report(built: BuiltPrompt, json: bool = False) -> str:
    """The prompt with section boundaries, the section map and the prefix hash (or JSON)."""
    if json:
        return built.to_json()
    lines = [built.render_text().rstrip("\n"), "", format_section_map(built)]
    if built.truncated:
        lines.append("truncated: " + ", ".join(built.truncated))
    if built.folded_turns:
        lines.append(f"folded turns: {built.folded_turns}")
    lines.append(f"prefix sha256: {built.prefix_hash}")
    return "\n".join(lines) + "\n"


__all__ = [
    "format_prompt_report",
    "format_section_map",
]
