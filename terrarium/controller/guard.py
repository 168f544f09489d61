"""A spoken reply's guard: what the runtime says itself, and never the user's words back.

SmolLM2-135M answers "Hi, my name is Ada." with "Hello, my name is Ada." and "Thanks,
goodbye." with condolences. For an intent whose apt reply it knows (a greeting, thanks, a
goodbye, a statement) the runtime speaks that reply itself (``replies``). Every other reply
is held a sentence at a time and checked before it reaches the voice: a sentence that makes
the reply an echo of the user's words (60 % of them, in order) is never spoken; text with
no sentence end when the reply stops is dropped; a reply left with nothing says what the
runtime knows (``said_instead``). With ``release_first_clause`` the first sentence is let
through from its start once that start looks safe (:func:`safe_start`), the voice given its
first piece only (:mod:`.piece_watch`), the rest held and judged as it grows and, if it goes
wrong, ended at a clause (:mod:`.clause_end`) or said otherwise (:mod:`.said_otherwise`).
An announcement is spoken to its kind (:mod:`.announce`); a lead-in that repeats the user up
to a colon is dropped there (:func:`~.echo.echo_lead`). The whole story: docs/memory.md,
"When text is let through".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from terrarium.controller import reply_words
from terrarium.controller.announce import kind_end, left_out
from terrarium.controller.clause_end import clause_end
from terrarium.controller.echo import (
    EARLY_WORDS,
    ECHO_SHARE,
    MIN_WORDS,
    START_WORDS,
    after_lead,
    echo_lead,
    echo_left,
    is_echo,
    safe_start,
)
from terrarium.controller.guard_checks import fact_words, self_talk, speaks_as_user, told_back, uses
from terrarium.controller.guard_loops import LoopWatch, repeats, said_again
from terrarium.controller.piece_watch import PieceWatch
from terrarium.controller.pro_form import do_that
from terrarium.controller.reply_words import answer_only, invents, lcs, may_restate, words
from terrarium.controller.said_back import second_person
from terrarium.controller.said_otherwise import said_otherwise
from terrarium.controller.said_short import keep_in_mind, note_first, said_instead
from terrarium.controller.yes_no_end import yes_no_end
from terrarium.formats.grammar import sentences_left
from terrarium.store.clauses import sentences
from terrarium.store.spoken import punctuated
from terrarium.store.subjects import is_statement, mentions_user
from terrarium.voice.segment import SegmenterConfig, SentenceSegmenter

__all__ = ["ECHO_SHARE", "MIN_WORDS", "START_WORDS", "LoopWatch", "ReplyGuard",
           "answer_only", "echo_left", "fact_words", "invents", "is_echo", "keep_in_mind", "lcs",
           "repeats", "safe_start", "second_person", "self_talk", "speaks_as_user", "uses",
           "words"]

_PARTIAL_WORD = re.compile(r"[A-Za-z0-9']+$")
_STOPS = frozenset({"it speaks as the user", "it talks about itself"})
"""What stops a released sentence even with no clause end to stop at (a fragment is heard)."""
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)")
_ASKS = frozenset({"question", "request"})
@dataclass(slots=True)
class ReplyGuard:
    """One turn's guard: the user's words and intent, read from the incoming message."""

    user: str
    intent: str | None
    fixed: str | None  # the reply the runtime speaks itself, or None: the model answers
    echo_reply: str
    facts: str = ""  # the user's facts (or notes) the reply was given, in the user's voice
    release_first_clause: bool = False  # a safe first sentence is spoken from its start
    unknown_reply: str | None = None  # "I don't know that yet.": see :meth:`fallback`
    max_sentences: int | None = None  # the grammar ends the reply after this many (None: no end)
    about_user: bool = False  # the user asks about themselves: the reply must use the notes
    mentions_user: bool = False  # the user speaks of themselves: never called a chatbot
    advice: str = ""  # advice asked after telling something: see :meth:`_advise`
    _advised: str = ""  # the advice's told fact, once said
    released: str = ""  # the start of the first sentence, when it was released early
    _held: str = ""
    _written: str = ""  # everything the model wrote this turn
    _spoken: str = ""
    _sentences: int = 0  # sentences checked so far (spoken or not)
    _open: bool = False  # the sentence under way was released early: it is spoken whole
    _closed: bool = False  # the reply is over: nothing more of it is spoken
    _stopped: bool = False  # a loop, or a released sentence gone wrong: stop reading it
    _stop_why: str = ""
    _settled: bool = False  # the fallback was said before the model's end: see _last_fails
    _bet: bool | None = None  # safe_start of the sentence under way, once decided
    _bet_for: int = -1  # ... for which sentence (its index)
    _bet_words: int = 0  # ... judged at how many complete words
    _open_text: str = ""  # what was spoken of the sentence released at its start
    # the voice's segmenter (its first piece): a sentence released at its start is given to
    # the voice up to its first piece, the rest held to its end (see _through); None: all
    first_piece: SegmenterConfig | None = None
    cuts_piece: bool = False  # the voice cuts its first piece when told (take_cut)
    _piece: PieceWatch | None = None  # the voice's cut of the released sentence
    _back: str = ""  # ... and the words past its first piece kept back (the held text's start)
    _kind: int = 0  # ... an announcement's, spoken to its kind: the kind's end (announce.py)
    _let_on: bool = False  # it repeats the user, with no clause end to stop at: spoken on
    ask_again: int = 0  # ... or, with no phrase to leave out, asked again first (ask_again.py)
    _asked: int = 0  # times it was
    _asking: bool = False  # it is being asked again: the model's stream must end here
    _fact_words: frozenset[str] = frozenset()
    _told: str = ""  # the notes about what the user asks (the others may be about anything)
    _loops: LoopWatch = field(default_factory=LoopWatch)
    notices: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._fact_words = fact_words(self.user, self.facts)
        self._told = reply_words.about_question(self.facts, self.user)

    @classmethod
    def for_turn(cls, spec: Any, payloads: Sequence[dict[str, Any] | None]) -> ReplyGuard | None:
        """The guard for a turn whose inputs carry ``spec.words_field`` (None otherwise)."""
        if spec is None:
            return None
        user = " ".join(str(p[spec.words_field]) for p in payloads
                        if p and isinstance(p.get(spec.words_field), str))
        intents = [str(p[spec.intent_field]) for p in payloads
                   if p and p.get(spec.intent_field) is not None]
        if not user.strip() and not intents:
            return None
        intent = intents[-1] if intents else None
        fixed = spec.replies.get(intent) if intent is not None else None
        facts = " ".join(str(p[spec.facts_field]) for p in payloads
                         if spec.facts_field and p and isinstance(p.get(spec.facts_field), str))
        if fixed is None and intent in _ASKS and is_statement(punctuated(user)):
            # told, not asked ("Call me Sam, please." taken for a request): acknowledged
            fixed = spec.replies.get("statement")
        notes = sentences(facts)
        mine = (fixed is None and spec.unknown_reply is not None
                and reply_words.asked_about_user(user, notes))
        if mine and reply_words.cannot_answer(user, notes):
            fixed = spec.unknown_reply  # asked about themselves, and nothing told answers it
        elif mine and spec.say_note:  # what they told about it, at once (said_short.py)
            fixed = note_first(user, notes, is_echo)
        advice = keep_in_mind(user, notes) if fixed is None and not mine else ""
        return cls(user=user, intent=intent, fixed=fixed, echo_reply=spec.echo_reply,
                   facts=facts.strip(), release_first_clause=spec.release_first_clause,
                   unknown_reply=spec.unknown_reply, about_user=mine,
                   mentions_user=mentions_user(user), advice=advice)

    @property
    def checks(self) -> bool:
        """Whether the user's words are long enough for an echo to be possible."""
        return len(words(self.user)) >= MIN_WORDS

    @property
    def stopped(self) -> bool:
        """The model is stuck in a loop, or a sentence released at its start went wrong:
        the rest of the reply would never be spoken."""
        return self._stopped

    @property
    def settled(self) -> bool:
        """The reply's fallback was said before the model's end (its last sentence could
        not be spoken): the model need not be read further; nothing spoken is unfinished."""
        return self._settled

    @property
    def checked(self) -> int:
        """Sentences judged so far, spoken or not (read only): a first sentence dropped moves
        it on, and early synthesis starts again on the next one (``TurnOutput.say``)."""
        return self._sentences

    @property
    def held(self) -> str:
        """The model's text held now, not yet judged: the start of the sentence under way."""
        return "" if self._closed else self._held

    @property
    def asking(self) -> bool:
        """The model is to be asked again (:meth:`ask_from`): its stream need not be read."""
        return self._asking

    def ask_from(self) -> str:
        """What the model asked again continues (all that was spoken); what it wrote after
        that is forgotten, and its new text is judged afresh as the same sentence's rest."""
        self._asking, self._held, self._written, self._let_on = False, "", self._spoken, False
        self._loops = LoopWatch()
        self._loops.feed(self._spoken)
        return self._spoken

    @property
    def stop_reason(self) -> str:
        """Why the reply was stopped (``stopped``), in a few words; "" when it was not."""
        return self._stop_why

    def feed(self, text: str) -> str:
        """The part of the model's text that may be spoken now: whole checked sentences,
        and the first spoken sentence from its start once :meth:`_release_now` lets it
        through (then through as it comes, unless what follows speaks as the user or of
        itself: the reply stops there, as at a loop)."""
        if self._closed or self._asking:
            return ""
        out = self._advise()
        start = len(self._written)
        self._written += text
        loop = self._loops.feed(text)
        if loop >= 0:  # keep only what came before the loop, and stop
            text = text[:max(0, loop - start)]
        self._held += text
        while not self._closed:
            m = _SENTENCE_END.search(self._held)
            if self._open:  # released at its start: see _through
                out += self._through(m)
                if (m is None and self._open) or self._asking:
                    break
                continue
            lead = (echo_lead(self.user, self._held, None if m is None else m.start())
                    if ":" in self._held and self.checks and not self._spoken.strip() else None)
            if lead is not None:  # "Here's a tip for sleeping better:" dropped at its colon
                if lead < 0:
                    break  # the colon's sentence has no word yet: wait for one
                self._sentences += 1
                self.notices.append(f"not spoken, it repeats the user (up to its colon): "
                                    f"{self._held[:lead].strip()!r}")
                self._held = after_lead(self._held[lead:])
                continue
            if m is None:
                if not self._release_now():
                    why = self._last_fails()
                    if why is not None:  # nothing can be spoken now: the fallback at once
                        self._settled = True
                        self.notices.append(f"not spoken, {why} (the last sentence the reply "
                                            f"may write): {self._held.strip()!r}")
                        return out + self._end()
                    break
                self._open, self._open_text, self._let_on = True, "", False
                self._piece = (PieceWatch(SentenceSegmenter(self.first_piece), self.cuts_piece)
                               if self.first_piece is not None else None)
                self.released = self._held[:self._kind or len(self._held)].strip()
                out += self._give_kind() if self._kind else ""
                continue
            sentence, self._held = self._held[:m.end()], self._held[m.end():]
            self._sentences += 1
            out += self._pass(sentence)
            if self._stopped:  # the sentence would have made the spoken reply a loop
                return out + self._stop("the reply repeats itself", sentence)
            out += self._advise()
        if loop >= 0 and not self._closed:
            out += self._stop("the reply repeats itself", self._written[loop:])
        return out

    def _through(self, m: re.Match[str] | None) -> str:
        """The sentence released at its start, as it comes: given to the voice until the
        voice has its first piece (``first_piece``; with none, all of it as it comes), the
        rest held to the sentence's end, judged as it grows (on complete words: "Sam" may
        still become "Sample"). A rest that speaks as the user or of itself stops the reply
        there; one that repeats the user, or (asked about the user) names what they never
        told, ends the sentence at its last clause boundary when that makes a sentence
        (:meth:`_stop`), and is spoken on as before when none does."""
        if self._kind:  # an announcement spoken to its kind (announce.py)
            said = self._from_kind(m)
            if said is not None:
                return said
        cut = len(self._held) if m is None else m.end()
        text = self._open_text + self._held[:cut]
        why = self._goes_wrong(text if m is not None else _PARTIAL_WORD.sub("", text))
        if why is not None:
            ending = self._clause_end(cut)
            if ending is not None or why in _STOPS:
                return self._stop(why, self._open_text + self._held, ending)
            self._let_on = True  # no clause end to stop at: the sentence goes on as it was
            if not (why == "it repeats the user" and self._may_ask()):  # else: at its end
                self.notices.append(f"spoken on, no clause end before where {why}"
                                    f"{f' (asked again {self._asked} times)' * (self._asked > 0)}"
                                    f": {text!r}")
        if m is None and self._piece is not None and self._piece.out:
            return ""  # the voice has its first piece: the rest waits for the sentence's end
        rest = self._without_phrase(cut) if m is not None and self._let_on else None
        if rest is None and m is not None and self._let_on and self._may_ask() and self.checks \
                and is_echo(self.user, text):  # the model continues what was spoken, steered
            self._asked, self._asking = self._asked + 1, True
            self.notices.append(f"asked again, it repeats the user with no clause end or "
                                f"phrase to leave out: {text.strip()!r}")
            return ""
        given, self._held = self._held[:cut] if rest is None else rest, self._held[cut:]
        said = self._give(given, more=m is None)
        if m is not None:
            self._open, self._kind = False, 0
            self._sentences += 1
        return said

    def _give_kind(self) -> str:  # an announcement's start to its kind: the voice's first piece
        text, self._held = self._held[:self._kind], self._held[self._kind:]
        said = self._give(text)  # the voice's own cut, if within the kind
        self._piece.cut, self._piece.out = not self._piece.out, True  # type: ignore[union-attr]
        return said

    def _from_kind(self, m: re.Match[str] | None) -> str | None:
        """An announcement spoken to its kind, its rest held until it shows where it goes
        (:func:`left_out`): "": held; None: judged as any sentence released at its start."""
        full, done = self._open_text + self._held, len(self._open_text)
        cut = left_out(self.user, full, done, None if m is None else (done + m.start(),
                                                                       done + m.end()))
        if cut is None:
            return "" if m is None else None
        self.notices.append(f"said to its kind, the rest repeats the user: {full[:cut[0]]!r}")
        said = self._give(full[done:self._kind] + cut[1])
        self._held, self._open, self._kind, self._sentences = cut[2], False, 0, self._sentences + 1
        return said

    def _may_ask(self) -> bool:
        """Tries are left, and the voice has none of the released sentence's rest (it has
        its first piece: the rest is held to the sentence's end)."""
        return self._asked < self.ask_again and self._piece is not None and self._piece.out

    def _give(self, text: str, *, more: bool = False) -> str:
        """Give the voice ``text`` of the sentence released at its start (:class:`PieceWatch`)."""
        piece, cut = self._piece, len(text)  # past the voice's first piece (``more``): held
        offered = text if self._spoken.strip() else text.lstrip()
        cut -= piece.give(offered, more=more) if piece else 0
        text, self._back = text[:cut], text[cut:]
        self._held = self._back + self._held
        self._open_text += text
        return self._speak(text)

    def take_cut(self) -> bool:
        """The voice is to cut its first piece now (``TTSOutput.cut_first_piece``; once)."""
        return self._piece is not None and self._piece.take_cut()

    def _without_phrase(self, cut: int) -> str | None:
        """The rest of the sentence released at its start, whole now (held up to ``cut``),
        that repeats the user with no clause end to stop at, said otherwise
        (:func:`said_otherwise`); None: spoken on."""
        if self._piece is None or not self._piece.out:
            return None  # all of it was given to the voice as it came
        text = self._open_text + self._held[:cut]
        said = said_otherwise(text, len(self._open_text), self._back, self.user, self._fine,
                              echo=self.checks and is_echo(self.user, text))
        if said is not None:
            self._let_on = False
            self.notices.append(f"said {said[1]}: {(self._open_text + said[0]).strip()!r}")
        return None if said is None else said[0]

    def _fine(self, text: str) -> bool:
        return self._why_not(text) is None and repeats(text) < 0

    def _goes_wrong(self, text: str) -> str | None:
        """Why the sentence released at its start, so far ``text``, may not go on."""
        if self._let_on:
            return self._wrong(text, whole=False)
        return self._why_not(text)

    def _why_not(self, text: str) -> str | None:
        """:meth:`_goes_wrong` of ``text`` whether or not it is spoken on already."""
        wrong = self._wrong(text, whole=False)
        if wrong is not None:
            return wrong
        if self.checks and is_echo(self.user, text):
            return "it repeats the user"
        if self.about_user and invents(text, self.facts, self.user):
            return "it says what the user never told"
        return None

    def _clause_end(self, upto: int | None = None) -> str | None:
        """What ends the sentence released at its start (the held text up to ``upto``) at
        its last clause boundary, with nothing wrong before it (:func:`clause_end`), or
        None."""
        if not self._open or self._closed:
            return None
        # cut before a word, what it keeps is complete words, however the last one ends;
        # never inside the words kept back past the voice's piece (ended as they were before)
        end = clause_end(self._open_text + self._held[:upto], len(self._open_text + self._back),
                         lambda s: self._goes_wrong(s) is None and repeats(s) < 0)
        return None if end is None else self._back + end

    def end_unfinished(self) -> str:
        """The reply stopped before the end of the sentence released at its start (the
        model's ``max_tokens``): what ends it at its last clause boundary ("" when none
        does; the voice then drops its unfinished words). Called before the voice drops
        them (``TurnOutput.drop_unfinished``)."""
        ending = self._clause_end()
        if ending is None:
            return ""
        said = self._end_open(ending, "its end never came")
        return said + self._end()

    def _end_open(self, ending: str, why: str) -> str:
        """Say ``ending`` (:meth:`_clause_end`): the sentence released at its start ends."""
        whole = (self._open_text + ending).strip()
        self.notices.append(f"ended at a clause, {why}: {whole!r}")
        said = self._give(ending)
        self._open, self._held, self._kind = False, "", 0
        self._sentences += 1
        return said

    def _advise(self) -> str:
        """Advice asked with something the user told (``advice``): what they told is said
        first, as soon as the model starts ("Keep in mind: You're vegetarian."), so the
        reply takes it into account whatever the model writes; the model's first sentence
        is then judged whole (never released at its start: something is spoken already),
        and the reply ends after it (two sentences)."""
        if self._advised:
            return "" if self._spoken.strip() == self._advised else self._settle()
        if not self.advice or self._closed or self._spoken.strip():
            return ""
        self.notices.append(f"said first, what the advice must take into account: "
                            f"{self.advice!r}")
        self._advised = self.advice
        return self._speak(self.advice)

    def _settle(self) -> str:
        self._settled = self._closed = True
        return ""

    def _stop(self, why: str, what: str, ending: str | None = None) -> str:
        """Stop the reply here (a loop, or a released sentence going wrong): the model need
        not be read further; what was complete stays spoken, and a sentence released at its
        start ends at its last clause boundary when that makes a sentence (``ending``:
        :meth:`_clause_end`)."""
        ending = ending if ending is not None else self._clause_end()
        said = self._end_open(ending, why) if ending is not None else ""
        self._stopped = True
        self._stop_why = why
        self.notices.append(f"stopped, {why}: {what.strip()!r}")
        return said + self._end()

    def _release_now(self) -> bool:
        """Whether the first spoken sentence, still without its end, may be spoken from here.

        Judged on its complete words: they must pass what can be told of a sentence from its
        start (:meth:`_wrong`; for a question about the user, they must already use what the
        user told) and :func:`safe_start` (the echo). A first sentence dropped does not
        count: the next one is the first spoken."""
        if self._spoken.strip() or not self._held.strip():
            return False
        head = _PARTIAL_WORD.sub("", self._held)
        if self._wrong(head) is not None:
            return False
        if reply_words.announces(head):  # judged whole, or spoken to its kind (a cut voice's)
            may = self.release_first_clause and self.checks and self.cuts_piece and self.first_piece
            self._kind = (kind_end(self._held) or 0) if may and not self.about_user else 0
            return self._kind > 0
        if self.about_user and not (self.release_first_clause
                                    and uses(head, self._told, self.user)
                                    and not invents(head, self.facts, self.user)
                                    and not reply_words.held_back(head, self._told,
                                                                  self.facts, self.user)):
            return False  # spoken early only once it uses what was told about the question
        if not self.checks:  # too short to be echoed: spoken as it comes (but for a loop)
            return True
        return self.release_first_clause and self._safe_start(head)

    def _last_fails(self) -> str | None:
        """Why the sentence under way will not be spoken, when that is known already and it
        is the last one the grammar lets the reply write, with nothing spoken before it
        (None otherwise): the reply can then say nothing of the model's, so its fallback
        need not wait for the model's end (first audio). Judged on complete words, by the
        checks that hold for the whole sentence once they hold for a part (the echo and
        :meth:`_wrong`), so the reply says what it would have said at its end."""
        if (self.max_sentences is None or self._spoken.strip()
                or sentences_left(self.max_sentences, self._written) != 1):
            return None
        head = _PARTIAL_WORD.sub("", self._held)
        if is_echo(self.user, head) and not may_restate(self.user, head):
            return "it repeats the user"
        if not head.strip() or self._told_back(head):
            return None  # it may yet be said to the user in their words (:meth:`_told_back`)
        return self._wrong(head)

    def _safe_start(self, head: str) -> bool:
        """:func:`safe_start` of the sentence under way, judged at each new count of its
        complete words up to ``START_WORDS`` and decided for good then: a longer start
        repeats no fewer of the user's words, so a start refused then is refused for good
        (and the guard, on the event loop between two tokens, need not count again at every
        token)."""
        if self._bet_for != self._sentences:
            self._bet_for, self._bet, self._bet_words = self._sentences, None, 0
        n = len(words(head))
        if self._bet is None and n != self._bet_words and n >= EARLY_WORDS:
            self._bet_words = n
            safe = safe_start(self.user, head, sooner=not self.about_user)
            self._bet = True if safe else (False if n >= START_WORDS else None)
        return bool(self._bet)

    def _wrong(self, text: str, *, whole: bool = True) -> str | None:
        """Why ``text`` may not be spoken, judged on any part of a sentence (once a part
        has it, the whole sentence has it): it speaks as the user, or, asked about the
        user or speaking of themselves, it talks about itself (``whole``: see
        :func:`self_talk`; False for a sentence already heard in part). None: nothing yet."""
        if speaks_as_user(text, self._fact_words):
            return "it speaks as the user"
        if (self.about_user or self.mentions_user) and self_talk(text, whole=whole):
            return "it talks about itself"
        return None

    def _told_back(self, text: str) -> bool:
        """:func:`told_back`, asked about themselves, with nothing spoken yet."""
        return (self.about_user and bool(self.facts) and not self._spoken.strip()
                and not self_talk(text) and told_back(text, self.facts, self.user))

    def _speak(self, text: str) -> str:
        if not self._spoken.strip():
            text = text.lstrip()  # the reply starts here, not at a dropped echo
        elif self._advised and not self._spoken[-1:].isspace() and not text[:1].isspace():
            text = f" {text}"  # after the advice's told fact, said first
        self._spoken += text
        return text

    def _pass(self, sentence: str) -> str:
        said = sentence.strip()
        if is_echo(self.user, self._spoken + sentence):
            fine = lambda s: not is_echo(self.user, self._spoken + s)  # noqa: E731
            short = answer_only(self.user, sentence) or yes_no_end(  # "No, cats kept … do not."
                sentence.strip(), 0, fine) or do_that(sentence.strip(), 0, self.user, fine)
            if short is None or is_echo(self.user, self._spoken + short):
                self.notices.append(f"not spoken, it repeats the user: {said!r}")
                return ""
            self.notices.append(f"said without the question it repeats: {said!r}")
            sentence, said = (" " if sentence[:1].isspace() else "") + short, short
        wrong = self._wrong(sentence)
        if wrong is not None and self._told_back(sentence):
            # "I'm following a keto diet." to "Which diet am I following?": what was told,
            # in the user's voice; said to them ("You're following a keto diet.")
            self.notices.append(f"said to the user, it spoke as them: {said!r}")
            sentence = (" " if sentence[:1].isspace() else "") + second_person(said)
            said = sentence.strip()
            wrong = self._wrong(sentence)
        if wrong is not None:
            self.notices.append(f"not spoken, {wrong}: {said!r}")
            return ""
        if self._spoken.strip() and (said_again(self._spoken, sentence) or (
                not self.about_user and reply_words.unsure(sentence))):  # takes it back
            self.notices.append(f"not spoken, it was said already or is unsure: {said!r}")
            return ""
        if self.about_user and not self._spoken.strip() and not uses(
                sentence, self._told or self.facts, self.user):
            self.notices.append(f"not spoken, it does not use what the user told: {said!r}")
            return ""
        why = reply_words.misanswers(sentence, self._told or self.facts, self.user,
                                     first=not self._spoken.strip()) if self.about_user else None
        if why is not None:
            self.notices.append(f"not spoken, {why}: {said!r}")
            return ""
        if self.about_user and invents(sentence, self.facts, self.user):
            self.notices.append(f"not spoken, it says what the user never told: {said!r}")
            return ""
        if self._would_loop(sentence):
            self.notices.append(f"not spoken, the reply would repeat itself: {said!r}")
            self._stopped = True  # feed stops reading the model here
            return ""
        return self._speak(sentence)

    def _would_loop(self, text: str) -> bool:
        """Whether speaking ``text`` after what was spoken makes a loop (:func:`repeats` of
        the whole). The loop watch reads the model's words only; what is spoken also holds
        the runtime's own (the advice said first, a sentence said to the user), and a
        loop's copies may fall on both sides. Judged once a sentence, in :meth:`_pass`: a
        sentence released at its start is the first spoken, the model's words as written,
        which the loop watch reads already."""
        return bool(self._spoken.strip()) and repeats(self._spoken + text) >= 0

    def fallback(self) -> str:
        """What the runtime knows to say when nothing of the model's is (:func:`said_instead`)."""
        return said_instead(self.user, self.facts, self.echo_reply,
                            self.unknown_reply if self.about_user else None)

    def _end(self) -> str:
        """Close the reply; one with nothing spoken says :meth:`fallback`."""
        self._closed = True
        self._held = ""
        if self._spoken.strip():
            return ""
        if self._open:
            return ""  # its start was given to the voice: the voice drops the unfinished part
        self._spoken = self.fallback()
        self.notices.append(f"said instead: {self._spoken!r}")
        return self._spoken

    def finish(self) -> str:
        """At the reply's end: held words without a sentence end are dropped, never spoken;
        a reply with nothing checked to say says :meth:`fallback`."""
        if self.fixed is not None:  # the runtime's own reply: nothing was checked
            return ""
        ended = self.end_unfinished() if self._open and not self._closed else ""
        if ended:
            return ended
        rest, self._held = self._held, ""
        if rest.strip() and not self._closed:
            self.notices.append(f"not spoken, no sentence end: {rest.strip()!r}")
        if self._open and not self._closed:
            # released at its start, and the reply stopped before its end (max_tokens): the
            # voice drops the unfinished words, but the start was already given to it
            self.notices.append(f"its start was spoken early, its end never came: "
                                f"{self.released!r}")
        elif self.released and is_echo(self.user, self._spoken):
            self.notices.append(f"spoken although it repeats the user (its start was spoken "
                                f"early): {self.released!r}")
        if self._closed:
            return ""
        self._open = False
        return self._end()

    @property
    def spoken(self) -> str:
        return self._spoken
