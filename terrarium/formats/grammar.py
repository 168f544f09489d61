"""GBNF grammars for llama.cpp, generated from the same specs the parsers and prompt use.

A grammar lets free text interleave with well-formed calls of the known names only. Each
call lists its arguments in declaration order (optional ones may be left out), and typed
arguments are constrained: enum/Literal values as alternatives, bools as ``true``/``false``,
integers and floats as bounded digit runs, lists and objects as single-line JSON. Plain text
may not contain anything that starts a tag (``[/`` for bracket, ``<`` + letter for xml), so
a small model cannot drift into a malformed or unknown call: the only way to open one is a
complete known call.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass, field

from terrarium.errors import FormatError
from terrarium.formats.base import CallFormat, CallSpec
from terrarium.formats.bracket import BracketFormat
from terrarium.formats.convert import FieldKind, field_kind
from terrarium.formats.xml import XmlFormat

MAX_INT_DIGITS = 12
# A one-line free-text value ends within this many characters, so a small model that
# rambles inside a value is still forced to close the call within a modest token budget.
MAX_LINE_CHARS = 200
MAX_FRACTION_DIGITS = 8


def gbnf_literal(text: str) -> str:
    """A GBNF string literal for ``text``."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    out = out.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{out}"'


_SHARED = {
    "ws": r"[ \t\n]*",
    "bool": '"true" | "false"',
    # no leading zeros: the same digits must also be valid inside JSON lists and objects
    "int": f'"-"? ( "0" | [1-9] [0-9]{{0,{MAX_INT_DIGITS - 1}}} )',
    "float": f'int ( "." [0-9]{{1,{MAX_FRACTION_DIGITS}}} )?',
    # single-line JSON whose strings hold no tag-starting characters
    "jval": 'jobj | jarr | jstr | float | "true" | "false" | "null"',
    "jobj": '"{" " "? ( jstr ":" " "? jval ( "," " "? jstr ":" " "? jval )* )? "}"',
    "jarr": '"[" ( jval ( "," " "? jval )* )? "]"',
    "jstr": r'"\"" ( [^"\\\n<&\[] | "\\" ["\\/bfnrt] )* "\""',
}

_BRACKET = {
    # text may not contain "[/" (only calls start with it) nor "[[" (keeps "[" + "/" honest)
    "text": r'( [^\[] | "[" [^/\[] )*',
    # a value char; "[" only when it cannot begin a closing tag
    "bchar": r'[^\n\[] | "[" [^\n\[/a-zA-Z_]',
    # a continuation line may not start with "@@" (next argument) or "[" (closing tag)
    "bfirst": r'[^\n\[@] | "@" [^\n\[@]',
    "bstr": r'bchar* ( "\n" ( bfirst bchar* )? )*',
    "bline": f"bchar{{0,{MAX_LINE_CHARS}}}",
}

_XML = {
    # text may not contain "<" followed by a name start (only calls start like that)
    "text": r'( [^<] | "<" [^a-zA-Z_<] )*',
    "ent": '"&" ( "lt" | "gt" | "amp" | "quot" | "apos" ) ";"',
    "astr": r'( [^"&<\n] | ent )*',
    # "<" only before a non-name character, so a small model cannot start nesting tags
    "xstr": r'( [^<&] | ent | "<" [^/<&a-zA-Z_] )*',
    "xline": r'( [^<&\n] | ent | "<" [^/<&a-zA-Z_\n] )' + f"{{0,{MAX_LINE_CHARS}}}",
}


@dataclass(slots=True)
class _Builder:
    rules: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, body: str) -> str:
        self.rules[name] = body
        return name

    def render(self, shared: dict[str, str]) -> str:
        lines = [f"root ::= {self.rules.pop('root')}"]
        lines += [f"{k} ::= {v}" for k, v in self.rules.items()]
        lines += [f"{k} ::= {v}" for k, v in {**_SHARED, **shared}.items()]
        return "\n".join(lines) + "\n"


def _plain(choice: object) -> object:
    return choice.value if isinstance(choice, enum.Enum) else choice


def _scalar(kind: FieldKind) -> str | None:
    """GBNF for a value written without quotes, or None when the kind is free text/JSON."""
    if kind.kind == "bool":
        return "bool"
    if kind.kind == "int":
        return "int"
    if kind.kind == "float":
        return "float"
    if kind.kind == "choice":
        values = [_plain(c) for c in kind.choices]
        texts = ["true" if v is True else "false" if v is False else str(v) for v in values]
        return "( " + " | ".join(gbnf_literal(t) for t in texts) + " )"
    return None


