"""Figures with units in a shop's text ("50 mL", "2,5 kg", "30 in"), in their kind's base unit, so sizes written in
different units compare: a size guide's ranges and a size option's values."""

from __future__ import annotations

import math
import re

__all__ = [
    "FIGURE_ONLY",
    "in_inches",
    "measure",
    "measures_in",
    "ranges_in",
    "value_pattern",
    "with_label_units",
    "written_forms",
]

_NUMBER = r"(\d+(?:[.,]\d+)?)"
# (a horse's height in hands, "15.3hh", is hands and inches after the point: its own unit, compared only with hands)
_UNIT = (
    r"\s*(cm|mm|m|in|inch(?:es)?|\"|”|ft|kg|kgs|kilos?|g|lbs?|pounds?|oz|ml|l|months?|mos?|weeks?|wks?|years?|yrs?|hh)"
    r"(?![a-z])"
)
_RANGE = re.compile(_NUMBER + r"\s*(?:-|–|to)\s*" + _NUMBER + _UNIT, re.IGNORECASE)
# "up to 25 kg", and a table's "Suits pets up to: 25 kg" (its header and cell joined); what a container "holds 250g"
_UP_TO = re.compile(r"\b(?:up to|under|below|less than|max(?:imum)?\.?|holds)\s*:?\s*" + _NUMBER + _UNIT, re.IGNORECASE)
_AND_UP = re.compile(_NUMBER + _UNIT + r"\s*(?:\+|and (?:up|over|above)|or (?:more|over|above))", re.IGNORECASE)
_OVER = re.compile(r"\b(?:over|above|more than)\s*:?\s*" + _NUMBER + _UNIT, re.IGNORECASE)
_FIGURE = re.compile(_NUMBER + _UNIT, re.IGNORECASE)
_UNIT_NAMES = {"inch": "in", "inches": "in", '"': "in", "”": "in", "kgs": "kg", "kilo": "kg", "kilos": "kg"}
_UNIT_NAMES |= {"lbs": "lb", "pound": "lb", "pounds": "lb"}
# an age or a period ("a 3 month old kitten", "2–4 months"), in months
_UNIT_NAMES |= {"months": "month", "mo": "month", "mos": "month", "weeks": "week", "wk": "week", "wks": "week"}
_UNIT_NAMES |= {"years": "year", "yr": "year", "yrs": "year"}


# each unit as a multiple of its kind's base unit (cm, kg, ml), so "30 lb" is read against "9-20 kg"
_SCALE = {"mm": ("cm", 0.1), "m": ("cm", 100.0), "in": ("cm", 2.54), "ft": ("cm", 30.48), "g": ("kg", 0.001)}
_SCALE |= {"lb": ("kg", 0.45359237), "oz": ("kg", 0.028349523), "l": ("ml", 1000.0)}
_SCALE |= {"week": ("month", 7 / 30.4375), "year": ("month", 12.0)}


def _unit(text: str) -> str:
    low = text.lower()
    return _UNIT_NAMES.get(low, low)


def _number(text: str) -> float:
    if re.fullmatch(r"\d{1,3},\d{3}", text):
        return float(text.replace(",", ""))  # "1,200 mm": a thousands separator
    return float(text.replace(",", "."))  # "2,5 kg": a decimal comma


def _base(value: float, unit: str) -> tuple[float, str]:
    base, factor = _SCALE.get(unit, (unit, 1.0))
    return value * factor, base


# a height in feet and inches ("5'7", "5′10″", "5 ft 7 in", "6 foot 2"), read as inches
_FEET_INCHES = r"(\d)\s*(?:'|’|′|ft\.?|feet|foot)\s*(\d{1,2})(?:\s*(?:\"|”|″|''|in\b\.?|inch(?:es)?\b))?"
_FEET_INCHES_RANGE = re.compile(_FEET_INCHES + r"\s*(?:-|–|to)\s*" + _FEET_INCHES, re.IGNORECASE)
_FEET_INCHES_ONE = re.compile(r"(?<![\d.,])" + _FEET_INCHES + r"(?![\d]|[.,]\d)", re.IGNORECASE)


def _inches(feet: str, inches: str) -> int:
    return int(feet) * 12 + int(inches)


def in_inches(text: str) -> str:
    """`text` with heights in feet and inches written in inches ("5'5″ – 5'10″" → "65-70 in", "I'm 5'7" → "I'm 67
    in"), so they compare with a chart's or a question's other figures."""
    if not re.search(r"\d\s*(?:'|’|′|ft|feet|foot)", text, re.IGNORECASE):
        return text
    text = _FEET_INCHES_RANGE.sub(lambda m: f"{_inches(m[1], m[2])}-{_inches(m[3], m[4])} in", text)
    return _FEET_INCHES_ONE.sub(lambda m: f"{_inches(m[1], m[2])} in", text)


