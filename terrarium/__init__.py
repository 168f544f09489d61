"""terrarium: teams of LLM agents ("creatures") defined in YAML, talking over typed channels.

The public API is small; everything else is reachable by module for those who need it.

    from terrarium import load_team, TeamRuntime, RuntimeOptions

    team = load_team("examples/voice_assistant")        # validates everything first
    async with TeamRuntime(team, RuntimeOptions()) as rt:
        await rt.send_user("Hello!")
        await rt.wait_idle()

The names below are loaded on first use (PEP 562), not when the package is imported: every
``import terrarium.<anything>`` runs this file first, and an eager import of the runtime here
would drag the top floors into the bottom ones (``import terrarium.errors`` loading the
controller), which the layer rule and ``tests/test_layers.py`` forbid.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the type checker and the editor see; at run time, __getattr__ below
    from terrarium.config import Team, load_any, load_single_creature, load_team
    from terrarium.controller.assembly import assemble
    from terrarium.controller.loop import Controller, Incoming, TurnResult
    from terrarium.errors import (
        ChannelRefusal,
        ConfigError,
        ConfigErrors,
        ModelError,
        TemplateError,
        TerrariumError,
        ToolError,
    )
    from terrarium.formats import get_format
    from terrarium.llm import ChatRequest, ControllerSettings, EmbeddedServer, OpenAIClient
    from terrarium.llm.scripted import ScriptedModel
    from terrarium.prompt.builder import PromptBuilder
    from terrarium.runtime.runtime import RuntimeOptions, Supervision, TeamRuntime
    from terrarium.tools.base import Tool, ToolContext

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "ChannelRefusal": "terrarium.errors",
    "ChatRequest": "terrarium.llm",
    "ConfigError": "terrarium.errors",
    "ConfigErrors": "terrarium.errors",
    "Controller": "terrarium.controller.loop",
    "ControllerSettings": "terrarium.llm",
    "EmbeddedServer": "terrarium.llm",
    "Incoming": "terrarium.controller.loop",
    "ModelError": "terrarium.errors",
    "OpenAIClient": "terrarium.llm",
    "PromptBuilder": "terrarium.prompt.builder",
    "RuntimeOptions": "terrarium.runtime.runtime",
    "ScriptedModel": "terrarium.llm.scripted",
    "Supervision": "terrarium.runtime.runtime",
    "Team": "terrarium.config",
    "TeamRuntime": "terrarium.runtime.runtime",
    "TemplateError": "terrarium.errors",
    "TerrariumError": "terrarium.errors",
    "Tool": "terrarium.tools.base",
    "ToolContext": "terrarium.tools.base",
    "ToolError": "terrarium.errors",
    "TurnResult": "terrarium.controller.loop",
    "assemble": "terrarium.controller.assembly",
    "get_format": "terrarium.formats",
    "load_any": "terrarium.config",
    "load_single_creature": "terrarium.config",
    "load_team": "terrarium.config",
}
"""Each public name → the module that defines it (loaded the first time the name is asked for)."""

__all__ = [
    "ChannelRefusal",
    "ChatRequest",
    "ConfigError",
    "ConfigErrors",
    "Controller",
    "ControllerSettings",
    "EmbeddedServer",
    "Incoming",
    "ModelError",
    "OpenAIClient",
    "PromptBuilder",
    "RuntimeOptions",
    "ScriptedModel",
    "Supervision",
    "Team",
    "TeamRuntime",
    "TemplateError",
    "TerrariumError",
    "Tool",
    "ToolContext",
    "ToolError",
    "TurnResult",
    "__version__",
    "assemble",
    "get_format",
    "load_any",
    "load_single_creature",
    "load_team",
]


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use, then keep it here."""
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'terrarium' has no attribute {name!r}") from None
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
