"""terrarium: teams of LLM agents ("creatures") defined in YAML, talking over typed channels.

The public API is small; everything else is reachable by module for those who need it.

    import terrarium

    report = await terrarium.run("examples/scripted_newsroom", ["A comet over Oslo."])

    team = terrarium.load_team("examples/voice_assistant")   # validates everything first
    async with terrarium.TeamRuntime(team, terrarium.RuntimeOptions()) as rt:
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
    from terrarium.controller.loop import TurnResult
    from terrarium.errors import (
        ChannelRefusal,
        ConfigError,
        ConfigErrors,
        ModelError,
        RuntimeFailure,
        TemplateError,
        TerrariumError,
        ToolError,
    )
    from terrarium.events import Event
    from terrarium.llm import ChatRequest, ControllerSettings, EmbeddedServer, OpenAIClient
    from terrarium.llm.base import ChatModel
    from terrarium.llm.scripted import ScriptedModel
    from terrarium.runtime.oneshot import RunReport, run
    from terrarium.runtime.options import RuntimeOptions, Supervision
    from terrarium.runtime.runtime import TeamRuntime
    from terrarium.tools.base import Tool, ToolContext
    from terrarium.tools.runner import ToolResult

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # load and run
    "Team": "terrarium.config",
    "load_any": "terrarium.config",
    "load_single_creature": "terrarium.config",
    "load_team": "terrarium.config",
    "run": "terrarium.runtime.oneshot",
    "RunReport": "terrarium.runtime.oneshot",
    "TeamRuntime": "terrarium.runtime.runtime",
    "RuntimeOptions": "terrarium.runtime.options",
    "Supervision": "terrarium.runtime.options",
    "TurnResult": "terrarium.controller.loop",
    "Event": "terrarium.events",
    # the tool contract
    "Tool": "terrarium.tools.base",
    "ToolContext": "terrarium.tools.base",
    "ToolResult": "terrarium.tools.runner",
    # the model contract and the models that come with terrarium
    "ChatModel": "terrarium.llm.base",
    "ChatRequest": "terrarium.llm",
    "ControllerSettings": "terrarium.llm",
    "EmbeddedServer": "terrarium.llm",
    "OpenAIClient": "terrarium.llm",
    "ScriptedModel": "terrarium.llm.scripted",
    # the errors
    "ChannelRefusal": "terrarium.errors",
    "ConfigError": "terrarium.errors",
    "ConfigErrors": "terrarium.errors",
    "ModelError": "terrarium.errors",
    "RuntimeFailure": "terrarium.errors",
    "TemplateError": "terrarium.errors",
    "TerrariumError": "terrarium.errors",
    "ToolError": "terrarium.errors",
}
"""Each public name → the module that defines it (loaded the first time the name is asked for)."""

__all__ = [
    "ChannelRefusal",
    "ChatModel",
    "ChatRequest",
    "ConfigError",
    "ConfigErrors",
    "ControllerSettings",
    "EmbeddedServer",
    "Event",
    "ModelError",
    "OpenAIClient",
    "RunReport",
    "RuntimeFailure",
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
    "ToolResult",
    "TurnResult",
    "__version__",
    "load_any",
    "load_single_creature",
    "load_team",
    "run",
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
