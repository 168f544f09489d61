"""``terrarium run``: drive a team (or one creature) from --input or stdin lines."""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from terrarium.cli.console import ConsolePrinter
from terrarium.config import Team, load_any
from terrarium.errors import RuntimeFailure, TerrariumError
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

__all__ = ["cmd_run", "load_runnable", "parse_creatures", "run_command"]


def cmd_run(args: argparse.Namespace) -> int:
    """The ``run`` command: one event loop for the whole run."""
    return anyio.run(run_command, args)


async def _lines(args: argparse.Namespace) -> AsyncIterator[str]:
    if args.input:
        for text in args.input:
            yield text
        return
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            print("you> ", end="", flush=True)
        line = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        if not line:
            return
        if line.strip():
            yield line.rstrip("\n")


def parse_creatures(spec: str | None, known: list[str], *, allow_none: bool = False
                    ) -> frozenset[str] | None:
    """``a,b`` → those creatures; ``all`` or nothing → None (all); ``none`` → empty."""
    if spec is None or spec.strip() in ("", "all"):
        return None
    if allow_none and spec.strip() == "none":
        return frozenset()
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise RuntimeFailure(f"there is no creature {unknown[0]!r} in this team",
                             suggestion=f"one of: {', '.join(known)}")
    return frozenset(names)


def load_runnable(path: Path) -> Team:
    result = load_any(path)
    if not isinstance(result, Team):
        raise TerrariumError(f"{path} is a package; run one of its terrariums or creatures",
                             suggestion="e.g. terrarium run examples/voice_assistant")
    return result


async def _until_idle_or_limit(rt: TeamRuntime, max_turns: int | None) -> bool:
    """Wait for the team to go quiet; True when the turn limit was reached."""
    async with anyio.create_task_group() as tg:
        hit = False

        async def watch() -> None:
            nonlocal hit
            while max_turns is not None:
                if rt.turns_total >= max_turns:
                    hit = True
                    tg.cancel_scope.cancel()
                    return
                await anyio.sleep(0.02)

        tg.start_soon(watch)
        await rt.wait_idle()
        tg.cancel_scope.cancel()
    return hit


def _only_error(group: BaseExceptionGroup[Any]) -> BaseException | None:
    """The one real error inside nested task-group wrappers (cancellations aside), if one."""
    cancelled = anyio.get_cancelled_exc_class()
    leaves: list[BaseException] = []
    todo: list[BaseException] = [group]
    while todo:
        exc = todo.pop()
        if isinstance(exc, BaseExceptionGroup):
            todo.extend(exc.exceptions)
        elif not isinstance(exc, cancelled):
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 else None


async def run_command(args: argparse.Namespace) -> int:
    """Run, and let a failure surface as its own error (a sentence), not as a group."""
    try:
        return await _run_command(args)
    except BaseExceptionGroup as group:
        only = _only_error(group)
        if only is None:
            raise
        raise only from None


async def _run_command(args: argparse.Namespace) -> int:
    team = load_runnable(Path(args.path))
    opts = RuntimeOptions(runs_dir=Path(args.runs_dir), resume=args.resume, audio=args.audio)
    broker = getattr(args, "broker", None)
    if broker:  # past one machine: this process starts the run and hosts what it is told
        opts.broker = broker
        opts.host = parse_creatures(args.host_creatures, sorted(team.creatures),
                                    allow_none=True)
        opts.ack_wait = args.ack_wait
    if args.tui:
        # imported here only because Textual is slow to load and only --tui needs it
        from terrarium.tui import run_team_with_monitor

        return await run_team_with_monitor(team, lambda t: TeamRuntime(t, opts))
    single = not team.channels and len(team.creatures) == 1
    stdout_outputs = frozenset(
        (c.name, o) for c in team.creatures.values()
        for o, spec in c.config.output.named_outputs.items() if spec.type == "stdout")
    printer = ConsolePrinter(verbose=args.verbose, printed_elsewhere=stdout_outputs)
    timed_out = False
    async with TeamRuntime(team, opts) as rt:
        print(f"run {rt.run_id} of {team.name!r}; log {rt.log_path}", flush=True)
        if rt.resumed:
            total = sum(rt.resumed.values())
            print(f"resuming: {total} unconsumed message(s) redelivered", flush=True)
        async with anyio.create_task_group() as tg:
            tg.start_soon(printer.run, rt.bus)
            with anyio.move_on_after(args.timeout) as scope:
                if args.resume and await _until_idle_or_limit(rt, args.max_turns):
                    tg.cancel_scope.cancel()
                live = not single and not args.input and sys.stdin.isatty()
                async for text in _lines(args):
                    if single:
                        name = next(iter(team.creatures))
                        result = await rt.ask(name, text)
                        if result is not None and not rt.sinks.get(name):
                            print(f"{name}> {result.text.strip()}", flush=True)
                    elif live:
                        # a person at a terminal may speak while the assistant talks:
                        # send at once, which barges in on the current speech
                        await rt.send_user(text)
                    else:
                        await rt.send_user(text)
                        if await _until_idle_or_limit(rt, args.max_turns):
                            print(f"stopping: --max-turns {args.max_turns} reached")
                            break
                if live:
                    await _until_idle_or_limit(rt, args.max_turns)
            timed_out = scope.cancelled_caught
            await anyio.sleep(0.05)  # let the printer show the last events
            tg.cancel_scope.cancel()
        if timed_out:
            print(f"stopping: --timeout {args.timeout:g} s reached")
        print(f"run {rt.run_id}: {rt.turns_total} turn(s); `terrarium log {rt.run_id}"
              f"{'' if args.runs_dir == 'runs' else ' --runs-dir ' + args.runs_dir}` "
              "shows the timeline", flush=True)
    return 0
