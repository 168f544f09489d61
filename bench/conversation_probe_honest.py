"""The developer's own probe of session 19 (helper honest14, issue 30: "I don't know that
yet." for what was never told, and no recall lost): ``--set probe_honest`` (part one, tuned
on) and ``--set probe_honest_b`` (part two, a third of the whole, held out: run only at the
end of the session). Written at 13:35 UTC, before any reply or retrieval of it was seen and
before any change of the session.

Each dialogue tells a fact, then asks a never-told thing next to it: another attribute of the
same thing or person (the dog's name told, its age asked), another member of the family (the
son's name told, the daughter's asked), a date against a place (the wedding's date told, its
venue asked), a number against a name (how many children told, their names asked), or
something nothing was said of at all; and a control ask for the told fact, phrased unlike the
telling (its answer must still be said). The order of the two varies.
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["PROBE_HONEST", "PROBE_HONEST_B"]

Turn = tuple[str, ...]

PROBE_HONEST: list[list[Turn]] = [
    # another attribute of the same animal or thing
    [("Our spaniel is called Biscuit.",), ("How old is Biscuit?", UNKNOWN),
     ("What did we name the spaniel?", "Biscuit")],
    [("My cat is a Maine Coon.",), ("What breed is my cat?", "Maine Coon", "coon"),
     ("What's my cat's name?", UNKNOWN)],
    [("I've had my tortoise Shelby for thirty years.",),
     ("How long have I had Shelby?", "thirty", "30"), ("What does Shelby like to eat?", UNKNOWN)],
    [("I drive a dark green Land Rover.",), ("What year is the Land Rover?", UNKNOWN),
     ("Which colour is my car?", "green")],
    [("My bike is a Brompton, the folding kind.",), ("What make is my bicycle?", "Brompton"),
     ("What colour is the Brompton?", UNKNOWN)],
    [("Our house has four bedrooms.",), ("How many bedrooms are in our house?", "four", "4"),
     ("What's our house number?", UNKNOWN)],
    # another attribute of the same person
    [("My sister Orla lives in Cardiff.",), ("What does Orla do for a living?", UNKNOWN),
     ("Which city is my sister in?", "Cardiff")],
    [("My dad is a retired fireman.",), ("How old is my dad?", UNKNOWN),
     ("What did my father do before he retired?", "fire")],
    [("My best friend is called Tariq.",), ("Who's my closest friend?", "Tariq"),
     ("Where does Tariq live?", UNKNOWN)],
    [("My grandmother turned ninety last week.",), ("What's my grandmother's name?", UNKNOWN),
     ("How old is my gran?", "ninety", "90")],
    [("My boss is a woman called Henrietta.",), ("When is Henrietta's birthday?", UNKNOWN),
     ("What's the name of my manager?", "Henrietta")],
    [("My husband is from Ghana.",), ("Where does my husband come from?", "Ghana"),
     ("What is my husband called?", UNKNOWN)],
    # another member of the family
    [("My son is named Oscar.",), ("And what is my daughter called?", UNKNOWN),
     ("What is my boy's name?", "Oscar")],
    [("My brother works as a pilot.",), ("What does my sister do for work?", UNKNOWN),
     ("What is my brother's job?", "pilot")],
    [("My mum lives in Dublin.",), ("Which city does my mother live in?", "Dublin"),
     ("Where does my dad live?", UNKNOWN)],
    [("My uncle Brendan keeps bees.",), ("What's my aunt's name?", UNKNOWN),
     ("What's Brendan's hobby?", "bee")],
    [("My eldest daughter is studying law.",), ("What is my eldest studying?", "law"),
     ("What is my youngest daughter studying?", UNKNOWN)],
    # a date against a place, a place against a date
    [("Our wedding is on the fourteenth of August.",), ("Where is the wedding?", UNKNOWN),
     ("What date are we getting married?", "August", "fourteenth", "14")],
    [("I'm going to Lisbon for a conference.",), ("When is my conference?", UNKNOWN),
     ("Which city is the conference in?", "Lisbon")],
    [("My dentist appointment is this Tuesday.",), ("What day do I see the dentist?", "Tuesday"),
     ("What's my dentist's name?", UNKNOWN)],
    [("I was born in Krakow.",), ("When is my birthday?", UNKNOWN),
     ("Where was I born?", "Krakow")],
    [("My birthday is the second of November.",), ("Where was I born?", UNKNOWN),
     ("Which month is my birthday in?", "November")],
    # a number against a name
    [("I have three grandchildren.",), ("What are my grandchildren called?", UNKNOWN),
     ("How many grandkids have I got?", "three", "3")],
    [("My PIN at the gym is 4471.",), ("What's my gym locker code?", "4471"),
     ("What's the name of my gym?", UNKNOWN)],
    [("I'm forty-one.",), ("How old am I?", "forty-one", "41", "forty one"),
     ("What's my middle name?", UNKNOWN)],
    [("Our team is called the Otters.",), ("How many players are in our team?", UNKNOWN),
     ("What's the name of our team?", "Otters")],
    # nothing said of it at all
    [("I love gardening.",), ("Which things am I allergic to?", UNKNOWN),
     ("What do I like doing?", "garden")],
    [("I work at the library.",), ("Where did I go to school?", UNKNOWN),
     ("Where's my workplace?", "library")],
    [("I play the trumpet in our village brass band.",),
     ("Which instrument do I play in the band?", "trumpet"),
     ("What food do I like most?", UNKNOWN)],
    [("I'm training for a marathon.",), ("What car do I drive?", UNKNOWN),
     ("What race am I training for?", "marathon")],
    [("I grew up in Tasmania.",), ("What is my wife called?", UNKNOWN),
     ("Where did I spend my childhood?", "Tasmania")],
    [("I can't eat gluten.",), ("What can't I eat?", "gluten"),
     ("Can you tell me my mobile phone number?", UNKNOWN)],
]

PROBE_HONEST_B: list[list[Turn]] = [
    [("Our labrador is named Pepper.",), ("What colour is Pepper?", UNKNOWN),
     ("What's the lab called?", "Pepper")],
    [("My motorbike is a red Ducati.",), ("How fast can my motorbike go?", UNKNOWN),
     ("What brand is my motorcycle?", "Ducati")],
    [("My cousin Niamh is a nurse.",), ("Where does Niamh work?", UNKNOWN),
     ("What is my cousin's profession?", "nurse")],
    [("My wife teaches chemistry.",), ("Which subject does my wife teach?", "chemistry"),
     ("How old is my wife?", UNKNOWN)],
    [("My daughter is called Ffion.",), ("What's my son's name?", UNKNOWN),
     ("What's my girl called?", "Ffion")],
    [("My grandad lives in Aberdeen.",), ("Where does my grandma live?", UNKNOWN),
     ("Which town is my grandfather in?", "Aberdeen")],
    [("The party is at my sister's flat.",), ("What time does the party start?", UNKNOWN),
     ("Where's the party going to be?", "sister")],
    [("We're flying to Crete in June.",), ("Which hotel are we staying at?", UNKNOWN),
     ("What month is our holiday?", "June")],
    [("My anniversary is on the ninth of May.",), ("Where did we meet?", UNKNOWN),
     ("When's our anniversary?", "May", "ninth", "9")],
    [("I've got two cats.",), ("And what are the two cats called?", UNKNOWN),
     ("How many cats do we have then?", "two", "2")],
    [("My flat is number 12.",), ("What's the name of my street?", UNKNOWN),
     ("What number is my flat?", "12", "twelve")],
    [("I take the train to work.",), ("What's my job?", UNKNOWN),
     ("How do I get to work?", "train")],
    [("My favourite singer is Adele.",), ("What film do I like best?", UNKNOWN),
     ("Which singer do I like best?", "Adele")],
    [("My car is a white Mazda.",), ("What's the registration of my car?", UNKNOWN),
     ("What make is my car?", "Mazda")],
    [("I'm Gwen.",), ("How tall am I?", UNKNOWN), ("What's my name?", "Gwen")],
    [("My neighbour Colin has a parrot.",), ("What's the parrot called?", UNKNOWN),
     ("Who has a parrot?", "Colin")],
]
