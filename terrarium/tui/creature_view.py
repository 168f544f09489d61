"""The creature view: its transcript streaming live (tool calls collapsible, with their
results inside), the prompt inspector (section map, prefix/tail, prefix hash), and its
background jobs (a tab shown once the creature has any). A sub-agent run shows here too,
like a creature."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Collapsible, Static, TabbedContent, TabPane

from terrarium.events import TranscriptEntry
from terrarium.tui.delegation import Delegations
from terrarium.tui.jobs_panel import JobsPanel
from terrarium.tui.text import PromptView, entry_full, entry_title, one_line

ENTRY_STYLES: dict[str, str] = {
    "user": "bold cyan",
    "message_in": "cyan",
    "assistant": "",
    "output": "green",
    "notice": "dim",
    "error": "bold red",
    "tool_call": "magenta",
    "tool_result": "magenta",
    "reasoning": "dim italic",
}


def _body(entry: TranscriptEntry) -> str:
    return entry.detail if entry.detail else entry.text


class TranscriptView(VerticalScroll):
    """Mounts only entries it has not shown yet; a result nests under its tool call."""

    DEFAULT_CSS = """
    TranscriptView { height: 1fr; }
    TranscriptView > Static { width: 1fr; }
    TranscriptView Collapsible { padding: 0; border-top: none; }
    TranscriptView #streaming { color: $success; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown = 0
        self._open_calls: dict[str, Collapsible] = {}  # tool name -> call waiting for a result

    def compose(self) -> ComposeResult:
        yield Static("", id="streaming", markup=False)

    def reset(self) -> None:
        for child in list(self.children):
            if child.id != "streaming":
                child.remove()
        self.shown = 0
        self._open_calls.clear()

    def sync(self, entries: Sequence[TranscriptEntry], streaming: str, width: int) -> None:
        if len(entries) < self.shown:
            self.reset()
        stream = self.query_one("#streaming", Static)
        at_end = self.is_vertical_scroll_end
        new: list[Widget] = []
        for entry in entries[self.shown:]:
            widget = self._widget_for(entry, width)
            if widget is not None:
                new.append(widget)
        self.shown = len(entries)
        if new:
            self.mount_all(new, before=stream)
        stream.update(Text("▸ " + streaming[-600:]) if streaming else "")
        stream.display = bool(streaming)
        if at_end:
            self.scroll_end(animate=False)

    def _widget_for(self, entry: TranscriptEntry, width: int) -> Widget | None:
        title = entry_title(entry, width)
        style = ENTRY_STYLES.get(entry.kind, "")
        if entry.kind == "tool_result" and entry.name in self._open_calls:
            call = self._open_calls.pop(entry.name or "")
            call.title = Content(f"{call.title} → {one_line(entry.text, 30)}")
            result = Static(Text(f"result: {_body(entry)}", style=style), markup=False)
            try:
                call.query_one(Collapsible.Contents).mount(result)
            except NoMatches:  # the call box is not composed yet: add before it is
                call.compose_add_child(result)
            return None
        if entry.kind in ("tool_call", "tool_result") or entry.detail:
            inner = Static(Text(_body(entry)), markup=False)
            box = Collapsible(inner, title=Content(title), collapsed=True,
                              classes=f"entry-{entry.kind}")
            if entry.kind == "tool_call":
                self._open_calls[entry.name or ""] = box
            return box
        if entry.kind == "message_in" and title.endswith("…"):
            box = Collapsible(Static(Text(entry_full(entry)), markup=False),
                              title=Content(title), collapsed=True, classes="entry-message_in")
            return box
        # replies and notices wrap in full: they are what a watcher reads
        return Static(Text(entry_full(entry), style=style), markup=False,
                      classes=f"entry-{entry.kind}")


class PromptInspector(VerticalScroll):
    """The last assembled prompt: header, section map, then the text with boundaries."""

    DEFAULT_CSS = """
    PromptInspector { height: 1fr; }
    PromptInspector #prompt-summary { margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="prompt-summary", markup=False)
        yield Static("", id="prompt-body", markup=False)

    def show(self, view: PromptView | None, creature: str) -> None:
        summary = self.query_one("#prompt-summary", Static)
        body = self.query_one("#prompt-body", Static)
        if view is None:
            summary.update(Text(f"{creature} has not been given a prompt yet.", style="dim"))
            body.update("")
            return
        summary.update(Text(view.summary(), style="bold"))
        body.update(Text(view.body()))


class CreatureView(Vertical):
    """Title line plus Transcript and Prompt tabs for the selected creature."""

    DEFAULT_CSS = """
    CreatureView { height: 1fr; }
    CreatureView > #creature-title { height: 1; background: $boost; padding: 0 1; }
    CreatureView TabbedContent { height: 1fr; }
    CreatureView TabPane { padding: 0; height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.creature: str | None = None
        self._jobs_tab = False

    def compose(self) -> ComposeResult:
        yield Static("no creature selected", id="creature-title", markup=False)
        with TabbedContent(id="creature-tabs"):
            with TabPane("Transcript", id="tab-transcript"):
                yield TranscriptView(id="transcript")
            with TabPane("Prompt", id="tab-prompt"):
                yield PromptInspector(id="prompt")
            with TabPane("Jobs", id="tab-jobs"):
                yield JobsPanel(id="jobs")

    def on_mount(self) -> None:
        self.query_one("#creature-tabs", TabbedContent).hide_tab("tab-jobs")

    @property
    def transcript(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    @property
    def inspector(self) -> PromptInspector:
        return self.query_one(PromptInspector)

    @property
    def jobs(self) -> JobsPanel:
        return self.query_one(JobsPanel)

    def show_jobs(self, creature: str | None, work: Delegations) -> None:
        """The jobs of ``creature`` (None for a sub-agent run: it has no jobs list); the
        tab is there only while there is something to list."""
        tabs = self.query_one("#creature-tabs", TabbedContent)
        has = creature is not None and bool(work.jobs_of(creature))
        if has != self._jobs_tab:
            self._jobs_tab = has
            if has:
                tabs.show_tab("tab-jobs")
            else:
                if tabs.active == "tab-jobs":
                    tabs.active = "tab-transcript"
                tabs.hide_tab("tab-jobs")
        if creature is not None:
            self.jobs.show(creature, work)

    def open_jobs(self) -> bool:
        """Switch to the jobs tab when it is shown; False when there are none."""
        if not self._jobs_tab:
            return False
        self.query_one("#creature-tabs", TabbedContent).active = "tab-jobs"
        return True

    def select(self, creature: str) -> None:
        if creature != self.creature:
            self.creature = creature
            self.transcript.reset()

    def set_title(self, text: Text) -> None:
        self.query_one("#creature-title", Static).update(text)

    def toggle_prompt(self) -> None:
        tabs = self.query_one("#creature-tabs", TabbedContent)
        tabs.active = "tab-transcript" if tabs.active == "tab-prompt" else "tab-prompt"

    def shows_jobs(self) -> bool:
        return self.query_one("#creature-tabs", TabbedContent).active == "tab-jobs"


__all__ = [
    "ENTRY_STYLES",
    "CreatureView",
    "PromptInspector",
    "TranscriptView",
]
