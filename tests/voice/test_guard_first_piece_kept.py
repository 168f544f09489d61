"""The voice gets its first piece and no word past it (controller/piece_watch.py): the words
that came with the piece's cut are kept back with the sentence's rest, so a rest that would
repeat the user can still be said short or as "do that" from the piece's end; and a yes or
no said after a lead-in ("The answer is no, ...") ends short like one said first.
Deterministic: the guard alone, the voice's own segmenter, and the speaker's turn through
the real TTS output with a fake voice."""

from __future__ import annotations

import pytest

from terrarium.controller.clause_end import stands_alone, without_phrase
from terrarium.controller.echo import is_echo
from terrarium.controller.piece_watch import PieceWatch
from terrarium.controller.reply_words import words
from terrarium.controller.yes_no_end import yes_no_end
from terrarium.voice.segment import SentenceSegmenter
from tests.early_helpers import first_piece, speaker_turn
from tests.guard_helpers import VOICE, VoiceCut, guard, say, stream

STOP = "Should I stop for a break before the long drive home?"
STOP_REPLY = "No, no need to stop for a break before the long drive home."


@pytest.mark.parametrize("step", [1, 3, 7])
@pytest.mark.parametrize(("user", "reply"), [
    (STOP, STOP_REPLY),
    ("Should leather boots worn in the rain be dried near a radiator?",
     "No, leather boots worn in the rain should not be dried near a radiator."),
    ("How long should I boil an egg for a soft yolk?",
     "Yes, you should definitely boil an egg for a soft yolk for about six minutes."),
    ("Do koalas really sleep most of the day?",
     "The answer is yes, koalas really do sleep most of the day."),
])
def test_the_voice_cuts_the_same_first_piece_at_the_same_delta(user: str, reply: str,
                                                                step: int) -> None:
    """Time to first audio: the voice told where to cut has the piece it cut before, at the
    same delta, and nothing past it until the guard gives the sentence's rest."""
    old, new = guard(user), guard(user)
    old.cuts_piece = False
    voices = (SentenceSegmenter(VOICE), VoiceCut())
    first: list[tuple[int, str] | None] = [None, None]
    for k, i in enumerate(range(0, len(reply), step)):
        pieces = voices[0].feed(old.feed(reply[i:i + step]))
        _, cut = say(new, voices[1], reply[i:i + step])
        for j, got in enumerate((pieces, cut)):
            if got and first[j] is None:
                first[j] = (k, got[0])
                if j == 1:
                    assert voices[1].segmenter.pending == ""  # nothing past the piece
        if new.stopped or new.settled or None not in first:
            break
    assert first[0] is not None and first[0] == first[1]


@pytest.mark.parametrize(("user", "reply", "said", "step"), [
    (STOP, STOP_REPLY, "No, no need to do that.", 3),
    (STOP, STOP_REPLY, "No, no need to do that.", 7),
    ("Is it okay to reheat cooked rice in the microwave?",
     "Yes, it is okay to reheat cooked rice in the microwave.", "Yes, it is okay to do that.",
     1),
    ("Is it okay to reheat cooked rice in the microwave?",
     "Yes, it is okay to reheat cooked rice in the microwave.", "Yes, it is okay to do that.",
     3),
])
def test_a_verb_that_came_with_the_piece_is_said_as_do_that(user: str, reply: str, said: str,
                                                            step: int) -> None:
    g = guard(user)
    out = "".join(stream(g, reply, step)).strip()
    assert out == said and not is_echo(user, out)
    assert any("'do that'" in n for n in g.notices)


def test_a_voice_that_cannot_be_told_where_to_cut_keeps_the_words_it_was_given() -> None:
    g = guard(STOP)
    g.cuts_piece = False  # the words past the piece are the voice's: the echo is spoken on
    assert "".join(stream(g, STOP_REPLY, 3)).strip() == STOP_REPLY


def test_what_is_kept_back_is_plain_words_only() -> None:
    """A word being written, or the words past the cut piece; never a fence's mark or a
    line's start, which the voice's fence filter may hold (then all is given as before)."""
    watch = PieceWatch(SentenceSegmenter(VOICE), takes_back=True)
    assert watch.give("No, no need t", more=True) == 1 and not watch.out  # "t" is kept
    assert watch.give("to sto", more=True) == 3 and watch.out and watch.take_cut()
    assert not watch.take_cut()  # once
    watch = PieceWatch(SentenceSegmenter(VOICE), takes_back=True)
    assert watch.give("No, no need to `sto", more=True) == 0 and watch.out
    assert not watch.take_cut()
    watch = PieceWatch(SentenceSegmenter(VOICE), takes_back=False)  # a voice told nothing
    assert watch.give("No, no need to sto", more=True) == 0 and watch.out


def test_the_speaker_says_do_that_through_the_real_output_and_its_first_piece() -> None:
    said, _voice, heard, _tts, _model = speaker_turn(STOP_REPLY, STOP, intent="question",
                                                     early=False)
    assert said.strip() == "No, no need to do that."
    assert heard.clips[0] == first_piece(STOP_REPLY) == "No, no need to"
    assert " ".join(heard.clips) == "No, no need to do that."


@pytest.mark.parametrize(("user", "reply", "spoken", "said"), [
    ("Do koalas really sleep most of the day?",
     "The answer is yes, koalas really do sleep most of the day.", "The answer is yes,",
     "The answer is yes, koalas really do."),
    ("Can dogs eat grapes safely?", "Actually, no, dogs cannot eat grapes safely.",
     "Actually, no,", "Actually, no, dogs cannot."),
    ("Is it safe to swim straight after eating?",
     "The short answer is yes, it is safe to swim straight after eating.",
     "The short answer is", "The short answer is yes, it is."),
])
def test_a_yes_or_no_after_a_lead_in_ends_after_its_verb(user: str, reply: str, spoken: str,
                                                          said: str) -> None:
    assert is_echo(user, reply) and not is_echo(user, said)
    rest = yes_no_end(reply, len(spoken), lambda s: not is_echo(user, s))
    assert rest is not None and spoken + rest == said


def test_no_with_no_comma_after_it_is_no_answer() -> None:
    """"There is no way ..." says no determiner's "no" is an answer."""
    user = "Is there a way to fix a scratched disc at home?"
    reply = "There is no way to fix a scratched disc at home."
    assert yes_no_end(reply, 5, lambda s: not is_echo(user, s)) is None


def test_a_sentence_may_end_on_its_answer() -> None:
    assert stands_alone("The answer is no")
    assert stands_alone("The short answer is yes")
    assert not stands_alone("The answer is the")


def test_a_to_right_after_a_heard_word_is_not_left_out() -> None:
    """"Yes, it is okay | to leave bread dough to rise" heard up to "okay": leaving out "to
    leave bread dough" would say it is okay to rise; after a break, a phrase may go."""
    user = "Is it okay to leave bread dough to rise overnight in a warm kitchen?"
    reply = "Yes, it is okay to leave bread dough to rise overnight in a warm kitchen."
    fine = lambda s: not is_echo(user, s)  # noqa: E731
    rest = without_phrase(reply, len("Yes, it is okay "), words(user), fine)
    assert rest is None or not rest.startswith(" to rise")
    assert rest is None or "  " not in rest
