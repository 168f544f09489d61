"""The composer: write a typed message to any channel, checked before anything is sent.

Per-field inputs come from the channel's schema (or raw JSON for any channel); every edit
is checked with ``handle.check_payload`` and the reason shows inline, so a refused message
is explained before it is sent rather than after.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from terrarium.config import FieldInfo, Team
from terrarium.errors import ChannelRefusal, PayloadProblem
from terrarium.runtime.api import TeamHandle


def _is_text(info: FieldInfo) -> bool:
    return info.type_label == "str" or info.type_label.startswith("enum")


def enum_values(info: FieldInfo) -> tuple[str, ...]:
    """The values an ``enum[a|b]`` field allows (empty for any other type)."""
    label = info.type_label
    if label.startswith("enum[") and label.endswith("]"):
        return tuple(v for v in label[5:-1].split("|") if v)
    return ()


def missing_required(fields: Sequence[FieldInfo], raw: Mapping[str, str]) -> str | None:
    """A required field (no default) left empty: said before the schema is asked, since an
    empty text would pass it and send nothing useful."""
    empty = [f.name for f in fields if f.required and f.default is None
             and not raw.get(f.name, "").strip()]
    if not empty:
        return None
    names = ", ".join(repr(n) for n in empty)
    many = len(empty) > 1
    return f"Required field{'s' * many} {names} {'are' if many else 'is'} empty."


def build_payload(fields: Sequence[FieldInfo], raw: Mapping[str, str]) -> dict[str, Any]:
    """Per-field texts → payload: strings stay text, other types are read as JSON."""
    out: dict[str, Any] = {}
    for info in fields:
        text = raw.get(info.name, "")
        if text == "" and (not info.required or not _is_text(info)):
            continue  # left out: the schema check names a missing required field
        if _is_text(info):
            out[info.name] = text
            continue
        try:
            out[info.name] = json.loads(text)
        except json.JSONDecodeError:
            raise PayloadProblem(
                f"Field {info.name!r} needs a {info.type_label} written as JSON, "
                f"and {text!r} is not."
            ) from None
    return out


def parse_json_payload(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise PayloadProblem(f"The JSON does not parse: {exc.msg} at line {exc.lineno}, "
                             f"column {exc.colno}.") from None
    if not isinstance(value, dict):
        raise PayloadProblem("A message must be a JSON object, like {\"text\": \"hi\"}.")
    return value


def channel_fields(team: Team, channel: str) -> tuple[FieldInfo, ...]:
    ch = team.channels.get(channel)
    return ch.message_type.fields if ch is not None and ch.message_type is not None else ()


def json_template(fields: Sequence[FieldInfo]) -> str:
    sample: dict[str, Any] = {}
    for f in fields:
        sample[f.name] = "" if _is_text(f) else (f.default if f.default is not None else None)
    return json.dumps(sample, indent=1)


class ComposeScreen(ModalScreen[str | None]):
    """Pick a channel, fill its fields (or JSON), see problems inline, send with ctrl+s."""

    DEFAULT_CSS = """
    ComposeScreen { align: center middle; }
    #compose-box { width: 90%; max-width: 100; height: auto; max-height: 95%;
                   border: round $accent; padding: 0 1; background: $surface; }
    #compose-title { text-style: bold; }
    #compose-schema { color: $text-muted; }
    #compose-fields { height: auto; max-height: 10; }
    .field-row { height: 1; }
    .field-row Label { width: 22; }
    .field-row Input { width: 1fr; }
    #compose-json { height: 6; }
    #compose-error { color: $error; text-style: bold; height: auto; }
    #compose-error.-ok { color: $success; text-style: none; }
    #compose-buttons { height: 1; margin-top: 1; }
    #compose-buttons Button { margin-right: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "send", "Send"),
        Binding("ctrl+t", "toggle_mode", "JSON/fields"),
    ]

    def __init__(self, handle: TeamHandle, channel: str | None = None) -> None:
        super().__init__()
        self.handle = handle
        self.channels = sorted(handle.team.channels)
        self.channel = channel if channel in self.channels else (
            self.channels[0] if self.channels else None)
        self.json_mode = not channel_fields(handle.team, self.channel or "")
        self._build = 0  # generation of the field inputs (ids stay unique across rebuilds)

    def compose(self) -> ComposeResult:
        with Vertical(id="compose-box"):
            yield Static("Send a message as the user", id="compose-title")
            yield Select([(c, c) for c in self.channels], value=self.channel or Select.NULL,
                         allow_blank=not self.channels, id="compose-channel", compact=True)
            yield Static("", id="compose-schema", markup=False)
            yield VerticalScroll(id="compose-fields")
            yield TextArea("", id="compose-json", show_line_numbers=False)
            yield Static("", id="compose-error", markup=False)
            with Horizontal(id="compose-buttons"):
                yield Button("Send ^s", id="compose-send", compact=True, variant="primary")
                yield Button("JSON/fields ^t", id="compose-mode", compact=True)
                yield Button("Cancel esc", id="compose-cancel", compact=True)

    def on_mount(self) -> None:
        self._show_channel()

    # -- building the form ---------------------------------------------------------------

    @property
    def fields(self) -> tuple[FieldInfo, ...]:
        return channel_fields(self.handle.team, self.channel or "")

    def _show_channel(self) -> None:
        ch = self.handle.team.channels.get(self.channel or "")
        schema = self.query_one("#compose-schema", Static)
        if ch is None:
            schema.update("There is no channel to send on.")
        else:
            mt = ch.message_type
            name = mt.name if mt is not None else "any JSON object"
            listeners = ", ".join(sorted(ch.listeners)) or "nobody"
            schema.update(f"{ch.type} · schema {name} · heard by {listeners}")
        box = self.query_one("#compose-fields", VerticalScroll)
        box.remove_children()
        self._build += 1
        rows = []
        for f in self.fields:
            req = "" if f.required else "?"
            values = enum_values(f)
            widget: Input | Select[str]
            if values:  # a choice, never free text
                widget = Select([(v, v) for v in values], prompt=f"choose {f.name}",
                                allow_blank=True, compact=True,
                                id=f"field-{self._build}-{f.name}", classes="field-select")
            else:
                widget = Input(placeholder=f.description or f.name, compact=True,
                               id=f"field-{self._build}-{f.name}", classes="field-input")
            rows.append(Horizontal(Label(Text(f"{f.name}{req}: {f.type_label}")), widget,
                                   classes="field-row"))
        box.mount_all(rows)
        area = self.query_one("#compose-json", TextArea)
        area.text = json_template(self.fields)
        if not self.fields:
            self.json_mode = True
        box.display = not self.json_mode
        area.display = self.json_mode
        self._check()

    def field_input(self, name: str) -> Input:
        return self.query_one(f"#field-{self._build}-{name}", Input)

    def field_select(self, name: str) -> Select[str]:
        """An enum field's chooser."""
        return self.query_one(f"#field-{self._build}-{name}", Select)

    def field_text(self, name: str) -> str:
        """What a field holds now, as text ("" for an unchosen enum)."""
        widget = self.query_one(f"#field-{self._build}-{name}")
        if isinstance(widget, Select):
            value = widget.value
            return value if isinstance(value, str) else ""
        return widget.value if isinstance(widget, Input) else ""

    def raw_fields(self) -> dict[str, str]:
        raw = {}
        for f in self.fields:
            try:
                raw[f.name] = self.field_text(f.name)
            except Exception:  # a rebuild is in flight; its inputs are not mounted yet
                raw[f.name] = ""
        return raw

    # -- checking ----------------------------------------------------------------------

    def payload(self) -> dict[str, Any]:
        """The payload as typed so far; raises PayloadProblem when it cannot be read."""
        if self.json_mode:
            return parse_json_payload(self.query_one("#compose-json", TextArea).text)
        return build_payload(self.fields, self.raw_fields())

    def problem(self) -> str | None:
        """Why sending now would be refused, or None."""
        if self.channel is None:
            return "There is no channel to send on."
        if not self.json_mode and (empty := missing_required(self.fields, self.raw_fields())):
            return empty
        try:
            payload = self.payload()
        except PayloadProblem as exc:
            return str(exc)
        return self.handle.check_payload(self.channel, payload)

    def _check(self) -> str | None:
        reason = self.problem()
        err = self.query_one("#compose-error", Static)
        err.update(reason or "✓ ready to send")
        err.set_class(reason is None, "-ok")
        return reason

    @on(Input.Changed, ".field-input")
    @on(Select.Changed, ".field-select")
    @on(TextArea.Changed, "#compose-json")
    def _edited(self) -> None:
        self._check()

    @on(Select.Changed, "#compose-channel")
    def _channel_changed(self, event: Select.Changed) -> None:
        value = event.value
        if isinstance(value, str) and value != self.channel:
            self.channel = value
            self.json_mode = not self.fields
            self._show_channel()

    # -- actions -----------------------------------------------------------------------

    @on(Button.Pressed, "#compose-send")
    async def action_send(self) -> None:
        if self._check() is not None or self.channel is None:
            return
        try:
            await self.handle.send(self.channel, self.payload())
        except ChannelRefusal as exc:
            err = self.query_one("#compose-error", Static)
            err.update(f"Refused: {exc.message}")
            err.set_class(False, "-ok")
            return
        self.dismiss(self.channel)

    @on(Button.Pressed, "#compose-mode")
    def action_toggle_mode(self) -> None:
        if not self.fields:
            return
        if not self.json_mode:
            try:
                self.query_one("#compose-json", TextArea).text = json.dumps(
                    self.payload(), indent=1)
            except PayloadProblem:
                pass
        self.json_mode = not self.json_mode
        self.query_one("#compose-fields").display = not self.json_mode
        self.query_one("#compose-json").display = self.json_mode
        self._check()

    @on(Button.Pressed, "#compose-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


__all__ = [
    "ComposeScreen",
    "build_payload",
    "channel_fields",
    "enum_values",
    "json_template",
    "missing_required",
    "parse_json_payload",
]
