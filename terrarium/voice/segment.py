"""Streaming sentence segmentation for speech.

Text arrives token by token while the model is still generating; each complete sentence is
handed to the synthesizer as soon as it is known to be complete, so audio starts early.

Every decision is a pure function of the pending text: a boundary is only declared once
enough look-ahead has arrived to be certain, so feeding a text token by token yields exactly
the sentences that feeding it whole does.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: Characters that may end a sentence.
TERMINATORS = frozenset(".!?…。！？")
#: CJK terminators end a sentence even without a following space.
CJK_TERMINATORS = frozenset("。！？")
#: Characters that may close a sentence after its terminator: quotes, brackets, emphasis.
CLOSERS = frozenset("\"'”’»)]}」』*_`")

#: Words that are never followed by a sentence end (titles, "e.g."), lower case, no dot.
NEVER_FINAL = frozenset(
    {
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "mt",
        "gen",
        "capt",
        "lt",
        "col",
        "sgt",
        "rev",
        "hon",
        "no",
        "nos",
        "fig",
        "figs",
        "vol",
        "approx",
        "dept",
        "e.g",
        "i.e",
        "cf",
        "viz",
        "ca",
        "op",
        "ed",
        "eds",
        "pp",
        "ch",
        "sec",
        "art",
    }
)
#: Abbreviations that end a sentence only when the next word starts like a sentence.
MAYBE_FINAL = frozenset(
    {
        "etc",
        "al",
        "inc",
        "ltd",
        "co",
        "corp",
        "esp",
        "dept",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "min",
        "max",
        "ft",
        "oz",
    }
)
_INITIALISM = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")
_SOFT_BREAK = re.compile(r"[,;:—–](?=\s)")


class SegmenterConfig(BaseModel):
    """Tuning for :class:`SentenceSegmenter`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_chars: int = Field(
        default=10, ge=0, description="Shorter sentences merge with the next one."
    )
    max_chars: int = Field(
        default=220,
        ge=8,
        description="A clause this long without a sentence end is cut and spoken anyway.",
    )

    first_clause_chars: int | None = Field(
        default=None,
        ge=4,
        description="If set, the first piece of an utterance may end at a clause break "
        "(comma, semicolon, colon, dash) once it is this long, so speech starts sooner.",
    )

    first_piece_max_chars: int | None = Field(
        default=None,
        ge=8,
        description="If set, a first piece still without a break at this length is cut at "
        "its last word break, so a long opening clause does not hold back the first audio.",
    )

    @model_validator(mode="after")
    def _min_below_max(self) -> SegmenterConfig:
        if self.min_chars >= self.max_chars:
            raise ValueError("min_chars must be smaller than max_chars")
        return self


class SentenceSegmenter:
    """Cut a stream of text deltas into sentences: ``feed`` as text arrives, ``flush`` at end."""

    def __init__(self, config: SegmenterConfig | None = None, **overrides: int) -> None:
        base = config or SegmenterConfig()
        self.config = base.model_copy(update=overrides) if overrides else base
        if overrides:  # re-validate the combination
            self.config = SegmenterConfig.model_validate(self.config.model_dump())
        self._pending = ""
        self._emitted = False  # the first piece may end early (``first_clause_chars``)

    @property
    def pending(self) -> str:
        """Text received but not yet emitted as a sentence."""
        return self._pending

    def feed(self, delta: str) -> list[str]:
        """Add a text delta; return the sentences it completed (possibly none)."""
        self._pending = (self._pending + delta).lstrip()
        return self._drain(final=False)

    def flush(self) -> list[str]:
        """End of text: return everything still pending as sentences."""
        out = self._drain(final=True)
        self._pending = ""
        return out

    def reset(self) -> None:
        """Forget pending text (after a barge-in)."""
        self._pending = ""

    def cut(self) -> list[str]:
        """End a piece here: what is pending, as one piece (the first piece, told where it
        ends by a writer that keeps the words after it back)."""
        piece, self._pending = self._pending.strip(), ""
        self._emitted = self._emitted or bool(piece)
        return [piece] if piece else []

    def _first_piece_cut(self) -> int | None:
        """An earlier end for the utterance's first piece (clause break, or length cap)."""
        text, cfg = self._pending, self.config
        cap = cfg.first_piece_max_chars
        cut = (first_clause_cut(text, cfg.first_clause_chars, within=cap)
               if cfg.first_clause_chars else None)
        if cut is None and cap is not None and len(text) > cap + 1:
            # one character past the cap: a clause break at the cap itself is known by then
            cut = word_cut(text, cap, cfg.min_chars)
        return cut

    def _drain(self, *, final: bool) -> list[str]:
        out: list[str] = []
        while self._pending:
            cut = next_cut(self._pending, self.config, final=final)
            if not self._emitted:
                early = self._first_piece_cut()
                if early is not None and (cut is None or early < cut):
                    cut = early
            if cut is None:
                break
            sentence = self._pending[:cut].strip()
            self._pending = self._pending[cut:].lstrip()
            if sentence:
                out.append(sentence)
                self._emitted = True
        return out


