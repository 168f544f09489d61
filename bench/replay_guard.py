"""Replay a conversation run's model texts through this tree's reply guard, without the model.

``bench/conversation.py --json run.json`` keeps, for every turn, the speaker's message (the
notes it was handed) and what its model wrote (``model_text``: the transcript's text, spoken
or not; runs before session 18 kept only what the guard let through, ``written``). This
feeds every turn's text through the reply guard of the tree it runs in, token by token (a
word or a punctuation mark with its leading space: the model's own tokens are not kept),
into the voice's own segmenter (the speaker's ``first_clause_chars`` and
``first_piece_max_chars``), as the runtime does: what would have been heard, scored as the
conversation bench scores it (echo, complete, recall, honest, speaks as the user, loops), and
a model-free proxy of what the guard costs the first audio: how many tokens (and characters)
of the model's text the first spoken piece waited for after the first piece of the model's
own text could be cut (``EarlyFirstPiece``), the guard's hold. A guard change is measured in
seconds on the same texts (temperature 0: the model writes the same; a guard that would have
let it write further, or stopped it sooner, cannot be judged here, nor can retrieval).

Run: ``python bench/replay_guard.py run.json [--set dev7] [-v]`` (``-v``: each turn whose
heard reply changes, before and after). Run the same file from two trees to compare guards.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reply_scores import DONT_KNOW, is_complete, loops, speaks_as_user

from terrarium.config import load_team
from terrarium.controller.guard import ReplyGuard, is_echo
from terrarium.store.similar import load_encoder
from terrarium.voice.early import EarlyFirstPiece
from terrarium.voice.segment import TERMINATORS, SegmenterConfig, SentenceSegmenter
from terrarium.voice.speakable import FenceFilter, to_speakable

ROOT = Path(__file__).resolve().parent.parent
_TOKEN = re.compile(r"\s*[A-Za-z0-9]+|\s*[^\sA-Za-z0-9]|\s+$")


def notes_of(message: str) -> str:
    """The notes in a speaker's message ("Note: ...\\nQuestion: ..."), or ""."""
    if not message.startswith("Note: "):
        return ""
    return message[len("Note: "):].split("\nQuestion:")[0]


def tokens(text: str) -> list[str]:
    """``text`` cut as a model streams it, roughly: a word or a mark with its leading space."""
    out = _TOKEN.findall(text)
    assert "".join(out) == text
    return out


@dataclass
class Replayed:
    """One turn through this tree's guard and the voice's segmenter."""

    heard: str
    hold_tokens: int | None = None  # None: the runtime answered itself (no model text)
    hold_chars: int | None = None
    released: bool = False  # the first sentence was let through from its start
    notices: tuple[str, ...] = ()  # the guard's


def replay_turn(row: dict[str, Any], spec: Any, cfg: SegmenterConfig) -> Replayed:
    """What this tree's guard makes of the row's model text, as heard (the run's own reply
    for a turn the runtime answered itself)."""
    text = row.get("model_text") or row["written"]
    if not text or row["intent"] in spec.replies:
        return Replayed(str(row["reply"]))
    guard = ReplyGuard.for_turn(spec, [{spec.words_field: row["user"],
                                        spec.intent_field: row["intent"],
                                        spec.facts_field: notes_of(row.get("message", ""))}])
    if guard is None:
        return Replayed(str(row["reply"]))
    if guard.fixed is not None:  # said by the runtime, without the model
        said = SentenceSegmenter(cfg)
        return Replayed(_heard(said.feed(guard.fixed) + said.flush()))
    if hasattr(guard, "first_piece"):
        guard.first_piece = cfg  # the voice's first piece: see ReplyGuard.first_piece
    guard.max_sentences = 2  # the speaker's grammar (its tts max_sentences)
    toks = tokens(text)
    early, voice, fence = EarlyFirstPiece(cfg), SentenceSegmenter(cfg), FenceFilter()
    pieces: list[str] = []
    cut_at = first_at = None
    cut_chars = first_chars = 0
    read = 0
    for i, tok in enumerate(toks, 1):
        read += len(tok)
        if cut_at is None and early.feed(tok) is not None:
            cut_at, cut_chars = i, read
        pieces += voice.feed(fence.feed(guard.feed(tok)))
        if pieces and first_at is None:
            first_at, first_chars = i, read
        if guard.stopped or guard.settled:
            break
    if guard.stopped or text.rstrip().rstrip("\"')]")[-1:] not in TERMINATORS:
        # stopped, or cut off by max_tokens: a released sentence may end at a clause
        # (TurnOutput.drop_unfinished), then the voice forgets the unfinished words
        if hasattr(guard, "end_unfinished"):
            pieces += voice.feed(fence.feed(guard.end_unfinished()))
        pieces += voice.feed(fence.flush())  # as TTSOutput.drop_unfinished does
        rest = voice.pending.strip()
        if rest and rest.rstrip("\"')]")[-1:] not in TERMINATORS:
            voice.reset()
    pieces += voice.feed(fence.feed(guard.finish()) + fence.flush()) + voice.flush()
    end = len(toks)
    first_at = first_at if first_at is not None else end
    first_chars = first_chars if first_chars else len(text)
    cut_at, cut_chars = (cut_at, cut_chars) if cut_at is not None else (end, len(text))
    return Replayed(_heard(pieces),
                    max(0, first_at - cut_at), max(0, first_chars - cut_chars),
                    bool(guard.released), tuple(guard.notices))


