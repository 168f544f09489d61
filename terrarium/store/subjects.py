"""What a question is about, in words a search can find, whatever the phrasing.

"What is my dog called?" is about a dog and a name; "Where am I from?" is about an origin,
"When's my birthday?" about a date. The user said it earlier in their own words ("My dog is
called Rex.", "I'm originally from Nairobi.", "I was born on the 3rd of May."), so recall
searches what they said with the question's subject words (:func:`subject_terms`), each
widened to the words people use for the same thing (:data:`RELATED`: a short table of
everyday categories, not of phrasings). Function words and the words of asking ("what",
"remind", "tell", "remember") are left out: they match every utterance.

The same words tell the reply guard whether a recalled utterance is about the question
(:func:`relevant`); whether a question is about the user at all is read from its form, not
its words (:func:`about_user`: any first-person question but advice, how-to and requests
for something done).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from terrarium.store import forms
from terrarium.store.keep import asked_back, kept
from terrarium.store.lexicon import kind_of

__all__ = ["ATTITUDES", "RELATED", "about_user", "akin", "asked_of", "asks_advice", "has_number",
           "holds_answer_form", "is_statement", "may_refer", "mentions_user", "names_kind",
           "names_person", "refers_to_told", "relevant", "stem", "strip_opening", "subject_terms",
           "tells_kind", "tells_known"]

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")

_ASKING = frozenset("""
a an the and or but if so than then of to in on at by for with about as into over is am are
was were be been being do does did doing done have has had having will would can could shall
should may might must i me my mine myself you your yours we our us they them their he she it
its him her his what which who whom whose how why when where that this these those there
here not no yes just very too also some any all please again tell remind remember recall
know say said told mention mentioned ask asked question wonder think guess let give show
repeat again now still ever already anything something thing things kind sort one ones
isn't aren't wasn't don't doesn't didn't can't won't what's where's when's who's how's
that's it's i'm i've i'd i'll you're
""".split())
"""Function words and the words of asking: not what a question is about. Unlike the
store's stop words, "from" is kept out of this list: "Where am I from?" is about it."""

