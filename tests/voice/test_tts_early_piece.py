"""Early synthesis (issue 29, time to first audio): a reply's first piece is synthesized from
the model's own text while the reply guard still holds it, used when the guard lets the same
piece through and thrown away when it does not. What is spoken never changes. Deterministic:
a scripted speaker turn, a fake voice that says which text it made."""

from __future__ import annotations

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from terrarium.controller.guard import START_WORDS
from terrarium.voice import CallableSynthesizer, NullAudioSink, TTSOutput
from terrarium.voice.early import EarlyFirstPiece
from tests.early_helpers import RATE, SPEAKER, Heard, Voice, WaitingModel, first_piece
from tests.early_helpers import speaker_turn as shared_turn

_WORDS = st.sampled_from(["Mondays", " are", " a", " fresh", " start", ",", " for", " the",
                          " week.", " Cats", " sleep", " intelligent", " It's", " 3.5",
                          " degrees", "!", " and", " *very*", " cold", " Dr.", " Smith"])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_WORDS, min_size=1, max_size=30),
       cuts=st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=5),
       lead=st.sampled_from(["", " ", "\n "]))
def test_the_early_piece_is_the_piece_the_output_cuts_from_the_same_words(
        parts: list[str], cuts: list[int], lead: str) -> None:
    text = "".join(parts).lstrip()
    early, got, i, k = EarlyFirstPiece(SPEAKER, after_words=0), None, 0, 0
    raw = lead + text
    while i < len(raw):
        step = cuts[k % len(cuts)]
        piece = early.feed(raw[i:i + step])
        if piece is not None:
            assert got is None  # once
            got = piece.text
        i, k = i + step, k + 1
    whole = first_piece(text + " And more words follow here.", SPEAKER)
    if got is not None:  # cut before the text ended: the same piece, whatever follows
        assert got == whole


def test_a_previewed_first_piece_is_synthesized_once_and_played() -> None:
    voice, heard = Voice(), Heard()
    tts = TTSOutput(CallableSynthesizer(voice, RATE), heard, segmenter=SPEAKER,
                    synthesize_early=True)
    reply = "Mondays are a fresh start for the week. They bring new chances."

    async def go() -> None:
        async with tts:
            await tts.begin("u1")
            for i in range(0, len(reply), 4):
                await tts.preview(reply[i:i + 4])
            await anyio.to_thread.run_sync(voice.ready.wait, 5)  # the early synthesis
            await tts.write(reply)
            await tts.end()
            await tts.drain()

    anyio.run(go)
    piece = first_piece(reply, SPEAKER)
    assert voice.made[0] == piece and voice.made.count(piece) == 1
    assert heard.clips[0] == piece
    assert tts.early_counts == [1, 1]


def test_without_synthesize_early_a_preview_does_nothing() -> None:
    voice = Voice()
    tts = TTSOutput(CallableSynthesizer(voice, RATE), NullAudioSink(), segmenter=SPEAKER)

    async def go() -> None:
        async with tts:
            await tts.begin("u1")
            await tts.preview("Mondays are a fresh start for the week.")
            await anyio.sleep(0.01)
            assert voice.made == []
            await tts.end()

    anyio.run(go)
    assert tts.early_counts == [0, 0]


# -- in the controller: the speaker's guard holds a short question's first sentence to its end


ASKED = "What is the weather like on Mars?"  # "The weather is cold": held to its end


def speaker_turn(reply: str, wait_before: str, asked: str = ASKED, wanted: str | None = None,
                 ) -> tuple[Voice, Heard, TTSOutput, str, WaitingModel]:
    text, voice, heard, tts, model = shared_turn(reply, asked, intent="request",
                                                 wait_before=wait_before or None, wanted=wanted)
    return voice, heard, tts, text, model


def test_the_held_first_piece_is_synthesized_before_the_guard_lets_it_through() -> None:
    reply = "The weather is cold and dusty on Mars. It has storms too."
    voice, heard, tts, text, model = speaker_turn(reply, "Mars.")
    piece = first_piece(reply, SPEAKER)
    assert model.made_before == [piece]  # made while the guard still held the sentence
    assert voice.made.count(piece) == 1  # and not made again when it was let through
    assert heard.clips[0] == piece
    assert text.startswith("The weather is cold and dusty on Mars.")
    assert tts.early_counts == [1, 1]


def test_a_dropped_first_sentence_s_early_audio_is_never_played() -> None:
    # the first sentence says the user's words back (an echo): the guard drops it
    reply = "What is the weather like on Mars, please. The weather is cold and dusty on Mars."
    early = first_piece(reply, SPEAKER)
    # the model waits for the dropped sentence's early piece: it and the next sentence's
    # are synthesized on threads of their own, in either order (a scripted model streams
    # without a pause, so both may start at once)
    _voice, heard, tts, text, model = speaker_turn(reply, "Mars.", wanted=early)
    assert model.made_before is not None and early in model.made_before
    assert early not in heard.clips
    assert heard.clips[0] == first_piece("The weather is cold and dusty on Mars.", SPEAKER)
    assert not text.startswith("What is")
    # the next sentence, the first spoken, was made early in its turn (used)
    assert tts.early_counts == [2, 1]


def test_a_first_piece_said_before_is_not_synthesized_early_again() -> None:
    voice = Voice()
    tts = TTSOutput(CallableSynthesizer(voice, RATE), NullAudioSink(), segmenter=SPEAKER,
                    synthesize_early=True)
    reply = "Mondays are a fresh start for the week."

    async def go() -> None:
        async with tts:
            for uid in ("u1", "u2"):
                await tts.begin(uid)
                await tts.preview(reply)
                await anyio.to_thread.run_sync(voice.ready.wait, 5)
                await tts.write(reply)
                await tts.end()
                await tts.drain()

    anyio.run(go)
    piece = first_piece(reply, SPEAKER)
    assert voice.made.count(piece) == 1  # the second time its kept audio was used
    assert tts.early_counts == [1, 1]


def test_the_early_piece_waits_for_the_words_the_guard_judges_a_start_by() -> None:
    early = EarlyFirstPiece(SPEAKER, after_words=START_WORDS + 1)  # as the wiring passes
    said = ["Mondays ", "are ", "a ", "fresh ", "start"]
    assert [early.feed(w) for w in said] == [None] * 5  # cut, but four complete words
    piece = early.feed(" for")
    assert piece is not None and piece.text == first_piece("Mondays are a fresh start.",
                                                           SPEAKER)


def test_a_start_the_guard_lets_through_is_not_synthesized_beside_the_model() -> None:
    # six words and a start far from them: the guard lets it through after four words,
    # before the early piece's fifth, so it is queued and synthesized as before
    reply = "Mars is cold and dry, with very thin air. It has big dust storms."
    _voice, heard, tts, text, _model = speaker_turn(
        reply, "", asked="What is the weather like on Mars today?")
    assert text.startswith("Mars is cold and dry")
    assert heard.clips[0] == first_piece(reply, SPEAKER)
    assert tts.early_counts == [0, 0]
