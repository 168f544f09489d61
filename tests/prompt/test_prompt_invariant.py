"""Every request extends the previous one byte for byte (issue 18).

For any sequence of rounds (plain replies, tool results, notices, refused and accepted sends,
``info`` follow-ups, value frames, continuations after the first-audio pause) a creature's
request B is its previous request A plus the model's reply plus what is new: nothing before
A's end changes, so a llama.cpp slot (or a hosted prompt cache) evaluates only the new
tokens. The one documented exception, the fold of old turns at block boundaries, cannot
happen here: the context window is far larger than these conversations. The last test shows
that with ``compaction: summarize`` the exception stays the same: between two moves of the
fold, requests extend each other, model-written fold line included.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller, Incoming
from terrarium.errors import ChannelRefusal
from terrarium.formats import value_frame
from terrarium.llm.scripted import ScriptedModel
from terrarium.llm.types import ChatRequest, StreamDelta
from terrarium.store import MemoryStore
from tests.loop_helpers import TOOLS, call
from tests.yield_fakes import Setup

TEAM = """\
terrarium:
  name: invariant
  input_channel: inbox
  creatures:
    - name: w
      config: w
      channels: {listen: [inbox], can_send: [notes]}
    - name: s
      config: s
      channels: {listen: [notes]}
  channels:
    inbox: {type: queue, schema: {fields: {text: str}}}
    notes: {type: queue, schema: {fields: {summary: str}}}
"""


class Recorded(ScriptedModel):
    """The scripted model, also keeping the text each request's stream gave back."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.replies: list[str] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        self.replies.append("")
        async with aclosing(super().stream(request)) as inner:
            async for delta in inner:
                self.replies[-1] += delta.text
                yield delta


def assert_extends(requests: Sequence[ChatRequest], replies: Sequence[str]) -> None:
    """Each request is the previous one plus the model's reply plus what is new."""
    assert requests
    for n, (a, b) in enumerate(itertools.pairwise(requests)):
        am, bm = a.messages, b.messages
        where = f"request {n + 2} against request {n + 1}"
        if am[-1].role == "assistant":  # a prefill (value frame, continuation): b finishes it
            p = len(am) - 1
            assert bm[:p] == am[:p], where
            assert bm[p].role == "assistant", where
            assert (bm[p].content or "").startswith((am[p].content or "") + replies[n]), where
        else:
            assert bm[:len(am)] == am, where
            if replies[n]:
                reply = bm[len(am)]
                assert reply.role == "assistant", where
                assert (reply.content or "").startswith(replies[n]), where


def write_team(root: Path, w_config: dict[str, Any], s_config: dict[str, Any]) -> Path:
    (root / "terrarium.yaml").write_text(TEAM, encoding="utf-8")
    for name, body in (("w", w_config), ("s", s_config)):
        (root / name).mkdir()
        (root / name / "config.yaml").write_text(yaml.safe_dump({"name": name, **body}),
                                                 encoding="utf-8")
    return root


