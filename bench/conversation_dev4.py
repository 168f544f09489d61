"""The developer's own cases of session 13 (``--set dev4``), issue 30: asks worded unlike
the telling. Written in session 13 before any change they measure, in words of their own
(no sentence, name or place of another set); tuned on, like DEV, DEV2 and DEV3, so never a
held-out figure.

Kinds: a thing asked by what kind of thing it is ("What instrument do I teach?" after "I
give piano lessons"; "What colour is my car?" after "I drive a blue Volvo"); a family
member asked by another kin word ("my sibling" for "my sister"); names and nicknames asked
as "what do my friends call me"; numbers said in words and asked as "how many"; a fact told
in passing inside a longer sentence; a fact told several turns back with small talk
between; and a never-said ask beside them.
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["DEV4"]

Turn = tuple[str, ...]

DEV4: list[list[Turn]] = [
    # the kind of thing asked, not the thing
    [("I give piano lessons on Saturday mornings.",),
     ("What instrument do I teach?", "piano")],
    [("I drive a blue Volvo.",), ("What colour is my car?", "blue")],
    [("My daughter plays the cello in the school orchestra.",),
     ("Which instrument does my kid play?", "cello")],
    [("I usually have a flat white before work.",),
     ("What's my usual drink in the morning?", "flat white")],
    [("Badminton is what I do on Wednesday nights.",),
     ("Which sport do I play midweek?", "badminton")],
    [("We've got a gecko living in a tank in the lounge.",),
     ("What animal do we keep?", "gecko")],
    [("I ride a red Vespa to the office.",), ("What do I get to work on?", "Vespa"),
     ("And what colour is it?", "red")],
    [("Pistachio gelato is my weakness.",), ("Which flavour can I never resist?", "pistachio")],
    # family asked by another kin word
    [("My sister Mei lives in Oslo.",), ("Where does my sibling live?", "Oslo")],
    [("My grandad Wilfred used to fly gliders.",),
     ("What did my grandfather do for fun?", "glider"),
     ("What was his name again?", "Wilfred")],
    [("My wife is a dentist in Harrogate.",), ("What does my spouse do?", "dentist")],
    [("Our twins, Ada and Lev, start school in September.",),
     ("What are my children called?", "Ada", "Lev")],
    [("My mother-in-law, Ingrid, is coming for Christmas.",),
     ("Who is visiting over the holidays?", "Ingrid", "mother-in-law")],
    # names and nicknames
    [("Everyone at the climbing wall knows me as Spider.",),
     ("What's my nickname?", "Spider")],
    [("My passport says Bartholomew, but please just say Bart.",),
     ("How should you address me?", "Bart")],
    [("Hi there, Thandiwe here, my mates shorten it to Thandi.",),
     ("What do my friends call me?", "Thandi")],
    [("My parents named me after my great-aunt Philippa.",),
     ("What's my first name?", "Philippa")],
    # numbers in words and in digits
    [("I've got three cats and a rabbit.",), ("How many cats do I own?", "three", "3")],
    [("I'm turning forty next spring.",), ("How old will I be next year?", "forty", "40")],
    [("Our house number is 27.",), ("Which number do we live at?", "27", "twenty-seven")],
    [("I run about twelve kilometres every Sunday.",),
     ("How far do I go on Sundays?", "twelve", "12")],
    [("My locker code is four four nine one.",), ("What's the code for my locker?", "four", "4")],
    # told in passing in a longer sentence
    [("When I was working at the aquarium in Plymouth last summer, a seal splashed me.",),
     ("Where did I work last summer?", "aquarium", "Plymouth")],
    [("After my shift at the fire station I'm too tired to cook.",),
     ("What's my job?", "fire")],
    [("Ugh, my knee's been sore since I fell off my bike in Ghent.",),
     ("Which city did I have the accident in?", "Ghent")],
    [("Honestly, being vegan makes eating out in this town hard.",),
     ("What's my diet?", "vegan")],
    # several turns back, small talk between
    [("My cousin Tomasz is getting married in Krakow.",),
     ("What's the weather like in spring usually?",),
     ("I'm so tired today.",),
     ("Where is the wedding?", "Krakow")],
    [("I'm allergic to shellfish.",), ("How do I boil an egg?",),
     ("That sounds easy.",), ("What food must I avoid?", "shellfish")],
    [("My hamster is called Biscuit.",), ("Tell me a fun fact about the moon.",),
     ("I need to buy groceries later.",), ("What's the name of my pet?", "Biscuit")],
    [("I grew up on a farm near Galway.",), ("What's a good name for a band?",),
     ("My tea's gone cold.",), ("Where's home for me originally?", "Galway")],
    [("My boss is called Renata.",), ("Is it going to rain?",),
     ("I had pasta for lunch.",), ("Who do I report to at work?", "Renata")],
    # several things told over a few turns, then asked in other words
    [("I'm Yusuf, by the way.",), ("I teach chemistry at a sixth-form college.",),
     ("My partner Leon is a nurse.",), ("We have two whippets.",),
     ("I'm learning the saxophone too.",),
     ("What subject do I teach?", "chemistry"),
     ("What does my other half do for a living?", "nurse"),
     ("How many dogs have we got?", "two", "2"),
     ("Which instrument am I learning?", "saxophone")],
    [("I moved here from Lagos in 2015.",), ("My son Kofi is seven.",),
     ("I work nights as a security guard.",), ("I can't eat gluten.",),
     ("Fleetwood Mac is what I blast in the car.",),
     ("Which country did I come from?", "Lagos", "Nigeria"),
     ("How old is my boy?", "seven", "7"),
     ("What shifts do I work?", "night"),
     ("What am I intolerant to?", "gluten")],
    [("My name's Carys and I live in a village near Aberystwyth.",),
     ("I drive a green Land Rover.",), ("My dad was a fisherman.",),
     ("I've been married for eleven years.",), ("I love doing jigsaws.",),
     ("What vehicle do I have?", "Land Rover"),
     ("What did my father do?", "fisher"),
     ("How long have I been wed?", "eleven", "11"),
     ("What's my hobby?", "jigsaw"),
     ("Which town am I close to?", "Aberystwyth")],
    [("I've got a tortoise called Sheldon.",), ("My sister is a pilot for a cargo airline.",),
     ("I'm five foot two.",), ("I was born on the fourth of July.",),
     ("My neighbour plays drums at midnight.",),
     ("What reptile do I own?", "tortoise", "Sheldon"),
     ("What does my sibling fly?", "cargo", "plane"),
     ("How tall am I?", "five", "5"),
     ("When's my birthday?", "July"),
     ("What instrument keeps me awake?", "drum")],
    [("Morning! I'm Ravi and I'm a plumber.",), ("My wife's name is Anjali.",),
     ("We've got a cockatoo called Pickle.",), ("I support Aston Villa.",),
     ("What trade am I in?", "plumb"),
     ("Who am I married to?", "Anjali"),
     ("What kind of bird do we have?", "cockatoo"),
     ("Which football team do I follow?", "Villa")],
    # a thing named by its kind among several things told
    [("I can't stand broccoli.",), ("I cycle to the station every day.",),
     ("My flat is on the fourth floor.",), ("I've just started a pottery class.",),
     ("Which vegetable do I hate?", "broccoli"),
     ("What craft am I learning?", "pottery")],
    [("My wedding ring is titanium.",), ("I've been to Iceland twice.",),
     ("I always sleep with the window open.",), ("My youngest is called Rosa.",),
     ("What metal is my ring made of?", "titanium"),
     ("What's the name of my little one?", "Rosa")],
    [("Kiwis make my mouth itch.",), ("I take the early train on Mondays.",),
     ("My husband Declan snores terribly.",), ("We bought a campervan in May.",),
     ("Which fruit should I stay off?", "kiwi"),
     ("What's my spouse's name?", "Declan"),
     ("What vehicle did we buy?", "campervan")],
    [("There's a big old oak at the bottom of my garden.",), ("I'm terrible at maths.",),
     ("My best mate Oisin lives in Sligo.",), ("I put cumin in nearly everything I cook.",),
     ("What tree grows in my garden?", "oak"),
     ("What spice do I overuse?", "cumin"),
     ("Where does my friend live?", "Sligo")],
    [("I caught a pike at the reservoir on Saturday.",), ("Tulips are my favourite.",),
     ("I've got 2 kids at primary school.",), ("My mum's a midwife.",),
     ("What fish did I land?", "pike"),
     ("Which flower do I like best?", "tulip"),
     ("How many children do I have?", "2", "two"),
     ("What's my mother's profession?", "midwife")],
    [("I've got a mole on my left shoulder.",), ("I speak Tagalog with my grandmother.",),
     ("My car is a silver Honda Jazz.",), ("We're off to Crete in June.",),
     ("Which language do I use with my nan?", "Tagalog"),
     ("What make is my car?", "Honda"),
     ("Which island is our holiday on?", "Crete")],
    # never said, beside a note
    [("I play the trumpet in a brass band.",), ("What's my dog called?", UNKNOWN)],
    [("My brother lives in Dundee.",), ("What's my sister's name?", UNKNOWN)],
]
