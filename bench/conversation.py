"""Conversation benchmark: scripted dialogues through the real voice team, every reply scored.

Each dialogue runs through ``examples/voice_assistant`` (router → speaker → Piper) on the
embedded SmolLM2-135M, in a fresh run (its own memory store), and every spoken reply is
scored automatically:

- echo: the reply repeats the user's utterance (≥ 60 % of its words, in order; utterances
  of three words or more, so "Thanks." answered "Thanks!" is not an echo);
- recall: for a turn that asks for something the user said earlier (name, preference,
  place, number), one of the expected words appears in the reply;
- complete: the spoken text ends at a sentence end and has at most two sentences;
- invented names: the reply names a person (from a list of common first names) the user
  never named;
- speaks as the user: the reply says one of the user's names or places as its own ("I'm
  Sam", "I am from Porto", "my name is Ada");
- repetition loops: a word or phrase repeated three times running, or one word said four
  times, in what was spoken (and, reported apart, in everything the model wrote);
- honest: for a turn asking what the user never said, the reply says it does not know;
- gave up unasked: a turn that asks for nothing said earlier ("How do I make pancakes?")
  answered that it does not know (or is not sure);
- time to first audio (user's text sent → the reply's first piece synthesized), p50/p90:
  on a machine shared with other work this figure is noisy, the rates above are not.

Two sets of dialogues: ``first`` (``DIALOGUES`` below, the ones the voice assistant is
tuned on) and ``held-out`` (``bench/conversation_data.py``, written before the tuning of
issue 30 and never tuned on); ``--set both`` (the default) runs and reports each.
Twelve more were written blind, each in ``bench/conversation_<name>.py``, for judging only,
never tuned on: ``fresh`` and ``blind`` (after that tuning), ``blind2`` (at the end of that
session, never run while it was written), then the same way ``blind3`` to ``blind11``
(sessions 10, 11, 13, 14, 15, 18, 19, 20 and 24); ``--set all`` runs all fourteen.
``--set probe24`` (``bench/conversation_probe24.py``, session 24) was written blind too, but
is a developer's probe, never a judge set.
Prints every turn with ``-v``, then the rates and examples of good and bad replies.
Run: ``python bench/conversation.py
[--set first|held-out|fresh|blind|blind2|blind3|blind4|blind5|blind6|blind7|blind8|blind9|
blind10|blind11|both|all]
[-v] [--runs 1] [--speaker-template FILE]``
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from conversation_blind import BLIND  # bench/conversation_blind.py: written blind, never tune
from conversation_blind2 import BLIND2  # bench/conversation_blind2.py: written blind, never tune
from conversation_blind3 import BLIND3  # bench/conversation_blind3.py: written blind, never tune
from conversation_blind4 import BLIND4  # bench/conversation_blind4.py: written blind, never tune
from conversation_blind5 import BLIND5  # bench/conversation_blind5.py: written blind, never tune
from conversation_blind6 import BLIND6  # bench/conversation_blind6.py: written blind, never tune
from conversation_blind7 import BLIND7  # bench/conversation_blind7.py: written blind, never tune
from conversation_blind8 import BLIND8  # bench/conversation_blind8.py: written blind, never tune
from conversation_blind9 import BLIND9  # bench/conversation_blind9.py: written blind, never tune
from conversation_blind10 import BLIND10  # bench/conversation_blind10.py: written blind, never tune
from conversation_blind11 import BLIND11  # bench/conversation_blind11.py: written blind, never tune
from conversation_data import HELD_OUT, UNKNOWN  # bench/conversation_data.py, beside this
from conversation_dev3 import DEV3  # bench/conversation_dev3.py: the session 11 dev cases
from conversation_dev4 import DEV4  # bench/conversation_dev4.py: the session 13 dev cases
from conversation_dev5 import DEV5  # bench/conversation_dev5.py: session 13's second round
from conversation_dev6 import DEV6  # bench/conversation_dev6.py: session 14, by meaning
from conversation_dev7 import DEV7  # bench/conversation_dev7.py: session 15, said in passing
from conversation_dev8 import DEV8  # bench/conversation_dev8.py: session 16, varied phrasing
from conversation_dev9 import DEV9, DEV9B  # bench/conversation_dev9.py: session 17, two parts
from conversation_dev10 import DEV10, DEV10B  # bench/conversation_dev10.py: session 18, two parts
from conversation_fresh import FRESH  # bench/conversation_fresh.py: written blind, never tune on it
from conversation_probe14 import PROBE14  # bench/conversation_probe14.py: session 19
from conversation_probe20 import PROBE20  # bench/conversation_probe20.py: session 20
from conversation_probe21 import PROBE21  # bench/conversation_probe21.py: session 21
from conversation_probe24 import PROBE24  # bench/conversation_probe24.py: session 24
from conversation_probe_honest import PROBE_HONEST, PROBE_HONEST_B  # session 19, never told
from reply_scores import DONT_KNOW, invented, is_complete, loops, speaks_as_user

from terrarium.config import load_team
from terrarium.controller.assembly import assemble
from terrarium.controller.guard import is_echo  # the runtime's guard uses this measure
from terrarium.events import SentenceSynthesized, TranscriptAppended
from terrarium.llm.embedded import EmbeddedServer
from terrarium.llm.factory import make_model
from terrarium.runtime.runtime import RuntimeOptions, TeamRuntime

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Say:
    """One user turn; ``expect`` lists words of which one must appear in the reply (recall)."""

    text: str
    expect: tuple[str, ...] = ()


def S(text: str, *expect: str) -> Say:  # short, for the scripts below
    return Say(text, tuple(expect))


def says(data: list) -> list[list[Say]]:
    """A set's dialogues as turns: the held-out set (bench/conversation_data.py), the blind
    ones (bench/conversation_fresh.py, conversation_blind.py to blind11.py: for judging only)
    and the developers' own cases, tuned on (bench/conversation_dev3.py to dev10.py: sessions
    11, 13, 13's second round, 14 by meaning, 15 told in passing, 16, 17, 18)."""
    return [[S(*turn) for turn in dialogue] for dialogue in data]


