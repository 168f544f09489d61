"""Turn model text into text a voice can say: no markdown, no code, no URLs, no emoji.

A TTS voice reads every character it is given, so ``**bold**`` or a code block would come
out as noise. ``to_speakable`` is a pure function applied per sentence; ``FenceFilter`` runs
on the raw stream first because a fenced code block spans many sentences.

URLs are dropped rather than replaced by "link": a sentence that names a link usually still
reads naturally without it, and the written log keeps the original text.
"""

from __future__ import annotations

import html
import re

_FENCE_BLOCK = re.compile(
    r"^[ ]{0,3}(`{3,}|~{3,})[^\n]*(?:\n.*?(?:^[ ]{0,3}\1[ \t]*$)|.*\Z)", re.M | re.S
)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_REF_DEF = re.compile(r"^[ ]{0,3}\[[^\]]+\]:\s+\S+.*$", re.M)
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto):[^>\s]+>")
_URL = re.compile(r"\b(?:https?://|ftp://|www\.)[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"]")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HTML_BREAK = re.compile(r"<br\s*/?>", re.I)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_HEADING = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.M)
_SETEXT = re.compile(r"^[ ]{0,3}(?:=+|-+)[ \t]*$", re.M)
_RULE = re.compile(r"^[ ]{0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$", re.M)
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)
_BULLET = re.compile(r"^[ \t]*[-*+•][ \t]+(?:\[[ xX]\][ \t]+)?", re.M)
_NUMBERED = re.compile(r"^[ \t]*\d{1,3}[.)][ \t]+", re.M)
_TABLE_SEP = re.compile(
    r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$", re.M
)
_INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.S)
_EM_STAR = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])", re.S)
_EM_UNDER = re.compile(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])", re.S)
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.S)
_EMOJI = re.compile(
    "["
    "\U0001f000-\U0001faff"  # pictographs, emoticons, transport, symbols & extended-A
    "\U00002600-\U000027bf"  # misc symbols and dingbats
    "\U00002b00-\U00002bff"  # arrows and stars used as emoji
    "\U0001f1e6-\U0001f1ff"  # regional indicators (flags)
    "\U0000fe00-\U0000fe0f"  # variation selectors
    "\U0000200d"  # zero-width joiner
    "\U000020e3"  # combining keycap
    "\U000e0020-\U000e007f"  # tag characters
    "]+"
)
_STRAY = re.compile(r"[`*#|]|(?<!\w)_+(?!\w)|~~|\\(?=[\\`*_{}\[\]()#+\-.!|])")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]|\{\s*\}")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?)\]。！？、])")
_REPEATED_COMMA = re.compile(r"(?:,\s*){2,}")
_LINE_END_PUNCT = tuple(".!?,;:…。！？")


def to_speakable(text: str) -> str:
    """Strip markdown, code, HTML, URLs and emoji; collapse whitespace. Pure and cheap."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _FENCE_BLOCK.sub("\n", text)
    text = _HTML_COMMENT.sub(" ", text)
    text = _HTML_BREAK.sub("\n", text)
    text = _IMAGE.sub(" ", text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _REF_DEF.sub("", text)
    text = _AUTOLINK.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _HTML_TAG.sub(" ", text)
    text = html.unescape(text)
    text = _lines_to_prose(text)
    text = _INLINE_CODE.sub(lambda m: m.group(2).strip(), text)
    for _ in range(2):  # nested emphasis: ***both*** or **bold _and_ italic**
        text = _STRONG.sub(r"\2", text)
        text = _EM_STAR.sub(r"\1", text)
        text = _EM_UNDER.sub(r"\1", text)
        text = _STRIKE.sub(r"\1", text)
    text = _EMOJI.sub(" ", text)
    text = _STRAY.sub(" ", text)
    text = _EMPTY_BRACKETS.sub(" ", text)
    text = " ".join(text.split())
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _REPEATED_COMMA.sub(", ", text)
    return text.strip(" ,;:")


def _lines_to_prose(text: str) -> str:
    """Line-level markdown (headings, lists, quotes, tables, rules) becomes plain lines.

    A line that was a block element and has no closing punctuation gets a period, so the
    voice pauses between list items instead of running them together.
    """
    text = _RULE.sub("", text)
    text = _TABLE_SEP.sub("", text)
    text = _SETEXT.sub("", text)
    out: list[str] = []
    for raw in text.split("\n"):
        line = raw
        block = False
        for pattern in (_QUOTE, _HEADING, _BULLET, _NUMBERED):
            new = pattern.sub(r"\1" if pattern is _HEADING else "", line)
            if new != line:
                block = True
                line = new
        if "|" in line and line.strip().count("|") >= 2:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            line = ", ".join(c for c in cells if c)
            block = True
        line = line.strip()
        if block and line and not line.endswith(_LINE_END_PUNCT):
            line += "."
        out.append(line)
    return "\n".join(out)


class FenceFilter:
    """Drop fenced code blocks from a text stream, split-invariantly.

    Only the start of a line is held back (until it is known whether it opens or closes a
    fence); everything else passes through at once so speech is not delayed.
    """

    def __init__(self) -> None:
        self._in_fence = False
        self._marker = ""
        self._held = ""
        self._holding = True  # at a line start, deciding
        self._dropping = False

    @property
    def in_code(self) -> bool:
        """Whether the stream is inside a code block right now."""
        return self._in_fence

    def feed(self, delta: str) -> str:
        """Return the part of ``delta`` (plus held text) that is not code."""
        out: list[str] = []
        for ch in delta:
            if self._holding:
                self._held += ch
                out.append(self._decide_line_start(final=False))
            else:
                if not self._dropping:
                    out.append(ch)
                if ch == "\n":
                    self._holding = True
                    self._dropping = False
        return "".join(out)

    def flush(self) -> str:
        """End of stream: release held text unless it belongs to code."""
        out = self._decide_line_start(final=True) if self._holding and self._held else ""
        self.reset()
        return out

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]

    def _decide_line_start(self, *, final: bool) -> str:
        held = self._held
        body = held.lstrip(" ")
        indent = len(held) - len(body)
        ended = held.endswith("\n")
        fence = _fence_marker(body) if indent <= 3 else ""
        if fence and (ended or final or len(body) > len(fence) or not _could_grow(body)):
            return self._fence_line(fence, ended)
        if not ended and not final and indent <= 3 and _fence_prefix(body):
            return ""  # could still become a fence line: keep holding
        self._held = ""
        if self._in_fence:
            self._holding = ended
            self._dropping = not ended
            return ""
        self._holding = ended
        return held

    def _fence_line(self, fence: str, ended: bool) -> str:
        self._held = ""
        self._holding = ended
        self._dropping = not ended
        if not self._in_fence:
            self._in_fence, self._marker = True, fence
            return ""
        if fence[0] == self._marker[0] and len(fence) >= len(self._marker):
            self._in_fence, self._marker = False, ""
            return "\n\n"  # the code block stood between paragraphs
        return ""


def _fence_marker(body: str) -> str:
    m = re.match(r"`{3,}|~{3,}", body)
    return m.group(0) if m else ""


def _fence_prefix(body: str) -> bool:
    """Whether ``body`` could still turn into a fence line (``''``, `` ` ``, `` `` ``)."""
    return body == "" or (set(body) <= {"`"} or set(body) <= {"~"})


def _could_grow(body: str) -> bool:
    """A run of only backticks/tildes may still get longer."""
    return set(body) <= {"`"} or set(body) <= {"~"}


__all__ = [
    "FenceFilter",
    "to_speakable",
]