class Clock:
    """Minutes pass on every read: a timestamp in the status would change every step."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 14, 6, 49, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


# a round that leads to another round, as the scripted model writes it
FOLLOW_UPS = {
    "tool": "Let me look.\n" + call("lookup", label="sky"),
    "info": call("info", name="lookup"),
    "notice": "Opening a call [/lookup]\n@@label=sky\n",  # left unclosed: only a notice
    "invalid": call("lookup", colour="blue"),  # a wrong argument: refused with the reason
    "refused": "Sending.\n" + call("send_notes", summary="refuse me"),
}
FINALS = {
    "plain": "The sky is green.",
    "sent": "Noted.\n" + call("send_notes", summary="all good"),
}

turns_st = st.lists(
    st.tuples(st.lists(st.sampled_from(sorted(FOLLOW_UPS)), max_size=3),
              st.sampled_from(sorted(FINALS))),
    min_size=1, max_size=5,
)
status_st = st.sampled_from([True, False, {"date": "minute", "step": True}, {"date": "off"}])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=turns_st, status=status_st, recall=st.booleans())
def test_requests_extend_each_other_over_random_rounds(
    turns: list[tuple[list[str], str]], status: Any, recall: bool
) -> None:
    replies: list[str] = []
    for rounds, final in turns:
        replies += [FOLLOW_UPS[k] for k in rounds] + [FINALS[final]]
    model = Recorded(replies)
    memory = MemoryStore(":memory:") if recall else None
    w = {"tools": [f"{TOOLS}:Lookup", "info"], "max_iterations": 10, "prompt_status": status,
         **({"memory_record": True, "memory_recall": 2, "memory_recent": 1} if recall else {})}
    with tempfile.TemporaryDirectory() as tmp:
        parts = assemble(load_team(write_team(Path(tmp), w, {})), "w")

        async def send(channel: str, payload: dict[str, Any]) -> int:
            if payload.get("summary") == "refuse me":
                raise ChannelRefusal("nobody listens on notes right now")
            return 1

        ctl = Controller(parts, model, send=send, memory=memory, clock=Clock())

        async def go() -> None:
            with anyio.fail_after(20):
                for i, _ in enumerate(turns):
                    await ctl.run_turn([Incoming(text=f"question {i}: what colour is the sky?",
                                                 channel="inbox", sender="user",
                                                 payload={"text": "q"})])

        anyio.run(go)
    assert len(model.requests) == len(replies)
    assert_extends(model.requests, model.replies)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.sampled_from(["hi", "the user greets us", "x y z"]), min_size=2,
                       max_size=5))
def test_value_frames_extend_each_other(values: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        parts = assemble(load_team(write_team(
            Path(tmp), {"tool_choice": "required", "max_iterations": 1}, {})), "w")
        frame = value_frame(parts.fmt)
        assert frame is not None
        model = Recorded([frame.prefix + v + "\n" for v in values], continuation=True)

        async def send(channel: str, payload: dict[str, Any]) -> int:
            return 1

        ctl = Controller(parts, model, send=send, clock=Clock())
        ctl.frame = frame  # what a grammar-capable backend gets (see test_value_frame)

        async def go() -> None:
            for v in values:
                await ctl.run_turn([Incoming(text=v, channel="inbox", sender="user",
                                             payload={"text": v})])

        anyio.run(go)
    assert all(r.messages[-1].content == frame.prefix for r in model.requests)
    assert_extends(model.requests, model.replies)


def test_continuations_after_the_first_audio_pause_extend_each_other(tmp_path: Path) -> None:
    s = Setup(tmp_path, steps=[{"reply": "Hello there, my friend. I am glad you came."},
                               {"reply": "Fine, thank you. The tea is green."},
                               {"reply": "Goodbye for now. See you soon."}])
    for text in ("hi", "how are you?", "bye"):
        s.run(text)
    prefills = [r for r in s.model.requests if r.messages[-1].role == "assistant"]
    assert prefills  # the pause happened: some requests continue a reply
    assert_extends(s.model.requests, s.model.streamed)


def test_a_notice_round_pins_its_block_after_the_sent_messages(tmp_path: Path) -> None:
    """Regression (issue 18): a round whose only outcome is a notice adds no user message;
    its notice must go after what was already sent, not before the newest user message."""
    w = {"tools": [f"{TOOLS}:Lookup", "info"], "prompt_status": {"date": "minute", "step": True}}
    parts = assemble(load_team(write_team(tmp_path, w, {})), "w")
    model = Recorded([FOLLOW_UPS["notice"], "Sorry, the sky is green."])
    ctl = Controller(parts, model, clock=Clock())
    anyio.run(ctl.run_turn, [Incoming(text="what colour is the sky?")])
    first, second = model.requests
    assert second.messages[:len(first.messages)] == first.messages
    new = second.messages[len(first.messages):]
    assert [m.role for m in new] == ["assistant", "system"]
    assert new[0].content == FOLLOW_UPS["notice"]
    assert "## Notice" in (new[1].content or "") and "## Status\nStep 1" in (new[1].content or "")


def test_the_default_status_is_pinned_once_a_day(tmp_path: Path) -> None:
    parts = assemble(load_team(write_team(tmp_path, {}, {})), "w")
    model = Recorded([], default_reply="Fine.")
    clock = Clock()
    ctl = Controller(parts, model, clock=clock)

    async def go() -> None:
        for i in range(6):
            if i == 4:
                clock.now += timedelta(days=1)
            await ctl.run_turn([Incoming(text=f"message {i}")])

    anyio.run(go)
    last = model.requests[-1].messages
    statuses = [m.content for m in last if m.role == "system" and "## Status" in (m.content or "")]
    assert statuses == ["## Status\n2026-11-30", "## Status\n2026-12-01"]
    assert_extends(model.requests, model.replies)


def test_a_status_hidden_by_history_turns_is_pinned_again(tmp_path: Path) -> None:
    parts = assemble(load_team(write_team(tmp_path, {"history_turns": 2}, {})), "w")
    model = Recorded([], default_reply="Fine.")
    ctl = Controller(parts, model, clock=Clock())
    for text in ("one", "two", "three"):
        anyio.run(ctl.run_turn, [Incoming(text=text)])
    for req in model.requests:
        assert sum("## Status" in (m.content or "") for m in req.messages) == 1


def test_a_status_hidden_by_a_fold_is_pinned_again(tmp_path: Path) -> None:
    w = {"controller": {"provider": "openai", "base_url": "http://x/v1", "context_window": 1536}}
    parts = assemble(load_team(write_team(tmp_path, w, {})), "w")
    model = Recorded([], default_reply="Fine. " + "ok " * 30)
    ctl = Controller(parts, model, clock=Clock())
    for i in range(30):
        anyio.run(ctl.run_turn, [Incoming(text=f"message {i}: " + "blah " * 40)])
    assert ctl.last_prompt is not None and ctl.last_prompt.folded_turns > 0
    for req in model.requests:
        assert any("## Status" in (m.content or "") for m in req.messages)


class SummarizingRecorded(Recorded):
    """Recorded, with summary requests (``compaction: summarize``) answered apart."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.summaries = 0

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        if (request.messages[0].content or "").startswith("Summarize the conversation"):
            self.summaries += 1
            yield StreamDelta(text=f"A summary, the {self.summaries}th.")
            return
        async for delta in super().stream(request):
            yield delta


def test_a_summarized_fold_keeps_requests_extending_between_folds(tmp_path: Path) -> None:
    w = {"controller": {"provider": "openai", "base_url": "http://x/v1", "context_window": 1536},
         "compaction": "summarize"}
    parts = assemble(load_team(write_team(tmp_path, w, {})), "w")
    model = SummarizingRecorded([], default_reply="Fine. " + "ok " * 30)
    ctl = Controller(parts, model, clock=Clock())
    for i in range(30):
        anyio.run(ctl.run_turn, [Incoming(text=f"message {i}: " + "blah " * 40)])

    def fold(req: ChatRequest) -> str | None:
        second = req.messages[1]
        return second.content if second.role == "system" and "summarized]" in (
            second.content or "") else None

    groups = [list(g) for _, g in itertools.groupby(
        zip(model.requests, model.replies, strict=True), key=lambda rr: fold(rr[0]))]
    assert model.summaries >= 2 and len(groups) == model.summaries + 1
    for group in groups:
        assert_extends([r for r, _ in group], [reply for _, reply in group])
