"""The developer's own cases of session 17 (``--set dev9``, part one; ``--set dev9b``, part
two), issue 30: written before any of them was measured and before any change of the
session, from category names only (the weakest of three blind judgements: told in passing,
follow-ups, names and nicknames, health, schedules and plans, asks without "my", pets,
numbers, quantities and measures, likes and dislikes, languages, origin and home, hobbies,
allergies and diet, dates, and never-told asks), in words of their own, unlike dev7's and
dev8's: facts told inside a story or a complaint of several clauses, asks phrased as
requests ("Remind me …", "Can you tell me …", "Do you know …"), asks naming a kind or a
synonym of the told word ("pills" for metformin, "breathing problem" for asthma), numbers
written as words, a fact told first and asked after many turns, a correction later in the
dialogue. Part one is tuned on from the first change. Part two (``dev9b``, 17 dialogues) was
written at the same time and not run until the end of the session: the held-out figure.
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["DEV9", "DEV9B"]

Turn = tuple[str, ...]

DEV9: list[list[Turn]] = [
    # told in passing: inside a story, a complaint or a request, several clauses
    [("So I spent the whole afternoon at the vet with Marmalade, the silly cat swallowed a "
      "hair tie, and the bill came to ninety pounds.",),
     ("Suggest a name for a goldfish.",),
     ("How much did the vet cost me?", "ninety", "90")],
    [("Honestly the traffic on the ring road was horrendous, it took me an hour to get to "
      "the bakery where I do the early shift.",),
     ("Remind me where I work.", "bakery")],
    [("I was chatting to the neighbour over the fence while I repotted my bonsai collection, "
      "I've got eleven of them now.",),
     ("Tell me a riddle.",),
     ("How many bonsai trees do I own?", "eleven", "11")],
    [("My knee's playing up again after the hike, the one where I tore a ligament skiing in "
      "Andorra years back.",),
     ("What did I do to my knee, remind me?", "ligament")],
    [("Could you give me a recipe for flapjacks? My grandson Arlo is visiting and he's mad "
      "about oats.",),
     ("Who's coming to visit me?", "Arlo")],
    [("Bit of a rant, but the council still hasn't collected the old sofa from outside "
      "number 27, which is my house, and it's been three weeks.",),
     ("What's my house number?", "27", "twenty-seven")],
    # follow-ups
    [("My uncle Bartholomew restores old clocks in his shed.",), ("He's seventy-three.",),
     ("What's my uncle's hobby?", "clocks"), ("How old is he?", "seventy-three", "73")],
    [("We adopted two rabbits from the shelter, Clover and Nutmeg.",),
     ("Clover's the brown one.",),
     ("Which rabbit is brown?", "Clover"), ("And what's the other one called?", "Nutmeg")],
    [("My sister-in-law Wanjiru runs a flower stall at Borough Market.",),
     ("Who runs the flower stall?", "Wanjiru"), ("Where is it?", "Borough")],
    [("The school play is on the twentieth.",), ("Our Poppy is playing the innkeeper.",),
     ("What part did Poppy get?", "innkeeper"), ("And when's the show?", "twentieth", "20")],
    [("I've signed up for a course at the community centre, it's pottery.",),
     ("It runs for eight weeks.",),
     ("What course did I sign up for?", "pottery"), ("how long does it last", "eight", "8")],
    [("My pen pal in Osaka is called Haruki.",), ("We've been writing since we were ten.",),
     ("Who's my pen pal?", "Haruki"), ("Where does he live?", "Osaka")],
    # names and nicknames
    [("Everybody in the family has called me Dodo since I was a baby.",),
     ("Remind me what my relatives call me.", "Dodo")],
    [("I was christened Rupert but I've always used my middle name, Lewis.",),
     ("Which name do I actually use?", "Lewis")],
    [("My tortoise is called Professor Shellington.",),
     ("What did I name the tortoise?", "Shellington")],
    [("My maiden name was Abernethy.",), ("Tell me a fun word.",),
     ("What was my surname before I married?", "Abernethy")],
    [("Our new puppy, we named her after the singer, she's called Dolly.",),
     ("Do you know what our puppy's called?", "Dolly")],
    [("My stepdad's name is Gerrit, he's Dutch.",), ("who's my stepfather", "Gerrit")],
    # health
    [("I'm on metformin twice a day.",), ("What pills am I on?", "metformin")],
    [("The optician said I'm slightly long-sighted, so I need reading glasses now.",),
     ("What's wrong with my eyesight?", "long-sighted")],
    [("I've had asthma since I was a kid, I always carry a blue inhaler.",),
     ("What's my breathing problem?", "asthma")],
    [("Found out at the blood drive that I'm O negative.",), ("Which blood group am I?", "O negative")],
    [("Broke my wrist falling off a ladder in July, still in a cast.",),
     ("Which bone did I break?", "wrist")],
    [("I get hay fever really badly every spring.",),
     ("When are my allergies worst?", "spring")],
    # schedules and plans
    [("I've got the mortgage adviser at quarter past two on Thursday.",),
     ("When am I seeing the mortgage person?", "Thursday", "quarter past two", "2.15")],
    [("We're driving up to Inverness for Hogmanay.",),
     ("What are we doing for new year?", "Inverness")],
    [("My passport expires in November so I need to renew it before the trip.",),
     ("Remind me when my passport runs out.", "November")],
    [("Yoga on Mondays, swimming on Wednesdays, and Saturday is parkrun.",),
     ("Which day do I swim?", "Wednesday")],
    [("The car's booked in for a service at Halfords next Tuesday morning.",),
     ("Where is the car getting serviced?", "Halfords")],
    [("Our flight to Reykjavik leaves at six forty in the morning.",),
     ("Could you tell me what time we fly?", "six forty", "6.40", "6:40")],
    # asks without "my"
    [("The dishwasher is a Bosch, we got it in the sales.",),
     ("What brand is the dishwasher?", "Bosch")],
    [("The recycling gets picked up every other Thursday.",),
     ("When's recycling collected?", "Thursday")],
    [("Gran's surgery went well, the hip replacement took three hours.",),
     ("How long was the operation?", "three")],
    [("The allotment committee meets in the church hall.",),
     ("Where does the committee meet?", "church hall", "hall")],
    [("The house next door has a parrot that shouts Gordon all day.",),
     ("What does the parrot next door shout?", "Gordon")],
    [("The boiler's pressure should sit at one point five bar.",),
     ("What pressure should the boiler be at?", "one point five", "1.5")],
    # pets
    [("We've got a bearded dragon called Spike, he eats crickets.",),
     ("What sort of reptile do we keep?", "bearded dragon", "dragon")],
    [("Our greyhound Lightning is a rescue, he's nine now.",), ("Give me a tip for washing up.",),
     ("How old is the greyhound?", "nine", "9")],
    [("My budgie Kiwi can say hello in three languages.",),
     ("What's the bird's name?", "Kiwi")],
    [("The hamster died last week, so the kids want a guinea pig now.",),
     ("What pet do the kids want next?", "guinea pig")],
    # numbers, quantities and measures
    [("I'm six foot two, so buying trousers is a nightmare.",),
     ("How tall am I?", "six foot two", "6'2", "six")],
    [("I weigh about twelve stone at the moment.",), ("What do I weigh?", "twelve", "12")],
    [("My shoe size is forty-four, European.",),
     ("What size shoes do I take?", "forty-four", "44")],
    [("We need to save about three thousand pounds for the wedding.",),
     ("How much money are we trying to put aside?", "three thousand", "3000", "3,000")],
    [("My locker at the gym is number two hundred and six.",),
     ("Which gym locker is mine?", "two hundred and six", "206")],
    [("The garden is about fifteen metres long.",),
     ("How big is our garden?", "fifteen", "15")],
    # likes and dislikes
    [("I can't bear jazz, all that noodling drives me up the wall.",),
     ("What music do I hate?", "jazz")],
    [("Nothing beats a proper Sunday roast with Yorkshire puddings for me.",),
     ("What's my favourite meal?", "roast")],
    [("I adore anything by Ishiguro, I've read all his novels twice.",),
     ("Who's my favourite author?", "Ishiguro")],
    [("Mushrooms are the one thing I really won't eat.",),
     ("Which food do I refuse?", "mushroom")],
    # languages
    [("I picked up Portuguese when I lived in Recife for two years.",),
     ("Which languages do I know besides English?", "Portuguese")],
    [("My wife speaks Tagalog with her mum on the phone.",),
     ("What language does my wife speak with her mother?", "Tagalog")],
    [("I'm learning Welsh on an app, I'm on a 200-day streak.",),
     ("Which language am I studying at the moment?", "Welsh")],
    # origin and home
    [("I was raised in a tiny fishing village in Cornwall called Mousehole.",),
     ("Where did I grow up?", "Mousehole")],
    [("We live on a narrowboat moored on the canal in Bath.",),
     ("What kind of home do we have?", "narrowboat")],
    [("My family's originally from Kerala.",), ("Where are my roots?", "Kerala")],
    # hobbies
    [("Every weekend I go birdwatching at the reservoir with my binoculars.",),
     ("What's my pastime?", "birdwatching", "bird")],
    [("I build model railways in the loft.",),
     ("Do you know what I do for fun?", "model railway", "railway")],
    # allergies and diet
    [("I'm allergic to penicillin, found out the hard way.",),
     ("Which antibiotic should I avoid?", "penicillin")],
    [("I'm doing keto, so no bread or pasta for me.",), ("What diet am I on?", "keto")],
    [("Sesame brings me out in a rash.",), ("Is there a seed I'm allergic to?", "sesame")],
    # dates
    [("Our wedding anniversary is the fourteenth of February, yes, really.",),
     ("What date did we get married?", "fourteenth", "14", "February")],
    [("I started at the firm on the first of March 2019.",),
     ("When did I join the company?", "March", "2019")],
    [("My daughter's due date is the second of August.",),
     ("When is the baby due?", "August")],
    # a fact told first, asked after many turns; a correction later
    [("My name's Ottoline, by the way.",), ("What's the weather like in Spain in May?",),
     ("I'm thinking of going to Seville.",), ("My friend went there last year and loved it.",),
     ("Is paella from Valencia?",), ("I'm a bit nervous about flying.",),
     ("What did I say my name was?", "Ottoline")],
    [("The party is on Saturday at seven.",), ("Actually, no, they moved it to Sunday.",),
     ("When is the party?", "Sunday")],
    # never said, beside what was
    [("My nephew plays the cello.",), ("What's my nephew's name?", UNKNOWN)],
    [("I love swimming in the sea.",), ("Which beach do I swim at?", UNKNOWN)],
    [("I'm flying to Berlin next month.",), ("Which flight number am I on?", UNKNOWN)],
    [("I have a cat.",), ("How old is my cat?", UNKNOWN)],
    [("My sister is a teacher.",), ("What's my sister's phone number?", UNKNOWN)],
    [("I work in an office in town.",), ("Do you know what my salary is?", UNKNOWN)],
    [("We've just had the kitchen redone.",), ("What colour is our front door?", UNKNOWN)],
]

DEV9B: list[list[Turn]] = [
    # part two, held out: written with part one, run only at the end of the session
    [("Right, quick update on life.",), ("The new job's going fine, I'm a dental nurse now.",),
     ("My commute's forty minutes on the tube.",), ("Any tips for sleeping better?",),
     ("Remind me what I do for a living.", "dental nurse", "nurse")],
    [("Long story short, the cat knocked my phone into the bath, so I had to get a new one, "
      "a Pixel this time.",),
     ("What phone do I have now?", "Pixel")],
    [("My dad Fergus is eighty next month.",),
     ("We're throwing him a surprise party at the golf club.",),
     ("What's a good present for an eighty year old?",),
     ("Where's the party?", "golf club", "golf"), ("Whose birthday is it again?", "Fergus", "dad")],
    [("I'm on two puffers, a brown one morning and night and a blue one when I need it.",),
     ("How many inhalers do I use?", "two", "2")],
    [("The kids call their grandfather Pops.",), ("What do the kids call their grandad?", "Pops")],
    [("I moved here from Tbilisi when I was fourteen.",), ("I still miss the food.",),
     ("Where did I live before?", "Tbilisi")],
    [("We're off to the Lake District on the ninth, staying in a yurt near Keswick.",),
     ("Tell me about Wordsworth.",),
     ("Where are we sleeping on the trip?", "yurt"), ("Near which town?", "Keswick")],
    [("Honestly I can't stand olives, they taste like feet.",),
     ("I do love a good pizza though.",),
     ("Which topping should you never put on my pizza?", "olive")],
    [("I speak French and a bit of Swahili from my time in Mombasa.",),
     ("Which African language do I know?", "Swahili")],
    [("The goldfish are called Salt and Vinegar, the kids named them.",),
     ("What are the fish called?", "Salt", "Vinegar")],
    [("I run a little Etsy shop selling knitted tea cosies.",),
     ("What do I sell online?", "tea cosies", "cosies", "knitted")],
    [("My appointment with the dermatologist is on the thirtieth at ten past nine.",),
     ("What's the capital of Chile?",),
     ("Can you remind me when the skin doctor is?", "thirtieth", "30", "ten past nine")],
    [("I've been off sugar for forty days now.",),
     ("How long since I quit sugar?", "forty", "40")],
    [("Hi, I'm Bronagh.",), ("I teach the violin.",),
     ("I live with my partner and three cats.",), ("What's the best way to clean a violin?",),
     ("Who am I?", "Bronagh")],
    [("My cholesterol came back at six point two, so the doctor wants me on statins.",),
     ("What was my cholesterol reading?", "six point two", "6.2")],
    # never said, beside what was
    [("My son is at university.",), ("What is my son studying?", UNKNOWN)],
    [("I've booked a holiday.",), ("What hotel are we staying in?", UNKNOWN)],
]
