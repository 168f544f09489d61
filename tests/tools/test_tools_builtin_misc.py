"""think, ask_user (with a fake answerer), what every built-in declares, and the creature
config's workspace / tool_options reaching the tools."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.config.creature import load_creature
from terrarium.config.packages import build_index
from terrarium.errors import ConfigError
from terrarium.formats import get_format
from terrarium.formats.grammar import grammar_for
from terrarium.formats.native import openai_tools
from terrarium.tools.ask import NOBODY, AskUserTool
from terrarium.tools.base import Tool, ToolContext
from terrarium.tools.registry import BUILTIN_TOOLS, ToolRegistry, known_tool_names
from terrarium.tools.runner import ToolResult, run_tool
from terrarium.tools.think import ThinkTool

NEW = ["ask_user", "edit", "glob", "grep", "multi_edit", "shell", "think", "tree", "web_fetch"]


def call(tool: type[Tool], args: dict[str, Any], c: ToolContext) -> ToolResult:
    return anyio.run(run_tool, tool, args, c)


def test_think_acknowledges(tmp_path: Path) -> None:
    res = call(ThinkTool, {"thought": "first read the test, then fix"},
               ToolContext(creature="w", cwd=tmp_path))
    assert res == ToolResult(ok=True, text="Noted.")
    assert not call(ThinkTool, {"thought": ""}, ToolContext(creature="w", cwd=tmp_path)).ok


class FakeHuman:
    def __init__(self, reply: str | None) -> None:
        self.reply = reply
        self.asked: list[tuple[str, tuple[str, ...]]] = []

    async def __call__(self, question: str, choices: Sequence[str]) -> str | None:
        self.asked.append((question, tuple(choices)))
        return self.reply


def test_ask_user_answered(tmp_path: Path) -> None:
    human = FakeHuman("  use the second option  ")
    c = ToolContext(creature="w", cwd=tmp_path, answerer=human)
    res = call(AskUserTool, {"question": " Which branch? ", "choices": ["main", "dev"]}, c)
    assert res == ToolResult(ok=True, text="The user answered: use the second option")
    assert human.asked == [("Which branch?", ("main", "dev"))]


def test_ask_user_nobody_there(tmp_path: Path) -> None:
    res = call(AskUserTool, {"question": "Which branch?"}, ToolContext(creature="w", cwd=tmp_path))
    assert res == ToolResult(ok=True, text=NOBODY)
    assert "nobody is there to answer; continue without it" in NOBODY.lower()


@pytest.mark.parametrize("reply", [None, "   "])
def test_ask_user_no_answer(tmp_path: Path, reply: str | None) -> None:
    c = ToolContext(creature="w", cwd=tmp_path, answerer=FakeHuman(reply))
    res = call(AskUserTool, {"question": "Which branch?"}, c)
    assert res.ok and res.text.startswith("No answer came")


def test_ask_user_arguments_checked(tmp_path: Path) -> None:
    c = ToolContext(creature="w", cwd=tmp_path, answerer=FakeHuman("x"))
    assert not call(AskUserTool, {"question": ""}, c).ok
    assert not call(AskUserTool, {"question": "q", "choices": [str(i) for i in range(11)]}, c).ok


# -- what every built-in declares ------------------------------------------------------------


def test_new_tools_registered() -> None:
    assert set(NEW) <= set(known_tool_names())


@pytest.mark.parametrize("name", sorted(BUILTIN_TOOLS))
def test_builtin_declares_docs_args_and_options(name: str) -> None:
    cls = BUILTIN_TOOLS[name]
    assert cls.summary and "\n" not in cls.summary
    assert cls.documentation.strip()
    assert cls.full_doc().startswith(f"{name}: {cls.summary}\n")
    assert cls.args_model.model_config.get("extra") == "forbid"
    assert cls.guidance_bucket in ("first", "normal", "last")
    if cls.options_model is not None:
        assert cls.options_model.model_config.get("extra") == "forbid"
        cls.options_model()  # every option has a default


def test_concurrency_flags_are_honest() -> None:
    safe = {n for n, c in BUILTIN_TOOLS.items() if c.concurrency_safe}
    assert safe == {"glob", "grep", "info", "memory_search", "read_file", "think", "tree",
                    "web_fetch"}


@pytest.mark.parametrize("fmt", ["bracket", "xml", "native"])
def test_all_builtins_fit_every_call_format(fmt: str) -> None:
    reg = ToolRegistry.from_refs(known_tool_names(), owner="test")
    f = get_format(fmt, reg.specs())
    if f.textual:
        assert "multi_edit" in grammar_for(f)
    else:
        assert {t["function"]["name"] for t in openai_tools(f.specs)} >= set(NEW)


# -- config: workspace and tool_options -------------------------------------------------------


def load(folder: Path, text: str) -> tuple[Any, list[ConfigError]]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(text)
    errors: list[ConfigError] = []
    return load_creature(folder, build_index(folder), errors), errors


def test_workspace_is_relative_to_the_config(tmp_path: Path) -> None:
    lc, errors = load(tmp_path / "c", "name: c\ntools: [shell]\nworkspace: ../repo\n"
                      "tool_options:\n  shell: {timeout: 30, allowed_commands: ['pytest*']}\n")
    assert errors == []
    assert lc.config.workspace == str((tmp_path / "repo").resolve())
    assert lc.config.tool_options == {"shell": {"timeout": 30, "allowed_commands": ["pytest*"]}}


def test_tool_options_errors_are_located(tmp_path: Path) -> None:
    _, errors = load(tmp_path / "c", "name: c\ntools: [shell]\ntool_options:\n"
                     "  shell:\n    timeout: 30\n    allowed_comands: []\n")
    assert len(errors) == 1
    err = errors[0]
    assert err.location is not None and err.location.line == 6
    assert "unknown key 'allowed_comands'" in str(err)
    assert err.suggestion and "allowed_commands" in err.suggestion


def test_options_reach_the_tool(tmp_path: Path) -> None:
    from terrarium.tools.shell import ShellTool

    c = ToolContext(creature="c", cwd=tmp_path,
                    tool_options={"shell": {"allowed_commands": ["echo *"]}})
    assert ShellTool.options(c).allowed_commands == ["echo *"]
    assert call(ShellTool, {"command": "ls"}, c).text.startswith("The command 'ls' is not")
