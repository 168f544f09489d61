"""Labelled utterances for bench/router_intent.py: the original 18 and a held-out set.

The held-out set is for judging changes to the router (its prompt, its rules, the way the
model's choice is scored) without tuning on the 18 it is reported on. None of these
sentences may appear in a prompt, an example or a rule. They are written as a speech
transcript reads: often lower-case, mostly without a question mark, questions that do not
start with a question word's usual form, requests without a leading verb ("could you ...",
"I'd like ..."), statements that start with other words than "I" or "my", thanks and
goodbyes in other words than "thanks" and "bye".
"""

from __future__ import annotations

from voice import UTTERANCES  # bench/voice.py, beside this script

__all__ = ["BENCH", "HELD_OUT", "INTENTS", "SETS"]

INTENTS = ("greeting", "question", "request", "statement", "thanks", "goodbye")

# the voice benchmark's utterances (labelled in order), then a few more
_VOICE_LABELS = ["greeting", "statement", "question", "request", "question", "question",
                 "question", "request", "question", "request", "question", "thanks"]
BENCH: list[tuple[str, str]] = [
    *zip(UTTERANCES, _VOICE_LABELS, strict=True),
    ("Good morning!", "greeting"),
    ("Thanks a lot.", "thanks"),
    ("Bye for now.", "goodbye"),
    ("Turn on the lights please.", "request"),
    ("Where is Paris?", "question"),
    ("I had pasta for lunch.", "statement"),
]

HELD_OUT: list[tuple[str, str]] = [
    # greeting
    ("hello there", "greeting"),
    ("hi", "greeting"),
    ("good afternoon", "greeting"),
    ("morning!", "greeting"),
    ("hey, how's it going", "greeting"),
    ("hiya", "greeting"),
    ("hey assistant", "greeting"),
    ("hello again, nice to hear you", "greeting"),
    ("evening", "greeting"),
    ("hi there, how are you doing today", "greeting"),
    ("well hello", "greeting"),
    ("greetings, friend", "greeting"),
    # statement
    ("the cat knocked over my coffee this morning", "statement"),
    ("it's raining pretty hard here", "statement"),
    ("yesterday we went hiking in the hills", "statement"),
    ("so I'm thinking about learning Spanish", "statement"),
    ("today is my birthday", "statement"),
    ("work was really exhausting today", "statement"),
    ("actually my name is Priya", "statement"),
    ("our flight got cancelled", "statement"),
    ("the new bakery downstairs makes amazing croissants", "statement"),
    ("honestly I don't really like coffee", "statement"),
    ("last week I finished reading a long novel", "statement"),
    ("there's a concert in the park tonight", "statement"),
    ("I'm allergic to peanuts", "statement"),
    ("my brother just moved to Berlin", "statement"),
    # question
    ("what time does the sun set today", "question"),
    ("how far is the moon from earth", "question"),
    ("who invented the telephone", "question"),
    ("why is the sky blue", "question"),
    ("is it going to snow this weekend", "question"),
    ("when was the eiffel tower built", "question"),
    ("how many legs does a spider have", "question"),
    ("what's the capital of Australia", "question"),
    ("which is bigger, a lion or a tiger", "question"),
    ("where do penguins live?", "question"),
    ("can dogs eat chocolate", "question"),
    ("what did I say my name was", "question"),
    ("how old is the universe?", "question"),
    ("are tomatoes a fruit or a vegetable", "question"),
    ("do spiders sleep", "question"),
    # request
    ("could you set a timer for ten minutes", "request"),
    ("I'd like to hear a bedtime story", "request"),
    ("would you mind reading me the news", "request"),
    ("please remind me to call mum tomorrow", "request"),
    ("I need a recipe for banana bread", "request"),
    ("let's hear some jazz", "request"),
    ("a quick summary of today's news would be great", "request"),
    ("help me plan a trip to Rome", "request"),
    ("how about a fun fact about octopuses", "request"),
    ("wake me up at seven", "request"),
    ("spell the word necessary for me", "request"),
    ("count to ten in German", "request"),
    ("I want you to pick a random number", "request"),
    ("can you tell me a joke", "request"),
    # thanks
    ("thank you kindly", "thanks"),
    ("thanks, that helps a lot", "thanks"),
    ("that's very kind of you, thanks", "thanks"),
    ("much appreciated", "thanks"),
    ("I appreciate it", "thanks"),
    ("great, thank you", "thanks"),
    ("cheers mate", "thanks"),
    ("thanks a bunch", "thanks"),
    ("perfect, thanks for your help", "thanks"),
    ("you've been really helpful, thank you", "thanks"),
    ("appreciate the help", "thanks"),
    ("I'm grateful for your help", "thanks"),
    # goodbye
    ("later, gotta run", "goodbye"),
    ("see you tomorrow", "goodbye"),
    ("I have to go now, bye", "goodbye"),
    ("talk to you later", "goodbye"),
    ("I'm going to bed now, night", "goodbye"),
    ("catch you later", "goodbye"),
    ("that's all for today, goodbye", "goodbye"),
    ("I'm off now", "goodbye"),
    ("take care", "goodbye"),
    ("see ya", "goodbye"),
    ("until next time", "goodbye"),
    ("okay, I'm heading out, bye bye", "goodbye"),
]

SETS: dict[str, list[tuple[str, str]]] = {
    "bench": BENCH,
    "held-out": HELD_OUT,
    "all": BENCH + HELD_OUT,
}
