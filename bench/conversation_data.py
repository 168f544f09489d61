"""Held-out dialogues for bench/conversation.py (``--set held-out``).

Written before the voice assistant's recall was tuned (issue 30), from the categories
people tell an assistant about themselves: names and nicknames, origin, pets, allergies,
dates, family, work, likes and dislikes, numbers, vehicles, hobbies, languages, plans.
They are for judging changes, never for making them: none of these sentences, and none of
their phrasings, may be copied into a prompt, a rule, a search word list or an example.
Changes are tuned on the first set (``bench/conversation.py``'s ``DIALOGUES``) and on the
developer's own cases, and reported on both sets.

Each dialogue is a list of turns; a turn is the user's words, then the words of which one
must appear in the reply when it asks for something said earlier (recall), or ``UNKNOWN``
when it asks for something the user never said (the honest reply says it does not know).
"""

from __future__ import annotations

__all__ = ["HELD_OUT", "UNKNOWN"]

UNKNOWN = "<unknown>"
"""An ask about something never said: the reply should say it does not know."""

HELD_OUT: list[list[tuple[str, ...]]] = [
    # names and nicknames
    [("Good morning!",), ("The name's Oliver, by the way.",),
     ("Tell me something about the moon.",), ("Do you remember my name?", "Oliver"),
     ("Thanks, bye.",)],
    [("Hi.",), ("Most people know me as Bex.",), ("What do most people call me?", "Bex"),
     ("Goodbye.",)],
    [("Hello, I'm Ines and I come from Porto.",), ("What's the capital of Spain?",),
     ("Where do I come from?", "Porto"), ("And my name?", "Ines")],
    # origin and home
    [("Hey there.",), ("I grew up in a small town near Krakow.",),
     ("Where did I grow up?", "Krakow"), ("Thank you.",)],
    [("I was born in Chile.",), ("Can you suggest a dessert?",),
     ("Which country was I born in?", "Chile")],
    [("We moved to Toronto last year.",), ("What city did we move to?", "Toronto"),
     ("See you.",)],
    # pets
    [("We've got a parrot named Kiwi.",), ("What's our parrot's name?", "Kiwi")],
    [("I have a cat, her name is Luna.",), ("How do cats see in the dark?",),
     ("What is my cat's name?", "Luna")],
    [("I own two dogs, Max and Bella.",), ("What are my dogs called?", "Max", "Bella"),
     ("How many dogs do I have?", "two", "2")],
    # allergies and diet
    [("Peanuts make me really sick, I have an allergy.",),
     ("What food should I avoid?", "peanut")],
    [("Just so you know, I can't eat shellfish.",), ("Give me an idea for lunch.",),
     ("What can't I eat?", "shellfish")],
    [("I'm vegetarian.",), ("What kind of diet do I follow?", "vegetarian")],
    # dates
    [("I turn forty on the ninth of June.",), ("When do I turn forty?", "June", "ninth", "9")],
    [("Our wedding anniversary is on October 12th.",),
     ("When is our anniversary?", "October", "12")],
    [("I was born on the second of May.",), ("When's my birthday?", "May")],
    # family
    [("My sister Clara lives in Dublin.",), ("What's my sister called?", "Clara"),
     ("Where does my sister live?", "Dublin")],
    [("I've got three kids.",), ("How many children do I have?", "three", "3")],
    [("My husband's name is Raj.",), ("Tell me a fun fact about owls.",),
     ("Who is my husband?", "Raj")],
    [("I have a brother called Leo.",), ("He lives in Madrid.",),
     ("I drink my coffee black.",), ("What is my brother's name?", "Leo"),
     ("How do I take my coffee?", "black")],
    # work
    [("I'm a plumber by trade.",), ("What do I do for a living?", "plumber")],
    [("These days I work at the city library.",), ("Where do I work?", "library")],
    [("Hi, I'm Tomasz.",), ("I design buildings for a living.",),
     ("What's a good stretch for my back?",),
     ("What is my job?", "architect", "design", "building")],
    # likes and dislikes
    [("Nothing beats a bowl of ramen for me.",), ("What's my favourite dish?", "ramen")],
    [("I can't stand horror films.",), ("What kind of films do I dislike?", "horror")],
    [("Green has always been my colour.",), ("Which colour do I like best?", "green")],
    [("I play the cello in an orchestra.",), ("What instrument do I play?", "cello")],
    [("On weekends I play chess at the park.",),
     ("What game do I play on weekends?", "chess")],
    [("I support Arsenal.",), ("Which football team do I support?", "Arsenal")],
    # numbers
    [("I'll be 27 next week.",), ("How old will I be next week?", "27", "twenty-seven",
                                    "twenty seven")],
    [("My house number is 14.",), ("What is my house number?", "14", "fourteen")],
    [("My lucky number is seven.",), ("What's my lucky number?", "seven", "7")],
    # vehicles, languages, plans
    [("I ride a red motorbike to work.",), ("How do I get to work?", "motorbike", "bike"),
     ("What colour is my bike?", "red")],
    [("I speak Portuguese and a bit of French.",),
     ("Which languages do I speak?", "Portuguese", "French")],
    [("Next month I'm flying to Iceland for a holiday.",),
     ("Where am I going on holiday?", "Iceland")],
    # asked, never told
    [("Hello!",), ("What is my mother's name?", UNKNOWN), ("Thanks.",)],
    [("I love baking bread.",), ("What car do I drive?", UNKNOWN)],
]
