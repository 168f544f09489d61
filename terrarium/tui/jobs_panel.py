"""The jobs list of one creature: its background jobs with status and elapsed time, and
the selected job's output so far (a sub-agent job's words and calls, then its result)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from terrarium.tui.delegation import Delegations, JobRow, elapsed_text
from terrarium.tui.text import WORK_STYLES, one_line

JOB_COLUMNS = ("job", "call", "status", "elapsed", "args")


def job_cells(job: JobRow, now: float, *, width: int = 40) -> tuple[str, str, str, str, str]:
    """A job's cells; ``now`` is the latest event time (elapsed never reads the clock)."""
    args = " ".join(f"{k}={v}" for k, v in sorted(job.args.items()))
    return (job.job_id, job.call, job.status, elapsed_text(job.elapsed(now)),
            one_line(args, width))


class JobsPanel(Vertical):
    """A table of jobs over the selected job's output; the table's cursor picks the job."""

    DEFAULT_CSS = """
    JobsPanel { height: 1fr; }
    JobsPanel #jobs-table { height: auto; max-height: 10; }
    JobsPanel #job-output-box { height: 1fr; border-top: solid $primary-background; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.creature: str | None = None
        self._ids: list[str] = []
        self._shown: dict[str, tuple[str, ...]] = {}
        self._work: Delegations | None = None

    def compose(self) -> ComposeResult:
        table: DataTable[Text] = DataTable(id="jobs-table", cursor_type="row",
                                           zebra_stripes=True)
        yield table
        with VerticalScroll(id="job-output-box"):
            yield Static("", id="job-output", markup=False)

    def on_mount(self) -> None:
        table = self.query_one("#jobs-table", DataTable)
        for col in JOB_COLUMNS:
            table.add_column(col, key=col)

    def show(self, creature: str, work: Delegations) -> None:
        """Bring the list in line with ``creature``'s jobs and show the selected output."""
        table: DataTable[Text] = self.query_one("#jobs-table", DataTable)
        self._work = work
        jobs: Sequence[JobRow] = work.jobs_of(creature)
        ids = [j.job_id for j in jobs]
        rows = {j.job_id: job_cells(j, work.now) for j in jobs}
        if creature != self.creature or ids != self._ids:
            keep = table.cursor_row if creature == self.creature else 0
            table.clear()
            for j in jobs:
                table.add_row(*self._cells(rows[j.job_id]), key=j.job_id)
            self._ids, self._shown = ids, dict(rows)
            self.creature = creature
            if ids:
                table.move_cursor(row=min(max(keep, 0), len(ids) - 1))
        else:
            for job_id, cells in rows.items():
                if self._shown.get(job_id) != cells:
                    self._shown[job_id] = cells
                    for col, cell in zip(JOB_COLUMNS, self._cells(cells), strict=True):
                        table.update_cell(job_id, col, cell, update_width=True)
        self._show_output()

    @staticmethod
    def _cells(plain: tuple[str, ...]) -> list[Text]:
        cells = [Text(c) for c in plain]
        cells[2].stylize(WORK_STYLES.get(plain[2], ""))
        cells[3].justify = "right"
        return cells

    def selected_job(self) -> str | None:
        table = self.query_one("#jobs-table", DataTable)
        if not self._ids or table.cursor_row < 0:
            return None
        return self._ids[min(table.cursor_row, len(self._ids) - 1)]

    def _show_output(self) -> None:
        out = self.query_one("#job-output", Static)
        job_id = self.selected_job()
        job = (self._work.job(self.creature, job_id)
               if self._work is not None and self.creature and job_id else None)
        if job is None or self._work is None:
            out.update(Text(f"{self.creature or 'This creature'} has no background jobs.",
                            style="dim"))
            return
        out.update(Text(self._work.job_output(job)))

    @on(DataTable.RowHighlighted, "#jobs-table")
    def _job_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_output()

    @on(DataTable.RowSelected, "#jobs-table")
    def _job_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._show_output()


__all__ = [
    "JOB_COLUMNS",
    "JobsPanel",
    "job_cells",
]
