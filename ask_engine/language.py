"""Shared text helpers for answering: query intent, the product-attribute lexicon and list phrasing.

Everything here is about English questions in general, never about one shop: a small lexicon of common product
attributes (what words ask for which recorded fact) and question-shape detection. Country names ↔ ISO 3166 codes live
in `countries` and are re-exported here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ask_engine.countries import country_aliases, country_codes_in, country_name, group_members
from ask_engine.plaintext import normalize, word_set

__all__ = [
    "CONCEPTS",
    "CONCEPTS_BY_NAME",
    "OFFER_QUESTION_RE",
    "PREPOSITIONS",
    "Concept",
    "Intent",
    "alternation",
    "content_stems",
    "country_aliases",
    "country_codes_in",
    "country_name",
    "fact_key_matches",
    "group_members",
    "join_and",
    "normalize",
    "offer_stems",
    "parse_query",
    "stem",
    "third_person",
    "with_shop_synonyms",
    "word_set",
]

# ----------------------------------------------------------------------------------------------- basic text


# Function words and question fillers. Unlike a general stopword list it keeps words that carry meaning in a
# shop ("down" jackets, "off" prices, "over" trousers, "one" size).
_STOPWORDS = word_set(
    """
a about after again all also am an and any are aren't as at be because been before being both but by
can can't cannot could couldn't did didn't do does doesn't doing don't during each either else ever
every for from get gets got had hadn't has hasn't have haven't having he her here hers him his how
however i i'd i'll i'm i've if in into is isn't it it's its itself just let's may me might mine must
my myself need needs neither nor of on or our ours ourselves please quite rather really same shall
she should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those though through thus to too until upon
us very via was wasn't we we'd we'll we're we've were weren't what what's when where whether which
while who whom whose why will with won't would wouldn't yes yet you you'd you'll you're you've your
yours yourself yourselves hi hello hey thanks thank okay ok tell know like want wondering question
also still actually good nice great fine something anything everything someone anyone everyone somebody anybody
somewhere anywhere
"""
)
_LEXICON = json.loads((Path(__file__).with_name("lexicon") / "en.json").read_text(encoding="utf-8"))
# Everyday synonyms shoppers and shops use for the same thing (data): every form folds to the group's first word.
_SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = tuple(tuple(group) for group in _LEXICON["synonyms"])
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


_IRREGULAR = {
    "knives": "knife", "shelves": "shelf", "leaves": "leaf", "halves": "half", "lives": "life", "wolves": "wolf",
    "scarves": "scarf", "men": "man", "women": "woman", "children": "child", "feet": "foot", "teeth": "tooth",
}  # fmt: skip


def _raw_stem(word: str) -> str:
    w = word.lower()
    if w.endswith("'s"):
        w = w[:-2]
    w = _IRREGULAR.get(w, w)
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "able", "ible", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":  # shipped → ship
                w = w[:-1]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


_SYNONYMS = {_raw_stem(word): _raw_stem(group[0]) for group in _SYNONYM_GROUPS for word in group}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light English stemmer (plurals, -ing, -ed, -able, -ly, final -e) with everyday synonyms folded."""
    return _SYNONYMS.get(w := _raw_stem(word), w)


def alternation(words: Iterable[str]) -> str:
    """A regular-expression alternation of words or phrases, longest first, any run of spaces inside a phrase."""
    return "|".join(r"\s+".join(map(re.escape, w.split())) for w in sorted(words, key=len, reverse=True))


PREPOSITIONS: frozenset[str] = frozenset(_LEXICON["prepositions"])
# "Do you (still) sell / stock / carry ...?": whether the shop offers something (lexicon data)
_OFFER = _LEXICON["offer_questions"]
OFFER_QUESTION_RE = re.compile(
    rf"^\s*(?:{alternation(_OFFER['starts'])})\s+(?:{alternation(_OFFER['subjects'])})\s+"
    rf"(?:(?:{alternation(_OFFER['fillers'])})\s+)*(?:{alternation(_OFFER['verbs'])})\b"
)

