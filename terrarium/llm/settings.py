"""The ``controller:`` block of a creature's config.yaml: which model and how to call it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ControllerSettings(BaseModel):
    """LLM settings of one creature. Unknown keys are errors.

    With ``provider: embedded`` the in-process llama.cpp model is used; ``openai`` talks to
    any OpenAI-compatible server; ``scripted`` replays the ``script`` file. Without a
    ``provider``, a ``base_url`` or ``api_key_env`` means ``openai`` (never silently the
    embedded model), and nothing at all means ``embedded``.
    """

    model_config = ConfigDict(extra="forbid")

    provider: Literal["embedded", "openai", "scripted"] = Field(
        default="embedded",
        description="Backend: embedded llama.cpp, an OpenAI-compatible server, or a scripted "
        "replay (default: openai when base_url or api_key_env is set, else embedded).",
    )
    llm: str | None = Field(
        default=None, description="A named model profile from kohaku.yaml `llm_profiles`; "
        "this block's own keys override the profile's.",
    )
    base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible API root including /v1, e.g. http://localhost:11434/v1.",
    )
    model: str | None = Field(default=None, description="Model name sent to the server.")
    api_key_env: str | None = Field(
        default=None,
        description="Name of the environment variable holding the API key (never the key).",
    )
    temperature: float = Field(default=0.2, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(default=256, ge=1, description="Most tokens one response may use.")
    context_window: int | None = Field(
        default=None,
        ge=256,
        description="Model context in tokens; the conversation cap follows it "
        "(embedded: tokens per slot, default 4096).",
    )
    connect_timeout: float = Field(default=10.0, gt=0, description="Seconds to connect.")
    read_timeout: float = Field(
        default=120.0, gt=0, description="Seconds of server silence before the call fails."
    )
    max_retries: int = Field(
        default=4, ge=0, description="Retries on connection errors, 408, 429 and 5xx."
    )
    script: str | None = Field(
        default=None, description="Script file for provider scripted (relative to the config)."
    )
    grammar: bool | None = Field(
        default=None,
        description="Constrain output with a grammar derived from the registry "
        "(llama.cpp backends; default on for embedded).",
    )
    frequency_penalty: float | None = Field(
        default=None,
        ge=-2.0,
        le=2.0,
        description="Penalty on repeated tokens (OpenAI field; default 0.5 for embedded, "
        "where a small model otherwise loops).",
    )
    reasoning_effort: str | None = Field(
        default=None, description="Sent as `reasoning_effort` to OpenAI-compatible servers.",
    )
    service_tier: str | None = Field(
        default=None, description="Sent as `service_tier` to OpenAI-compatible servers.",
    )
    keep_reasoning: bool = Field(
        default=False, description="Keep a reasoning model's thinking (`reasoning_content` or "
        "`<think>` blocks) in the conversation history, as a `<think>` block before the reply. "
        "It is always shown in the monitor and the log, and never sent to a channel, output "
        "or voice.",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Merged into every request body (OpenAI-compatible).",
    )
    extra_headers: dict[str, str] = Field(
        default_factory=dict, description="Sent with every request; write `${VAR}` to take a "
        "value from the environment.",
    )
    llama_cpp: bool = Field(
        default=False,
        description="The openai backend is a llama.cpp server: send id_slot, cache_prompt "
        "and grammar.",
    )
    slots: int | None = Field(
        default=None,
        ge=1,
        description="With llama_cpp: the slots the server was started with (--parallel); its "
        "creatures are pinned one per slot (id_slot). Unset: a lone creature gets slot 0, "
        "several none. Ignored for embedded (one slot per creature, and one per embedded "
        "sub-agent up to `subagent_concurrency`).",
    )

    @model_validator(mode="before")
    @classmethod
    def _infer_provider(cls, data: Any) -> Any:
        """An endpoint or key without a provider means the OpenAI-compatible client."""
        if isinstance(data, dict) and data.get("provider") is None:
            data = {k: v for k, v in data.items() if k != "provider"}
            if data.get("base_url") or data.get("api_key_env"):
                data["provider"] = "openai"
        return data

    @property
    def use_grammar(self) -> bool:
        """Whether grammar-constrained decoding applies to this creature."""
        if self.grammar is not None:
            return self.grammar and (self.provider == "embedded" or self.llama_cpp)
        return self.provider == "embedded"

    @property
    def effective_context_window(self) -> int:
        """The context the conversation budget should follow."""
        return self.context_window or 4096


__all__ = [
    "ControllerSettings",
]