def _json(kind: FieldKind | None) -> str:
    """GBNF for a single-line JSON value of ``kind`` (untyped parts fall back to ``jval``)."""
    if kind is None or kind.kind == "any":
        return "jval"
    if kind.kind == "str":
        return "jstr"
    if kind.kind == "choice":
        alts = [gbnf_literal(json.dumps(_plain(c))) for c in kind.choices]
        return "( " + " | ".join(alts) + " )"
    if kind.kind in ("bool", "int", "float"):
        return kind.kind
    item = _json(kind.item)
    if kind.container == "list":
        return f'( "[" ( {item} ( "," " "? {item} )* )? "]" )'
    if kind.item is None:
        return "jobj"
    pair = f'jstr ":" " "? {item}'
    return f'( "{{" " "? ( {pair} ( "," " "? {pair} )* )? "}}" )'


def _fields(spec: CallSpec) -> list[tuple[str, FieldKind, bool]]:
    return [
        (fname, field_kind(info.annotation), not info.is_required())
        for fname, info in spec.args_model.model_fields.items()
    ]


def is_multiline(spec: CallSpec, fname: str) -> bool:
    """Free-text values are one line unless the field says ``multiline`` (file contents…).

    One-line values keep a small model from running on into text that belongs elsewhere.
    """
    extra = spec.args_model.model_fields[fname].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("multiline"))


def _bracket_call(b: _Builder, i: int, spec: CallSpec) -> str:
    parts = [gbnf_literal(f"[/{spec.name}]\n")]
    for j, (fname, kind, optional) in enumerate(_fields(spec)):
        if kind.kind == "json":
            value = _json(kind)
        else:
            value = _scalar(kind) or ("bstr" if is_multiline(spec, fname) else "bline")
        rule = b.add(f"call-{i}-{j}", f'{gbnf_literal(f"@@{fname}=")} {value} "\\n"')
        parts.append(rule + ("?" if optional else ""))
    parts.append(gbnf_literal(f"[{spec.name}/]"))
    return b.add(f"call-{i}", " ".join(parts))


def _xml_call(b: _Builder, i: int, spec: CallSpec) -> str:
    """Arguments in order: a run of attributes, then (after ``>``) a run of child elements."""
    fields = _fields(spec)
    n = len(fields)
    close = gbnf_literal(f"</{spec.name}>")
    b.add(f"call-{i}-attr-{n}", f'( "/>" | ">" ws {close} )')
    b.add(f"call-{i}-kids-{n}", close)
    for j in range(n - 1, -1, -1):
        fname, kind, optional = fields[j]
        scalar = _scalar(kind)
        if kind.kind == "json":
            child_value = f'"\\n"? {_json(kind)} "\\n"?'
        else:
            free = "xstr" if is_multiline(spec, fname) else "xline"
            child_value = f'"\\n"? {scalar} "\\n"?' if scalar else free
        kid = f"{gbnf_literal(f'<{fname}>')} {child_value} {gbnf_literal(f'</{fname}>')} ws"
        kid_alts = [f"{kid} call-{i}-kids-{j + 1}"]
        attr_alts = []
        if kind.kind != "json":
            attr_value = scalar or "astr"
            attr_alts.append(
                f'{gbnf_literal(f" {fname}=")} "\\"" {attr_value} "\\"" call-{i}-attr-{j + 1}'
            )
        attr_alts.append(f'">" ws call-{i}-kids-{j}')
        if optional:
            kid_alts.append(f"call-{i}-kids-{j + 1}")
            attr_alts.append(f"call-{i}-attr-{j + 1}")
        b.add(f"call-{i}-kids-{j}", " | ".join(kid_alts))
        b.add(f"call-{i}-attr-{j}", " | ".join(attr_alts))
    return b.add(f"call-{i}", f"{gbnf_literal(f'<{spec.name}')} call-{i}-attr-0")


# Spoken prose: letters, digits, plain punctuation, Latin accents. No markdown marks
# (# * _ ` [ ] < > | ~), no newlines and no emoji, so nothing unspeakable can be written.
PLAIN_TEXT = r"[a-zA-Z0-9 ,.;:!?'\"()%$&+=/\u00C0-\u017F-]*"


# Spoken prose counted in sentences: a sentence is speakable characters up to an end mark
# (or several: "?!", "..."), optionally closed by a quote or bracket.
_SENTENCES = {
    "schar": r"[a-zA-Z0-9 ,;:'\"()%$&+=/\u00C0-\u017F-]",
    "sent": "schar+ sentend",
    "sentend": r"[.!?]+ [\"')]?",
}


_ENDED = re.compile(r"[.!?]+[\"')]?(?=\s|$)")


def sentences_left(max_sentences: int, written: str) -> int:
    """How many sentences a reply may still start or finish after ``written``."""
    return max_sentences - len(_ENDED.findall(written))


def spoken_text_rule(max_sentences: int, written: str = "") -> str:
    """GBNF for speakable prose of at most ``max_sentences`` whole sentences: generation
    stops at the end of the last one, and can only stop at a sentence end.

    ``written`` is the reply so far when the model continues one (after the first-audio
    pause): its finished sentences count, and an unfinished one must be finished first.
    """
    left = sentences_left(max_sentences, written)
    if left <= 0:
        return '""'
    more = f' ( " " sent ){{0,{left - 1}}}' if left > 1 else ""
    if not written.strip():
        return f"( sent{more} )?"
    if _ENDED.search(written.rstrip()[-3:] + " "):  # at a sentence end: a new one, or none
        return f'( " " sent{more} )?'
    return f"schar* sentend{more}"  # finish the sentence under way


