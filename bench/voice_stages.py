"""Where an utterance's time to first audio went, stage by stage, from the events' own stamps.

Used by ``bench/voice.py --socket``: the same stages in one process (the events as the
runtime publishes them) and in the served runtime (the session's numbered events, read back
from the server's log once it has exited), so a difference between the two modes is
attributed to a stage by the same run rather than guessed from two wall-clock totals.

The stages of one utterance, each from the end of the one before (ms):

- ``accepted``: the send (in one process ``send_user``; over the socket the client's text
  frame) to the input's ``message_sent`` (the hub took it: logged and delivered);
- ``router turn``: to the router's ``turn_started`` (its inbox, the turn gate);
- ``routed``: to the router's ``message_sent`` on the speaker's channel (the router's
  model: prompt evaluation and the routing call);
- ``speaker turn``: to the speaker's ``turn_started`` (the hop, the turn gate);
- ``first token``: to the speaker's first ``output_text`` (recall, prompt, model request,
  prompt evaluation, the first token);
- ``queued``: to its first ``sentence_queued`` (generation up to the first piece, the
  reply guard);
- ``to synth``: to the start of that piece's synthesis (the synthesis queue; an early
  synthesis started before it was queued makes it negative);
- ``synth``: Piper synthesizing it (the event's ``synth_ms``);
- ``to client`` (over the socket): to the first PCM frame the client received.

Beside them, in tokens: the prompt tokens each model evaluated in the utterance's turns
(prompt minus cached, from ``turn_ended``) and the speaker's generated tokens: a served
session whose prompts were longer or less cached, or whose replies differed, shows it there.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from terrarium.channels.log_rows import unbatched
from terrarium.events import (
    Event,
    MessageSent,
    OutputText,
    SentenceQueued,
    SentenceSynthesized,
    TurnEnded,
    TurnStarted,
    event_from_dict,
)

__all__ = ["STAGES", "log_events", "stage_rows", "stage_table"]

NAN = float("nan")
Stage = tuple[str, Callable[[Event], bool]]

STAGES: tuple[Stage, ...] = (
    ("accepted", lambda e: isinstance(e, MessageSent) and e.sender == "user"),
    ("router turn", lambda e: isinstance(e, TurnStarted) and e.creature == "router"),
    ("routed", lambda e: isinstance(e, MessageSent) and e.sender == "router"),
    ("speaker turn", lambda e: isinstance(e, TurnStarted) and e.creature == "speaker"),
    ("first token", lambda e: isinstance(e, OutputText) and e.creature == "speaker"),
    ("queued", lambda e: isinstance(e, SentenceQueued) and e.creature == "speaker"),
    ("synthesized", lambda e: isinstance(e, SentenceSynthesized) and e.creature == "speaker"),
)
CLIENT = "to client"


def log_events(log_file: Path) -> list[Event]:
    """Every event a run's log holds (a server's: every session's), oldest first."""
    con = sqlite3.connect(f"file:{log_file}?mode=ro", uri=True)
    try:
        # (a batch row holds a commit's events of a session: taken apart; sorted below)
        rows = [(r[1],) for r in unbatched(
            con.execute("SELECT kind, data FROM events ORDER BY ts").fetchall(), 0, 1)]
    finally:
        con.close()
    out: list[Event] = []
    for (data,) in rows:
        try:
            out.append(event_from_dict(json.loads(data)))
        except ValueError:
            pass
    return out


def stage_rows(events: Sequence[Event], sent: Sequence[float],
               received: Sequence[float] | None = None) -> list[dict[str, float]]:
    """Each utterance's stages (ms), its events being those stamped from its send (wall
    clock) to the next one's; ``received``: when the client got its first PCM (wall)."""
    out: list[dict[str, float]] = []
    bounds = [*sent[1:], float("inf")]
    for i, (t0, t1) in enumerate(zip(sent, bounds, strict=True)):
        got = sorted((e for e in events if t0 <= e.ts < t1), key=lambda e: e.ts)
        row: dict[str, float] = {}
        prev = t0
        for name, found in STAGES:
            ts = next((e.ts for e in got if found(e)), None)
            if name == "synthesized":  # split: the wait for the synthesis, and Piper's
                ev = next((e for e in got if found(e)), None)
                synth = ev.synth_ms if isinstance(ev, SentenceSynthesized) else NAN
                row["to synth"] = NAN if ts is None else (ts - prev) * 1000 - synth
                row["synth"] = synth
            else:
                row[name] = NAN if ts is None or prev != prev else (ts - prev) * 1000
            prev = ts if ts is not None else NAN
        if received is not None:
            row[CLIENT] = (received[i] - prev) * 1000 if received[i] == received[i] else NAN
        for creature in ("router", "speaker"):  # the model's work: prompt tokens evaluated
            end = next((e for e in got if isinstance(e, TurnEnded)
                        and e.creature == creature), None)
            row[f"{creature} evaluated"] = (NAN if end is None
                                            else end.prompt_tokens - end.cached_tokens)
        row["speaker generated"] = NAN if end is None else end.completion_tokens
        out.append(row)
    return out


def _median(vals: list[float]) -> float:
    real = [v for v in vals if v == v]
    return statistics.median(real) if real else NAN


def stage_table(local: list[dict[str, float]], served: list[dict[str, float]]) -> None:
    """Per stage: the median in one process, over the socket, and of the paired
    (same utterance) differences; the stage where the served runtime adds time stands out."""
    names = [n for n, _ in STAGES[:-1]] + ["to synth", "synth"]
    names += [CLIENT] if any(CLIENT in r for r in served) else []
    names += ["router evaluated", "speaker evaluated", "speaker generated"]  # tokens
    print("\nwhere the time went, per stage (ms; median; paired: socket - in one process, "
          "per utterance):")
    print(f"  {'stage':<14} {'in one process':>15} {'over the socket':>16} {'paired':>9}")
    for n in names:
        a = _median([r.get(n, NAN) for r in local])
        b = _median([r.get(n, NAN) for r in served])
        d = _median([s.get(n, NAN) - loc.get(n, 0.0)
                     for loc, s in zip(local, served, strict=False)])
        print(f"  {n:<14} {a:15.1f} {b:16.1f} {d:+9.1f}")
