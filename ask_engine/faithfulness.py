"""Faithfulness scoring: is each answer sentence supported by the evidence? One implementation for eval and guard.

A sentence is *supported* when (1) its content words are found in one evidence sentence (or the union of the two
best), or it is semantically close to one with most of its words found; (2) every hard token in it (number, price,
duration, percentage, size/unit, SKU or model code, allergen term) appears somewhere in the evidence; (3) it does not
negate what its best evidence sentence affirms, or affirm what it negates; (4) every capitalised name in it (product,
place, carrier) appears in the evidence. Sentences that only say what the shop has not recorded, or other fixed
phrases about the answer itself, are not claims. The definition and the calibration figures are in eval/README.md.

`python -m ask_engine.faithfulness --calibrate eval/calibration.jsonl` measures the scorer on the labelled set.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from ask_engine.protocols import Embedder
    from ask_engine.types import Passage

SentenceKind = Literal["claim", "refusal", "meta"]

# Chosen from eval/calibration.jsonl (`--calibrate --grid`, eval/README.md). 0.6 scored 0.3 points more accuracy there,
# but the set's corruptions are mostly caught by the hard checks; 0.7 keeps the lexical bar higher for the vaguer
# claims an LLM adds ("ideal for winter mountaineering"), at the same precision and recall within one pair.
DEFAULT_MIN_PRECISION = 0.7
DEFAULT_MIN_SIMILARITY = 0.80
# A semantically close sentence may be a paraphrase with fewer shared words, but never one sharing fewer than this.
DEFAULT_PARAPHRASE_PRECISION = 0.5
# Without an embedder, precision alone decides.
UNION_TOP = 2

# --------------------------------------------------------------------------------------------------
# Sentence splitting
# --------------------------------------------------------------------------------------------------


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ABBREVIATIONS = _word_set(
    "e.g i.e etc approx incl excl vs mr mrs ms dr st ltd co inc fig max min dept est jr sr ave rd nb cf viz "
    "no nos tel mt ft sq pp"
)
# "No." is an abbreviation only before a number ("No. 5"); elsewhere it is the answer "No."
_ABBREV_NEEDS_DIGIT = frozenset({"no", "nos", "tel", "pp"})
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9£$€*_])")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_TERMINAL = re.compile(r"[.!?:;]['\"”’)\]*_]*$")


def _lines(text: str) -> list[tuple[str, bool]]:
    """Logical lines and whether each is a list item: list items, headings and table rows stay separate; wrapped
    prose lines (the next one starting in lower case) are joined."""
    out: list[tuple[str, bool]] = []
    blank = True
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.strip()
        if not line or _TABLE_RULE.match(line):
            blank = True
            continue
        is_item = bool(_LIST_MARKER.match(line))
        structural = is_item or bool(_HEADING.match(line)) or line.startswith("|")
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            line = "; ".join(c for c in cells if c)
        line = _HEADING.sub("", _LIST_MARKER.sub("", line))
        if out and not blank and not structural and not _TERMINAL.search(out[-1][0]) and line[:1].islower():
            out[-1] = (f"{out[-1][0]} {line}", out[-1][1])
        else:
            out.append((line, is_item))
        blank = False
    return out


def _line_units(text: str) -> list[str]:
    return [line for line, _ in _lines(text)]


def _split_line(line: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(line):
        candidate = line[start : match.start()].strip()
        last = re.findall(r"([A-Za-z][A-Za-z.]*)\.?[\"'”’)\]]*$", candidate)
        word = last[0].rstrip(".").lower() if last else ""
        nxt = line[match.end() : match.end() + 1]
        if word in _ABBREVIATIONS and (word not in _ABBREV_NEEDS_DIGIT or nxt.isdigit()):
            continue
        if re.search(r"(?:^|\s)[A-Z]\.$", candidate):  # an initial: "J. Smith"
            continue
        if candidate:
            parts.append(candidate)
        start = match.end()
    tail = line[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`: list items, headings, table rows and `Label: value` lines are sentences of their own.

    Abbreviations ("e.g.", "approx."), decimals and prices ("£3.95"), initials, URLs and e-mail addresses do not end
    a sentence. List markers, heading marks and table pipes are removed; inline text is kept as written.
    """
    sentences: list[str] = []
    for line in _line_units(text):
        sentences.extend(s for s in _split_line(line) if re.search(r"[A-Za-z0-9]", s))
    return sentences


# --------------------------------------------------------------------------------------------------
# Hard tokens: numbers, prices, durations, percentages, units, codes, allergens
# --------------------------------------------------------------------------------------------------

_NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "fourteen": "14",
    "fifteen": "15",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "ninety": "90",
    "hundred": "100",
}

