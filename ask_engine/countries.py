"""Country names ↔ ISO 3166 alpha-2 codes in a text: `pycountry` plus common aliases, demonyms and a few region
groups ("EU", "Europe", "worldwide"), which are facts about the world, not about a shop."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from ask_engine.plaintext import normalize, word_set

__all__ = [
    "EU_MEMBERS",
    "country_aliases",
    "country_codes_in",
    "country_name",
    "group_members",
    "named_by_state_code",
    "region_named",
    "subdivisions",
    "without_excluded",
]

# Country names ISO's short names do not cover, and demonyms ("Canadian orders"): data, in lexicon/places.json.
_PLACES = json.loads((Path(__file__).with_name("lexicon") / "places.json").read_text(encoding="utf-8"))
_ALIASES: dict[str, str] = _PLACES["aliases"]
_DEMONYMS: dict[str, str] = _PLACES["demonyms"]
# Codes written in capitals that are also ordinary English words are not read as countries.
_CODE_WORDS = word_set("AM AN AS AT BE BY DO GO HE HI IF IN IS IT ME MY NO OF OK ON OR SO TO UP US WE ID PM AD AI CA")
_QUERY_CODE_OK = frozenset({"UK", "USA", "US", "UAE", "EU", "NZ"})

EU_MEMBERS = word_set("AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE")
_EUROPE = EU_MEMBERS | word_set("GB NO IS LI CH AL AD BA BY XK MD MC ME MK RU SM RS UA VA GI JE GG IM FO")
_GROUPS: dict[str, frozenset[str]] = {
    "eu": EU_MEMBERS,
    "european union": EU_MEMBERS,
    "eea": EU_MEMBERS | frozenset({"NO", "IS", "LI"}),
    "european economic area": EU_MEMBERS | frozenset({"NO", "IS", "LI"}),
    "europe": _EUROPE,
    "mainland europe": _EUROPE - {"GB", "IS", "IE", "MT", "CY", "JE", "GG", "IM", "FO"},
    "scandinavia": frozenset({"DK", "NO", "SE"}),
    "nordic countries": frozenset({"DK", "NO", "SE", "FI", "IS"}),
    "north america": frozenset({"US", "CA", "MX", "GL", "BM", "PM"}),
    "oceania": frozenset(
        {"AU", "NZ", "FJ", "PG", "SB", "VU", "WS", "TO", "KI", "TV", "NR", "PW", "FM", "MH", "NC", "PF"}
    ),
    "australasia": frozenset({"AU", "NZ", "PG"}),
    "channel islands": frozenset({"JE", "GG"}),
}
_WORLDWIDE = re.compile(
    r"\b(?:worldwide|world-wide|anywhere in the world|all over the world|all countries|every country|most countries|"
    r"internationally to all)\b"
    # "every country on our list", "all countries we ship to": the shop's own list, not the world
    r"(?!\s+(?:(?:on|in|from) (?:our|the|this|that) (?:list|table)|(?:we|you|listed|above|below|shown|mentioned)\b))",
    re.IGNORECASE,
)


@lru_cache(maxsize=1)
def _country_table() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(lower-case name → code, code → display name, alpha-3 → alpha-2) from pycountry plus the aliases."""
    import pycountry  # loaded on first use: 250 countries, only needed for shipping questions

    names: dict[str, str] = {**_ALIASES, **_DEMONYMS}
    display: dict[str, str] = {}
    alpha3: dict[str, str] = {}
    countries = list(pycountry.countries)
    for c in countries:
        alpha3[c.alpha_3] = code = c.alpha_2
        common = getattr(c, "common_name", None)
        display[code] = common or c.name
        for name in (c.name, common, getattr(c, "official_name", None)):
            if name:
                names.setdefault(name.lower(), code)
    # "Korea, Republic of" is also said "Korea": the part before the comma, unless another country took it
    for c in countries:
        if "," in c.name:
            head = c.name.split(",")[0].strip().lower()
            if len(head) > 3:
                names.setdefault(head, c.alpha_2)
    display.update({"GB": "the United Kingdom", "US": "the United States", "NL": "the Netherlands",
                    "CZ": "Czechia", "KR": "South Korea", "AE": "the United Arab Emirates", "PH": "the Philippines",
                    "TW": "Taiwan", "RU": "Russia", "VN": "Vietnam", "IR": "Iran", "SY": "Syria", "MD": "Moldova",
                    "BO": "Bolivia", "VE": "Venezuela", "TZ": "Tanzania", "LA": "Laos"})  # fmt: skip
    for alias, code in _ALIASES.items():
        display.setdefault(code, alias.title())
    return names, display, alpha3


@lru_cache(maxsize=1)
def _name_pattern() -> re.Pattern[str]:
    names, _, _ = _country_table()
    # Longest first, so "Northern Ireland" wins over "Ireland" and "Papua New Guinea" over "Guinea".
    alternatives = sorted(names, key=len, reverse=True)
    body = "|".join(re.escape(n) for n in alternatives)
    return re.compile(rf"(?<![\w-])(?:{body})(?![\w-])", re.IGNORECASE)


