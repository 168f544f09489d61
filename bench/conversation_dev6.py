"""The developer's own cases of session 14 (``--set dev6``), issue 30: retrieval by meaning.
Every ask shares no content word with the statement that answers it ("Which motor do I
drive?" is not asked after "I have a car"): the link is what the words mean, never a word
in common. Written before the sentence encoder was wired into recall and before any of them
was measured, in words of their own (no name or place of another set, nor of the brief's
examples); tuned on from then on, so never a held-out figure. Twelve turns that happened to
equal a turn of another set word for word (found by a script that showed only this set's
sentence; three of them blind4's and one blind6's, which their test refuses) were reworded
after the first measure ("What age is my grandfather?" for "How old is my grandfather?").

Kinds: possessions, places, family, health, work, routines, other people the user knows,
quantities; each telling sits among other statements of the user's (so the right one must
be picked, not just the newest), with small talk between, and a few never-said asks beside
them (the honest reply says it does not know).
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["DEV6"]

Turn = tuple[str, ...]

DEV6: list[list[Turn]] = [
    # possessions
    [("I cycle to the office on an ancient Peugeot.",), ("My sister teaches chemistry.",),
     ("What make is my bike?", "Peugeot")],
    [("Our hatchback is a bright orange Honda.",), ("I hate Mondays.",),
     ("What colour is the family car?", "orange")],
    [("I play a battered Fender I got at sixteen.",), ("What's the weather like in Lima?",),
     ("Which brand of guitar do I own?", "Fender")],
    [("I'm still using a cracked Pixel.",), ("I drink oat milk.",),
     ("What handset have I got?", "Pixel")],
    [("I wear a silver Casio every day.",), ("Which watch do I have on?", "Casio")],
    # places
    [("We rent a tiny flat overlooking the harbour in Gdansk.",), ("I'm a night owl.",),
     ("Which town is my home?", "Gdansk")],
    [("I spent my childhood on a farm outside Ballarat.",), ("My favourite fruit is plums.",),
     ("Where was I raised?", "Ballarat")],
    [("Every summer we go camping by Lake Bohinj.",), ("Tell me a fun fact.",),
     ("Where do we holiday each year?", "Bohinj")],
    [("My office is on the fourth floor above a pharmacy on Mill Street.",),
     ("Which road is my workplace on?", "Mill")],
    # family
    [("My mum's name is Oonagh.",), ("I'm learning to knit.",),
     ("What is my mother called?", "Oonagh")],
    [("Tobias and I got married in 2019.",), ("I love thunderstorms.",),
     ("Who is my husband?", "Tobias")],
    [("Our little one, Wren, starts nursery next week.",), ("My car needs a service.",),
     ("What is my daughter called?", "Wren")],
    [("Grandpa Ezra turns ninety-four in May.",), ("What age is my grandfather?", "ninety-four",
                                                   "94")],
    [("My brother-in-law Kofi flies helicopters for the coastguard.",),
     ("What job does my sister's husband have?", "helicopter")],
    # health
    [("Penicillin makes me break out in blotches.",), ("I enjoy crosswords.",),
     ("Which drug can't I take?", "penicillin")],
    [("I've been diabetic since I was twelve.",), ("My neighbour plays the trumpet.",),
     ("Which illness have I got?", "diabetic", "diabetes")],
    [("I take levothyroxine every morning for my thyroid.",),
     ("Which tablets am I on?", "levothyroxine")],
    [("My left knee got wrecked playing rugby at school.",), ("I like sushi.",),
     ("Which joint is injured?", "knee")],
    # work
    [("I fix boilers and radiators for a living.",), ("My cat is ginger.",),
     ("What's my job?", "boiler", "radiator")],
    [("I spend my days writing software for a bank in Leeds.",), ("Nice weather today.",),
     ("What do I do to earn a living?", "software")],
    [("I'm a midwife at the Royal Infirmary.",), ("I prefer tea to coffee.",),
     ("Where am I employed?", "Infirmary")],
    # routines
    [("I swim thirty lengths before breakfast most days.",), ("My aunt lives in Cork.",),
     ("How do I exercise in the mornings?", "swim")],
    [("On Sundays I phone my gran after lunch.",), ("What do I do at the weekend?", "gran")],
    [("I'm in bed by half nine on weeknights.",), ("I collect stamps.",),
     ("What time do I go to sleep?", "nine")],
    # other people the user knows
    [("My neighbour Priyanka breeds chickens.",), ("I've got a cold.",),
     ("What animals does the woman next door raise?", "chicken")],
    [("My best mate Declan moved to Auckland last spring.",), ("I love pasta.",),
     ("Where does my closest friend live now?", "Auckland")],
    [("My boss, Henrietta, rides a motorbike to work.",),
     ("How does my manager get to the office?", "motorbike")],
    # quantities
    [("We keep five hens in the back garden.",), ("I'm reading a thriller.",),
     ("How many chickens are in our flock?", "five", "5")],
    [("My commute is forty minutes each way.",), ("How long is my journey to work?", "forty",
                                                  "40")],
    [("I've got three older sisters.",), ("My favourite season is autumn.",),
     ("How many siblings do I have?", "three", "3")],
    # part two (written after the first baseline, before any change): longer conversations,
    # several things told, then asked in other words, oldest first
    [("I'm Magnus, I'm a carpenter.",), ("My wife Ilse grows tomatoes.",),
     ("We've got a border collie named Biscuit.",), ("I drive an old grey Saab.",),
     ("Shellfish brings me out in hives.",), ("Tell me a joke.",),
     ("What sort of dog do we have?", "collie"), ("What's my trade?", "carpenter"),
     ("Which seafood must I avoid?", "shellfish"), ("What make is my motor?", "Saab"),
     ("Who is my spouse?", "Ilse")],
    [("My son Ravi is at university in Glasgow.",), ("I commute by tram.",),
     ("I do pilates twice a week.",), ("My mother-in-law lives with us.",),
     ("Our flat has two bedrooms.",), ("What's the capital of Chile?",),
     ("Where is my boy studying?", "Glasgow"), ("How do I get to work?", "tram"),
     ("What exercise do I do?", "pilates"), ("How many rooms for sleeping do we have?",
                                              "two", "2")],
    [("I've had asthma since childhood.",), ("My granddad was a fisherman in Whitby.",),
     ("I play bass in a covers band.",), ("My partner, Noor, is a vet.",),
     ("I take my coffee black.",), ("How was your day?",),
     ("What breathing problem do I have?", "asthma"),
     ("What did my grandfather do?", "fisherman"), ("Which instrument is mine?", "bass"),
     ("What's my other half's line of work?", "vet")],
    [("My landlord is a grumpy man called Mr Oduya.",), ("I keep a bonsai on my desk.",),
     ("My twin sister Clio lives in Marseille.",), ("I'm saving for a trip to Japan.",),
     ("My bike got stolen last month.",), ("Any news today?",),
     ("Who owns the place I rent?", "Oduya"), ("Where is my sibling based?", "Marseille"),
     ("Which country am I hoping to visit?", "Japan"),
     ("What plant is at my workstation?", "bonsai")],
    [("I run a bakery with my cousin Tamsin.",), ("We open at six every morning.",),
     ("Our best seller is cardamom buns.",), ("I'm gluten intolerant, ironically.",),
     ("I live above the shop in Frome.",), ("Good night.",),
     ("What business do I own?", "bakery"), ("Who is my co-owner?", "Tamsin"),
     ("What's the most popular thing we sell?", "cardamom"),
     ("When do we start trading?", "six"), ("What can't I digest?", "gluten")],
    [("My daughter Esme plays the cello.",), ("My husband Joao cooks on Fridays.",),
     ("I teach yoga in the evenings.",), ("We have a tortoise called Kevin.",),
     ("My car is a red Kia.",), ("What's a good film?",),
     ("Which instrument does my girl play?", "cello"),
     ("Who makes dinner at the end of the week?", "Joao"),
     ("What reptile do we keep as a pet?", "tortoise"), ("What colour is my vehicle?", "red")],
    [("I moved here from Kraków two years ago.",), ("I guard a warehouse overnight.",),
     ("My niece is called Zuzanna.",), ("I never eat pork.",),
     ("My phone number ends in 4471.",), ("Thanks for listening.",),
     ("Where did I live before?", "Krak"), ("What shift pattern do I have?", "night"),
     ("What's my brother's daughter's name?", "Zuzanna"),
     ("Which meat don't I touch?", "pork"), ("What are the last digits to ring me on?",
                                              "4471")],
    [("My gym is the one next to the station.",), ("My dad fixes clocks as a hobby.",),
     ("I've got a tattoo of a swallow on my wrist.",), ("I wake at five to walk the dog.",),
     ("I re-read Terry Pratchett every winter.",), ("Tell me about Mars.",),
     ("Where do I work out?", "station"), ("What does my father tinker with?", "clock"),
     ("What picture is inked on my arm?", "swallow"),
     ("Which writer do I like best?", "Pratchett"), ("When do I get up?", "five")],
    [("I've got a mortgage with Nationwide.",), ("My first language is Welsh.",),
     ("I broke my wrist skiing in February.",), ("My godson Alfie turned seven yesterday.",),
     ("Which lender is my home loan with?", "Nationwide"),
     ("What did I speak growing up?", "Welsh"), ("What injury did I get?", "wrist"),
     ("How old is my godchild now?", "seven")],
    [("I'm a pharmacist in a small village.",), ("I cycle forty miles on Saturdays.",),
     ("My fiancé is called Bastien.",), ("I can't stand olives.",),
     ("We're getting married in Sorrento.",), ("What's the time in Tokyo?",),
     ("Who am I engaged to?", "Bastien"), ("Where's the wedding?", "Sorrento"),
     ("What's my profession?", "pharmacist"), ("How far do I ride at weekends?", "forty"),
     ("Which food do I dislike?", "olive")],
    [("I'm Tilde.",), ("I have two goldfish, Salt and Pepper.",),
     ("I'm a season ticket holder at Brentford.",), ("My aunt Rosalind is a judge.",),
     ("What's my height?", UNKNOWN), ("Which football club do I support?", "Brentford"),
     ("What does my aunt do?", "judge"), ("What pets have I got?", "goldfish")],
    # never said: nothing told is about it
    [("I cycle to the office on an old Bianchi.",), ("What's my blood type?", UNKNOWN)],
    [("My dad's name is Lorcan.",), ("What is my cousin called?", UNKNOWN)],
]
