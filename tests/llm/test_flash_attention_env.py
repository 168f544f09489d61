"""Flash attention is on by default (session 25); ``TERRARIUM_FLASH_ATTENTION=0`` turns it
off for a user who wants the replies of before, and an explicit argument wins over both."""

from __future__ import annotations

import pytest

from terrarium.llm.embedded import FLASH_ATTENTION_ENV, EmbeddedServer


@pytest.mark.parametrize(("env", "on"), [(None, True), ("", True), ("1", True), ("on", True),
                                         ("0", False), ("off", False), (" False ", False)])
def test_the_environment_chooses_when_the_caller_does_not(
        monkeypatch: pytest.MonkeyPatch, env: str | None, on: bool) -> None:
    if env is None:
        monkeypatch.delenv(FLASH_ATTENTION_ENV, raising=False)
    else:
        monkeypatch.setenv(FLASH_ATTENTION_ENV, env)
    server = EmbeddedServer(slots=2, ctx_per_slot=4096)
    assert server.flash_attention is on
    assert server.layout.endswith("-fa") is on  # a prefix cache saved one way is not read the other


@pytest.mark.parametrize("explicit", [True, False])
def test_an_explicit_argument_wins(monkeypatch: pytest.MonkeyPatch, explicit: bool) -> None:
    monkeypatch.setenv(FLASH_ATTENTION_ENV, "1" if not explicit else "0")
    assert EmbeddedServer(slots=1, flash_attention=explicit).flash_attention is explicit
