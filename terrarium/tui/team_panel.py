"""The team panel: one row per creature with its live state and token figures."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.widgets import DataTable

from terrarium.runtime.api import CreatureStatus
from terrarium.tui.text import STATE_STYLES, status_cells

COLUMNS = ("creature", "state", "model", "turns", "in", "out", "cached")


class TeamPanel(DataTable[Text]):
    """Rows keyed and sorted by creature name; cells update in place (no flicker)."""

    DEFAULT_CSS = """
    TeamPanel { height: auto; max-height: 12; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._names: list[str] = []
        self._shown: dict[str, tuple[str, ...]] = {}  # plain cells last drawn, per creature

    def on_mount(self) -> None:
        for col in COLUMNS:
            self.add_column(col, key=col)

    def show(self, statuses: Mapping[str, CreatureStatus]) -> None:
        """Bring the table in line with ``statuses`` (adds, updates, removes rows)."""
        names = sorted(statuses)
        if names != self._names:
            keep = self.cursor_row
            self.clear()
            for name in names:
                self.add_row(*self._cells(statuses[name]), key=name)
                self._shown[name] = (*status_cells(statuses[name]), statuses[name].state)
            self._names = names
            if names:
                self.move_cursor(row=min(max(keep, 0), len(names) - 1))
            return
        for name in names:
            plain = (*status_cells(statuses[name]), statuses[name].state)
            if self._shown.get(name) == plain:
                continue  # unchanged: the periodic refresh costs nothing
            self._shown[name] = plain
            for col, cell in zip(COLUMNS, self._cells(statuses[name]), strict=True):
                self.update_cell(name, col, cell, update_width=True)

    @staticmethod
    def _cells(status: CreatureStatus) -> list[Text]:
        cells = [Text(c) for c in status_cells(status)]
        cells[1].stylize(STATE_STYLES.get(status.state, ""))
        for i in (3, 4, 5, 6):
            cells[i].justify = "right"
        return cells

    def creature_at_cursor(self) -> str | None:
        if not self._names or self.cursor_row < 0:
            return None
        return self._names[min(self.cursor_row, len(self._names) - 1)]


__all__ = [
    "COLUMNS",
    "TeamPanel",
]
