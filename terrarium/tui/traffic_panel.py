"""The channel panel: live traffic (sender → channel → receivers), refusals in red, a filter."""

from __future__ import annotations

import json

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Static

from terrarium.tui.state import MonitorState, TrafficRow
from terrarium.tui.text import one_line, payload_preview

PREVIEW_WIDTH = 48


def route_text(row: TrafficRow) -> Text:
    receivers = ", ".join(sorted(row.receivers)) or "-"
    text = Text()
    text.append(row.sender, style="bold")
    text.append(" → ")
    text.append(row.channel, style="cyan")
    if row.refused is None:
        text.append(" → ")
        text.append(receivers)
    else:
        text.append(" ✗ refused", style="bold red")
    return text


def detail_text(row: TrafficRow, width: int = PREVIEW_WIDTH) -> Text:
    if row.refused is not None:
        return Text(one_line(row.refused, width), style="bold red")
    if row.payload is None:
        return Text("…", style="dim")
    return Text(payload_preview(row.payload, width))


def full_detail(row: TrafficRow) -> Text:
    """Everything about one row, for the line under the table (nothing cut)."""
    text = route_text(row)
    text.append(f"  ({row.schema})", style="dim")
    if row.refused is not None:
        text.append(f"\nrefused: {row.refused}", style="bold red")
    elif row.payload is not None:
        text.append("\n" + json.dumps(row.payload, ensure_ascii=False, sort_keys=True))
    return text


class TrafficPanel(Vertical):
    """Appends new rows as they come; rebuilds only when the filter changes or rows age out."""

    DEFAULT_CSS = """
    TrafficPanel { height: 1fr; }
    TrafficPanel > #traffic-filter { height: 1; margin: 0 0; }
    TrafficPanel > DataTable { height: 1fr; }
    TrafficPanel > #traffic-detail { height: auto; max-height: 3; background: $boost;
                                     padding: 0 1; }
    """

    def __init__(self, state: MonitorState, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = state
        self.filter = ""
        self._last_seq = 0
        self._first_seq = 0
        self._pending: set[int] = set()  # rows shown before their payload was known

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter by channel or creature (/ to focus)",
                    id="traffic-filter", compact=True)
        yield DataTable(id="traffic-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="traffic-detail", markup=False)

    @property
    def preview_width(self) -> int:
        """Room left for the payload column, so rows fit without scrolling sideways."""
        return max(self.app.size.width - 56, 16)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        key = event.row_key.value
        row = next((r for r in self.state.traffic if str(r.seq) == key), None)
        self.query_one("#traffic-detail", Static).update(full_detail(row) if row else "")

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#traffic-table", DataTable)

    def on_mount(self) -> None:
        for col in ("#", "route", "schema", "payload / reason"):
            self.table.add_column(col, key=col)
        self.rebuild()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "traffic-filter":
            event.stop()
            self.filter = event.value.strip()
            self.rebuild()

    def set_filter(self, value: str) -> None:
        self.query_one("#traffic-filter", Input).value = value
        self.filter = value.strip()
        self.rebuild()

    def rebuild(self) -> None:
        self.table.clear()
        self.query_one("#traffic-detail", Static).update("")
        self._pending.clear()
        self._last_seq = 0
        self._first_seq = self.state.traffic[0].seq if self.state.traffic else 0
        self.sync()

    def sync(self) -> None:
        """Add rows that arrived since the last call (rebuild if old ones aged out)."""
        if self.state.traffic and self.state.traffic[0].seq != self._first_seq and self._last_seq:
            self.rebuild()
            return
        table = self.table
        added = False
        for row in self.state.rows(self.filter):
            if row.seq <= self._last_seq:
                continue
            schema = Text(row.schema, style="dim")
            table.add_row(Text(str(row.seq), justify="right"), route_text(row), schema,
                          detail_text(row, self.preview_width), key=str(row.seq))
            if row.payload is None and row.refused is None:
                self._pending.add(row.seq)
            self._last_seq = row.seq
            added = True
        if added:
            table.move_cursor(row=table.row_count - 1)

    def refresh_payloads(self) -> None:
        """Re-render payload cells that were still waiting for the log."""
        if not self._pending:
            return
        table = self.table
        for row in self.state.rows(self.filter):
            if row.seq in self._pending and row.payload is not None:
                self._pending.discard(row.seq)
                table.update_cell(str(row.seq), "payload / reason",
                                  detail_text(row, self.preview_width), update_width=True)


__all__ = [
    "PREVIEW_WIDTH",
    "TrafficPanel",
    "detail_text",
    "full_detail",
    "route_text",
]
