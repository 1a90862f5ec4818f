"""Shared text helpers for answering: query intent, the product-attribute lexicon and list phrasing.

Everything here is about English questions in general, never about one shop: a small lexicon of common product
attributes (what words ask for which recorded fact) and question-shape detection. Country names ↔ ISO 3166 codes live
in `countries` and are re-exported here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from ask_engine.countries import country_aliases, country_codes_in, country_name, group_members, region_named
from ask_engine.plaintext import fold, normalize, word_set
from ask_engine.statements import asked_only
from ask_engine.towns import town_named

__all__ = [
    "CONCEPTS",
    "CONCEPTS_BY_NAME",
    "OFFER_QUESTION_RE",
    "OWNED_AGE_RE",
    "PREPOSITIONS",
    "Concept",
    "Intent",
    "alternation",
    "american_spelling",
    "asks_options",
    "content_stems",
    "country_aliases",
    "country_codes_in",
    "country_name",
    "fact_key_matches",
    "folded_phrases",
    "group_members",
    "in_shop_words",
    "informal_synonyms",
    "join_and",
    "normalize",
    "offer_stems",
    "parse_query",
    "price_denied",
    "spelling_variants",
    "stem",
    "text_cue",
    "third_person",
    "value_words",
    "with_shop_synonyms",
    "word_list",
    "word_set",
    "word_stems",
]

# ----------------------------------------------------------------------------------------------- basic text


_LEXICON = json.loads((Path(__file__).with_name("lexicon") / "en.json").read_text(encoding="utf-8"))
# Function words and question fillers (lexicon data), left out of a question's content words.
_STOPWORDS: frozenset[str] = frozenset(_LEXICON["stopwords"])
# Everyday synonyms shoppers and shops use for the same thing (data): every form folds to the group's first word.
_SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = tuple(tuple(group) for group in _LEXICON["synonyms"])
# Groups of words for one thing, one of them informal ("vegetarian", "veggie"; lexicon data): they fold as synonyms do
_INFORMAL_GROUPS: tuple[tuple[str, ...], ...] = tuple(tuple(group) for group in _LEXICON["informal_words"])
INFORMAL_WORDS = frozenset(w for group in _INFORMAL_GROUPS for w in group)  # "cals" is no slip for "calls"
_TOKEN_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# letters written with dots between them are one word ("P.O. boxes" is "PO boxes", "U.S." "US"), not single letters
_INITIALISM_RE = re.compile(r"\b(?:[^\W\d_]\.){2,}(?![^\W_])")


def _words(text: str) -> list[str]:
    """`text`'s words as `_TOKEN_RE` reads them, an initialism's letters joined."""
    return _TOKEN_RE.findall(_INITIALISM_RE.sub(lambda m: m.group(0).replace(".", "") + " ", text))


# plural forms and verbs' past forms the stemmer cannot undo by rule (lexicon data)
_IRREGULAR: dict[str, str] = _LEXICON["irregular_plurals"] | _LEXICON["irregular_verbs"]
# "subscription" read as "subscribe": a noun's ending the rules above cannot undo (lexicon data), longest first
_NOUN_ENDINGS = tuple(sorted(_LEXICON["noun_endings"].items(), key=lambda kv: -len(kv[0])))
# British spellings read as the American ones ("sulphate" as "sulfate", "moisturiser" as "moisturizer"; lexicon data)
_SPELLING_WORDS: dict[str, str] = _LEXICON["spellings"]["words"]
_BRITISH_WORDS: dict[str, tuple[str, ...]] = {
    a: tuple(b for b, other in _SPELLING_WORDS.items() if other == a) for a in set(_SPELLING_WORDS.values())
}
_SPELLING_RULES = tuple((re.compile(pattern), repl) for pattern, repl in _LEXICON["spellings"]["rules"])


def spelling_variants(word: str) -> tuple[str, ...]:
    """Other spellings of a lower-case word the lexicon lists ("aluminum": "aluminium"), its American one among them;
    rule-made variants ("polarized": "polarised") are one edit apart and found by edits."""
    american = american_spelling(word)
    return tuple(w for w in (american, *_BRITISH_WORDS.get(american, ())) if w != word)


def american_spelling(word: str) -> str:
    """A lower-case word in its American spelling, which both spellings of it share once stemmed."""
    if word in _SPELLING_WORDS:
        return _SPELLING_WORDS[word]
    for pattern, repl in _SPELLING_RULES:
        word = pattern.sub(repl, word)
    return word


def _raw_stem(word: str) -> str:
    w = word.lower()
    if w.endswith("'s"):
        w = w[:-2]
    w = _IRREGULAR.get(w, w)
    if len(w) <= 3:
        return w
    w = american_spelling(w)
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
    for ending, verb in _NOUN_ENDINGS:
        if w.endswith(ending) and len(w) > len(ending):
            return w[: -len(ending)] + verb
    return w


_SYNONYMS = {_raw_stem(word): _raw_stem(group[0]) for group in (*_SYNONYM_GROUPS, *_INFORMAL_GROUPS) for word in group}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light English stemmer (plurals, -ing, -ed, -able, -ly, final -e) with everyday synonyms folded."""
    return _SYNONYMS.get(w := _raw_stem(word), w)


