"""A run's timeline: what ``terrarium log RUN_ID`` prints, read from the durable log.

Kept apart from :mod:`terrarium.channels.log` because it only reads: it folds the log's
tables into one time-ordered list and formats it for people.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from terrarium.channels.log_rows import unbatched

if TYPE_CHECKING:
    from terrarium.channels.log import DurableLog, RunInfo

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


class TimelineEntry(BaseModel):
    """One line of ``terrarium log RUN_ID``."""

    model_config = ConfigDict(frozen=True)

    ts: float
    kind: str
    actor: str
    channel: str | None = None
    detail: str = ""


def run_timeline(log: DurableLog, run_id: str) -> list[TimelineEntry]:
    """Everything that happened in run ``run_id``, in time order (messages, consumption,
    refusals, turns, events)."""
    log.run(run_id)  # a clear error for an unknown run
    out: list[TimelineEntry] = []
    for env, receivers in log.messages(run_id):
        out.append(
            TimelineEntry(
                ts=env.ts,
                kind="message",
                actor=env.sender,
                channel=env.channel,
                detail=f"{env.id} → {', '.join(receivers) or '-'}: {_dumps(env.payload)}",
            )
        )
    for mid, receiver, channel, ts in log.query(
        "SELECT c.message_id, c.receiver, m.channel, c.consumed_at FROM consumptions c"
        " LEFT JOIN messages m ON m.id=c.message_id WHERE c.run_id=?",
        (run_id,),
    ):
        out.append(
            TimelineEntry(ts=ts, kind="consumed", actor=receiver, channel=channel, detail=mid)
        )
    for ref in log.refusals(run_id):
        out.append(
            TimelineEntry(
                ts=ref.ts,
                kind="refused",
                actor=ref.sender,
                channel=ref.channel,
                detail=ref.reason,
            )
        )
    for t in log.turns(run_id):
        tokens = f"prompt={t.prompt_tokens} cached={t.cached_tokens} out={t.completion_tokens}"
        detail = f"#{t.turn_index} {tokens}" + (f" error: {t.error}" if t.error else "")
        out.append(TimelineEntry(ts=t.started, kind="turn", actor=t.creature, detail=detail))
    rows = unbatched(log.query(
        "SELECT ts, kind, creature, data FROM events WHERE run_id=? ORDER BY id", (run_id,)),
        1, 3)  # (a batch row: a commit's events of a served session, taken apart)
    datas = log.with_payloads([r[3] for r in rows])  # a message_sent row's payload
    for (ts, kind, creature, _), data in zip(rows, datas, strict=True):
        d = json.loads(data)
        out.append(TimelineEntry(ts=d.get("ts", ts), kind=kind,
                                 actor=d.get("creature") or creature or "-",
                                 detail=_event_detail(d)))
    out.sort(key=lambda e: e.ts)
    return out


def _event_detail(d: dict[str, Any]) -> str:
    for k in ("kind", "ts", "creature"):
        d.pop(k, None)
    return " ".join(f"{k}={v}" for k, v in d.items())


def format_timeline(entries: Sequence[TimelineEntry], run: RunInfo | None = None) -> str:
    """Human-readable timeline: one line per entry, times relative to the run start."""
    lines: list[str] = []
    start = run.started if run else (entries[0].ts if entries else 0.0)
    if run is not None:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run.started))
        lines.append(f"run {run.run_id}  {run.terrarium}  started {stamp}  status {run.status}")
    for e in entries:
        chan = f" [{e.channel}]" if e.channel else ""
        lines.append(f"{e.ts - start:+10.3f}s  {e.kind:<16} {e.actor}{chan}  {e.detail}".rstrip())
    if not entries:
        lines.append("(nothing recorded)")
    return "\n".join(lines)


__all__ = ["TimelineEntry", "format_timeline", "run_timeline"]