# "..., if so, what size?": a part of a question that holds only if the part before it does (lexicon data)
CONDITIONAL_PART_RE = re.compile(rf"^\s*(?:{alternation(_LEXICON['conditional_parts'])})\b[\s,]*", re.IGNORECASE)


ShopSynonyms = tuple[tuple[str, tuple[str, ...]], ...]  # (the shop's word, the words shoppers use for it)


def with_shop_synonyms(text: str, synonyms: ShopSynonyms) -> str:
    """`text` with the shop's own word after each word or phrase the shop listed as a synonym of it ("are the
    wellies waterproof?" → "are the wellies (wellington) waterproof?" for `wellington = ["wellies"]`), so retrieval
    and answering match what its catalogue calls the thing; the shopper's word stays, as the catalogue may use it
    too. Whole words only, any case; a word the text already uses is not added again."""
    if not synonyms or not text:
        return text
    pattern, table = _shop_synonym_pattern(synonyms)
    if pattern is None:
        return text
    used = content_stems(text)

    def add(m: re.Match[str]) -> str:
        own = table[" ".join(m.group(0).lower().split())]
        return m.group(0) if content_stems(own) <= used else f"{m.group(0)} ({own})"

    return pattern.sub(add, text)


@lru_cache(maxsize=64)
def _shop_synonym_pattern(synonyms: ShopSynonyms) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    table: dict[str, str] = {}
    for own, others in synonyms:
        for other in others:
            table.setdefault(" ".join(other.lower().split()), own)
    if not table:
        return None, table
    return re.compile(rf"(?<![\w'])(?:{alternation(table)})(?![\w'])", re.IGNORECASE), table


@lru_cache(maxsize=1 << 15)  # kept by text: the same evidence sentences are read request after request
def content_stems(text: str) -> frozenset[str]:
    """Stems of the words that carry meaning (function words removed, numbers kept, synonyms folded)."""
    return frozenset(stem(w) for w in _TOKEN_RE.findall(normalize(text).lower()) if w not in _STOPWORDS)


def offer_stems() -> frozenset[str]:
    """The content stems of an offer question's frame ("sell", "stock", "shop"; function words carry none): what
    such a question says besides the thing it asks about."""
    words = " ".join(w for part in _OFFER.values() for w in part)
    return content_stems(words)