def alternation(words: Iterable[str]) -> str:
    """A regular-expression alternation of words or phrases, longest first, any run of spaces inside a phrase."""
    return "|".join(r"\s+".join(map(re.escape, w.split())) for w in sorted(words, key=len, reverse=True))


PREPOSITIONS: frozenset[str] = frozenset(_LEXICON["prepositions"])
# the currency signs an amount is written with ("₹1,150", "12 €")
CURRENCY_SIGNS = "£$€¥₹₩₪₱₫฿₺₴₦"
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
    jumpers wool?" → "are the jumpers (sweater) wool?" for `sweater = ["jumpers"]`), so retrieval
    and answering match what its catalogue calls the thing; the shopper's word stays, as the catalogue may use it
    too. Whole words (or their plural) only, any case; a word the text already uses is not added again."""
    # the words as written, synonyms not folded: "sunnies" does not write "sunglasses", though both read as one
    written = _written_stems(text)
    return _sub_shop_words(
        text, synonyms, lambda said, own: said if _written_stems(own) <= written else f"{said} ({own})"
    )


def _written_stems(text: str) -> frozenset[str]:
    """The stems of `text`'s content words with no synonym folded."""
    return frozenset(_raw_stem(w) for w in _words(fold(normalize(text)).lower()) if w not in _STOPWORDS)


def informal_synonyms(text: str, uses: Callable[[str], int]) -> ShopSynonyms:
    """The lexicon's informal words `text` uses that the shop's text does not, each with the word of its group the
    shop uses most (`uses`: how many of the shop's passages use a lower-case word), in `with_shop_synonyms`' shape:
    "is it ok for my veggie sister?" reads "veggie (vegetarian)" where the shop writes "vegetarian"."""
    words, low = {w.lower() for w in _words(text)}, text.lower()

    def says(w: str) -> bool:  # (a group's phrase, "american express", is said whole)
        return w in words or f"{w}s" in words if " " not in w else re.search(rf"\b{re.escape(w)}\b", low) is not None

    def shop_uses(w: str) -> int:  # ... and used where the shop uses each of its words
        return uses(w) if " " not in w else min(uses(part) for part in w.split())

    pairs: list[tuple[str, tuple[str, ...]]] = []
    for group in _INFORMAL_GROUPS:
        said = tuple(w for w in group if says(w) and shop_uses(w) <= 0)
        used = [(shop_uses(w), w) for w in group if w not in said and shop_uses(w) > 0]
        if said and used:
            pairs.append((max(used)[1], said))
    return tuple(pairs)


def in_shop_words(text: str, synonyms: ShopSynonyms) -> str:
    """`text` with each word or phrase the shop listed as a synonym replaced by the shop's own word ("jumpers" →
    "sweater"): the name of a kind of thing as the catalogue files it. Whole words (or their plural) only, any case."""
    return _sub_shop_words(text, synonyms, lambda _said, own: own)


def _sub_shop_words(text: str, synonyms: ShopSynonyms, write: Callable[[str, str], str]) -> str:
    """`text` with each listed synonym (as said, with the shop's own word) rewritten by `write`."""
    if not synonyms or not text:
        return text
    pattern, table = _shop_synonym_pattern(synonyms)
    if pattern is None:
        return text
    return pattern.sub(lambda m: write(m.group(0), table[" ".join(m.group("word").lower().split())]), text)


@lru_cache(maxsize=64)
def _shop_synonym_pattern(synonyms: ShopSynonyms) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    table: dict[str, str] = {}
    for own, others in synonyms:
        for other in others:
            table.setdefault(" ".join(other.lower().split()), own)
    if not table:
        return None, table
    # a listed word in the plural too ("cagoules" for "cagoule")
    return re.compile(rf"(?<![\w'])(?P<word>{alternation(table)})(?:e?s)?(?![\w'])", re.IGNORECASE), table


