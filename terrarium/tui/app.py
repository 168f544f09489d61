"""MonitorApp: watch and steer a running (or replayed) team in the terminal.

The app reads the TeamHandle's views and folds bus events; it never calls into the runtime
on the runtime's behalf, and the bus drops (and counts) events rather than wait for us, so
a slow terminal can never slow the team down.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import DataTable, Footer, Header, Input, Static, TabbedContent, TabPane

from terrarium.channels.bus import EventSubscription
from terrarium.config import Team
from terrarium.errors import ChannelRefusal
from terrarium.events import (
    RunEnded,
)
from terrarium.runtime.api import TeamHandle
from terrarium.tui.composer import ComposeScreen
from terrarium.tui.creature_view import CreatureView
from terrarium.tui.delegation import SUBAGENT_KEY, SubagentRun
from terrarium.tui.human import ApprovalScreen, HumanRequest, MonitorHuman, QuestionScreen
from terrarium.tui.live import LIVE_EVENT_BUFFER, LiveRunHandle
from terrarium.tui.payloads import PayloadReader
from terrarium.tui.replay import ReplayHandle
from terrarium.tui.start_progress import StartProgress
from terrarium.tui.state import Changes, MonitorState
from terrarium.tui.team_panel import TeamPanel
from terrarium.tui.text import (
    STATE_LABELS,
    STATE_STYLES,
    WORK_STYLES,
    PromptView,
    topology_text,
)
from terrarium.tui.traffic_panel import TrafficPanel

if TYPE_CHECKING:
    from textual.pilot import Pilot

EVENT_BUFFER = 4096
REFRESH_SECONDS = 0.1  # events are taken in batches at most this often
JUMP = 10


class SayInput(Input):
    """The user's line to the entry channel; shows how to get back to the panels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.unfocus", "back")]