# unit spelling -> canonical unit; longest spellings are tried first.
_UNITS: dict[str, str] = {
    "working days": "working day",
    "working day": "working day",
    "business days": "working day",
    "business day": "working day",
    "days": "day",
    "day": "day",
    "weeks": "week",
    "week": "week",
    "months": "month",
    "month": "month",
    "years": "year",
    "year": "year",
    "yrs": "year",
    "yr": "year",
    "hours": "hour",
    "hour": "hour",
    "hrs": "hour",
    "hr": "hour",
    "minutes": "minute",
    "minute": "minute",
    "mins": "minute",
    "min": "minute",
    "seconds": "second",
    "second": "second",
    "g/m²": "g/m2",
    "g/m2": "g/m2",
    "gsm": "g/m2",
    "kilograms": "kg",
    "kilogram": "kg",
    "kilos": "kg",
    "kg": "kg",
    "milligrams": "mg",
    "mg": "mg",
    "grams": "g",
    "gram": "g",
    "g": "g",
    "ounces": "oz",
    "oz": "oz",
    "pounds weight": "lb",
    "lbs": "lb",
    "lb": "lb",
    "millimetres": "mm",
    "millimeters": "mm",
    "mm": "mm",
    "centimetres": "cm",
    "centimeters": "cm",
    "cm": "cm",
    "kilometres": "km",
    "kilometers": "km",
    "km": "km",
    "metres": "m",
    "meters": "m",
    "metre": "m",
    "meter": "m",
    "m": "m",
    "inches": "in",
    "inch": "in",
    "millilitres": "ml",
    "milliliters": "ml",
    "ml": "ml",
    "litres": "l",
    "liters": "l",
    "litre": "l",
    "liter": "l",
    "l": "l",
    "°c": "°c",
    "° c": "°c",
    "degrees c": "°c",
    "degrees celsius": "°c",
    "°f": "°f",
    "%": "%",
    "percent": "%",
    "per cent": "%",
    "kcal": "kcal",
    "calories": "kcal",
    "lumens": "lm",
    "lumen": "lm",
    "watts": "w",
    "w": "w",
    "mah": "mah",
    "person": "person",
    "people": "person",
    "pairs": "pair",
    "pair": "pair",
}
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_NUM = r"\d[\d,]*(?:\.\d+)?|\.\d+"
_CURRENCY = {"£": "£", "$": "$", "€": "€", "gbp": "£", "usd": "$", "eur": "€"}
_NUMBER_RE = re.compile(
    rf"(?P<cur>[£$€])?\s?(?P<sign>(?<![\w.])-)?(?P<num>{_NUM})"
    rf"(?:\s?-\s?(?P<num2>{_NUM}))?"
    rf"(?:(?:\s|-)?(?P<unit>{_UNIT_ALT})(?![a-z0-9])|\s?(?P<tcur>gbp|usd|eur)\b|(?P<inch>\s?in(?=\))))?",
    re.IGNORECASE,
)
_TIME_RE = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s?([ap])\.?m\.?(?![a-z])", re.IGNORECASE)
_SKU_RE = re.compile(r"(?<![\w-])(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{1,12}(?:-[A-Z0-9]{1,12})+(?![\w-])")
_CODE_RE = re.compile(r"(?<![\w-])[A-Z]{2,}\d+[A-Z0-9]*(?![\w-])")
_RANGE_WORDS = re.compile(rf"(?<![\w.])(?:from\s+|between\s+)?({_NUM})\s*(?:to|and|–|—|-)\s*({_NUM})(?![\w.])")

_ALLERGENS: dict[str, str] = {
    "tree nuts": "tree nut",
    "tree nut": "tree nut",
    "tree-nut": "tree nut",
    "brazil nuts": "brazil nut",
    "brazil nut": "brazil nut",
    "peanuts": "peanut",
    "peanut": "peanut",
    "groundnuts": "peanut",
    "nuts": "nut",
    "nut": "nut",
    "almonds": "almond",
    "almond": "almond",
    "hazelnuts": "hazelnut",
    "hazelnut": "hazelnut",
    "cashews": "cashew",
    "cashew": "cashew",
    "walnuts": "walnut",
    "walnut": "walnut",
    "pecans": "pecan",
    "pecan": "pecan",
    "pistachios": "pistachio",
    "pistachio": "pistachio",
    "macadamias": "macadamia",
    "macadamia": "macadamia",
    "milk": "milk",
    "dairy": "milk",
    "lactose": "lactose",
    "eggs": "egg",
    "egg": "egg",
    "fish": "fish",
    "crustaceans": "crustacean",
    "crustacean": "crustacean",
    "shellfish": "shellfish",
    "molluscs": "mollusc",
    "mollusc": "mollusc",
    "mollusks": "mollusc",
    "soybeans": "soy",
    "soya": "soy",
    "soy": "soy",
    "gluten": "gluten",
    "wheat": "wheat",
    "barley": "barley",
    "rye": "rye",
    "oats": "oat",
    "oat": "oat",
    "sesame": "sesame",
    "mustard": "mustard",
    "celery": "celery",
    "celeriac": "celery",
    "lupin": "lupin",
    "lupine": "lupin",
    "sulphites": "sulphite",
    "sulphite": "sulphite",
    "sulfites": "sulphite",
    "sulfite": "sulphite",
    "sulphur dioxide": "sulphite",
    "sulfur dioxide": "sulphite",
}
_ALLERGEN_RE = re.compile(
    r"(?<![a-z])(" + "|".join(re.escape(a) for a in sorted(_ALLERGENS, key=len, reverse=True)) + r")(?![a-z])"
)
_NUMWORD_RE = re.compile(
    r"\b(" + "|".join(_NUMBER_WORDS) + r")(?=[\s-]+(?:" + _UNIT_ALT + r")(?![a-z]))", re.IGNORECASE
)


def _normalise_text(text: str) -> str:
    text = (
        text.replace("\u2212", "-")
        .replace("\u2011", "-")
        .replace("\u00a0", " ")
        .replace("\u202f", " ")
        .replace("\u2009", " ")
        .replace("’", "'")
        .replace("‘", "'")
    )
    text = re.sub(r"(?<=\d)\s*[–—]\s*(?=\d)", "-", text)
    return _NUMWORD_RE.sub(lambda m: _NUMBER_WORDS[m.group(1).lower()], text)


def _num(raw: str) -> str:
    """Canonical number: no thousands separators, no trailing decimal zeros ("1,240" → "1240", "89.00" → "89")."""
    value = raw.replace(",", "")
    if value.startswith("."):
        value = "0" + value
    if "." in value:
        value = value.rstrip("0").rstrip(".")
    return value or "0"


@dataclass(frozen=True)
class _Hard:
    """One hard token: `text` is its canonical form, `number` the bare number (or range) it carries, if any."""

    text: str
    number: str | None = None
    currency: str | None = None
    unit: str | None = None


