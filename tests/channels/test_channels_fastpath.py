"""The in-memory send fast path keeps every channel rule: order per sender, backpressure
(a full inbox makes the sender wait; nothing dropped, nothing grows), refusals, max_bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import anyio.lowlevel
import pytest
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from terrarium.channels import ChannelHub, ChannelSpec, CreatureWiring, DurableLog, EventBus
from terrarium.channels.payload import (
    _bounded_fields_validator,
    _fields_validator,
    _fits_check,
    _json_dumps,
    describe_validation_error,
)
from terrarium.errors import ChannelRefusal
from terrarium.events import MessageRefused

pytestmark = pytest.mark.anyio


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    n: int = 0


class Mixed(BaseModel):
    title: str | None = None
    n: int = 0
    x: float = 0.0
    flag: bool = False
    mood: Literal["calm", "héé\n"] = "calm"
    tags: list[str] = []
    extra: dict[str, list[str | float | None]] = {}


def hub_of(kind: str, listeners: int, capacity: int, **kw: Any) -> ChannelHub:
    spec = ChannelSpec(name="c", kind=kind, schema_name="note", validator=Note,
                       capacity=capacity, max_bytes=kw.pop("max_bytes", 64 * 1024))
    wiring = [CreatureWiring(name=f"l{i}", listen=("c",)) for i in range(listeners)]
    wiring += [CreatureWiring(name="s", can_send=("c",))]
    return ChannelHub([spec], wiring, **kw)


async def settle() -> None:
    """Let every runnable task run until it blocks (no sleeping, no clock)."""
    for _ in range(50):
        await anyio.lowlevel.checkpoint()


@pytest.mark.parametrize("kind", ["queue", "broadcast"])
async def test_a_full_inbox_makes_the_sender_wait_not_drop_or_grow(kind: str) -> None:
    hub = hub_of(kind, listeners=2 if kind == "broadcast" else 1, capacity=3)
    sent: list[int] = []
    async with hub, anyio.create_task_group() as tg:

        async def sender() -> None:
            for k in range(10):
                await hub.send("s", "c", {"text": "t", "n": k}, wait_limit=None)
                sent.append(k)

        tg.start_soon(sender)
        await settle()
        full = hub.subscribe("l0")
        # three fit; the fourth send waits (not refused, not dropped, no fourth slot)
        assert sent == [0, 1, 2]
        assert full.pending() == 3
        if kind == "broadcast":  # the sender waits on l0 first; l1 gets #3 after it
            assert hub.subscribe("l1").pending() == 3
        got: list[int] = []
        while len(got) < 10:
            for inbox in ([full] if kind == "queue" else [full, hub.subscribe("l1")]):
                env = await inbox.receive()
                if inbox is full:
                    got.append(env.payload["n"])
                assert inbox.pending() <= 3
            await settle()
        assert got == list(range(10))  # all of them, in the order sent
    assert sent == list(range(10))


async def test_queue_order_per_sender_survives_buffers_filling_and_draining() -> None:
    hub = hub_of("queue", listeners=3, capacity=2)
    got: dict[str, list[int]] = {"l0": [], "l1": [], "l2": []}
    async with hub, anyio.create_task_group() as tg:

        async def listen(name: str) -> None:
            inbox = hub.subscribe(name)
            while True:
                for env in await inbox.receive_batch(3):
                    got[name].append(env.payload["n"])
                await anyio.lowlevel.checkpoint()

        for name in got:
            tg.start_soon(listen, name)
        delivered = [(await hub.send("s", "c", {"text": "t", "n": k})).delivered_to
                     for k in range(300)]
        while sum(map(len, got.values())) < 300:
            await anyio.lowlevel.checkpoint()
        tg.cancel_scope.cancel()
    assert sorted(n for ns in got.values() for n in ns) == list(range(300))  # exactly once
    for name, ns in got.items():
        assert ns == sorted(ns)  # each listener sees the sender's order
        assert ns == [k for k, d in enumerate(delivered) if d == (name,)]


async def test_a_send_that_waits_too_long_is_refused_and_names_who_got_it() -> None:
    hub = hub_of("broadcast", listeners=3, capacity=1)
    async with hub:
        await hub.send("s", "c", {"text": "first"})
        hub.subscribe("l0").receive_nowait()
        hub.subscribe("l2").receive_nowait()
        with pytest.raises(ChannelRefusal) as info:  # l1 is still full
            await hub.send("s", "c", {"text": "second"}, wait_limit=0)
        assert "inbox of 'l1' stayed full" in info.value.message
        assert "(delivered to l0)." in info.value.message
        assert hub.subscribe("l1").pending() == 1  # it did not grow past its capacity


@pytest.mark.parametrize("log", [False, True])
async def test_max_bytes_is_exact_at_the_limit(tmp_path: Path, log: bool) -> None:
    text = "é\x01" * 20  # 2 + 6 JSON bytes a pair: the bound must not be fooled by escapes
    body = {"text": text, "n": 0}
    size = len(_json_dumps(body).encode())
    with DurableLog(tmp_path / "log.db") as dlog:
        for limit, ok in ((size, True), (size - 1, False)):
            hub = hub_of("queue", 1, 8, max_bytes=limit, log=dlog if log else None)
            async with hub:
                if ok:
                    assert (await hub.send("s", "c", body)).delivered_to == ("l0",)
                else:
                    with pytest.raises(ChannelRefusal, match=f"The message is {size} bytes"):
                        await hub.send("s", "c", body)
                    assert hub.subscribe("l0").pending() == 0


@pytest.mark.parametrize("model", [Note, Mixed])
def test_the_size_bound_never_lets_an_oversized_body_through(model: type[BaseModel]) -> None:
    samples: list[dict[str, Any]] = [
        {"text": s, "n": n}
        for s in ("", "a", "é" * 50, "\x00" * 40, '"\\' * 30, "🙂" * 33, "x" * 200)
        for n in (0, -(10**14), 10**15, 10**40)
    ]
    if model is Mixed:
        samples = [
            {"title": t, "n": n, "x": x, "flag": True, "mood": "héé\n", "tags": tags,
             "extra": extra}
            for t in (None, "\x1f" * 30, "ü" * 40)
            for n in (1, 10**20)
            for x in (float("inf"), -1.2345678901234567e-308)
            for tags in ([], ["\x02" * 9] * 5)
            for extra in ({}, {"k": ["é" * 7, None, 1.5]})
        ]
    accepted = bounded_accepted = 0
    for limit in (16, 64, 100, 150, 300, 1000, 4000):
        fits = _fits_check(model, limit)
        bounded = _bounded_fields_validator(model, limit)
        assert bounded is not None or model is Mixed or limit < 100  # nested; or no room
        for raw in samples:
            body = model.model_validate(raw).__dict__ if model is Mixed else dict(raw)
            real = len(json.dumps(body, ensure_ascii=False, separators=(",", ":"))
                       .encode("utf-8", "replace"))
            if fits(body, limit):
                accepted += 1
                assert real <= limit, (limit, body)
            if bounded is not None:
                try:
                    checked = bounded(raw)
                except ValidationError:
                    continue
                bounded_accepted += 1
                assert checked == body and real <= limit, (limit, body)
    assert accepted > len(samples)  # the bound does spare most sends the encoding
    assert bounded_accepted > len(samples) or model is Mixed


class Scalars(BaseModel):
    title: str | None = None
    body: str = ""
    n: int | None = 3
    x: float = 0.0
    flag: bool = False
    mood: Literal["calm", "héé\n"] = "calm"


class Upper(BaseModel):
    model_config = ConfigDict(str_to_upper=True)  # "ß".upper() is "SS": longer
    text: str


def test_the_bounded_validator_never_lets_an_oversized_body_through() -> None:
    samples = [
        {"title": t, "body": b, "n": n, "x": x, "flag": True, "mood": m}
        for t in (None, "", "\x1f" * 9, "ü" * 20)
        for b in ("", "🙂" * 7, '"' * 15)
        for n in (None, 0, 10**14, -(10**15), 10**20)
        for x in (1.5, -1.2345678901234567e-308)
        for m in ("calm", "héé\n")
    ]
    for limit in (350, 400, 500, 1000):
        bounded = _bounded_fields_validator(Scalars, limit)
        assert bounded is not None
        accepted = 0
        for raw in samples:
            try:
                body = bounded(raw)
            except ValidationError:
                continue
            accepted += 1
            assert body == Scalars.model_validate(raw).__dict__
            assert len(_json_dumps(body).encode()) <= limit, (limit, body)
        assert 0 < accepted
    assert _bounded_fields_validator(Upper, 1000) is None
    assert _bounded_fields_validator(Shouty, 1000) is None  # a field validator


class Shouty(BaseModel):
    """A field validator that changes the value: the fast path must run it too."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    text: str
    n: int = 0
    mood: Literal["calm", "loud"] = "calm"

    @field_validator("text")
    @classmethod
    def _upper(cls, v: str) -> str:
        return v.upper()


