"""A validated team's shape as plain data: creatures, channels, who talks to whom.

One model for everything that draws or describes a team without running it: ``validate``'s
summary, ``terrarium graph`` (SVG, DOT, Mermaid), and the serve API's ``GET /v1/team`` that
the web page reads (its composer is generated from the input channel's fields here, so the
page never parses a schema itself).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from terrarium.config.schema_lang import MessageType
from terrarium.config.team import CreatureDef, Team

__all__ = ["ChannelInfo", "CreatureInfo", "FieldSpec", "SchemaInfo", "Topology",
           "output_creature", "team_topology"]


class FieldSpec(BaseModel):
    """One field of a channel's message schema, with what a form needs to ask for it."""

    name: str
    type: str
    description: str | None = None
    required: bool = True
    enum: list[Any] | None = None
    minimum: float | None = None
    maximum: float | None = None
    multiline: bool = False


class SchemaInfo(BaseModel):
    name: str
    fields: list[FieldSpec] = Field(default_factory=list)


class CreatureInfo(BaseModel):
    name: str
    model: str | None = None
    listens: list[str] = Field(default_factory=list)
    can_send: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    is_root: bool = False


class ChannelInfo(BaseModel):
    name: str
    kind: Literal["queue", "broadcast"]
    description: str | None = None
    schema_: SchemaInfo | None = Field(None, alias="schema", serialization_alias="schema")
    senders: list[str] = Field(default_factory=list)
    listeners: list[str] = Field(default_factory=list)

    model_config = {"populate_by_name": True}


class Topology(BaseModel):
    """The team as the page, the graph and the summary see it (nothing started)."""

    name: str
    input_channel: str | None = None
    output_creature: str | None = None
    creatures: list[CreatureInfo] = Field(default_factory=list)
    channels: list[ChannelInfo] = Field(default_factory=list)

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:  # "schema", never "schema_"
        kwargs.setdefault("by_alias", True)
        return super().model_dump(**kwargs)

    def channel(self, name: str) -> ChannelInfo | None:
        return next((c for c in self.channels if c.name == name), None)


def _prop_bits(prop: dict[str, Any]) -> dict[str, Any]:
    """enum / bounds / multiline of one JSON-schema property (optional ones sit in anyOf)."""
    variants = [prop, *[v for v in prop.get("anyOf", ()) if isinstance(v, dict)]]
    out: dict[str, Any] = {"enum": None, "minimum": None, "maximum": None,
                           "multiline": bool(prop.get("multiline", False))}
    for v in variants:
        if out["enum"] is None and isinstance(v.get("enum"), list):
            out["enum"] = list(v["enum"])
        if out["enum"] is None and "const" in v:
            out["enum"] = [v["const"]]
        for key, alt in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if out[key] is None:
                val = v.get(key, v.get(alt))
                if isinstance(val, int | float) and not isinstance(val, bool):
                    out[key] = val
    return out


def schema_info(mt: MessageType) -> SchemaInfo:
    """The message type's fields in declaration order, with enum values and bounds read
    from its pydantic model (the same model that validates a send)."""
    try:
        props = mt.model.model_json_schema().get("properties", {})
    except Exception:  # a user's pydantic model may not describe itself; show the labels
        props = {}
    fields = [FieldSpec(name=f.name, type=f.type_label, description=f.description or None,
                        required=f.required, **_prop_bits(props.get(f.name, {})))
              for f in mt.fields]
    return SchemaInfo(name=mt.name, fields=fields)


def _model_label(cdef: CreatureDef) -> str | None:
    ctl = cdef.config.controller
    if ctl is None:
        return "embedded"
    return f"{ctl.provider}:{ctl.model}" if ctl.model else str(ctl.provider)


def output_creature(team: Team) -> str | None:
    """Whose words the user gets: the first creature whose plain text goes to a named
    output (stdout, speech), else a team of one's only creature."""
    for name, c in team.everyone.items():
        if c.config.output.default:
            return name
    return next(iter(team.creatures)) if len(team.everyone) == 1 else None


def team_topology(team: Team) -> Topology:
    """A validated ``Team`` as a ``Topology`` (creatures in declaration order, the root
    last; channels in declaration order)."""
    creatures = [CreatureInfo(name=name, model=_model_label(c), listens=list(c.listen),
                              can_send=list(c.can_send) + [o for o in c.output_wiring
                                                            if o not in c.can_send],
                              tools=list(c.config.tools), is_root=c is team.root)
                 for name, c in team.everyone.items()]
    channels = [ChannelInfo(name=name, kind=ch.type, description=ch.description or None,
                            schema=schema_info(ch.message_type) if ch.message_type else None,
                            senders=list(ch.senders), listeners=list(ch.listeners))
                for name, ch in team.channels.items()]
    return Topology(name=team.name, input_channel=team.input_channel,
                    output_creature=output_creature(team), creatures=creatures,
                    channels=channels)
