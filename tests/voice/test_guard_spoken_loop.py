"""Session 16 (issue 30, no loops): the loop rule judges what is spoken as a whole, not only
the model's words (the runtime's own words, said first or said to the user, count too), and
a pronoun run into its verb ("you're") said a fourth time is a loop like a content word."""

from __future__ import annotations

from recall_helpers import guard

from terrarium.controller.guard_loops import LoopWatch, repeats


def _stream(g, reply: str, step: int = 4) -> str:  # type: ignore[no-untyped-def]
    out = "".join(g.feed(reply[i:i + step]) for i in range(0, len(reply), step))
    return out + g.finish()


def test_a_fourth_you_re_is_a_loop_where_a_function_word_is_not() -> None:
    listed = "You're a nurse, you're thirty, you're from Leeds and you're married."
    assert repeats(listed) == listed.rindex("you're")
    watch = LoopWatch()
    assert watch.feed(listed) == listed.rindex("you're")
    # glue words still come as often as a sentence needs them
    assert repeats("The cat and the dog and the bird sat in the sun in the yard.") == -1


def test_a_reply_listing_you_re_stops_before_the_fourth() -> None:
    g = guard("What do you know about me?", "I'm a nurse. I'm thirty. I'm from Leeds.")
    said = _stream(g, "You're a nurse. You're thirty, you're from Leeds and you're married.")
    assert said.strip() == "You're a nurse."
    assert g.stopped and "married" not in said


def test_the_runtime_s_words_said_first_count_towards_a_loop() -> None:
    g = guard("Which snack should I pack for the hike?", "I'm allergic to peanuts.")
    assert "peanuts" in g.advice
    reply = "Skip peanuts and pack raisins, not peanuts, since peanuts make you ill."
    assert repeats(reply) == -1  # the model's words alone are no loop
    said = _stream(g, reply)
    assert said.strip() == g.advice  # the advice, and not a fourth "peanuts"
    assert repeats(said) == -1 and g.stopped
    assert any("would repeat itself" in n for n in g.notices)


def test_a_word_the_bench_counts_said_a_fourth_time_is_a_loop() -> None:
    """Session 17: the words a reply may repeat are those ``bench/conversation.py``'s loop
    count lets through; "no" said a fourth time was spoken and judged a loop (dev9)."""
    listed = "No sugar or flour, no butter, no eggs, no milk, and no milk."
    assert repeats(listed) == listed.index("no milk")
    watch = LoopWatch()
    assert watch.feed(listed) == listed.index("no milk")
    assert repeats("The cat and the dog and the bird sat in the sun in the yard.") == -1
    g = guard("What diet am I on?", "I'm on keto, so no bread or pasta.")
    said = _stream(g, "You're on keto. No sugar or flour, no butter, no eggs, no milk.")
    assert said.strip() == "You're on keto."
    assert g.stopped