DIALOGUES: list[list[Say]] = [
    [S("Hi, my name is Ada."), S("I love green tea."), S("What is my name?", "Ada"),
     S("What drink do I love?", "tea"), S("Thanks, goodbye.")],
    [S("Hello there!"), S("I live in Lisbon."), S("Where do I live?", "Lisbon"),
     S("What is the weather like there in summer?"), S("Thank you.")],
    [S("Good morning."), S("My name is Tom and I am 42 years old."),
     S("How old am I?", "42", "forty-two", "forty two"), S("What is my name?", "Tom"),
     S("Bye!")],
    [S("Hey."), S("I love jazz music."), S("Can you recommend something to listen to tonight?"),
     S("What music do I love?", "jazz"), S("Thanks a lot.")],
    [S("Hi, I'm Maria."), S("My favourite colour is blue."),
     S("What is my favourite colour?", "blue"), S("And what is my name?", "Maria"),
     S("Goodbye.")],
    [S("What will the weather be like today?"), S("And what about tomorrow?"),
     S("Should I take an umbrella?"), S("Thanks."), S("See you later.")],
    [S("Hello!"), S("I have two cats."), S("How many cats do I have?", "two", "2"),
     S("Tell me a fun fact about cats."), S("Bye for now.")],
    [S("My name is Ken."), S("I live in Osaka."), S("I love sushi."),
     S("Where do I live?", "Osaka"), S("What food do I love?", "sushi"),
     S("What is my name?", "Ken")],
    [S("Hi!"), S("How do I boil an egg?"), S("And how long for a soft one?"),
     S("Thanks, that helps."), S("Goodbye.")],
    [S("Good evening."), S("I work as a nurse."), S("What is my job?", "nurse"),
     S("Give me a tip for sleeping better."), S("Thank you, good night.")],
    [S("Hello, I am Sam and I live in Berlin."), S("What city do I live in?", "Berlin"),
     S("Can you recommend a good book?"), S("What is my name?", "Sam"), S("Thanks, bye.")],
    [S("Hi there."), S("I am 30 years old."), S("I love pizza."),
     S("How old am I?", "30", "thirty"), S("What do I love to eat?", "pizza"), S("Thanks!")],
    [S("Hey, my name is Lena."), S("Tell me a joke."), S("What is my name?", "Lena"),
     S("Goodbye!")],
]