RELATED: tuple[frozenset[str], ...] = tuple(frozenset(g.split()) for g in (
    # who: names
    "name names named call calls called nickname nicknames surname known go",
    # where from, where living
    "from born grew grow raised come comes came originally native hometown country city "
    "town village live lives lived home moved move",
    # where exactly: the home itself
    "address street road avenue lane house flat apartment floor home live lives lived city "
    "town village "
    "houseboat postcode neighbourhood garden yard place cottage bungalow villa cabin farmhouse "
    "moved move",
    # when: dates and ages
    "birthday birth born birthdate anniversary wedding date day month year turn turning",
    # when: days and times (an appointment, a flight, a visit)
    "time day date today tonight tomorrow morning afternoon evening night week weekend "
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "june july august september october november december o'clock noon midnight",
    "old age aged years year turn turning birthday",
    # health and food
    "allergic allergy allergies intolerant intolerance react reaction sick avoid eat eating "
    "rash rashes hives itch itchy swelling",
    "eat eating food foods dish dishes meal meals cook cooking diet drink drinks "
    "vegetarian vegan keto paleo halal kosher pescatarian meat fish dairy gluten sugar bread "
    "pasta rice",
    # health: conditions, pains, medicines
    "health healthy condition conditions illness ill sick problem problems pain pains ache "
    "aches headache headaches migraine migraines asthma diabetes diabetic injury injured hurt "
    "hurts sore blood pressure heart medicine medicines medication pills tablets inhaler "
    "doctor surgery operation rash hives penicillin antibiotic antibiotics aspirin ibuprofen "
    "paracetamol",
    # the body's measures
    "weight weigh weighs heavy height tall short kilos kilo kg kilograms pounds lbs stone "
    "centimetres centimeters cm metres meters feet foot inches size shoe",
    # animals
    "pet pets dog dogs puppy cat cats kitten bird birds parrot fish rabbit hamster horse "
    "animal animals tortoise turtle snake lizard gecko ferret mouse mice rat pony budgie "
    "goldfish guinea chicken chickens goat iguana",
    # a dog is often told by its breed
    "dog dogs puppy pup retriever labrador poodle terrier spaniel collie husky beagle "
    "shepherd bulldog dachshund greyhound whippet pug corgi",
    # family
    "family sister sisters brother brothers sibling siblings mother mum mom father dad "
    "parents wife husband partner son sons daughter daughters kid kids child children baby "
    "married marry wedding grandmother grandma granny gran nan grandfather grandpa grandparents "
    "grandson granddaughter grandchildren aunt uncle cousin cousins nephew niece",
    # work
    "work works worked working job jobs profession career occupation trade commute "
    "commuting employed office company boss shift study studies studying student business "
    "run runs "
    "teach teaches teaching "
    "own owns shop store firm restaurant cafe bakery garage salon clinic",
    # the everyday jobs people name ("I'm a paramedic.", "accountant, two grandkids")
    "work job profession accountant nurse doctor teacher engineer driver plumber "
    "electrician lawyer chef paramedic builder carpenter mechanic farmer writer "
    "designer developer programmer manager cashier waiter waitress pilot dentist vet "
    "pharmacist architect scientist professor lecturer banker barista baker butcher "
    "cleaner firefighter officer soldier retired bus taxi cab lorry truck van courier",
    "study studies studying student university uni college school subject degree course "
    "major learn learning learnt lesson lessons class classes training trainee apprentice",
    # growing up: a childhood told ("Growing up, we ...") answers "as a kid"
    "childhood kid kids child young younger little growing grow grew teenager teen",
    "weather rain rainy sun sunny snow snowy wind windy storm storms stormy cloudy fog foggy "
    "mist misty drizzle cold hot warm heat frost frosty spring summer autumn winter",
    # (likes and dislikes: ATTITUDES, below)
    # things owned and used
    "car cars drive drives vehicle bike motorbike motorcycle ride rides make brand model "
    "ford fiat toyota honda volvo skoda bmw audi mercedes volkswagen vw renault peugeot "
    "nissan kia hyundai tesla mazda jeep vauxhall opel citroen subaru porsche",
    "colour color colours colors red blue green yellow black white grey gray pink purple "
    "orange brown silver gold",
    "many much number count",
    "speak speaks language languages tongue fluent",
    # plans: trips and travel
    "trip trips travel travelling traveling fly flying flight flights holiday holidays "
    "vacation visit visiting visitor visitors journey leave leaving plan plans coming arrive "
    "arriving staying guest guests summer summers move moved moving relocate relocated",
    "play plays playing instrument sport sports game games team",
    "music song songs band singer listen record records vinyl album albums genre",
    "film films movie movies watch watching cinema show series",
    "book books read reading author novel",
))
"""Everyday categories of what people tell an assistant about themselves: a question's
word is widened to the other words of its categories. Words are matched by their stem."""

ATTITUDES: tuple[frozenset[str], ...] = tuple(frozenset(g.split()) for g in (
    "like likes love loves enjoy enjoys favourite favorite fan prefer adore best hobby "
    "hobbies",
    "hate hates dislike dislikes stand detest loathe",
))
"""Likes and dislikes: categories of how the user feels about anything, not of what it is
about. "What is my favourite film?" finds "I love baking bread." by them, which is worth
handing to the model but is no answer to say back."""

_SUFFIXES = ("'s", "ies", "es", "s", "ed", "ing")
_IRREGULAR = dict(pair.split(":") for pair in """
bought:buy brought:bring taught:teach caught:catch thought:think fought:fight sold:sell
told:tell went:go gone:go got:get gotten:get grew:grow grown:grow flew:fly flown:fly
drove:drive driven:drive rode:ride ridden:ride ate:eat eaten:eat spent:spend met:meet
left:leave kept:keep made:make wrote:write written:write won:win lost:lose paid:pay
built:build took:take taken:take gave:give given:give saw:see seen:see found:find
ran:run swam:swim sang:sing chose:choose chosen:choose broke:break broken:break fell:fall
felt:feel held:hold wore:wear worn:wear sent:send sat:sit stood:stand became:become
came:come began:begin begun:begin knew:know known:know spoke:speak spoken:speak
slept:sleep woke:wake hid:hide led:lead meant:mean heard:hear said:say dug:dig
""".split())
"""Past forms no suffix rule reaches: "What did we buy?" asks of "We bought a van."."""


