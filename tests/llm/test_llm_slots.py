"""Slot assignment: one llama.cpp slot per creature, on the embedded and external servers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from terrarium.channels.bus import EventBus
from terrarium.config import load_single_creature
from terrarium.controller.assembly import assemble
from terrarium.controller.subagent import Subagents
from terrarium.errors import ConfigError
from terrarium.llm.factory import make_model
from terrarium.llm.openai_client import OpenAIClient
from terrarium.llm.settings import ModelSettings
from terrarium.llm.slots import SlotLeasingModel, SlotPool, assign_slots, plan_embedded
from terrarium.llm.types import ChatMessage, ChatRequest, StreamDelta
from terrarium.runtime.options import RuntimeOptions
from terrarium.runtime.recording import Recorder
from terrarium.runtime.wiring import Wiring

URL = "http://gpu-box:8080/v1"


def cs(**kw: Any) -> ModelSettings:
    return ModelSettings.model_validate(kw)


def llama(url: str = URL, **kw: Any) -> ModelSettings:
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


# ---------------------------------------------------------------- sub-agent slots (issue 14)


def test_the_embedded_plan_puts_subagent_slots_after_the_creatures() -> None:
    plan = plan_embedded(2, {"lead": 2, "idle": 0, "other": 1})
    assert plan.total == 5
    assert plan.subagents == {"lead": (2, 3), "other": (4,)}
    assert plan_embedded(3, {}).total == 3 and plan_embedded(0, {"lead": 2}).total == 2


def test_a_pool_gives_a_holder_its_last_slot_else_the_least_recently_used() -> None:
    pool = SlotPool((4, 5))
    a = pool.take("lead/a")
    b = pool.take("lead/b")
    assert (a, b) == (4, 5) and pool.take("lead/c") is None  # all lent: no slot, no wait
    pool.give_back(a)
    pool.give_back(b)
    assert pool.take("lead/b") == 5  # its own slot again: its prefix may still be there
    assert pool.take("lead/c") == 4
    pool.give_back(4)
    pool.give_back(5)
    assert pool.take("lead/new") == 4  # returned first, so used least recently
    pool.give_back(99)  # not the pool's: ignored
    assert pool.free == (5,)


class Recording:
    name = "rec"
    llama_cpp = True
    last_usage = None

    def __init__(self, pool: SlotPool) -> None:
        self.pool = pool
        self.seen: list[tuple[int | None, tuple[int, ...]]] = []

    def describe(self) -> str:
        return "recording"

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        self.seen.append((request.id_slot, self.pool.free))
        yield StreamDelta(text="ok")


def test_a_subagent_call_runs_on_a_leased_slot_never_its_parents() -> None:
    plan = plan_embedded(1, {"lead": 1})  # slot 0: lead; slot 1: its sub-agents
    pool = plan.pools()["lead"]
    inner = Recording(pool)
    model = SlotLeasingModel(inner, pool, "lead/researcher")
    req = ChatRequest(messages=[ChatMessage(role="user", content="go")])

    async def go() -> list[str]:
        return [d.text async for d in model.stream(req)]

    assert anyio.run(go) == ["ok"]
    assert inner.seen == [(1, ())]  # on slot 1, lent for the call's length
    assert pool.free == (1,)  # and given back after it
    assert req.id_slot is None  # the caller's request is not changed
    assert model.llama_cpp and model.describe() == "recording" and model.name == "rec"


def test_the_runtime_reserves_one_slot_per_embedded_subagent(tmp_path: Path) -> None:
    def config(name: str, **body: Any) -> str:
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(
            yaml.safe_dump({"name": name, "skill_mode": "static", **body}), encoding="utf-8")
        (tmp_path / name / "s.yaml").write_text("steps: [done]\n", encoding="utf-8")
        return f"../{name}"

    scripted = {"controller": {"provider": "scripted", "script": "s.yaml"}}
    subs = {"a": config("a"), "b": config("b"), "c": config("c", **scripted),
            "d": config("d")}
    config("lead", subagents=subs, subagent_concurrency=2, **scripted)
    parts = assemble(load_single_creature(tmp_path / "lead"), "lead")
    delegator = Subagents.for_parts(parts, make_model=lambda p, label: Recording(SlotPool(())),
                                    emit=lambda ev: None)
    opts = RuntimeOptions(runs_dir=tmp_path)
    wiring = Wiring(opts, EventBus(), Recorder(EventBus(), opts), tmp_path, None)  # type: ignore[arg-type]
    # a, b and d are embedded (c is scripted): the concurrency limit of 2 holds
    assert wiring._embedded_subagents("lead", delegator) == 2
    opts.models = {"lead/a": Recording(SlotPool(())), "b": Recording(SlotPool(()))}
    assert wiring._embedded_subagents("lead", delegator) == 1  # overridden ones need none
