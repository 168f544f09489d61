"""A tenth blind held-out set for bench/conversation.py (``--set blind10``), issue 30.

Written blind, in session 20, by the helper "blind10", who read only its brief, the rules
every helper gets, the docstring and first sixty lines of ``conversation_blind9.py`` (for
the format and the layout, none of its dialogues past line 60), the line where ``UNKNOWN``
is defined in ``conversation_data.py`` (the grep for it showed four other lines: one of its
docstring, its ``__all__`` and two of its dialogues), the well-formedness test
``tests/voice/test_bench_conversation_blind2.py``, and, to register this set, the lines of
``bench/conversation.py`` that import the sets, name them in ``SETS`` / ``GROUPS``, list
them in its docstring and give the ``--set`` choices and their help text, the one line
``JUDGES = {...}`` of ``bench/retrieval.py`` and the line of ``docs/testing.md`` naming
the judge sets — never the voice assistant's prompts, templates, configs or ``terrarium/``
code, nor the other sets' dialogues, dev or probe sets. The names, places and sentences of
the brief's examples are not used here. No model was run while it was written (none at
all), so nothing was changed because of how it scored.

The first draft (161 dialogues, 193 recall asks, 15 never-said asks) was counted by a
script and not changed for size. The well-formedness test then found 33 turns word for word
in other sets (it prints only the shared turns; a small script doing the test's own
comparison listed them all at once, again only the shared turns): 30 short asks such as
"which floor do I live on", two tellings and one small-talk question; all were reworded,
and no rewording was shared again. One expected form ("without", part of a common word)
was replaced. No other change was made; the counts stayed 161, 193 and 15.

Meant to differ in style from blind9 (speech to text without punctuation, fillers,
self-corrections, hedges, lists, negations, relative dates, units): people of other lives
and ages (a student nurse, a pensioner who gardens, a chef, a taxi driver, a teenager, a
parent on the school run, a software tester, a farmer, a musician on tour, a carer, a
retired lighthouse keeper), in full sentences mostly, some polite and long-winded, some
terse, in British and American spellings; facts told inside stories (a narrowboat trip, a
first date, a bus ride), two people's facts in one turn (mine and my partner's), asks after
two or three unrelated turns, asks as "do you remember …", "what did I say …", "can you
remind me …" and as either-or questions with one side right ("is it a string instrument or
a brass one that I play?", the told word expected), and never-said asks close to what was
told (the dog's breed told, its age asked). About forty turns are ordinary questions of the
world or small talk, 3-16 words, some long (10-16 words), to be answered, not recalled: most
in a category of their own, the rest between tellings and asks. Fifteen never-said asks (the
honest answer: "I don't know that yet."). The writer's own categories: two people in one
turn, either-or asks, and told inside a story.

It is for judging, never for tuning: none of these sentences, their phrasings or their words
may go into a prompt, a rule, a word list, an example or a test fixture, and no change may
be made because of how one of these dialogues scores.

Same format as ``conversation_blind9.py``: a turn is the user's words, then the words of
which one must appear in the reply (case-insensitive, as a substring) when it asks for
something said earlier — the form the user said first, then other fair forms (digits and
words, synonyms) — or ``UNKNOWN`` when it asks for something never said.
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["BLIND10", "BY_CATEGORY"]

Turn = tuple[str, ...]

BY_CATEGORY: dict[str, list[list[Turn]]] = {
    "names and nicknames": [
        [("Good afternoon. I'm a student nurse on the children's ward, and my name is "
          "Wilhelmina, though the other students have shortened it to Billie.",),
         ("What do the other students call me?", "Billie"),
         ("And what's my full first name?", "Wilhelmina")],
        [("Name's Dougal. Taxi driver. Thirty years on the road.",),
         ("Cheers.",),
         ("Who am I again?", "Dougal")],
        [("Hello there, dear. I'm Mrs Ottoline Pruett, and I'm dictating this because my "
          "eyes aren't what they were. My late husband always called me Lina.",),
         ("Can you remind me what my husband used to call me?", "Lina"),
         ("And my surname?", "Pruett")],
        [("hey so I'm Kasimir but literally everyone at school calls me Kaz",),
         ("What's my actual first name?", "Kasimir")],
        [("My colleagues in the test team know me as Bugsy, on account of the number of "
          "defects I raise. My real name is Anselm Ferreira.",),
         ("What nickname did I say my team uses?", "Bugsy"),
         ("And my real first name?", "Anselm")],
        [("I go by Marguerite on stage, but my passport says Margaret Oyelaran.",),
         ("What's the weather usually like in Lagos in December?",),
         ("What name do I use on stage?", "Marguerite")],
    ],
    "origin and home": [
        [("I was born in Galway, but I've lived in Swansea for the last twenty years.",),
         ("Where was I born?", "Galway"),
         ("And where am I settled these days?", "Swansea")],
        [("Hi! I'm a farmer, and our farm sits just outside the village of Tideswell in the "
          "Peak District.",),
         ("Which village is our farm near?", "Tideswell")],
        [("Originally from Tucson, Arizona. Moved to Minneapolis for college and never "
          "left. Best decision I ever made, even with the winters.",),
         ("What city did I grow up in?", "Tucson"),
         ("Where do I live now?", "Minneapolis")],
        [("We're in a ground-floor flat on Cavendish Road, number 41, since the stairs got "
          "too much for my knees.",),
         ("What number is our flat?", "41", "forty-one", "forty one"),
         ("Which road is it on?", "Cavendish")],
        [("I grew up on a houseboat on the Norfolk Broads, if you can believe it.",),
         ("What did I grow up on?", "houseboat", "boat")],
        [("My family came over from Kerala when I was four, and I still think of Kochi as "
          "home.",),
         ("Which Indian state is my family from?", "Kerala"),
         ("Which city do I still think of as home?", "Kochi")],
    ],
    "places": [
        [("Every Thursday I deliver meals to the day centre in Bramley Park.",),
         ("Where do I deliver meals on Thursdays?", "Bramley")],
        [("When I'm touring, my favourite venue is the Barrowland in Glasgow; the crowd "
          "there is unbeatable.",),
         ("What's my favourite venue?", "Barrowland"),
         ("Which city is it in?", "Glasgow")],
        [("I get my hair cut at a little place called Snips on the high street.",),
         ("Where do I get my hair cut?", "Snips")],
        [("The allotment I rent is plot 17 at Whitecross Gardens, behind the railway.",),
         ("What did I say the name of my allotment site was?", "Whitecross"),
         ("And my plot number?", "17", "seventeen")],
        [("My cab rank is outside Temple Meads station, but I usually finish the night at "
          "the airport.",),
         ("Which station is my cab rank at?", "Temple Meads")],
        [("Our honeymoon was in Dubrovnik and we're going back there for our "
          "anniversary.",),
         ("Where did we spend our honeymoon?", "Dubrovnik")],
    ],
    "pets": [
        [("We've just adopted a rescue greyhound. Her name's Juniper and she's terrified of "
          "the hoover.",),
         ("What's my greyhound called?", "Juniper"),
         ("What is she scared of?", "hoover", "vacuum")],
        [("I keep three hens: Dolly, Mabel and Queenie.",),
         ("What are my hens called?", "Dolly", "Mabel", "Queenie")],
        [("My son's hamster is called Professor Nibbles.",),
         ("What's my son's hamster's name?", "Nibbles", "Professor")],
        [("I've a border collie on the farm, Fenwick, best worker I've ever had.",),
         ("What breed is Fenwick?", "collie")],
        [("The cat is a Maine Coon named Cornelius, and he weighs more than my toddler.",),
         ("Do you remember my cat's name?", "Cornelius"),
         ("What breed is he?", "Maine Coon", "Maine")],
        [("My tortoise, Augustus, is older than I am; he was my grandad's.",),
         ("Whose was Augustus originally?", "grandad", "grandfather"),
         ("What kind of animal is Augustus?", "tortoise")],
    ],
    "allergies and diet": [
        [("I'm a chef, and ironically I'm allergic to sesame, so I have to be very careful "
          "with tahini.",),
         ("Which ingredient did I say I'm allergic to?", "sesame")],
        [("I'm vegan, and I have been since 2015.",),
         ("What year did I give up animal products?", "2015"),
         ("So what sort of eater am I?", "vegan", "plant")],
        [("Coeliac. No gluten at all, please remember.",),
         ("Which condition did I mention having?", "Coeliac", "celiac", "gluten")],
        [("My partner is lactose intolerant, so we buy oat milk for the house.",),
         ("What kind of milk do we buy?", "oat milk", "oat")],
        [("I'm allergic to penicillin and to wasp stings, and I carry an EpiPen for the "
          "stings.",),
         ("What do I carry an EpiPen for?", "wasp"),
         ("Which antibiotic must I never be given?", "penicillin")],
        [("I don't eat pork, for religious reasons, but chicken and lamb are fine.",),
         ("Which meat won't I eat?", "pork")],
    ],
    "health": [
        [("I've been diagnosed with type 2 diabetes, and I take metformin twice a day.",),
         ("Can you remind me what medicine I take?", "metformin"),
         ("How often do I take it?", "twice", "two times", "2 times")],
        [("My blood type is O negative, which the blood bank loves.",),
         ("What's my blood type?", "O negative", "O-", "O neg")],
        [("Had a knee replacement in March. Left knee. Still stiff.",),
         ("Which knee was replaced?", "left")],
        [("The physio told me to do my shoulder exercises three times a day, but I've been "
          "slack.",),
         ("How many times a day should I do my exercises?", "three", "3")],
        [("I suffer from migraines, and the only thing that helps is sumatriptan and a dark "
          "room.",),
         ("What helps my migraines?", "sumatriptan", "dark room")],
        [("As a carer I should mention that my mum has dementia, and I hold her power of "
          "attorney.",),
         ("What does my mum have?", "dementia"),
         ("What legal power do I hold for her?", "attorney")],
    ],
    "dates and birthdays": [
        [("My birthday is the 29th of February, so I only get a proper one every four "
          "years.",),
         ("When is my birthday?", "29", "twenty-ninth", "twenty ninth")],
        [("Our wedding anniversary is October the 3rd.",),
         ("Which date is our wedding anniversary again?", "October", "3rd", "third")],
        [("The twins turn eleven on June 12th, and they want a trampoline party.",),
         ("When do the twins turn eleven?", "June", "12"),
         ("What kind of party do they want?", "trampoline")],
        [("My driving test is on the 8th of May at 10:20.",),
         ("What time is my driving test?", "10:20", "ten twenty", "twenty past ten")],
        [("Grandad's ninetieth is on Boxing Day.",),
         ("What did I say the date of grandad's ninetieth was?", "Boxing Day", "26",
          "twenty-sixth")],
        [("I qualified as a nurse on 17 September 1998, which feels like a lifetime ago.",),
         ("What year did I qualify?", "1998"),
         ("And the day and month?", "17 September", "September 17", "17th")],
    ],
    "family": [
        [("I've got two stepdaughters, Imogen and Saoirse, and a son of my own, Caspian.",),
         ("What's my son called?", "Caspian"),
         ("And my stepdaughters?", "Imogen", "Saoirse")],
        [("My brother Leopold works as a veterinary surgeon in Aberdeen.",),
         ("What's Leopold's job?", "veterinary", "vet"),
         ("Where does he work?", "Aberdeen")],
        [("My mother-in-law, Philippa, is moving in with us next month.",),
         ("Who's moving in with us?", "Philippa", "mother-in-law", "mother in law")],
        [("School run today, so quickly: my eldest is Theodora, she's nine, and the little "
          "one is Felix, he's five.",),
         ("How old is Theodora?", "nine", "9"),
         ("And what's the younger one called?", "Felix")],
        [("My grandmother raised me; her name was Esperanza and she was from Oaxaca.",),
         ("Who raised me?", "grandmother", "Esperanza", "grandma"),
         ("Where was she from?", "Oaxaca")],
        [("I'm one of seven children, the fourth, and the only one who left Cornwall.",),
         ("How many kids did my parents have altogether?", "seven", "7")],
    ],
    "work and study": [
        [("I'm in my second year of a nursing degree at Keele.",),
         ("Where am I studying?", "Keele"),
         ("Which year of the degree am I in?", "second", "2nd", "two")],
        [("I'm a sous chef at a Basque restaurant called Txoko.",),
         ("What's the restaurant I work at called?", "Txoko"),
         ("What's my role there?", "sous chef", "sous")],
        [("I test software for a bank's mobile app; mostly regression testing, occasionally "
          "accessibility.",),
         ("What do I test?", "mobile app", "mobile", "bank")],
        [("Retired now, but I was a lighthouse keeper for twenty-two years.",),
         ("What did I used to do?", "lighthouse")],
        [("I'm a session bassist, and right now I'm on tour with a band called The Velvet "
          "Marrows.",),
         ("Which instrument do I play on this tour?", "bass"),
         ("Which band am I touring with?", "Velvet Marrows", "Marrows")],
        [("I drive a black cab, badge number 6613.",),
         ("What's my badge number?", "6613")],
    ],
    "likes and dislikes": [
        [("I can't stand coriander. Tastes like soap to me.",),
         ("Which herb do I hate?", "coriander", "cilantro")],
        [("My absolute favorite band is Fleetwood Mac, especially the Rumours album.",),
         ("Which band do I love?", "Fleetwood"),
         ("Which album do I like most?", "Rumours", "Rumors")],
        [("Honestly, I adore the smell of creosote. Reminds me of summers at my nan's.",),
         ("What smell do I love?", "creosote")],
        [("I loathe musicals. My wife drags me to them anyway.",),
         ("What kind of show do I hate?", "musical")],
        [("Best biscuit in the world: a chocolate Hobnob. I'll fight anyone on this.",),
         ("What's my favourite biscuit?", "Hobnob")],
    ],
    "numbers": [
        [("My locker at the hospital is number 212.",),
         ("Remind me what my locker number is.", "212")],
        [("We milk 140 cows twice a day, every day of the year.",),
         ("How many cows do we milk?", "140", "hundred and forty")],
        [("I've got £3,400 saved for the trip to Japan.",),
         ("How much have I saved?", "3,400", "3400", "three thousand four hundred")],
        [("The Wi-Fi code for the tour van is 7734 9021.",),
         ("What's the Wi-Fi code for the van?", "7734")],
        [("I ran my first half marathon in 2 hours 14 minutes.",),
         ("What was my half marathon time?", "2 hours 14", "2:14", "two hours fourteen")],
        [("My flat is on the 9th floor, and the lift is broken again.",),
         ("How high up is my flat?", "9th", "ninth", "nine")],
    ],
    "vehicles and possessions": [
        [("I drive a 2011 Toyota Prius for the taxi work; it's done 310,000 miles.",),
         ("What car do I drive for work?", "Prius", "Toyota"),
         ("How many miles has it done?", "310,000", "310000",
          "three hundred and ten thousand")],
        [("My pride and joy is a 1967 Gibson guitar that my uncle left me.",),
         ("What year is my Gibson from?", "1967")],
        [("I ride a Vespa to college; it's mint green.",),
         ("What colour did I say the Vespa was?", "mint", "green")],
        [("We have a tractor, a John Deere 6155, and an ancient Land Rover for the lanes.",),
         ("What make is our tractor?", "John Deere", "Deere"),
         ("And what do we drive on the lanes?", "Land Rover", "Rover")],
        [("My grandmother's engagement ring is the most precious thing I own; it's a "
          "sapphire.",),
         ("What stone is in the ring?", "sapphire")],
    ],
    "schedules and plans": [
        [("I'm on nights from Monday to Thursday this week, then off till Tuesday.",),
         ("When does my stretch of nights end?", "Thursday")],
        [("Band practice is Wednesdays at half seven in the scout hut.",),
         ("Can you remind me what time band practice is?", "half seven", "7:30",
          "seven thirty"),
         ("Where is it held?", "scout hut", "scout")],
        [("Flying to Reykjavik on the 2nd of August, back on the 9th.",),
         ("When do I fly back?", "9th", "ninth", "9")],
        [("Swimming lessons for my youngest are on Saturday mornings at the leisure centre, "
          "9:15 sharp.",),
         ("What time are the swimming lessons?", "9:15", "quarter past nine", "nine fifteen")],
        [("I've booked the boiler service for next Friday between eight and twelve.",),
         ("What have I booked for Friday?", "boiler")],
        [("I'm planning to retire at the end of 2027 and move to the coast.",),
         ("When do I plan to retire?", "2027"),
         ("And where do I want to move?", "coast", "seaside")],
    ],
    "languages": [
        [("I speak Welsh at home and English at work, and I'm learning Basque for the "
          "kitchen.",),
         ("What do I speak with my family at home?", "Welsh"),
         ("What am I learning?", "Basque")],
        [("My wife's first language is Tagalog.",),
         ("Do you remember my wife's first language?", "Tagalog", "Filipino")],
        [("I did A-level German but I've forgotten nearly all of it.",),
         ("Which language did I study at A-level?", "German")],
        [("On tour I get by in Portuguese, because my mother is from Porto.",),
         ("Which language do I get by in?", "Portuguese")],
        [("Our daughter is learning British Sign Language at school, and so are we.",),
         ("What's our daughter learning?", "Sign Language", "BSL", "signing")],
    ],
    "hobbies": [
        [("In my spare time I carve spoons from green wood, mostly birch and cherry.",),
         ("What do I carve?", "spoons"),
         ("Which woods do I use?", "birch", "cherry")],
        [("I'm obsessed with bouldering; I go to the wall three evenings a week.",),
         ("What's my hobby?", "bouldering", "climbing")],
        [("My hobby is restoring old clocks, and I've got eleven on the go.",),
         ("How many clocks am I restoring?", "eleven", "11")],
        [("I grow prize dahlias and show them at the county show every August.",),
         ("Do you remember what flowers I grow?", "dahlias", "dahlia")],
        [("Weekends I referee under-twelves football.",),
         ("Which age group do I referee?", "under-twelves", "under twelves", "under 12",
          "U12")],
    ],
    "preferences changed later": [
        [("I always drink my tea with two sugars.",),
         ("I've switched to no sugar at all, doctor's orders.",),
         ("How do I take my tea now?", "no sugar", "sugar-free", "none")],
        [("My favourite colour used to be orange.",),
         ("These days I much prefer teal.",),
         ("Which colour do I like best these days?", "teal")],
        [("I used to support Leicester, but I've switched to Forest Green since moving.",),
         ("Who do I support these days?", "Forest Green")],
        [("I usually order a flat white.",),
         ("From now on I'm having oat lattes; the flat whites upset my stomach.",),
         ("What coffee do I have now?", "oat latte", "latte")],
        [("I liked living in the city when I was younger, but now I prefer the quiet of "
          "the countryside.",),
         ("Which do I prefer now, the city or the country?", "countryside")],
    ],
    "corrections": [
        [("My daughter's teacher is called Mrs Halloran.",),
         ("Correction: Mrs Halloran left, and the new teacher is Miss Tembo.",),
         ("Who is my daughter's teacher?", "Tembo")],
        [("Parcel's coming on Tuesday.",),
         ("My mistake, they've moved it to Wednesday.",),
         ("Remind me when the parcel is coming.", "Wednesday")],
        [("I told you my PIN for the gym locker was 4471, but it's 4417. I always swap "
          "them.",),
         ("What's my locker PIN?", "4417")],
        [("My younger brother has a flat in Dundee.",),
         ("No, hang on, he moved to Perth last spring.",),
         ("Which city is my younger brother in now?", "Perth")],
        [("The concert is at the Usher Hall.",),
         ("Actually no, they've changed the venue to the Queen's Hall.",),
         ("Where's the concert?", "Queen's Hall", "Queens Hall", "Queen")],
    ],
    "follow-ups": [
        [("My daughter Ottilie has just started at Durham studying geology.",),
         ("What is my daughter studying?", "geology"),
         ("And where?", "Durham")],
        [("I've got a lodger, a chap called Bartosz, who's a baker.",),
         ("What's my lodger's name?", "Bartosz"),
         ("And what does he do?", "baker", "bakes")],
        [("Our new puppy is a dachshund we've named Pretzel.",),
         ("What did we call the new pup?", "Pretzel"),
         ("What breed is it?", "dachshund", "sausage dog")],
        [("My best friend, Ifeoma, is a midwife in Croydon.",),
         ("What does Ifeoma do?", "midwife"),
         ("Where does she work?", "Croydon")],
        [("I've got a hospital appointment on the 21st with a Dr Farquharson.",),
         ("Who's my appointment with?", "Farquharson"),
         ("And which day is it on?", "21st", "twenty-first", "21")],
    ],
    "asked in other words": [
        [("I teach the trombone at a comprehensive school in Wigan.",),
         ("Which instrument is my speciality?", "trombone")],
        [("My partner is a firefighter.",),
         ("What line of work is my other half in?", "firefighter", "fire")],
        [("We're expecting our first baby in November.",),
         ("When is the little one due?", "November")],
        [("My grandfather fought at Arnhem and never talked about it.",),
         ("Which battle was grandad in?", "Arnhem")],
        [("I'm terribly afraid of heights; I can't even use a stepladder.",),
         ("What's my phobia?", "heights")],
        [("I volunteer at the Oxfam shop on Saturdays.",),
         ("Which charity do I give my time to?", "Oxfam")],
    ],
    "several facts at once": [
        [("Right, for the record: I'm Hamish, I'm fifty-eight, I live in Oban and I fix boat "
          "engines.",),
         ("How old am I?", "fifty-eight", "58", "fifty eight"),
         ("What do I fix?", "boat engines", "engines"),
         ("What town did I say I live in?", "Oban")],
        [("New phone, so quickly: my husband is Rafael, my dog is Mango, and my mum lives "
          "in Leamington.",),
         ("What's my dog called?", "Mango"),
         ("And my husband?", "Rafael")],
        [("I'm a software tester, I'm colour-blind, and I cycle to work on a Brompton.",),
         ("Which bike do I cycle to work on?", "Brompton"),
         ("What's special about my eyesight?", "colour-blind", "colour blind",
          "color-blind", "color blind")],
        [("Three things about me: I'm left-handed, I'm a Pisces, and I've never seen Star "
          "Wars.",),
         ("What star sign am I?", "Pisces"),
         ("Which hand do I hold a pen in?", "left")],
        [("My name's Winifred, I'm eighty-one, and I live with my sister Agatha in a "
          "bungalow in Frinton.",),
         ("Who do I live with?", "Agatha", "sister"),
         ("What sort of house do I live in?", "bungalow"),
         ("How old did I say I was?", "eighty-one", "81", "eighty one")],
    ],
    "after a longer gap": [
        [("The plumber who's coming on Thursday is called Deirdre.",),
         ("What's the capital city of New Zealand?",),
         ("Thanks. How many teaspoons are there in a tablespoon?",),
         ("And what's a good stretch for a stiff neck?",),
         ("What's the plumber's name?", "Deirdre")],
        [("Our caravan pitch this summer is number 64 at Sandy Cove.",),
         ("I need to remember to pack the awning.",),
         ("Do you know if it's usually windy on the Cornish coast in July?",),
         ("Never mind, I'll check later.",),
         ("Also, my sister is joining us on the Wednesday.",),
         ("What's our pitch number?", "64", "sixty-four", "sixty four"),
         ("And the site?", "Sandy Cove")],
        [("I'm reading a novel called The Salt Path at the moment.",),
         ("What's a good dinner to make with leftover roast chicken?",),
         ("How long do I roast potatoes for?",),
         ("Lovely, thank you.",),
         ("What book did I say I was reading?", "Salt Path")],
        [("Today I found out my great-grandmother was born in Riga.",),
         ("I'm making soup tonight.",),
         ("Leek and potato, I think.",),
         ("How long does homemade soup keep in the fridge?",),
         ("Where was my great-grandmother born?", "Riga")],
        [("My son's football shirt number is 23.",),
         ("He plays on the left wing.",),
         ("What's a healthy snack for after training?",),
         ("Ta.",),
         ("Do you remember his shirt number?", "23", "twenty-three", "twenty three"),
         ("And his position?", "left wing", "wing")],
    ],
    "advice that depends on a told fact": [
        [("Just so you know, I react badly to latex gloves.",),
         ("I'm going to the dentist tomorrow. Anything I should tell them?", "latex")],
        [("I'm diabetic and I take insulin.",),
         ("I'm going for a long hike on Sunday. What should I bring?", "insulin", "sugar",
          "glucose")],
        [("I'm pregnant, about twenty weeks.",),
         ("Is it alright for me to have a glass of wine at the wedding?", "pregnant",
          "pregnancy")],
        [("My youngest is severely allergic to eggs.",),
         ("What should I check before buying her a birthday cake?", "eggs", "egg-free",
          "egg free")],
        [("I'm a night-shift nurse, so I sleep from nine in the morning until four in the "
          "afternoon.",),
         ("When's the best time for me to go to the gym?", "afternoon", "four", "4")],
    ],
    "never said": [
        [("My dog Pilchard is a Jack Russell.",),
         ("How old is my dog?", UNKNOWN)],
        [("I'm a chef at a hotel in Harrogate.",),
         ("What's my head chef's name?", UNKNOWN)],
        [("My husband is called Desmond.",),
         ("What job does Desmond have?", UNKNOWN)],
        [("I've got a blue Ford Focus.",),
         ("What's the number plate on my Focus?", UNKNOWN)],
        [("I'm learning the violin.",),
         ("Who's my violin teacher?", UNKNOWN)],
        [("Hello, I'm a pensioner and I keep bees in my back garden.",),
         ("How many beehives have I got in the garden?", UNKNOWN)],
        [("Good morning!",),
         ("Which film do I love most?", UNKNOWN)],
        [("I work at the Co-op on Barton Street.",),
         ("When does my next shift at the Co-op start?", UNKNOWN)],
        [("My sister has two children.",),
         ("What are my sister's children called?", UNKNOWN)],
        [("I've got asthma.",),
         ("What's my blood pressure?", UNKNOWN)],
        [("We're going to Crete in September.",),
         ("Which hotel are we staying at in Crete?", UNKNOWN)],
        [("I'm a taxi driver.",),
         ("How long have I been driving a taxi?", UNKNOWN)],
        [("I'm fourteen and I'm in Year 9.",),
         ("Which school do I go to?", UNKNOWN)],
        [("My mum's birthday is in April.",),
         ("What date is my dad's birthday?", UNKNOWN)],
        [("I play in a brass band.",),
         ("What's my band called?", UNKNOWN)],
    ],
    "ordinary questions only": [
        [("How long should I steam broccoli so it stays bright green?",),
         ("And is it better to salt the water?",),
         ("Can you freeze it afterwards?",),
         ("Thanks, that's helpful.",)],
        [("What's the difference between a heat pump and a boiler?",),
         ("Which one is cheaper to run over a whole winter in Britain?",),
         ("Are there any grants for installing one?",)],
        [("Who wrote the novel Middlemarch?",),
         ("When was it first published?",),
         ("Who else was writing novels in England at the same time as George Eliot?",),
         ("Is it worth reading if I didn't enjoy Jane Eyre?",)],
        [("What is the boiling point of water at the top of Everest?",),
         ("Why does it change with altitude?",),
         ("How high is Everest in feet?",),
         ("Can you boil an egg properly up there?",)],
        [("Could you explain how compound interest works, in simple words for a teenager?",),
         ("Is a junior ISA better than an ordinary savings account for a sixteen-year-old?",),
         ("Cheers.",)],
        [("Good evening.",),
         ("What's the best way to get red wine out of a cream carpet?",),
         ("Does white wine actually work on it, or is that a myth?",),
         ("How do I stop the stain coming back when it dries?",)],
        [("How many players are on a rugby union team?",),
         ("What's the difference between union and league?",),
         ("Which is older?",),
         ("When is the Six Nations usually played?",)],
        [("What should I plant in a shady border that gets no afternoon sun?",),
         ("Will ferns survive a hard frost?",),
         ("When is the right time of year to divide hostas?",)],
    ],
    "two people in one turn": [
        [("I'm a Taurus and my girlfriend is a Scorpio, which apparently explains a lot.",),
         ("What's my girlfriend's star sign?", "Scorpio"),
         ("And mine?", "Taurus")],
        [("My wife works at the county court and I work at the sorting office.",),
         ("Where does my wife work again?", "county court", "court"),
         ("Where do I work?", "sorting office", "sorting")],
        [("I'm allergic to cats and my partner Lowri is allergic to dogs, so we've got a "
          "parrot.",),
         ("What's Lowri allergic to?", "dogs"),
         ("And which pet did we get?", "parrot")],
        [("My husband supports Celtic, I support Hearts, and the kids just want to play "
          "Minecraft.",),
         ("Which club do I follow?", "Hearts"),
         ("And my husband?", "Celtic")],
        [("I'm forty-four and my partner Jules is forty-nine.",),
         ("How old is Jules?", "forty-nine", "49", "forty nine"),
         ("And how old am I?", "forty-four", "44", "forty four")],
    ],
    "either-or asks": [
        [("I play the cello in a community orchestra on Tuesday evenings.",),
         ("Is it a string instrument or a brass one that I play?", "cello")],
        [("My flight to Lisbon leaves at 06:40 on Saturday.",),
         ("Is my flight early in the morning or late at night?", "06:40", "6:40",
          "six forty")],
        [("We've got a Newfoundland called Bramble; she's the size of a small pony.",),
         ("Is our dog a big breed or a small one?", "Newfoundland", "large", "huge",
          "pony")],
        [("My partner's birthday is on the 14th of March.",),
         ("Is my partner's birthday in the spring or the autumn?", "14th of March",
          "March", "14")],
        [("I work nights on the renal unit at St Columba's Hospital.",),
         ("Did I say I work at a hospital or a care home?", "Columba", "renal")],
        [("The grandchildren are visiting on the Sunday after Easter.",),
         ("Is it this weekend or next month that the grandchildren come?", "Easter",
          "Sunday")],
    ],
    "told inside a story": [
        [("Last weekend we took the narrowboat up to Stoke to see my cousin Benedikt, and "
          "my daughter fell in the canal, twice.",),
         ("Who did we go to see?", "Benedikt", "cousin"),
         ("Where did we go?", "Stoke")],
        [("When I was nineteen I hitchhiked to Marseille with a girl called Solange, and I "
          "ended up marrying her.",),
         ("Who did I marry?", "Solange"),
         ("Where did we hitchhike to?", "Marseille")],
        [("The lambing went fine this year, apart from the night our ewe, Clementine, had "
          "triplets in the snow.",),
         ("Which ewe had triplets?", "Clementine")],
        [("I was on the 38 bus to work when my old maths teacher, Mr Okonkwo, sat down "
          "next to me and recognised me.",),
         ("What was my maths teacher's name?", "Okonkwo"),
         ("Which bus was I on?", "38", "thirty-eight")],
        [("We had our first date at a Lebanese restaurant in Bath that's now a phone shop, "
          "which my husband Gideon still mourns.",),
         ("What did I say my husband is called?", "Gideon"),
         ("Where was our first date?", "Bath", "Lebanese")],
    ],
}

BLIND10: list[list[Turn]] = [d for dialogues in BY_CATEGORY.values() for d in dialogues]