# The developer's own cases for issue 30 (the examples among them): tuned on, like
# the first set; the held-out set is never tuned on.
DEV: list[list[Say]] = [
    [S("Call me Sam, please."), S("What is my name?", "Sam")],
    [S("My dog is called Rex."), S("Tell me about dogs."), S("What is my dog called?", "Rex")],
    [S("Hey, I'm Priya and I teach maths."), S("Remind me of my name.", "Priya"),
     S("What do I teach?", "math")],
    [S("I'm originally from Nairobi."), S("Where am I from?", "Nairobi")],
    [S("I drive a blue Volvo."), S("What colour is my car?", "blue")],
    [S("I'm allergic to cats."), S("What am I allergic to?", "cat")],
    [S("My birthday is on the 3rd of March."), S("When is my birthday?", "March")],
    [S("Friends call me Jo."), S("What do my friends call me?", "Jo")],
    [S("My daughter is named Mia."), S("I work in a bakery."),
     S("What is my daughter's name?", "Mia"), S("Where do I work?", "bakery")],
    [S("Hello!"), S("What is my favourite film?", UNKNOWN)],
    [S("Just call me Kim."), S("Who am I?", "Kim")],
    [S("I've got two sons."), S("Recommend a board game."),
     S("How many kids do I have?", "two", "2")],
    [S("I love baking bread."), S("What is my favourite film?", UNKNOWN)],
    # issue 30, second batch: written from the categories (names and nicknames, origin,
    # pets, allergies, dates, family, work, likes and dislikes, numbers, vehicles,
    # languages, plans, indirect asks), before the change they were used to measure
    [S("Everyone calls me Bobby."), S("What's my nickname?", "Bobby")],
    [S("My surname is Okafor."), S("Do you remember my last name?", "Okafor")],
    [S("I grew up in a small town near Cork."), S("Where did I grow up?", "Cork")],
    [S("I was born in Brazil but I live in Oslo now."),
     S("Which country was I born in?", "Brazil"), S("And where do I live now?", "Oslo")],
    [S("We have a parrot named Kiwi."), S("What's the name of my parrot?", "Kiwi")],
    [S("My cat Luna is nine years old."), S("How old is my cat?", "nine", "9")],
    [S("Peanuts make me really sick."), S("Is there anything I shouldn't eat?", "peanut")],
    [S("I'm vegetarian."), S("What kind of diet do I follow?", "vegetarian")],
    [S("Our wedding anniversary is on June 12th."), S("When is our anniversary?", "June")],
    [S("I was born in 1990."), S("What year was I born?", "1990")],
    [S("My brother Tom lives in Leeds."), S("Where does my brother live?", "Leeds")],
    [S("I have three kids."), S("How many children do I have?", "three", "3")],
    [S("My wife is called Anna."), S("Who is my wife?", "Anna")],
    [S("I'm a software engineer at a bank."),
     S("What do I do for a living?", "engineer", "software")],
    [S("I drive a bus for the city."), S("What's my job?", "bus")],
    [S("I can't stand mushrooms."), S("Which food do I hate?", "mushroom")],
    [S("Football is my favourite sport."), S("What sport do I like best?", "football")],
    [S("I really enjoy hiking in the mountains."), S("What's my hobby?", "hiking", "hike")],
    [S("My flat is on the seventh floor."), S("Which floor do I live on?", "seventh", "7")],
    [S("I'm 27."), S("How old am I?", "27", "twenty-seven", "twenty seven")],
    [S("I ride a red Vespa to work."), S("What do I ride?", "Vespa", "scooter")],
    [S("My car is a silver Toyota."), S("What brand is my car?", "Toyota")],
    [S("I speak Spanish and a little German."),
     S("Which languages do I speak?", "Spanish", "German")],
    [S("My mother tongue is Polish."), S("What is my native language?", "Polish")],
    [S("I'm flying to Rome on Friday."), S("When is my flight?", "Friday"),
     S("Where am I going?", "Rome")],
    [S("Next month I start a new job at the hospital."),
     S("Where will I be working?", "hospital")],
    [S("I live on Elm Street."), S("Remind me where I live.", "Elm")],
    [S("My favourite band is Queen."), S("Do you remember which band I like?", "Queen")],
    [S("I'm Li."), S("How do I make pancakes?"), S("What should I watch tonight?"),
     S("What is my name?", "Li")],
    [S("My sister loves horses."), S("What should I get my sister for her birthday?"),
     S("Can you help me plan a trip?")],
    [S("I like coffee."), S("What's my dog's name?", UNKNOWN)],
    [S("Hi there."), S("Where was I born?", UNKNOWN)],
]

