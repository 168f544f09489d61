"""Session 24's probe of ordinary spoken questions (``--set probe24``), the echo path.

Written blind by probe24 (a helper of session 24) on 2026-12-04, before any of it was run and
before any reply to it was seen; no sentence was changed for how it scores. Read while writing
it: only the module docstring and first data lines of ``bench/conversation_probe21.py`` (for
the format) and the lines of ``bench/conversation.py`` that register the sets; nothing of the
voice team, its tests, configs or prompts, nor any other set's dialogues. 75 questions of 6
to 16 words as people say them to a voice assistant, three to a dialogue, nothing told before
them and nothing to recall, on cooking, health, travel, pets, gardening, money, home repair,
weather, sport, children, technology, cars, and animals and nature. Most are of the kinds a
reply tends to restate, about a third each: yes/no questions with an action ("Should I ...",
"Is it safe to ...", "Do I need to ...", "Is it worth ..."), "Do ... really ..." / "Is it true
that ..." questions about facts, and "What's the best way to ..." / "How do I ..." / "How
often should I ..."; a few are neither. Some are in speech-to-text style (lower case, no
punctuation, "whats", "hows"), some polite and long. It is a developer's probe, to look at
and tune on, never a judge set.

Same format as ``conversation_data.py``: a turn is the user's words (no words to recall).
"""

from __future__ import annotations

__all__ = ["PROBE24"]

PROBE24: list[list[tuple[str, ...]]] = [
    [("Should I rinse raw chicken before I cook it?",),
     ("do cats really always land on their feet",),
     ("How often should I check the tyre pressure on my car?",)],
    [("Do I need a visa to visit Canada for a week?",),
     ("Does talking to plants really help them grow?",),
     ("whats the quickest way to soften butter straight from the fridge",)],
    [("Is it safe to give my dog a bit of cheese?",),
     ("Is it true that lightning never strikes the same place twice?",),
     ("How do I free up storage space on my laptop?",)],
    [("Is it worth paying off my credit card before I start saving?",),
     ("Do carrots really help you see in the dark?",),
     ("how do i get rid of slugs without using pellets",)],
    [("Could you tell me whether it's safe to refreeze meat that has thawed?",),
     ("Do dogs really only see in black and white?",),
     ("What's the best way to beat jet lag after flying east?",)],
    [("should i leave my phone charging overnight every night",),
     ("Does checking my own credit score really lower it?",),
     ("How long should I ice a sprained ankle for?",)],
    [("Can I plant daffodil bulbs in spring instead of autumn?",),
     ("Is it really cheaper to book flights on a Tuesday?",),
     ("What's the best way to get a toddler to sleep in their own bed?",)],
    [("Is it okay to give honey to a baby under one?",),
     ("Does driving with the windows down really use more fuel than air conditioning?",),
     ("hows the easiest way to fill a small hole in plasterboard",)],
    [("Should I turn off the water before changing a dripping tap washer?",),
     ("Why do leaves turn red and yellow in the autumn?",),
     ("How often should I swim each week to get fitter?",)],
    [("Is it safe to go running outside during a thunderstorm?",),
     ("Do we really need to drink eight glasses of water a day?",),
     ("What's the easiest way to peel a whole bulb of garlic at once?",)],
    [("Do I need to warm up my car engine on cold mornings?",),
     ("I was wondering, do goldfish really only remember things for three seconds?",),
     ("how long should i walk a border collie every day",)],
    [("Can I give my cat a little milk as a treat now and then?",),
     ("Does sugar really make kids more hyperactive at parties?",),
     ("Please could you tell me the best way to clean a dishwasher filter?",)],
    [("Is it worth collecting rainwater for watering the vegetable patch?",),
     ("Is it true that searing meat seals in the juices?",),
     ("How do I bleed a radiator that's cold at the top?",)],
    [("Hello, could you tell me if I need a plug adapter for Japan?",),
     ("does closing apps really save battery on an iphone",),
     ("How often should I mow the lawn in the summer?",)],
    [("Is it safe to change a light fitting myself without an electrician?",),
     ("Can you really get sunburned on a cloudy day?",),
     ("What's the best way to improve my serve in tennis?",)],
    [("should i keep my emergency savings in cash or in the bank",),
     ("Is it true that reading to babies helps them start talking sooner?",),
     ("What's the best way to keep my passport safe while travelling?",)],
    [("Can I let my eight year old walk to school on their own?",),
     ("Does leaving a tap dripping really stop the pipes from freezing?",),
     ("Sorry to bother you, but how often should I be descaling my kettle?",)],
    [("Is it okay to pick up a baby bird that has fallen out of its nest?",),
     ("Do you really burn more fat running on an empty stomach?",),
     ("whats the quickest way to pay off a small loan",)],
    [("is it safe to use public wifi for online banking",),
     ("Do elephants really have such good memories?",),
     ("How do I teach my daughter to ride a bike without stabilisers?",)],
    [("Would you mind telling me whether I should replace all four tyres at once?",),
     ("Is it true that ostriches bury their heads in the sand?",),
     ("Which fruits are safe for a guinea pig to eat?",)],
    [("Do I need to bring an umbrella to Edinburgh in July?",),
     ("is it true that renting is just throwing money away",),
     ("How do I stop my puppy from chewing the furniture?",)],
    [("Is it worth buying proper running shoes if I only jog twice a week?",),
     ("Do red cars really cost more to insure?",),
     ("How often should I reapply sunscreen at the beach?",)],
    [("Should I stretch before a run or after it?",),
     ("Is it true that you shouldn't wake a sleepwalker?",),
     ("hows the best way to back up all my photos",)],
    [("Is it okay to feed bread to the ducks at the park?",),
     ("Do professional footballers really run about ten kilometres in a match?",),
     ("What's the easiest way to clear mist from the inside of the windscreen?",)],
    [("Can I use baking soda instead of baking powder in a cake?",),
     ("Do bees really die after they sting you?",),
     ("How much screen time should a five year old have each day?",)],
]
