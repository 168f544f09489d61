"""A creature's per-channel settings checked against the team's channels once the team is
wired: ``send_fill`` fields belong to a channel it sends on and hold text, and
``message_templates`` are for a channel it listens to and render its fields."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from terrarium.config.loaded_creature import LoadedCreature
from terrarium.config.located import did_you_mean
from terrarium.config.schema_lang import MessageType
from terrarium.config.team_types import ChannelDef
from terrarium.errors import ConfigError, TerrariumError
from terrarium.prompt.examples import value_for_label
from terrarium.prompt.templates import MESSAGE_TEMPLATE_EXTRAS, compile_message_template


def _field_names(mt: MessageType | None) -> list[str]:
    """A channel's message fields; an untyped channel carries just ``text``."""
    return [f.name for f in mt.fields] if mt is not None else ["text"]


_WIRING_WORDS = {  # wiring key → (what the creature cannot do, what it can)
    "can_send": ("cannot send on", "can send on"),
    "listen": ("does not listen to", "listens to"),
}


def _unwired(lc: LoadedCreature, key: str, cname: str, name: str, wired: list[str],
             role: str, channels: dict[str, ChannelDef]) -> ConfigError | None:
    """The error for a per-channel setting (``key``) naming a channel the creature's
    ``role`` wiring does not include; None when it does."""
    if cname in wired:
        return None
    cannot, can = _WIRING_WORDS[role]
    reason = "is not a declared channel" if cname not in channels else \
        f"creature {name!r} {cannot} (not in its channels.{role})"
    return lc.where(key, cname).error(
        f"{key} names channel {cname!r}, which {reason}",
        did_you_mean(cname, wired) or f"{name!r} {can}: {', '.join(wired) or 'nothing'}")


def check_send_fill(lc: LoadedCreature, name: str, can_send: list[str],
                    channels: dict[str, ChannelDef], errors: list[ConfigError]) -> None:
    """Each filled field must belong to a channel this creature sends on and hold text."""
    for cname, fields in lc.config.send_fill.items():
        if (err := _unwired(lc, "send_fill", cname, name, can_send, "can_send", channels)):
            errors.append(err)
            continue
        mt = channels[cname].message_type
        known = _field_names(mt)
        for fname in fields:
            if fname not in known:
                errors.append(lc.where("send_fill", cname, fname).error(
                    f"channel {cname!r} has no field {fname!r}",
                    did_you_mean(fname, known) or f"its fields: {', '.join(known)}"))
            elif mt is not None and not _takes_text(mt.model, fname):
                errors.append(lc.where("send_fill", cname, fname).error(
                    f"field {fname!r} of channel {cname!r} does not hold text, and send_fill "
                    "fills in text", "fill only str fields"))


def check_message_templates(lc: LoadedCreature, name: str, listen: list[str],
                            channels: dict[str, ChannelDef],
                            errors: list[ConfigError]) -> None:
    """Each template must be for a channel this creature listens to and render its fields."""
    for cname, source in lc.config.message_templates.items():
        if (err := _unwired(lc, "message_templates", cname, name, listen, "listen", channels)):
            errors.append(err)
            continue
        mt = channels[cname].message_type
        fields = _field_names(mt)
        try:
            template = compile_message_template(source, cname)
            template.check_variables([*fields, *MESSAGE_TEMPLATE_EXTRAS])
            template.render(_sample_payload(mt))
        except TerrariumError as exc:
            errors.append(lc.where("message_templates", cname).error(
                f"the message template for channel {cname!r} does not work: {exc.message}",
                f"it may use the message's fields: {', '.join(fields)}"))


def _sample_payload(message_type: MessageType | None) -> dict[str, Any]:
    """A payload of placeholder values for every field, to try a template before any run."""
    fields = {f.name: value_for_label(f.type_label) for f in message_type.fields} \
        if message_type is not None else {"text": "..."}
    return {**fields, **{name: name for name in MESSAGE_TEMPLATE_EXTRAS}}


def _takes_text(model: type[BaseModel], fname: str) -> bool:
    try:
        TypeAdapter(model.model_fields[fname].annotation).validate_python("text")
    except ValidationError:
        return False
    return True


__all__ = ["check_message_templates", "check_send_fill"]
