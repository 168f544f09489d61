"""The team panel: one row per creature with its live state and token figures, and under
each creature the sub-agent runs it started (nested by depth), running and finished."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rich.text import Text
from textual.widgets import DataTable

from terrarium.runtime.api import CreatureStatus
from terrarium.tui.delegation import SubagentRun
from terrarium.tui.text import STATE_LABELS, STATE_STYLES, WORK_STYLES, status_cells

COLUMNS = ("creature", "state", "model", "turns", "in", "out", "cached")

SubagentLookup = Callable[[str], Sequence[SubagentRun]]


def subagent_cells(run: SubagentRun) -> tuple[str, str, str, str, str, str, str]:
    """A sub-agent run's cells: turns are its model calls, ``in`` its prompts' tokens."""
    state = run.shown_state
    return (
        "  " * run.depth + "└ " + run.name,
        STATE_LABELS.get(state, state),
        f"sub-agent d{run.depth}",
        str(run.iterations),
        str(run.prompt_tokens) if run.prompt_tokens else "-",
        "-",
        "-",
    )


class TeamPanel(DataTable[Text]):
    """Rows keyed by creature name (sub-agent runs by ``sub:RUN_ID``), each creature
    followed by its sub-agents; cells update in place (no flicker)."""

    DEFAULT_CSS = """
    TeamPanel { height: auto; max-height: 12; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._keys: list[str] = []
        self._shown: dict[str, tuple[str, ...]] = {}  # plain cells last drawn, per row

    def on_mount(self) -> None:
        for col in COLUMNS:
            self.add_column(col, key=col)

    def show(self, statuses: Mapping[str, CreatureStatus],
             subagents: SubagentLookup | None = None) -> None:
        """Bring the table in line with ``statuses`` and each creature's sub-agent runs
        (adds, updates, removes rows)."""
        rows: list[tuple[str, tuple[str, ...], list[Text]]] = []
        for name in sorted(statuses):
            st = statuses[name]
            rows.append((name, (*status_cells(st), st.state), self._cells(st)))
            for run in subagents(name) if subagents is not None else ():
                cells = subagent_cells(run)
                rows.append((run.key, (*cells, run.shown_state), self._sub_cells(run, cells)))
        keys = [k for k, _, _ in rows]
        if keys != self._keys:
            keep = self.cursor_row
            self.clear()
            for key, plain, cells in rows:
                self.add_row(*cells, key=key)
                self._shown[key] = plain
            self._keys = keys
            if keys:
                self.move_cursor(row=min(max(keep, 0), len(keys) - 1))
            return
        for key, plain, cells in rows:
            if self._shown.get(key) == plain:
                continue  # unchanged: the periodic refresh costs nothing
            self._shown[key] = plain
            for col, cell in zip(COLUMNS, cells, strict=True):
                self.update_cell(key, col, cell, update_width=True)

    @staticmethod
    def _cells(status: CreatureStatus) -> list[Text]:
        cells = [Text(c) for c in status_cells(status)]
        cells[1].stylize(STATE_STYLES.get(status.state, ""))
        for i in (3, 4, 5, 6):
            cells[i].justify = "right"
        return cells

    @staticmethod
    def _sub_cells(run: SubagentRun, plain: Sequence[str]) -> list[Text]:
        cells = [Text(c) for c in plain]
        state = run.shown_state
        cells[0].stylize("italic")
        cells[1].stylize(WORK_STYLES.get(state) or STATE_STYLES.get(state, ""))
        cells[2].stylize("dim")
        for i in (3, 4, 5, 6):
            cells[i].justify = "right"
        return cells

    def key_at_cursor(self) -> str | None:
        """The row under the cursor: a creature name or a sub-agent run's key."""
        if not self._keys or self.cursor_row < 0:
            return None
        return self._keys[min(self.cursor_row, len(self._keys) - 1)]

    def creature_at_cursor(self) -> str | None:
        key = self.key_at_cursor()
        return key if key is not None and not key.startswith("sub:") else None


__all__ = [
    "COLUMNS",
    "SubagentLookup",
    "TeamPanel",
    "subagent_cells",
]