@lru_cache(maxsize=1 << 15)  # kept by text: the same evidence sentences are read request after request
def content_stems(text: str) -> frozenset[str]:
    """Stems of the words that carry meaning (function words removed, numbers kept, synonyms folded)."""
    return frozenset(content_stem_sequence(text))


def content_stem_sequence(text: str) -> tuple[str, ...]:
    """`content_stems` in the order the words come ("bed temp" → ("bed", "temp")), repeats kept."""
    return tuple(stem(w) for w in _words(fold(normalize(text)).lower()) if w not in _STOPWORDS)


def offer_stems() -> frozenset[str]:
    """The content stems of an offer question's frame ("sell", "stock", "shop"; function words carry none): what
    such a question says besides the thing it asks about."""
    words = " ".join(w for part in _OFFER.values() for w in part)
    return content_stems(words)


def value_words(
    value: str, title: frozenset[str], words: Callable[[str], Iterable[str]] = content_stem_sequence
) -> frozenset[str]:
    """The words of a product's option value, figures and units aside (three letters or more, no digit), none where
    its title says them all: "500 g tin" → {"tin"}; `words` reads a text's words as the caller compares them."""
    found = frozenset(w for w in words(value) if len(w) >= 3 and not any(c.isdigit() for c in w))
    return frozenset() if found <= title else found


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


# How a question shows what kind of question it is (lexicon data: each list of `question_cues` is one alternation).
_CUES: dict[str, list[str]] = _LEXICON["question_cues"]


def _cue_re(name: str) -> re.Pattern[str]:
    return re.compile("|".join(_CUES[name]))


def text_cue(name: str, flags: int = 0) -> re.Pattern[str]:
    """The lexicon's `text_cues[name]` (English the answerer reads in questions and sentences) as one pattern."""
    return re.compile("|".join(_LEXICON["text_cues"][name]), flags)


# a person named by age ("my 17 year old son", "our 5-year-old"): no product, whatever title shares "year old"
OWNED_AGE_RE = re.compile(
    rf"\b(?:my|our|his|her|their)\s+(?:{'|'.join(_LEXICON['text_cues']['age_phrase'])})", re.IGNORECASE
)


def lexicon_section(name: str) -> dict[str, Any]:
    """One mapping of the lexicon by name ({} when the language has none)."""
    return dict(_LEXICON.get(name, {}))


def word_list(name: str) -> frozenset[str]:
    """The lexicon's `word_lists[name]`: words the answerer sets aside or looks for."""
    return frozenset(_LEXICON["word_lists"][name])


def word_stems(name: str) -> frozenset[str]:
    """The content stems of the lexicon's `word_lists[name]`, as `content_stems` reads a question's words."""
    return content_stems(" ".join(sorted(word_list(name))))


_POLICY_RE = _cue_re("policy")  # the shop's processes rather than a product's properties
ARRIVED_DAMAGED_RE = text_cue("arrived_damaged", re.IGNORECASE)  # "my mug arrived smashed", "damaged in transit"
_SHIPPING_RE = _cue_re("shipping")
_SHIPPING_NOT_PLACE_RE = _cue_re("shipping_not_place")  # shipping questions whatever the buyer's place
_PRICE_RE = _cue_re("price")
_STOCK_RE = _cue_re("stock")
_OPTIONS_RE = _cue_re("options")


def asks_options(text: str) -> bool:
    """True when a question names options as such ("what colours…", "does it come in…"), not only a colour word."""
    return bool(_OPTIONS_RE.search(normalize(text).lower()))


_CATALOGUE_RE = _cue_re("catalogue")
_COLOUR_CHANGE_RE = text_cue("colour_change")
_COLOUR_COMPOUND_RE = text_cue("colour_compound")  # "blue light", "red wine": the colour word names no colour
_COLOUR_THING_RE = text_cue("colour_thing")  # "lump charcoal", "face cream": the colour word names a thing
_COMPARISON_RE = _cue_re("comparison")
_OVERVIEW_RE = _cue_re("overview")
_ELLIPTICAL_RE = _cue_re("elliptical")
_MADE_IN_RE = _cue_re("made_in_place")  # "made in nz or overseas?": where goods come from, no destination
_YES_NO_RE = _cue_re("yes_no")
_WH_RE = _cue_re("wh")
_MEASURE_ASKED = re.compile("|".join(f"(?:{p})" for m in _LEXICON["measures"] for p in m["asks"]))  # "how thick"
_LEAD_FILLER_RE = _cue_re("lead_filler")
_DURATION_ASK_RE = _cue_re("duration_ask")
_QUANTITY_ASK_RE = _cue_re("quantity_ask")
_PRICE_NOT_RE = _cue_re("price_not")  # "how much does it weigh", "is the tube included in the price?": no cost asked
_PERMISSION_RE = _cue_re("permission")  # "can I return ...?" → the verb a rule must allow
_SHIPPING_TO_RE = _cue_re("shipping_to")
_SENT_TO_ASKER_RE = _cue_re("sent_to_asker")  # "I live in Jersey, can you send me one?": sent to where they are
_TRAVEL_TO_RE = _cue_re("travel_to")
_TO_SOMEONE_IN = _cue_re("to_someone_in")  # "… gets to me in Dublin", "to my sister in Oslo": where they are
_ASKS_TIME_RE = _cue_re("asks_time")  # a clock time answers
_OVERVIEW_POLICY_RE = _cue_re("overview_policy")  # "what's your returns policy?"

