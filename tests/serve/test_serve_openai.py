"""The OpenAI-compatible endpoint, driven by the official ``openai`` SDK against a real
``terrarium serve`` process (scripted models): streaming and not, and a follow-up question
answered from what the same session remembers; another session does not know it."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from tests.serve_helpers import CHAT, ServerProcess


@pytest.fixture
def server(tmp_path: Path):  # type: ignore[no-untyped-def]
    srv = ServerProcess(CHAT, tmp_path / "runs")
    srv.wait_ready()
    yield srv
    err = srv.stop()
    assert "Traceback" not in err, err


@pytest.fixture
def client(server: ServerProcess):  # type: ignore[no-untyped-def]
    """The SDK's client, closed when the test ends: left to the collector, its pooled
    connection's socket was reported unclosed at the end of the folder (a ``pytest.raises``
    keeps the test's frame, and so the client, in a reference cycle)."""
    with openai.OpenAI(base_url=server.base + "/v1", api_key="unused", max_retries=0) as c:
        yield c


def test_the_openai_sdk_continues_a_session(client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == ["chat"]
    first = client.chat.completions.create(
        model="chat", user="ada", messages=[{"role": "user", "content": "My name is Ada."}])
    assert first.choices[0].message.content == "Nice to meet you."
    assert first.choices[0].finish_reason == "stop"
    # the follow-up, streamed; the client sends the whole conversation, the team reads
    # only the newest message and answers from the session's memory
    stream = client.chat.completions.create(
        model="chat", user="ada", stream=True,
        messages=[{"role": "user", "content": "My name is Ada."},
                  {"role": "assistant", "content": "Nice to meet you."},
                  {"role": "user", "content": "What is my name?"}])
    chunks = [c.choices[0].delta.content or "" for c in stream]
    assert "".join(chunks) == "Your name is Ada."
    assert len([c for c in chunks if c]) > 1  # it streamed, delta by delta
    # the same question in another session: it does not know
    other = client.chat.completions.create(
        model="chat", messages=[{"role": "user", "content": "What is my name?"}],
        extra_headers={"X-Terrarium-Session": "bob"})
    assert other.choices[0].message.content == "I do not know your name yet."
    # a session named by the header is the same as one named by `user`
    again = client.chat.completions.create(
        model="chat", messages=[{"role": "user", "content": "What is my name?"}],
        extra_headers={"X-Terrarium-Session": "ada"})
    assert again.choices[0].message.content == "Your name is Ada."


def test_unknown_model_and_bad_requests_are_problems(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as nf:
        client.chat.completions.create(model="gpt-4", messages=[
            {"role": "user", "content": "hi"}])
    assert "there is no model 'gpt-4'" in str(nf.value)
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(model="chat", messages=[
            {"role": "system", "content": "no user message here"}])