@functools.lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A crude stem, enough to match "allergies" and "allergy", "called" and "call", "lives",
    "lived" and "live" (a final "e" is dropped after the suffix: "liv")."""
    w = word.lower()
    if w.endswith("'s"):  # "rating's" as "rating", then its own suffix: "rat"
        w = w[:-2]
    if w in _IRREGULAR:
        w = _IRREGULAR[w]
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if suffix == "ies":
                return w + "y"
            break
    return w[:-1] if w.endswith("e") and len(w) >= 4 else w


def _by_stem(groups: tuple[frozenset[str], ...]) -> dict[str, frozenset[str]]:
    by: dict[str, frozenset[str]] = {}
    for group in groups:
        for w in group:
            by[stem(w)] = by.get(stem(w), frozenset()) | group
    return by


_BY_STEM = _by_stem(RELATED + ATTITUDES)
_KNOWN_WORDS = tuple(sorted({w for g in RELATED for w in g if len(w) >= 4}, key=len,
                            reverse=True))


@functools.lru_cache(maxsize=2048)
def parts(word: str) -> tuple[str, ...]:
    """The known words (of :data:`RELATED`) a word of no category is made of, at its start
    or end with at least three more letters: "birthplace" -> "birth", "dietary" -> "diet",
    "birdwatching" -> "bird". A compound or a derived word is about what its part is."""
    w = word.lower()
    if len(w) < 7 or stem(w) in _BY_STEM:
        return ()
    return tuple(k for k in _KNOWN_WORDS
                 if len(w) - len(k) >= 3 and (w.startswith(k) or w.endswith(k)))[:2]
_BY_STEM_SUBJECTS = _by_stem(RELATED)
_AKIN = {k: frozenset(stem(w) for w in v) for k, v in _BY_STEM_SUBJECTS.items()}


def _content(text: str) -> list[str]:
    return list(_content_words(text))


@functools.lru_cache(maxsize=512)
def _content_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` but function words and words of asking, once per text: recall
    and the guard read the same few utterances many times a turn."""
    seen: dict[str, None] = {}
    for m in _WORD.finditer(text):
        w = m.group(0).lower()
        if w not in _ASKING and w not in seen:
            seen[w] = None
    return tuple(seen)


_FORBIDDEN = re.compile(r"\b(can't|cannot|can not|shouldn't|mustn't|must not)\s+(i|we)\b|"
                        r"\bnot allowed\b", re.I)
"""A question of what the user may not have: about what they avoid (an allergy, a diet)."""
_AVOIDED = re.compile(r"\b(i|we)\s+(can't|cannot|can not|mustn't|must not|shouldn't|don't)\s+"
                      r"(have|eat|drink|take|touch)\b", re.I)
"""The user telling what they may not have: "I can't have gluten." is about what they avoid."""
_IDENTITY = re.compile(r"\bwho\s+(am\s+i|i\s+am|are\s+we|we\s+are)\b", re.I)
"""A question of who the user is: about their name."""
_DOING = re.compile(r"\bwhat\s+(do|did)\s+(i|we)\s+do\b(?!\s+(with|about|to|if|when|for\s+fun|"
                    r"at|on|in|during|after|before|every|most|this|next|last))",
                    re.I)
""""What do I do?": the user's work (not "What do I do about ...", advice)."""
_DISLIKE = re.compile(r"\b(don't|do not|doesn't|does not|never)\s+(\w+\s+)?(like|enjoy|"
                      r"fancy)\b|\bnot (a|much of a) fan\b", re.I)