def first_clause_cut(text: str, min_chars: int, within: int | None = None) -> int | None:
    """End of the first clause at least ``min_chars`` long, if no sentence end comes first.

    A break counts only once the whitespace after it has arrived (``_SOFT_BREAK``), so the
    answer never changes as more text streams in. With ``within`` (the first piece's cap)
    only a break at most that many characters in counts: streamed, a longer opening is cut
    at the cap before its comma arrives, so a text given at once (a sentence the reply
    guard held whole) must be cut there too, not at a comma 40 characters in.
    """
    for m in _SOFT_BREAK.finditer(text):
        if within is not None and m.start() > within:
            return None
        if any(ch in TERMINATORS or ch == "\n" for ch in text[: m.start()]):
            return None
        if spoken_length(text[: m.end()]) >= min_chars:
            return m.end()
    return None


def word_cut(text: str, limit: int, min_chars: int) -> int | None:
    """The last word break within the first ``limit`` characters, or, when none lies past
    ``min_chars`` (a long word across the cap: "Cats are intelligent" at 16), the first
    one after it; None while there is none yet, or a sentence end comes first.

    Depends only on the text up to that break, so the answer is the same however the
    text streams in, once it has arrived.
    """
    if any(ch in TERMINATORS or ch == "\n" for ch in text[:limit]):
        return None  # a sentence end comes first: the ordinary rules apply
    space = _last_space(text, limit, min_chars)
    if space is not None:
        return space
    for i in range(max(limit + 1, min_chars, 1), len(text)):
        if text[i] in TERMINATORS or text[i] == "\n":
            return None
        if text[i].isspace():
            return i
    return None


def next_cut(text: str, config: SegmenterConfig, *, final: bool) -> int | None:
    """End index of the first sentence in ``text``, or None while that is not yet certain.

    ``text`` starts at a sentence start (no leading whitespace). A definite answer never
    changes when more text is appended, which is what makes streaming split-invariant.
    """
    i = 0
    n = len(text)
    while i < n and i < config.max_chars:
        if text[i] not in TERMINATORS:
            if text[i] == "\n":
                verdict = _paragraph_break(text, i, final)
                if verdict is None:
                    return None
                if verdict and spoken_length(text[:i]) >= config.min_chars:
                    return i
            i += 1
            continue
        run_end = i
        while run_end < n and text[run_end] in TERMINATORS:
            run_end += 1
        verdict, end = _decide(text, i, run_end, final)
        if verdict is None:
            return None
        if verdict and spoken_length(text[:end]) >= config.min_chars:
            return end
        i = run_end
    if n > config.max_chars:
        return _soft_cut(text, config)
    if final:
        return n
    return None


def spoken_length(text: str) -> int:
    """Length for the minimum-sentence rule; a CJK character weighs as much as a short word."""
    return sum(3 if ord(ch) >= 0x2E80 else 1 for ch in text.strip())


