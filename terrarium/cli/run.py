"""``terrarium run``: drive a team (or one creature) from --input or stdin lines.

Who approves the calls a creature's ``approve:`` lists, and answers ``ask_user``: ``--tui``
the monitor; a terminal (or ``--approve-from-stdin`` on a piped stdin) the prompt, through
the one stdin reader (``cli.human``); otherwise nobody, so such calls are refused at once.
``--yes`` approves every call whoever is there.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio

from terrarium import secrecy
from terrarium.cli.console import ConsolePrinter
from terrarium.cli.human import StdinRouter, TerminalHuman
from terrarium.cli.problems import Problem, ProblemTracker
from terrarium.cli.targets import load_one_team
from terrarium.config import Team
from terrarium.config.secret_names import secret_names
from terrarium.errors import ChannelRefusal, RuntimeFailure
from terrarium.llm.factory import describe_settings
from terrarium.llm.settings import ModelSettings
from terrarium.runtime.preflight import DryStart, raise_start_errors
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime
from terrarium.tools.approval import approve_all

__all__ = ["cmd_run", "load_checked", "load_runnable", "parse_creatures", "run_command"]


EXIT_FAILED = 1  # every creature of the team ended failed (or the run could not go on)
EXIT_DEGRADED = 3  # some creature ended failed; the others worked on
EXIT_TIMEOUT = 124  # as timeout(1): the run was stopped by --timeout
READY_WAIT = 600.0  # seconds the `you>` prompt waits for the start-up lines to end


def cmd_run(args: argparse.Namespace) -> int:
    """The ``run`` command: one event loop for the whole run."""
    args.finished = threading.Event()  # set when the run is over: the watchdog stands down
    try:
        return anyio.run(run_command, args)
    except KeyboardInterrupt:  # exit 130 (cli/command.py), and where the run is now
        print(interrupted_line(args), file=sys.stderr, flush=True)
        raise
    finally:
        args.finished.set()


def interrupted_line(args: argparse.Namespace) -> str:
    """The last line of a run Ctrl-C ended: what it cut short, whether (and how) the run is
    recorded, and the command that goes on (``--resume``) or starts again."""
    rt: TeamRuntime | None = getattr(args, "runtime", None)
    printer: ConsolePrinter | None = getattr(args, "printer", None)
    dirs = "" if args.runs_dir == "runs" else f" --runs-dir {args.runs_dir}"
    ready = printer.ready.is_set() if printer is not None else bool(rt and rt.run_id)
    if not ready:  # nothing was sent to the team yet
        doing = (printer.starting() if printer is not None else "") or (
            "loading the configuration" if rt is None else "starting the team")
        run = (f"run {rt.run_id} is recorded as {rt.status}, before it took any input"
               if rt is not None and rt.run_id else "no run was recorded")
        return (f"interrupted (Ctrl-C) while {doing}, before the team was ready: {run}; "
                f"the same command starts again (terrarium run {args.path}{dirs} ...)")
    assert rt is not None
    if rt.status not in ("running", "interrupted"):  # it had ended: a prefix was saving
        return (f"interrupted (Ctrl-C) after run {rt.run_id} ended ({rt.status}), before "
                f"the prompt prefix was saved; `terrarium log {rt.run_id}{dirs}` shows it")
    return (f"interrupted (Ctrl-C): run {rt.run_id} is recorded as interrupted; `terrarium "
            f"run {args.path}{dirs} --resume {rt.run_id}` delivers what it had not taken")


def _watchdog(timeout: float, finished: threading.Event,
              record_end: Callable[[], None] | None = None) -> None:
    """``--timeout`` holds even when tool code blocks the event loop (``time.sleep`` in an
    ``async def``, which no cancellation can reach): if the run has not ended 0.8 s past
    its deadline, the process exits 124 at once. ``record_end`` first records the run's
    final status (``timeout``, as a cooperative stop does) so ``terrarium runs``/``log``
    do not show it ``running`` forever; the rest of the log is left as a crash leaves it
    (resumable with ``--resume``). It gets at most a second: a log it cannot write in time
    does not keep the process alive."""
    if finished.wait(timeout + 0.8):
        return
    print(f"stopping: --timeout {timeout:g} s reached and the run did not give way; "
          "exiting now (resume it with --resume)", file=sys.stderr, flush=True)
    if record_end is not None:
        writer = threading.Thread(target=_quietly, args=(record_end,), daemon=True,
                                  name="timeout status")
        writer.start()
        writer.join(1.0)
    os._exit(EXIT_TIMEOUT)


def _quietly(fn: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):
        fn()


def clean_text(text: str | bytes, where: str) -> str:
    """Input as valid UTF-8 text: bytes that are not UTF-8 (in argv they arrive as lone
    surrogates) become U+FFFD, and the user is told, instead of the run ending on them."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        fixed = raw.decode("utf-8", "replace")
        print(f"note: {where} had bytes that are not UTF-8; each was replaced with "
              "\N{REPLACEMENT CHARACTER}", file=sys.stderr, flush=True)
        return fixed


