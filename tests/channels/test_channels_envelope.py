"""The in-process envelope (an immutable tuple) keeps the pydantic model's API, and the
wire model (EnvelopeWire) is its schema at the JSON and log boundaries."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from pydantic import BaseModel, ValidationError

from terrarium.channels import Envelope, new_message_id
from terrarium.channels.envelope import FIELDS, EnvelopeWire


def sample() -> Envelope:
    return Envelope.fresh("c", "s", "note", {"text": "é\n🙂", "n": [1, None, 2.5]},
                          reply_to="r1", correlation_id="k")


def test_fields_read_like_the_model_and_cannot_be_set() -> None:
    env = sample()
    assert (env.channel, env.sender, env.schema_name, env.reply_to) == ("c", "s", "note", "r1")
    assert env.payload["text"] == "é\n🙂" and env.correlation_id == "k"
    assert len(env.id) == 30 and isinstance(env.ts, float)
    with pytest.raises(AttributeError):
        env.channel = "other"  # type: ignore[misc]
    assert dict(env) == dict(zip(FIELDS, (env.id, "c", "s", "note", env.payload, env.ts,
                                          "r1", "k"), strict=True))
    assert list(Envelope.model_fields) == list(EnvelopeWire.model_fields)


def test_json_is_the_wire_models_json_and_round_trips() -> None:
    env = sample()
    wire = EnvelopeWire.model_validate(env.model_dump())
    assert env.to_json() == wire.model_dump_json() == env.model_dump_json()
    assert env.model_dump() == wire.model_dump()
    assert env.model_dump(exclude={"payload"}) == wire.model_dump(exclude={"payload"})
    back = Envelope.from_json(env.to_json())
    assert back == env and type(back) is Envelope
    assert Envelope.model_validate_json(env.to_json().encode()) == env
    assert json.loads(env.to_json())["reply_to"] == "r1"


def test_building_from_outside_validates_through_the_wire_model() -> None:
    fields = {"id": new_message_id(), "channel": "c", "sender": "s", "schema_name": "n",
              "payload": {"a": 1}, "ts": 1}
    env = Envelope(**fields)
    assert env.ts == 1.0 and env.reply_to is None
    assert Envelope.model_validate(fields) == env
    assert Envelope.model_validate(env) is env
    with pytest.raises(ValidationError):
        Envelope(**fields, extra=1)
    with pytest.raises(ValidationError):
        Envelope.from_json('{"id": "x"}')
    with pytest.raises(ValidationError):
        Envelope.model_validate({**fields, "payload": "not a dict"})


def test_equality_hash_copy_and_pickle() -> None:
    env = sample()
    twin = Envelope.trusted(*(v for _, v in env))
    assert twin == env and hash(twin) == hash(env) and not (twin != env)
    assert env != tuple(v for _, v in env)  # an envelope equals envelopes only
    assert env != Envelope.trusted(new_message_id(), "c", "s", "note", {}, 1.0)
    assert pickle.loads(pickle.dumps(env)) == env
    assert copy.deepcopy(env) == env
    assert repr(env).startswith("Envelope(id=")


def test_an_envelope_can_be_a_field_of_a_model() -> None:
    class Batch(BaseModel):
        first: Envelope
        rest: list[Envelope] = []

    env = sample()
    batch = Batch(first=env, rest=[env.model_dump()])
    assert batch.first is env and batch.rest == [env]
    again = Batch.model_validate_json(batch.model_dump_json())
    assert again == batch and type(again.rest[0]) is Envelope
    assert batch.model_dump()["first"] == env.model_dump()
    assert Envelope.model_json_schema()["title"] == "Envelope"
