"""The ``terrarium`` command: validate, prompt, run, models, log, monitor."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from terrarium.config import Team, load_any
from terrarium.errors import ConfigErrors, TerrariumError

EXIT_CONFIG = 2


def summarize_team(team: Team) -> str:
    """The one-screen summary ``validate`` prints: creatures, channels, who talks to whom."""
    lines = [f"terrarium {team.name!r} ({team.path}) is valid", "", "creatures:"]
    for name in sorted(team.creatures):
        c = team.creatures[name]
        cfg = c.config
        model = cfg.controller.provider if cfg.controller else "embedded"
        tools = ", ".join(cfg.tools) or "-"
        lines.append(f"  {name:<12} model={model:<9} format={cfg.tool_format:<7} tools: {tools}")
        if cfg.output.named_outputs:
            outs = ", ".join(f"{k}({v.type})" for k, v in sorted(cfg.output.named_outputs.items()))
            lines.append(f"  {'':<12} outputs: {outs}")
    if team.channels:
        lines += ["", "channels:"]
        for name in sorted(team.channels):
            ch = team.channels[name]
            schema = ch.message_type.name if ch.message_type else "(untyped)"
            lines.append(f"  {name:<14} {ch.type:<9} schema={schema}")
            lines.append(f"  {'':<14} senders: {', '.join(ch.senders) or '-'}"
                         f"  ->  listeners: {', '.join(ch.listeners) or '-'}")
    if team.input_channel:
        lines += ["", f"user input goes to channel {team.input_channel!r}"]
    if team.root:
        lines.append("root creature: yes")
    return "\n".join(lines)


def cmd_validate(args: argparse.Namespace) -> int:
    result = load_any(Path(args.path))
    if isinstance(result, Team):
        print(summarize_team(result))
    else:
        index, teams = result
        print(f"package is valid: {', '.join(sorted(index.packages))}")
        for team in teams:
            print()
            print(summarize_team(team))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="terrarium", description="Run teams of LLM agents defined in YAML."
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    v = sub.add_parser("validate", help="check a terrarium, creature or package; start nothing")
    v.add_argument("path", help="terrarium folder, creature folder, or kohaku.yaml package")
    v.set_defaults(func=cmd_validate)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ConfigErrors as exc:
        print(exc.render(), file=sys.stderr)
        return EXIT_CONFIG
    except TerrariumError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
