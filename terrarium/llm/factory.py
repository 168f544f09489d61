"""Turning a creature's ``controller:`` settings into a ready :class:`ChatModel`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from terrarium import secrecy
from terrarium.errors import ConfigError, Location, ModelError
from terrarium.llm.base import ChatModel
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.openai_client import OpenAIClient
from terrarium.llm.settings import ModelSettings

# SmolLM2-135M falls into token loops under a grammar without a little repetition penalty.
EMBEDDED_FREQUENCY_PENALTY = 0.5


def make_model(
    settings: ModelSettings | Mapping[str, Any] | None,
    *,
    embedded: EmbeddedServer | None = None,
    slot: int | None = None,
    base_dir: Path | None = None,
) -> ChatModel:
    """Build the model a creature uses.

    ``embedded`` is the team's shared running server (required for ``provider: embedded``);
    ``slot`` pins the creature to its own llama.cpp slot; ``base_dir`` resolves a relative
    ``script`` path (the directory of the creature's config.yaml).
    """
    if settings is None:
        settings = ModelSettings()
    elif not isinstance(settings, ModelSettings):
        try:
            settings = ModelSettings.model_validate(dict(settings))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ConfigError(
                f"invalid controller settings: {first['msg']}",
                location=Location(key_path=("controller", *first["loc"])),
            ) from exc
    s = settings
    if s.provider == "scripted":
        if not s.script:
            raise ConfigError(
                "provider scripted needs a script file",
                location=Location(key_path=("controller", "script")),
                suggestion="add `script: path/to/script.yaml`",
            )
        path = Path(s.script)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        from terrarium.llm.scripted import ScriptedModel  # only a scripted creature needs it

        return ScriptedModel.from_file(path)
    common: dict[str, Any] = {
        "temperature": s.temperature,
        "max_tokens": s.max_tokens,
        "connect_timeout": s.connect_timeout,
        "read_timeout": s.read_timeout,
        "max_retries": s.max_retries,
    }
    if s.frequency_penalty is not None:
        common["frequency_penalty"] = s.frequency_penalty
    elif s.provider == "embedded":
        common["frequency_penalty"] = EMBEDDED_FREQUENCY_PENALTY
    if s.provider == "embedded":
        if embedded is None:
            raise ModelError(
                "this creature uses the embedded model but no embedded server was started",
                suggestion="start an EmbeddedServer and pass it as embedded=",
            )
        # continuation lets the controller pause this model while speech is synthesized:
        # worth it only for a model sharing our CPU, and llama.cpp supports the prefill
        return embedded.client(slot, continuation=True, extra_body=openai_extras(s), **common)
    if not s.base_url:
        raise ConfigError(
            "provider openai needs a base_url",
            location=Location(key_path=("controller", "base_url")),
            suggestion="e.g. base_url: http://localhost:11434/v1",
        )
    return OpenAIClient(
        base_url=s.base_url,
        model=s.model or "",
        api_key_env=s.api_key_env,
        llama_cpp=s.llama_cpp,
        id_slot=slot if s.llama_cpp else None,
        extra_body=openai_extras(s),
        extra_headers=dict(s.extra_headers),
        **common,
    )


def openai_extras(s: ModelSettings) -> dict[str, Any]:
    """The body fields an OpenAI-compatible server gets beyond the standard ones."""
    extra: dict[str, Any] = {}
    if s.reasoning_effort is not None:
        extra["reasoning_effort"] = s.reasoning_effort
    if s.service_tier is not None:
        extra["service_tier"] = s.service_tier
    extra.update(s.extra_body)
    return extra


def describe_settings(s: ModelSettings) -> str:
    """Which model and endpoint a creature uses, without starting anything (never a key)."""
    if s.provider == "embedded":
        return "embedded (llama.cpp on this machine)"
    if s.provider == "scripted":
        return f"scripted ({s.script})"
    url = secrecy.redact_url(s.base_url) if s.base_url else "(no base_url)"
    text = f"openai-compatible {url} model={s.model or '(default)'}"
    if s.llm:
        text += f" profile={s.llm}"
    return text


__all__ = [
    "EMBEDDED_FREQUENCY_PENALTY",
    "describe_settings",
    "make_model",
    "openai_extras",
]
