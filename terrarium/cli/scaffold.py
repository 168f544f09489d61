"""``terrarium init [team|creature] DIR``: a small team (or creature) that works at once.

It runs on the scripted model (instant, offline, the same every time), so the first
``terrarium run`` shows typed channels, a tool call and an output without a model to
download; the comments in each ``config.yaml`` say how to move it onto the embedded model
or an OpenAI-compatible server. Nothing is overwritten: the folder must be new or empty.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from terrarium.cli.options import folder_problem
from terrarium.errors import TerrariumError, closest_name

EXIT_USAGE = 2  # as argparse's usage errors (cli.command.EXIT_CONFIG)

__all__ = ["TEMPLATES", "cmd_init", "write_template"]

_MODEL_NOTE = """\
# On the scripted model (script.yaml beside this file): instant and deterministic. For a
# real model replace `controller:` with `{provider: embedded}` (the built-in SmolLM2), or
# `{provider: openai, base_url: http://127.0.0.1:11434/v1, model: qwen2.5:1.5b}`.
"""

TEAM: dict[str, str] = {
    "terrarium.yaml": """\
# A two-creature team made by `terrarium init`. Try:
#   terrarium validate .
#   terrarium run . --input "Hello, I am Ada." -v
# The greeter answers on a typed channel (a text and a mood that must be happy or
# neutral); the writer prints what it is sent. `terrarium log` shows what happened.
terrarium:
  name: @NAME@
  input_channel: requests
  creatures:
    - name: greeter
      config: greeter
      channels: {listen: [requests], can_send: [replies]}
    - name: writer
      config: writer
      channels: {listen: [replies]}
  channels:
    requests:
      type: queue
      description: What the user says.
      schema: {fields: {text: str}}
    replies:
      type: queue
      description: The greeter's answer, for the writer.
      schema:
        fields:
          text: {type: str, description: The answer.}
          mood: {type: enum, values: [happy, neutral], description: How it sounds.}
""",
    "greeter/config.yaml": """\
name: greeter
description: Greets the user and remembers names.
system_prompt_file: prompts/system.md
""" + _MODEL_NOTE + """\
controller: {provider: scripted, script: script.yaml}
tools: [info, memory_write]
max_iterations: 3
""",
    "greeter/prompts/system.md": """\
You are {{ creature }}, the greeter. Remember the user's name with memory_write, then
answer on the replies channel with a short, friendly text and its mood.
""",
    "greeter/script.yaml": """\
# What the scripted model answers: the first step whose `match` is in the latest message.
steps:
  - match: "I am"
    reply: |
      [/memory_write]
      @@text=The user introduced themselves in their first message.
      [memory_write/]
      [/send_replies]
      @@text=Nice to meet you! I will remember your name.
      @@mood=happy
      [send_replies/]
default_reply: |
  [/send_replies]
  @@text=Hello! Tell me your name and I will remember it.
  @@mood=neutral
  [send_replies/]
""",
    "writer/config.yaml": """\
name: writer
description: Writes the greeter's answers for the user.
""" + _MODEL_NOTE + """\
controller: {provider: scripted, script: script.yaml}
output:
  default: screen
  named_outputs:
    screen: {type: stdout, description: What the user reads.}
""",
    "writer/script.yaml": """\
steps:
  - match: "mood: happy"
    reply: "Greeter says, happily: Nice to meet you! I will remember your name."
default_reply: "Greeter says: Hello! Tell me your name and I will remember it."
""",
}

CREATURE: dict[str, str] = {
    "config.yaml": """\
# A creature made by `terrarium init creature`. Try:
#   terrarium validate .
#   terrarium run . --input "Remember that the boat leaves at nine."
#   terrarium tools . @NAME@        # its tools: info, memory_write, memory_search
name: @NAME@
description: Keeps notes for the user.
system_prompt_file: prompts/system.md
""" + _MODEL_NOTE + """\
controller: {provider: scripted, script: script.yaml}
tools: [info, memory_write, memory_search]
max_iterations: 3
""",
    "prompts/system.md": """\
You are {{ creature }}, who keeps notes. Save what the user asks you to remember with
memory_write and look notes up with memory_search before you answer.
""",
    "script.yaml": """\
steps:
  - match: "Remember"
    reply: |
      Noted: the boat leaves at nine.
      [/memory_write]
      @@text=The boat leaves at nine.
      [memory_write/]
default_reply: "Ask me to remember something."
""",
}

TEMPLATES: dict[str, dict[str, str]] = {"team": TEAM, "creature": CREATURE}


def write_template(kind: str, folder: Path) -> list[Path]:
    """Write template ``kind`` into ``folder`` (new or empty); the files written."""
    if kind not in TEMPLATES:
        raise TerrariumError(f"there is no {kind!r} template", suggestion="team or creature")
    if problem := folder_problem(folder):
        raise TerrariumError(f"cannot write a {kind} there: {problem}; nothing was written",
                             suggestion="give a new folder name")
    if folder.exists() and any(folder.iterdir()):
        raise TerrariumError(f"{folder} already exists and is not an empty folder; nothing "
                             "was written", suggestion="give a new folder name")
    name = "".join(ch if ch.isalnum() else "_" for ch in folder.resolve().name) or "team"
    written: list[Path] = []
    for rel, text in TEMPLATES[kind].items():
        path = folder / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text.replace("@NAME@", name), encoding="utf-8")
        except OSError as exc:  # a file where a folder of the path should be, no permission
            raise TerrariumError(f"cannot write {path}: {exc.strerror or exc}",
                                 suggestion="give a new folder whose parent is a folder you "
                                 "may write to") from None
        written.append(path)
    return written


def cmd_init(args: argparse.Namespace) -> int:
    what: list[str] = list(args.what)
    if len(what) == 1:
        kind, target = "team", what[0]
    elif len(what) == 2 and what[0] in TEMPLATES:
        kind, target = what
    else:  # a usage error, as argparse's are: the words wrong named, exit 2
        if len(what) == 2:
            close = closest_name(what[0], TEMPLATES)
            problem = (f"{what[0]!r} is not a kind to write: give team or creature"
                       + (f" (did you mean {close!r}?)" if close else ""))
        else:
            problem = (f"one argument too many: {what[2]!r} (init takes [team|creature] DIR; "
                       "quote a folder name that has spaces)")
        print(f"usage: terrarium init [-h] [team|creature] DIR\nterrarium init: error: "
              f"{problem}", file=sys.stderr)
        return EXIT_USAGE
    if not target.strip():
        raise TerrariumError("the folder to write is empty",
                             suggestion="e.g. terrarium init team my_team")
    folder = Path(target)
    written = write_template(kind, folder)
    print(f"wrote a {kind} to {folder}/ ({len(written)} files):")
    for path in written:
        print(f"  {path}")
    print(f"next: terrarium validate {folder} && terrarium run {folder} --input "
          + ("'Hello, I am Ada.'" if kind == "team" else "'Remember that the boat leaves "
             "at nine.'"))
    return 0
