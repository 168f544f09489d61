"""The xml call format: streaming parser, chunk-split invariance, conversion, round trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from terrarium.formats import (
    CallEvent,
    NoticeEvent,
    ParseEvent,
    TextEvent,
    get_format,
)
from terrarium.formats.xml import escape_attr, escape_child, unescape
from tests.formats_fixtures import (
    SPECS,
    Mode,
    Nothing,
    Send,
    assert_char_and_three_way_splits_agree,
    assert_every_two_way_split_agrees,
    only_call,
)
from tests.formats_fixtures import feed_split as split_feed

FMT = get_format("xml", SPECS)


def parse(text: str) -> list[ParseEvent]:
    return FMT.parse(text)


def feed_split(text: str, cuts: list[int]) -> list[ParseEvent]:
    return split_feed(FMT, text, cuts)


SEND = '<send_message channel="general">\n<text>\nhello\nworld\n</text>\n</send_message>'

REPRESENTATIVE = [
    "Just text: a < b, c > d, x<3, and </closing> tags are fine.",
    f"Before {SEND} after",
    '<send_message channel="a" text="b"/><info/><info />',
    '<configure flag=\'false\' count="3">\n<tags>["a"]</tags>\n</configure> done',
    '<b>bold</b> and <nosuch x="1"/> and <send_mess> and <send_messagex/>',
    '<send_message channel="x"><text>a <info/> </configure> <send_message </text></send_message>',
    "<<info/>><info></info>",
    '<send_message channel="x"><text>never closed',
    'tail opener <send_message channel="x',
    '<send channel="c" text="t"/><send_message channel="c" text="u"/>',
    '<send_message channel="a &amp; b" text="&lt;hi&gt; &quot;q&quot; &#65;&#x42;"/>',
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
                "<",
                ">",
                "/",
                "/>",
                "</",
                "send",
                "_message",
                "<send_message",
                "</send_message>",
                "<info/>",
                "<info>",
                "</info>",
                " ",
                "\n",
                'channel="',
                "text='",
                '"',
                "'",
                "<text>",
                "</text>",
                "x",
                "<nosuch>",
                "&amp;",
                "&lt;",
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


@pytest.mark.parametrize(
    ("chunk", "emitted"),
    [
        ("hello <", "hello "),
        ("hello <se", "hello "),
        ("hello <send_message", "hello "),
        ('hello <send_message channel="x', "hello "),
        ("hello <send_message/", "hello "),
        ("hello <x", "hello <x"),
        ("hello <3", "hello <3"),
        ("hello <send_messagez", "hello <send_messagez"),
        ("a </send_message", "a </send_message"),
        ("x <<", "x <"),
    ],
)
def test_only_a_possible_known_opening_is_held_back(chunk: str, emitted: str) -> None:
    parser = FMT.new_parser()
    assert "".join(e.text for e in parser.feed(chunk) if isinstance(e, TextEvent)) == emitted


def test_child_element_call() -> None:
    events = parse(f"Before {SEND} after")
    assert events[0] == TextEvent("Before ")
    assert only_call(events).args == Send(channel="general", text="hello\nworld")
    assert events[-1] == TextEvent(" after")


@pytest.mark.parametrize(
    "text",
    [
        "<info/>",
        "<info />",
        "<info\n/>",
        "<info></info>",
        "<info>\n</info>",
    ],
)
def test_self_closing_and_empty_without_attributes(text: str) -> None:
    call = only_call(parse(text))
    assert call.error is None and call.args == Nothing()


@pytest.mark.parametrize(
    "text",
    [
        '<send_message channel="c" text="t"/>',
        '<send_message channel="c" text="t" />',
        "<send_message channel='c' text='t'/>",
        '<send_message  channel = "c"\n text="t"/>',
        '<send_message channel="c" text="t"></send_message>',
        '<send_message channel="c"><text>t</text></send_message>',
        '<send_message channel="c">\n  <text>\nt\n</text>\n</send_message>',
        "<send_message><channel>c</channel><text>t</text></send_message>",
        "<send_message>\n<channel>c</channel>\n<text>t</text>\n</send_message>",
        '<send_message channel="c"><text>\nt</text></send_message>',
    ],
)
def test_attribute_and_child_forms(text: str) -> None:
    call = only_call(parse(text))
    assert call.error is None, call.error
    assert call.args == Send(channel="c", text="t")


@pytest.mark.parametrize(
    ("attr", "value"),
    [
        ("a &amp; b", "a & b"),
        ("&lt;tag&gt;", "<tag>"),
        ("say &quot;hi&quot;", 'say "hi"'),
        ("it&apos;s", "it's"),
        ("&#65;&#x42;&#X43;", "ABC"),
        ("AT&T & co", "AT&T & co"),
        ("&unknown; &amp", "&unknown; &amp"),
        ("a < b > c", "a < b > c"),
    ],
)
def test_attribute_entities_are_unescaped(attr: str, value: str) -> None:
    call = only_call(parse(f'<send_message channel="c" text="{attr}"/>'))
    assert call.error is None
    assert call.args == Send(channel="c", text=value)


@pytest.mark.parametrize(
    ("inner", "value"),
    [
        ("a <info/> b", "a <info/> b"),
        ("a </configure> b", "a </configure> b"),
        ("a <send_message> b", "a <send_message> b"),
        ("x </send> y", "x </send> y"),
        ("[/info] [brackets]", "[/info] [brackets]"),
        ("line1\nline2\n\nline4", "line1\nline2\n\nline4"),
        ("&lt;/text&gt; escaped", "</text> escaped"),
        ("if a < b && c", "if a < b && c"),
    ],
)
def test_nested_mismatched_and_multiline_children_are_argument_text(inner: str, value: str) -> None:
    call = only_call(parse(f'<send_message channel="c"><text>{inner}</text></send_message>'))
    assert call.error is None, call.error
    assert call.args == Send(channel="c", text=value)


def test_first_matching_close_ends_the_call() -> None:
    events = parse('<send_message channel="c"><text>a</text></send_message> b </send_message>')
    assert only_call(events).args == Send(channel="c", text="a")
    assert events[-1] == TextEvent(" b </send_message>")


def test_close_inside_child_ends_the_call_and_reports_the_unclosed_child() -> None:
    call = only_call(parse('<send_message channel="c"><text>a </send_message> b</text>'))
    assert call.args is None and call.error is not None
    assert "<text>" in call.error and "never closed" in call.error


@pytest.mark.parametrize("name", ["nosuch", "b", "send_mess", "send_messagex", "Info"])
@pytest.mark.parametrize("shape", ["<{n}>", "<{n}/>", '<{n} a="1">', "<{n} a='1' />"])
def test_unknown_names_are_text_plus_a_notice(name: str, shape: str) -> None:
    tag = shape.format(n=name)
    events = parse(f"A {tag} B")
    assert events[0] == TextEvent(f"A {tag}")
    assert isinstance(events[1], NoticeEvent)
    assert f"'{name}'" in events[1].text
    for known in ("configure", "info", "send", "send_message"):
        assert known in events[1].text
    assert events[2] == TextEvent(" B")


def test_a_stray_unknown_tag_cannot_swallow_a_real_call() -> None:
    events = parse('<a href="x <info/> y')
    assert any(isinstance(e, CallEvent) and e.name == "info" for e in events)


def test_unclosed_call_at_close_is_text_and_a_notice() -> None:
    text = '<send_message channel="x"><text>never closed'
    events = parse("pre " + text)
    assert events[0] == TextEvent("pre " + text)
    assert isinstance(events[1], NoticeEvent) and "</send_message>" in events[1].text


def test_unfinished_opening_tag_at_close_is_text_and_a_notice() -> None:
    events = parse('tail <send_message channel="x')
    assert events[0] == TextEvent('tail <send_message channel="x')
    assert isinstance(events[1], NoticeEvent) and "send_message" in events[1].text


@pytest.mark.parametrize(
    ("attrs", "expected"),
    [
        ('flag="false"', False),
        ('flag="no"', False),
        ('flag="0"', False),
        ('flag="False"', False),
        ('flag="true"', True),
        ('flag="yes"', True),
        ('flag="1"', True),
    ],
)
def test_bool_conversion(attrs: str, expected: bool) -> None:
    call = only_call(parse(f"<configure {attrs}/>"))
    assert call.error is None, call.error
    assert call.args is not None and call.args.flag is expected  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('<configure flag="maybe"/>', ["flag", "true or false"]),
        ('<configure flag="true" count="many"/>', ["count", "whole number"]),
        ('<configure flag="true" ratio="x"/>', ["ratio", "number"]),
        ('<configure flag="true" mode="medium"/>', ["mode", "'fast'"]),
        ('<configure flag="true" level="mid"/>', ["level", "'low'"]),
        ('<configure flag="true" tags="a,b"/>', ["tags", "JSON list"]),
        ('<configure flag="true" colour="red"/>', ["no argument 'colour'"]),
        ('<configure count="1"/>', ["'flag'", "required"]),
        ('<configure flag="true" flag="false"/>', ["flag", "twice"]),
        ('<configure flag="true"><flag>false</flag></configure>', ["flag", "twice"]),
        ('<configure flag="true">stray words</configure>', ["outside its argument elements"]),
    ],
)
def test_refused_values_give_an_error_sentence(text: str, words: list[str]) -> None:
    call = only_call(parse(text))
    assert call.args is None and call.error is not None
    assert call.error.endswith(".")
    for word in words:
        assert word in call.error, call.error


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("send_message", {"channel": "general", "text": "hello"}),
        ("send_message", {"channel": "g", "text": "multi\nline\n\nvalue\n"}),
        ("send_message", {"channel": "g", "text": "\nleading newline"}),
        ("send_message", {"channel": "g", "text": "quotes \" and ' and &amp; &lt; &#65;"}),
        ("send_message", {"channel": "g", "text": "tags </text> </send_message> <info/>\nx"}),
        ("send_message", {"channel": "g", "text": "x" * 100}),
        ("send_message", {"channel": "g", "text": ""}),
        ("send", {"channel": "a & b", "text": "</send>"}),
        ("configure", {"flag": False, "count": 7, "mode": Mode.SLOW, "tags": ["x", "y"]}),
        ("configure", {"flag": True, "ratio": 0.25, "level": "high"}),
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


@pytest.mark.parametrize(
    "value", ["plain", 'a "q"', "&amp; &lt; &#65;", "AT&T", "</x> <y>", "&&", "&#xZZ;"]
)
def test_escape_helpers_round_trip(value: str) -> None:
    assert unescape(escape_attr(value)) == value
    assert unescape(escape_child(value)) == value
    assert "</" not in escape_child(value)


def test_syntax_help_contains_a_parseable_example() -> None:
    help_text = FMT.syntax_help("send_message", {"channel": "general", "text": "hi"})
    example = FMT.render_call("send_message", {"channel": "general", "text": "hi"})
    assert example in help_text
    calls = [e for e in parse(help_text) if isinstance(e, CallEvent)]
    assert calls[-1].args == Send(channel="general", text="hi")
