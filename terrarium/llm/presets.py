"""Model presets: ``llm: NAME`` names a hosted or local OpenAI-compatible model in one word.

Every backend here speaks the OpenAI chat API, so a preset is only settings of the one
client: the endpoint (``base_url``), the environment variable holding the key
(``api_key_env``, never the key), the model id and its context window, which the prompt
budget and ``terrarium validate``'s "does the prompt fit" check follow.

Names:
- a preset of the table (``gpt-4.1``, ``claude-sonnet-4.5``, ``deepseek-chat``, …);
- ``PROVIDER:MODEL`` for any model of a known provider (``ollama:qwen3:8b``,
  ``openrouter:meta-llama/llama-3.3-70b-instruct``), with the provider's default window;
- KohakuTerrarium's preset names (``claude-opus-4.6``, ``or-gpt-5.4``, ``gemini-3.1-pro``,
  ``*-direct``…), read as the same model on the provider's own OpenAI-compatible endpoint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["PRESETS", "PROVIDERS", "Provider", "preset_names", "resolve_preset"]


@dataclass(frozen=True, slots=True)
class Provider:
    """One OpenAI-compatible service: where it answers and which variable holds its key."""

    name: str
    base_url: str
    api_key_env: str | None  # None: a local server that needs no key
    context_window: int  # for a model the table does not list
    llama_cpp: bool = False


PROVIDERS: dict[str, Provider] = {p.name: p for p in (
    Provider("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", 128_000),
    Provider("anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", 200_000),
    Provider("gemini", "https://generativelanguage.googleapis.com/v1beta/openai",
             "GEMINI_API_KEY", 1_048_576),
    Provider("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", 128_000),
    Provider("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", 128_000),
    Provider("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", 131_072),
    Provider("mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", 128_000),
    Provider("together", "https://api.together.xyz/v1", "TOGETHER_API_KEY", 131_072),
    Provider("ollama", "http://localhost:11434/v1", None, 8_192),
    Provider("vllm", "http://localhost:8000/v1", None, 32_768),
    Provider("llamacpp", "http://localhost:8080/v1", None, 8_192, llama_cpp=True),
)}

# preset name → (provider, model id, context window)
PRESETS: dict[str, tuple[str, str, int]] = {
    "gpt-4.1": ("openai", "gpt-4.1", 1_047_576),
    "gpt-4.1-mini": ("openai", "gpt-4.1-mini", 1_047_576),
    "gpt-4o": ("openai", "gpt-4o", 128_000),
    "gpt-4o-mini": ("openai", "gpt-4o-mini", 128_000),
    "gpt-5": ("openai", "gpt-5", 400_000),
    "gpt-5-mini": ("openai", "gpt-5-mini", 400_000),
    "o4-mini": ("openai", "o4-mini", 200_000),
    "claude-opus-4.1": ("anthropic", "claude-opus-4-1", 200_000),
    "claude-sonnet-4.5": ("anthropic", "claude-sonnet-4-5", 200_000),
    "claude-haiku-4.5": ("anthropic", "claude-haiku-4-5", 200_000),
    "gemini-2.5-pro": ("gemini", "gemini-2.5-pro", 1_048_576),
    "gemini-2.5-flash": ("gemini", "gemini-2.5-flash", 1_048_576),
    "deepseek-chat": ("deepseek", "deepseek-chat", 128_000),
    "deepseek-reasoner": ("deepseek", "deepseek-reasoner", 128_000),
    "groq-llama-3.3-70b": ("groq", "llama-3.3-70b-versatile", 131_072),
    "mistral-large": ("mistral", "mistral-large-latest", 131_072),
    "mistral-small": ("mistral", "mistral-small-latest", 131_072),
    "codestral": ("mistral", "codestral-latest", 256_000),
    "devstral": ("mistral", "devstral-medium-latest", 131_072),
    "together-llama-3.3-70b": ("together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", 131_072),
    "together-qwen3-coder": ("together", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", 262_144),
    "ollama-llama3.2": ("ollama", "llama3.2", 8_192),
    "ollama-qwen3": ("ollama", "qwen3", 8_192),
    "llamacpp": ("llamacpp", "local", 8_192),
    "vllm": ("vllm", "local", 32_768),
}

# KohakuTerrarium preset families: a name's start → the provider whose own endpoint serves it
_KT_FAMILIES: tuple[tuple[str, str], ...] = (
    ("claude-", "anthropic"), ("gemini-", "gemini"), ("gemma-", "gemini"),
    ("gpt-", "openai"), ("o3", "openai"), ("o4", "openai"), ("deepseek-", "deepseek"),
    ("mistral-", "mistral"), ("magistral-", "mistral"), ("codestral", "mistral"),
    ("devstral", "mistral"), ("ministral-", "mistral"), ("pixtral-", "mistral"),
)
_KT_WINDOWS = {"claude-": 200_000, "gemini-": 1_048_576, "gpt-5": 272_000}


def _settings(provider: Provider, model: str, window: int) -> dict[str, Any]:
    out: dict[str, Any] = {"provider": "openai", "base_url": provider.base_url,
                           "model": model, "context_window": window}
    if provider.api_key_env:
        out["api_key_env"] = provider.api_key_env
    if provider.llama_cpp:
        out["llama_cpp"] = True
    return out


def _kohaku(name: str) -> dict[str, Any] | None:
    """A KohakuTerrarium preset name as the same model on an OpenAI-compatible endpoint:
    ``X-or`` (and the older ``or-X``) on OpenRouter, ``X``, ``X-api`` and ``X-direct`` on
    the family's own endpoint."""
    if name.startswith("or-") or name.endswith("-or"):
        rest = name[3:] if name.startswith("or-") else name[:-3]
        family = next((p for s, p in _KT_FAMILIES if rest.startswith(s)), None)
        vendor = {"anthropic": "anthropic", "gemini": "google", "openai": "openai",
                  "deepseek": "deepseek", "mistral": "mistralai"}.get(family or "")
        if vendor is None:
            return None
        window = next((w for s, w in _KT_WINDOWS.items() if rest.startswith(s)), 128_000)
        return _settings(PROVIDERS["openrouter"], f"{vendor}/{rest}", window)
    base = name.removesuffix("-direct").removesuffix("-api")
    family = next((p for s, p in _KT_FAMILIES if base.startswith(s)), None)
    if family is None:
        return None
    model = re.sub(r"(?<=\d)\.(?=\d)", "-", base) if family == "anthropic" else base
    window = next((w for s, w in _KT_WINDOWS.items() if base.startswith(s)),
                  PROVIDERS[family].context_window)
    return _settings(PROVIDERS[family], model, window)


def resolve_preset(name: str) -> dict[str, Any] | None:
    """The controller settings a preset name stands for (None: not a preset)."""
    if name in PRESETS:
        pname, model, window = PRESETS[name]
        return _settings(PROVIDERS[pname], model, window)
    pname, sep, model = name.partition(":")
    if sep and pname in PROVIDERS and model:
        return _settings(PROVIDERS[pname], model, PROVIDERS[pname].context_window)
    return _kohaku(name)


def preset_names() -> list[str]:
    """The table's names and the ``PROVIDER:MODEL`` forms, for suggestions."""
    return sorted(PRESETS) + [f"{p}:MODEL" for p in sorted(PROVIDERS)]