def grammar_for(fmt: CallFormat, allow_text: bool = True, *, plain_text: bool = False,
                max_sentences: int | None = None, written: str = "") -> str:
    """GBNF accepting text interleaved with well-formed known calls (or exactly one call).

    ``plain_text`` restricts the text between calls to speakable prose (see PLAIN_TEXT):
    used for creatures whose text goes to a voice. ``max_sentences`` (with ``plain_text``)
    makes that prose whole sentences, at most this many: a short spoken reply that never
    ends mid-sentence (unless ``max_tokens`` cuts it first); ``written`` is the reply so
    far when the model continues one (see :func:`spoken_text_rule`).
    """
    if isinstance(fmt, BracketFormat):
        make, shared = _bracket_call, _BRACKET
    elif isinstance(fmt, XmlFormat):
        make, shared = _xml_call, _XML
    else:
        raise FormatError(
            f"The '{fmt.name}' format has no text grammar: its calls travel as API tool "
            "calls, so constrain them with the tools' JSON schemas instead."
        )
    if plain_text and max_sentences:
        shared = {**shared, "text": spoken_text_rule(max_sentences, written), **_SENTENCES}
    elif plain_text:
        shared = {**shared, "text": PLAIN_TEXT}
    b = _Builder()
    b.add("root", "")
    names = [
        make(b, i, spec) for i, spec in enumerate(sorted(fmt.specs.values(), key=lambda s: s.name))
    ]
    if not names:
        if not allow_text:
            raise FormatError("A calls-only grammar needs at least one known call.")
        b.rules["root"] = "text"
        return b.render(shared)
    b.add("call", " | ".join(names))
    # calls-only: exactly one call and nothing after it, so generation stops at its close
    b.rules["root"] = "text ( call text )*" if allow_text else "call"
    return b.render(shared)


@dataclass(frozen=True, slots=True)
class ValueFrame:
    """The fixed text around the one value a calls-only creature writes.

    When every reply must be exactly one call of one tool whose only argument is a line of
    free text or one of a few fixed values, all but that value is known in advance. The model
    is asked for the value alone: the call's opening is given as the start of its reply
    (evaluated with the prompt, about half the cost per token of generating it) and the
    runtime adds the closing instead of waiting for the model to write it. ``grammar``
    constrains the value.
    """

    call: str
    field: str
    prefix: str
    suffix: str
    grammar: str
    choices: tuple[str, ...] = ()  # the allowed values, when the value is a fixed choice

    @property
    def end(self) -> str:
        """The character that ends the value (the suffix's first): the model writes it to say
        it is done, after which the grammar allows nothing more, so generation stops."""
        return self.suffix[:1]

    def close(self, value: str) -> str:
        """What to add after the generated ``value`` to complete the call."""
        return self.suffix[1:] if value.endswith(self.end) else self.suffix


_SENTINEL = "\x00value\x00"
# attribute values as the xml parser reads them, capped like other one-line values
_XML_ATTR = r'( [^"&<\n] | ent )' + f"{{0,{MAX_LINE_CHARS}}}"


def value_frame(fmt: CallFormat) -> ValueFrame | None:
    """The frame of a format with one call of one argument that is a line of text or a
    choice among fixed values; None when that is not the case."""
    if len(fmt.specs) != 1:
        return None
    spec = next(iter(fmt.specs.values()))
    fields = _fields(spec)
    if len(fields) != 1:
        return None
    fname, kind, _ = fields[0]
    if isinstance(fmt, BracketFormat):
        rule, shared = "bline", _BRACKET
    elif isinstance(fmt, XmlFormat):
        rule, shared = "xattr", {**_XML, "xattr": _XML_ATTR}
    else:
        return None
    choices: tuple[str, ...] = ()
    if kind.kind == "choice":
        rule = _scalar(kind) or rule  # one of the allowed values, written as the format does
        choices = tuple("true" if v is True else "false" if v is False else str(v)
                        for v in map(_plain, kind.choices))
    elif kind.kind != "str" or is_multiline(spec, fname):
        return None
    prefix, found, suffix = fmt.render_call(spec.name, {fname: _SENTINEL}).partition(_SENTINEL)
    if not found:
        return None
    if not suffix:
        return None
    b = _Builder()
    b.add("root", f"{rule} {gbnf_literal(suffix[0])}")
    return ValueFrame(spec.name, fname, prefix, suffix, b.render(shared), choices)


__all__ = [
    "MAX_FRACTION_DIGITS",
    "MAX_INT_DIGITS",
    "MAX_LINE_CHARS",
    "PLAIN_TEXT",
    "ValueFrame",
    "gbnf_literal",
    "grammar_for",
    "is_multiline",
    "sentences_left",
    "spoken_text_rule",
    "value_frame",
]
