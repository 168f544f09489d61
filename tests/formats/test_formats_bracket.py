"""The bracket call format: streaming parser, chunk-split invariance, conversion, round trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from terrarium.errors import FormatError
from terrarium.formats import (
    CallEvent,
    NoticeEvent,
    ParseEvent,
    TextEvent,
    coalesce,
    get_format,
)
from tests.formats_fixtures import (
    SPECS,
    Configure,
    Mode,
    Nothing,
    Send,
    assert_char_and_three_way_splits_agree,
    assert_every_two_way_split_agrees,
    only_call,
)
from tests.formats_fixtures import feed_split as split_feed

FMT = get_format("bracket", SPECS)


def parse(text: str) -> list[ParseEvent]:
    return FMT.parse(text)


def feed_split(text: str, cuts: list[int]) -> list[ParseEvent]:
    return split_feed(FMT, text, cuts)


SEND = "[/send_message]\n@@channel=general\n@@text=hello\nworld\n[send_message/]"

REPRESENTATIVE = [
    "Just text, no calls at all. [brackets] and [/ slashes /] too.",
    f"Before {SEND} after",
    f"{SEND}{SEND}",
    '[/configure]\n@@flag=false\n@@count=3\n@@tags=["a", "b"]\n[configure/] done',
    "[/nosuch]\n@@a=b\n[nosuch/] and [/send_mess] and [/send_messagex]",
    "[/send_message]\n@@channel=x\n@@text=a [/info] [configure/] [send_message\n[send_message/]",
    "[[/info]\n[info/]][/info][info/]",
    "[/send_message]\n@@channel=x\n@@text=never closed",
    "tail opener [/send_mes",
    "[/send]\n@@channel=c\n@@text=t\n[send/][/send_message]\n@@channel=c\n@@text=u\n[send_message/]",
]


@pytest.mark.parametrize("text", REPRESENTATIVE)
def test_every_two_way_split_gives_the_same_events(text: str) -> None:
    assert_every_two_way_split_agrees(FMT, text)


@pytest.mark.parametrize("text", REPRESENTATIVE)
def test_char_by_char_and_three_way_splits_give_the_same_events(text: str) -> None:
    assert_char_and_three_way_splits_agree(FMT, text)


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(
        st.sampled_from(
            [
                "hi ",
                "[",
                "/",
                "]",
                "[/",
                "send",
                "_message",
                "[/send_message]",
                "[send_message/]",
                "[/info]",
                "[info/]",
                "\n",
                "@@",
                "channel=",
                "text=",
                "x",
                "[/nosuch]",
                "[/",
                "configure]",
                "@@flag=no\n",
            ]
        ),
        max_size=25,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
)
def test_hypothesis_chunk_split_invariance(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    points = sorted({c for c in cuts if c <= len(text)})
    assert feed_split(text, points) == parse(text)


def test_plain_text_streams_immediately() -> None:
    parser = FMT.new_parser()
    assert parser.feed("hello there") == [TextEvent("hello there")]


@pytest.mark.parametrize(
    ("chunk", "emitted"),
    [
        ("hello [", "hello "),
        ("hello [/", "hello "),
        ("hello [/se", "hello "),
        ("hello [/send_message", "hello "),
        ("hello [x", "hello [x"),
        ("hello [/zz", "hello [/zz"),
        ("hello [/send_messagez", "hello [/send_messagez"),
        ("a [/ b", "a [/ b"),
        ("x [[", "x ["),
    ],
)
def test_only_a_possible_known_opening_is_held_back(chunk: str, emitted: str) -> None:
    parser = FMT.new_parser()
    assert "".join(e.text for e in parser.feed(chunk) if isinstance(e, TextEvent)) == emitted


def test_a_simple_call_with_multiline_value() -> None:
    events = parse(f"Before {SEND} after")
    assert events[0] == TextEvent("Before ")
    call = only_call(events)
    assert call.error is None
    assert call.args == Send(channel="general", text="hello\nworld")
    assert events[-1] == TextEvent(" after")


def test_prefix_name_and_longer_name_are_distinguished() -> None:
    events = parse(REPRESENTATIVE[-1])
    assert [e.name for e in events if isinstance(e, CallEvent)] == ["send", "send_message"]


@pytest.mark.parametrize(
    "text",
    [
        "a < b and c > d [x] [/] [//] [/ info] [/info ] [info/]",
        "list[0] = arr[/2]",
        "[send_message/] stray close",
    ],
)
def test_bracket_looking_text_is_just_text(text: str) -> None:
    assert parse(text) == [TextEvent(text)]


@pytest.mark.parametrize("name", ["nosuch", "send_mess", "send_messagex", "Info", "x.y-z"])
def test_unknown_names_are_text_plus_a_notice_listing_known_names(name: str) -> None:
    text = f"A [/{name}] B"
    events = parse(text)
    assert events[0] == TextEvent(f"A [/{name}]")
    assert isinstance(events[1], NoticeEvent)
    assert f"'{name}'" in events[1].text
    for known in ("configure", "info", "send", "send_message"):
        assert known in events[1].text
    assert events[2] == TextEvent(" B")


def test_notice_comes_right_after_the_unknown_tag_whatever_the_split() -> None:
    parser = FMT.new_parser()
    got = parser.feed("x [/nos") + parser.feed("uch] y") + parser.close()
    assert coalesce(got)[1:] == [NoticeEvent(coalesce(got)[1].text), TextEvent(" y")]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("body", "expected_text"),
    [
        ("@@text=a [/info] b", "a [/info] b"),
        ("@@text=a [configure/] b", "a [configure/] b"),
        ("@@text=a [/send_message] b", "a [/send_message] b"),
        ("@@text=[send/]", "[send/]"),
        ("@@text=x\n[info/]\ny", "x\n[info/]\ny"),
        ("@@text=<b>bold</b> & [x]", "<b>bold</b> & [x]"),
        ("@@text=line1\nline2\n\nline4", "line1\nline2\n\nline4"),
        ("@@text=trailing\n", "trailing\n"),
        ("@@text=\nstarts on next line", "\nstarts on next line"),
        ("@@text=has = signs = here", "has = signs = here"),
        ("@@text=", ""),
        ("@@text=a @@ in the middle", "a @@ in the middle"),
    ],
)
def test_nested_mismatched_and_multiline_values_are_argument_text(
    body: str, expected_text: str
) -> None:
    call = only_call(parse(f"[/send_message]\n@@channel=c\n{body}\n[send_message/]"))
    assert call.error is None, call.error
    assert call.args == Send(channel="c", text=expected_text)


def test_first_matching_close_ends_the_call() -> None:
    events = parse("[/send_message]\n@@channel=c\n@@text=a\n[send_message/] b [send_message/]")
    assert only_call(events).args == Send(channel="c", text="a")
    assert events[-1] == TextEvent(" b [send_message/]")


def test_inline_call_on_one_line() -> None:
    call = only_call(parse("[/send_message]@@channel=c\n@@text=t[send_message/]"))
    assert call.args == Send(channel="c", text="t")


def test_no_argument_call() -> None:
    call = only_call(parse("[/info]\n[info/]"))
    assert call.error is None and call.args == Nothing()


def test_unclosed_call_at_close_is_text_and_a_notice() -> None:
    text = "[/send_message]\n@@channel=x\n@@text=never closed"
    events = parse("pre " + text)
    assert events[:1] == [TextEvent("pre " + text)]
    assert isinstance(events[1], NoticeEvent)
    assert "never closed" in events[1].text and "[send_message/]" in events[1].text


def test_unfinished_opening_at_close_is_text() -> None:
    assert parse("tail [/send_mes") == [TextEvent("tail [/send_mes")]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("@@flag=false", False),
        ("@@flag=False", False),
        ("@@flag=FALSE", False),
        ("@@flag=no", False),
        ("@@flag=0", False),
        ("@@flag= false ", False),
        ("@@flag=true", True),
        ("@@flag=yes", True),
        ("@@flag=1", True),
        ("@@flag=True", True),
    ],
)
def test_bool_conversion(args: str, expected: bool) -> None:
    call = only_call(parse(f"[/configure]\n{args}\n[configure/]"))
    assert call.error is None, call.error
    assert call.args is not None and call.args.flag is expected  # type: ignore[attr-defined]


def test_typed_fields_convert() -> None:
    text = (
        "[/configure]\n@@flag=no\n@@count=-12\n@@ratio=2.5\n@@mode=slow\n@@level=high\n"
        '@@tags=["a", "b c"]\n@@extra={"k": 3}\n@@note=null\n@@limit=null\n[configure/]'
    )
    call = only_call(parse(text))
    assert call.error is None, call.error
    assert call.args == Configure(
        flag=False,
        count=-12,
        ratio=2.5,
        mode=Mode.SLOW,
        level="high",
        tags=["a", "b c"],
        extra={"k": 3},
        note="null",  # an optional string keeps its text; leave the argument out for None
        limit=None,
    )
    assert call.raw_args["flag"] == "no"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ("@@flag=maybe", ["flag", "true or false", "maybe"]),
        ("@@flag=", ["flag", "true or false"]),
        ("@@flag=2", ["flag", "true or false"]),
        ("@@flag=true\n@@count=three", ["count", "whole number"]),
        ("@@flag=true\n@@count=1.5", ["count", "whole number"]),
        ("@@flag=true\n@@ratio=fast", ["ratio", "number"]),
        ("@@flag=true\n@@mode=medium", ["mode", "'fast'", "'slow'"]),
        ("@@flag=true\n@@level=mid", ["level", "'low'", "'high'"]),
        ("@@flag=true\n@@tags=a, b", ["tags", "JSON list"]),
        ("@@flag=true\n@@tags=[1, 2]", ["tags", "invalid"]),
        ("@@flag=true\n@@extra=k=3", ["extra", "JSON object"]),
        ("@@flag=true\n@@colour=red", ["no argument 'colour'", "flag"]),
        ("@@count=3", ["'flag'", "required"]),
        ("@@flag=true\n@@flag=false", ["flag", "twice"]),
        ("oops\n@@flag=true", ["before its first @@"]),
        ("@@flag true", ["@@key=value"]),
    ],
)
def test_refused_values_give_an_error_sentence(args: str, words: list[str]) -> None:
    call = only_call(parse(f"[/configure]\n{args}\n[configure/]"))
    assert call.args is None
    assert call.error is not None and call.error.endswith(".")
    for word in words:
        assert word in call.error, call.error


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("send_message", {"channel": "general", "text": "hello"}),
        ("send_message", {"channel": "g", "text": "multi\nline\n\nvalue\n"}),
        ("send_message", {"channel": "g", "text": "\nleading newline"}),
        ("send_message", {"channel": "g", "text": "brackets [/info] [x/] [send/] <a> &amp;"}),
        ("send_message", {"channel": "g", "text": ""}),
        ("send_message", {"channel": "g", "text": "@@ first line may start with @@"}),
        ("send", {"channel": "g", "text": "[send_message/]"}),
        ("configure", {"flag": False, "count": 7, "mode": Mode.SLOW, "tags": ["x", "y"]}),
        ("configure", {"flag": True, "ratio": 0.25, "level": "high", "extra": {"a": 1}}),
        ("info", {}),
    ],
)
def test_render_call_round_trips(name: str, args: dict[str, object]) -> None:
    text = FMT.render_call(name, args)
    call = only_call(parse(text))
    assert call.error is None, call.error
    spec = {s.name: s for s in SPECS}[name]
    assert call.args == spec.args_model.model_validate(args)
    assert feed_split(text, list(range(1, len(text)))) == parse(text)


@pytest.mark.parametrize("text", ["a\n@@b", "ends the call [send_message/] early"])
def test_render_call_refuses_what_it_cannot_write(text: str) -> None:
    with pytest.raises(FormatError):
        FMT.render_call("send_message", {"channel": "c", "text": text})


def test_syntax_help_contains_a_parseable_example() -> None:
    help_text = FMT.syntax_help("send_message", {"channel": "general", "text": "hi"})
    example = FMT.render_call("send_message", {"channel": "general", "text": "hi"})
    assert example in help_text
    assert only_call(parse(help_text.split("\n\n", 1)[1])).args == Send(
        channel="general", text="hi"
    )


def test_no_known_calls_means_no_holding_and_every_tag_is_unknown() -> None:
    fmt = get_format("bracket", [])
    parser = fmt.new_parser()
    assert coalesce(parser.feed("a [")) == [TextEvent("a [")]
    events = fmt.parse("[/info]")
    assert isinstance(events[-1], NoticeEvent) and "no calls are available" in events[-1].text