def _hard_items(text: str) -> list[_Hard]:
    text = _normalise_text(text)
    items: list[_Hard] = []
    consumed: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in consumed)

    for m in _SKU_RE.finditer(text):
        if re.fullmatch(r"[\d-]+", m.group(0)):
            continue
        items.append(_Hard(m.group(0).lower()))
        consumed.append(m.span())
    for m in _CODE_RE.finditer(text):
        if free(*m.span()):
            items.append(_Hard(m.group(0).lower()))
            consumed.append(m.span())
    for m in _TIME_RE.finditer(text):
        if not free(*m.span()):
            continue
        hour, minute, half = m.group(1), m.group(2), m.group(3).lower()
        clock = f"{int(hour)}{':' + minute if minute and minute != '00' else ''}{half}m"
        items.append(_Hard(clock))
        consumed.append(m.span())
    # "3 to 5 working days" / "between 3 and 5" → "3-5"
    text = _RANGE_WORDS.sub(
        lambda m: f"{m.group(1)}-{m.group(2)}" if free(*m.span()) else m.group(0),
        text,
    )
    for m in _NUMBER_RE.finditer(text):
        if not free(*m.span()) or not m.group("num"):
            continue
        # a digit glued to letters on the left is part of a word or code ("FF-KIRK2", "x2")
        if m.start("num") > 0 and text[m.start("num") - 1].isalpha() and not m.group("cur"):
            continue
        number = ("-" if m.group("sign") else "") + _num(m.group("num"))
        if m.group("num2"):
            number = f"{number}-{_num(m.group('num2'))}"
        currency = m.group("cur") or (_CURRENCY.get(m.group("tcur").lower()) if m.group("tcur") else None)
        unit = _UNITS.get(m.group("unit").lower().replace("  ", " ")) if m.group("unit") else None
        if m.group("inch"):
            unit = "in"
        if currency:
            items.append(_Hard(f"{currency}{number}", number, currency=currency))
        elif unit:
            items.append(_Hard(f"{number} {unit}", number, unit=unit))
        else:
            items.append(_Hard(number, number))
    for m in _ALLERGEN_RE.finditer(text.lower()):
        items.append(_Hard(_ALLERGENS[m.group(1)]))
    return items


def hard_tokens(text: str) -> set[str]:
    """The facts that must match exactly: numbers ("20,000" → "20000"), prices ("£3.95"), durations ("30 day",
    "3-5 working day"), percentages ("20 %"), sizes and units ("640 g", "10000 mm"), times ("2pm"), SKUs and model
    codes ("ff-tarn-blk-42", "ipx6") and allergen terms ("peanut", "tree nut", "soy"), in canonical form.
    """
    return {h.text for h in _hard_items(text)}


class _EvidenceHard:
    """The hard tokens of all evidence, indexed for the matching rules of `_hard_supported`."""

    def __init__(self, items: Iterable[_Hard]) -> None:
        self.texts: set[str] = set()
        self.numbers: set[str] = set()
        self.currencies: dict[str, set[str]] = {}
        for h in items:
            self.texts.add(h.text)
            if h.text.endswith(" nut"):  # "tree nuts" in the evidence supports "nuts" in an answer
                self.texts.add("nut")
            if h.number is not None:
                parts = {h.number, *h.number.lstrip("-").split("-")} if "-" in h.number[1:] else {h.number}
                self.numbers |= parts
                if h.currency:
                    self.currencies.setdefault(h.number, set()).add(h.currency)

    def supports(self, h: _Hard) -> bool:
        if h.text in self.texts:
            return True
        if h.unit is not None:
            return False  # "30 day" needs "30 day", never "30 week" nor a bare 30
        if h.currency is not None:
            # "£89" is supported by a bare "89.00" price field, unless that number is in another currency
            return h.number in self.numbers and not self.currencies.get(h.number or "")
        return h.number is not None and h.number in self.numbers


# --------------------------------------------------------------------------------------------------
# Content words
# --------------------------------------------------------------------------------------------------

