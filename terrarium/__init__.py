"""terrarium: teams of LLM agents ("creatures") defined in YAML, talking over typed channels.

The public API is small; everything else is reachable by module for those who need it.

    import terrarium

    report = await terrarium.run("examples/scripted_newsroom", ["A comet over Oslo."])

    team = terrarium.load_team("examples/voice_assistant")   # validates everything first
    async with terrarium.TeamRuntime(team, terrarium.RuntimeOptions()) as rt:
        await rt.send_user("Hello!")
        await rt.wait_idle()

The public names are the ones the ``if TYPE_CHECKING:`` block below imports, written once
there; they are loaded on first use (``terrarium/lazy.py``), not when the package is
imported: every ``import terrarium.<anything>`` runs this file first, and an eager import of
the runtime here would drag the top floors into the bottom ones (``import terrarium.errors``
loading the controller), which the layer rule and ``tests/project/test_layers.py`` forbid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from terrarium.lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:  # the public names (load and run, the tool and model contracts, the
    # models that come with terrarium, the errors): each loaded from its module on first use
    from terrarium.config import Team as Team
    from terrarium.config import load_any as load_any
    from terrarium.config import load_single_creature as load_single_creature
    from terrarium.config import load_team as load_team
    from terrarium.controller.loop import TurnResult as TurnResult
    from terrarium.errors import ChannelRefusal as ChannelRefusal
    from terrarium.errors import ConfigError as ConfigError
    from terrarium.errors import ConfigErrors as ConfigErrors
    from terrarium.errors import ModelError as ModelError
    from terrarium.errors import RuntimeFailure as RuntimeFailure
    from terrarium.errors import TemplateError as TemplateError
    from terrarium.errors import TerrariumError as TerrariumError
    from terrarium.errors import ToolError as ToolError
    from terrarium.events import Event as Event
    from terrarium.llm import ChatRequest as ChatRequest
    from terrarium.llm import ControllerSettings as ControllerSettings  # ModelSettings' old name
    from terrarium.llm import EmbeddedServer as EmbeddedServer
    from terrarium.llm import ModelSettings as ModelSettings
    from terrarium.llm import OpenAIClient as OpenAIClient
    from terrarium.llm.base import ChatModel as ChatModel
    from terrarium.llm.scripted import ScriptedModel as ScriptedModel
    from terrarium.runtime.oneshot import RunReport as RunReport
    from terrarium.runtime.oneshot import run as run
    from terrarium.runtime.options import RuntimeOptions as RuntimeOptions
    from terrarium.runtime.options import Supervision as Supervision
    from terrarium.runtime.runtime import TeamRuntime as TeamRuntime
    from terrarium.tools.base import Tool as Tool
    from terrarium.tools.base import ToolContext as ToolContext
    from terrarium.tools.runner import ToolResult as ToolResult

__getattr__, __dir__ = lazy_exports(__name__, __file__, "__version__")
