"""Session 20's probe of questions of the world (``--set probe20``), issue 30's echo.

Written by guard20 before any of it was run and before any reply to it was seen: 66
questions and requests of 6 to 16 words as people speak them, nothing told before them and
nothing to recall, three to a dialogue. They are meant to draw replies that open with
something other than the question's words (an amount, a time, "Yes", "Sure", "Generally")
and then restate it ("About six minutes, and you should boil an egg for a soft yolk …"):
the echoes left after session 19 were of that kind, a sentence let through from its start
whose rest repeats the user. Shapes: how long / how much / how many / what temperature /
when / which, yes-no questions ("Is it safe to …", "Do I need to …"), "Can you tell me …",
"I was wondering whether …", requests ("Give me a tip for …"), and questions with a place
or a time at their end. It is the developer's probe, tuned on (like the dev sets), never a
judge set.

Same format as ``conversation_data.py``: a turn is the user's words (no words to recall).
"""

from __future__ import annotations

__all__ = ["PROBE20"]

PROBE20: list[list[tuple[str, ...]]] = [
    [("How many minutes should I microwave a jacket potato for?",),
     ("What temperature should the oven be for roasting a whole chicken?",),
     ("Is it safe to refreeze meat that has already thawed in the fridge?",)],
    [("How much rice should I cook for four hungry adults?",),
     ("When is the best time of year to visit Scotland?",),
     ("Can you tell me why my bread dough is not rising?",)],
    [("I was wondering whether it's fine to swim right after eating lunch.",),
     ("Give me a tip for keeping cut apples from going brown.",),
     ("How long does a cooked chicken keep in the fridge?",)],
    [("Which side of the bed is better to sleep on for digestion?",),
     ("Is it okay to give a cat milk as a treat?",),
     ("How many eggs do I need for a basic sponge cake?",)],
    [("What temperature is too cold to walk a small dog outside?",),
     ("Do I need to rinse chicken before I cook it?",),
     ("How often should I wash my bed sheets in the summer?",)],
    [("Can you tell me how long it takes to walk a mile?",),
     ("Should I water my lawn in the morning or in the evening?",),
     ("How much salt should I put in the water for boiling pasta?",)],
    [("Is it worth buying an electric car for short trips around town?",),
     ("When should I start planting potatoes in my vegetable patch?",),
     ("Give me an idea for a cheap day out with the kids.",)],
    [("How long should I let bread cool before slicing it?",),
     ("Is it true that you lose most of your heat through your head?",),
     ("Which is healthier for breakfast, porridge or muesli?",)],
    [("I was wondering whether I can use olive oil for deep frying.",),
     ("How many hours a day should a puppy be left alone?",),
     ("What time of day is the best for going for a run?",)],
    [("Can you tell me what the tallest mountain in Africa is?",),
     ("How hot does the sun get at its surface?",),
     ("Is it dangerous to look at a solar eclipse without glasses?",)],
    [("How much should I tip a taxi driver in New York?",),
     ("Do you have to pay to visit the museums in London?",),
     ("When do the clocks go forward in the spring in Britain?",)],
    [("How long can you safely leave cooked rice out at room temperature?",),
     ("Is it bad to wear contact lenses to bed for one night?",),
     ("Give me a quick tip for remembering people's names at parties.",)],
    [("What temperature should a fridge be set to at home?",),
     ("How many cups of coffee a day is too many for an adult?",),
     ("Is it safe to use a phone while it's charging in the bath?",)],
    [("Which month is the rainiest in Ireland on average?",),
     ("How long does it take for a cut on your finger to heal?",),
     ("Can you tell me how to get chewing gum off my trousers?",)],
    [("I was wondering whether it's rude to wear a hat indoors at dinner.",),
     ("How often should a car get its oil changed these days?",),
     ("Is it fine to leave the heating on low all day in winter?",)],
    [("How much paint do I need for a small bedroom wall?",),
     ("When is the right time to prune roses in the garden?",),
     ("Should I put sun cream on my kids on a cloudy day?",)],
    [("How long should I soak dried chickpeas before cooking them?",),
     ("Is it normal for a new mattress to smell for a week?",),
     ("Give me a way to make my small kitchen look bigger.",)],
    [("How many times a week should I go to the gym as a beginner?",),
     ("Is it bad to eat a big meal just before bedtime?",),
     ("What age can a child safely sit in the front seat of a car?",)],
    [("Can you tell me how deep the ocean is at its deepest point?",),
     ("How fast does a cheetah run when it's chasing prey?",),
     ("Is it possible to see the northern lights from Edinburgh in winter?",)],
    [("How long do fresh eggs last if you keep them on the counter?",),
     ("Which wood is the best for burning in a log stove?",),
     ("Is it safe to drink tap water when travelling in Spain?",)],
    [("What temperature do you wash white towels at to keep them soft?",),
     ("How much sleep does a newborn baby need each day?",),
     ("I was wondering whether houseplants really clean the air indoors.",)],
    [("How many days can you keep a Christmas tree indoors before it dries out?",),
     ("Is it a good idea to buy a second hand bike online?",),
     ("Give me some advice for staying awake on a long drive at night.",)],
]
