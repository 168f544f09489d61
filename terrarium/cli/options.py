"""The kinds of value the command line's options take, each checked as it is parsed.

An option's value is refused by argparse (``terrarium run: error: argument --timeout: ...``,
exit 2) when it cannot mean anything: a negative count, a time that is not a finite
number of seconds, a port past 65535, a ``--runs-dir`` that is a file. Without these, such
values ran silently (``--max-turns -1`` ran one turn, ``--timeout -5`` ended at once with
exit 124, ``--port 70000`` served on another port) or ended in a traceback
(``--timeout inf``, ``--port -1``, ``--runs-dir`` under a file).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from terrarium.errors import closest_name

__all__ = ["SESSION_NAME_MAX", "folder_problem", "misplaced", "output_file", "path", "port",
           "rate", "runs_dir", "seconds", "session_name", "unknown_command",
           "unknown_leading_option", "unrecognized", "wav_file", "whole"]

SESSION_NAME_MAX = 200
"""The longest session name, the same as the sessions API's (``POST /v1/sessions``)."""


def _read(kind: Callable[[str], float], text: str, what: str) -> Any:
    """``text`` as ``kind`` (int or float), or argparse's refusal saying it is not ``what``."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def path(text: str) -> str:
    """A path argument that says something: an empty one (an unset ``"$TEAM"``) meant the
    current folder, which was then validated, run or migrated as if named."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a folder (use . for this one)")
    return text


def whole(least: int) -> Callable[[str], int]:
    """A whole number of at least ``least``."""

    def parse(text: str) -> int:
        value = _read(int, text, "a whole number")
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} is below {least}; give {least} or more")
        return value

    parse.__name__ = "whole number"  # argparse names the type in some messages
    return parse


def seconds(*, zero: bool = False) -> Callable[[str], float]:
    """A finite number of seconds, above 0 (or 0 too, with ``zero``)."""

    def parse(text: str) -> float:
        value = _read(float, text, "a number of seconds")
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of seconds; "
                                             "give one like 30 or 0.5")
        if value < 0 or (value == 0 and not zero):
            least = "0 or more" if zero else "more than 0"
            raise argparse.ArgumentTypeError(f"{text} seconds is not allowed; give {least}")
        return value

    parse.__name__ = "seconds"
    return parse


def rate(text: str) -> float:
    """A finite number above 0 (of things per second)."""
    value = _read(float, text, "a number")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; give a number above 0 "
                                         "such as 10")
    return value