# Issue 30, fourth round: the developer's own cases for the blind set's categories of miss
# (follow-ups by a pronoun or "the", numbers told in passing or corrected, a kind asked,
# work told as a business, never-said asks next to told ones) and others people use
# (family members' details, times, dislikes, study, several facts at once, "what did I
# tell you about"), written before the changes they measure; tuned on, like DEV.
DEV2: list[list[Say]] = [
    [S("My nephew Arlo turns twelve in June."), S("When is Arlo's birthday?", "June"),
     S("How old will he be?", "twelve", "12")],
    [S("We keep three hens in the garden."), S("How many hens do we have?", "three", "3"),
     S("Where do they live?", "garden")],
    [S("Our new address is 14 Quarry Lane."), S("What's the number of my house?", "14"),
     S("And which lane is it?", "Quarry")],
    [S("I bought a yellow Fiat last spring."), S("Give me a tip for driving in snow."),
     S("What colour is the car?", "yellow"), S("What brand is it?", "Fiat")],
    [S("I'm 63."), S("No, sorry, I mean 64."), S("How old am I?", "64", "sixty-four")],
    [S("Hi, Ravi here, 58, retired builder."), S("What did I do for work?", "builder"),
     S("How old am I?", "58", "fifty-eight")],
    [S("I keep a parrot called Mango."), S("What kind of bird do I have?", "parrot"),
     S("What's it called?", "Mango")],
    [S("I own a little flower shop in town."),
     S("What sort of business do I run?", "flower")],
    [S("My husband Kofi is a dentist."), S("What does my husband do?", "dentist"),
     S("And what's his name?", "Kofi")],
    [S("My train to Glasgow leaves at half past six."), S("What time is my train?", "six"),
     S("Where is it going?", "Glasgow")],
    [S("I really don't like olives."), S("What food don't I like?", "olive")],
    [S("I'm doing a degree in history at Leeds."), S("What am I studying?", "history")],
    [S("I'm Nadia, I teach piano and I have two cats."),
     S("What do I teach?", "piano"), S("How many cats do I have?", "two", "2"),
     S("What's my name again?", "Nadia")],
    [S("My sister Tess is getting married in May in Lisbon."),
     S("What did I tell you about my sister?", "Tess", "married", "Lisbon"),
     S("Where is the wedding?", "Lisbon")],
    [S("I have a rabbit called Dot."), S("What's my hamster called?", UNKNOWN)],
    [S("I work in a bank."), S("Where did I grow up?", UNKNOWN)],
    [S("Hi, I'm Ines."), S("What is my family name?", UNKNOWN)],
    [S("My son plays the cello."), S("What's my daughter's name?", UNKNOWN)],
    [S("What's the capital of Canada?"), S("And how many people live there?"),
     S("Who painted the Mona Lisa?")],
    [S("My brother lives in Perth."), S("What's the weather like there in winter?"),
     S("Remind me where my brother lives.", "Perth")],
]

SHOW_NOTICES = False
"""``--notices``: print the speaker's message, the model's text and the guard's notices."""


@dataclass
class TurnRow:
    dialogue: int
    user: str
    reply: str
    expect: tuple[str, ...]
    intent: str | None
    ttfa_ms: float | None
    written: str = ""  # the speaker's text as the reply guard let it through (its turn text)
    echo: bool = False
    recalled: bool | None = None
    honest: bool | None = None  # asked what was never said: the reply says it does not know
    gave_up: bool = False  # no recall asked, and the reply says it does not know
    complete: bool = False
    names: list[str] = field(default_factory=list)
    as_user: list[str] = field(default_factory=list)
    loop: bool = False  # in what was spoken
    loop_written: bool = False  # in what the model wrote, spoken or not
    message: str = ""  # the speaker's message for the turn ("Note: ...\nQuestion: ..."), if any
    retrieved: bool | None = None  # a recall ask: an expected word was in that message
    model_text: str = ""  # what the speaker's model wrote, spoken or not (its transcript)
    notices: list[str] = field(default_factory=list)  # the speaker's notices this turn


