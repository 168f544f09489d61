"""terrarium: teams of LLM agents ("creatures") defined in YAML, talking over typed channels.

The public API is small; everything else is reachable by module for those who need it.

    from terrarium import load_team, TeamRuntime, RuntimeOptions

    team = load_team("examples/voice_assistant")        # validates everything first
    async with TeamRuntime(team, RuntimeOptions()) as rt:
        await rt.send_user("Hello!")
        await rt.wait_idle()
"""

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