COLOUR_WORDS: frozenset[str] = frozenset(_LEXICON["colour_words"])  # "do they come in blue?" with no option


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
    # "what do you charge for engraving?": the word a service price is asked for, read as a service's (`policy`, not
    # `price`) unless it names the product in view ("price for the T92 with the mulch kit": `as_product_price`)
    service_object: str | None = None

    @property
    def product_specific(self) -> bool:
        """Asks about a property of a product (recorded fact, price, stock or options)."""
        return bool(self.concepts) or self.price or self.stock or self.options


_SIZE_TOKEN_RE = _cue_re("size_token")


# Everyday phrasings folded to the word a shop's policy uses, for reading the question (lexicon data; the text
# embedded for similarity is kept as asked).
_PHRASES = tuple((re.compile(pattern), replacement) for pattern, replacement in _LEXICON["phrases"])
# "how much does it cost to resole...?" asks the price of a service the shop offers, not of a product
_SERVICE_PRICE_RE = _cue_re("service_price")


def price_denied(lower: str) -> bool:
    """A question read in lower case (`Intent.lower`) that asks a figure other than a price in price's words ("how much
    does it weigh?", "how much hazelnut is in it?")."""
    return bool(_PRICE_NOT_RE.search(lower))


def folded_phrases(text: str) -> str:
    """`text` in lower case with the lexicon's everyday phrasings folded to the shop's word ("take back" → "return"),
    as a question is read."""
    lower = text.lower()
    for pattern, replacement in _PHRASES:
        lower = pattern.sub(replacement, lower)
    return lower