async def run_dialogue(server: EmbeddedServer, team_dir: Path, d: int, script: list[Say],
                       template: str | None, verbose: bool) -> list[TurnRow]:
    team = load_team(team_dir)
    if template is not None:
        team.creatures["speaker"].config.message_templates["to_speaker"] = template
    models = {name: make_model(assemble(team, name).settings, embedded=server, slot=i)
              for i, name in enumerate(("router", "speaker"))}
    first_audio: list[float] = []
    heard: list[str] = []  # what became audio: a fragment cut off by max_tokens is not
    intents: list[str] = []
    messages: list[str] = []  # the speaker's incoming messages, in order
    model_texts: list[str] = []  # the speaker's own text as its model wrote it (transcript)
    notices: list[str] = []  # the speaker's notices (the reply guard's among them)

    def on_event(ev: Any) -> None:
        if isinstance(ev, SentenceSynthesized) and ev.creature == "speaker":
            first_audio.append(time.perf_counter())
            heard.append(ev.text.strip())
        elif (isinstance(ev, TranscriptAppended) and ev.creature == "speaker"
              and ev.entry.kind in ("message_in", "assistant", "notice")):
            if ev.entry.kind == "message_in":
                messages.append(ev.entry.text)
            elif ev.entry.kind == "assistant":
                model_texts.append(ev.entry.text)
            else:
                notices.append(ev.entry.text)
            if SHOW_NOTICES:
                print(f"      {ev.entry.kind}: {ev.entry.text[:300]!r}", flush=True)
        elif (isinstance(ev, TranscriptAppended) and ev.creature == "router"
              and ev.entry.kind == "tool_call"):
            args = (ev.entry.data or {}).get("args") or {}
            intents.append(str(args.get("intent")))

    rows: list[TurnRow] = []
    said = ""
    with tempfile.TemporaryDirectory() as tmp:
        opts = RuntimeOptions(runs_dir=Path(tmp), models=models, on_event=on_event,
                              audio="none", clock=lambda: None)
        async with TeamRuntime(team, opts) as rt:
            for say in script:
                n_res, n_audio, n_int = len(rt.results), len(first_audio), len(intents)
                n_msg, n_model, n_notes = len(messages), len(model_texts), len(notices)
                t0 = time.perf_counter()
                await rt.send_user(say.text)
                with anyio.move_on_after(600):  # a shared, loaded machine can be slow
                    await rt.wait_idle(poll=0.005)
                said += " " + say.text
                reply = " ".join(heard[n_audio:])
                written = " ".join(r.text for name, r in rt.results[n_res:] if name == "speaker")
                ttfa = ((first_audio[n_audio] - t0) * 1000 if len(first_audio) > n_audio
                        else None)
                row = TurnRow(d, say.text, reply.strip(), say.expect,
                              intents[n_int] if len(intents) > n_int else None, ttfa,
                              written=written.strip())
                row.message = " ".join(messages[n_msg:])
                row.model_text = " ".join(model_texts[n_model:])
                row.notices = notices[n_notes:]
                row.echo = is_echo(say.text, reply)
                row.complete = is_complete(reply)
                row.names = invented(reply, said)
                row.as_user = speaks_as_user(reply, said)
                row.loop = loops(reply)
                row.loop_written = loops(row.model_text or written)
                row.gave_up = not say.expect and bool(DONT_KNOW.search(reply))
                if say.expect == (UNKNOWN,):
                    row.honest = bool(DONT_KNOW.search(reply))
                elif say.expect:
                    low = reply.lower()
                    row.recalled = any(e.lower() in low for e in say.expect)
                    # retrieval apart from answering: was the answer in what the speaker got?
                    row.retrieved = any(e.lower() in row.message.lower() for e in say.expect)
                rows.append(row)
                if verbose:
                    marks = "".join([
                        "E" if row.echo else "-", "C" if row.complete else "i",
                        {True: "R", False: "r", None: "."}[row.recalled],
                        {True: "H", False: "h", None: "."}[row.honest],
                        "N" if row.names else "-", "U" if row.as_user else "-",
                        "L" if row.loop else ("l" if row.loop_written else "-")])
                    t = f"{ttfa:5.0f}" if ttfa is not None else "    -"
                    print(f"  [{marks}] {t} ms {row.intent or '?':9} {say.text!r} -> {reply!r}",
                          flush=True)
    return rows


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def summarize(rows: list[TurnRow]) -> dict[str, Any]:
    n = len(rows)
    asks = [r for r in rows if r.recalled is not None]
    unknown = [r for r in rows if r.honest is not None]
    ttfa = [r.ttfa_ms for r in rows if r.ttfa_ms is not None]
    return {
        "turns": n,
        "echo": sum(r.echo for r in rows) / n,
        "recall": sum(bool(r.recalled) for r in asks) / max(1, len(asks)),
        "recall_asks": len(asks),
        "retrieved": sum(bool(r.retrieved) for r in asks),
        "answered_retrieved": sum(bool(r.recalled) for r in asks if r.retrieved),
        "complete": sum(r.complete for r in rows) / n,
        "invented_names": sum(bool(r.names) for r in rows) / n,
        "as_user": sum(bool(r.as_user) for r in rows),
        "loops": sum(r.loop for r in rows),
        "loops_written": sum(r.loop_written for r in rows),
        "honest": sum(bool(r.honest) for r in unknown),
        "unknown_asks": len(unknown),
        "gave_up": sum(r.gave_up for r in rows),
        "ttfa_p50": pct(ttfa, 0.5) if ttfa else None,
        "ttfa_p90": pct(ttfa, 0.9) if ttfa else None,
        "silent": sum(1 for r in rows if not r.reply),
    }


