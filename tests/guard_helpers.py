"""The reply guard as the speaker runs it, for tests that stream a reply through it: the
speaker's guard settings, the voice's first-piece cut, and a reply fed in small deltas."""

from __future__ import annotations

from terrarium.config.models import ReplyGuardSpec
from terrarium.controller.guard import ReplyGuard
from terrarium.voice.segment import SegmenterConfig, SentenceSegmenter
from terrarium.voice.speakable import FenceFilter

__all__ = ["SHAPES", "SPEC", "VOICE", "VoiceCut", "guard", "say", "stream"]

SPEC = ReplyGuardSpec(facts_field="memory_context", unknown_reply="I don't know that yet.",
                      release_first_clause=True, echo_reply="Sorry, I am not sure.")
VOICE = SegmenterConfig(first_clause_chars=12, first_piece_max_chars=16)  # the speaker's


def guard(user: str, notes: str = "", first_piece: SegmenterConfig | None = VOICE
          ) -> ReplyGuard:
    """The speaker's guard for a question of the world (``notes``: what it was handed),
    with the voice's first piece (None: all is given to the voice as it comes)."""
    g = ReplyGuard.for_turn(SPEC, [{"user_said": user, "intent": "question",
                                    "memory_context": notes}])
    assert g is not None
    g.first_piece = first_piece
    g.cuts_piece = True  # the voice cuts its first piece where the guard says (TTSOutput)
    return g


class VoiceCut:
    """The voice's cut of what it is given (``TTSOutput``): its fence filter, then its
    segmenter, and its first piece cut when the guard says (``cut_first_piece``)."""

    def __init__(self) -> None:
        self.fence, self.segmenter = FenceFilter(), SentenceSegmenter(VOICE)

    def feed(self, text: str) -> list[str]:
        return self.segmenter.feed(self.fence.feed(text))

    def cut(self) -> list[str]:
        return self.segmenter.cut()


def say(g: ReplyGuard, voice: VoiceCut, delta: str) -> tuple[str, list[str]]:
    """One model delta as ``TurnOutput.say`` gives it: what the guard let through, and the
    pieces the voice cut of it (its first piece cut where the guard says)."""
    out = g.feed(delta)
    pieces = voice.feed(out)
    return out, pieces + voice.cut() if g.take_cut() else pieces


def stream(g: ReplyGuard, reply: str, step: int = 3) -> list[str]:
    """What each delta let through, read until the guard stops (then what it ends with)."""
    outs: list[str] = []
    for i in range(0, len(reply), step):
        outs.append(g.feed(reply[i:i + step]))
        if g.stopped or g.settled:
            break
    return [*outs, g.finish()]


# session 20's released starts whose rest restates the user (tests/voice/
# test_guard_restated_rest.py): the user, the model's reply (an echo as written), and what
# is said now
SHAPES = [
    # the phrase left out opens with the model's own "to", then the user's words
    ("How many minutes should I microwave a jacket potato for?",
     "To determine how many minutes it takes to microwave a jacket potato, you can use a "
     "formula.",
     "To determine how many minutes it takes, you can use a formula."),
    # a particle opens it ("to cool | down a hot car")
    ("What's the quickest way to cool down a hot car in summer?",
     "The quickest way to cool down a hot car in summer is to open every window.",
     "The quickest way to cool in summer is to open every window."),
    # "of" after a noun a determiner opens ("the best time | of year")
    ("When is the best time of year to visit Scotland?",
     "Late spring is the best time of year to visit Scotland.",
     "Late spring is the best time."),
    # an amount opens a main clause ("About six minutes is …")
    ("How long should I boil an egg for a soft yolk?",
     "About six minutes is how long you should boil an egg for a soft yolk.",
     "About six minutes is how long you should boil an egg."),
    ("How much rice should I cook for four hungry adults?",
     "Around 300 grams is how much rice you should cook for four hungry adults.",
     "Around 300 grams is how much rice you should cook."),
    # a phrase fronted without a comma, then a subject and its verb: a main clause, which
    # may end before the copy
    ("How long do you leave a teabag in for a proper cup?",
     "For a strong brew you leave a teabag in for a proper cup about four minutes.",
     "For a strong brew you leave a teabag."),
    # the amount, then the question as what it is: the amount alone
    ("How long does a cooked chicken keep in the fridge?",
     "Usually three to four days is how long a cooked chicken will keep in the fridge.",
     "Usually three to four days."),
    # ... or, once the voice has had the "is", up to "how often"
    ("How often should you water a cactus kept indoors?",
     "Every two weeks is how often you should water a cactus kept indoors.",
     "Every two weeks is how often."),
]