_CODE_RE = re.compile(r"(?<![\w-])([A-Z]{2,3})(?![\w-])")


@lru_cache(maxsize=1)
def _subdivision_names() -> dict[str, str]:
    """Lower-case name of a state or province → its country code (pycountry), for names of two or three words."""
    import pycountry

    return {sub.name.lower(): sub.country_code for sub in pycountry.subdivisions if 2 <= len(sub.name.split()) <= 3}


def _place_named(words: str) -> str | None:
    """The country of the state or province whose name `words` starts with ("British Columbia Canada" → CA)."""
    parts, table = words.split(), _subdivision_names()
    for size in (3, 2):
        hit = table.get(" ".join(parts[:size]).lower())
        if hit is not None:
            return hit
    return None


# the words saying a rule holds everywhere but the places after them ("Outside the EU …", "except Norway")
_EXCLUDING = r"\b(?:outside|beyond|except|excluding)(?: of)?"
_OUTSIDE = re.compile(rf"(?:{_EXCLUDING}(?: the)?\s+|\bnon-?)$", re.IGNORECASE)
# "Outside the EU, the island of Ireland and Great Britain we don't ship at all": the places after the words, up to the
# clause's subject or its end
_EXCLUDED_SPAN = re.compile(
    rf"{_EXCLUDING}\b[^.;:]*?(?=\b(?:we|you|our|orders?|parcels?|they|there)\b|[.;:]|$)", re.IGNORECASE
)


def without_excluded(text: str) -> str:
    """`text` without the places a rule is said not to hold for ("outside the EU, the island of Ireland …")."""
    return _EXCLUDED_SPAN.sub(" ", text)


@lru_cache(maxsize=1 << 15)  # a pure function of its text, asked of the same merchant passages request after request
def country_codes_in(text: str, *, query: bool = False) -> tuple[str, ...]:
    """ISO alpha-2 codes of the countries a text names (by name, alias or capitalised code), in order.

    In a question, capitalised codes that are also English words ("IT", "IN") are ignored, and lower-case "uk",
    "usa" are read as countries; in merchant text only names and unambiguous codes count.
    """
    names, _, alpha3 = _country_table()
    found: list[tuple[int, str]] = []
    norm = normalize(text)
    spans: list[tuple[int, int]] = []
    for m in _name_pattern().finditer(norm):
        word = m.group(0)
        # "us" as a pronoun, "in" etc. never reach here (not names); the aliases "uk"/"usa" in lower case only count
        # in questions, where shoppers type them that way.
        if word.islower() and word in {"uk", "usa", "uae", "u.k.", "u.s.", "u.s.a."} and not query:
            continue
        if word.lower() in ("america", "american") and re.search(
            r"(?:north|south|central|latin)\s+$", norm[: m.start()], re.I
        ):
            continue
        if word.lower() == "american" and re.match(r"\s+express\b", norm[m.end() :], re.I):
            continue  # the payment card, no place
        if re.match(r"\s+Post\b", norm[m.end() :]):
            continue  # a national postal carrier ("by Canada Post", "Australia Post", "Swiss Post"), no destination
        if word.islower() and re.match(
            r"\s+(?:the|a|an|my|your|our|their|his|her|its|it|them|this|these|those)\b", norm[m.end() :]
        ):
            continue  # a verb with its object ("i dont want to polish the holds"), no place
        code = names.get(word.lower())
        if code:
            # "British Columbia" is a province of Canada, not Britain; "New Mexico" a state of the US
            after = re.match(r"\s+((?:[A-Z][\w'-]+\s*){1,2})", norm[m.end() :])
            if after:
                place = _place_named(f"{word} {after.group(1)}".strip())
                if place is not None:
                    code = place
            found.append((m.start(), code))
            spans.append(m.span())
    caps_query = query and sum(c.isupper() for c in norm) > 0.6 * max(1, sum(c.isalpha() for c in norm))
    if not caps_query:
        for m in _CODE_RE.finditer(norm):
            if any(s <= m.start() < e for s, e in spans):
                continue
            token = m.group(1)
            if query and _MODEL_BEFORE.search(norm[: m.start()]):
                continue  # "the GP5000 S TR", "the older GP5000 TL": the end of a model's name, no place
            if token in _CODE_WORDS and not (query and token in _QUERY_CODE_OK) and not _us_in_prose(norm, m):
                continue
            if token == "EU":
                continue  # a group, handled by group_members
            code = alpha3.get(token) if len(token) == 3 else (token if token in _display_codes() else None)
            if token in {"UK", "USA", "UAE"}:
                code = names.get(token.lower())
            if code:
                found.append((m.start(), code))
    return tuple(dict.fromkeys(code for _, code in sorted(found)))


_NEIGHBOUR = re.compile(r"[^\W\d_]+")
# a word with a figure in it, or a capital letter standing alone, right before a code: a model's name goes on
_MODEL_BEFORE = re.compile(r"(?:\b[A-Za-z]*\d[\w-]*|\b[A-Z])\s+$")