def show(summary: dict[str, Any], label: str) -> None:
    s = summary
    p50 = f"{s['ttfa_p50']:.0f}" if s["ttfa_p50"] is not None else "-"
    p90 = f"{s['ttfa_p90']:.0f}" if s["ttfa_p90"] is not None else "-"
    print(f"{label}: {s['turns']} turns | echo {s['echo'] * 100:.1f} % | recall "
          f"{s['recall'] * 100:.0f} % of {s['recall_asks']} (answer handed over "
          f"{s.get('retrieved', 0)}, of those recalled {s.get('answered_retrieved', 0)}) | "
          f"complete "
          f"{s['complete'] * 100:.0f} % | invented names {s['invented_names'] * 100:.1f} % | "
          f"speaks as the user {s['as_user']} | loops {s['loops']} (written "
          f"{s['loops_written']}) | honest {s['honest']} of {s['unknown_asks']} | "
          f"gave up unasked {s.get('gave_up', 0)} | silent {s['silent']} | "
          f"ttfa p50 {p50} ms p90 {p90} ms")


def examples(rows: list[TurnRow], k: int = 4) -> None:
    def pick(pred: Any) -> list[TurnRow]:
        return [r for r in rows if pred(r)][:k]

    groups = [
        ("good (complete, no echo, recalled when asked)",
         pick(lambda r: r.complete and not r.echo and r.recalled is not False and not r.names)),
        ("echo", pick(lambda r: r.echo)),
        ("recall missed", pick(lambda r: r.recalled is False)),
        ("incomplete", pick(lambda r: not r.complete)),
        ("invented names", pick(lambda r: r.names)),
        ("speaks as the user", pick(lambda r: r.as_user)),
        ("repetition loop spoken", pick(lambda r: r.loop)),
        ("not honest about what was never said", pick(lambda r: r.honest is False)),
        ("said it does not know, unasked", pick(lambda r: r.gave_up)),
    ]
    for title, got in groups:
        if got:
            print(f"\n{title}:")
            for r in got:
                print(f"  {r.user!r} [{r.intent}] -> {r.reply!r}")


SETS = {"first": lambda: DIALOGUES, "dev": lambda: DEV, "dev2": lambda: DEV2,
        **{name: (lambda d=d: says(d)) for name, d in (
            ("held-out", HELD_OUT), ("fresh", FRESH), ("blind", BLIND), ("blind2", BLIND2),
            ("blind3", BLIND3), ("blind4", BLIND4), ("blind5", BLIND5), ("blind6", BLIND6),
            ("blind7", BLIND7), ("dev3", DEV3), ("dev4", DEV4), ("dev5", DEV5), ("dev6", DEV6),
            ("dev7", DEV7), ("dev8", DEV8), ("dev9", DEV9), ("dev9b", DEV9B),
            ("dev10", DEV10), ("dev10b", DEV10B), ("blind8", BLIND8), ("blind9", BLIND9),
            ("blind10", BLIND10), ("blind11", BLIND11),
            ("probe14", PROBE14), ("probe20", PROBE20), ("probe21", PROBE21),
            ("probe24", PROBE24),
            ("probe_honest", PROBE_HONEST),
            ("probe_honest_b", PROBE_HONEST_B))}}
GROUPS = {"both": ("first", "held-out"),
          "all": ("first", "held-out", "fresh", "blind", "blind2", "blind3", "blind4",
                  "blind5", "blind6", "blind7", "blind8", "blind9", "blind10", "blind11")}


