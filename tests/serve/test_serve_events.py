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


def test_a_message_sent_is_encoded_once_and_streamed_whole() -> None:
    """A served ``message_sent`` is encoded once, without its payload (its log row); the
    streamed text puts the payload back: the very text the whole event encodes to."""
    from terrarium.channels.log import sent_json, with_payload

    for payload in ({}, {"text": "héllo \"kind\": 1", "n": [1, {"kind": 2}]},
                    {"kind": "x", "nested": {"a": None}}):
        ev = MessageSent(message_id="m", channel="c", sender="s", delivered_to=("a",),
                         payload=payload)
        assert with_payload(sent_json(ev, 7), payload) == event_json(ev, 7)
