"""Session 21's probe of questions of the world (``--set probe21``), issue 30's echo.

Written by echo21 before any of it was run and before any reply to it was seen: 66
questions and requests of 6 to 16 words as people speak them, nothing told before them and
nothing to recall, three to a dialogue. They are drawn to make a reply start with words of
its own and then restate the question, the path left after session 20 (a first sentence let
through from its start whose rest copies the user with no clause end to stop at): a phrase
fronted before the question ("In winter, how often ..."), yes/no questions ("Is it okay to
..."), how long / how much / how many, a place or a time at the end ("... in Lisbon in
March?"), and a noun with a participle or a phrase after it ("a cactus kept indoors",
"bread baked at home"). It is the developer's probe, tuned on (like the dev sets), never a
judge set.

Same format as ``conversation_data.py``: a turn is the user's words (no words to recall).
"""

from __future__ import annotations

__all__ = ["PROBE21"]

PROBE21: list[list[tuple[str, ...]]] = [
    [("How often should I water a cactus kept on a sunny windowsill?",),
     ("In winter, how many hours of daylight does Oslo get?",),
     ("Is it okay to put hot soup straight into the freezer?",)],
    [("How long does homemade bread baked without preservatives stay fresh?",),
     ("On a long flight, how much water should I drink?",),
     ("Can tomato plants grown in pots survive a light frost?",)],
    [("How many calories does a brisk half hour walk burn?",),
     ("For a first marathon, how many weeks of training are enough?",),
     ("Is it safe to eat mushrooms picked in the woods near my house?",)],
    [("How warm is the sea in Lisbon in early June?",),
     ("After a tooth extraction, how soon can I drink hot tea?",),
     ("Do goldfish kept in a bowl need a filter?",)],
    [("How much sleep does a teenager preparing for exams need each night?",),
     ("In a small flat, where is the best place to dry laundry?",),
     ("Is it rude to arrive early to a dinner party at a friend's house?",)],
    [("How long can milk left out on the kitchen counter overnight last?",),
     ("At high altitude, why does water boil at a lower temperature?",),
     ("Should leather boots worn in the rain be dried near a radiator?",)],
    [("How many litres of water does a bath filled to the top hold?",),
     ("During a thunderstorm, is it safe to take a shower?",),
     ("Can dogs eat carrots cooked with a little butter?",)],
    [("How long do fresh eggs bought from a farm keep without a fridge?",),
     ("With a sprained ankle, how long should I rest before running again?",),
     ("Is tap water in Amsterdam safe to drink straight from the tap?",)],
    [("How much does a medium sized watermelon usually weigh?",),
     ("In spring, how often should I mow a lawn that grows quickly?",),
     ("Are sunflowers planted in May going to bloom by August?",)],
    [("What is the coldest month of the year in Montreal usually?",),
     ("For a child of seven, how much screen time a day is reasonable?",),
     ("Do houseplants left alone for two weeks need someone to water them?",)],
    [("How long does it take paint on a wooden fence to dry?",),
     ("On a cold morning, should I let my car engine warm up first?",),
     ("Is it fine to feed bread to the ducks at the park pond?",)],
    [("How many teaspoons of sugar are in a can of cola?",),
     ("Before a job interview, how early should I get to the office?",),
     ("Can frozen pizza left in the car for an hour still be eaten?",)],
    [("How deep should tulip bulbs be planted in clay soil?",),
     ("In hot weather, how often should I walk an old dog?",),
     ("Is coffee drunk late in the afternoon bad for sleep?",)],
    [("How long does a phone battery charged overnight last these days?",),
     ("At a wedding abroad, how much money is a normal gift?",),
     ("Should a wool jumper shrunk in the wash be soaked in conditioner?",)],
    [("How many people live in the city of Tokyo today?",),
     ("For a beginner learning guitar, how many minutes a day should I practise?",),
     ("Is it true that goldfish only remember things for three seconds?",)],
    [("How hot should the water be for brewing green tea at home?",),
     ("In a heatwave, is it better to keep the windows closed during the day?",),
     ("Can rice cooked yesterday be reheated safely in the microwave?",)],
    [("How long do cut flowers kept in a vase usually last?",),
     ("With a newborn baby, how often should I bathe them each week?",),
     ("Is snow melted in a pot safe to drink when hiking?",)],
    [("How far can a healthy adult comfortably walk in one day?",),
     ("On a rainy weekend, what can I do with two bored teenagers?",),
     ("Do blueberries bought frozen have as many vitamins as fresh ones?",)],
    [("How much time does a slow cooker need for a beef stew?",),
     ("In the mountains, how fast does the temperature drop as you climb?",),
     ("Is it bad for a laptop to stay plugged in all the time?",)],
    [("How many stamps do I need for a letter sent to Canada?",),
     ("For a picnic in summer, how long can sandwiches stay outside?",),
     ("Should basil grown on a windowsill be cut back before it flowers?",)],
    [("How long should a steak rest after it comes off the grill?",),
     ("In a power cut, how long does food in the freezer stay frozen?",),
     ("Is it okay to run every single day without a rest day?",)],
    [("How old does a child have to be to sit in the front seat?",),
     ("Around Christmas, how early should I book a train ticket to Edinburgh?",),
     ("Can a cat left alone for a weekend manage with a big bowl of food?",)],
]