async def main(runs: int, verbose: bool, template: str | None, team_dir: Path,
               only: list[int] | None = None, sets: tuple[str, ...] = ("first", "held-out"),
               ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with EmbeddedServer(slots=2) as server:
        for name in sets:
            dialogues = SETS[name]()
            turns = sum(len(d) for d in dialogues)
            print(f"set {name}: {len(dialogues)} dialogues, {turns} user turns, team {team_dir}")
            summaries = []
            all_rows: list[TurnRow] = []
            for run in range(runs):
                rows: list[TurnRow] = []
                for d, script in enumerate(dialogues):
                    if only and d + 1 not in only:
                        continue
                    if verbose:
                        print(f"dialogue {d + 1}")
                    rows += await run_dialogue(server, team_dir, d, script, template, verbose)
                summaries.append(summarize(rows))
                show(summaries[-1], f"{name} run {run + 1}")
                all_rows += rows
            examples(all_rows)
            out[name] = {"runs": summaries, "rows": [r.__dict__ for r in all_rows]}
            out[name]["all"] = summarize(all_rows)
    print()
    for name in sets:
        for i, s in enumerate(out[name]["runs"]):
            show(s, f"{name} run {i + 1}")
        if runs > 1:
            show(out[name]["all"], f"{name} all runs")
    print("\n(time to first audio depends on the machine's load; the rates do not)")
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("-v", "--verbose", action="store_true", help="print every turn")
    p.add_argument("--speaker-template", type=Path, default=None,
                   help="a file replacing the speaker's to_speaker message template")
    p.add_argument("--team", type=Path, default=ROOT / "examples" / "voice_assistant")
    p.add_argument("--json", type=Path, default=None, help="write every row here")
    p.add_argument("--notices", action="store_true",
                   help="print the speaker's message, the model's text and the guard's notices")
    p.add_argument("--dialogues", default="", help="only these dialogues, e.g. 1,3,8")
    p.add_argument("--set", choices=["first", "held-out", "fresh", "blind", "blind2", "blind3",
                                     "blind4", "blind5", "blind6", "blind7", "blind8", "blind9",
                                     "blind10", "blind11",
                                     "dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7",
                                     "dev8", "dev9", "dev9b", "dev10", "dev10b", "probe14",
                                     "probe20", "probe21", "probe24", "probe_honest",
                                     "probe_honest_b", "both",
                                     "all"],
                   default="both",
                   help="which dialogues: the first set, the held-out one, the fresh held-out "
                   "one (written blind), the blind one (written later, also blind), blind2 "
                   "(written blind at the end), blind3 to blind11 (written blind in sessions 10, "
                   "11, 13, 14, 15, 18, 19, 20 and 24), both (first and held-out), all fourteen, "
                   "or the developer's own cases (dev; dev2: those of the fourth round; dev3: "
                   "session 11's, bench/conversation_dev3.py; "
                   "dev4: session 13's, bench/conversation_dev4.py; dev5: its second round's, "
                   "bench/conversation_dev5.py; dev6: session 14's, asks sharing no word "
                   "with the telling, bench/conversation_dev6.py; dev7: session 15's, told in "
                   "passing, follow-ups, asks without my, bench/conversation_dev7.py; dev8: "
                   "session 16's, varied phrasing, bench/conversation_dev8.py; dev9 and its "
                   "held-out part two dev9b: session 17's, bench/conversation_dev9.py; dev10 and "
                   "dev10b: session 18's, bench/conversation_dev10.py; probe14: session 19's "
                   "world questions, bench/conversation_probe14.py; probe20: session 20's, "
                   "bench/conversation_probe20.py; probe21: session 21's, "
                   "bench/conversation_probe21.py; probe24: session 24's, written blind, "
                   "bench/conversation_probe24.py; probe_honest and its "
                   "held-out part probe_honest_b: session 19's never-told asks, "
                   "bench/conversation_probe_honest.py)")
    a = p.parse_args()
    SHOW_NOTICES = a.notices
    text = a.speaker_template.read_text() if a.speaker_template else None
    only = [int(x) for x in a.dialogues.split(",") if x.strip()] or None
    chosen = GROUPS.get(a.set, (a.set,))
    out = anyio.run(main, a.runs, a.verbose, text, a.team, only, chosen)
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))