@lru_cache(maxsize=1 << 14)  # a pure function of the question, read several times per answer (parts, follow-ups)
def parse_query(query: str) -> Intent:
    """Read a question's shape and the attributes it asks about."""
    text = normalize(query)
    lower = text.lower()
    lower = _LEAD_FILLER_RE.sub("", lower).strip()
    text = text[len(text) - len(lower) :] if lower and text.lower().endswith(lower) else text
    lower = folded_phrases(lower)
    concepts: list[tuple[int, str]] = []
    for concept, pattern in _CONCEPT_RES:
        m = pattern.search(lower)
        if m:
            concepts.append((m.start(), concept.name))
    concepts = asked_only(lower, concepts, _CONCEPT_RE_BY_NAME, (_WH_RE, _YES_NO_RE), _MEASURE_ASKED)
    # "how much does it weigh" asks for weight, not price; "how long does it last" is shelf life, not length
    # "is the inner tube included in the price?" asks what the price covers, not what it is
    price = _reads_price(lower)
    service_match = _SERVICE_PRICE_RE.search(lower)
    service = service_match is not None
    wh = wh_match.group(1) if (wh_match := _WH_RE.search(lower)) else None
    yes_no = bool(_YES_NO_RE.match(lower))
    shipping = bool(_SHIPPING_RE.search(_MADE_IN_RE.sub(" ", lower)))
    numbers = tuple(
        dict.fromkeys((m.group(1) or m.group(2)) for m in _SIZE_TOKEN_RE.finditer(lower) if (m.group(1) or m.group(2)))
    )
    # "is it turning yellow?", "does it turn towels black?", "will it leave white marks?": a colour a thing turns or
    # leaves is no colour of the product asked for
    changed = {w for m in _COLOUR_CHANGE_RE.finditer(lower) for w in re.findall(r"[a-z]+", m.group(1))}
    changed |= {m.group(1) for m in _COLOUR_COMPOUND_RE.finditer(lower)}  # "does it block blue light?"
    changed |= {m.group(2) for m in _COLOUR_THING_RE.finditer(lower) if m.group(1) not in COLOUR_WORDS}
    # "is it Greenguard Gold certified?": a capitalised colour word after a capitalised name, closing it, is the name's
    changed |= {
        m.group(2).lower()
        for m in re.finditer(r"(?<=\w )([A-Z][a-z]+) ([A-Z][a-z]+)\b(?! (?:one|ones|version|colou?r)\b)", text)
        if m.group(1).lower() not in COLOUR_WORDS and m.group(2).lower() in COLOUR_WORDS
    }
    colours = tuple(w for w in dict.fromkeys(re.findall(r"[a-z]+", lower)) if w in COLOUR_WORDS and w not in changed)
    countries = country_codes_in(text, query=True)
    # the countries a destination may be: not one where goods are made ("made in nz or overseas?"), read again only then
    bound = country_codes_in(_MADE_IN_RE.sub(" ", text), query=True) if _MADE_IN_RE.search(text) else countries
    permission = _PERMISSION_RE.match(lower)
    # "how long does it take to get to Norway / to Texas / to Dublin?"
    # ... but "going to Spain next month, can I use it there?" is the asker's trip, not a parcel's
    town = town_named(text) if not shipping and not countries else None
    to_place = not shipping and not _TRAVEL_TO_RE.search(lower) and bool(countries or region_named(text) or town)
    # ... where "to" leads to the place ("to get to Norway", "to me in Dublin"), not to a verb ("have to be to buy …")
    to_place = to_place and any(
        country_codes_in(after, query=True)
        or region_named(after)
        or (town is not None and after.lower().startswith(town.name.lower()))
        for m in _SHIPPING_TO_RE.finditer(text)
        if (after := " ".join(_TO_SOMEONE_IN.sub("", text[m.end() :].strip()).split()[:4]))
    )
    if not shipping and not to_place and _SENT_TO_ASKER_RE.search(lower) and not _TRAVEL_TO_RE.search(lower):
        to_place = bool(countries or region_named(text) or town is not None)
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
        shipping=shipping or to_place,
        shipping_place=(shipping or to_place or bool(bound)) and not _SHIPPING_NOT_PLACE_RE.search(lower),
        policy=_reads_policy(lower) or service,
        catalogue=bool(_CATALOGUE_RE.search(lower)),
        comparison=bool(_COMPARISON_RE.search(lower)),
        overview=bool(_OVERVIEW_RE.search(lower)),
        elliptical=bool(_ELLIPTICAL_RE.match(lower)),
        asks_duration=bool(_DURATION_ASK_RE.search(lower)),
        asks_quantity=bool(_QUANTITY_ASK_RE.search(lower)),
        asks_time=bool(_ASKS_TIME_RE.search(lower)),
        countries=countries,
        overview_policy=bool(_OVERVIEW_POLICY_RE.search(lower)),
        permission_verb=stem(permission.group(1)) if permission and permission.group(1) not in _STOPWORDS else None,
        service_object=service_match.group(0).split()[-1] if service_match else None,
    )


def as_product_price(intent: Intent) -> Intent:
    """`intent` read as asking the price of a product, where its service-price wording ("price for the T92 …") named
    the product in view: a price question, and a policy one only for a policy word of its own."""
    return replace(intent, price=_reads_price(intent.lower), policy=_reads_policy(intent.lower), service_object=None)


def _reads_price(lower: str) -> bool:
    """A question in lower case asks a price in price's words, not another figure ("how much does it weigh?")."""
    return bool(_PRICE_RE.search(lower)) and not _PRICE_NOT_RE.search(lower)


def _reads_policy(lower: str) -> bool:
    """A question in lower case uses a policy's words (returns, delivery, payment, …) or says its goods came damaged."""
    return bool(_POLICY_RE.search(lower) or ARRIVED_DAMAGED_RE.search(lower))


@lru_cache(maxsize=1024)
def _plurals(word: str) -> frozenset[str]:
    """`word` and its regular English plurals ("battery" → "batteries", "box" → "boxes")."""
    forms = {word, word + "s", word + "es"}
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        forms.add(word[:-1] + "ies")
    return frozenset(forms)


def fact_key_matches(key: str, wanted: str) -> bool:
    """`waterproof_rating` answers `waterproof`; `colour_options` answers `colour`; `material` answers `material`;
    a part in the plural answers too (`num_batteries` answers `battery`)."""
    key = key.lower()
    # (or ends with it: `whats_in_the_box` answers `in_the_box`)
    if key == wanted or key.startswith(wanted + "_") or ("_" in wanted and key.endswith("_" + wanted)):
        return True
    # a key part never holds "_", so a many-word `wanted` matches only as above
    return "_" not in wanted and not _plurals(wanted).isdisjoint(key.split("_"))
