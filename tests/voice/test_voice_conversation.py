"""Issue 17: what the voice assistant keeps, recalls and says, on fakes (no model).

User facts are read without a model and recalled for the question they answer; a router's
fixed-choice value is decided by its ``choice_rules`` or scored by the model's likelihood
(against a fake llama.cpp server); a spoken reply's grammar allows at most N whole sentences,
also when the reply is continued after the first-audio pause.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.incoming import Incoming
from terrarium.controller.loop import Controller
from terrarium.controller.recall import recall, record
from terrarium.formats.bracket import BracketFormat
from terrarium.formats.grammar import grammar_for, sentences_left, spoken_text_rule
from terrarium.llm.choice import ChoiceScorer
from terrarium.llm.types import ChatMessage, ChatRequest
from terrarium.store import MemoryStore, extract_facts

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("text", "facts"), [
    ("Hi, my name is Ada.", ["Ada is my name."]),
    ("My name is Tom and I am 42 years old.", ["Tom is my name.", "I am 42 years old."]),
    ("Hello, I am Sam and I live in Berlin.", ["Sam is my name.", "I live in Berlin."]),
    ("Hi, I'm Maria.", ["Maria is my name."]),
    ("I love green tea.", ["I love green tea."]),
    ("My favourite colour is blue.", ["My favourite colour is blue."]),
    ("I have two cats.", ["I have two cats."]),
    ("I work as a nurse.", ["I work as a nurse."]),
    ("I'm fine, thanks.", []),
    ("I am not sure.", []),
    ("What is my name?", []),
])
def test_user_facts_are_read_without_a_model(text: str, facts: list[str]) -> None:
    assert [f.sentence for f in extract_facts(text)] == facts


def test_the_fact_a_question_asks_for_is_recalled() -> None:
    memory = MemoryStore()

    def said(text: str) -> list[Incoming]:
        return [Incoming(text=text, channel="user_input", sender="user", payload={"text": text})]

    async def go() -> list[tuple[str, ...]]:
        for text in ("Hi, my name is Ada.", "I live in Lisbon.", "I am 30 years old."):
            await record(memory, said(text), creature="router", facts=True)
        out = []
        for question in ("What is my name?", "Where do I live?", "How old am I?"):
            got = await recall(memory, said(question), creature="router", recent=0,
                               matches=0, facts=1)
            out.append(got.facts)
        return out

    assert anyio.run(go) == [("Ada is my name.",), ("I live in Lisbon.",),
                             ("I am 30 years old.",)]


def test_spoken_grammar_counts_whole_sentences() -> None:
    grammar = grammar_for(BracketFormat({}), plain_text=True, max_sentences=2)
    assert 'text ::= ( sent ( " " sent ){0,1} )?' in grammar
    assert "sent ::= schar+ sentend" in grammar
    # continued after a pause: finish the sentence under way, then at most one more
    assert spoken_text_rule(2, "Hello, Ada") == 'schar* sentend ( " " sent ){0,1}'
    assert spoken_text_rule(2, "Hello!") == '( " " sent )?'
    assert sentences_left(2, "Hi. Yes.") == 0


class NoModel:
    """A model that can continue a reply but must never be asked."""

    name = "none"
    last_usage = None
    supports_continuation = True

    def describe(self) -> str:
        return "none"

    async def stream(self, request: ChatRequest) -> Any:
        raise AssertionError("the model was asked although a rule decided")
        yield


def routed(texts: list[str]) -> list[dict[str, Any]]:
    """What the voice assistant's router sends for each of ``texts``, one turn each, with
    a model that fails the test if it is asked (the rules must decide)."""
    parts = assemble(load_team(ROOT / "examples" / "voice_assistant"), "router")
    sent: list[dict[str, Any]] = []

    async def send(channel: str, payload: dict[str, Any]) -> int:
        sent.append(payload)
        return 1

    async def go() -> None:
        ctl = Controller(parts, NoModel(), send=send)  # type: ignore[arg-type]
        for text in texts:
            await ctl.run_turn([Incoming(text=text, channel="user_input", sender="user",
                                         payload={"text": text})])

    anyio.run(go)
    return sent


def test_choice_rules_decide_the_intent_without_the_model() -> None:
    sent = routed(["Thanks a lot.", "Bye for now.", "Good morning!", "Where is Paris?",
                   "Turn on the lights please.", "I had pasta for lunch."])
    assert [p["intent"] for p in sent] == ["thanks", "goodbye", "greeting", "question",
                                           "request", "statement"]
    assert sent[0]["user_said"] == "Thanks a lot."


def test_a_spoken_question_without_its_mark_is_decided_a_question() -> None:
    """Speech recognition often writes no "?" ("who's my stepfather"): the router's rules
    read the text as recall does (``spoken.punctuated``), so the ask is a question, not left
    to the model (which took both of these for statements: "Got it, I will remember that.",
    dev9, session 17), and a statement without a mark is still a statement."""
    sent = routed(["who's my stepfather", "how long does it last", "did my parcel come",
                   "I can't remember where my sister lives.", "my parcel came today"])
    assert [p["intent"] for p in sent] == ["question", "question", "question", "question",
                                           "statement"]
    assert sent[0]["user_said"] == "who's my stepfather"


def test_an_ask_after_thanks_or_a_greeting_is_the_turns_intent() -> None:
    """"Thanks! And where did I say my sister lives?" was decided "thanks" ("You're
    welcome!", the ask never reached the speaker): a greeting, thanks or goodbye is the
    intent only of an utterance that asks nothing else (session 17); a closing "how are
    you?" is small talk."""
    said = {"Thanks! And where did I say my sister lives?": "question",
            "Hi again, what's my dog called?": "question",
            "Lovely, thank you. When's the plumber coming?": "question",
            "Okay bye. Wait, what is my flight number?": "question",
            "Cheers. Remind me when the vet is.": "request",
            "Hello, how are you?": "greeting", "Hi there, how's it going?": "greeting",
            "Thanks a lot, you've been great.": "thanks", "Bye, see you tomorrow.": "goodbye"}
    sent = routed(list(said))
    assert [p["intent"] for p in sent] == list(said.values())


def fake_llama(tokens: dict[str, list[tuple[int, str]]],
               logprobs: dict[tuple[str, str], dict[int, float]]) -> httpx.MockTransport:
    """/tokenize and /v1/chat/completions: next-token log-probabilities keyed by the user's
    words and the reply written so far."""

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path == "/tokenize":
            toks = tokens[body["content"]]
            return httpx.Response(200, json={"tokens": [{"id": i, "piece": p} for i, p in toks]})
        assert body["logprobs"] is True and body["max_tokens"] == 1 and not body["stream"]
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        reply = body["messages"][-1]["content"]
        top = logprobs[(user, reply)]
        return httpx.Response(200, json={"choices": [{"logprobs": {"content": [{
            "top_logprobs": [{"id": i, "logprob": lp} for i, lp in top.items()]}]}}],
            "usage": {"prompt_tokens": 30}})

    return httpx.MockTransport(handle)


def test_choices_are_scored_by_calibrated_likelihood() -> None:
    tokens = {"question": [(1, "question")], "goodbye": [(2, "good"), (3, "bye")],
              "goodnight": [(2, "good"), (4, "night")]}
    logprobs = {
        # the model prefers "question" whatever is said (the content-free prior) ...
        ("", "v="): {1: -0.5, 2: -2.0},
        ("", "v=good"): {3: -1.0, 4: -0.5},
        # ... so for "Bye!" it is only slightly more likely than "goodbye"
        ("Bye!", "v="): {1: -0.6, 2: -1.0},
        ("Bye!", "v=good"): {3: -0.2, 4: -3.0},
    }
    scorer = ChoiceScorer("http://fake", transport=fake_llama(tokens, logprobs))
    request = ChatRequest(messages=[ChatMessage(role="user", content="Bye!"),
                                    ChatMessage(role="assistant", content="v=")])
    body = {"messages": [m.to_wire() for m in request.messages], "stream": True}
    scored = anyio.run(scorer.choose, body, request, ["question", "goodbye", "goodnight"])
    # values sharing their first token ("good") are told apart one token further on
    assert scored.raw == pytest.approx({"question": -0.6, "goodbye": -1.2, "goodnight": -4.0})
    assert scored.best == "goodbye"  # calibrated: -1.2 - (-3.0) beats -0.6 - (-0.5)


def test_choices_asked_in_plain_words_score_each_value_by_its_best_phrase() -> None:
    # after "The user is": " asking a question" (1 2 3), " saying goodbye" (4 5), " leaving" (6)
    tokens = {" asking a question": [(1, " asking"), (2, " a"), (3, " question")],
              " saying goodbye": [(4, " saying"), (5, " goodbye")], " leaving": [(6, " leaving")]}
    logprobs = {
        # content-free inputs ("" and "N/A"): " asking" is likely whatever is said
        ("", "The user is"): {1: -0.5, 4: -2.0, 6: -3.0},
        ("N/A", "The user is"): {1: -0.7, 4: -2.0, 6: -3.0},
        ("See you.", "The user is"): {1: -0.4, 4: -2.5, 6: -1.0},
    }
    seen: list[dict[str, Any]] = []
    fake = fake_llama(tokens, logprobs)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return fake.handle_request(request)

    scorer = ChoiceScorer("http://fake", transport=httpx.MockTransport(handle))
    request = ChatRequest(messages=[ChatMessage(role="user", content="See you."),
                                    ChatMessage(role="assistant", content="@@intent=")])
    body = {"messages": [m.to_wire() for m in request.messages], "stream": True,
            "choice_ask": {"prefix": "The user is",
                           "phrases": {"question": [" asking a question"],
                                       "goodbye": [" saying goodbye", " leaving"]}}}
    scored = anyio.run(scorer.choose, body, request, ["question", "goodbye"])
    assert all("choice_ask" not in b for b in seen)  # the ask is the scorer's, not the server's
    # a phrase is told from the others by its first token; the best phrase counts:
    # " leaving" (-1.0) beats " saying goodbye" (-2.5)
    assert scored.raw == pytest.approx({"question": -0.4, "goodbye": -1.0})
    # calibrated by the mean of the content-free inputs: -0.4 - (-0.6) vs -1.0 - (-3.0)
    assert scored.scores == pytest.approx({"question": 0.2, "goodbye": 2.0})
    assert scored.best == "goodbye"


def test_the_embedded_model_gets_the_creatures_extra_body() -> None:
    # the router's choice_ask reaches the scorer through the request body
    from terrarium.llm.factory import make_model
    from terrarium.llm.settings import ModelSettings

    class Embedded:
        def client(self, slot: int | None = None, **kwargs: Any) -> Any:
            return kwargs

    settings = ModelSettings(provider="embedded", extra_body={"choice_ask": {"prefix": "x"}})
    made: Any = make_model(settings, embedded=Embedded(), slot=0)  # type: ignore[arg-type]
    assert made["extra_body"] == {"choice_ask": {"prefix": "x"}}