"""A like denied is a dislike: "What don't I like?" is about "I hate olives."."""
_SURNAME = re.compile(r"\b(last|family|second)\s+name\b", re.I)
_LIVING = re.compile(r"\bfor\s+a\s+living\b", re.I)
"""Work, not a home: "What do I do for a living?" is not about "I live in Cardiff."."""
_BECOMING = re.compile(r"\b(training|studying|learning|want|going)\s+to\s+be(come)?\b", re.I)
"""What the user trains to be is their work to come: "What am I training to be?"."""
_STAY_AWAY = re.compile(r"\b(stay|keep|steer)\s+(away|clear)\b", re.I)
_JOB = re.compile(r"\b(i'm|i am|i work as|i worked as|she's|he's|she is|he is)\s+an?\s+(\w+\s+)?"
                  r"(?!(?:member|number|user|customer|partner|mother|father|brother|sister|"
                  r"daughter|beginner|vegetarian|christian|italian|brazilian|indian|"
                  r"european|american|australian|canadian|morning)\b)"
                  r"\w+(?:er|or|ist|ian|man|woman)\b", re.I)
"""A job told by its name, of any trade: "I'm a welder", "I'm a dental hygienist"."""
"""A surname asked in two words: "What's my last name?"."""


def subject_terms(text: str, *, related: bool = True, attitudes: bool = True) -> list[str]:
    """The words ``text`` is about, then (``related``) the words related to them, by the
    categories of :data:`RELATED` and (``attitudes``) :data:`ATTITUDES`: what to search
    for."""
    own = _content(text)
    if _LIVING.search(text):
        own = [w for w in own if w != "living"]
        own.append("work")  # "for a living": work, not where one lives
    if _BECOMING.search(text) and "work" not in own:
        own.append("work")  # "What am I training to be?": a job to come
    if (_FORBIDDEN.search(text) or _AVOIDED.search(text) or _STAY_AWAY.search(text)) \
            and "avoid" not in own:
        own.append("avoid")  # "What can't I eat?": what the user must avoid
    if _IDENTITY.search(text) and "name" not in own:
        own.append("name")  # "Who am I?": the user's name
    if _DISLIKE.search(text) and "dislike" not in own:
        own.append("dislike")  # "What don't I like?", "I don't like olives."
    if _DOING.search(text) and "work" not in own:
        own.append("work")  # "What do I do?": the user's work
    if _JOB.search(text) and "work" not in own:
        own.append("work")  # "I'm a welder at the shipyard": a job of no list
    if _SURNAME.search(text) and "surname" not in own:
        own.append("surname")  # "my last name"
    if not related:
        return own
    by = _BY_STEM if attitudes else _BY_STEM_SUBJECTS
    widened = [*own, *(k for o in own for k in parts(o))]
    related_words = [w for o in widened for w in sorted(by.get(stem(o), ())) if w not in own]
    return list(dict.fromkeys([*own, *related_words]))


def _stems(words: Iterable[str]) -> set[str]:
    return {stem(w) for w in words}


_NUMBER = re.compile(r"\b(\d+[a-z]*|one|two|three|four|five|six|seven|eight|nine|ten|"
                     r"eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|"
                     r"nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
                     r"hundred|dozen|first|second|third|fourth|fifth|sixth|seventh|eighth|"
                     r"ninth|tenth|eleventh|twelfth)\b", re.I)
_COUNTED = frozenset(stem(w) for w in "old age aged many much number count year".split())
"""Words of asking a number: "How old am I?" is about "I'm 41." though no word is shared."""


@functools.lru_cache(maxsize=256)
def _asked_stems(question: str, attitudes: bool) -> frozenset[str]:
    """The stems of what ``question`` is about, with related words: once per question (the
    guard and recall ask it for every note)."""
    return frozenset(_stems(subject_terms(question, attitudes=attitudes)))


def has_number(text: str) -> bool:
    """Whether ``text`` holds a number (digits, or a number word: "fifty-two", "4B")."""
    return _NUMBER.search(text) is not None


