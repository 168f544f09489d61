"""Session 19's probe of questions of the world (``--set probe14``), issue 30's echo.

Written by guard14 before any reply to them was seen (nine reworded before any run, because
they repeated a turn of another set: tests/voice/test_bench_conversation_blind2.py): 66
questions of 5 to 14 words, as people speak them ("what's the best way to …", "is it bad to
…", "how come …", "can you tell me how …"), nothing told before them and nothing to recall,
three to a dialogue. The echoes
left after session 18 were all of this kind: a reply's first sentence let through from its
start whose rest repeats the question. It is the developer's probe, tuned on (like the dev
sets), never a judge set.

Same format as ``conversation_data.py``: a turn is the user's words (no words to recall).
"""

from __future__ import annotations

__all__ = ["PROBE14"]

PROBE14: list[list[tuple[str, ...]]] = [
    [("What's the best way to get rid of fruit flies in the kitchen?",),
     ("How long do you leave a teabag in for a proper cup?",),
     ("Is it bad to charge my phone overnight every night?",)],
    [("How do you stop glasses from fogging up when wearing a mask?",),
     ("Why do onions make you cry when you cut them?",),
     ("What's a good way to fall asleep faster at night?",)],
    [("Can you tell me how to unblock a kitchen sink without chemicals?",),
     ("How often should you water a cactus kept indoors?",),
     ("Is it safe to eat eggs after the best before date?",)],
    [("Why is the sky red when the sun goes down?",),
     ("How far away is the moon from the earth roughly?",),
     ("What makes thunder so loud during a storm?",)],
    [("What's the quickest way to cool down a hot car in summer?",),
     ("Do I need to warm up my car engine in winter?",),
     ("How can I tell if my tyres need replacing?",)],
    [("How do you get candle wax out of a tablecloth?",),
     ("What's the best way to clean a burnt saucepan?",),
     ("Can you put a cast iron pan in the dishwasher?",)],
    [("How come cats knead soft blankets with their front paws?",),
     ("How many walks a day does a young border collie need?",),
     ("Is a bit of chocolate honestly that dangerous for a dog?",)],
    [("Can you swap baking soda for baking powder in a cake?",),
     ("How can you tell pasta is done without a timer?",),
     ("How come bread goes stale quicker when it's kept in the fridge?",)],
    [("Roughly how many hours of sleep should a fifteen year old get?",),
     ("Should you stretch before a run or only after it?",),
     ("What's a sensible way to get into running when you're really unfit?",)],
    [("How do I keep basil alive on a windowsill?",),
     ("When is the right time to plant tulip bulbs outside?",),
     ("Why are the leaves on my tomato plants turning yellow?",)],
    [("What's the easiest way to learn to touch type?",),
     ("How long does it take to learn basic Spanish?",),
     ("Is it worth learning to play the piano as an adult?",)],
    [("How do you stop hiccups quickly when they won't go away?",),
     ("Why do we get goosebumps when we're cold or scared?",),
     ("What's the best thing to put on a bee sting?",)],
    [("How do airplanes stay up in the air with all that weight?",),
     ("Why do your ears pop when a plane takes off?",),
     ("What's the best way to deal with jet lag after a long flight?",)],
    [("How can you tell if a watermelon is ripe in the shop?",),
     ("Should you keep tomatoes in the fridge or on the counter?",),
     ("What's the proper way to store fresh herbs so they last?",)],
    [("Why do leaves change colour in the autumn?",),
     ("How do birds know which way to fly when they migrate?",),
     ("What's the reason snow looks white if ice is clear?",)],
    [("How do you get a stripped screw out of wood?",),
     ("What's the right way to hang a heavy mirror on plasterboard?",),
     ("Do I need a permit to build a garden shed?",)],
    [("Is it okay to drink water that's been left out overnight?",),
     ("How much water should an adult drink in a day?",),
     ("Why does coffee make some people need the toilet?",)],
    [("How do I get my toddler to eat more vegetables?",),
     ("What's a good age for a child to start swimming lessons?",),
     ("Is it normal for a baby to sleep most of the day?",)],
    [("What's the best way to save money on the weekly food shop?",),
     ("How do credit scores actually get worked out?",),
     ("Is it smarter to pay off debt or save first?",)],
    [("How do you remove a splinter that's gone in really deep?",),
     ("What should you do if you burn your hand on the oven?",),
     ("Is it bad to crack your knuckles all the time?",)],
    [("Why does the moon look bigger near the horizon?",),
     ("How many stars can you see on a clear night?",),
     ("What would happen if the earth stopped spinning suddenly?",)],
    [("How do you make scrambled eggs nice and creamy?",),
     ("What's the trick to getting crispy roast potatoes every time?",),
     ("How long should a steak rest after it comes off the grill?",)],
]
