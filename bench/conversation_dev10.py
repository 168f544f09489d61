"""The developer's own cases of session 18 (``--set dev10``, part one; ``--set dev10b``, part
two), issue 30: written before any of them was measured and before any change of the
session, in phrasings unlike dev7's, dev8's and dev9's: several facts in one breath, facts
told in passing inside a story or a complaint, hedged tellings ("I think my flight is on the
ninth"), self-corrections mid-sentence ("my sister, no, my cousin Lena"), lists ("two cats,
Miso and Tofu"), negations ("I don't eat pork"), relative dates, units and amounts, asks
phrased as requests ("remind me where I parked"), yes/no asks ("am I allergic to
anything?"), asks without "my", asks naming a synonym or a kind of the told word, asks many
turns later, speech-to-text without punctuation, other people's facts, and never-told asks
next to told ones (the dog's name told, its age asked). Part one is tuned on from the first
change. Part two (``dev10b``, 20 dialogues) was written at the same time and not run until
the end of the session: the held-out figure. Six asks were reworded after the first
measurement, the words kept as near as could be, because they were the same as turns of
other sets (tests/voice/test_bench_conversation_blind2.py: no set repeats another's).
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["DEV10", "DEV10B"]

Turn = tuple[str, ...]

DEV10: list[list[Turn]] = [
    # several facts in one breath
    [("Quick intro, I'm Ingrid, I'm a vet in Bergen and I've got twin boys.",),
     ("What do I do for work?", "vet"), ("Which city am I in?", "Bergen"),
     ("How many children have I got?", "twin", "two", "2")],
    [("So I'm thirty four, left handed, and I play the cello in an amateur orchestra.",),
     ("What instrument do I play in the orchestra?", "cello"),
     ("Which hand do I write with?", "left")],
    [("We moved here from Adelaide in 2019, my husband works nights at the depot and I "
      "teach yoga.",),
     ("Where did we live before?", "Adelaide"), ("When did we move?", "2019"),
     ("What's my husband's job like, what hours?", "night")],
    [("Alright so my mum's seventy, my dad's seventy two and they live in Galway.",),
     ("How old is my father?", "seventy two", "72", "seventy-two"),
     ("Where do my parents live?", "Galway")],
    # told in passing inside a story or a complaint
    [("Ugh, the bus broke down again so I was late to the dentist, and that's the second "
      "time this month with the number 38.",),
     ("What's a good stretch for a stiff neck?",),
     ("Which bus do I take?", "38")],
    [("I tripped on the stairs carrying my daughter Freya's science project, a volcano "
      "made of papier mache, and it's ruined.",),
     ("What was the project?", "volcano"), ("Whose project was it?", "Freya")],
    [("Our landlord, a guy called Mr Petrakis, still hasn't fixed the shower after two "
      "weeks of emails.",),
     ("Tell me a short poem.",), ("Who's our landlord?", "Petrakis")],
    [("Went for a run along the canal this morning and did ten kilometres without "
      "stopping, first time ever.",),
     ("How far did I run today?", "ten", "10")],
    # hedged tellings
    [("I think my flight home is on the ninth, but don't quote me.",),
     ("When do I fly home?", "ninth", "9")],
    [("I'm fairly sure the meeting with the bank is at half past ten.",),
     ("Suggest a healthy snack.",),
     ("What time is the bank thing?", "half past ten", "10:30", "10.30")],
    [("If I remember right my sister's kids are called Noor and Sami.",),
     ("Who are my sister's children?", "Noor", "Sami")],
    # self-corrections mid-sentence
    [("My sister, no wait, my cousin Lena is getting married in Vienna.",),
     ("Who's the one getting married?", "Lena"), ("Where is the wedding?", "Vienna")],
    [("The party is on Friday, sorry, Saturday the fourth.",),
     ("Which day is the party?", "Saturday")],
    [("I've got three, actually four houseplants that need watering daily.",),
     ("How many plants do I have?", "four", "4")],
    # lists
    [("We've got two cats, Miso and Tofu, and a goldfish nobody named.",),
     ("What are the cats called?", "Miso", "Tofu"), ("How many cats are there?", "two", "2")],
    [("For the trip I still need sunscreen, a charger and a rain jacket.",),
     ("Give me a fun fact about penguins.",),
     ("What did I say I still need for the trip?", "sunscreen", "charger", "jacket")],
    [("My favourite painters are Hokusai, Frida Kahlo and Turner.",),
     ("Which Japanese artist do I like?", "Hokusai")],
    # negations
    [("I don't eat pork, and I'm not a big fan of lamb either.",),
     ("Is there any meat I stay away from?", "pork")],
    [("I never drink coffee after lunch or I can't sleep.",),
     ("Why do I skip coffee in the afternoon?", "sleep")],
    [("I'm not allowed to drive for six months after the operation.",),
     ("How long can't I drive for?", "six", "6")],
    # relative dates
    [("My nephew's christening is a week on Sunday.",),
     ("When is the christening?", "Sunday")],
    [("The kitchen fitters are coming the day after tomorrow.",),
     ("When are the fitters coming?", "day after tomorrow")],
    [("We got engaged two years ago at Christmas.",),
     ("How long ago did we get engaged?", "two", "2")],
    # units and amounts
    [("I weighed myself this morning, eighty two kilos, down from ninety.",),
     ("What do I weigh now?", "eighty two", "82", "eighty-two")],
    [("The new fridge cost six hundred and forty euros with delivery.",),
     ("How much was the fridge?", "six hundred", "640")],
    [("Our garden is about fifteen metres long.",), ("Recommend a fast growing hedge.",),
     ("How long is the garden?", "fifteen", "15")],
    # asks phrased as requests
    [("I parked on level three of the multi storey, row F.",),
     ("Tell me a joke about cars.",), ("remind me where I parked the car", "three", "F")],
    [("The code for the office door is 4471.",),
     ("Can you give me the door code again?", "4471")],
    # yes/no asks
    [("Penicillin gives me a rash, so doctors always write it down.",),
     ("Am I allergic to anything at all?", "penicillin")],
    [("I've got a yellow belt in judo.",), ("Do I do any martial arts?", "judo")],
    # asks without "my"
    [("The boiler service is booked for the 14th with a man called Des.",),
     ("Who's doing the boiler service?", "Des")],
    [("The dog's lead is hanging on the hook behind the back door.",),
     ("Where's the lead?", "hook", "back door")],
    # synonym or hypernym of the told word
    [("I keep a pair of ferrets in the shed, Bonnie and Clyde.",),
     ("What sort of animals do I keep?", "ferret")],
    [("Gave up my Fiesta and bought an e-bike to get to work.",),
     ("How do I commute?", "bike", "e-bike")],
    [("I'm lactose intolerant, so it's oat milk for me.",),
     ("What's my dairy problem?", "lactose")],
    # asked many turns later
    [("My locker at the gym is number 112.",), ("What's the capital of Peru?",),
     ("Give me a tip for sore calves.",), ("How do I keep basil alive?",),
     ("Tell me something about Saturn.",), ("Which locker is mine?", "112")],
    # speech-to-text without punctuation
    [("so my brothers name is kwame and he lives in accra with his wife",),
     ("where does my brother live", "accra"), ("whats his name", "kwame")],
    [("i work at the garden centre on saturdays and sundays",),
     ("what days do i work", "saturday", "sunday")],
    # other people's facts
    [("My flatmate Jonas is allergic to shellfish so we never cook prawns.",),
     ("What's Jonas allergic to?", "shellfish")],
    [("My boss drives a vintage Jaguar she restored herself.",),
     ("What car does my boss have?", "Jaguar")],
    # never-told asks next to told ones
    [("Our dog is a collie called Biscuit.",), ("How old is Biscuit?", UNKNOWN)],
    [("My son plays the drums in a school band.",), ("What's my son's name?", UNKNOWN)],
    [("I'm flying to Lisbon in March.",), ("Which airline am I flying with?", UNKNOWN)],
    [("My wife is a pharmacist.",), ("Where does my wife work?", UNKNOWN)],
    [("I drive a green Skoda.",), ("What year is my car?", UNKNOWN)],
]

DEV10B: list[list[Turn]] = [
    [("Right so I'm Matteo, I'm from Turin, I cook in a hotel kitchen and I'm learning "
      "Welsh.",),
     ("Which language am I studying?", "Welsh"), ("Where am I from originally?", "Turin")],
    [("Spent the weekend helping my friend Oona move flat, she's got so many books, must "
      "be a thousand at least.",),
     ("Name a good stretch for the back.",), ("Whose flat did I help with?", "Oona")],
    [("I reckon the recital is on the twelfth but I'll check.",),
     ("When is the recital?", "twelfth", "12")],
    [("My granddaughter, sorry, my great granddaughter Elsie turns one tomorrow.",),
     ("Who has a birthday tomorrow?", "Elsie")],
    [("In the fridge there's eggs, spinach and half a lemon.",),
     ("What do I have to cook with?", "egg", "spinach", "lemon")],
    [("I don't drink alcohol at all, haven't for ten years.",),
     ("Do I drink?", "alcohol", "don't", "not")],
    [("The plumber said he'd come back in a fortnight.",),
     ("When is the plumber coming back?", "fortnight")],
    [("My suitcase weighed twenty three kilos at check in.",),
     ("How heavy was my bag?", "twenty three", "23", "twenty-three")],
    [("I left my reading glasses in the glovebox of the van.",),
     ("Recommend a podcast.",), ("remind me where my glasses are", "glovebox", "van")],
    [("Wasps make me swell up like a balloon.",), ("Am I allergic to any insects?", "wasp")],
    [("The spare bedroom is painted sage green.",),
     ("What colour is the spare room?", "sage", "green")],
    [("I grow dahlias on the allotment, mostly the red ones.",),
     ("What flowers do I grow?", "dahlia")],
    [("My bank card PIN hint is my first cat, which was Pickle.",),
     ("What's a nice side dish for fish?",), ("What was my first cat called?", "Pickle")],
    [("ok so my daughter is called amara and she is doing medicine at leeds",),
     ("what is amara studying", "medicine"), ("where does she study", "leeds")],
    [("My neighbour Mrs Okonkwo keeps bees in her back garden.",),
     ("What does Mrs Okonkwo keep?", "bee")],
    [("I've got a season ticket at Anfield, seat 45 in the Kop.",),
     ("Which seat do I sit in?", "45")],
    [("The car's registration ends in XKL.",), ("What are the last letters of the plate?",
                                                 "XKL")],
    [("My parrot is called Admiral.",), ("What does Admiral eat?", UNKNOWN)],
    [("My brother lives in Toronto.",), ("What does my brother do for a living?", UNKNOWN)],
    [("I'm going to the opera on Friday.",), ("Which opera am I seeing?", UNKNOWN)],
]