class _FdLines:
    """Lines of stdin read straight from its file descriptor. The reader thread blocks in
    ``os.read``, which holds no lock of Python's: a read nobody answers (a terminal, a pipe
    left open) cannot keep the process from exiting at the end of the run, as a read
    through ``sys.stdin``'s buffer does (its lock is needed at interpreter shutdown)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""
        self.eof = False

    def readline(self) -> bytes:
        while b"\n" not in self.buf and not self.eof:
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.eof = True
            self.buf += chunk
        line, sep, rest = self.buf.partition(b"\n")
        self.buf = rest
        return line + sep


_STDIN: _FdLines | None = None


def _read_line() -> bytes:
    global _STDIN
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # a stand-in stdin (tests): its own lines
        fd = -1
    if fd >= 0:
        if _STDIN is None or _STDIN.fd != fd:
            _STDIN = _FdLines(fd)
        return _STDIN.readline()
    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        return bytes(stream.readline())
    return sys.stdin.readline().encode("utf-8", "surrogateescape")


def _read_text_line() -> str:
    """One stdin line as text for the router ("" at the end): bytes that are not UTF-8
    are replaced and the user told, so no input can stop the run."""
    raw = _read_line()
    return clean_text(raw, "stdin") if raw else ""


async def _lines(args: argparse.Namespace, router: StdinRouter,
                 printer: ConsolePrinter | None = None) -> AsyncIterator[str]:
    if args.input:
        for text in args.input:
            yield clean_text(text, "--input")
        return
    interactive = sys.stdin.isatty()
    if interactive and printer is not None:
        # the prompt comes after the start-up lines, never in the middle of them
        await printer.wait_ready(READY_WAIT)
    while True:
        if interactive:
            print("you> ", end="", flush=True)
        line = await router.readline()
        if line is None:
            return
        if line.strip():
            yield line


def _speech_wanted(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "wav", None)) or bool(getattr(args, "listen", False))


async def _speech_lines(args: argparse.Namespace, team: Team, rt: TeamRuntime
                        ) -> AsyncIterator[str]:
    """``--wav``/``--listen``: each utterance's text; speech starting barges in. The speech
    modules (numpy, onnxruntime) are imported here so that a typed run never pays for them."""
    from terrarium.voice.listen import SpeechListener, microphone_chunks, wav_chunks
    from terrarium.voice.transcribe import TranscriptionClient, TranscriptionSettings
    from terrarium.voice.vad import SileroVad, UtteranceCutter

    settings = team.transcription or TranscriptionSettings()
    vad = await anyio.to_thread.run_sync(SileroVad)
    listener = SpeechListener(UtteranceCutter(vad, settings.vad),
                              TranscriptionClient(settings), on_speech=rt.barge_in)
    chunks = microphone_chunks() if args.listen else wav_chunks(Path(p) for p in args.wav)
    async for text in listener.texts(chunks):
        print(f"you (speech)> {text}", flush=True)
        yield text


async def _send_user(rt: TeamRuntime, text: str, printer: ConsolePrinter) -> bool:
    """User input to the team; a refusal (too big, no listener, ...) is told, not fatal."""
    try:
        await rt.send_user(text)
    except ChannelRefusal as exc:  # said at once (before the next `you>`), and counted
        printer.tell(printer.problems.input_refused(exc.message))
        return False
    return True



def parse_creatures(spec: str | None, known: list[str], *, allow_none: bool = False
                    ) -> frozenset[str] | None:
    """``a,b`` → those creatures; ``all`` or nothing → None (all); ``none`` → empty."""
    if spec is None or spec.strip() in ("", "all"):
        return None
    if allow_none and spec.strip() == "none":
        return frozenset()
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:  # "," or " , ": it hosted nothing, without a word
        raise RuntimeFailure(f"{spec!r} names no creature",
                             suggestion=f"give names (a,b) from: {', '.join(known)}; "
                             "or all" + (", or none" if allow_none else ""))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise RuntimeFailure(f"there is no creature {unknown[0]!r} in this team",
                             suggestion=f"one of: {', '.join(known)}")
    return frozenset(names)


def load_runnable(path: Path, command: str = "serve") -> Team:
    return load_checked(path, command)[0]


def load_checked(path: Path, command: str = "run") -> tuple[Team, DryStart]:
    """The team at ``path`` and its dry start: refused before anything starts, exit 2.
    Hand the dry start to ``TeamRuntime(checked=...)`` so the start does not repeat it."""
    result = load_one_team(path, command)
    checked = raise_start_errors(result, window=False)  # refused before anything starts
    if secrecy.owns_environment:  # the variables the config names as secrets go too
        secrecy.take_secrets(secret_names(result))
    return result, checked


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
    team, checked = load_checked(Path(args.path), "run")
    opts = RuntimeOptions(runs_dir=Path(args.runs_dir), resume=args.resume, audio=args.audio,
                          prestart=getattr(args, "prestart", None))
    if getattr(args, "session", None):
        if args.resume:
            raise RuntimeFailure("--session and --resume cannot be used together",
                                 suggestion="a session resumes its own run; drop --resume")
        from terrarium.runtime.recording import LOG_FILE
        from terrarium.runtime.sessions import open_named_session

        opts.resume = open_named_session(Path(args.runs_dir) / LOG_FILE, team, args.session)
        opts.keep_history = True
    broker = getattr(args, "broker", None)
    if broker:  # past one machine: this process starts the run and hosts what it is told
        opts.broker = broker
        opts.host = parse_creatures(args.host_creatures, sorted(team.creatures),
                                    allow_none=True)
        if args.ack_wait is not None:
            opts.ack_wait = args.ack_wait
        opts.share_model = getattr(args, "share_model", None)
    if args.tui:
        # imported here only because Textual is slow to load and only --tui needs it
        from terrarium.tui import MonitorHuman, run_team_with_monitor

        _on_ready(args)  # the monitor's own start is not a second start's to hurry
        monitor = MonitorHuman()
        opts.approver = approve_all if args.yes else monitor.approve
        opts.answerer = monitor.answer
        made: list[TeamRuntime] = []

        def runtime(t: Team) -> TeamRuntime:
            made.append(TeamRuntime(t, opts, checked=checked))
            args.runtime = made[-1]  # for a Ctrl-C's line
            return made[-1]

        code = await run_team_with_monitor(team, runtime, human=monitor)
        if made and made[0].run_id:  # the monitor is gone: where to find the run again
            rt = made[0]
            print(f"run {rt.run_id} of {team.name!r} ({rt.status}): {rt.turns_total} turn(s); "
                  f"`terrarium log {rt.run_id}"
                  f"{'' if args.runs_dir == 'runs' else ' --runs-dir ' + args.runs_dir}` shows "
                  "the timeline", flush=True)
        return code
    router = StdinRouter(_read_text_line)
    if sys.stdin.isatty() or args.approve_from_stdin:
        human = TerminalHuman(router)
        opts.approver, opts.answerer = human.approve, human.answer
    if args.yes:
        opts.approver = approve_all
    single = not team.channels and len(team.creatures) == 1
    stdout_outputs = frozenset(
        (c.name, o) for c in team.creatures.values()
        for o, spec in c.config.output.named_outputs.items() if spec.type == "stdout")
    # the root creature answers the user, but has no output of its own unless it names one
    silent_root = team.root is not None and not team.root.config.output.named_outputs
    printer = ConsolePrinter(verbose=args.verbose, printed_elsewhere=stdout_outputs,
                             replies_of=frozenset({"root"}) if silent_root else frozenset())
    args.printer = printer  # what a Ctrl-C before ready cut short (cmd_run)
    opts.on_event = printer.progress  # start-up lines come before the printer subscribes
    opts.stdout = printer.sink_stream()  # a creature's stdout output shares the console
    printer.start_ticker()
    try:
        return await _drive(args, team, opts, printer, router, single, checked)
    finally:
        printer.stop_ticker()


async def _drive(args: argparse.Namespace, team: Team, opts: RuntimeOptions,
                 printer: ConsolePrinter, router: StdinRouter, single: bool,
                 checked: DryStart) -> int:
    """Start the team (dry start made: ``checked``), feed it, close with summary and code."""
    say, timed_out = printer.say, False
    rt = args.runtime = TeamRuntime(team, opts, checked=checked)  # for a Ctrl-C's line
    async with rt:
        _say_start(rt, team, say)
        async with anyio.create_task_group() as tg:
            tg.start_soon(printer.run, rt.bus)
            finished = getattr(args, "finished", None)
            if args.timeout is not None and finished is not None:
                log, run_id = rt.log, rt.run_id
                record = (lambda: log.set_run_status(run_id, "timeout")) if log else None
                threading.Thread(target=_watchdog, args=(args.timeout, finished, record),
                                 daemon=True, name="timeout watchdog").start()
            tg.start_soon(router.run)
            await printer.wait_ready(READY_WAIT)  # start-up lines first, then the replies
            _on_ready(args)
            with anyio.move_on_after(args.timeout) as scope:
                if args.resume and await _until_idle_or_limit(rt, args.max_turns):
                    tg.cancel_scope.cancel()
                await _feed(args, team, rt, router, printer, single)
            timed_out = scope.cancelled_caught
            if timed_out:
                rt.stopped_by_timeout()
            await anyio.sleep(0.05)  # let the printer show the last events
            tg.cancel_scope.cancel()
        printer.close()
        problems = printer.problems
        problems.finish()
        if problems.degraded:
            rt.mark_degraded()
        if timed_out:
            say(f"stopping: --timeout {args.timeout:g} s reached")
        if still := printer.warming():  # the runtime lets it finish: said, not a silent wait
            say(f"finishing the prompt prefix of {', '.join(still)} so the next start "
                "restores it (Ctrl-C skips this)")
    # the summary comes after the runtime's end, which may still cut off background jobs
    # (the run is then degraded): counted here, so the summary agrees with the exit code
    for lost in rt.lost_jobs:
        problems.job_lost(lost)
    log_cmd = (f"terrarium log {rt.run_id}"
               f"{'' if args.runs_dir == 'runs' else ' --runs-dir ' + args.runs_dir}")
    if not args.json:
        say(f"run {rt.run_id}: {rt.turns_total} turn(s), {problems.summary()}; "
            f"`{log_cmd}` shows the timeline")
    code = _exit_code(rt, problems, timed_out)
    if args.json:
        print(json.dumps(_summary(rt, problems, code, log_cmd), ensure_ascii=False), flush=True)
    if rt.status in ("failed", "degraded"):
        _report_failures(rt, problems)
    return code


def _on_ready(args: argparse.Namespace) -> None:
    """The team is ready: what ``terrarium run`` held back for its start resumes (the
    garbage collector, ``cli.command.StartCollector``)."""
    on_ready = getattr(args, "on_ready", None)
    if on_ready is not None:
        on_ready()


def _say_start(rt: TeamRuntime, team: Team, say: Callable[[str], None]) -> None:
    """The run's first lines: its id and log, each creature's model (never silently the
    wrong one), the sandbox note, what a resume redelivers."""
    say(f"run {rt.run_id} of {team.name!r}; log {rt.log_path}")
    for name, cdef in sorted(team.everyone.items()):
        settings = cdef.config.controller or ModelSettings()
        say(f"  {name}: {describe_settings(settings)}")
    if note := unsandboxed_note(team):
        print(note, file=sys.stderr, flush=True)
    if rt.resumed:
        say(f"resuming: {sum(rt.resumed.values())} unconsumed message(s) redelivered")


async def _feed(args: argparse.Namespace, team: Team, rt: TeamRuntime, router: StdinRouter,
                printer: ConsolePrinter, single: bool) -> None:
    """Give the team the user's lines (``--input``, stdin or speech) until they end or
    ``--max-turns`` is reached: a single creature is asked and answers; a person at a
    terminal (live) sends at once; piped lines wait for the team to be idle in between."""
    say = printer.say
    speech = _speech_wanted(args)
    live = not single and (getattr(args, "listen", False) or (
        not args.input and not speech and sys.stdin.isatty()))
    source = _speech_lines(args, team, rt) if speech else _lines(args, router, printer)
    async for text in source:
        if single:
            name = next(iter(team.creatures))
            result = await rt.ask(name, text)
            if result is not None and not rt.sinks.get(name):
                say(f"{name}> {result.text.strip()}")
        elif live:
            # a person at a terminal may speak while the assistant talks:
            # send at once, which barges in on the current speech
            await _send_user(rt, text, printer)
        else:
            if not await _send_user(rt, text, printer):
                continue
            if await _until_idle_or_limit(rt, args.max_turns):
                say(f"stopping: --max-turns {args.max_turns} reached")
                return
        if args.max_turns is not None and rt.turns_total >= args.max_turns:
            say(f"stopping: --max-turns {args.max_turns} reached")  # not a line more
            return
    # single: background jobs and their results too
    if (live or single) and await _until_idle_or_limit(rt, args.max_turns):
        say(f"stopping: --max-turns {args.max_turns} reached")


def _report_failures(rt: TeamRuntime, problems: ProblemTracker) -> None:
    """On stderr, why a failed or degraded run is so: each failed creature, each problem
    never made good, each lost job, then the run's status."""
    for name, why in sorted(rt.failed_creatures.items()):
        print(f"error: creature {name!r} ended failed: {why}", file=sys.stderr)
    for p in problems.unresolved:
        if p.kind == "lost job":  # its sentence names the creature and the job
            print(f"error: {p.why}", file=sys.stderr)
            continue
        what = ("gave up" if p.kind == "gave up" else f"could not take {p.what}" if p.lost
                else f"{p.what or p.kind} was never made good")
        print(f"error: {p.creature}: {what}: {p.why}", file=sys.stderr)
    print(f"run {rt.run_id} {rt.status}", file=sys.stderr, flush=True)


