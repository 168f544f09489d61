"""Sentence segmentation: every case must give the same sentences whole, char by char and in
random chunks, because the model streams tokens of arbitrary size."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from terrarium.voice.segment import SegmenterConfig, SentenceSegmenter, split_sentences

CASES: list[tuple[str, str, list[str]]] = [
    # plain endings
    (
        "two sentences",
        "Hello there friend. How are you today?",
        ["Hello there friend.", "How are you today?"],
    ),
    ("exclamation", "That is wonderful! I am so glad.", ["That is wonderful!", "I am so glad."]),
    (
        "question then answer",
        "Is it raining? Yes, it is raining hard.",
        ["Is it raining?", "Yes, it is raining hard."],
    ),
    (
        "interrobang run",
        "You did what?! That is amazing news.",
        ["You did what?!", "That is amazing news."],
    ),
    ("no terminator", "this text never ends properly", ["this text never ends properly"]),
    ("trailing spaces", "The end is near.   ", ["The end is near."]),
    (
        "leading spaces",
        "   Starting with spaces. And then more.",
        ["Starting with spaces.", "And then more."],
    ),
    ("empty", "", []),
    ("only spaces", "   \n  ", []),
    # abbreviations
    (
        "Dr. title",
        "Dr. Smith will see you now. Please wait.",
        ["Dr. Smith will see you now.", "Please wait."],
    ),
    (
        "Mr. and Mrs.",
        "Mr. and Mrs. Jones arrived late. They apologized.",
        ["Mr. and Mrs. Jones arrived late.", "They apologized."],
    ),
    (
        "e.g. mid sentence",
        "Use fruit, e.g. apples or pears, in the pie. It tastes great.",
        ["Use fruit, e.g. apples or pears, in the pie.", "It tastes great."],
    ),
    (
        "i.e. mid sentence",
        "Pick the blue one, i.e. the cheaper one. Thanks a lot.",
        ["Pick the blue one, i.e. the cheaper one.", "Thanks a lot."],
    ),
    (
        "e.g. before capital",
        "Visit a capital, e.g. Paris or Rome, this year.",
        ["Visit a capital, e.g. Paris or Rome, this year."],
    ),
    (
        "etc. mid sentence",
        "Bring pens, paper, etc. and a snack please.",
        ["Bring pens, paper, etc. and a snack please."],
    ),
    (
        "etc. at sentence end",
        "Bring pens, paper, etc. Then we can start the class.",
        ["Bring pens, paper, etc.", "Then we can start the class."],
    ),
    (
        "U.S. mid sentence",
        "The U.S. economy grew last year. Analysts were surprised.",
        ["The U.S. economy grew last year.", "Analysts were surprised."],
    ),
    (
        "U.S. at sentence end",
        "She moved to the U.S. It was a big change for her.",
        ["She moved to the U.S.", "It was a big change for her."],
    ),
    (
        "vs.",
        "It was Ali vs. Frazier that night. The crowd roared.",
        ["It was Ali vs. Frazier that night.", "The crowd roared."],
    ),
    (
        "middle initial",
        "John F. Kennedy gave a speech. People listened closely.",
        ["John F. Kennedy gave a speech.", "People listened closely."],
    ),
    (
        "St. and Prof.",
        "Prof. Lee lives on St. James Street. She walks to work.",
        ["Prof. Lee lives on St. James Street.", "She walks to work."],
    ),
    (
        "a.m.",
        "The meeting is at 9 a.m. tomorrow morning. Be on time.",
        ["The meeting is at 9 a.m. tomorrow morning.", "Be on time."],
    ),
    # numbers
    (
        "decimal",
        "Pi is about 3.14159 in value. Remember that.",
        ["Pi is about 3.14159 in value.", "Remember that."],
    ),
    (
        "price",
        "It costs $4.99 at the store. That is cheap.",
        ["It costs $4.99 at the store.", "That is cheap."],
    ),
    (
        "version and domain",
        "Install version 2.0.1 from example.com today. It works.",
        ["Install version 2.0.1 from example.com today.", "It works."],
    ),
    (
        "number ends sentence",
        "The answer is 42. Nobody knows why it is.",
        ["The answer is 42.", "Nobody knows why it is."],
    ),
    (
        "numbered list",
        "1. Buy some milk\n2. Walk the dog\n\nThat is the plan for today.",
        ["1. Buy some milk\n2. Walk the dog", "That is the plan for today."],
    ),
    # ellipses
    (
        "ellipsis pause",
        "Well... let me think about that. Okay, I know.",
        ["Well... let me think about that.", "Okay, I know."],
    ),
    (
        "ellipsis end",
        "I was going to say something... But I forgot it.",
        ["I was going to say something...", "But I forgot it."],
    ),
    (
        "unicode ellipsis",
        "And then it happened… Nobody saw it coming.",
        ["And then it happened…", "Nobody saw it coming."],
    ),
    (
        "unicode ellipsis pause",
        "Hmm… maybe tomorrow would be better for us.",
        ["Hmm… maybe tomorrow would be better for us."],
    ),
    # quotes and brackets
    (
        "closing quote",
        'He said "hi there." Then he left the room.',
        ['He said "hi there."', "Then he left the room."],
    ),
    (
        "curly quote",
        "She whispered “good night.” The lights went out.",
        ["She whispered “good night.”", "The lights went out."],
    ),
    (
        "closing paren",
        "We left early (it was late.) Nobody minded at all.",
        ["We left early (it was late.)", "Nobody minded at all."],
    ),
    (
        "quote question",
        'She asked "are you coming?" I said no to her.',
        ['She asked "are you coming?"', "I said no to her."],
    ),
    (
        "bold closer",
        "**This is important.** Please read it twice.",
        ["**This is important.**", "Please read it twice."],
    ),
    (
        "opening quote starts next",
        'It was late. "Go home," she said softly.',
        ["It was late.", '"Go home," she said softly.'],
    ),
    # CJK
    ("cjk", "你好吗？我很好。谢谢你。", ["你好吗？", "我很好。", "谢谢你。"]),
    ("japanese", "今日は晴れです。明日は雨でしょう！", ["今日は晴れです。", "明日は雨でしょう！"]),
    ("cjk closing bracket", "他说「好的。」然后走了。", ["他说「好的。」", "然后走了。"]),
    ("mixed cjk english", "This is English. 这是中文。", ["This is English.", "这是中文。"]),
    # minimum length merges short fragments
    ("short merges", "Hi! How are you doing today?", ["Hi! How are you doing today?"]),
    (
        "several short",
        "Yes. No. Maybe so. I really cannot decide now.",
        ["Yes. No. Maybe so.", "I really cannot decide now."],
    ),
    ("short tail stays", "This is a full sentence. Ok.", ["This is a full sentence.", "Ok."]),
    # paragraphs
    (
        "paragraph break",
        "First paragraph without a stop\n\nSecond paragraph here.",
        ["First paragraph without a stop", "Second paragraph here."],
    ),
    (
        "single newline is space",
        "A line that wraps\nonto the next line. Done now, yes.",
        ["A line that wraps\nonto the next line.", "Done now, yes."],
    ),
    # lowercase after a period is not a sentence end
    (
        "lowercase continues",
        "See fig. three for details. It is clear.",
        ["See fig. three for details.", "It is clear."],
    ),
    (
        "url question mark",
        "Open example.com/?q=1 in a browser. It loads fast.",
        ["Open example.com/?q=1 in a browser.", "It loads fast."],
    ),
]


def chunked(text: str, sizes: list[int]) -> list[str]:
    out, i, k = [], 0, 0
    while i < len(text):
        n = sizes[k % len(sizes)]
        out.append(text[i : i + n])
        i += n
        k += 1
    return out


def run(chunks: list[str], config: SegmenterConfig | None = None) -> list[str]:
    seg = SentenceSegmenter(config)
    out: list[str] = []
    for c in chunks:
        out.extend(seg.feed(c))
    return out + seg.flush()


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_segmentation_whole_chars_and_random_chunks(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected
    assert run(list(text)) == expected
    rng = random.Random(hash(text) & 0xFFFF)
    for _ in range(5):
        sizes = [rng.randint(1, 7) for _ in range(10)]
        assert run(chunked(text, sizes)) == expected


def test_case_count_is_at_least_forty() -> None:
    assert len(CASES) >= 40


def test_sentence_is_emitted_as_soon_as_next_word_starts() -> None:
    seg = SentenceSegmenter()
    assert seg.feed("The weather is nice today.") == []  # might be "today.com" or "etc."
    assert seg.feed(" ") == []  # the next word decides ("e.g. paris" vs "Then")
    assert seg.feed("I") == ["The weather is nice today."]
    assert seg.pending == "I"


def test_cjk_sentence_needs_no_space() -> None:
    seg = SentenceSegmenter()
    assert seg.feed("你好吗？") == []
    assert seg.feed("我") == ["你好吗？"]


def test_max_wait_cuts_at_last_comma() -> None:
    cfg = SegmenterConfig(min_chars=5, max_chars=60)
    text = (
        "this clause keeps going and going, with no end in sight, and it still goes on "
        "and on without stopping"
    )
    out = split_sentences(text, cfg)
    assert out[0] == "this clause keeps going and going, with no end in sight,"
    assert " ".join(out) == " ".join(text.split())
    assert all(len(s) <= 60 for s in out)
    assert run(list(text), cfg) == out


def test_max_wait_speaks_before_text_ends() -> None:
    cfg = SegmenterConfig(min_chars=5, max_chars=40)
    seg = SentenceSegmenter(cfg)
    got: list[str] = []
    for word in ("word " * 20).split(" "):
        got += seg.feed(word + " ")
    assert got, "a long clause must be spoken before the text ends"
    assert all(len(s) <= 40 for s in got)


def test_max_wait_cuts_at_space_without_commas_and_hard_without_spaces() -> None:
    cfg = SegmenterConfig(min_chars=5, max_chars=30)
    assert split_sentences("alpha beta gamma delta epsilon zeta eta theta", cfg)[0] == (
        "alpha beta gamma delta epsilon"
    )
    blob = "x" * 75
    assert split_sentences(blob, cfg) == ["x" * 30, "x" * 30, "x" * 15]
    assert run(list(blob), cfg) == ["x" * 30, "x" * 30, "x" * 15]


def test_min_chars_zero_splits_every_sentence() -> None:
    cfg = SegmenterConfig(min_chars=0)
    assert split_sentences("Hi! Yo. Ok then.", cfg) == ["Hi!", "Yo.", "Ok then."]


def test_invalid_config_is_refused() -> None:
    with pytest.raises(ValueError, match="min_chars must be smaller"):
        SegmenterConfig(min_chars=50, max_chars=40)


def test_overrides_are_applied() -> None:
    seg = SentenceSegmenter(min_chars=0)
    assert seg.feed("Hi. There ") == ["Hi."]


def test_reset_forgets_pending() -> None:
    seg = SentenceSegmenter()
    seg.feed("Half a sentence")
    seg.reset()
    assert seg.flush() == []


_ALPHABET = st.sampled_from(
    [*"abcAB .,!?;:\"')(\n…。", "Dr.", " e.g. ", "3.14", "U.S.", "...", " etc. ", "你"]
)


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(_ALPHABET, max_size=60),
    cuts=st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=8),
    max_chars=st.integers(min_value=12, max_value=80),
)
def test_any_split_gives_the_same_sentences(
    parts: list[str], cuts: list[int], max_chars: int
) -> None:
    text = "".join(parts)
    cfg = SegmenterConfig(min_chars=4, max_chars=max_chars)
    whole = split_sentences(text, cfg)
    assert run(chunked(text, cuts), cfg) == whole
    assert run(list(text), cfg) == whole
    # nothing is lost or invented: the characters come out in order
    assert "".join("".join(whole).split()) == "".join(text.split())


FIRST_CLAUSE_CASES = [
    ("Well, I think the weather today is lovely, and tomorrow too. Yes.",
     ["Well, I think the weather today is lovely,", "and tomorrow too.", "Yes."]),
    ("Hi there, friend. How are you, today?", ["Hi there, friend.", "How are you, today?"]),
    ("Sure. Paris is the capital of France, as you know.",
     ["Sure. Paris is the capital of France, as you know."]),  # a sentence end came first
    ("It costs 3,000 dollars, which is a lot; really.",
     ["It costs 3,000 dollars,", "which is a lot; really."]),  # "3,000" is no clause break
    ("No clause breaks at all here so it waits for the end.",
     ["No clause breaks at all here so it waits for the end."]),
]


@pytest.mark.parametrize(("text", "expected"), FIRST_CLAUSE_CASES)
def test_first_clause_may_end_early_and_streaming_agrees(text: str, expected: list[str]) -> None:
    whole = SentenceSegmenter(first_clause_chars=16)
    assert whole.feed(text) + whole.flush() == expected
    streamed = SentenceSegmenter(first_clause_chars=16)
    got: list[str] = []
    for ch in text:
        got += streamed.feed(ch)
    assert got + streamed.flush() == expected


def test_first_clause_rule_is_off_by_default() -> None:
    seg = SentenceSegmenter()
    text = "Well, I think the weather today is lovely, and tomorrow too."
    assert seg.feed(text) + seg.flush() == [text]


FIRST_PIECE_CAP_CASES = [
    # a long opening clause is cut at its last word break within the cap
    ("The user wants to know what they should eat for dinner tonight. Then more.",
     ["The user wants to know what they", "should eat for dinner tonight.", "Then more."]),
    # a sentence end within the cap: the ordinary rules
    ("Sure thing. Let me think about what you could cook tonight.",
     ["Sure thing.", "Let me think about what you could cook tonight."]),
    # a clause break comes first: the first-clause rule wins
    ("Well, my friend, that is a question with a long and winding answer.",
     ["Well, my friend,", "that is a question with a long and winding answer."]),
    # a clause break past the cap is too late: cut at the cap, as streaming it would be
    ("Mondays are a wonderful day of the week, and a fine start.",
     ["Mondays are a wonderful day of the", "week, and a fine start."]),
    # only the first piece is capped
    ("Yes. And then the rest of this long sentence goes on without any break at all.",
     ["Yes.", "And then the rest of this long sentence goes on without any break at all."]),
]


@pytest.mark.parametrize(("text", "expected"), FIRST_PIECE_CAP_CASES)
def test_first_piece_cap_cuts_a_long_opening_clause(text: str, expected: list[str]) -> None:
    cfg = SegmenterConfig(first_clause_chars=12, first_piece_max_chars=36, min_chars=3)
    assert split_sentences(text, cfg) == expected
    for sizes in ([1], [2, 5, 1], [7]):
        assert run(chunked(text, sizes), cfg) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("The weather on Mars is cold.", ["The weather on", "Mars is cold."]),
    # no word break between min_chars and the cap: the first one after the cap ends it
    ("Cats are intelligent and social animals.", ["Cats are intelligent",
                                                  "and social animals."]),
    # ... unless a sentence end comes first
    ("Cats are wonderful. Yes they are.", ["Cats are wonderful.", "Yes they are."]),
])
def test_a_short_first_piece_ends_at_a_word_break(text: str, expected: list[str]) -> None:
    """The speaker's settings (cap 16, min_chars 10): about three words, never a long wait
    because a long word crosses the cap."""
    cfg = SegmenterConfig(first_clause_chars=12, first_piece_max_chars=16)
    assert split_sentences(text, cfg) == expected
    for sizes in ([1], [3, 2], [5]):
        assert run(chunked(text, sizes), cfg) == expected


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(st.sampled_from([*"abcAB .,!?;:", " word", "Dr.", "3.14", "...", ", "]),
                   max_size=60),
    cuts=st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=8),
    clause=st.integers(min_value=4, max_value=20),
    cap=st.integers(min_value=8, max_value=40),
)
def test_the_first_piece_rules_give_the_same_pieces_for_any_split(
    parts: list[str], cuts: list[int], clause: int, cap: int
) -> None:
    """A text the reply guard holds and releases at once is cut where the streamed one is:
    the first piece's clause and cap rules depend on nothing past the cap."""
    text = "".join(parts)
    cfg = SegmenterConfig(min_chars=4, first_clause_chars=clause, first_piece_max_chars=cap)
    whole = split_sentences(text, cfg)
    assert run(chunked(text, cuts), cfg) == whole
    assert run(list(text), cfg) == whole
