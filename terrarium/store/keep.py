"""What the user asks to be kept: "remember that …", "don't let me forget …", "note …".

"Remember that my locker is 42." is worded as a command, so it was never taken for a
statement: it was never a note, and "What's my locker number?" two turns later found
nothing. The request to keep it is only a frame around a statement; :func:`kept` gives the
statement inside ("My locker is 42.") and :func:`terrarium.store.subjects.is_statement` and
:func:`terrarium.store.subjects.strip_opening` read the utterance as that statement. Read by
form, not by the fact kept: a frame of keeping (remember, note, keep in mind, don't forget,
make a note, "remind me … that"), then a clause that tells something ("that …", or one
opening with the user or an article, with a verb of being, having or doing). "Do you
remember my name?", "Remember when we went to Rome?", "Can you remember where I parked?"
and "Remind me what my name is." ask: nothing is kept from them.
"""

from __future__ import annotations

import functools
import re

__all__ = ["asked_back", "kept"]

_FRAME = re.compile(
    r"^\W*(?:(?:hi|hey|hello|oh|ok|okay|so|and)\b[\s,!.]*)?(?:please\s+)?"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|i(?:\s+need|\s+want|\s+would\s+like|'d\s+like)"
    r"\s+you\s+to\s+)?(?:also\s+)?"
    r"(?P<verb>remember|note(?:\s+down)?|(?:make|keep|take)\s+(?:a\s+)?note(?:\s+of)?|"
    r"(?:write|jot|put)\s+(?:(?:this|that|it)\s+)?down|keep\s+in\s+mind|bear\s+in\s+mind|(?:don't|do\s+not)\s+(?:let\s+me\s+)?"
    r"forget|remind\s+me(?:\s+(?:later|tomorrow|tonight|sometime|some\s+time))?)"
    r"(?:\s+(?:for\s+me|please))?(?P<sep>\s*[:,-]|\s+that\b)?\s+(?P<rest>.+)$", re.I)
"""A frame of keeping at the start, and what follows it."""
_TELL_FRAME = re.compile(
    r"^\W*(?:(?:oh|so|and|hey)\b[\s,]*)?(?:(?:guess\s+what|(?:do\s+)?you\s+know\s+what|"
    r"tell\s+you\s+what|let\s+me\s+tell\s+you|fun\s+fact|believe\s+it\s+or\s+not)"
    r"(?=\s*[:,!-])|(?:can|could|would)\s+you\s+believe|did\s+i\s+(?:ever\s+)?(?:tell|"
    r"mention\s+to)\s+you|have\s+i\s+(?:told|mentioned\s+to)\s+you|i\s+(?:have|had|must)\s+"
    r"to\s+(?:say|tell\s+you))(?P<sep>\s*[:,!-]+|\s+that\b)?\s+(?P<rest>.+)$", re.I)
"""A frame of telling, around a statement: "Did I tell you my son got into Durham?", "Can
you believe my landlord put the rent up?", "Guess what, ..." (a comma or colon after
"guess what", "you know what": "Do you know what my name is?" asks)."""
_EXCLAIM = re.compile(r"^\W*(?:how\s+(?!many\b|much\b|old\b|long\b|far\b|often\b)[a-z]+|"
                      r"what\s+an?(?:\s+[a-z]+){1,2})\s*[,!]+\s+(?P<rest>.+)$", re.I)
"""An exclamation before what is told: "How annoying, my train ...", "What a week, the
boiler at my flat in Hull ..."."""
_TELLS = re.compile(r"^(?:i|i'm|i've|i'll|i'd|my|we|we're|we've|our|the|a|an|this|there|"
                    r"[A-Z][a-z]+(?:'s)?)\b", re.I)
"""A clause that opens with who or what it tells of."""
_ASKS = re.compile(r"^(?:what|where|when|who|whom|whose|which|why|how|if|whether|to)\b",
                   re.I)
"""A clause that asks ("where I parked", "what my name is") or a task ("to call Mum")."""
_VERB = re.compile(r"\b(?:is|are|was|were|am|be|been|i'm|we're|they're|i've|we've|have|"
                   r"has|had|do|does|did|can't|cannot|don't|doesn't|won't|will|\w+(?:ed|es)|"
                   r"got|gets|went|goes|made|makes|took|takes|came|comes|left|won|lost|bought|"
                   r"sold|broke|fell|ran|began|became|found|gave|told|met|caught|drove|rode|"
                   r"keeps?)\b|"
                   r"\b(?:i|we|they|he|she|it)\s+\w+", re.I)
"""A verb in a clause closed by a question mark (a statement, "Can you remember my son's
school is Fairfield?", not a bare noun phrase: "Remember my name?")."""


@functools.lru_cache(maxsize=512)
def kept(text: str) -> str | None:
    """The statement ``text`` asks to be kept ("Remember that my locker is 42." -> "My
    locker is 42."), or frames by telling ("Did I tell you my son got into Durham?", "How
    annoying, my train was cancelled."), or None when it is neither."""
    m = _FRAME.match(text.strip()) or _TELL_FRAME.match(text.strip())
    if m is None:
        m = _EXCLAIM.match(text.strip())
        return _told(m.group("rest")) if m is not None else None
    rest = m.group("rest").strip()
    if _ASKS.match(rest):
        return None
    said_that = m.group("sep") is not None and m.group("sep").strip().lower() == "that"
    remind = m.re is _FRAME and m.group("verb").lower().startswith("remind")
    if remind and not said_that:
        return None  # "Remind me of my name.", "Remind me my sister's age": asked
    if not said_that and not _TELLS.match(rest):
        return None
    if m.re is _FRAME and m.group("sep") is None and (
            m.group("verb").lower().startswith(("write", "jot", "put")) or
            not (_VERB.search(rest) or len(rest.split()) >= 4)):
        return None  # "Write down a poem.", "I want you to remember me.": nothing told
    if rest.rstrip("\"')").endswith("?") and not _VERB.search(rest):
        return None  # "Remember my name?", "Note down my PIN?": asked, nothing told
    return _told(rest)


def _told(rest: str) -> str | None:
    """``rest`` as a statement of its own (a question mark made a full stop), or None when
    it asks (after an exclamation: "How odd, where did I put it?")."""
    rest = rest.strip()
    if _ASKS.match(rest) or not _TELLS.match(rest):
        return None
    rest = re.sub(r"\?[\"')]*$", ".", rest)
    if not rest.endswith((".", "!")):
        rest += "."
    return rest[:1].upper() + rest[1:]


_ASK_FRAME = re.compile(
    r"^\W*(?:(?:sorry|so|ok|okay|oh|um|erm|right|well|wait|hang\s+on|and|but|also|hey|hmm)"
    r"\b[\s,.!-]*)*(?:(?:(?:can|could|would|will|do|did)\s+you\s+(?:still\s+)?)?"
    r"(?:(?P<frame>remind\s+me|remember|recall|tell\s+me\s+again)|tell\s+me|know)"
    r"(?:\s+again)?(?:\s+of)?\b[\s,:-]*)?(?P<rest>.+)$", re.I)
"""What opens a question before what it asks: a word of turning to it ("Sorry,", "So",
"Okay, and") and a frame of asking back ("Remind me,", "Tell me again", "Do you remember",
"Remind me of"; "Tell me", "Do you know" open a question but ask nothing back alone: "Tell
me about dogs.")."""


@functools.lru_cache(maxsize=512)
def asked_back(text: str) -> tuple[str, bool]:
    """``text`` without the words opening it before what it asks ("Sorry, remind me, when's
    the dentist?" -> "when's the dentist?"; "Tell me again what the dog's called." -> "what
    the dog's called"), and whether a frame of asking back was among them (it asks for
    something told though it has no question mark)."""
    m = _ASK_FRAME.match(text.strip())
    if m is None:
        return text, False
    return m.group("rest"), m.group("frame") is not None