def relevant(note: str, question: str, *, attitudes: bool = True) -> bool:
    """Whether ``note`` (something the user said) is about what ``question`` asks: they
    share a subject word, or words of one category (of :data:`ATTITUDES` too, unless
    ``attitudes`` is false), or the question asks a number ("how old", "how many") and the
    note holds one."""
    terms = _asked_stems(question, attitudes)
    said = subject_terms(note, related=False)
    if terms & _stems([*said, *(k for w in said for k in parts(w))]):
        return True
    if bool(terms & _COUNTED) and has_number(note):
        return True
    if names_kind(said, question):
        return True
    # "And where am I now?", "Where do we keep it?": no subject of its own, so the answer's
    # kind (a place, a day, a name) says what it is about ("... in Cornwall.")
    return not _own_subjects(question) and forms.fits(note, question)


def names_kind(said: Iterable[str], question: str) -> bool:
    """Whether one of the words ``said`` names a thing of a kind ``question`` asks by its
    own words: "tortoise" for "What reptile do I own?", "piano" for "What instrument do I
    teach?" (WordNet's nouns, :mod:`terrarium.store.lexicon`; words of asking about a
    thing, "name", "time", "day", do not count)."""
    asked = [w for w in subject_terms(question, related=False) if stem(w) not in _NEUTRAL]
    mine = {stem(w) for w in asked}
    return bool(asked) and any(kind_of(w, asked) for w in said if stem(w) not in mine)


def holds_answer_form(note: str, question: str) -> bool:
    """Whether ``note`` holds the kind of answer ``question``'s form asks: a number for
    "how old", "how many" ("My nephew turns nine."), a place for "where" or "which town", a
    day or time for "when", a name for "what ... called"."""
    counted = bool(_stems(subject_terms(question, related=False)) & _COUNTED)
    return (counted and has_number(note)) or forms.fits(note, question)


_NAME_STEMS = frozenset(stem(w) for w in RELATED[0])


def tells_known(text: str) -> bool:
    """Whether ``text`` names a known subject (a word of :data:`RELATED`: "I live in
    Quebec", "the dog is Pickle"; not "Chess is my thing", "Dayo to my mates")."""
    return any(stem(w) in _BY_STEM_SUBJECTS for w in subject_terms(text, related=False))


@functools.lru_cache(maxsize=256)
def _own_subjects(question: str) -> frozenset[str]:
    """The known subjects (categories' words) ``question`` names itself, but a name's: "Where
    do I work?" has one (work), "Where do we keep it?" and "What do my friends call me?"
    none."""
    own = _stems(subject_terms(question, related=False)) - _NEUTRAL - _NAME_STEMS
    return frozenset(w for w in own if w in _BY_STEM_SUBJECTS)


def akin(word: str, said: Iterable[str]) -> bool:
    """Whether the stem ``word`` or a word of one of its categories (:data:`RELATED`) is
    among the stems ``said``: "city" is akin to "living", "trip" to "flying", "dog" to
    "retriever". (A stem is not stemmed again: "house" -> "hous", not "hou".)"""
    w = word
    have = set(said)
    return w in have or not _AKIN.get(w, frozenset()).isdisjoint(have)


_QUESTION_START = re.compile(
    r"^\W*(what|what's|where|where's|when|when's|who|who's|whom|whose|which|why|how|"
    r"how's|is|are|am|was|were|do|does|did|can|could|would|will|should|shall|have|has|"
    r"tell|remind|say|give|show|recall|remember|repeat|explain|describe|recommend|suggest|"
    r"help|find|play|sing|write|read|make|let|let's|please|turn|set|open|start|stop|"
    r"check|search|look|list|name|count|translate|calculate|i'd like|i would like|i want|"
    r"i need|i wonder)\b(?!')", re.I)
"""A question's or a request's first word; not one contracted ("Name's Wendell, ...": a
statement)."""
_SOCIAL = frozenset("""hi hello hey there good morning afternoon evening night thanks thank
you cheers bye goodbye see later soon take care so much lot a great nice ok okay yes no
sure fine well""".split())