def _us_in_prose(text: str, m: re.Match[str]) -> bool:
    """ "US" in mixed-case merchant prose ("US shipping rates", "the contiguous US") is the country; in capitals
    ("CONTACT US") it is the pronoun. It counts when a word beside it is not in capitals."""
    if m.group(1) != "US":
        return False
    before = _NEIGHBOUR.findall(text[max(0, m.start() - 40) : m.start()])[-1:]
    after = _NEIGHBOUR.findall(text[m.end() : m.end() + 40])[:1]
    beside = before + after
    return bool(beside) and not any(w.isupper() for w in beside)


def named_by_state_code(query: str, code: str) -> bool:
    """True when a question names the country `code` only by a capitalised code that is also a state's, province's
    or territory's ("LA": Laos, or Louisiana, or Los Angeles; "PA": Panama or Pennsylvania), not by a name."""
    norm = normalize(query)
    if any(names_code == code for names_code in _names_in(norm)):
        return False
    tokens = [m.group(1) for m in _CODE_RE.finditer(norm)]
    return any(t == code and t in _state_codes() and t not in _QUERY_CODE_OK for t in tokens)


def _names_in(norm: str) -> list[str]:
    names = _country_table()[0]
    return [names[m.group(0).lower()] for m in _name_pattern().finditer(norm) if m.group(0).lower() in names]


@lru_cache(maxsize=1)
def _state_codes() -> frozenset[str]:
    """The short codes of the states, provinces and territories of the countries whose addresses write them that
    way (the US, Canada, Australia): a shopper's "LA" or "WA" names one of those, or a city, not a country."""
    import pycountry

    return frozenset(
        sub.code.split("-", 1)[1]
        for sub in pycountry.subdivisions
        if sub.country_code in ("US", "CA", "AU") and sub.code.split("-", 1)[1].isalpha()
    )


@lru_cache(maxsize=1)
def _display_codes() -> frozenset[str]:
    return frozenset(_country_table()[1])


def country_name(code: str) -> str:
    """A readable name for an ISO alpha-2 code ("GB" → "the United Kingdom"); the code itself when unknown."""
    return _country_table()[1].get(code.upper(), code.upper())


def country_aliases(code: str) -> tuple[str, ...]:
    """Every name the table knows for a code (lower case)."""
    return tuple(n for n, c in _country_table()[0].items() if c == code)


def group_members(text: str) -> dict[str, frozenset[str]]:
    """Region groups a text names ("EU countries", "Europe", "worldwide") → the ISO codes they contain."""
    return dict(_group_members(text))


@lru_cache(maxsize=1 << 15)  # a pure function of its text, asked of the same shipping sentences request after request
def _group_members(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    out: dict[str, frozenset[str]] = {}
    norm = normalize(text)
    for name, members in _GROUPS.items():
        flags = 0 if name == "eu" or name == "eea" else re.IGNORECASE
        pattern = name.upper() if flags == 0 else re.escape(name)
        found = re.finditer(rf"(?<![\w-]){pattern}(?![\w-])", norm, flags)
        # "Outside the EU … we don't ship", "non-EU countries": the countries outside the group, not its members
        if any(not _OUTSIDE.search(norm[: m.start()]) for m in found):
            out[name] = members
    if _WORLDWIDE.search(norm):
        out["worldwide"] = frozenset(_country_table()[1])
    return tuple(out.items())


@lru_cache(maxsize=1)
def subdivisions() -> dict[str, tuple[str, str]]:
    """Lower-case state/province name → (country code, display name), for names unique worldwide and of the kinds a
    delivery zone names (states, provinces, territories)."""
    import pycountry  # loaded on first use, only for shipping questions

    seen: dict[str, tuple[str, str]] = {}
    clashes: set[str] = set()
    for sub in pycountry.subdivisions:
        if sub.type not in {"State", "Province", "Territory", "Outlying area", "District", "Region"}:
            continue
        name = sub.name.lower()
        if name in seen and seen[name][0] != sub.country_code:
            clashes.add(name)
        seen[name] = (sub.country_code, sub.name)
    return {k: v for k, v in seen.items() if k not in clashes and len(k) > 3}


def region_named(text: str) -> tuple[str, str] | None:
    """(country code, name) of a state or province the question names ("Do you ship to Alaska?")."""
    words = re.findall(r"[a-z][a-z.'-]*", text.lower())
    table = subdivisions()
    for size in (3, 2, 1):
        for i in range(len(words) - size + 1):
            hit = table.get(" ".join(words[i : i + size]))
            if hit is not None:
                return hit
    return None


def elsewhere_only(text: str, code: str) -> bool:
    """`text` (a section's heading) names countries, none of them `code` nor a group holding it, and neither limits
    nor bars: its lines are their rule ("Australia" over "We ship parcels only to Australia – no kayaks", asked about
    Wellington); "Items we can only send within Ireland" holds for everywhere it leaves out."""
    if _LIMITING.search(text):
        return False
    codes = country_codes_in(text)
    return bool(codes) and code not in codes and not any(code in m for m in group_members(text).values())


_LIMITING = re.compile(r"\b(?:only|not|no|cannot|can't|can ?not|except|excluding|outside|restrict\w*)\b", re.IGNORECASE)
