"""Slot assignment: one llama.cpp slot per creature, on the embedded and external servers."""

from __future__ import annotations

from typing import Any

import pytest

from terrarium.errors import ConfigError
from terrarium.llm.factory import make_model
from terrarium.llm.openai_client import OpenAIClient
from terrarium.llm.settings import ControllerSettings
from terrarium.llm.slots import assign_slots
from terrarium.llm.types import ChatMessage, ChatRequest

URL = "http://gpu-box:8080/v1"


def cs(**kw: Any) -> ControllerSettings:
    return ControllerSettings.model_validate(kw)


def llama(url: str = URL, **kw: Any) -> ControllerSettings:
    return cs(provider="openai", base_url=url, llama_cpp=True, **kw)


def test_embedded_creatures_get_one_slot_each_in_order() -> None:
    got = assign_slots({"a": cs(), "b": cs(), "c": cs()})
    assert got == {"a": 0, "b": 1, "c": 2}


def test_external_server_with_a_slot_count_pins_each_creature() -> None:
    team = {"router": llama(slots=4), "speaker": llama(), "memo": llama(slots=4),
            "local": cs()}
    assert assign_slots(team) == {"router": 0, "speaker": 1, "memo": 2, "local": 0}


def test_more_creatures_than_slots_wrap_round() -> None:
    team = {f"c{i}": llama(slots=2) for i in range(5)}
    assert list(assign_slots(team).values()) == [0, 1, 0, 1, 0]


def test_servers_are_told_apart_by_base_url() -> None:
    team = {"a": llama(slots=2), "b": llama("http://other:8080/v1/", slots=3),
            "c": llama(URL + "/", slots=2)}
    assert assign_slots(team) == {"a": 0, "b": 0, "c": 1}


def test_without_a_slot_count_a_lone_creature_gets_slot_zero_and_several_none() -> None:
    assert assign_slots({"solo": llama()}) == {"solo": 0}
    assert assign_slots({"a": llama(), "b": llama()}) == {}


def test_no_slots_for_servers_that_are_not_llama_cpp() -> None:
    team = {"hosted": cs(provider="openai", base_url=URL, slots=4),
            "script": cs(provider="scripted", script="s.yaml")}
    assert assign_slots(team) == {}


def test_disagreeing_slot_counts_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="disagree on its slot count"):
        assign_slots({"a": llama(slots=2), "b": llama(slots=3)})


def test_the_slot_reaches_the_request_with_cache_prompt() -> None:
    settings = llama(slots=2)
    model = make_model(settings, slot=assign_slots({"x": llama(slots=2), "y": settings})["y"])
    assert isinstance(model, OpenAIClient) and model.id_slot == 1
    body = model.build_body(ChatRequest(messages=[ChatMessage(role="user", content="hi")],
                                        cache_prompt=True))
    assert body["id_slot"] == 1 and body["cache_prompt"] is True