def port(text: str) -> int:
    """A TCP port: 0 (any free one) to 65535."""
    value = _read(int, text, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port; give 1 to 65535 (or 0 for "
                                         "any free port)")
    return value


def session_name(text: str) -> str:
    """A session's name: some text, at most as long as the sessions API allows."""
    if not text.strip():
        raise argparse.ArgumentTypeError("a session needs a name; give some text, e.g. "
                                         "--session ada")
    if len(text) > SESSION_NAME_MAX:
        raise argparse.ArgumentTypeError(f"the name is {len(text)} characters long; at most "
                                         f"{SESSION_NAME_MAX} are allowed")
    return text


def folder_problem(path: Path) -> str | None:
    """Why ``path`` cannot be (or become) a folder: a file on the way, a dangling symlink;
    None when it is a folder or can be made one."""
    for p in (path, *path.parents):
        if p.is_symlink() and not p.exists():
            return f"{p} is a symlink to {p.readlink()}, which does not exist"
        if p.exists():
            if p.is_dir():
                return None
            return f"{p} is a file, not a folder" + ("" if p == path else f" (in {path})")
    return None


def runs_dir(text: str) -> str:
    """A folder for run logs: one that exists, or one that can be made (no file on the way)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a folder, e.g. --runs-dir runs")
    if problem := folder_problem(Path(text)):
        raise argparse.ArgumentTypeError(f"{problem}; give a folder for the run logs")
    return text


def wav_file(text: str) -> str:
    """A ``--wav`` file that is there to read: a missing one was told only after the team
    had started, and a FIFO's read waited for ever. (Its content is checked as it is read.)"""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{text} does not exist; give a PCM .wav file")
    if not path.is_file():
        kind = "a folder" if path.is_dir() else "not a regular file (a pipe, socket or device)"
        raise argparse.ArgumentTypeError(f"{text} is {kind}; give a PCM .wav file")
    return text


_ONLY_WITH = {
    "run": [("host_creatures", "--host-creatures", "broker", "--broker"),
            ("ack_wait", "--ack-wait", "broker", "--broker"),
            ("share_model", "--no-share-model", "broker", "--broker")],
    "serve": [("ack_wait", "--ack-wait", "remote", "--remote"),
              ("remote_wait", "--remote-wait", "remote", "--remote")],
}
"""Options that mean something only beside another: (option, its flag, the other, its
flag). Given alone they were ignored without a word."""


def misplaced(args: argparse.Namespace) -> str | None:
    """The sentence for an option given without the one it works with, if any."""
    for dest, flag, other, other_flag in _ONLY_WITH.get(getattr(args, "command", ""), []):
        if getattr(args, dest, None) is not None and not getattr(args, other, None):
            return f"{flag} applies only with {other_flag}; add {other_flag} or leave {flag} out"
    return None


def output_file(text: str) -> str:
    """A file to write (``graph -o``): not empty, not a folder, in a folder that exists."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a file, e.g. -o team.svg, or "
                                         "leave -o out for stdout")
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file in it, e.g. "
                                         f"{path / 'team.svg'}")
    parent = path.parent
    if problem := folder_problem(parent):
        raise argparse.ArgumentTypeError(f"{problem}; give a file in a folder")
    if not parent.exists():
        raise argparse.ArgumentTypeError(f"the folder {parent} does not exist; make it first "
                                         "or give a file in another")
    return text


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's commands, each with its own parser (argparse keeps them privately)."""
    group = getattr(parser, "_subparsers", None)
    return {name: sub for action in getattr(group, "_group_actions", ())
            for name, sub in (getattr(action, "choices", None) or {}).items()}


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    return [flag for action in parser._actions for flag in action.option_strings]


def unknown_command(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> str | None:
    """A first argument that is no command, with the command meant (argparse lists all
    thirteen and leaves the reader to spot ``validate`` in ``valdiate``)."""
    words = list(sys.argv[1:] if argv is None else argv)
    if not words or words[0].startswith("-"):
        return None
    commands = list(_commands(parser))
    if not commands or words[0] in commands:
        return None
    close = closest_name(words[0], commands)
    return (f"there is no command {words[0]!r}; "
            + (f"did you mean {close!r}?" if close else f"the commands: {', '.join(commands)}")
            + " (terrarium --help says what each does)")


def unknown_leading_option(parser: argparse.ArgumentParser, argv: Sequence[str] | None
                           ) -> str | None:
    """An option before the command that ``terrarium`` itself does not take: argparse said
    only "the following arguments are required: COMMAND", never naming it."""
    own = _flags(parser)
    for word in list(sys.argv[1:] if argv is None else argv):
        if word == "--" or not word.startswith("-") or word == "-":
            return None
        name = word.split("=", 1)[0]
        if name in own or (name.startswith("--") and any(f.startswith(name) for f in own)):
            continue  # argparse takes an unambiguous abbreviation too
        users = [c for c, sub in _commands(parser).items() if name in _flags(sub)]
        where = (f"it is an option of `terrarium {users[0]}`: put it after the command "
                 f"(terrarium {users[0]} ... {name})" if users else
                 "a command's options come after it (terrarium COMMAND --help lists them)")
        return (f"there is no option {name!r} of terrarium's own (those are --help and "
                f"--version); {where}")
    return None


def unrecognized(parser: argparse.ArgumentParser, command: str, extra: Sequence[str]
                 ) -> tuple[argparse.ArgumentParser, str]:
    """The command's own parser, and the sentence for the first argument it did not
    take: argparse said "unrecognized arguments" under the top-level usage, which has
    none of the command's options."""
    sub = _commands(parser).get(command, parser)
    first = extra[0]
    if first.startswith("-") and first != "-":
        name = first.split("=", 1)[0]
        flags = [f for f in _flags(sub) if f.startswith("--")]
        close = closest_name(name, flags)
        hint = (f"did you mean {close!r}?" if close else
                f"its options: {', '.join(flags)}" if flags else "it takes no options")
        return sub, f"there is no option {name!r} of `terrarium {command}`; {hint}"
    formatter = sub._get_formatter()
    takes = " ".join(formatter._format_args(a, a.metavar or a.dest.upper())
                     for a in sub._get_positional_actions())
    return sub, (f"one argument too many: {first!r} (`terrarium {command}` takes {takes}; "
                 "quote a value that has spaces)")
