"""The developer's own cases of session 13's second round (``--set dev5``), issue 30: the
user's statements the speaker was never handed. Written before any change they measure, in
words of their own (no sentence, name or place of another set, nor of the brief's examples);
tuned on, like DEV3 and DEV4, so never a held-out figure.

Kinds (the categories in which blind5's retrieval missed most, by name only): follow-ups
(a pronoun or elliptic ask about something told a turn or two before), facts told in
passing inside a complaint or a story, "remember this for me" (the user asks that a fact be
kept, then asks for it later), vehicles and possessions, family, several facts in one
utterance, corrections and preferences changed later (the later value is the one asked),
and never-said asks beside them. Part three (4 dialogues) holds probes written while
changing, each fixed by a change of this round.
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["DEV5"]

Turn = tuple[str, ...]

DEV5: list[list[Turn]] = [
    # follow-ups: a pronoun or elliptic ask about what was told a turn or two before
    [("My niece Saoirse just got into art school.",), ("Which school did she get into?", "art"),
     ("And what's her name again?", "Saoirse")],
    [("I bought a second-hand kayak last weekend.",), ("Nice, what colour is it?", UNKNOWN)],
    [("My uncle Bram keeps bees in Utrecht.",), ("What does he keep?", "bee"),
     ("Where is that?", "Utrecht")],
    [("We adopted a greyhound from the rescue centre.",), ("That's lovely.",),
     ("What breed did we get?", "greyhound"), ("Where did it come from?", "rescue")],
    [("My neighbour Farida is ninety-one.",), ("How old is she?", "ninety-one", "91")],
    [("I've got a new bike, a Brompton.",), ("What make is it?", "Brompton")],
    [("Our youngest lad has hockey training with the under-elevens on Fridays.",),
     ("What sport again?", "hockey"), ("And which team is he in?", "eleven")],
    # told in passing, inside a complaint or a story
    [("Honestly the bus to the bakery where I do early shifts was late again.",),
     ("Where do I work?", "bakery")],
    [("I spilled coffee all over my notes on the way to my Portuguese class, typical.",),
     ("Which language am I studying?", "Portuguese")],
    [("So my flatmate Gideon left the oven on again, can you believe it.",),
     ("What's my flatmate called?", "Gideon")],
    [("I was walking my spaniel Mabel in the rain and she rolled in mud.",),
     ("What's my dog's name?", "Mabel")],
    [("Ugh, the lift at my building in Rotterdam has been broken for a week.",),
     ("Which city do I live in?", "Rotterdam")],
    [("Long day, the kids at the primary school where I teach year four were wild.",),
     ("What year group do I teach?", "four")],
    # remember this for me
    [("Remember that my bike lock code is 3817.",), ("Is it cold out?",),
     ("What's my bike lock code?", "3817")],
    [("Don't let me forget that the plumber comes on Thursday.",),
     ("When is the plumber coming?", "Thursday")],
    [("Please note down that my gym membership number is 55120.",),
     ("What's my membership number?", "55120")],
    [("Keep in mind that my parking space is B14.",), ("Tell me a joke.",),
     ("Where do I park?", "B14")],
    [("Can you remember my sister's birthday is the ninth of March?",),
     ("When is my sister's birthday?", "March")],
    [("Remind me later that I lent my drill to Callum.",),
     ("Who has my drill?", "Callum")],
    [("Make a note: the boiler service is due in October.",),
     ("When is the boiler service due?", "October")],
    # vehicles and possessions
    [("My car is an old yellow Skoda estate.",), ("What car do I drive?", "Skoda")],
    [("I keep my grandmother's silver watch in a drawer.",),
     ("What did I inherit from my gran?", "watch")],
    [("We've got a narrowboat moored near Oxford.",), ("What kind of boat do we own?", "narrow"),
     ("Where is it kept?", "Oxford")],
    [("My laptop is a battered ThinkPad.",), ("Which laptop do I use?", "ThinkPad")],
    [("I ride a motorbike, a Triumph Bonneville.",), ("What bike do I have?", "Triumph")],
    # family
    [("My stepson Jules is doing an apprenticeship as an electrician.",),
     ("What is my stepson training to be?", "electrician")],
    [("My grandparents ran a fish and chip shop in Whitby.",),
     ("What business did my grandparents have?", "chip"),
     ("Where was it?", "Whitby")],
    [("My brother-in-law Tariq is a paramedic.",),
     ("What's my brother-in-law's job?", "paramedic")],
    [("My aunt lives on a farm in Tasmania.",), ("Where does my auntie live?", "Tasmania")],
    [("My little girl, Noor, is scared of thunder.",), ("What's my daughter called?", "Noor")],
    # several facts at once
    [("I'm Lucia, I work as a vet nurse, and I live in Bristol with my cat Pesto.",),
     ("What do I do for work?", "vet"), ("Where do I live?", "Bristol"),
     ("What's my cat called?", "Pesto")],
    [("We have three kids, a dog called Moss and a caravan in Wales.",),
     ("How many children do we have?", "three", "3"), ("What's our dog's name?", "Moss"),
     ("Where's our caravan?", "Wales")],
    [("I'm 52, I'm a carpenter and I play bass in a covers band.",),
     ("What instrument do I play?", "bass"), ("How old am I?", "52", "fifty-two"),
     ("What's my trade?", "carpenter")],
    # corrections
    [("My dentist appointment is on Tuesday.",), ("Actually no, it's on Wednesday.",),
     ("When's my dentist appointment?", "Wednesday")],
    [("My nephew is called Aiden.",), ("Sorry, I meant Brandon, not Aiden.",),
     ("What's my nephew's name?", "Brandon")],
    [("I live at number 14.",), ("Wait, I got that wrong, it's number 41.",),
     ("What number do I live at?", "41", "forty-one")],
    [("My train leaves from platform two.",), ("Correction: platform six.",),
     ("Which platform is my train?", "six", "6")],
    # preferences changed later
    [("My favourite colour is green.",), ("These days I prefer purple.",),
     ("What's my favourite colour?", "purple")],
    [("I used to drink black coffee.",), ("Now I only drink oat lattes.",),
     ("What do I drink now?", "oat")],
    [("I love running.",), ("I've gone off running, I'm into swimming now.",),
     ("Which exercise do I enjoy these days?", "swim")],
    [("I'm a vegetarian.",), ("I started eating fish again last month.",),
     ("What did I go back to eating?", "fish")],
    # added before any change too: harder follow-ups and several facts at once
    [("My cousin Pilar runs a surf school.",), ("I had cereal for breakfast.",),
     ("What does my cousin run?", "surf"), ("Where is it, do you know?", UNKNOWN)],
    [("My wife just started a new job.",), ("She's an architect now.",),
     ("What does she do?", "architect")],
    [("Our neighbours' son Kwame fixed our fence.",), ("How nice.",),
     ("Who fixed the fence?", "Kwame"), ("Whose son is he?", "neighbour")],
    [("I drive a Kia Picanto, own a rowing machine and have a season ticket at Celtic.",),
     ("Which football club do I have a ticket for?", "Celtic"),
     ("What's my car?", "Picanto"), ("What exercise machine do I own?", "rowing")],
    [("My mum's seventy, my dad's seventy-four and my brother is forty.",),
     ("How old is my father?", "seventy-four", "74"), ("And my brother?", "forty", "40")],
    [("Typical, I left my umbrella on the tram to the museum where I volunteer.",),
     ("Where do I volunteer?", "museum")],
    [("Note that I take my tea with two sugars.",), ("What's the capital of Peru?",),
     ("I'm hungry.",), ("How do I take my tea?", "two", "2")],
    [("I prefer aisle seats on trains.",), ("Actually, I've changed my mind, window seats.",),
     ("Which seat do I like on trains?", "window")],
    [("My favourite band was Blur.",), ("Lately I'm more into Wet Leg.",),
     ("Which band am I into now?", "Wet Leg")],
    # part two, written after the first changes (before any change of their own)
    [("My daughter's boyfriend, Ruairi, is a tree surgeon.",), ("What's his job?", "tree"),
     ("What's he called?", "Ruairi")],
    [("I've got a 2009 Volvo that keeps breaking down, honestly it's a money pit.",),
     ("How old is my car?", "2009"), ("What make is it?", "Volvo")],
    [("My grandson Teodor is learning the violin.",), ("What's the weather tomorrow?",),
     ("What is he learning?", "violin")],
    [("Sorry I'm late, the school run took ages because my twins, Bea and Otto, "
      "forgot their lunches.",), ("What are my twins called?", "Bea", "Otto")],
    [("I've got a nut allergy, a season pass for the zoo and a cat called Juniper.",),
     ("What am I allergic to?", "nut"), ("What pass do I have?", "zoo"),
     ("What's the cat's name?", "Juniper")],
    [("My phone is a cracked Pixel.",), ("I keep dropping it.",),
     ("Which handset do I use?", "Pixel")],
    [("My meeting with the bank is at ten.",), ("No wait, it's at half eleven.",),
     ("What time is the bank meeting?", "half eleven", "11")],
    [("I'm into jazz.",), ("Scratch that, I mostly listen to folk these days.",),
     ("What music do I listen to?", "folk")],
    [("My stepmum Lorraine breeds alpacas in Cumbria.",),
     ("What animals does my stepmother breed?", "alpaca"), ("Where?", "Cumbria")],
    [("Writing this down for later: my National Insurance number ends in 47C.",),
     ("What does my NI number end in?", "47C")],
    [("So annoying, my e-bike's battery died halfway to my sister Wanjiru's place.",),
     ("What's my sister called?", "Wanjiru"), ("What kind of bike do I ride?", "e-bike")],
    # part three: probes written while changing (tuned on)
    [("I'm allergic to cats.",), ("Not cats, dogs, sorry.",),
     ("Which animal am I allergic to?", "dogs")],
    [("We're thinking of getting a puppy.",), ("Probably a cockapoo.",),
     ("What breed are we getting?", "cockapoo")],
    [("My cousin Ivo is a pilot for KLM.",), ("I'm so tired today.",),
     ("Which airline does he fly for?", "KLM")],
    [("Did I tell you my stepbrother Anselm opened a bike shop in Delft?",),
     ("What did my stepbrother open?", "bike"), ("Where is it?", "Delft")],
    # never said, beside a note
    [("Remember that my locker at the pool is 19.",), ("What's my car's registration?", UNKNOWN)],
]
