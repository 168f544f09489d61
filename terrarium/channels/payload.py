"""Channel payloads: a schema compiled once per channel, the size bound, and the sentences
a refusal says.

The hub asks two things of a payload before it records or routes it: does it match the
channel's schema (pydantic, through the model's compiled pydantic-core validator, or a
cheaper typed-dict one that returns the body dict itself when that means the same), and
does it fit the channel's ``max_bytes`` as UTF-8 JSON (bounded from the schema when it can
be, so the usual send never encodes its body). Everything here is per channel and
computed once (``PayloadRules``); nothing here knows who listens or how a message travels.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import SchemaValidator

from terrarium.channels.spec import ChannelSpec

PayloadValidator = Callable[[Any], dict[str, Any]]
SizeCheck = Callable[[dict[str, Any], int], bool]  # (body, max_bytes) -> surely fits


class PayloadRefused(Exception):
    """A payload the channel does not take: the sentence to record and what to record;
    ``errors``: each field's complaint (``{field, message}``) when the schema refused it."""

    def __init__(self, reason: str, payload: Any,
                 errors: list[dict[str, str]] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.payload = payload
        self.errors = errors or []


def field_errors(found: Sequence[Mapping[str, Any]], whole: str = "payload",
                 ) -> list[dict[str, str]]:
    """Pydantic's errors as ``{field, message}`` (a dotted path, ``whole`` for the value
    itself): what a 422 and a refusal list, one shape for both."""
    return [{"field": ".".join(str(p) for p in e["loc"]) or whole, "message": e["msg"]}
            for e in found]


class Checked(dict):  # type: ignore[type-arg]
    """A body the hub checked for one channel (``ChannelHub.check``): a send of it on that
    channel is not validated again (``terrarium serve``'s input, refused by the server
    with its own answer before anything is sent)."""

    __slots__ = ()


class PayloadRules:
    """One channel's payload checks, compiled once.

    ``check`` is the schema's compiled pydantic-core validator and ``flat`` tells that its
    instance ``__dict__`` is the dump (see ``compile_validator``): called inline, not
    through a wrapper; ``validate`` the same as one call returning the body dict (batches);
    ``fields`` the cheaper validator returning the body dict for the fast path
    (``_fields_validator``; None: no schema, or only the model's own will do), which checks
    the size too when it can (``_bounded_fields_validator``; then ``fast_fits`` is None).
    ``fits`` tells, without encoding it, that a validated body is surely under
    ``max_bytes`` (see ``_fits_check``).
    """

    __slots__ = ("check", "fast_fits", "fields", "fits", "flat", "max_bytes", "schema_name",
                 "validate")

    def __init__(self, spec: ChannelSpec, validate: bool) -> None:
        self.schema_name = spec.schema_name or spec.name
        model = spec.validator if validate else None
        self.validate = compile_validator(model) if model is not None else None
        self.check, self.flat = _validator_parts(model) if model is not None else (None, True)
        self.fits = _fits_check(model, spec.max_bytes)
        self.fields, self.fast_fits = None, self.fits
        if model is not None and self.flat:
            bounded = _bounded_fields_validator(model, spec.max_bytes)
            if bounded is not None:
                self.fields, self.fast_fits = bounded, None
            else:
                self.fields = _fields_validator(model)
        self.max_bytes = spec.max_bytes

    def check_one(self, channel: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The validated body of one send, or ``PayloadRefused`` (schema, then size)."""
        check = self.check
        if check is not None:
            try:
                body = check(payload).__dict__ if self.flat else check(payload).model_dump()
            except ValidationError as e:
                raise PayloadRefused(schema_refusal(self.schema_name, channel, e), payload,
                                     field_errors(e.errors(include_url=False))) from None
        else:
            body = payload if type(payload) is dict else dict(payload)
        # bounded from the schema when it can be, else the JSON is measured
        if not self.fits(body, self.max_bytes):
            size = payload_size(body, self.max_bytes)
            if size > self.max_bytes:
                raise PayloadRefused(size_refusal(size, channel, self.max_bytes),
                                     {"bytes": size})
        return body

    def check_batch(self, channel: str, items: list[Any]) -> list[dict[str, Any]]:
        """Every payload of a batch validated and measured; the first bad one refuses all
        (``PayloadRefused`` naming its index)."""
        validate = self.validate
        if validate is not None:
            bodies = []
            for i, p in enumerate(items):
                try:
                    bodies.append(validate(p))
                except ValidationError as e:
                    raise PayloadRefused(schema_refusal(self.schema_name, channel, e, i),
                                         p) from None
        else:
            bodies = [p if type(p) is dict else dict(p) for p in items]
        fits, limit = self.fits, self.max_bytes
        for i, b in enumerate(bodies):
            if fits(b, limit):  # bounded from the schema: no encoding (as check_one)
                continue
            size = payload_size(b, limit)
            if size > limit:
                raise PayloadRefused(size_refusal(size, channel, self.max_bytes, i),
                                     {"index": i, "bytes": size})
        return bodies

    @property
    def fast(self) -> bool:
        """Whether a send may check this payload inline: through ``fields`` or not at all,
        with a size bound that can say yes."""
        return (self.check is None or self.fields is not None) and self.fits is not _never


def schema_refusal(schema: str, channel: str, err: ValidationError,
                   index: int | None = None) -> str:
    """The sentence refusing a payload that does not match ``schema`` (``index``: its place
    in a batch)."""
    what = "The payload" if index is None else f"Payload #{index}"
    return (f"{what} does not match the schema {schema!r} of channel {channel!r}: "
            f"{describe_validation_error(err)}.")


def size_refusal(size: int, channel: str, max_bytes: int, index: int | None = None) -> str:
    """The sentence refusing a payload of ``size`` bytes over the channel's ``max_bytes``."""
    what = "The message" if index is None else f"Payload #{index}"
    return (f"{what} is {size} bytes; channel {channel!r} takes at most {max_bytes} "
            "(its max_bytes). Send less, or split it.")


def _plain(annotation: Any) -> bool:
    """True when values of this type stay plain data in a model's ``__dict__``."""
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation):
            return False
        if typing.is_typeddict(annotation):
            return False
    return all(_plain(a) for a in typing.get_args(annotation))


def _validator_parts(model: type[BaseModel]) -> tuple[Callable[[Any], Any], bool]:
    """The model's compiled pydantic-core ``validate_python`` and whether it is *flat* (no
    nested models, dataclasses, extras or custom serializers): then a validated instance's
    ``__dict__`` already is its dump."""
    decorators = model.__pydantic_decorators__
    flat = (
        model.model_config.get("extra") != "allow"
        and not decorators.field_serializers
        and not decorators.model_serializers
        and not model.model_computed_fields
        and all(_plain(f.annotation) for f in model.model_fields.values())
    )
    return model.__pydantic_validator__.validate_python, flat


def _fields_schema(model: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A copy of a flat model's core schema for its fields (pydantic-core's
    ``model-fields``) and the model's config. None when the model's schema is anything but
    a plain model over its fields (a model validator, a custom ``__init__``,
    ``model_post_init``, a root model, definitions): only the model validator will do."""
    try:
        schema = model.__pydantic_core_schema__
        if (
            schema.get("type") != "model"
            or schema.get("custom_init")
            or schema.get("root_model")
            or schema.get("post_init")
            or schema["schema"].get("type") != "model-fields"
            or model.__pydantic_decorators__.model_validators
        ):
            return None
        return copy.deepcopy(schema["schema"]), dict(schema.get("config") or {})
    except Exception:  # an incomplete model (forward references): the model decides
        return None


# a model field's keys that a typed-dict field means the same by (no validation alias)
_FIELD_KEYS = frozenset({"type", "schema", "metadata", "frozen", "serialization_exclude",
                         "serialization_alias"})


def _dict_validator(fields: dict[str, Any], config: dict[str, Any]) -> Callable[[Any], Any] | None:
    """The model's fields as a pydantic-core ``typed-dict`` schema: the same field schemas
    (checks, coercions, defaults, field validators), extras and config, returning the body
    dict itself, with no model instance and no fields-set to build (half a model
    validation). None when a field needs what a typed dict does not mean the same by."""
    if fields.get("extras_schema") is not None or fields.get("computed_fields"):
        return None
    typed: dict[str, Any] = {}
    for name, f in fields["fields"].items():
        if not f.keys() <= _FIELD_KEYS:
            return None
        typed[name] = {"type": "typed-dict-field", "schema": f["schema"],
                       "required": f["schema"].get("type") != "default"}
    schema: dict[str, Any] = {
        "type": "typed-dict", "fields": typed,
        "extra_behavior": fields.get("extra_behavior")
        or config.get("extra_fields_behavior") or "ignore",
        "config": config,  # a typed dict's field validators read their config from here
    }
    if "strict" in fields:
        schema["strict"] = fields["strict"]
    try:
        return SchemaValidator(schema, config).validate_python  # type: ignore[arg-type]
    except Exception:  # pydantic-core refused it: the model validator will do
        return None


def _fields_validator(model: type[BaseModel]) -> Callable[[Any], Any] | None:
    """A validator returning the body dict that accepts, refuses and fills in exactly as
    the model does (``_dict_validator`` over ``_fields_schema``); None: use the model."""
    plain = _fields_schema(model)
    return _dict_validator(*plain) if plain is not None else None


# what a str or int field's own schema may hold for the bound below to stay exact: nothing
# that changes the value's length after the length is checked (case maps, coercions)
_STR_KEYS = frozenset({"type", "metadata", "ref", "strict", "min_length", "max_length",
                       "pattern", "regex_engine", "strip_whitespace", "serialization"})
_INT_KEYS = frozenset({"type", "metadata", "ref", "strict", "serialization"})


def _bounded_fields_validator(model: type[BaseModel], limit: int) -> Callable[[Any], Any] | None:
    """``_fields_validator`` with ``max_bytes`` checked inside it: each str field takes at
    most its share of the characters ``_fits_check`` allows, each int at most
    ``_INT_BOUND``, so a body it accepts surely fits ``limit`` and the send skips the size
    test. What it refuses (a bad payload, or one that may be too big) the model's own
    validator and the exact size check decide. None when the schema is not plain scalars
    whose length nothing changes after validation (see ``_STR_KEYS``)."""
    plain = _fields_schema(model)
    if plain is None or not _json_plain_model(model):
        return None
    plan = _scalar_plan(model)
    if plan is None or plan[0] > limit:
        return None
    fixed, skeys, ikeys = plan
    share = (limit - fixed) // 6 // max(1, len(skeys))
    fields_schema, config = plain
    if config.get("str_to_upper") or config.get("str_to_lower") or config.get(
            "coerce_numbers_to_str"):
        return None
    for name, field in fields_schema["fields"].items():
        inner = field["schema"]
        default: Any = None
        if inner.get("type") == "default":
            if "default_factory" in inner:
                return None
            default = inner.get("default")
            inner = inner["schema"]
        if inner.get("type") == "nullable":
            inner = inner["schema"]
        if name in skeys:
            if inner.get("type") != "str" or not inner.keys() <= _STR_KEYS:
                return None
            if isinstance(default, str) and len(default) > share:
                return None
            inner["max_length"] = min(inner.get("max_length", share), share)
        elif name in ikeys:
            if inner.get("type") != "int" or not inner.keys() <= _INT_KEYS:
                return None
            if isinstance(default, int) and not -_INT_BOUND < default < _INT_BOUND:
                return None
            inner["gt"], inner["lt"] = -_INT_BOUND, _INT_BOUND
    return _dict_validator(fields_schema, config)


def compile_validator(model: type[BaseModel]) -> PayloadValidator:
    """A fast payload validator returning the validated fields as a plain dict.

    Uses the model's compiled pydantic-core validator directly. For flat models (no nested
    models, dataclasses, extras or custom serializers) the instance ``__dict__`` already is
    the dump, which halves the cost; otherwise ``model_dump`` is used.
    """
    validate, flat = _validator_parts(model)
    if flat:
        return lambda payload: validate(payload).__dict__
    return lambda payload: validate(payload).model_dump()


_JSON_SCALARS = (str, int, float, bool, type(None))
_JSON_CONTAINERS = (list, tuple, dict)


def _json_plain(annotation: Any) -> bool:
    """True when every value of this type is JSON data whose ``repr`` is at least a quarter
    of its UTF-8 JSON size: str, int, float, bool, None, and lists, tuples, dicts of them."""
    if annotation in _JSON_SCALARS:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return all(type(a) in _JSON_SCALARS for a in typing.get_args(annotation))
    args = typing.get_args(annotation)
    if origin in _JSON_CONTAINERS or origin is typing.Union or origin is types.UnionType:
        return bool(args) and all(a is Ellipsis or _json_plain(a) for a in args)
    return False


def _json_plain_model(model: type[BaseModel] | None) -> bool:
    """Whether a validated body of ``model`` is plain JSON data (see ``_json_plain``)."""
    if model is None or model.model_config.get("extra") == "allow":
        return False
    return all(_json_plain(f.annotation) for f in model.model_fields.values())


_INT_BOUND = 10**15  # |n| below this: at most 16 JSON bytes


def _scalar_plan(model: type[BaseModel]) -> tuple[int, tuple[str, ...], tuple[str, ...]] | None:
    """For a schema of scalar fields (str, bool, float, int, None, Literal): the most UTF-8
    JSON bytes its body takes besides its strings' characters and its ints' digits (within
    ``_INT_BOUND``), and its str and int fields. None for any other schema."""
    fixed = 2  # {}
    str_keys: list[str] = []
    int_keys: list[str] = []
    for name, f in model.model_fields.items():
        fixed += 6 * len(name) + 4  # "key": and a comma
        kinds = set(typing.get_args(f.annotation)) if _is_union(f.annotation) else {f.annotation}
        kinds.discard(type(None))
        fixed += 4  # null
        if kinds <= {str}:
            str_keys.append(name)
            fixed += 2
        elif kinds <= {int}:
            int_keys.append(name)
            fixed += 17
        elif kinds <= {bool}:
            fixed += 5
        elif kinds <= {float}:
            fixed += 24  # repr(float) is at most 24 characters; Infinity is 9
        elif len(kinds) == 1 and typing.get_origin(next(iter(kinds))) is typing.Literal:
            fixed += max(6 * len(repr(a)) for a in typing.get_args(next(iter(kinds))))
        else:
            return None
    return fixed, tuple(str_keys), tuple(int_keys)


def _fits_check(model: type[BaseModel] | None, limit: int) -> SizeCheck:
    """A per-schema test that a validated body surely fits ``limit`` UTF-8 JSON bytes.

    False means "not sure", and the send measures the JSON. A schema of scalar fields
    (str, bool, float, int, None, Literal; the usual case) is bounded from its strings'
    lengths: 6 bytes a character at most (an escape), a fixed allowance for the rest. Any
    other plain-JSON schema is bounded by ``4 * len(repr(body))``; others never are.
    """
    if model is None:  # an unchecked body: bounded from its values, if plain and small
        return _rough_fits
    if not _json_plain_model(model):
        return _never
    plan = _scalar_plan(model)
    if plan is None:
        return _repr_fits
    fixed, skeys, ikeys = plan
    if fixed > limit:
        return _never
    room = (limit - fixed) // 6
    if len(skeys) == 1 and len(ikeys) <= 1:  # the usual schema: one text, maybe a number
        return _one_text_fits(skeys[0], ikeys[0] if ikeys else None, room)

    def fits(body: dict[str, Any], limit: int) -> bool:
        n = 0
        for k in skeys:
            v = body[k]
            if v is not None:
                n += len(v)
        for k in ikeys:
            v = body[k]
            if v is not None and not -_INT_BOUND < v < _INT_BOUND:
                return False
        return n <= room

    return fits


def _one_text_fits(skey: str, ikey: str | None, room: int) -> SizeCheck:
    """``_fits_check``'s bound for one string field and at most one int field, unrolled:
    it runs on every send."""
    if ikey is None:

        def fits(body: dict[str, Any], limit: int) -> bool:
            v = body[skey]
            return v is None or len(v) <= room

        return fits

    def fits_int(body: dict[str, Any], limit: int) -> bool:
        v = body[ikey]
        if v is not None and not -_INT_BOUND < v < _INT_BOUND:
            return False
        v = body[skey]
        return v is None or len(v) <= room

    return fits_int


def _is_union(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    return origin is typing.Union or origin is types.UnionType


def _never(body: dict[str, Any], limit: int) -> bool:
    return False


def _rough_fits(body: dict[str, Any], limit: int) -> bool:
    return payload_size(body, limit) == 0


def payload_size(payload: Mapping[str, Any], limit: int) -> int:
    """The payload's size as UTF-8 JSON, or 0 when it is surely under ``limit``.

    A payload of a few short scalars (the usual case) is bounded from its string lengths
    without encoding it; anything else is encoded once.
    """
    rough = 0
    for k, v in payload.items():
        if isinstance(v, str):
            rough += 4 * len(v) + 8  # at most 4 bytes a character, escapes aside
        elif isinstance(v, float) or v is None or (
            isinstance(v, int) and -_INT_BOUND < v < _INT_BOUND
        ):
            rough += 32
        else:
            rough = limit
            break
        rough += 4 * len(k) + 8
        if rough >= limit // 2:
            break
    if rough < limit // 2:
        return 0
    return len(_json_dumps(payload).encode("utf-8", "replace"))



_json_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def _repr_fits(body: dict[str, Any], limit: int) -> bool:
    """True when a plain-JSON body surely fits in ``limit`` bytes of UTF-8 JSON.

    For str, int, float, bool, None and containers of them, each ``repr`` character stands
    for at most 4 JSON bytes (a character's UTF-8 is at most 4 bytes, an escape at most 6
    for a 2+ character repr escape; ``inf`` is ``Infinity``), so ``4 * len(repr)`` bounds it.
    """
    try:
        return 4 * len(repr(body)) <= limit
    except ValueError:  # an int too long for str(): let the JSON encoder decide
        return False


def describe_validation_error(err: ValidationError) -> str:
    """All pydantic errors in one readable sentence fragment."""
    parts = []
    for e in err.errors(include_url=False):
        loc = ".".join(str(p) for p in e["loc"]) or "payload"
        parts.append(f"field {loc!r}: {e['msg']}")
    return "; ".join(parts)


__all__ = [
    "Checked",
    "PayloadRefused",
    "PayloadRules",
    "PayloadValidator",
    "SizeCheck",
    "compile_validator",
    "describe_validation_error",
    "field_errors",
    "payload_size",
    "schema_refusal",
    "size_refusal",
]