class Whole(BaseModel):
    """A model validator: only the model's own validator may be used."""

    text: str
    n: int = 0

    @model_validator(mode="after")
    def _count(self) -> Whole:
        self.n = len(self.text)
        return self


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, str_max_length=5)
    text: str = Field(min_length=1)
    n: Annotated[int, Field(ge=0)] = 0
    tags: list[str] = Field(default_factory=list)

    @field_validator("tags", mode="before")
    @classmethod
    def _split(cls, v: Any) -> Any:
        return v.split(",") if isinstance(v, str) else v


class Aliased(BaseModel):
    text: str = Field(validation_alias="body")


@pytest.mark.parametrize("model", [Note, Shouty, Mixed, Strict])
def test_the_fields_validator_accepts_refuses_and_fills_in_as_the_model(
        model: type[BaseModel]) -> None:
    fields = _fields_validator(model)
    assert fields is not None
    assert _fields_validator(Aliased) is None  # a typed dict reads aliases otherwise
    payloads: list[Any] = [
        {"text": "  hi "}, {"text": "x", "n": "7"}, {"text": "x", "n": 1.5}, {"text": 3},
        {"text": "x", "extra": 1}, {"n": 2}, {"text": "x", "mood": "loud"},
        {"text": "x", "mood": "sad"}, {"title": None, "tags": ["a"], "extra": {"k": [1.5]}},
        {"tags": "nope"}, {"n": -1, "text": "ok"}, {"text": "toolong"}, {"text": ""},
        {"text": "a", "tags": "b,c"}, {"tags": ["x"], "text": "y", "n": 2},
    ]
    for p in payloads:
        try:
            want = model.model_validate(p).__dict__
        except ValidationError as e:
            with pytest.raises(ValidationError) as info:
                fields(p)
            assert describe_validation_error(info.value) == describe_validation_error(e)
        else:
            assert list(fields(p).items()) == list(want.items())  # same order too