_TAG_QUESTION = re.compile(
    r"[,;]\s*(?:(?:is|are|was|were|do|does|did|have|has|had|will|would|can|could)n't\s+"
    r"(?:it|that|i|we|you|he|she|they)|right|eh|huh|you know|don't you think|"
    r"can you believe (?:it|that|this)|(?:isn't|wasn't) that \w+)\W*\?[\"')]*$", re.I)
"""A tag question closing a statement: "My aunt turns ninety, can you believe it?" tells."""
_PLAN = re.compile(r"^\W*i (?:need|want|have) to\s+(?!know\b|hear\b|ask\b|find out\b)", re.I)
"""A plan told ("I need to call the bank tomorrow."), not a request for the assistant."""


_NAMING = re.compile(r"^\W*(please\s+)?(just\s+)?(do\s+not\s+|don't\s+|never\s+)?call\s+"
                     r"(me|us)\b", re.I)
"""A request of how to address the user tells their name: "Please don't call me Margaret,
I much prefer Peggy."."""


@functools.lru_cache(maxsize=512)
def is_statement(text: str) -> bool:
    """Whether ``text`` tells something rather than asks, greets, thanks or says goodbye
    (the user's statement closed by a tag question still tells: "My aunt turns ninety, can
    you believe it?"; "It's cold, isn't it?" asks)."""
    t = kept(text) or text.strip()  # "Remember that my locker is 42.": it tells
    untagged = _TAG_QUESTION.sub(".", t)
    if untagged != t and mentions_user(untagged):
        t = untagged
    if not t or t.rstrip("\"')").endswith("?"):
        return False
    if (_QUESTION_START.match(t) and not _PLAN.match(t) and not _NAMING.match(t)
            and not _SUBORDINATE.match(t)):
        return False
    return any(w.lower() not in _SOCIAL for w in _WORD.findall(t))


_SUBORDINATE = re.compile(r"^\W*(when|where|whenever|wherever)\s+(i|we|my|our|i'm|i've|i'd|"
                          r"we're|we've|we'd)\b", re.I)
"""A statement opening with a clause of time or place, not asking: "When I was working at
the zoo in Derby, ..." ("When did I ...?", "Where am I ...?" invert)."""


_FIRST_PERSON = re.compile(r"\b(i|me|my|mine|myself|i'm|i've|i'd|i'll|we|us|our|ours|"
                           r"ourselves|we're|we've)\b", re.I)
_ASK_HEAD = re.compile(r"^\W*(please\s+)?((can|could|would|will)\s+you\s+(please\s+)?)?"
                       r"[a-z]+\s+(me|us)\b", re.I)
"""A request's own "me": "Tell me a joke.", "Can you help me?", "Remind me ..."."""
_TELLING = frozenset("tell remind remember recall say repeat guess know".split())
"""The verbs of asking for what was told: "Remind me of my name." asks about the user,
"Write a poem about my cat." asks for something made."""
_ADVICE = re.compile(
    r"\b(should|shall|could|can|may|might|must|would)\s+(i|we)\b|"  # "What should I cook?"
    r"\b(i|we)\s+(should|could|might|ought)\s|"  # "... do you think I should wear?"
    r"\b(a|an|some|any)\s+(\w+\s+){1,3}(i|we)\s+can\s|"  # "a quick lunch I can make"
    r"^\W*how\s+(do|does|can|could|should|would|shall)\s+(i|we)\b|"  # "How do I boil an egg?"
    r"^\W*why\b|"  # "Why am I tired?": a reason, not something told
    r"^\W*(do|does|will|would)\s+(i|we)\s+(need|have\s+to|want)\b|"  # "Do I need a visa?"
    r"^\W*what('s|\s+is|\s+are|\s+would\s+be)\s+(a\s+|an\s+|the\s+|some\s+)?(good|best|"
    r"nice|great|better|fun)\b|"  # "What's a good stretch for my back?": a suggestion
    r"\b(any|some)\s+(tips|ideas|advice|suggestions?|recommendations?)\b|"
    r"^\W*(i'd like|i would like|i want|i need|let's)\b(?!\s+to\s+(know|hear)\b)",  # a wish
    re.I)
