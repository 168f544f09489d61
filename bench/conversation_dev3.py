"""The developer's own cases of session 11 (``--set dev3``), issue 30: one or more dialogues
for each category the blind3 judgement still failed, in words of their own (none of blind3's
sentences, names or places), written with the changes they measure; tuned on, like DEV and
DEV2, so never a held-out figure.

Categories: several facts in one statement asked one at a time (the wrong clause); a
question with no subject word of its own ("And where is it now?", "To where?"); asks the
model talks round or answers with world talk although the note holds the fact; a past form
or a word of a new category; a person the user named; a correction by "change of plan";
advice that depends on a told fact; a never-said ask next to an unrelated note; and
ordinary questions that must not be echoed or given up.
"""

from __future__ import annotations

from conversation_data import UNKNOWN  # bench/conversation_data.py, beside this

__all__ = ["DEV3"]

Turn = tuple[str, ...]

DEV3: list[list[Turn]] = [
    # several facts in one breath
    [("I'm Odile, I'm from Nantes and I keep two tortoises.",),
     ("How many tortoises do I have?", "two", "2"),
     ("And where am I from?", "Nantes")],
    [("my mum's called Hilde, my brother's Jonas and our goat is Bruno",),
     ("What's my brother called?", "Jonas"),
     ("And the goat?", "Bruno"),
     ("what's my mum's name?", "Hilde")],
    [("I live in Tromso, drive a snowplough and sing in a choir.",),
     ("What do I do for work?", "snowplough", "plow", "plough"),
     ("What do I sing in?", "choir")],
    [("By weekday I'm a pharmacist, at weekends I referee football.",),
     ("What's my weekday job?", "pharmac"),
     ("What do I do at weekends?", "refer")],
    # no subject word of its own: where, when, a name
    [("We moved from Leipzig to Cork last autumn.",), ("Where do we live now?", "Cork"),
     ("And where did we leave?", "Leipzig")],
    [("I keep my kayak in a shed near Padstow.",), ("Where do I keep it?", "Padstow")],
    [("I adopted a greyhound in October.",), ("What kind of dog did I get?", "greyhound"),
     ("And when did I get her?", "October")],
    [("Hiya, Rosalind Achterberg speaking, but my team calls me Roz.",),
     ("What's my surname?", "Achterberg"), ("and what does my team call me?", "Roz")],
    [("I'm taking the ferry to Bilbao on the ninth.",), ("When do I sail?", "ninth", "9"),
     ("to where?", "Bilbao")],
    [("My choir rehearses at the old chapel on Thursdays.",),
     ("Where does my choir rehearse?", "chapel"), ("On which day?", "Thursday")],
    # talked round, or world talk, though the note holds it
    [("I've been learning the accordion for a year.",),
     ("Which instrument am I learning?", "accordion")],
    [("I love misty autumn mornings.",), ("What sort of weather do I enjoy?", "mist")],
    [("We sold our old camper last month.",), ("What did we sell?", "camper")],
    [("I'm in my final year of a law degree.",), ("Which year am I in?", "final"),
     ("What am I studying to become?", "law", "lawyer")],
    [("My neighbour Priyanka grows chillies on her balcony.",),
     ("What does Priyanka grow?", "chilli")],
    [("I drive a blue Skoda, an estate.",), ("What colour is my car?", "blue"),
     ("And what make is it?", "Skoda")],
    # a correction by a change of plan
    [("Dinner with the Lees is at six.",), ("Change of plan, it's now at seven thirty.",),
     ("What time is dinner?", "seven thirty", "7:30", "7.30")],
    # advice that depends on a told fact
    [("I'm vegetarian, by the way.",), ("What should I cook tonight?",
                                         "vegetarian", "veg", "tofu", "bean", "lentil",
                                         "mushroom", "pasta", "salad", "curry")],
    [("Nuts make my throat swell up.",), ("Any snack ideas for a long hike?",)],
    # never said, next to an unrelated note
    [("I live in Galway.",), ("Where do I work?", UNKNOWN)],
    [("We bought our flat in the spring.",), ("What's my postcode?", UNKNOWN)],
    [("My son is called Ewan.",), ("What's my daughter called?", UNKNOWN)],
    # ordinary questions: never echoed, never given up
    [("What's the quickest way to defrost a freezer?",), ("How long does that take?",),
     ("Which fruits are high in vitamin C?",)],
    [("Can you suggest an exercise for tight shoulders?",), ("How often should I do it?",),
     ("Why do cats purr?",)],
]