def measure(text: str) -> tuple[float, str] | None:
    """The first figure with a unit in `text`, in its kind's base unit ("1 kg" → (1.0, "kg"), "250 g" → (0.25,
    "kg"), "3 cup (350 ml)" → (350.0, "ml")); None without one."""
    m = _FIGURE.search(in_inches(text))
    return _base(_number(m.group(1)), _unit(m.group(2))) if m else None


def measures_in(text: str) -> list[tuple[float, str]]:
    """Every figure with a unit in `text`, in its kind's base unit ("the 1kg bag" → [(1.0, "kg")])."""
    return [_base(_number(m.group(1)), _unit(m.group(2))) for m in _FIGURE.finditer(in_inches(text))]


def ranges_in(text: str) -> tuple[tuple[float, float, str], ...]:
    """Every range `text` states, in its kind's base unit: (low, high, base unit)."""
    text = in_inches(with_label_units(text))
    found = [(m.group(1), m.group(2), m.group(3)) for m in _RANGE.finditer(text)]
    found += [("0", m.group(1), m.group(2)) for m in _UP_TO.finditer(text)]
    found += [(m.group(1), "inf", m.group(2)) for m in _AND_UP.finditer(text)]
    found += [(m.group(1), "inf", m.group(2)) for m in _OVER.finditer(text)]
    out = []
    for low, high, unit in found:
        lo, base = _base(_number(low), _unit(unit))
        hi = math.inf if high == "inf" else _base(_number(high), _unit(unit))[0]
        out.append((lo, hi, base))
    return tuple(out)


# a table's cell whose header carries the unit ("Chest (cm): 84-92"), its figures bare
_LABEL_UNIT = re.compile(
    r"(?P<label>[^:,;()]{1,40}?)\s*\((?P<unit>cm|mm|m|in|inch(?:es)?|ft|kg|g|lbs?|oz|ml|l|years|months)\)\s*:\s*"
    r"(?P<value>\d+(?:[.,]\d+)?(?:\s*(?:-|–|to)\s*\d+(?:[.,]\d+)?)?)(?![\d.,]*\d)(?!\s*(?:[a-z]|\"|”|[¼½¾⅓⅔⅛]))",
    re.IGNORECASE,
)
# ... and an age column's bare figures, in years ("Age: 7–8", "Ages (approx.): 4–7")
_AGE_CELL = re.compile(
    r"(?P<label>\bages?(?:\s*\([^():,;\d]{1,20}\))?)\s*:\s*(?P<value>\d{1,2}(?:\s*(?:-|–|to)\s*\d{1,2})?)(?![\d.,]*\d)(?!\s*(?:[a-z+]|(?:-|–|to)\s*\d))",
    re.I,
)


def with_label_units(text: str) -> str:
    """`text` with a unit its cell's header gives written after the cell's figures: "Chest (cm): 84-92" reads as
    "Chest: 84-92 cm", so the range holds a figure the question gives in cm or inches."""
    text = _LABEL_UNIT.sub(lambda m: f"{m.group('label')}: {m.group('value')} {m.group('unit')}", text)
    return _AGE_CELL.sub(lambda m: f"{m.group('label')}: {m.group('value')} years", text)


# a value that is one figure and its unit and nothing else ('16"', "15 mm", "1L")
FIGURE_ONLY = re.compile(r"\d+(?:[.,]\d+)?\s*(?:[a-z]+|\"|”)", re.IGNORECASE)


def value_pattern(value: str) -> str:
    """A pattern for an option value (lower case) as a question may write it: its words joined by a space or a hyphen
    ("11 speed" for "11-speed"), and a figure joined to its unit with or without one ("15mm" for "15 mm", "4 ply"
    for "4ply")."""
    words = [w for w in re.split(r"[\s-]+|(?<=\d)(?=[a-z])", value) if w]
    pattern = "".join(
        ("" if n == 0 else r"[\s-]*" if words[n - 1][-1].isdigit() and w[0].isalpha() else r"[\s-]+") + re.escape(w)
        for n, w in enumerate(words)
    )
    # ... and a value of words ending in a noun said as the adjective made of it ("left handed" for "Left Hand",
    # "long sleeved" for "Long Sleeve")
    last = words[-1] if len(words) > 1 and words[-1].isalpha() else ""
    if last.endswith("e"):
        return pattern + "d?"
    return pattern + "(?:ed)?" if re.search(r"[^aeiouy]$", last) else pattern


def written_forms(value: str, text: str) -> list[str]:
    """How `text` may write the value: its figure and unit run together or apart ("15mm", "15 mm"), and the spans of
    `text` stating one of its measures in another unit ("16 inch" for '16"', "12 inch" for '305mm (12")')."""
    forms = [re.sub(r"(?<=\d)\s+(?=[a-z])", "", value, flags=re.I), re.sub(r"(?<=\d)(?=[a-z])", " ", value, flags=re.I)]
    own = measures_in(value)
    forms += [
        m.group(0) for m in _FIGURE.finditer(text) if len(said := measures_in(m.group(0))) == 1 and said[0] in own
    ]
    return forms