_ACTION = re.compile(r"^\W*(please\s+)?((can|could|would|will)\s+you\s+(please\s+)?)?"
                     r"([a-z]+)", re.I)


_KIN = re.compile(r"(\b[a-z']+\s+)?\b(grandma|grandpa|granny|gran|nana|nan|mum|mom|mummy|"
                  r"mommy|dad|daddy|auntie)\b", re.I)
_NOT_MINE = frozenset("your his her their a an the this that".split())


def mentions_user(text: str) -> bool:
    """Whether ``text`` speaks of the user (a first-person word: "I", "me", "my", "we",
    ...), other than a request's own "me" ("Tell me a joke.", "Can you help me?"); a kin
    word said as a name is the user's own ("How old is grandma now?")."""
    if _FIRST_PERSON.search(_ASK_HEAD.sub(" ", text, count=1)):
        return True
    return any((m.group(1) or "").strip().lower() not in _NOT_MINE for m in _KIN.finditer(text))


_WH = re.compile(r"^\W*(and\s+)?(what|what's|where|where's|when|when's|who|who's|whom|"
                 r"whose|which|how many|how much|how old|how long|how often|how far|"
                 r"how \w+(?= (?:is|are|was|were|does|did) (?!you\b)))\b", re.I)
_NEUTRAL = frozenset(stem(w) for w in """call called name named go going goes come coming
comes get gets getting happen happening again many much long old time day date year far often
exactly supposed""".split())
"""Words of asking about a thing rather than the thing: "What's the cat called?" is about
the cat."""


NEUTRAL = _NEUTRAL


def asked_of(question: str) -> set[str]:
    """The stems of the words ``question`` is about, without the words of asking about a
    thing ("What's the cat called?" -> {"cat"})."""
    return _stems(_content(question)) - _NEUTRAL


def may_refer(question: str) -> bool:
    """Whether ``question`` could ask about something the user told without speaking of
    them (:func:`refers_to_told`): asking what, where, when, who ... ("Remind me, when's the
    dentist?", "Physio's at what time?", "Landlord's name again?"), whether ("Is physio on
    Thursdays?"), by a frame of asking back ("Tell me again what the dog's called.") or
    after "tell me" ("Tell me where Noor is moving.")."""
    rest, framed = asked_back(question)
    framed = framed or (rest != question.strip() and _WH.match(rest) is not None)
    if not (framed or rest.rstrip().endswith("?")) or not _stems(_content(rest)) - _NEUTRAL:
        return False
    return bool(_WH.match(rest) or _WH_IN.search(rest) or framed or _YES_NO.match(rest)
                or (len(_WORD.findall(rest)) <= 4 and not _VERBED.search(rest)))


_VERBED = re.compile(r"\b(is|are|was|were|do|does|did|can|could|will|would|have|has|had|"
                     r"should|shall|must|may|might)\b", re.I)
"""A verb of a question: without one, a short question names what it asks ("The dog's
name?", "Name of the dog?")."""


_WH_IN = re.compile(r"\b(what|where|when|who|which|whose)\b|\bagain\W*$", re.I)
_YES_NO = re.compile(r"^(is|are|was|were|does|did|has|had|will|anything)\s+"
                     r"(?!you\b|it\b|there\b)", re.I)
"""A question whether ("Is physio on Thursdays?", "Anything on tomorrow?"; not "Do you
...", "Is it okay to ...?")."""


_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:'s)?\b")


def _names_in(text: str, *, first: bool = False) -> set[str]:
    """The capitalised words of ``text`` (a name: "Pippa", "Noor's" -> "pippa", "noor"),
    but its first word unless ``first``."""
    found = set()
    for m in _CAPITALISED.finditer(text):
        if (m.start() == 0 or text[:m.start()].rstrip()[-1:] in ".!?") and not first:
            continue
        w = m.group(0).removesuffix("'s").lower()
        if w not in _ASKING and w not in forms.DAYS_AND_MONTHS:
            found.add(w)
    return found




_FORM_STEMS = frozenset(stem(w) for w in forms.FORM_WORDS)


