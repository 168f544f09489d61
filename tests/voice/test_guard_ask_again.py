"""Session 21 (issue 30): a first sentence let through from its start whose rest would then
copy the user, with no clause end to stop at and no phrase to leave out, is not spoken as
written: the model is asked again to continue what was spoken (an assistant prefill),
steered away from the user's words not yet said (``logit_bias``), and its new rest goes
through the same guard. A second copy is spoken as before, and says so. Through the real
controller and tts output with the scripted model, which honours the bias (it never writes
a banned token when a step without one continues the prefill)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from terrarium.controller.ask_again import (
    BIAS,
    PRESENCE,
    banned_words,
    bias_against,
    request_again,
)
from terrarium.controller.guard import is_echo
from terrarium.errors import ModelError
from terrarium.llm.scripted import ScriptedModel, pieces, token_id
from terrarium.llm.types import ChatMessage, ChatRequest
from terrarium.voice import (
    AudioClip,
    CallableSynthesizer,
    NullAudioSink,
    SegmenterConfig,
    TTSOutput,
)
from tests.early_helpers import spoken_through
from tests.guard_helpers import SHAPES, guard
from tests.loop_helpers import make_parts

USER = "How often should you water a cactus kept indoors?"
COPY = "Generally speaking you should water a cactus kept indoors a few times a month."
OWN = "Generally speaking you should give it a drink every two weeks in summer."


def spoken_reply(tmp_path: Path, steps: list[Any], ask_again: int, user: str = USER,
                 notes: str = "") -> tuple[str, ScriptedModel]:
    """A speaker turn through the tts output (the speaker's first piece): the text spoken
    and the model (its requests)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    model = ScriptedModel(steps, chunk_size=3, continuation=True)
    tts = TTSOutput(CallableSynthesizer(
        lambda text: AudioClip(pcm=b"\0\0" * 160, sample_rate=16000), 16000), NullAudioSink(),
                    yield_first_audio=False,
                    segmenter=SegmenterConfig(first_clause_chars=12, first_piece_max_chars=16))
    parts = make_parts(tmp_path, output={"default": "tts", "named_outputs": {"tts": {
        "type": "tts", "description": "Spoken."}}},
        reply_guard={"release_first_clause": True, "ask_again": ask_again,
                     "facts_field": "memory_context"})

    return spoken_through(parts, model, tts, user, {"user_said": user, "intent": "question",
                                                    "memory_context": notes}), model


def test_a_rest_that_copies_the_user_is_asked_again_from_what_was_spoken(
        tmp_path: Path) -> None:
    assert is_echo(USER, COPY) and not is_echo(USER, OWN)
    text, model = spoken_reply(tmp_path, [COPY, OWN], ask_again=1)
    assert text == OWN  # the start as spoken, then the new rest: no echo
    assert len(model.requests) == 2
    again = model.requests[1]
    prefill = again.messages[-1]
    assert prefill.role == "assistant" and prefill.content
    assert OWN.startswith(prefill.content) and COPY.startswith(prefill.content)
    assert again.messages[:-1] == model.requests[0].messages  # the same request, continued
    bias = again.logit_bias or {}
    for word in ("cactus", "Cactus", "indoors", "kept"):
        assert bias.get(token_id(f" {word}")) == BIAS  # the copy's words, as written ...
    assert token_id(" you") not in bias and token_id(" a") not in bias  # ... not grammar
    assert again.presence_penalty == PRESENCE  # kept from going round
    assert not model.requests[0].logit_bias and model.requests[0].presence_penalty is None


def test_a_second_copy_is_spoken_as_before_and_says_so(tmp_path: Path) -> None:
    """No step continues the prefill without a banned word: the scripted model writes the
    copy again (as a model the bias could not steer), and it is spoken as written."""
    text, model = spoken_reply(tmp_path, [{"reply": COPY, "repeat": True}], ask_again=1)
    assert text == COPY and len(model.requests) == 2


def test_the_notices_say_it_was_asked_again_and_that_a_second_copy_was_spoken() -> None:
    g = guard(USER)
    g.ask_again = 1
    said = ""
    for i in range(0, len(COPY), 3):
        said += g.feed(COPY[i:i + 3])
        if g.asking:
            break
    assert g.asking and said and COPY.startswith(said) and not is_echo(USER, said)
    assert g.notices == [f"asked again, it repeats the user with no clause end or phrase to "
                         f"leave out: {COPY!r}"]  # at its end: no phrase could be left out
    assert g.feed(" more") == ""  # nothing more of that stream is read
    assert g.ask_from() == said and not g.asking
    rest = COPY[len(said):]
    for i in range(0, len(rest), 3):
        said += g.feed(rest[i:i + 3])
    said += g.finish()
    assert said == COPY  # asked once already: spoken on, as before
    assert any("(asked again 1 times)" in n for n in g.notices)
    assert any(n.startswith("spoken although it repeats") for n in g.notices)


@pytest.mark.parametrize("reply", [
    "Once every two weeks is plenty for most desert plants.",  # copies nothing
    "Generally speaking, once every two weeks. Let the soil dry out first.",
])
def test_a_reply_that_does_not_copy_is_never_asked_again(tmp_path: Path, reply: str) -> None:
    on, model_on = spoken_reply(tmp_path / "on", [reply], ask_again=1)
    off, model_off = spoken_reply(tmp_path / "off", [reply], ask_again=0)
    assert on == off == reply
    assert len(model_on.requests) == len(model_off.requests) == 1
    assert not model_on.requests[0].logit_bias


def test_a_model_that_cannot_tokenize_now_is_asked_again_without_a_bias(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def fails(self: ScriptedModel, texts: list[str]) -> list[list[tuple[int, str]]]:
        raise ModelError("the tokenizer is gone")

    monkeypatch.setattr(ScriptedModel, "token_pieces", fails)
    text, model = spoken_reply(tmp_path, [COPY, OWN], ask_again=1)
    assert text == COPY  # unsteered, the scripted model writes its copy again
    assert len(model.requests) == 2 and model.requests[1].logit_bias is None


def test_off_the_copy_is_spoken_on_with_one_request(tmp_path: Path) -> None:
    text, model = spoken_reply(tmp_path, [COPY, OWN], ask_again=0)
    assert text == COPY and len(model.requests) == 1


def test_banned_words_are_the_users_content_words_not_yet_said_nor_recalled() -> None:
    assert banned_words(USER, "Generally speaking you") == [
        "often", "water", "cactus", "kept", "indoors"]
    assert banned_words(USER, "Generally speaking you should water") == [
        "often", "cactus", "kept", "indoors"]
    # the answer may need what was recalled for the turn
    assert banned_words(USER, "Generally", "I keep a cactus indoors.") == [
        "often", "water", "kept"]


def test_the_bias_bans_one_token_words_and_long_first_pieces_only() -> None:
    vocab = {" cactus": [(1, " cactus")], "cactus": [(2, "cact"), (3, "us")],
             " Cactus": [(4, " C"), (5, "actus")], "Cactus": [(6, "C"), (7, "actus")]}

    class Model:
        async def token_pieces(self, texts: list[str]) -> list[list[tuple[int, str]]]:
            return [vocab[t] for t in texts]

    bias = anyio.run(bias_against, Model(), ["cactus"])
    assert bias == {1: BIAS, 2: BIAS}  # " C" and "C" would ban every word they start
    assert anyio.run(bias_against, object(), ["cactus"]) == {}  # no tokens known: no bias
    scripted = anyio.run(bias_against, ScriptedModel([]), ["cactus"])
    assert set(scripted) == {t for w in (" cactus", "cactus", " Cactus", "Cactus")
                             for t, _ in pieces(w)}


def test_the_request_again_replaces_a_prefill_and_carries_the_bias() -> None:
    base = ChatRequest(messages=[ChatMessage(role="user", content=USER),
                                 ChatMessage(role="assistant", content="Gen")])
    again = request_again(base, "Generally speaking you", {7: BIAS})
    assert [m.role for m in again.messages] == ["user", "assistant"]
    assert again.messages[-1].content == "Generally speaking you"
    assert again.logit_bias == {7: BIAS} and again.presence_penalty == PRESENCE
    assert base.presence_penalty is None


def test_the_client_sends_the_bias_as_openai_does() -> None:
    from terrarium.llm.openai_client import OpenAIClient

    body = OpenAIClient(base_url="http://x/v1", llama_cpp=True).build_body(
        ChatRequest(messages=[ChatMessage(role="user", content="hi")], logit_bias={42: BIAS},
                    presence_penalty=PRESENCE))
    assert body["logit_bias"] == {"42": BIAS} and body["presence_penalty"] == PRESENCE
    plain = OpenAIClient(base_url="http://x/v1").build_body(
        ChatRequest(messages=[ChatMessage(role="user", content="hi")]))
    assert "logit_bias" not in plain and "presence_penalty" not in plain


@pytest.mark.embedded
def test_the_embedded_server_continues_a_prefill_away_from_a_banned_word() -> None:
    """llama.cpp (xllamacpp) continues an assistant prefill and honours ``logit_bias``:
    SmolLM2 continues "You should water it" with " once a week" unless " once" is banned."""
    from terrarium.llm.embedded import EmbeddedServer

    async def go(client: Any, bias: dict[int, float] | None) -> str:
        req = ChatRequest(messages=[
            ChatMessage(role="user", content="How often should I water a cactus kept indoors?"),
            ChatMessage(role="assistant", content="You should water it")],
            max_tokens=8, temperature=0.0, logit_bias=bias)
        return "".join([d.text async for d in client.stream(req)])

    with EmbeddedServer() as srv:
        client = srv.client(continuation=True)  # as the factory makes it
        assert client.tokenizes and client.supports_continuation
        once = anyio.run(client.token_pieces, [" once"])[0]
        assert len(once) == 1
        plain = anyio.run(go, client, None)
        steered = anyio.run(go, client, {once[0][0]: BIAS})
    assert plain.startswith(" once")
    assert "once" not in steered and steered.strip()


@pytest.mark.parametrize(("user", "reply", "said"), SHAPES)
def test_a_copy_with_a_phrase_to_leave_out_is_said_without_it_not_asked_again(
        user: str, reply: str, said: str) -> None:
    """Session 20's shapes: the model's own answer without the user's phrase comes first."""
    g = guard(user)
    g.ask_again = 1
    out = [g.feed(reply[i:i + 3]) for i in range(0, len(reply), 3)]
    assert "".join([*out, g.finish()]).strip() == said and not g.asking
    assert not any(n.startswith("asked again") for n in g.notices)