def _exit_code(rt: TeamRuntime, problems: ProblemTracker, timed_out: bool) -> int:
    """1: every creature failed; 3: some did, a creature gave up, or a refusal was never
    made good (degraded); 124: stopped by --timeout; else 0."""
    if rt.status == "failed":
        return EXIT_FAILED
    if rt.status == "degraded" or problems.degraded:
        return EXIT_DEGRADED
    return EXIT_TIMEOUT if timed_out else 0


def _summary(rt: TeamRuntime, problems: ProblemTracker, code: int, log_cmd: str
             ) -> dict[str, Any]:
    """``run --json``: the closing summary as one JSON object (the last line of stdout)."""
    return {
        "run_id": rt.run_id, "status": rt.status, "exit_code": code,
        "turns": rt.turns_total, "log": str(rt.log_path), "timeline": log_cmd,
        "problems": problems.counts(),
        "unresolved": [_problem(p) for p in problems.unresolved],
        "inputs_not_sent": [_problem(p) for p in problems.inputs_not_sent],
        "failed_creatures": dict(sorted(rt.failed_creatures.items())),
        "creatures": {n: {"state": st.state, "turns": st.turns, "tokens_in": st.tokens_in,
                          "tokens_out": st.tokens_out}
                      for n, st in sorted(rt.statuses.items())},
    }


def _problem(p: Problem) -> dict[str, str]:
    return {"kind": p.kind, "creature": p.creature, "what": p.what, "why": p.why}


def unsandboxed_note(team: Team) -> str | None:
    """One line naming the creatures whose shell commands run without the sandbox they
    would get on a host where bubblewrap works (docs/security.md), or None."""
    shells = [(name, cdef) for name, cdef in sorted(team.everyone.items())
              if "shell" in cdef.config.tools]
    if not shells:  # the shell tool's module (and the sandbox's) loads only for a shell
        return None
    from terrarium.tools.shell import sandbox_line

    names = [name for name, cdef in shells
             if sandbox_line(cdef.config.tool_options.get("shell", {}))[0]]
    if not names:
        return None
    why = sandbox_line({})[1].removeprefix("shell: NOT sandboxed: ")
    return (f"note: the shell commands of {', '.join(names)} run without a sandbox ({why}); "
            "see docs/security.md")
