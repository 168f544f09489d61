"""A fresh held-out set for bench/conversation.py (``--set fresh``), issue 30.

Written blind: its author read only the turn format of ``bench/conversation_data.py`` and
the issue's list of categories, never the voice assistant's prompts, templates, recall or
guard code, nor the dialogues of the other two sets. It is phrased as a new user would
talk: indirect statements, facts inside longer sentences, corrections ("actually it's…"),
questions with and without "my", "do you remember…", "remind me…", with unrelated turns
between what was said and the question.

It is for judging, never for tuning: none of these sentences, their phrasings or their
words may go into a prompt, a rule, a search word list, an example or a test fixture, and
no change may be made because of how one of these dialogues scores. A set once used to
tune is no longer held out; if that happens, write a new one the same way.

Same format as ``conversation_data.py``: a turn is the user's words, then the words of
which one must appear in the reply (case-insensitive, as a substring) when it asks for
something said earlier, or ``UNKNOWN`` when it asks for something never said.
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["FRESH"]

FRESH: list[list[tuple[str, ...]]] = [
    # names and nicknames
    [("Hi there, it's Margaret, but honestly everyone just calls me Maggie.",),
     ("What's the weather usually like in spring?",),
     ("What do people call me?", "Maggie")],
    [("Hello.",), ("You can call me Theo.",), ("Tell me a fun fact about octopuses.",),
     ("Do you remember what I'm called?", "Theo")],
    [("My name is Fernando but that's a mouthful, so Nando is fine.",),
     ("What's my nickname?", "Nando")],
    [("My name is Jon.",), ("Actually, it's Jonathan, I prefer the full name.",),
     ("Which name do I prefer?", "Jonathan")],
    # origin and home
    [("I grew up in a little town near Kraków.",), ("Can you recommend a good book?",),
     ("Where did I grow up?", "Kraków", "Krakow")],
    [("We moved here from Lagos when I was twelve.",),
     ("Where did my family move from?", "Lagos")],
    [("These days I live in Halifax, it's cold but lovely.",),
     ("Is it good to drink water in the morning?",), ("Which city do I live in now?", "Halifax")],
    [("Back when I lived in Seoul I used to ride the subway everywhere.",), ("Cool.",),
     ("Remind me which city I used to live in.", "Seoul")],
    # pets
    [("Our cat Pumpkin knocked a glass off the table again this morning.",),
     ("Cats, right?",), ("What's the cat called?", "Pumpkin")],
    [("I keep two rabbits and a parrot in the flat.",), ("What's a good name for a boat?",),
     ("How many rabbits do I have?", "2", "two")],
    [("My dog is a beagle named Biscuit.",), ("What breed is my dog?", "beagle")],
    # allergies and diet
    [("Just so you know, I'm allergic to peanuts.",), ("What should I cook tonight?",),
     ("Remind me what I'm allergic to.", "peanut")],
    [("I've been vegetarian for about ten years now.",), ("Tell me a joke.",),
     ("What kind of diet do I follow?", "vegetarian")],
    [("Since I'm lactose intolerant, I'll skip the ice cream, thanks.",),
     ("What can't I have?", "lactose", "dairy", "milk", "ice cream")],
    # dates
    [("My birthday's on the fourteenth of March.",), ("What's a nice gift for a friend?",),
     ("When is my birthday?", "14", "fourteenth")],
    [("Priyanka and I got married on June 3rd, 2015.",), ("That was a great day.",),
     ("When is our wedding anniversary?", "June 3", "3 June", "3rd", "third")],
    [("I was born in 1988, the year of the Calgary Olympics.",),
     ("What year was I born?", "1988")],
    # family
    [("My sister Leonie is visiting next weekend.",), ("What should we do together?",),
     ("Who is coming to visit?", "Leonie")],
    [("I have three kids, all boys.",), ("Any tips for sleeping better?",),
     ("How many children do I have?", "3", "three")],
    [("My grandmother turns ninety next month, can you believe it?",),
     ("How old is grandma going to be?", "90", "ninety")],
    # work and study
    [("I'm a nurse on the night shift at the children's hospital.",),
     ("How do I stay awake at four in the morning?",), ("What's my job?", "nurse")],
    [("I'm in my second year studying marine biology.",), ("What am I studying?", "biology")],
    [("I work at a small bakery called Crumb and Co.",), ("Do you like bread?",),
     ("Where do I work?", "bakery", "Crumb")],
    # likes and dislikes
    [("I can't stand olives, they ruin every pizza.",), ("Which food do I hate?", "olive")],
    [("Jazz is my absolute favourite kind of music.",), ("Suggest something to do tonight.",),
     ("What music do I like best?", "jazz")],
    # numbers
    [("I'm 34, if that matters.",), ("What's the tallest mountain in Africa?",),
     ("How old am I?", "34", "thirty-four", "thirty four")],
    [("My locker number is 2187.",), ("What's a good stretch for my back?",),
     ("What was the locker number again?", "2187")],
    [("I'll need a table for four people.",), ("Actually, make that six, my cousins are coming.",),
     ("How many people is the table for?", "6", "six")],
    # vehicles
    [("I drive an old red Mini, it's falling apart.",), ("How can I save fuel?",),
     ("What car do I drive?", "Mini")],
    [("I ride my green bike to work every day.",), ("What colour is my bike?", "green")],
    # languages
    [("We speak Portuguese at home, but English at work.",),
     ("Which language do I speak at home?", "Portuguese")],
    [("I'm trying to learn Japanese before my trip.",), ("How do you say hello in French?",),
     ("Which language am I learning?", "Japanese")],
    # hobbies
    [("On weekends I mostly go rock climbing.",), ("What do I do on weekends?", "climb")],
    [("I've started knitting a scarf for my nephew.",), ("It's taking forever.",),
     ("What am I making for my nephew?", "scarf")],
    # plans and appointments
    [("I've got a dentist appointment on Thursday at four.",),
     ("What's the capital of Australia?",), ("When is the dentist?", "Thursday")],
    [("We're flying to Lisbon on Friday.",), ("Where am I going on Friday?", "Lisbon")],
    [("My flight is at seven in the morning.",),
     ("Oh wait, no, it's at nine, I misread the ticket.",),
     ("What time is my flight?", "9", "nine")],
    [("I need to call the plumber tomorrow morning.",), ("Can you tell me a short story?",),
     ("Who do I have to call tomorrow?", "plumber")],
    # health
    [("I hurt my left knee playing football last week.",), ("Which knee did I hurt?", "left")],
    [("I take my blood pressure pills every morning at eight.",), ("Thanks for listening.",),
     ("Remind me when I take my pills.", "8", "eight")],
    # several facts in one dialogue
    [("Hey! I'm Bilal, I drive a bus in Leeds.",), ("What time is it in Tokyo right now?",),
     ("What do I do for a living?", "bus"), ("And which city do I work in?", "Leeds"),
     ("What's my name?", "Bilal")],
    [("My partner Dana and I just adopted a puppy.",), ("We named him Waffles.",),
     ("How should I train a puppy?",), ("What's the puppy called?", "Waffles"),
     ("Who did I adopt him with?", "Dana")],
    # never said: the honest reply says it does not know
    [("Hi!",), ("What's my favourite colour?", UNKNOWN)],
    [("I love hiking in the mountains.",), ("What's my dog's name?", UNKNOWN)],
    [("My name is Ruth.",), ("Where was I born?", UNKNOWN)],
    [("I work as an electrician.",), ("Do you remember when my birthday is?", UNKNOWN)],
    [("Good evening.",), ("What's my phone number?", UNKNOWN)],
    [("I have a brother in Denver.",), ("What is my brother's name?", UNKNOWN)],
]