def _heard(pieces: list[str]) -> str:
    """What the voice says of ``pieces``, as the bench hears it (``SentenceSynthesized``)."""
    heard = (to_speakable(p).strip() for p in pieces)
    return " ".join(h for h in heard if h)


_KINDS = {"ended_at_clause": "ended at a clause", "spoken_on": "spoken on",
          "spoken_echo": "spoken although it repeats", "end_never_came": "its start was spoken",
          "stopped": "stopped, "}
"""What the guard did to a released sentence, by the start of its notice (counted per turn)."""


def pct(values: list[int], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] if s else 0


def score(rows: list[dict[str, Any]], replies: list[Replayed]) -> dict[str, Any]:
    """The conversation bench's rates of the replies heard, and the hold proxy."""
    said, dialogue, asks, recalled, honest, unknown = "", None, 0, 0, 0, 0
    out = {"turns": len(rows), "echo": 0, "incomplete": 0, "as_user": 0, "loops": 0,
           "released": 0} | dict.fromkeys(_KINDS, 0)
    for r, rep in zip(rows, replies, strict=True):
        said = f"{said} {r['user']}" if r["dialogue"] == dialogue else r["user"]
        dialogue, h = r["dialogue"], rep.heard
        out["echo"] += is_echo(r["user"], h)
        out["incomplete"] += not is_complete(h)
        out["as_user"] += bool(speaks_as_user(h, said))
        out["loops"] += loops(h)
        out["released"] += rep.released
        for kind, says in _KINDS.items():
            out[kind] += any(n.startswith(says) for n in rep.notices)
        if r["honest"] is not None:  # asked what was never told
            unknown += 1
            honest += bool(DONT_KNOW.search(h))
        elif r["recalled"] is not None:
            asks += 1
            recalled += any(e.lower() in h.lower() for e in r["expect"])
    holds = [rep.hold_tokens for rep in replies if rep.hold_tokens is not None]
    chars = [rep.hold_chars for rep in replies if rep.hold_chars is not None]
    out.update(recall=f"{recalled}/{asks}", honest=f"{honest}/{unknown}",
               model_turns=len(holds), held=sum(h > 0 for h in holds),
               hold_tokens=sum(holds), hold_chars=sum(chars),
               hold_p90=pct(holds, 0.9), hold_max=max(holds, default=0))
    return out


def main(path: Path, sets: list[str] | None, verbose: bool, holds: Path | None = None
         ) -> None:
    load_encoder()  # the guard reads notes by meaning too, once recall has loaded it
    team = load_team(ROOT / "examples" / "voice_assistant")
    speaker = team.creatures["speaker"].config
    spec = speaker.reply_guard
    tts = speaker.output.named_outputs["tts"]
    cfg = SegmenterConfig(first_clause_chars=tts.first_clause_chars,
                          first_piece_max_chars=tts.first_piece_max_chars)
    data = json.loads(path.read_text())
    for name in sets or list(data):
        rows = data[name]["rows"]
        replies = [replay_turn(r, spec, cfg) for r in rows]
        if verbose:
            for r, rep in zip(rows, replies, strict=True):
                if rep.heard != r["reply"]:
                    print(f"  {r['user']!r}\n    was {r['reply']!r}\n    now {rep.heard!r}")
        if holds is not None:  # per turn, to compare two trees' holds
            holds.write_text(json.dumps([[r["user"], rep.hold_tokens, rep.heard]
                                         for r, rep in zip(rows, replies, strict=True)]))
        s = score(rows, replies)
        print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in s.items()))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", type=Path, help="a bench/conversation.py --json file")
    p.add_argument("--set", action="append", default=None, help="only this set (repeatable)")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--holds", type=Path, default=None,
                   help="write each turn's hold and reply here (JSON; one set)")
    a = p.parse_args()
    main(a.json, a.set, a.verbose, a.holds)
