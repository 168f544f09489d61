"""Models: the OpenAI-compatible streaming client, the embedded llama.cpp server, scripts.

Import the pieces from here; the embedded server loads ``xllamacpp`` only when started.

The names below load on first use (``terrarium/lazy.py``): importing one module of the
package (``terrarium.llm.settings`` for a config) loads that module, not the package's
clients, servers and scripts with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from terrarium.lazy import lazy_exports

if TYPE_CHECKING:  # the public names: each loaded from its module on first use
    from terrarium.llm.base import ChatModel as ChatModel
    from terrarium.llm.completion import Completion as Completion
    from terrarium.llm.completion import DeltaAccumulator as DeltaAccumulator
    from terrarium.llm.completion import complete as complete
    from terrarium.llm.embedded import EmbeddedServer as EmbeddedServer
    from terrarium.llm.embedded import model_info as model_info
    from terrarium.llm.embedded import model_path as model_path
    from terrarium.llm.embedded import pull_model as pull_model
    from terrarium.llm.factory import make_model as make_model
    from terrarium.llm.openai_client import OpenAIClient as OpenAIClient
    from terrarium.llm.scripted import ScriptedModel as ScriptedModel
    from terrarium.llm.scripted import ScriptStep as ScriptStep
    from terrarium.llm.settings import ControllerSettings as ControllerSettings
    from terrarium.llm.settings import ModelSettings as ModelSettings
    from terrarium.llm.tokenizer import LlamaTokenizer as LlamaTokenizer
    from terrarium.llm.types import ChatMessage as ChatMessage
    from terrarium.llm.types import ChatRequest as ChatRequest
    from terrarium.llm.types import StreamDelta as StreamDelta
    from terrarium.llm.types import ToolCall as ToolCall
    from terrarium.llm.types import ToolCallDelta as ToolCallDelta
    from terrarium.llm.types import ToolCallFunction as ToolCallFunction
    from terrarium.llm.types import Usage as Usage

__getattr__, __dir__ = lazy_exports(__name__, __file__)