class MonitorApp(App[int]):
    """Tabs: Team (creatures with their sub-agents + channel traffic), Creature (transcript,
    prompt, background jobs; a sub-agent run shows here like a creature), Topology."""

    TITLE = "terrarium"
    ENABLE_COMMAND_PALETTE = False  # its footer slot is worth more to the keys
    CSS = """
    #overview-box { height: 1fr; }
    #team { margin-bottom: 0; }
    #topology-scroll { height: 1fr; }
    #notice { height: auto; max-height: 3; padding: 0 1; color: $warning; }
    #notice.-error { color: $error; text-style: bold; }
    #replay-bar { height: 1; padding: 0 1; background: $boost; }
    #tabs { height: 1fr; }
    #say { height: 1; }
    TabPane { padding: 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "tab('overview')", "team"),
        Binding("2", "tab('creature')", "creature"),
        Binding("3", "tab('topology')", "topology"),
        Binding("n", "next_creature", "next"),
        Binding("p", "toggle_prompt", "prompt"),
        Binding("j", "jobs", "jobs", show=False),
        Binding("s", "focus_say", "say"),
        Binding("c", "compose", "compose"),
        Binding("slash", "focus_filter", "filter", key_display="/"),
        Binding("escape", "unfocus", "back", show=False),
        Binding("left_square_bracket", "step(-1)", "step", key_display="[ ]"),
        Binding("right_square_bracket", "step(1)", "step", show=False),
        Binding("left_curly_bracket", "step(-10)", "jump", key_display="{ }"),
        Binding("right_curly_bracket", "step(10)", "jump", show=False),
        Binding("q", "quit", "quit"),
    ]

    def __init__(
        self,
        handle: TeamHandle,
        *,
        read_only: bool = False,
        deterministic: bool = False,
        human: MonitorHuman | None = None,
        starting: bool = False,
    ) -> None:
        """``deterministic`` hides run ids and times (snapshot tests, screenshots);
        ``human`` is where the run's approvals and questions wait for this app;
        ``starting``: the handle's team is still starting (model load, warm-up), shown as
        progress until :meth:`started` is called."""
        super().__init__()
        self.progress = StartProgress(time.monotonic) if starting else None
        self.handle = handle
        self.human = human
        self._asking: HumanRequest | None = None
        self.replay = handle if isinstance(handle, ReplayHandle) else None
        self.read_only = (read_only or self.replay is not None
                          or isinstance(handle, LiveRunHandle))
        self.deterministic = deterministic
        self.team: Team = handle.team
        self.state = MonitorState(self.team)
        self.selected: str | None = None
        self._payloads = PayloadReader(handle.log_path) if handle.log_path else None
        # opened when a run begins (run_async / run_test), closed when it ends: an app that
        # is built and never run holds nothing on the bus
        self._sub: EventSubscription | None = None
        # a run followed from the broker (tui/live.py): read-only, and it may end under us
        self.live_follow = isinstance(handle, LiveRunHandle)

    # -- the event subscription: one per run of the app --------------------------------

    def _subscribe(self) -> None:
        """Subscribe before the run's first await, so nothing the team publishes once the
        app is running (its start, in ``terrarium run --tui``) is lost to us."""
        if self._sub is None and self.replay is None:
            self._sub = self.handle.bus.subscribe(
                LIVE_EVENT_BUFFER if self.live_follow else EVENT_BUFFER)

    def _unsubscribe(self) -> None:
        sub, self._sub = self._sub, None
        if sub is not None:
            sub.close()

    async def run_async(self, **kwargs: Any) -> int | None:
        self._subscribe()
        try:
            return await super().run_async(**kwargs)
        finally:
            self._unsubscribe()

    @asynccontextmanager
    async def run_test(self, **kwargs: Any) -> AsyncIterator[Pilot[int]]:
        self._subscribe()
        try:
            async with super().run_test(**kwargs) as pilot:
                yield pilot
        finally:
            self._unsubscribe()

    # -- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="◉")
        with TabbedContent(id="tabs", initial="overview"):
            with TabPane("Team", id="overview"):
                with Vertical(id="overview-box"):
                    yield TeamPanel(id="team")
                    yield TrafficPanel(self.state, id="traffic")
            with TabPane("Creature", id="creature"):
                yield CreatureView(id="creature-view")
            with TabPane("Topology", id="topology"):
                with VerticalScroll(id="topology-scroll"):
                    yield Static(Text(self._topology()), id="topology-text")
        if self.replay is not None:
            yield Static("", id="replay-bar", markup=False)
        yield Static("", id="notice", markup=False)
        entry = self.team.input_channel
        say = SayInput(
            placeholder=f"say to {entry} (s, enter to send)" if entry else "this team takes no "
            "user input",
            id="say",
            compact=True,
            disabled=self.read_only or entry is None,
        )
        say.display = not self.read_only
        yield say
        yield Footer(compact=True)

    def _topology(self) -> str:
        text = topology_text(self.team)
        note = getattr(self.handle, "team_note", None)
        return f"{note}\n\n{text}" if note else text

    def on_mount(self) -> None:
        self.title = f"terrarium · {self.team.name}"
        if self.replay is not None:
            # how the run ended (completed, failed, degraded, timeout, …) heads the replay
            status = f"replay ({self.replay.run.status})"
            self.sub_title = status if self.deterministic else f"{status} {self.handle.run_id}"
        elif self.live_follow:
            self.sub_title = "live" if self.deterministic else f"live {self.handle.run_id}"
        elif self.progress is not None:
            self.sub_title = "starting"
            self.notice("starting the team...")
        else:
            self.sub_title = "" if self.deterministic else self.handle.run_id
        names = sorted(self.handle.statuses)
        self.selected = self.team.entry if self.team.entry in names else (names[0] if names
                                                                          else None)
        self._show_team()
        if self.selected:
            self._show_creature(self.selected)
        if self.replay is not None:
            self._refold_replay()
        else:
            self._consume()
            self.set_interval(1.0, self._tick)
        self.query_one(TeamPanel).focus()
        if self.human is not None:
            human = self.human
            human.attach(lambda: self.call_later(self._ask_human))

    def started(self) -> None:
        """The team has started (its model loaded): show its creatures and run id."""
        if not self.is_running:
            return
        self.sub_title = "" if self.deterministic else self.handle.run_id
        names = sorted(self.handle.statuses)
        if self.selected is None and names:
            self._show_creature(self.team.entry if self.team.entry in names else names[0])
        self._show_team()
        if self.progress is not None and self.progress.ready is None:
            self.notice(self.progress.line())

    def start_failed(self, why: str) -> None:
        """The team could not start: said in the notice bar; q quits."""
        self.progress = None
        self.sub_title = "could not start"
        self.notice(f"the team could not start: {why} (q quits)", error=True)

    def on_unmount(self) -> None:
        # stop folding events first: refusing what waits lets turns go on, and their
        # events must not reach panels that are being taken down
        self.workers.cancel_group(self, "events")
        self._unsubscribe()
        if self.human is not None:
            self.human.detach()

    # -- approvals and questions -------------------------------------------------------

    def _ask_human(self) -> None:
        """Show the next waiting request, one dialog at a time, in the order they came."""
        if self._asking is not None or self.human is None:
            return
        req = self.human.next()
        if req is None:
            return
        self._asking = req

        def done(value: Any) -> None:
            self._asking = None
            if req.kind == "approval":
                req.decide(value)
                word = "approved" if value.approved else f"denied ({value.reason})"
                self.notice(f"{req.creature}: {req.tool} {word}")
            else:
                req.reply(value)
            self._ask_human()

        if req.kind == "approval":
            self.notice(f"{req.creature} waits for your approval of {req.tool}")
            self.push_screen(ApprovalScreen(req), done)
        else:
            self.notice(f"{req.creature} asks you something")
            self.push_screen(QuestionScreen(req), done)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide keys that do nothing here (steps outside a replay, input in a replay)."""
        if action == "step":
            return self.replay is not None
        if action in ("compose", "focus_say"):
            return not self.read_only
        return True

    # -- events ------------------------------------------------------------------------

    @work(exclusive=True, group="events")
    async def _consume(self) -> None:
        """Take events in batches; the bus never waits for this loop."""
        sub = self._sub
        if sub is None:
            return
        try:
            while True:
                try:
                    first = await sub.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return
                batch = [first, *sub.drain()]
                if self.progress is not None and self.progress.feed(batch):
                    self.notice(self.progress.line())
                try:
                    self._apply(self.state.apply_all(batch))
                    if self.live_follow:
                        self._run_ended(batch)
                except NoMatches:  # the panels are gone: the app is closing mid-turn
                    return
                await anyio.sleep(REFRESH_SECONDS)
        finally:
            sub.close()

    def _apply(self, changes: Changes) -> None:
        if changes.traffic and self._payloads is not None:
            self.state.fill_payloads(self._payloads)
        traffic = self.query_one(TrafficPanel)
        if changes.traffic:
            traffic.sync()
        traffic.refresh_payloads()
        if changes.creatures or changes.transcripts or changes.work:
            self._show_team()
        sel = self.selected
        run = self._selected_run()
        if run is not None:
            if run.label.split("/", 1)[0] in changes.work:
                self._sync_creature()
                self._sync_prompt()
        elif sel is not None and (sel in changes.transcripts or sel in changes.creatures):
            self._sync_creature()
        if sel is not None and sel in changes.work and run is None:
            self._sync_jobs()
        if sel is not None and sel in changes.prompts:
            self._sync_prompt()
        if changes.missed:
            self.notice(f"The monitor fell behind and skipped {self.state.missed} events; "
                        "the panels were refreshed from the runtime.")

    def _run_ended(self, batch: list[Any]) -> None:
        """A followed run that ends says so; the panels stay as they are, read-only."""
        for e in batch:
            if isinstance(e, RunEnded) and e.run_id == self.handle.run_id:
                self.notice(f"The run ended ({e.status}); the monitor stays open on what it "
                            "saw (q quits).")
                self.sub_title = (f"ended ({e.status})" if self.deterministic
                                  else f"ended ({e.status}) {self.handle.run_id}")

    def _tick(self) -> None:
        """Statuses are live objects: pick up counters that changed without an event."""
        if self.progress is not None and self.progress.ready is None:
            self.notice(self.progress.line())  # the elapsed time moves on while starting
        try:
            if not self.deterministic:  # running jobs' elapsed goes on between events
                work = self.state.work
                work.now = max(work.now, time.time())
            self._show_team()
            self._sync_jobs()
            if self._payloads is not None:
                self.state.fill_payloads(self._payloads)
                self.query_one(TrafficPanel).refresh_payloads()
            if self.selected is not None:
                self._sync_creature()
        except NoMatches:  # the timer fired while the app is closing
            return

    # -- creature view -----------------------------------------------------------------

    def _show_team(self) -> None:
        self.query_one(TeamPanel).show(self.handle.statuses, self.state.work.subagents_of)

    def _selected_run(self) -> SubagentRun | None:
        """The sub-agent run selected instead of a creature, if one is."""
        return self.state.work.run_by_key(self.selected) if self.selected else None

    def _show_creature(self, name: str) -> None:
        """Select a creature, or a sub-agent run by its row key (``sub:RUN_ID``)."""
        self.selected = name
        view = self.query_one(CreatureView)
        view.select(name)
        self._sync_creature()
        self._sync_prompt()
        self._sync_jobs()

    def _sync_jobs(self) -> None:
        if self.selected is None:
            return
        creature = None if self._selected_run() is not None else self.selected
        self.query_one(CreatureView).show_jobs(creature, self.state.work)

    def _sync_subagent(self, run: SubagentRun) -> None:
        view = self.query_one(CreatureView)
        title = Text(run.label, style="bold")
        state = run.shown_state
        title.append("  ")
        title.append(STATE_LABELS.get(state, state),
                     style=WORK_STYLES.get(state) or STATE_STYLES.get(state))
        title.append(f"  sub-agent of {run.parent} · depth {run.depth} · "
                     f"model calls {run.iterations}")
        if run.prompt_tokens:
            title.append(f" · prompt tokens {run.prompt_tokens}")
        view.set_title(title)
        width = max(self.size.width - 4, 40)
        view.transcript.sync(tuple(run.entries), run.streaming, width)

    def _sync_creature(self) -> None:
        name = self.selected
        if name is None:
            return
        run = self._selected_run()
        if run is not None:
            self._sync_subagent(run)
            return
        view = self.query_one(CreatureView)
        if name.startswith(SUBAGENT_KEY):  # a replay stepped back to before the run began
            view.set_title(Text("this sub-agent run has not started yet here", style="dim"))
            view.transcript.sync((), "", 40)
            return
        st = self.handle.statuses.get(name)
        title = Text(name, style="bold")
        if st is not None:
            title.append("  ")
            title.append(STATE_LABELS.get(st.state, st.state), style=STATE_STYLES.get(st.state))
            title.append(f"  {st.model} · turns {st.turns} · restarts {st.restarts}")
            if st.last_error:
                title.append(f"  last error: {st.last_error}", style="red")
        view.set_title(title)
        width = max(self.size.width - 4, 40)
        view.transcript.sync(self.handle.transcript(name), self.state.streaming.get(name, ""),
                             width)

    def _sync_prompt(self) -> None:
        name = self.selected
        if name is None:
            return
        run = self._selected_run()
        self.query_one(CreatureView).inspector.show(self.prompt_view(name),
                                                    run.label if run else name)

    def prompt_view(self, name: str) -> PromptView | None:
        run = self.state.work.run_by_key(name)
        if run is not None:
            return run.prompt
        if self.replay is not None:
            return self.replay.prompt_view(name)
        built = self.handle.prompt(name)
        if built is None and isinstance(self.handle, LiveRunHandle):
            return self.handle.prompt_view(name)  # only the logged map crosses the broker
        return PromptView.from_built(built) if built is not None else None

    @on(DataTable.RowSelected, "#team")
    def _creature_chosen(self, event: DataTable.RowSelected) -> None:
        name = str(event.row_key.value)
        self._show_creature(name)
        self.query_one("#tabs", TabbedContent).active = "creature"

    # -- input -------------------------------------------------------------------------

    @on(Input.Submitted, "#say")
    async def _say(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text or self.read_only:
            return
        channel = self.team.input_channel
        if channel is not None:
            reason = self.handle.check_payload(channel, {"text": text})
            if reason is not None:
                self.notice(reason, error=True)
                return
        try:
            await self.handle.send_user(text)
        except ChannelRefusal as exc:
            self.notice(f"Refused: {exc.message}", error=True)
            return
        event.input.value = ""
        self.notice(f"sent to {channel}")

    def notice(self, text: str, *, error: bool = False) -> None:
        bar = self.query_one("#notice", Static)
        bar.update(text)
        bar.set_class(error, "-error")

    # -- actions -----------------------------------------------------------------------

    def action_tab(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab
        if tab == "overview":  # arrows and enter pick a creature or sub-agent again
            self.query_one(TeamPanel).focus()

    def action_next_creature(self) -> None:
        names = sorted(self.handle.statuses)
        if not names:
            return
        i = names.index(self.selected) + 1 if self.selected in names else 0
        self._show_creature(names[i % len(names)])
        self.query_one("#tabs", TabbedContent).active = "creature"

    def action_toggle_prompt(self) -> None:
        self.query_one("#tabs", TabbedContent).active = "creature"
        self.query_one(CreatureView).toggle_prompt()
        self._sync_prompt()

    def action_jobs(self) -> None:
        """The selected creature's background jobs (the tab shows once it has any)."""
        self.query_one("#tabs", TabbedContent).active = "creature"
        if not self.query_one(CreatureView).open_jobs():
            run = self._selected_run()
            who = run.label if run is not None else (self.selected or "This creature")
            self.notice(f"{who} has no background jobs.")

    def action_focus_say(self) -> None:
        self.query_one("#say", Input).focus()

    def action_focus_filter(self) -> None:
        self.query_one("#tabs", TabbedContent).active = "overview"
        self.query_one("#traffic-filter", Input).focus()

    def action_unfocus(self) -> None:
        self.query_one(TeamPanel).focus()

    def action_compose(self) -> None:
        if self.read_only:
            return
        channel = self.team.input_channel

        def sent(result: str | None) -> None:
            if result:
                self.notice(f"sent to {result}")

        self.push_screen(ComposeScreen(self.handle, channel), sent)

    def action_step(self, delta: int) -> None:
        if self.replay is None:
            return
        self.replay.step(delta)
        self._refold_replay()

    # -- replay ------------------------------------------------------------------------

    def _refold_replay(self) -> None:
        """Rebuild every panel from the events up to the replay cursor."""
        replay = self.replay
        assert replay is not None
        self.state = MonitorState(self.team)
        self.state.apply_all(replay.applied())
        if replay.position == replay.total and replay.run.status != "running":
            # the run is over: a job or sub-agent that never ended was lost with it
            self.state.work.lose_running(replay.run.ended or self.state.work.now)
        self.state.fill_payloads(
            lambda mid: ("", replay.payloads[mid]) if mid in replay.payloads else None)
        traffic = self.query_one(TrafficPanel)
        traffic.state = self.state
        traffic.rebuild()
        self._show_team()
        if self.selected is not None:
            self.query_one(CreatureView).transcript.reset()
            self._sync_creature()
            self._sync_prompt()
            self._sync_jobs()
        self.query_one("#replay-bar", Static).update(self._replay_bar())

    def _replay_bar(self) -> Text:
        replay = self.replay
        assert replay is not None
        width = 30
        filled = round(width * replay.position / replay.total) if replay.total else width
        bar = Text("replay ")
        bar.append("█" * filled, style="bold")
        bar.append("░" * (width - filled), style="dim")
        bar.append(f" event {replay.position}/{replay.total}")
        if not self.deterministic:
            bar.append(f"  +{replay.elapsed:.1f}s")
        bar.append("   [ ] step  { } jump")
        return bar


__all__ = [
    "EVENT_BUFFER",
    "JUMP",
    "REFRESH_SECONDS",
    "MonitorApp",
    "SayInput",
]
