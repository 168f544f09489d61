"""The developer's own cases of session 15 (``--set dev7``), issue 30: what was said in
passing, follow-ups, and asks without "my". Written before any of them was measured and
before any change of the session, in words of their own (no sentence, name or place of
another set, nor of the brief's examples); tuned on from then on, so never a held-out
figure.

Kinds (the categories a blind set's retrieval missed most, by name only): facts told in
passing (inside a sentence about something else: an apology, a complaint, a story, a
subordinate clause), follow-ups (a second ask leaning on the first: a pronoun, "And the
other one?", "What about my sister?"), asks without "my" or "I" ("What's the dog
called?", "How many sugars?"), health, schedules and plans, asks in other words, longer
stories with several things told in passing, and never-said asks beside them (the honest
reply says it does not know). Part two (15 dialogues) was written after the first baseline
and before any change, harder: longer conversations with the fact told in passing among
other statements, and follow-ups of other forms. Part three (8 dialogues) was written
after the first changes and before any change of its own: a fact told in passing inside a
question or a request. Part four (5 dialogues) holds probes written while changing, each
handled by a change of this session (tuned on): asks without "my" opened otherwise.
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["DEV7"]

Turn = tuple[str, ...]

DEV7: list[list[Turn]] = [
    # told in passing: inside an apology, a complaint, a story, a clause about another thing
    [("Sorry I'm late, the tram from Portobello broke down again.",),
     ("What's a word that rhymes with purple?",), ("How do I usually get about?", "tram")],
    [("My sister Imke rang while I was out with the dog, she's expecting twins.",),
     ("Tell me a joke about penguins.",), ("Who was it that rang me?", "Imke")],
    [("I was stuck at the garage all morning because the Skoda's clutch went.",),
     ("What should I have for lunch?",), ("What car do I have?", "Skoda")],
    [("After my shift at the sorting office I went straight to bed.",),
     ("Where do I work?", "sorting")],
    [("My flatmate Oskar burned the toast again, the whole kitchen reeks.",),
     ("Recommend a podcast.",), ("Who do I share a flat with?", "Oskar")],
    [("Couldn't sleep, the kid next door was practising the tuba till midnight.",),
     ("What was the kid next door playing?", "tuba")],
    [("Just back from dropping my daughter Lola at swimming, she's doing lengths now.",),
     ("What's a good stretch after sitting all day?",),
     ("What did I say my girl is called?", "Lola")],
    [("When I was living in Bergen I never bothered with an umbrella, funnily enough.",),
     ("Where did I use to live?", "Bergen")],
    # follow-ups: the second ask leans on the first
    [("My dog is a whippet called Juno.",), ("She turns four in March.",),
     ("What's my dog called?", "Juno"), ("And how old is she?", "four", "4")],
    [("My brother Tadeo is a paramedic in Valencia.",), ("My sister Rosa teaches yoga.",),
     ("What does my brother do?", "paramedic"), ("What about my sister?", "yoga")],
    [("My eldest, Femi, works for an airline in Lagos.",), ("What's my eldest called?", "Femi"),
     ("Where does he work?", "airline", "Lagos")],
    [("I've got two nephews, Joris and Milan.",), ("Joris is nine and Milan is twelve.",),
     ("How old is Joris?", "nine", "9"), ("And the other one?", "twelve", "12")],
    [("My best friend Sunita moved to Perth last year.",), ("She's a dentist.",),
     ("Where does Sunita live now?", "Perth"), ("What does she do for work?", "dentist")],
    [("I drive a blue Kia to work.",), ("My wife drives a white Volvo.",),
     ("What colour is the car I drive?", "blue"), ("And my wife's?", "white")],
    [("My grandmother lives in Galway.",), ("She's ninety-one.",),
     ("Tell me about the weather in Ireland.",), ("Where does my gran live?", "Galway"),
     ("How old is she?", "ninety-one", "91")],
    [("We booked a cottage in Tenby for half term.",), ("My in-laws are coming with us.",),
     ("Where are we going for half term?", "Tenby"), ("Who's coming along?", "in-laws")],
    # asks without "my" or "I"
    [("We've got a spaniel, Pepper.",), ("What's the dog called?", "Pepper")],
    [("I'm seeing the dentist on Tuesday at ten.",), ("What's the capital of Norway?",),
     ("When is the dentist?", "Tuesday")],
    [("We catch the 7.40 from Haslemere every weekday.",),
     ("Which station does the train leave from?", "Haslemere")],
    [("I take two sugars in my tea.",), ("How many sugars?", "two", "2")],
    [("Our landlord is Mr Pereira.",), ("Who's the landlord again?", "Pereira")],
    [("I left the car on level three of the Westgate car park.",),
     ("Tell me something odd about squid.",), ("Which level is the car on?", "three", "3")],
    [("The kids go to St Aidan's, just round the corner.",),
     ("What's the name of the school?", "Aidan")],
    # health
    [("I'm on antibiotics till Friday.",), ("What's a good film for tonight?",),
     ("When do I finish the medication?", "Friday")],
    [("My physio is on Thursdays at four.",), ("When's physio?", "Thursday")],
    [("I had my gallbladder out in April.",), ("What operation did I have?", "gallbladder")],
    [("Ugh, the migraines are back, the doctor blames the screen time.",),
     ("What's been bothering my head?", "migraine")],
    [("I carry an EpiPen because wasp stings could kill me.",),
     ("What could I have a bad reaction to?", "wasp")],
    # schedules and plans
    [("Book club is every second Wednesday.",), ("When is book club?", "Wednesday")],
    [("I'm flying to Lisbon on the 3rd for a conference.",),
     ("When do I fly out?", "3rd", "third")],
    [("My shift starts at six tomorrow, so an early night for me.",),
     ("What time do I start work tomorrow?", "six", "6")],
    [("We're having Rhys and Carys over for dinner on Saturday.",),
     ("Who's coming for dinner?", "Rhys", "Carys")],
    [("The bins go out on a Monday night here.",), ("Which night is rubbish night?", "Monday")],
    [("I've got a job interview at the council on the 19th.",),
     ("What's happening on the 19th?", "interview")],
    # asked in other words
    [("I teach geography at a secondary school.",), ("What subject do I cover?", "geography")],
    [("I grew up on a sheep farm in Powys.",), ("What sort of place was I raised on?", "farm")],
    [("My partner Nils is a sound engineer.",),
     ("What's my other half's occupation?", "sound")],
    [("I've been vegan for six years.",), ("What don't I eat?", "vegan", "meat", "animal")],
    # longer: several things told in passing in one story, then asked
    [("Long day. Drove Mum to her hip appointment at the Western General, then picked up "
      "Ava from nursery.",), ("Could you suggest something quick for dinner?",),
     ("Which hospital was Mum at?", "Western"), ("What was the appointment for?", "hip"),
     ("Who did I pick up?", "Ava")],
    [("Morning! Just back from my run along the canal, training for the Berlin marathon in "
      "September.",), ("What time is it in Seoul right now?",),
     ("Which marathon am I training for?", "Berlin"), ("When is it?", "September"),
     ("Where do I run?", "canal")],
    [("Dario's out at five-a-side, so it's just me and the twins tonight.",),
     ("Any ideas for a film?",), ("What is Dario playing tonight?", "five-a-side", "football"),
     ("How many kids do I have?", "twins", "two", "2")],
    # part two (written after the first baseline, before any change): longer conversations,
    # the fact told in passing among other statements, follow-ups of other forms
    [("Morning. I'm shattered, the baby was up at three and four.",),
     ("My husband Callum's away in Aberdeen all week for work.",),
     ("I'm trying to cut down on coffee.",), ("Any ideas for a rainy afternoon?",),
     ("Where's Callum this week?", "Aberdeen"), ("And what's he there for?", "work")],
    [("We finally got the keys to the new place on Brunswick Road.",),
     ("The removal van comes Friday, fingers crossed.",), ("I love old houses.",),
     ("What street have we moved to?", "Brunswick"), ("When is the van coming?", "Friday")],
    [("Had to leave the choir rehearsal early, my left ear's been ringing since the gig.",),
     ("I sing alto, by the way.",), ("What's a good soup for a cold?",),
     ("What's wrong with my ear?", "ringing"), ("Which part do I sing?", "alto")],
    [("My daughter Anouk is doing her driving test on the 12th.",),
     ("She's nervous, it's her third go.",), ("Tell me about the moon landings.",),
     ("When is Anouk's test?", "12th", "twelfth"), ("How many times has she tried?",
                                                     "third", "three", "3")],
    [("I've got two cats, a tabby called Miso and a black one called Pesto.",),
     ("What's the tabby called?", "Miso"), ("And the black one?", "Pesto")],
    [("My mum lives in Sligo and my dad's in Derry.",), ("They split up years ago.",),
     ("Where does my mum live?", "Sligo"), ("What about Dad?", "Derry")],
    [("The plumber's coming Wednesday between eight and ten to look at the boiler.",),
     ("I'm working from home that day anyway.",), ("What's the tallest building in Asia?",),
     ("When is the plumber due?", "Wednesday"), ("What's he fixing?", "boiler")],
    [("I'm meant to take the iron tablets with orange juice, not tea.",),
     ("My GP is Dr Achebe.",), ("What should I drink with my tablets?", "orange"),
     ("Who's the doctor?", "Achebe")],
    [("Hang on, I'm just parking, we're at the allotment on Ferry Lane.",),
     ("The courgettes have gone mad this year.",), ("Where is our allotment?", "Ferry"),
     ("What's growing like crazy?", "courgette")],
    [("Our son Ilya's gone off to study marine biology in Plymouth.",),
     ("What did Ilya go to study?", "marine"), ("Where is that?", "Plymouth")],
    [("I dropped the twins at their gran's on the way to my pottery class.",),
     ("The class is on Tuesday evenings.",), ("What class do I go to?", "pottery"),
     ("When is it on?", "Tuesday")],
    [("Quick one, the dog's booster jab is on the 8th at the vets in Kirkby.",),
     ("When's the jab?", "8th", "eighth"), ("Where's the vet?", "Kirkby")],
    [("Sorry, bit distracted, my cousin Petra's wedding in Split is next month.",),
     ("I need to find a dress.",), ("Whose wedding is it?", "Petra"),
     ("Where is it happening?", "Split")],
    # never said, beside what was (part two)
    [("My daughter Anouk is learning to drive.",), ("What car is she learning in?", UNKNOWN)],
    [("My husband's away this week.",), ("Where's he gone?", UNKNOWN)],
    # part three (written after the first changes, before any change of its own): a fact
    # told in passing inside a question or a request
    [("I'm taking my mum to Crete next week, what should I pack?",),
     ("Tell me a riddle.",), ("Where am I going with my mother?", "Crete")],
    [("Can you suggest a cake? It's for my son Theo's seventh birthday.",),
     ("How old is Theo turning?", "seventh", "seven", "7")],
    [("What's the weather like in Oban? We're driving up on Saturday.",),
     ("What's a good name for a tortoise?",), ("Which day are we driving up?", "Saturday")],
    [("How do I get red wine out of a carpet? My brother Kit spilled some at his fortieth.",),
     ("What's my brother called?", "Kit")],
    [("Is it safe to fly while pregnant? I'm due in August.",), ("When's my due date?",
                                                                 "August")],
    [("Could you recommend a vet? Our rabbit Truffle has stopped eating.",),
     ("What's the rabbit's name?", "Truffle")],
    [("Since I'm on nights at the depot this week, when should I sleep?",),
     ("Where do I work?", "depot")],
    [("What goes well with lamb? My in-laws from Hamburg are over on Sunday.",),
     ("Where are my in-laws from?", "Hamburg")],
    # part four: probes written while changing, each handled by a change of this session
    # (tuned on): asks without "my" opened otherwise
    [("The boiler man is coming on Thursday morning.",), ("I'm baking bread today.",),
     ("Remind me, when's the boiler man?", "Thursday")],
    [("We've named the new kitten Sorrel.",), ("Tell me a fact about Mars.",),
     ("Sorry, what was the kitten called?", "Sorrel")],
    [("Our allotment is plot 17.",), ("Allotment number again?", "17", "seventeen")],
    [("Swimming lessons are Wednesdays at half five.",),
     ("Lessons are at what time?", "five")],
    [("The parents' evening is on the 21st.",), ("Tell me again when parents' evening is.",
                                                 "21st", "twenty-first")],
    # never said, beside what was
    [("My sister lives in Cork.",), ("Do you know my sister's name?", UNKNOWN)],
    [("I'm seeing the dentist on Friday.",), ("What time is the dentist?", UNKNOWN)],
    [("I love hiking in the hills.",), ("What's the dog called?", UNKNOWN)],
    [("My brother Anton is a chef.",), ("How old is he?", UNKNOWN)],
]
