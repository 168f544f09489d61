"""The session events' JSON is exactly the log's form (``event_to_dict``) plus ``seq``,
for every event type, including nested entries, figures and section tuples."""

from __future__ import annotations

import json

from terrarium.events import (
    MessageSent,
    PromptBuilt,
    PromptSectionInfo,
    SpeechMetrics,
    TranscriptAppended,
    TranscriptEntry,
    UtteranceWritten,
    event_to_dict,
)
from terrarium.serve.events import event_json


def test_event_json_is_event_to_dict_with_seq() -> None:
    events = [
        TranscriptAppended(creature="a", entry=TranscriptEntry(
            "user", "héllo", 1.0, 2, data={"sender": "user", "ids": [1, 2]})),
        UtteranceWritten(creature="s", utterance_id="u", path=None, duration=1.5,
                         aborted=False, metrics=SpeechMetrics(time_to_first_audio=0.2)),
        PromptBuilt(creature="a", prefix_hash="h", tokens=3,
                    sections=(PromptSectionInfo("persona", "prefix", 10, 3),)),
        MessageSent(message_id="m", channel="c", sender="s", delivered_to=("a", "b")),
    ]
    for seq, ev in enumerate(events, 1):
        want = {**event_to_dict(ev), "seq": seq}
        got = json.loads(event_json(ev, seq))
        assert got == json.loads(json.dumps(want, default=str))
        assert list(got) == list(want)  # the same key order as the log's rows
