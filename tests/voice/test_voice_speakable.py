"""Markdown and other unspeakable text is removed before synthesis."""

from __future__ import annotations

import random

import pytest

from terrarium.voice.speakable import FenceFilter, to_speakable

CASES: list[tuple[str, str, str]] = [
    ("bold", "This is **very** important.", "This is very important."),
    ("italic star", "This is *quite* nice.", "This is quite nice."),
    ("italic underscore", "This is _quite_ nice.", "This is quite nice."),
    ("bold italic", "***Wow*** that worked.", "Wow that worked."),
    ("strikethrough", "It costs ~~ten~~ five dollars.", "It costs ten five dollars."),
    ("snake case kept", "Set max_tokens to five.", "Set max_tokens to five."),
    ("heading", "## Weather today\nIt is sunny.", "Weather today. It is sunny."),
    ("heading with closing hashes", "# Title #", "Title."),
    ("bullets", "- milk\n- eggs\n* bread", "milk. eggs. bread."),
    ("numbered list", "1. wake up\n2) eat breakfast", "wake up. eat breakfast."),
    ("task list", "- [x] done thing\n- [ ] open thing", "done thing. open thing."),
    (
        "link keeps text",
        "Read [the guide](https://example.com/guide) first.",
        "Read the guide first.",
    ),
    (
        "link with parens in url",
        "See [wiki](https://en.wikipedia.org/wiki/Foo_(bar)) now.",
        "See wiki now.",
    ),
    (
        "reference link",
        "Read [the docs][1] today.\n\n[1]: https://example.com",
        "Read the docs today.",
    ),
    ("image dropped", "Here it is ![a cat](cat.png) as promised.", "Here it is as promised."),
    ("inline code kept", "Run `ls -la` in the shell.", "Run ls -la in the shell."),
    (
        "code fence dropped",
        "Try this:\n```python\nprint('hi')\nx = 1.5\n```\nThat is all.",
        "Try this: That is all.",
    ),
    ("tilde fence dropped", "Before.\n~~~\ncode\n~~~\nAfter.", "Before. After."),
    ("unterminated fence dropped", "Look:\n```\nhalf = code", "Look"),
    (
        "blockquote",
        "> To be or not to be.\n> That is the question.",
        "To be or not to be. That is the question.",
    ),
    ("table", "| Name | Age |\n|------|----:|\n| Ann | 30 |", "Name, Age. Ann, 30."),
    ("html tags", "Press <kbd>Enter</kbd> to <b>continue</b>.", "Press Enter to continue."),
    ("html entities", "Salt &amp; pepper &lt;3", "Salt & pepper <3"),
    ("emoji", "Great job 🎉🚀 really! 👍🏽 Thanks ❤️", "Great job really! Thanks"),
    ("flag emoji", "Greetings from 🇫🇷 France.", "Greetings from France."),
    ("bare url dropped", "Go to https://example.com/a?b=1 for more.", "Go to for more."),
    ("www url dropped", "Visit www.example.org today.", "Visit today."),
    ("url in parens", "It is documented (https://docs.example.com).", "It is documented."),
    ("autolink", "Mail <mailto:me@example.com> soon.", "Mail soon."),
    ("horizontal rule", "Part one.\n\n---\n\nPart two.", "Part one. Part two."),
    ("whitespace collapsed", "Lots   of\n\n\n  space\there .", "Lots of space here."),
    (
        "plain text untouched",
        "It is 3.5 degrees, and Dr. Smith says hi!",
        "It is 3.5 degrees, and Dr. Smith says hi!",
    ),
    ("only markup", "**  **", ""),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_to_speakable(text: str, expected: str) -> None:
    assert to_speakable(text) == expected


def test_case_count_is_at_least_fifteen() -> None:
    assert len(CASES) >= 15


def test_idempotent() -> None:
    for _, text, _ in CASES:
        once = to_speakable(text)
        assert to_speakable(once) == once


STREAM = (
    "Here is the code.\n```python\ndef f(x):\n    return x.real\n```\nAnd a ``` inline mention.\n"
    "  ~~~\n~ tilde block ~\n~~~\nDone. `inline` stays\n``\nlast"
)
EXPECTED_STREAM = (
    "Here is the code.\n\n\nAnd a ``` inline mention.\n\n\nDone. `inline` stays\n``\nlast"
)


def test_fence_filter_whole_and_split_agree() -> None:
    f = FenceFilter()
    assert f.feed(STREAM) + f.flush() == EXPECTED_STREAM
    rng = random.Random(7)
    for _ in range(30):
        f = FenceFilter()
        out, i = [], 0
        while i < len(STREAM):
            n = rng.randint(1, 5)
            out.append(f.feed(STREAM[i : i + n]))
            i += n
        assert "".join(out) + f.flush() == EXPECTED_STREAM


def test_fence_filter_passes_prose_without_delay() -> None:
    f = FenceFilter()
    assert f.feed("Hel") == "Hel"
    assert f.feed("lo.\n`") == "lo.\n"  # a backtick at a line start is held back
    assert f.feed("x") == "`x"
    assert not f.in_code


def test_fence_filter_reports_code_state() -> None:
    f = FenceFilter()
    f.feed("```sh\necho hi")
    assert f.in_code
    assert f.flush() == ""
    assert not f.in_code
