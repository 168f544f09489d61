"""One instance of every event class, shared by the tests that need them all."""

from __future__ import annotations

import dataclasses

from terrarium import events as ev

__all__ = ["samples"]


def samples() -> list[ev.Event]:
    """One instance of every event class, each field set away from its default."""
    entry = ev.TranscriptEntry("message_in", "hello", 10.5, turn=3, name="work", detail="more",
                               data={"sender": "boss", "message_id": "m1", "n": [1, 2]})
    sections = (ev.PromptSectionInfo("persona", "prefix", 120, 30),
                ev.PromptSectionInfo("status", "tail", 14, 4))
    metrics = ev.SpeechMetrics(0.1, 0.2, 0.3, 0.4, 1.5, 2, 1, True)
    made: list[ev.Event] = [
        ev.RunStarted(run_id="r1", terrarium="demo", path="/teams/demo", pid=4242),
        ev.CreatureState(creature="a", state="thinking"),
        ev.MessageSent(message_id="m1", channel="work", sender="boss", delivered_to=("a", "b"),
                       payload={"task": "greet"}),
        ev.MessageDelivered(message_id="m1", channel="work", receiver="a"),
        ev.MessageRefused(sender="a", channel="news", reason="a may not send on news",
                          receiver="b"),
        ev.MessageConsumed(message_id="m1", creature="a"),
        ev.TurnStarted(creature="a", turn_index=3),
        ev.TurnEnded(creature="a", turn_index=3, prompt_tokens=100, cached_tokens=80,
                     completion_tokens=12, error="cut"),
        ev.ErrorEvent(creature="a", message="ModelError: boom"),
        ev.Restart(creature="a", attempt=2, delay=1.25),
        ev.OutputText(creature="a", output="speech", text="Hi"),
        ev.TranscriptAppended(creature="a", entry=entry),
        ev.PromptBuilt(creature="a", prefix_hash="0f" * 32, tokens=34, sections=sections),
        ev.SpeechCut(creature="a", output="speech", utterance_id="u1", spoken_text="One.",
                     interrupted_sentence="Two.", cut_text=("Three.", "Four."),
                     also_cut=("u2",)),
        ev.SentenceQueued(creature="a", utterance_id="u1", index=1, text="Two."),
        ev.SentenceSynthesized(creature="a", utterance_id="u1", index=1, text="Two.",
                               synth_ms=42.5, audio_seconds=0.75),
        ev.UtteranceWritten(creature="a", utterance_id="u1", path="/runs/u1.wav",
                            duration=1.5, aborted=True, metrics=metrics),
        ev.Missed(count=7),
        ev.PluginFailed(creature="a", plugin="budget", hook="before_tool",
                        error="RuntimeError: boom"),
        ev.TriggerFired(creature="a", trigger="tick", trigger_type="timer", text="wake up",
                        channel="work"),
        ev.SubagentStarted(creature="a", subagent="scout", run_id="s2", depth=2,
                           task="look around", parent_run="s1"),
        ev.SubagentEnded(creature="a", subagent="scout", run_id="s2", ok=False,
                         result="timed out", rounds=3),
        ev.FoldSummarized(creature="a", turns=8, by="subagent:s", ok=True, text="they met",
                          error="none"),
        ev.JobStarted(creature="a", job_id="job-1", call="scout", args={"task": "x"}),
        ev.JobEnded(creature="a", job_id="job-1", call="scout", status="failed",
                    result="boom"),
        ev.ApprovalRequested(creature="a", tool="shell", request_id="a-1",
                             args={"command": "pytest -q", "timeout": 30}),
        ev.ApprovalDecided(creature="a", tool="shell", request_id="a-1", approved=True,
                           reason="looks safe", by="terminal"),
        ev.ModelLoading(model="SmolLM2", slots=3),
        ev.ModelLoaded(model="SmolLM2", seconds=0.5),
        ev.PrefixProgress(creature="a", done=512, total=1598),
        ev.McpStarting(servers=("a/files", "a/tracker")),
        ev.McpStarted(seconds=1.5),
        ev.ModelRetry(creature="a", url="http://h/v1/chat/completions", attempt=1, delay=0.5,
                      reason="could not connect"),
        ev.CreatureWarming(creature="a", prefix_tokens=1598),
        ev.CreatureWaiting(creature="a", seconds=5.0, message="no worker runs a"),
        ev.PrefixRestored(creature="a", tokens=1598, ms=9.5),
        ev.PrefixCacheProblem(creature="a", problem="unusable saved state, deleted"),
        ev.CreatureWarmed(creature="a", seconds=0.25, prefix="evaluated", tokens=345,
                          saved=True),
        ev.TeamReady(seconds=1.25),
        ev.Reasoning(creature="a", text="The user greets; answer briefly."),
        ev.RunEnded(run_id="r1", status="completed"),
    ]
    # distinct, increasing times: replay orders by time
    return [dataclasses.replace(e, ts=1000.0 + i) for i, e in enumerate(made)]