_STOPWORDS = _word_set(
    """
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
either else ever every few for from further get gets got had hadn't has hasn't have haven't having he her here
hers herself him himself his how however i i'd i'll i'm i've if in into is isn't it it's its itself just let's
may me might more most much must mustn't my myself need needs neither nor of off on once one only or other ought
our ours ourselves out over own per please quite rather really same shall shan't she should shouldn't so some
such than that that's the their theirs them themselves then there there's these they they'd they'll they're
they've this those though through thus to too under until up upon us very via was wasn't we we'd we'll we're
we've were weren't what what's when where whether which while who whom whose why will with within without won't
would wouldn't yes yet you you'd you'll you're you've your yours yourself yourselves sure certainly absolutely
unfortunately sadly whoever whatever whichever great good happy glad help note noted currently available there's it's sorry thanks
thank hi hello okay ok shop
"""
)
# Negation cues keep their meaning in the negation check but are not content words.
_NEGATION_WORDS = _word_set(
    "not no never none nothing neither nor without cannot can't don't doesn't didn't isn't aren't wasn't weren't "
    "won't wouldn't shouldn't couldn't hasn't haven't hadn't mustn't needn't unable false"
)
_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A light, deterministic English stemmer: plural, -ing, -ed, -able/-ible, -ly, final -e.

    Both sides of every comparison go through it, so consistency matters more than linguistic accuracy.
    """
    w = word
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "able", "ible", "ly", "al"):
        if w.endswith(suffix) and len(w) - len(suffix) >= (4 if suffix == "al" else 3):
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":  # shipped → ship
                w = w[:-1]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def _words(text: str) -> list[str]:
    text = re.sub(r"\b(\d{1,2}):00\s?([ap])\.?m\b\.?", r"\1\2m", _normalise_text(text).lower())
    return _WORD_RE.findall(text)


def content_words(text: str) -> set[str]:
    """Lower-case stems of the words that carry meaning (stopwords and negation cues removed; numbers kept)."""
    return {_stem(w) for w in _words(text) if w not in _STOPWORDS and w not in _NEGATION_WORDS}


def passage_subject(passage: Passage) -> str:
    """What a passage is about for `attributable`: the product's title for a product's passage, else ""."""
    return passage.title if passage.kind == "product" else ""


def attributable(sentence: str, subjects: Sequence[str]) -> list[int]:
    """Indices of the passages `sentence` may draw on, given each passage's subject (a product title, or "").

    A product whose title the sentence only partly names, while it names more of another's ("the men's Fellrunner"
    against "Fellrunner Trail Shoe - Women's" and "Fellrunner Trail Shoe - Men's"), is not what the sentence is
    about: its passages are left out. Products the sentence does not name at all stay (a sentence need not repeat
    its product's name), as do the non-product passages.
    """
    everything = list(range(len(subjects)))
    titles = {t for t in subjects if t}
    if len(titles) < 2:
        return everything
    words = content_words(sentence)
    matched = {t: words & content_words(t) for t in titles}
    outranked = {t for t, m in matched.items() if m and any(m < other for o, other in matched.items() if o != t)}
    if not outranked:
        return everything
    return [i for i, subject in enumerate(subjects) if subject not in outranked]


def _attributable(sentence: str, evidence: Sequence[str], subjects: Sequence[str] | None) -> list[str]:
    if not subjects or len(subjects) != len(evidence):
        return list(evidence)
    return [evidence[i] for i in attributable(sentence, subjects)]


# --------------------------------------------------------------------------------------------------
# Negation and entities
# --------------------------------------------------------------------------------------------------

_SCOPE_END = re.compile(
    r"[,.;:!?()\[\]—]|\b(?:but|however|while|whereas|though|and|or|so|because|if|when|which|unless|until)\b"
)
_AFFIX_NEGATION = re.compile(r"\bnon-([a-z]+)|\b([a-z]+)-free\b")
_LABEL_NEGATIVE = re.compile(r"^\s*([^:]{1,60}):\s*(?:no|false|none|not recorded|n/a)\s*\.?\s*$", re.IGNORECASE)
_SCOPE_WORDS = 4


def _negation_scopes(sentence: str) -> list[set[str]]:
    """For each negation in `sentence`, the content-word stems it governs (up to the next clause boundary)."""
    text = _normalise_text(sentence).lower()
    scopes: list[set[str]] = []
    label = _LABEL_NEGATIVE.match(text)
    if label:
        scopes.append(content_words(label.group(1)))
    for m in _AFFIX_NEGATION.finditer(text):
        word = m.group(1) or m.group(2)
        # "free delivery" is not a negation, "PFC-free" is; "carefree" never matches the hyphenated pattern
        scopes.append({_stem(word)})
    for m in re.finditer(r"[a-z0-9]+(?:'[a-z]+)?", text):
        token = m.group(0)
        if token not in _NEGATION_WORDS or token == "false":
            continue
        rest = text[m.end() :]
        end = _SCOPE_END.search(rest)
        window = rest[: end.start()] if end else rest
        words = [_stem(w) for w in _WORD_RE.findall(window) if w not in _STOPWORDS and w not in _NEGATION_WORDS]
        if words:
            scopes.append(set(words[:_SCOPE_WORDS]))
    return scopes


_CAPITALISED = re.compile(r"(?<![\w'’-])([A-Z][A-Za-z'’]*(?:-[A-Za-z]+)*)")
_SENTENCE_START = re.compile(r"(?:^|[;.!?]\s+|[\"“(\[]\s*|—\s*|-\s+)$")


def _entities(sentence: str, known: frozenset[str] = frozenset()) -> set[str]:
    """Capitalised words that name something, lower-cased (SKUs and model codes are hard tokens instead).

    A capitalised word at the start of a sentence or clause counts when it starts a multi-word name ("Fort
    William") or is one of the `known` names of the evidence ("Mastercard refunds ..."); "Returns are free" names
    nothing.
    """
    text = _CODE_RE.sub(" ", _SKU_RE.sub(" ", _normalise_text(sentence)))
    found: set[str] = set()
    matches = list(_CAPITALISED.finditer(text))
    for i, m in enumerate(matches):
        lowered = re.sub(r"'s$|'$", "", m.group(1).lower())
        if lowered in _STOPWORDS or lowered in _NEGATION_WORDS or len(lowered) < 2:
            continue
        if _SENTENCE_START.search(text[: m.start()]):
            nxt = matches[i + 1] if i + 1 < len(matches) else None
            multiword = nxt is not None and nxt.start() == m.end() + 1
            if not multiword and lowered not in known:
                continue
        for part in lowered.split("-"):
            if part and part not in _STOPWORDS:
                found.add(part)
    return found


# --------------------------------------------------------------------------------------------------
# Refusals and meta sentences
# --------------------------------------------------------------------------------------------------

_REFUSAL_PATTERNS = [
    r"\b(?:has|have|had)\s*(?:not|n't)\s+(?:been\s+)?recorded\b",
    r"\bnot (?:been )?recorded\b",
    r"\bno (?:recorded )?(?:information|details?|record|data)\b(?! (?:is|are) (?:collected|stored|shared|sold))",
    r"\b(?:do|does|did)\s*(?:not|n't)\s+(?:have|hold|list|mention|say|state|specify|include)\b[^.]*"
    r"\b(?:information|details?|record|data|whether|if|how|what|which)\b",
    r"\b(?:could|can|couldn't|can't)\s*(?:not)?\s*find\b",
    r"\bcannot find\b",
    r"\bunable to (?:find|answer|say|confirm|tell)\b",
    r"\b(?:not|n't) able to (?:find|answer|say|confirm|tell)\b",
    r"\b(?:is|are|'s)\s*(?:not|n't) available right now\b",
    r"\b(?:isn't|aren't) available right now\b",
    r"\b(?:can(?:not|'t)|can not) (?:answer|help with that|say|confirm)\b",
    r"\bdon't know\b|\bdo not know\b",
    r"\bnot (?:listed|mentioned|specified|stated) (?:in|on|by|anywhere)\b",
    r"\b(?:isn't|aren't|is not|are not) (?:listed|mentioned|specified|stated) (?:in|on|by|anywhere)\b",
    r"\bno (?:answer|match(?:ing)?|results?)\b",
]
_META_PATTERNS = [
    r"\bnothing (?:was|has been|is|has|will be) (?:changed|done|updated|added|removed|cancel+ed|placed)\b",
    r"\bno changes? (?:was|were|has been|have been|will be) made\b",
    r"\b(?:i|we) (?:can(?:not|'t)|can not|am not able to|'m not able to|am unable to|'m unable to|do not|don't)\s+"
    r"(?:make|change|add|remove|place|cancel|update|apply|process|modify|book|edit|create|complete|issue|start)\b",
    r"\bread-only\b",
    r"\b(?:ask|send) (?:me |us )?(?:a |your )?question\b",
    r"\bwhat would you like to know\b",
    r"\b(?:i|we) can (?:only )?(?:help|answer)\b",
    r"\bhow can (?:i|we) help\b",
]
_REFUSAL_RE = re.compile("|".join(_REFUSAL_PATTERNS), re.IGNORECASE)
_META_RE = re.compile("|".join(_META_PATTERNS), re.IGNORECASE)


def classify(sentence: str) -> SentenceKind:
    """'refusal' (says the shop has no answer), 'meta' (a fixed phrase about the answer itself) or 'claim'."""
    text = _normalise_text(sentence)
    if _REFUSAL_RE.search(text):
        return "refusal"
    if _META_RE.search(text):
        return "meta"
    return "claim"


# --------------------------------------------------------------------------------------------------
# Scorer
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SentenceSupport:
    sentence: str
    supported: bool
    best_evidence: str | None
    evidence_index: int | None  # index of the evidence item (passage or sentence) the best sentence came from
    precision: float  # share of the sentence's content words found in the best evidence sentence (or top-2 union)
    similarity: float  # embedding cosine to the best evidence sentence (0.0 without an embedder)
    missing_tokens: tuple[str, ...]  # hard tokens and names not found in the evidence, and "negation" when flipped
    kind: SentenceKind


@dataclass(frozen=True)
class FaithfulnessResult:
    score: float  # supported claim sentences / claim sentences (1.0 when there are no claims)
    sentences: tuple[SentenceSupport, ...]
    refusal: bool  # the answer makes no claim and at least one sentence says the shop has no answer

    @property
    def claims(self) -> tuple[SentenceSupport, ...]:
        return tuple(s for s in self.sentences if s.kind == "claim")

    @property
    def abstains(self) -> bool:
        """At least one sentence says the shop has not recorded / cannot find what was asked."""
        return any(s.kind == "refusal" for s in self.sentences)

    @property
    def unsupported(self) -> tuple[SentenceSupport, ...]:
        return tuple(s for s in self.sentences if s.kind == "claim" and not s.supported)


@dataclass(frozen=True)
class _Unit:
    text: str  # the evidence sentence (a list item carries its lead-in)
    source: int  # index of the evidence item it came from
    words: frozenset[str]  # its content words plus those of its passage's title line
    own: frozenset[str]  # its own content words
    title: frozenset[str]  # the content words of its passage's title line (and FAQ question)
    embed_text: str  # what is embedded: title line + sentence
    title_text: str = ""


@dataclass(frozen=True)
class _Source:
    """One evidence item: its words, names and hard tokens."""

    text: str
    words: frozenset[str]  # stems of every word, for the name check
    hard_items: tuple[_Hard, ...]


class _Prepared:
    """Evidence split into sentence units, with words, hard tokens, names and (lazily) embeddings.

    The first line of a multi-line evidence item is its title ("Skiddaw 3L Waterproof Jacket - Men's by ...",
    "Refund Policy — Sale items."); its words count for every sentence of the item, since a fact line such as
    "Waterproof: yes." is about the titled product. Questions (an FAQ entry's question) count the same way.
    After a lead-in line ending in ":" ("we cannot accept returns of:"), the first sentence of each following
    line is read together with the lead-in.
    """

    def __init__(self, evidence: Sequence[str]) -> None:
        units: list[_Unit] = []
        sources: list[_Source] = []
        every: list[_Hard] = []
        for index, item in enumerate(evidence):
            lines = _lines(item)
            sentences: list[tuple[str, str | None]] = []  # (sentence, lead-in)
            lead: str | None = None
            for line, _ in lines:
                parts = [s for s in _split_line(line) if re.search(r"[A-Za-z0-9]", s)]
                for n, sentence in enumerate(parts):
                    sentences.append((sentence, lead if n == 0 else None))
                if parts and parts[-1].rstrip().endswith(":"):
                    lead = parts[-1].strip()
            title_parts: list[str] = []
            body = sentences
            if len(sentences) > 1 and len(lines) > 1:
                title_parts.append(sentences[0][0])
                body = sentences[1:]
            title_parts += [s for s, _ in body if s.rstrip().endswith("?")]
            body = [b for b in body if not b[0].rstrip().endswith("?")] or body
            title = " ".join(title_parts)
            title_words = frozenset(content_words(title))
            for sentence, lead_in in body:
                text = f"{lead_in} {sentence}" if lead_in else sentence
                own = frozenset(content_words(text))
                units.append(_Unit(text, index, own | title_words, own, title_words, f"{title} {text}".strip(), title))
            hard = _hard_items(item)
            every.extend(hard)
            names = {_stem(part) for w in _words(item) for part in (w, w.replace("'s", ""))}
            sources.append(_Source(item, frozenset(names), tuple(hard)))
        self.units = units
        self.sources = sources
        self.hard = _EvidenceHard(every)
        # Names the evidence writes capitalised mid-sentence and never in lower case ("Mastercard", "China"):
        # such a word is a name even at the start of an answer sentence.
        lower: set[str] = set()
        capitalised: set[str] = set()
        for item in evidence:
            text = _normalise_text(item)
            lower.update(re.findall(r"(?<![\w'-])[a-z][a-z'-]*", text))
            for sentence in split_sentences(text):
                capitalised |= _entities(_SKU_RE.sub(" ", sentence))
        self.known_names = frozenset(capitalised - lower)
        self.vectors: np.ndarray[Any, np.dtype[np.float32]] | None = None


def _same_kind(a: _Hard, b: _Hard) -> bool:
    return a.number is not None and b.number is not None and a.unit == b.unit and a.currency == b.currency


_CLAUSE_SPLIT = re.compile(
    r";\s+|,\s+(?=(?:and|but|plus|so|while|although|though|whereas|which)\b)"
    r"|\s+(?=and (?:it|it's|they|they're|we|we'll|you|you'll|the|this|these|there|its|their|our|your|delivery)\b)",
    re.IGNORECASE,
)


def _clauses(sentence: str) -> list[str]:
    """The clauses of a sentence that each state something ("..., and it comes with a lifetime warranty")."""
    return [c for c in _CLAUSE_SPLIT.split(sentence) if len(content_words(c)) >= 2]


def _negation_consistent(sentence: str, sentence_words: set[str], unit: _Unit, prepared: _Prepared) -> bool:
    """False when the sentence negates what its best evidence sentence states about the same words, or states
    what that sentence negates.

    When the negated words are only in the evidence sentence's title (an FAQ question such as "Can I rent
    equipment?"), a negation anywhere in that passage answers it ("No, we don't offer equipment rental.").
    """
    s_scopes = _negation_scopes(sentence)
    e_scopes = _negation_scopes(unit.text)
    for scope in s_scopes:
        if any(scope & e for e in e_scopes):
            continue
        if scope & unit.own:
            return False
        if scope & unit.title:
            context = prepared.sources[unit.source].text
            if not any(scope & c for line in split_sentences(context) for c in _negation_scopes(line)):
                return False
    for scope in e_scopes:
        shared = scope & sentence_words
        if shared and not any(shared & s for s in s_scopes):
            return False
    return True


class FaithfulnessScorer:
    """Scores answer sentences against evidence passages. Thread-safe; caches evidence sentence embeddings."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        min_precision: float = DEFAULT_MIN_PRECISION,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
        paraphrase_precision: float = DEFAULT_PARAPHRASE_PRECISION,
        cache_size: int = 8192,
    ) -> None:
        self.embedder = embedder
        self.min_precision = min_precision
        self.min_similarity = min_similarity
        self.paraphrase_precision = min(paraphrase_precision, min_precision)
        self._cache: OrderedDict[str, np.ndarray[Any, np.dtype[np.float32]]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    # -- embeddings ---------------------------------------------------------------------------------

    def _vectors(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        embedder = self.embedder
        assert embedder is not None
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        fresh: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}
        if missing:
            computed = embedder.embed_documents(missing)
            fresh = {t: np.asarray(v, dtype=np.float32) for t, v in zip(missing, computed, strict=True)}
            with self._lock:
                self._cache.update(fresh)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        rows = []
        with self._lock:
            for t in texts:
                vector = fresh.get(t)
                if vector is None:
                    vector = self._cache.get(t)
                    if vector is not None:
                        self._cache.move_to_end(t)
                rows.append(vector)
        for i, vector in enumerate(rows):
            if vector is None:  # evicted by a concurrent call between the two locked sections
                rows[i] = np.asarray(embedder.embed_documents([texts[i]])[0], dtype=np.float32)
        if not rows:
            return np.zeros((0, int(getattr(embedder, "dimension", 1))), dtype=np.float32)
        return np.vstack([r for r in rows if r is not None])

    def _prepare(self, evidence: Sequence[str]) -> _Prepared:
        prepared = _Prepared(evidence)
        if self.embedder is not None and prepared.units:
            prepared.vectors = self._vectors([u.embed_text for u in prepared.units])
        return prepared

    # -- public API ---------------------------------------------------------------------------------

    def is_refusal(self, sentence: str) -> bool:
        """True for sentences that are not claims: abstentions ("has not recorded", "couldn't find", "isn't
        available right now") and fixed phrases about the answer ("nothing was changed", "ask a question")."""
        return classify(sentence) != "claim"

    def support(self, sentence: str, evidence: Sequence[str]) -> SentenceSupport:
        """How well one sentence is supported by `evidence` (passages, split into sentences here, or sentences)."""
        return self._support(sentence, self._prepare(evidence))

    def score(self, answer: str, evidence: Sequence[str], subjects: Sequence[str] | None = None) -> FaithfulnessResult:
        """Score every sentence of `answer` against `evidence`; the score counts claim sentences only.

        `subjects`, one per passage (`passage_subject`), lets a sentence that names one product draw only on that
        product's passages and the non-product ones (`attributable`), as the grounding guard does.
        """
        return self.score_sentences(split_sentences(answer), evidence, subjects)

    def score_sentences(
        self, sentences: Sequence[str], evidence: Sequence[str], subjects: Sequence[str] | None = None
    ) -> FaithfulnessResult:
        """As `score`, for an answer already split into sentences (a generator's draft)."""
        prepared = self._prepare(evidence)
        if self.embedder is not None and sentences:
            self._vectors(list(sentences))  # one batch for all answer sentences
        results = tuple(
            self._support(s, prepared if len(own) == len(evidence) else self._prepare(own))
            for s in sentences
            for own in [_attributable(s, evidence, subjects)]
        )
        claims = [r for r in results if r.kind == "claim"]
        score = sum(r.supported for r in claims) / len(claims) if claims else 1.0
        refusal = not claims and any(r.kind == "refusal" for r in results)
        return FaithfulnessResult(score=score, sentences=results, refusal=refusal)

    # -- internals ----------------------------------------------------------------------------------

    def _support(self, sentence: str, prepared: _Prepared) -> SentenceSupport:
        kind = classify(sentence)
        words = content_words(sentence)
        hard = _hard_items(sentence)
        if kind != "claim" or not prepared.units:
            # Refusals and fixed phrases name what was asked about; only their numbers must be real.
            missing = tuple(dict.fromkeys(h.text for h in hard if not prepared.hard.supports(h)))
            supported = kind != "claim" and not missing
            if not prepared.units:
                return SentenceSupport(sentence, supported, None, None, 0.0, 0.0, missing, kind)

        units = prepared.units
        overlaps = [len(words & u.words) for u in units]
        denominator = max(len(words), 1)
        similarities = [0.0] * len(units)
        if prepared.vectors is not None:
            similarities = [float(x) for x in prepared.vectors @ self._vectors([sentence])[0]]
        ranked = sorted(
            range(len(units)), key=lambda i: (overlaps[i] / denominator + similarities[i], overlaps[i]), reverse=True
        )
        best = ranked[0]
        top_score = overlaps[best] / denominator + similarities[best]
        # Among equally good sentences (the same fact line of two products), prefer one the sentence agrees with.
        for i in ranked[1:8]:
            if overlaps[i] / denominator + similarities[i] < top_score - 1e-9:
                break
            if not _negation_consistent(sentence, words, units[best], prepared) and _negation_consistent(
                sentence, words, units[i], prepared
            ):
                best = i
                break
        similarity = similarities[best]
        support_units = [best]
        covered = set(words & units[best].words)
        # The one other sentence that covers most of what the best one leaves out (a claim may join two facts).
        # Numbers never pick it (a changed number must not pull in the passage that happens to contain it), and
        # a name alone picks it only when the name is that passage's title (a product named beside a policy).
        entities = {_stem(e) for e in _entities(sentence, prepared.known_names)}
        rest = {w for w in words - covered if not any(c.isdigit() for c in w)}
        if rest and UNION_TOP > 1:

            def gain(i: int) -> int:
                got = rest & units[i].words
                return len(got) if got - entities or got & units[i].title else 0

            cover = max(range(len(units)), key=lambda i: (gain(i), similarities[i]))
            if gain(cover):
                support_units.append(cover)
                covered |= rest & units[cover].words
        precision = len(covered) / denominator if words else 1.0
        if kind != "claim":
            return SentenceSupport(
                sentence,
                supported,
                units[best].text,
                units[best].source,
                round(precision, 4),
                round(similarity, 4),
                missing,
                kind,
            )

        missing_list = self._missing(sentence, words, hard, prepared, support_units, best)
        lexical = precision >= self.min_precision
        semantic = (
            prepared.vectors is not None
            and similarity >= self.min_similarity
            and precision >= self.paraphrase_precision
        )
        return SentenceSupport(
            sentence=sentence,
            supported=(lexical or semantic) and not missing_list,
            best_evidence=units[best].text,
            evidence_index=units[best].source,
            precision=round(precision, 4),
            similarity=round(similarity, 4),
            missing_tokens=tuple(missing_list),
            kind=kind,
        )

    def _missing(
        self,
        sentence: str,
        words: set[str],
        hard: list[_Hard],
        prepared: _Prepared,
        support_units: list[int],
        best: int,
    ) -> list[str]:
        """Hard tokens and names the evidence lacks, "negation" when the polarity differs, and "clause: ..." for a
        clause no evidence sentence states."""
        units = prepared.units
        sources = {units[i].source for i in support_units}
        local_hard = [h for i in support_units for h in _hard_items(units[i].text)]
        local = _EvidenceHard([*local_hard, *(h for i in support_units for h in _hard_items(units[i].title_text))])
        best_hard = _hard_items(units[best].text)
        mentioned = {h.text for h in hard}
        missing: list[str] = []
        for h in hard:
            if local.supports(h):
                continue
            # A figure where the supporting sentence states a different one of the same kind is a substitution
            # ("under 14" against "under 13"), even if 14 appears somewhere else in the evidence. A bare number
            # is compared with the best sentence only: bare numbers are too common to compare more widely.
            pool = local_hard if (h.unit or h.currency) else best_hard
            substituted = any(_same_kind(h, other) and other.text not in mentioned for other in pool)
            if substituted or not prepared.hard.supports(h):
                missing.append(h.text)
        names = frozenset().union(*(units[i].words for i in support_units))
        names |= frozenset().union(*(prepared.sources[i].words for i in sources))
        missing += sorted(e for e in _entities(sentence, prepared.known_names) if _stem(e) not in names)
        if not _negation_consistent(sentence, words, units[best], prepared):
            missing.append("negation")
        clauses = _clauses(sentence)
        if len(clauses) > 1:
            for clause in clauses:
                clause_words = content_words(clause)
                top = max(range(len(units)), key=lambda i: len(clause_words & units[i].words))
                found = len(clause_words & units[top].words) / len(clause_words)
                if found < self.paraphrase_precision:
                    missing.append(f"clause: {clause}")
                elif not _negation_consistent(clause, clause_words, units[top], prepared):
                    missing.append("negation")
        return list(dict.fromkeys(missing))


# --------------------------------------------------------------------------------------------------
# Calibration (`python -m ask_engine.faithfulness --calibrate eval/calibration.jsonl`)
# --------------------------------------------------------------------------------------------------

CORRUPTIONS = ("number_changed", "claim_added", "negation_flipped", "entity_swapped", "unit_changed")


@dataclass(frozen=True)
class CalibrationPair:
    id: str
    answer: str
    evidence: tuple[str, ...]
    label: bool
    corruption: str | None


def load_calibration(path: str | Path) -> list[CalibrationPair]:
    """Read a calibration JSONL file; a malformed line raises ValueError naming the line."""
    pairs: list[CalibrationPair] = []
    for number, line in enumerate(Path(path).read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            corruption = row.get("corruption")
            if corruption is not None and corruption not in CORRUPTIONS:
                raise ValueError(f"unknown corruption {corruption!r}")
            if not isinstance(row["label"], bool) or not isinstance(row["evidence"], list):
                raise ValueError("label must be a boolean and evidence a list")
            pairs.append(
                CalibrationPair(str(row["id"]), str(row["answer"]), tuple(row["evidence"]), row["label"], corruption)
            )
        except (json.JSONDecodeError, KeyError, ValueError) as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
    return pairs


def calibration_report(scorer: FaithfulnessScorer, pairs: Sequence[CalibrationPair]) -> dict[str, Any]:
    """Precision and recall of the scorer at detecting unfaithful answers (label false), overall and per corruption.

    Also the false-alarm rate on faithful answers and the accuracy. A pair is flagged when any claim sentence of
    its answer is unsupported.
    """
    flagged = {p.id: scorer.score(p.answer, p.evidence).score < 1.0 for p in pairs}

    def stats(subset: Sequence[CalibrationPair]) -> dict[str, Any]:
        tp = sum(1 for p in subset if not p.label and flagged[p.id])
        fp = sum(1 for p in subset if p.label and flagged[p.id])
        fn = sum(1 for p in subset if not p.label and not flagged[p.id])
        tn = sum(1 for p in subset if p.label and not flagged[p.id])
        n = len(subset)
        return {
            "pairs": n,
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None,
            "accuracy": round((tp + tn) / n, 4) if n else None,
            "false_alarm_rate": round(fp / (fp + tn), 4) if fp + tn else None,
        }

    faithful = [p for p in pairs if p.label]
    on_faithful = stats(faithful)
    report: dict[str, Any] = {
        "overall": stats(pairs),
        "faithful": {k: on_faithful[k] for k in ("pairs", "accuracy", "false_alarm_rate")},
        "by_corruption": {},
    }
    for corruption in CORRUPTIONS:
        subset = [p for p in pairs if p.corruption == corruption]
        if subset:
            # Precision per type: flagged corrupted pairs of this type against all false alarms on faithful pairs.
            report["by_corruption"][corruption] = stats(subset + faithful) | {"pairs": len(subset)}
    report["misclassified"] = [p.id for p in pairs if flagged[p.id] == p.label]
    return report


def _grid(embedder: Embedder | None, pairs: Sequence[CalibrationPair]) -> list[dict[str, Any]]:
    scorer = FaithfulnessScorer(embedder)  # one scorer: its embedding cache serves every setting
    rows = []
    for min_precision in (0.6, 0.65, 0.7, 0.75, 0.8, 0.85):
        for paraphrase in (0.4, 0.5):
            for min_similarity in (0.75, 0.8, 0.85) if embedder else (1.0,):
                scorer.min_precision = min_precision
                scorer.paraphrase_precision = min(paraphrase, min_precision)
                scorer.min_similarity = min_similarity
                overall = calibration_report(scorer, pairs)["overall"]
                rows.append(
                    {
                        "min_precision": min_precision,
                        "paraphrase_precision": paraphrase,
                        "min_similarity": min_similarity,
                        **overall,
                    }
                )
    return sorted(rows, key=lambda r: (-(r["accuracy"] or 0), -(r["recall"] or 0)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ask_engine.faithfulness", description=__doc__.splitlines()[0])
    parser.add_argument("--calibrate", metavar="JSONL", required=True, help="labelled (answer, evidence) pairs")
    parser.add_argument("--grid", action="store_true", help="search thresholds and print the best settings")
    parser.add_argument("--no-embedder", action="store_true", help="lexical checks only")
    parser.add_argument("--min-precision", type=float, default=DEFAULT_MIN_PRECISION)
    parser.add_argument("--min-similarity", type=float, default=DEFAULT_MIN_SIMILARITY)
    parser.add_argument("--show-errors", action="store_true", help="print the misclassified pairs")
    args = parser.parse_args(argv)
    try:
        pairs = load_calibration(args.calibrate)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    embedder: Embedder | None = None
    if not args.no_embedder:
        from ask_engine.embedders import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    if args.grid:
        for row in _grid(embedder, pairs):
            print(json.dumps(row))
        return 0
    scorer = FaithfulnessScorer(embedder, min_precision=args.min_precision, min_similarity=args.min_similarity)
    report = calibration_report(scorer, pairs)
    if args.show_errors:
        by_id = {p.id: p for p in pairs}
        for pid in report["misclassified"]:
            pair = by_id[pid]
            result = scorer.score(pair.answer, pair.evidence)
            print(f"-- {pid} label={pair.label} corruption={pair.corruption} score={result.score:.2f}")
            for s in result.sentences:
                print(
                    f"   [{s.kind} supported={s.supported} p={s.precision} sim={s.similarity} "
                    f"missing={list(s.missing_tokens)}] {s.sentence}\n      best: {s.best_evidence}"
                )
    print(json.dumps({k: v for k, v in report.items() if k != "misclassified"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
