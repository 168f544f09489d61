"""The developer's own cases of session 16 (``--set dev8``), issue 30: written before any
of them was measured and before any change of the session, from category names only (the
weakest of a blind judgement: asks without "my", other people's facts, health, schedules
and plans, follow-ups, told in passing, allergies and diet, names and nicknames), in words
of their own, deliberately unlike dev7's (no sentence, name or place of another set):
lower-case speech without punctuation, run-on tellings, asks in other words than the
telling, other people named or only by their relation. Tuned on from the first change, so
never a held-out figure. Part two (17 dialogues) was written after the first changes and
before measuring it or any change of its own: longer conversations, the fact among other
statements and questions, asked in other words than told.
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["DEV8"]

Turn = tuple[str, ...]

DEV8: list[list[Turn]] = [
    # asks without "my"
    [("The kids' piano teacher is a lovely woman called Mrs Ferreira.",),
     ("Name a good board game for four people.",),
     ("Who teaches piano to the kids?", "Ferreira")],
    [("we finally got the boiler fixed, cost us four hundred and twenty quid",),
     ("how much was the boiler repair", "four hundred", "420")],
    [("Grandad's hearing aid batteries are size 312.",),
     ("What size batteries does grandad need?", "312")],
    [("The window cleaner comes on the first Monday of the month.",),
     ("Any thoughts on a quick pasta sauce?",),
     ("How often does the window cleaner come?", "first Monday", "month")],
    [("The wifi password is on a sticker: tangerine forty two.",),
     ("What's the wifi password?", "tangerine")],
    [("Spare key is under the blue flowerpot by the shed.",),
     ("Where is the spare key kept?", "flowerpot")],
    [("The car's MOT runs out at the end of October.",),
     ("When does the MOT expire?", "October")],
    [("The plumber quoted us a hundred and eighty for the leak.",),
     ("What did the plumber quote?", "hundred and eighty", "180")],
    [("Granny's care home is Oakfield House, room fourteen.",),
     ("Which room is granny in?", "fourteen", "14")],
    # other people's facts: a partner's, a child's, a friend's
    [("My partner Dev is a sound engineer at the Roundhouse.",),
     ("What does Dev do?", "sound engineer", "engineer")],
    [("Our youngest, Pip, has just started nursery.",),
     ("Give me a fun fact about octopuses.",),
     ("What's the name of our youngest?", "Pip")],
    [("My girlfriend can't stand coriander.",),
     ("Which herb does my girlfriend hate?", "coriander")],
    [("Hannah from my book club is moving to Lisbon in spring.",),
     ("Where is Hannah going?", "Lisbon")],
    [("my husband's birthday is the ninth of June",),
     ("When do we celebrate my husband's birthday?", "June", "ninth", "9")],
    [("My son plays goalkeeper for the under-elevens.",),
     ("What position does my lad play?", "goalkeeper")],
    [("Tomás, my oldest mate from school, is a firefighter now.",),
     ("What does my school friend do these days?", "firefighter")],
    # health
    [("I've been prescribed amlodipine for my blood pressure.",),
     ("What's the name of the pill for my blood pressure?", "amlodipine")],
    [("Doctor says I've got a slipped disc, so no heavy lifting for six weeks.",),
     ("What's wrong with my back?", "slipped disc", "disc")],
    [("I'm type 1 diabetic, diagnosed when I was twelve.",),
     ("Do I have any medical conditions?", "diabetic", "diabetes")],
    [("ugh, got my second covid booster yesterday and my arm's killing me",),
     ("Write a haiku about autumn.",), ("Which jab did I have yesterday?", "booster", "covid")],
    [("I wear contact lenses, minus three in both eyes.",),
     ("what's my prescription", "minus three", "three", "-3")],
    [("I had my appendix out when I was nineteen.",),
     ("Have I ever had surgery?", "appendix")],
    # schedules and plans
    [("Parents are flying in from Lagos on the twelfth, I'm collecting them at Gatwick.",),
     ("Which airport am I picking them up from?", "Gatwick")],
    [("I've got a job interview at the council on Monday at ten.",),
     ("What should I wear to an interview?",), ("when's the interview", "Monday", "ten", "10")],
    [("We're thinking of doing the Camino next summer.",),
     ("What trip are we planning?", "Camino")],
    [("Choir practice moved from Tuesdays to Wednesdays.",),
     ("What night is choir now?", "Wednesday")],
    [("Haircut booked for half past four tomorrow.",),
     ("What time did I book the haircut for?", "four", "4")],
    [("I'm off to my cousin's in Galway for the bank holiday weekend.",),
     ("Where am I going for the long weekend?", "Galway")],
    # follow-ups
    [("My niece Saoirse is at uni in Leeds.",), ("She's studying veterinary science.",),
     ("Where is my niece studying?", "Leeds"), ("What subject?", "veterinary", "vet")],
    [("I have two cats, a ginger one called Biscuit and a grey one called Smudge.",),
     ("What's the ginger one called?", "Biscuit"), ("And the grey?", "Smudge")],
    [("My neighbour Colm is a retired pilot.",), ("He flew for Aer Lingus for thirty years.",),
     ("What did Colm do?", "pilot"), ("For which airline?", "Aer Lingus")],
    [("My mother-in-law is coming to stay on Friday.",), ("She's vegan, so no cheese.",),
     ("Who's coming to stay?", "mother-in-law"), ("What does she not eat?", "vegan", "cheese")],
    [("Booked a table at Nonna's for our anniversary.",), ("It's at eight on Saturday.",),
     ("Where did I book?", "Nonna"), ("What time again?", "eight", "8")],
    # told in passing
    [("Sorry, can't talk long, I'm on the bus to my physio in Didsbury.",),
     ("Where is my physio?", "Didsbury")],
    [("Had to leave the cinema early, my phone kept buzzing from the hospital where I work.",),
     ("Where do I work?", "hospital")],
    [("Funny thing, the barista spelled my name right, Kaytie with a Y, first time ever.",),
     ("How do I spell my name?", "Kaytie")],
    [("The tiles we picked for the bathroom are terracotta, which my wife loves.",),
     ("What colour tiles did we choose?", "terracotta")],
    [("Can you tell me a story? My twins, Ada and Ezra, won't go to sleep.",),
     ("What are my twins called?", "Ada", "Ezra")],
    # allergies and diet
    [("Just so you know, shellfish makes me come out in hives.",),
     ("Is there anything I react badly to?", "shellfish")],
    [("I gave up meat last January but I still eat fish.",),
     ("Am I vegetarian?", "fish")],
    [("Gluten's a no-go for me, coeliac.",), ("Suggest a sandwich filling.",),
     ("What can't I eat?", "gluten")],
    [("I'm lactose intolerant, so oat milk in my coffee please.",),
     ("What milk do I take?", "oat")],
    # names and nicknames
    [("Everyone at work calls me Bunny, long story.",),
     ("What nickname do they use for me at work?", "Bunny")],
    [("My full name is Margaret but I go by Peggy.",),
     ("What name do I go by?", "Peggy")],
    [("Our dog's proper name is Sir Reginald but we just say Reggie.",),
     ("What do we call the dog for short?", "Reggie")],
    [("My surname's Kowalczyk, it's Polish.",),
     ("How do you spell my last name?", "Kowalczyk")],
    # part two (written after the first changes, before measuring it or any change of its
    # own): longer conversations, the fact among other statements and questions, asked in
    # other words than told
    [("Right, so the week's a bit mad.",), ("Monday I've got the dentist at nine.",),
     ("Tuesday the in-laws arrive.",), ("And Wednesday is Milo's parents' evening.",),
     ("What's the capital of Australia?",), ("what day do the in-laws get here", "Tuesday")],
    [("My other half works nights as a security guard at the airport.",),
     ("I'm knackered.",), ("What's a quick dinner?",),
     ("what's my partner's line of work", "security")],
    [("Our eldest just got her driving licence, first time!",), ("She's seventeen.",),
     ("Tell me something about Jupiter.",), ("how old's our eldest", "seventeen", "17")],
    [("The GP upped my sertraline to a hundred milligrams.",), ("Feeling a bit foggy.",),
     ("What dose am I on now?", "hundred", "100")],
    [("My best mate Callum can't eat nuts, he carries an EpiPen.",),
     ("We're having people round Saturday.",),
     ("Is any of my friends allergic to something?", "nuts")],
    [("Stepped on a rusty nail at the allotment so I had a tetanus shot.",),
     ("Give me a fun fact.",), ("Why did I need a jab?", "nail", "tetanus")],
    [("I can't do dairy, it wrecks my stomach.",), ("Coffee recommendations?",),
     ("anything I should avoid eating", "dairy")],
    [("Mum goes by Bea but her real name is Beatrix.",), ("What's Mum's actual name?",
                                                          "Beatrix")],
    [("The lads at the five-a-side call me Tank.",), ("Do I have a nickname?", "Tank")],
    [("Nan's ninetieth is on the fourth of May at the Crown.",), ("I need to order a cake.",),
     ("Where's the party being held?", "Crown")],
    [("My daughter Esme has a peanut allergy.",), ("She's in year three.",),
     ("What's Esme allergic to?", "peanut"), ("What year is she in?", "three", "3")],
    [("We've got the Ikea delivery coming between one and five on Thursday.",),
     ("Can you set a timer?",), ("When's the delivery window?", "one", "five", "Thursday")],
    [("Can you recommend a good film? My wife Greta is into horror.",),
     ("What kind of films does Greta like?", "horror")],
    [("Had a mare at work, my manager Priyanka shouted at me in front of everyone.",),
     ("Who's my boss?", "Priyanka")],
    [("I started physio for my shoulder, it's every Friday at eleven.",),
     ("What's the physio for?", "shoulder"), ("And when is it?", "Friday", "eleven", "11")],
    # never said, beside what was (part two)
    [("My wife Greta loves gardening.",), ("What's Greta's job?", UNKNOWN)],
    [("I take the bus to work.",), ("What number bus do I get?", UNKNOWN)],
    # never said, beside what was
    [("My brother lives in Leeds.",), ("What's my brother's job?", UNKNOWN)],
    [("I take vitamin D in winter.",), ("Am I allergic to anything?", UNKNOWN)],
    [("We're going camping in August.",), ("Which campsite are we staying at?", UNKNOWN)],
]