def test_a_model_validator_keeps_the_models_own_validation() -> None:
    assert _fields_validator(Whole) is None

    async def go() -> None:
        spec = ChannelSpec(name="c", validator=Whole)
        hub = ChannelHub([spec], [CreatureWiring(name="l", listen=("c",)),
                                  CreatureWiring(name="s", can_send=("c",))])
        async with hub:
            res = await hub.send("s", "c", {"text": "four"})
        assert res.envelope.payload == {"text": "four", "n": 4}

    anyio.run(go)


@pytest.mark.parametrize(("payload", "reason"), [
    ({"text": 3}, "The payload does not match the schema 'note' of channel 'c': "
                  "field 'text': Input should be a valid string."),
    ({"text": "x" * 200}, "The message is 217 bytes; channel 'c' takes at most 120"),
])
async def test_the_fast_path_refuses_as_the_logged_path_does(
        tmp_path: Path, payload: dict[str, Any], reason: str) -> None:
    for log in (None, DurableLog(tmp_path / "log.db")):
        bus = EventBus()
        sub = bus.subscribe()
        hub = hub_of("queue", 1, 8, max_bytes=120, log=log, bus=bus)
        async with hub:
            assert (("c" in hub._fast.get("s", {})) is (log is None))
            with pytest.raises(ChannelRefusal) as info:
                await hub.send("s", "c", payload)
            assert info.value.message.startswith(reason)
            assert hub.subscribe("l0").pending() == 0
            assert (await hub.send("s", "c", {"text": "ok"})).delivered_to == ("l0",)
        assert [e.reason for e in sub.drain() if isinstance(e, MessageRefused)] == [
            info.value.message]
        if log is not None:
            log.close()


async def test_an_unchecked_body_with_a_huge_number_is_measured() -> None:
    hub = hub_of("queue", 1, 8, max_bytes=64, validate=False)
    async with hub:
        with pytest.raises(ChannelRefusal, match="The message is 118 bytes"):
            await hub.send("s", "c", {"text": "x", "n": 10**100})
        assert (await hub.send("s", "c", {"text": "x", "n": 10**14})).delivered_to == ("l0",)
