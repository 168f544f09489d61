"""A blind held-out set for bench/conversation.py (``--set blind``), issue 30.

Written blind, late in the session: its author read only the issue, the turn format of
the other sets and the loader in ``bench/conversation.py`` — never the voice assistant's
prompts, templates, subject words, recall, guard or fact rules, its docs on memory, nor
the dialogues of the held-out and fresh sets. The users talk as people talk to a voice
assistant: nicknames and spelled-out names, corrections ("actually…", "no wait…", "I
meant…"), several facts in one breath, questions with and without "my" ("what's the dog's
name?"), indirect asks ("remind me…", "do you remember…", "what did I say my…", "tell me
my…"), questions about things never said, and ordinary questions (to be answered, not
refused) between what was said and the question.

It is for judging, never for tuning: none of these sentences, their phrasings or their
words may go into a prompt, a rule, a search word list, an example or a test fixture, and
no change may be made because of how one of these dialogues scores. Once tuned on, a set is
no longer held out; then write a new one the same way.

Same format as ``conversation_data.py``: a turn is the user's words, then the words of
which one must appear in the reply (case-insensitive, as a substring) when it asks for
something said earlier, or ``UNKNOWN`` when it asks for something never said. Expected
words were picked so that no common word contains them (no "Jo", "May", "Ivy"), and none
appears in its own question, so only a reply that recalls can score.
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["BLIND", "BY_CATEGORY"]

Turn = tuple[str, ...]

BY_CATEGORY: dict[str, list[list[Turn]]] = {
    "names and nicknames": [
        [("Hey there.",), ("Call me Toby, that's what everybody uses.",),
         ("How many minutes should I boil pasta for?",), ("What did I say to call me?", "Toby")],
        [("My name is Siegfried but my friends call me Ziggy.",),
         ("What's a good stretch for a stiff neck?",),
         ("What do my friends call me?", "Ziggy")],
        [("Hi, I'm Aoife. That's A, O, I, F, E.",), ("How do you say thank you in Italian?",),
         ("Can you tell me my name?", "Aoife")],
        [("Good afternoon.",), ("Just so you know, I go by Marlowe.",),
         ("Tell me my name.", "Marlowe")],
        [("My full name is Henrietta Vasquez.",), ("What's the tallest mountain in Africa?",),
         ("What's my surname?", "Vasquez")],
        [("The kids at school used to call me Noodle and it kind of stuck.",),
         ("What's my nickname?", "Noodle")],
    ],
    "corrections": [
        [("I'm Gareth.",), ("Actually, sorry, it's Garrett, with two Rs and two Ts.",),
         ("What is my name?", "Garrett")],
        [("I live in Graz.",), ("No wait, I mixed that up, I live in Linz.",),
         ("Where do I live, again?", "Linz")],
        [("My cat is called Pepper.",), ("Sorry, I meant Paprika. Pepper was my old cat.",),
         ("What's my cat's name?", "Paprika")],
        [("We're meeting my sister on Thursday.",),
         ("Actually, make that Saturday, she changed it.",),
         ("Which day am I seeing my sister?", "Saturday")],
        [("I'm 41.",), ("Oh, I mean 42, my birthday was last week.",),
         ("How old did I say I am?", "42", "forty-two", "forty two")],
    ],
    "origin and hometown": [
        [("Born and raised in Dundee, me.",), ("What's a quick lunch idea?",),
         ("Do you remember where I grew up?", "Dundee")],
        [("My family is from Ghana, but I was raised in Manchester.",),
         ("What country is my family from?", "Ghana"), ("And where was I raised?", "Manchester")],
        [("Hello!",), ("I'm a Texan, born in El Paso.",),
         ("What city was I born in?", "El Paso", "Paso")],
    ],
    "where they live now": [
        [("We moved to Utrecht last spring.",), ("How do I get rid of fruit flies?",),
         ("Remind me which city I live in.", "Utrecht")],
        [("My address is 27 Kestrel Road.",),
         ("What number is my house?", "27", "twenty-seven", "twenty seven"),
         ("And what's the street called?", "Kestrel")],
        [("I've been living on a houseboat in Amsterdam for two years.",),
         ("What kind of home do I have?", "houseboat", "boat"),
         ("Which city is it in?", "Amsterdam")],
    ],
    "pets": [
        [("I've got a golden retriever, Biscuit.",), ("How often should a dog get a bath?",),
         ("What's the dog's name?", "Biscuit")],
        [("Our family has two rabbits, Clover and Thistle.",),
         ("How many rabbits do we have?", "two", "2"),
         ("What are the rabbits called?", "Clover", "Thistle")],
        [("My tortoise Sheldon turned fifty this year.",),
         ("What kind of pet do I have?", "tortoise"),
         ("How old is Sheldon?", "fifty", "50")],
        [("My son has a hamster named Nugget.",), ("What do hamsters like to eat?",),
         ("What's the hamster called?", "Nugget")],
    ],
    "allergies and diet": [
        [("Just so you know, I'm allergic to shellfish.",),
         ("Can you suggest something for dinner tonight?",),
         ("What was I allergic to again?", "shellfish")],
        [("I've been vegan for about six years.",), ("Give me a quick breakfast idea.",),
         ("What diet did I tell you I follow?", "vegan")],
        [("Penicillin gives me a terrible rash.",),
         ("Which medicine am I allergic to?", "penicillin")],
        [("I can't have gluten, I'm coeliac.",), ("What can't I eat?", "gluten")],
    ],
    "dates": [
        [("My birthday's the ninth of November.",), ("What month is my birthday in?", "November")],
        [("Jonas and I got married on the 14th of August 2015.",),
         ("What date did I get married?", "August"), ("Who did I marry?", "Jonas")],
        [("My daughter turns seven on the 2nd of October.",),
         ("When is my daughter's birthday?", "October"),
         ("How old will she be?", "seven", "7")],
    ],
    "family": [
        [("My partner's name is Ezra.",), ("What should I cook for a date night?",),
         ("Who's my partner?", "Ezra")],
        [("I have two kids, Milo who's eight and Freya who's five.",),
         ("How old is Milo?", "eight", "8"), ("What's my youngest called?", "Freya")],
        [("I've got an older brother, Declan, and a younger sister, Orla.",),
         ("What's my sister's name?", "Orla"), ("And my brother's?", "Declan")],
        [("My twin brothers are turning 19 next week.",),
         ("How old are my brothers going to be?", "19", "nineteen")],
        [("My mum is called Beatrix.",), ("Got a nice idea for Mother's Day?",),
         ("What did I say my mum's name was?", "Beatrix")],
    ],
    "work and study": [
        [("I'm a paramedic, I work nights mostly.",),
         ("Any tips for sleeping during the day?",), ("What do I do for work?", "paramedic")],
        [("I'm studying marine biology at uni.",),
         ("What's my subject at university?", "marine", "biology")],
        [("I run a small bike repair shop.",),
         ("What kind of business do I have?", "bike", "bicycle", "repair")],
    ],
    "likes and dislikes": [
        [("I absolutely hate coriander, it tastes like soap to me.",),
         ("What herb do I hate?", "coriander", "cilantro")],
        [("I could watch Spirited Away every single day.",),
         ("Which film do I never get tired of?", "Spirited")],
        [("I'm really into rock climbing these days.",),
         ("What's a good snack before exercise?",), ("What am I into lately?", "climbing")],
        [("Snowy days put me in a good mood, I love them.",),
         ("What kind of weather do I like?", "snow")],
    ],
    "numbers": [
        [("I've run 12 marathons so far.",),
         ("How many marathons have I done?", "12", "twelve")],
        [("There are five of us in the house.",),
         ("How many people live in my house?", "five", "5")],
        [("My flat number is 4B.",), ("How long does it take to boil an egg?",),
         ("What's my flat number?", "4B")],
    ],
    "plans": [
        [("Next Tuesday I'm flying to Reykjavik for a conference.",),
         ("Where am I travelling next week?", "Reykjavik"),
         ("What's the trip for?", "conference")],
        [("I've got a dentist appointment on Monday at ten.",),
         ("What are some ways to stop feeling nervous?",),
         ("Remind me when my dentist appointment is.", "Monday")],
        [("We're going camping in the Lake District this weekend.",),
         ("What should I pack for camping?",),
         ("Where are we going this weekend?", "Lake District", "Lake")],
    ],
    "vehicles and colours": [
        [("My car's a green Skoda.",), ("What colour is the car?", "green"),
         ("What make is it?", "Skoda")],
        [("I cycle to work on an orange bike.",), ("What colour is my bike?", "orange")],
        [("I painted my front door purple last summer.",),
         ("How do I get paint off my hands?",), ("What colour is my front door?", "purple")],
    ],
    "never said": [
        [("Hi, I'm Wanda.",), ("What's my last name?", UNKNOWN)],
        [("I have a cat called Mochi.",), ("Do you remember my dog's name?", UNKNOWN)],
        [("Good evening.",), ("When's my birthday?", UNKNOWN)],
        [("I work as a plumber.",), ("Which town am I from?", UNKNOWN)],
        [("My wife is Greek.",), ("What's my wife's name?", UNKNOWN)],
        [("Hello!",), ("Tell me how old I am.", UNKNOWN)],
    ],
    "ordinary questions only": [
        [("What's a good way to remember people's names?",),
         ("How many days are there in a leap year?",), ("Thanks!",)],
        [("Why is the sky blue?",), ("And why are sunsets red?",), ("Cool, thank you.",)],
    ],
    "several facts in one turn": [
        [("I'm Tariq, I'm 34 and I drive a taxi.",), ("What's my job?", "taxi"),
         ("How old am I?", "34", "thirty-four", "thirty four"), ("And my name?", "Tariq")],
        [("Hi! I'm Solveig, I live in Bergen and I've got a husky called Storm.",),
         ("Tell me a fun fact about huskies.",), ("What's my dog called?", "Storm"),
         ("Where do I live?", "Bergen")],
        [("Quick intro: Farid, fifty-two, accountant, two grandkids.",),
         ("How many grandchildren do I have?", "two", "2"),
         ("What do I do?", "accountant")],
    ],
}

BLIND: list[list[Turn]] = [d for group in BY_CATEGORY.values() for d in group]
