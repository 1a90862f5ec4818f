"""Hard tokens: the numbers, prices, durations, percentages, sizes/units, SKUs, model codes and allergen terms an
answer must not change."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


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