def join_and(items: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


_ES_ENDINGS = ("s", "sh", "ch", "x", "z", "o")
_IRREGULAR_3RD = {"have": "has", "be": "is", "do": "does", "go": "goes"}


def third_person(verb: str) -> str:
    """The third-person singular of an English verb: fit → fits, wash → washes, carry → carries, have → has."""
    low = verb.lower()
    if low in _IRREGULAR_3RD:
        return _IRREGULAR_3RD[low]
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    if low.endswith(_ES_ENDINGS):
        return verb + "es"
    return verb + "s"


# ----------------------------------------------------------------------------------------------- lexicon


@dataclass(frozen=True)
class Concept:
    """A common product attribute: the words that ask about it and the fact keys that can answer it.

    `keys` are matched against a fact's key (exactly, or as a whole `_`-separated part: `waterproof_rating`);
    the first present key answers, further present keys add detail. `related` facts are offered when none is
    recorded. `noun` and `adjective` phrase "the shop has not recorded ..." sentences.
    """

    name: str
    cues: tuple[str, ...]  # regular expressions over the lower-cased query
    keys: tuple[str, ...]
    noun: str
    adjective: str | None = None
    related: tuple[str, ...] = ()


def _load_concepts() -> tuple[Concept, ...]:
    """The attribute lexicon, from `lexicon/en.json` (data, not code)."""
    data = _LEXICON
    return tuple(
        Concept(
            name=item["name"],
            cues=tuple(item["cues"]),
            keys=tuple(item["keys"]),
            noun=item["noun"],
            adjective=item.get("adjective"),
            related=tuple(item.get("related") or ()),
        )
        for item in data["attributes"]
    )


CONCEPTS: tuple[Concept, ...] = _load_concepts()
_CONCEPT_RES = tuple((c, re.compile("|".join(c.cues))) for c in CONCEPTS)
CONCEPTS_BY_NAME = {c.name: c for c in CONCEPTS}
_CONCEPT_RE_BY_NAME = {c.name: pattern for c, pattern in _CONCEPT_RES}


def concept_words(text: str, name: str) -> list[str]:
    """The words of `text` that are cues for the attribute `name` ("warm" for warmth, "sun cream" for sun
    protection), as written; empty when it uses none."""
    pattern = _CONCEPT_RE_BY_NAME.get(name)
    return [m.group(0) for m in pattern.finditer(normalize(text).lower()) if m.group(0)] if pattern else []


def mentions_concept(text: str, name: str) -> bool:
    """True when `text` uses one of the lexicon's cues for the attribute `name`."""
    return name in _concepts_named(text)


@lru_cache(maxsize=1 << 15)  # every attribute at once, kept by text: the same sentences come back
def _concepts_named(text: str) -> frozenset[str]:
    lower = normalize(text).lower()
    return frozenset(c.name for c, pattern in _CONCEPT_RES if any(m.group(0) for m in pattern.finditer(lower)))


# Questions about the shop's processes rather than a product's properties.
_POLICY_RE = re.compile(
    r"\breturn\w*|\brefund\w*|\bexchang\w*|\bsend (?:it|them|this|these|those|\w+) back\b|\bmoney back\b|\bship\w*|"
    r"\bdeliver\w*|\bpostage\b|\bpost(?:ed|ing)? (?:to|it|them)\b|\bdispatch\w*|\bcourier\w*|\bcustoms\b|\bdut(?:y|ies)\b|"
    r"\bimport\w*|\bpost(?:ed|ing)?\b|\bby post\b|\bmail\b|\bpay\b|\bpaying\b|\bpayment\w*|\bdiscount\w*|\bvoucher\w*|\bpromo\w*|"
    r"\bcoupon\w*|\bgift ?cards?\b|\bcancel\w*|\btrack\w*|\b(?:my|an|the|your) order\b|\border (?:status|number)\b|\baccount\b|\bprivacy\b|"
    r"\bpersonal data\b|\bcookies?\b|\bopening (?:hours|times)\b|\bopen (?:on|at|until|today|tomorrow)\b|\bclick (?:and|&) collect\b|\bcollect\w*|"
    r"\bprice ?match\w*|\bstudent\w*|\brepair\w*|\bclaim\w*|\bfaulty\b|\bdamaged\b|\bstores?\b|\bshops?\b|"
    r"\bloyalty\b|\bnewsletter\b|\bcontact\b|\bphone\b|\bemail\b|\bhire\b|\brent\w*"
)
_SHIPPING_RE = re.compile(
    r"\bship\w*|\bdeliver\w*|\bpostage\b|\bpost(?:ed|ing)? (?:to|it|them|abroad|overseas)\b|\b(?:send|sent) (?:to|it|them|abroad|"
    r"overseas)\b|\bget (?:it|them|this|these) (?:sent |posted )?to\b|\bcourier\w*|\bcustoms\b|\bdut(?:y|ies)\b|\bimport (?:tax|vat|fee)\w*|\binternational\w*|\babroad\b|"
    r"\boverseas\b|\barriv\w*|\bdispatch\w*"
)
# Shipping questions whose answer does not depend on where the buyer lives.
_SHIPPING_NOT_PLACE_RE = re.compile(
    r"\btrack\w*|\blost\b|\bmissing\b|\bdamaged\b|\bchange (?:my|the) (?:delivery )?address\b|\bclick (?:and|&) collect\b|"
    r"\bwhere is my\b|\bgift ?cards?\b|\breturn\w*|\brefund\w*|\bexchang\w*"
)
_PRICE_RE = re.compile(
    r"\bprices?\b|\bpriced\b|\bcosts?\b|\bcosting\b|\bexpensive\b|\bcheap\w*|\bafford\w*|\bon sale\b|\breduced\b|"
    r"\bhow much (?:is|are|'s|do|does|for|would|will)\b(?! (?:\w+ ){0,2}(?:weigh|hold|need|use|add|take|contain)\b)|\bhow much\s*\??$|"
    r"\bwhat(?:'s| is| are) the (?:price|cost)"
)
_STOCK_RE = re.compile(
    r"\bin stock\b|\bstock\w*|\bavailab\w*|\bsold out\b|\bout of stock\b|\bback in\b|\bleft\b|\brestock\w*|"
    r"\bcan i (?:buy|order|get|book)\b|\bunavailable\b"
)
_OPTIONS_RE = re.compile(
    r"\bcolou?rs?\b|\bshades?\b|\bcome[s]? in\b|\bavailable in\b|\bsizes?\b|\boptions?\b|\bvariants?\b|\bversions?\b|"
    r"\bflavou?rs?\b|\bstyles?\b|\bdo (?:you|they) (?:have|do|make) (?:it|them|this|these|one) in\b|\bin (?:a )?size\b"
)
_CATALOGUE_RE = re.compile(
    r"\b(?:do|does|did) (?:you|the shop|the store|they|y'all) (?:\w+ )?(?:sell|stock|carry|have|offer|make|rent|hire)\b|"
    r"\bwhat (?:kinds?|sorts?|types?|range) of\b|\b(?:recommend|suggest)\w*\b|\blooking for\b|\bshow me\b|"
    r"\b(?:which|what) (?:of your )?\w+(?: \w+)? (?:do you (?:have|sell|stock|carry|offer)|have you got|are|come)\b|"
    r"\bany (?:good )?\w+ (?:for|that|which|under|below)\b|\b(?:best|cheapest|lightest|warmest|smallest|biggest)\b|"
    r"\bi (?:need|want) (?:a|an|some)\b|\bhave you got\b"
)
_COMPARISON_RE = re.compile(
    r"\bcompare\w*|\bcomparison\b|\bdifference\w*|\bdiffer\b|\bversus\b|\bvs\.?\b|\bwhich (?:one |of (?:them|these|the two) )?"
    r"is (?:\w+er|more|less|better)\b|\b\w+er than\b|\bmore \w+ than\b|\bor the\b|\bbetter\b"
)
_OVERVIEW_RE = re.compile(
    r"\btell me (?:more )?about\b|\bwhat is (?:it|this|that)\b|\bwhat are (?:they|these)\b|\bdescribe\b|\bdetails\b|"
    r"\bmore (?:info|information)\b|\bany good\b|\bis (?:it|this) good\b|\bwhat do you know about\b"
)
_ELLIPTICAL_RE = re.compile(
    r"^(?:and|what about|how about|and what about|same for|what of|also)\b|^(?:the|that|this) \w+ one\b"
)
_YES_NO_RE = re.compile(
    r"^(?:is|are|was|were|am|isn't|aren't|does|do|did|doesn't|don't|can|could|can't|will|would|won't|should|shall|"
    r"has|have|hasn't|haven't|may|might|must)\b"
)
_WH_RE = re.compile(
    r"\b(how much|how many|how long|how big|how heavy|how warm|how old|how often|how soon|how quickly|how fast|how|"
    r"what|which|where|when|who|why)\b"
)
_LEAD_FILLER_RE = re.compile(
    r"^(?:(?:and|but|so|also|ok|okay|oh|well|hi|hello|hey|please|thanks|great|cool|then)\b[\s,!.]*|"
    r"(?:can|could|would) you (?:please )?(?:tell|let) me (?:know )?(?:if|whether)?\s*|"
    r"(?:i'd|i would|i want to|i wanna) (?:like to )?know (?:if|whether)?\s*|do you know (?:if|whether)?\s*|"
    r"i was wondering (?:if|whether)?\s*|quick question[:,]?\s*)+"
)
_DURATION_ASK_RE = re.compile(
    r"\bhow (?:long|soon|quickly|fast)\b|\bwhen\b|\bdays?\b|\bweeks?\b|\bwindow\b|\bperiod\b|\btime limit\b|\bdeadline\b"
)
_QUANTITY_ASK_RE = re.compile(r"\bhow (?:much|many)\b|\bprice\b|\bcost\b|\bfee\b|\bcharge\b")

# Basic colour words: a fact about English, used to notice "do they come in blue?" when no option matches.
COLOUR_WORDS = word_set(
    """
black white grey gray red blue navy green olive yellow orange purple pink brown beige tan khaki
cream charcoal silver gold teal turquoise burgundy maroon lilac lavender mint coral rust sand stone
slate camo camouflage ivory copper mustard aqua indigo violet magenta plum peach bronze natural
clear transparent multicolour multicolor
"""
)


@dataclass(frozen=True)
class Intent:
    """What a question asks, read from its words alone (the generator matches it against the recorded facts)."""

    text: str  # the question as asked (normalised spacing), without leading fillers
    lower: str
    stems: frozenset[str]
    yes_no: bool
    wh: str | None  # "how much", "what", "where", ...
    concepts: tuple[str, ...]  # Concept.name, in order of appearance
    price: bool
    stock: bool
    options: bool
    colours: tuple[str, ...]  # basic colour words named in the question
    numbers: tuple[str, ...]  # numbers / sizes named ("42", "10", "xl")
    shipping: bool
    shipping_place: bool  # a shipping question whose answer depends on the destination
    policy: bool
    catalogue: bool
    comparison: bool
    overview: bool
    elliptical: bool
    asks_duration: bool
    asks_quantity: bool
    asks_time: bool  # "what time", "cut-off": a clock time answers
    countries: tuple[str, ...]  # ISO alpha-2 codes named in the question
    overview_policy: bool = False  # "what's your returns policy?": the policy's rules answer
    permission_verb: str | None = None  # "can I return...?" → stem of "return": a rule with that verb answers it

    @property
    def product_specific(self) -> bool:
        """Asks about a property of a product (recorded fact, price, stock or options)."""
        return bool(self.concepts) or self.price or self.stock or self.options


_SIZE_TOKEN_RE = re.compile(
    r"\b(?:size|uk|eu|us|age|in)\s+((?:\d+(?:\.5)?)|x{0,3}[sml]|xx?l)\b|\b(xxs|xs|xxl|xxxl|xl|\d+(?:\.5)?)\b"
)


# Everyday phrasings folded to the word a shop's policy uses, for reading the question (the text embedded for
# similarity is kept as asked).
_PHRASES = (
    (re.compile(r"\b(?:send|sending|sent|post|posting|take|taking|bring|bringing)\s+(?:(?:it|them|this|these|that|those|"
                r"something|stuff|items?|things?|\w+)\s+)?back\b"), "return"),
    (re.compile(r"\bmoney back\b"), "refund"),
    (re.compile(r"\bswap(?:ping|ped)?\b"), "exchange"),
    (re.compile(r"\bpick(?:ing)?\s+(?:it\s+|them\s+)?up\b"), "collect"),
)  # fmt: skip
# "how much does it cost to resole...?" asks the price of a service the shop offers, not of a product
_SERVICE_PRICE_RE = re.compile(r"\b(?:cost|price|charge|pay)s?\s+(?:me\s+)?(?:to|for)\s+(?!buy\b|get\b|purchase\b|order\b)"
                               r"(?:a\s+|the\s+)?\w+")  # fmt: skip


@lru_cache(maxsize=1 << 14)  # a pure function of the question, read several times per answer (parts, follow-ups)
def parse_query(query: str) -> Intent:
    """Read a question's shape and the attributes it asks about."""
    text = normalize(query)
    lower = text.lower()
    lower = _LEAD_FILLER_RE.sub("", lower).strip()
    text = text[len(text) - len(lower) :] if lower and text.lower().endswith(lower) else text
    for pattern, replacement in _PHRASES:
        lower = pattern.sub(replacement, lower)
    concepts: list[tuple[int, str]] = []
    for concept, pattern in _CONCEPT_RES:
        m = pattern.search(lower)
        if m:
            concepts.append((m.start(), concept.name))
    # "how much does it weigh" asks for weight, not price; "how long does it last" is shelf life, not length
    # "is the inner tube included in the price?" asks what the price covers, not what it is
    price = bool(_PRICE_RE.search(lower)) and not re.search(
        r"how much (?:does|do|will|can) \w+ (?:weigh|hold)|\binclud\w*|\bcovers?\b|\bcome with\b", lower
    )
    service = bool(_SERVICE_PRICE_RE.search(lower))
    wh = wh_match.group(1) if (wh_match := _WH_RE.search(lower)) else None
    yes_no = bool(_YES_NO_RE.match(lower))
    shipping = bool(_SHIPPING_RE.search(lower))
    numbers = tuple(
        dict.fromkeys((m.group(1) or m.group(2)) for m in _SIZE_TOKEN_RE.finditer(lower) if (m.group(1) or m.group(2)))
    )
    colours = tuple(w for w in dict.fromkeys(re.findall(r"[a-z]+", lower)) if w in COLOUR_WORDS)
    countries = country_codes_in(text, query=True)
    permission = re.match(
        r"^(?:can|could|may|am i allowed to|is it possible to)\s+(?:i|we|you)?\s*(?:still\s+)?(\w+)", lower
    )
    return Intent(
        text=text,
        lower=lower,
        stems=content_stems(lower),
        yes_no=yes_no,
        wh=wh,
        concepts=tuple(name for _, name in sorted(concepts)),
        price=price and not service,
        stock=bool(_STOCK_RE.search(lower)),
        options=bool(_OPTIONS_RE.search(lower)) or bool(colours and yes_no),
        colours=colours,
        numbers=numbers,
        shipping=shipping or bool(countries and re.search(r"\b(?:to|into)\b", lower)),
        shipping_place=(shipping or bool(countries)) and not _SHIPPING_NOT_PLACE_RE.search(lower),
        policy=bool(_POLICY_RE.search(lower)) or service,
        catalogue=bool(_CATALOGUE_RE.search(lower)),
        comparison=bool(_COMPARISON_RE.search(lower)),
        overview=bool(_OVERVIEW_RE.search(lower)),
        elliptical=bool(_ELLIPTICAL_RE.match(lower)),
        asks_duration=bool(_DURATION_ASK_RE.search(lower)),
        asks_quantity=bool(_QUANTITY_ASK_RE.search(lower)),
        asks_time=bool(
            re.search(
                r"\bwhat time\b|\bcut-?off\b|\bdeadline\b|\bby when\b|\bopening (?:hours|times)\b|\bopen\b", lower
            )
        ),
        countries=countries,
        overview_policy=bool(
            re.search(
                r"\b(?:what(?:'s| is| are)|tell me about|explain) (?:your|the) (?:[\w-]+ ){0,3}(?:polic(?:y|ies)|terms|rules)\b",
                lower,
            )
        ),
        permission_verb=stem(permission.group(1)) if permission and permission.group(1) not in _STOPWORDS else None,
    )


def fact_key_matches(key: str, wanted: str) -> bool:
    """`waterproof_rating` answers `waterproof`; `colour_options` answers `colour`; `material` answers `material`."""
    key = key.lower()
    return key == wanted or wanted in key.split("_") or key.startswith(wanted + "_")
