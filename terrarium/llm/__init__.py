"""Models: the OpenAI-compatible streaming client, the embedded llama.cpp server, scripts.

Import the pieces from here; the embedded server loads ``xllamacpp`` only when started.
"""

from terrarium.llm.base import ChatModel
from terrarium.llm.completion import Completion, DeltaAccumulator, complete
from terrarium.llm.embedded import EmbeddedServer, model_info, model_path, pull_model
from terrarium.llm.factory import make_model
from terrarium.llm.openai_client import OpenAIClient
from terrarium.llm.scripted import ScriptedModel, ScriptStep
from terrarium.llm.settings import ControllerSettings, ModelSettings
from terrarium.llm.tokenizer import LlamaTokenizer
from terrarium.llm.types import (
    ChatMessage,
    ChatRequest,
    StreamDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallFunction,
    Usage,
)

__all__ = [
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "Completion",
    "ControllerSettings",
    "DeltaAccumulator",
    "EmbeddedServer",
    "LlamaTokenizer",
    "ModelSettings",
    "OpenAIClient",
    "ScriptStep",
    "ScriptedModel",
    "StreamDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallFunction",
    "Usage",
    "complete",
    "make_model",
    "model_info",
    "model_path",
    "pull_model",
]