def refers_to_told(question: str, told: Iterable[str]) -> bool:
    """Whether ``question``, a wh-question that does not speak of the user, asks about
    something they told: every word it is about, or a word of its category (:func:`akin`:
    "What colour is the car?" after "My car's a green Skoda."), is in one of their
    statements in ``told`` (one that speaks of them). "What's the cat called?" after "Our
    cat Tigger hid again."; not "Tell me about dogs." (a request), nor "Are cats smart?"
    (not a wh-question)."""
    if not may_refer(question):
        return False
    own = asked_of(asked_back(question)[0])  # "Sorry, ...": what is asked, not the opening
    named = _names_in(question)
    for t in told:
        if named and mentions_user(t) and named & {w.lower() for w in _names_in(t, first=True)}:
            return True  # "What does Pippa love?" after "I have a niece called Pippa ..."
        have = _stems(_content(t))
        # "Which city's shipyard is it?" after "I weld at the shipyard in Belfast.": the
        # city is asked for, and the statement holds a place; the shipyard is in it
        rest = own - _FORM_STEMS if forms.fits(t, question) else own
        if mentions_user(t) and rest and all(akin(o, have) or tells_kind(o, t) for o in rest):
            return True  # "What sport again?" after "... has hockey training ...": WordNet
        if own and own <= have and is_statement(t):
            return True  # "The car's MOT is due on the 2nd.": told of theirs without "my"
    return False


def names_person(text: str) -> bool:
    """Whether ``text`` names someone but the user: a name, or a word for a person (WordNet:
    "cousin", "pilot", "neighbour"; "he" and "she" point at one)."""
    return bool(_names_in(text) or _THIRD_PERSON.search(text)) or tells_kind("person", text)


_THIRD_PERSON = re.compile(r"\b(he|she|him|her|his)\b", re.I)


def tells_kind(kind: str, text: str) -> bool:
    """Whether a word of ``text`` names a thing of ``kind`` (WordNet: "whippets" of "dog",
    "hockey" of "sport", "cousin" of "person"; :func:`terrarium.store.lexicon.kind_of`)."""
    return any(kind_of(w, [kind]) for w in _content(text))


def asks_advice(text: str) -> bool:
    """Whether ``text`` asks what to do or how, or asks for something done, rather than
    for what the user told: "What should I cook?", "How do I boil an egg?", "Can you help
    me plan a trip?", "Write a poem about my cat." ("What can't I eat?" asks a fact.)"""
    if _ADVICE.search(text):
        return True
    m = _ACTION.match(text)
    if m is None:
        return False
    verb = m.group(5).lower()
    polite = bool(m.group(2))  # "Can you VERB ...": the verb is what is asked for
    if verb in _TELLING:
        return False
    return polite or (verb not in _ASKING and not text.rstrip().endswith("?"))


def about_user(question: str) -> bool:
    """Whether ``question`` asks about the user themselves, whatever the form: any question
    or request that speaks of them ("What is my dog called?", "Where am I from?", "What do
    people call me?", "What can't I eat?", "Remind me where I live."), but for advice and
    how-to ("How do I boil an egg?", "What should I cook?") and requests for something
    done ("Write a poem about my cat."), which may use what was told but need not."""
    return mentions_user(question) and not asks_advice(question)


_OPENING = re.compile(r"^\W*((hi|hiya|howdy|hello|hey|oh|well|so|ok|okay|um|uh|yes|yeah|right|good "
                      r"(morning|afternoon|evening)|(morning|afternoon|evening)(?=[!,.]))\b"
                      r"[\s,!.]*)+(there\b[\s,!.]*)?", re.I)


def strip_opening(text: str) -> str:
    """``text`` without a greeting or filler at its start, nor a tag question at its end:
    "Hey, I'm Priya." -> "I'm Priya.", "My aunt is ninety, can you believe it?" -> "My aunt
    is ninety."."""
    rest = _OPENING.sub("", _TAG_QUESTION.sub(".", kept(text) or text.strip()))
    return rest[:1].upper() + rest[1:] if rest else text.strip()