def _paragraph_break(text: str, i: int, final: bool) -> bool | None:
    """Whether the newline at ``i`` starts a blank line (a paragraph end); None if unknown.

    Unknown while only whitespace follows: the next character decides it.
    """
    j = i + 1
    newlines = 1
    while j < len(text) and text[j].isspace():
        newlines += text[j] == "\n"
        j += 1
    if j == len(text):
        return True if final else None
    return newlines >= 2


def _decide(text: str, start: int, run_end: int, final: bool) -> tuple[bool | None, int]:
    """Whether the terminator run ``text[start:run_end]`` ends a sentence, and where."""
    n = len(text)
    end = run_end
    while end < n and text[end] in CLOSERS:
        end += 1
    run = text[start:run_end]
    if end == n:
        return (True if final else None), end
    if any(ch in CJK_TERMINATORS for ch in run):
        return True, end
    if not text[end].isspace():
        return False, end  # "3.14", "e.g.x", "example.com", "?q=1"
    nxt = end
    while nxt < n and text[nxt].isspace():
        nxt += 1
    if nxt == n:
        return (True if final else None), end
    starter = _starts_sentence(text[nxt])
    if "!" in run or "?" in run:
        return True, end
    if "…" in run or len(run) >= 2:  # ellipsis: a pause unless a new sentence begins
        return starter, end
    word = _word_before(text, start)
    low = word.lower()
    if low in NEVER_FINAL:
        return False, end
    if low in MAYBE_FINAL or _INITIALISM.match(word):
        return starter, end
    if len(word) == 1 and word.isupper():  # a middle initial: "J. Smith"
        return False, end
    if word.isdigit() and len(word) <= 3 and _at_line_start(text, start - len(word)):
        return False, end  # a numbered list marker: "1. Buy milk"
    if text[nxt].islower():
        return False, end
    return True, end


def _starts_sentence(ch: str) -> bool:
    """Whether a character can begin a new sentence (anything but a lower-case letter)."""
    return not ch.islower()


def _word_before(text: str, pos: int) -> str:
    """The token that ends at ``pos`` without leading opening punctuation."""
    j = pos
    while j > 0 and not text[j - 1].isspace():
        j -= 1
    return text[j:pos].lstrip("\"'“‘«([{*_")


def _at_line_start(text: str, pos: int) -> bool:
    j = pos
    while j > 0 and text[j - 1] in " \t":
        j -= 1
    return j == 0 or text[j - 1] == "\n"


def _soft_cut(text: str, config: SegmenterConfig) -> int:
    """Where to cut an over-long clause: last comma-like break, else last space, else hard."""
    window = text[: config.max_chars]
    floor = max(config.min_chars, config.max_chars // 3)
    breaks = [m.end() for m in _SOFT_BREAK.finditer(window) if m.end() >= floor]
    if breaks:
        return breaks[-1]
    space = _last_space(text, config.max_chars, config.min_chars)
    return space if space is not None else config.max_chars


def _last_space(text: str, limit: int, min_chars: int) -> int | None:
    """Index of the last whitespace in ``text[: limit + 1]`` (a word ending exactly at the
    limit still fits), if at least ``min_chars`` in; else None."""
    edge = text[: limit + 1]
    space = max(edge.rfind(" "), edge.rfind("\n"), edge.rfind("\t"))
    return space if space >= max(min_chars, 1) else None


def split_sentences(text: str, config: SegmenterConfig | None = None) -> list[str]:
    """Segment a whole text at once (same result as streaming it)."""
    seg = SentenceSegmenter(config)
    return seg.feed(text) + seg.flush()


__all__ = [
    "CJK_TERMINATORS",
    "CLOSERS",
    "MAYBE_FINAL",
    "NEVER_FINAL",
    "TERMINATORS",
    "SegmenterConfig",
    "SentenceSegmenter",
    "first_clause_cut",
    "next_cut",
    "split_sentences",
    "spoken_length",
    "word_cut",
]
