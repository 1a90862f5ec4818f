"""Recorded values as shoppers read them: money, metafield values by their declared type, labels from keys."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from ask_engine.sources.markup import _collapse, _sentence

_CURRENCY_SYMBOLS = {
    "GBP": "£", "EUR": "€", "USD": "$", "JPY": "¥", "CNY": "CN¥", "INR": "₹", "KRW": "₩", "CAD": "CA$", "AUD": "A$",
    "NZD": "NZ$", "HKD": "HK$", "SGD": "S$", "MXN": "MX$", "BRL": "R$", "ILS": "₪", "PHP": "₱", "VND": "₫",
    "TWD": "NT$", "THB": "฿", "TRY": "₺", "UAH": "₴", "NGN": "₦", "PLN": "zł",
}  # fmt: skip
_ZERO_DECIMAL = {"JPY", "KRW", "VND", "CLP", "ISK", "HUF", "TWD", "UGX", "XAF", "XOF"}
_SUFFIX_SYMBOLS = {"PLN"}  # written after the amount: "89.00 zł"
_UNITS = {
    "GRAMS": "g", "KILOGRAMS": "kg", "OUNCES": "oz", "POUNDS": "lb", "MILLIMETERS": "mm", "CENTIMETERS": "cm",
    "METERS": "m", "INCHES": "in", "FEET": "ft", "YARDS": "yd", "MILLILITERS": "ml", "CENTILITERS": "cl",
    "LITERS": "l", "CUBIC_METERS": "m³", "FLUID_OUNCES": "fl oz", "PINTS": "pt", "QUARTS": "qt", "GALLONS": "gal",
    "IMPERIAL_FLUID_OUNCES": "imp fl oz", "IMPERIAL_PINTS": "imp pt", "IMPERIAL_QUARTS": "imp qt",
    "IMPERIAL_GALLONS": "imp gal", "m3": "m³", "us_fl_oz": "US fl oz", "us_pt": "US pt", "us_qt": "US qt",
    "us_gal": "US gal", "imp_fl_oz": "imp fl oz", "imp_pt": "imp pt", "imp_qt": "imp qt", "imp_gal": "imp gal",
}  # fmt: skip


# The unit a metafield's key or name may end in ("dha_mg", "protein_per_serving_g", "Weight (kg)"), as written beside
# a figure. A bare figure under such a key reads with its unit ("DHA: 480 mg"), not as "The dha mg … is 480".
_KEY_UNITS = {
    "mg": "mg", "mcg": "mcg", "ug": "mcg", "µg": "mcg", "g": "g", "kg": "kg", "ml": "ml", "cl": "cl", "l": "l",
    "mm": "mm", "cm": "cm", "m": "m", "in": "in", "inch": "in", "inches": "in", "ft": "ft", "oz": "oz", "lb": "lb",
    "lbs": "lb", "kcal": "kcal", "kj": "kJ", "w": "W", "kw": "kW", "v": "V", "mah": "mAh", "wh": "Wh", "gsm": "gsm",
    "percent": "%", "pct": "%", "%": "%", "min": "min", "mins": "min", "minutes": "minutes", "hrs": "hours",
    "hours": "hours", "days": "days", "weeks": "weeks", "months": "months", "years": "years",
}  # fmt: skip
_BARE_FIGURE = re.compile(r"-?\d+(?:[.,]\d+)?")
_NAMED_UNIT = re.compile(r"^(?P<label>.+?)\s*[(\[](?P<unit>[^()\[\]]+)[)\]]$")


def unit_from_label(label: str, value: str) -> tuple[str, str]:
    """The label and value of a recorded figure whose unit is in its label ("Dha mg", 480 → "Dha", "480 mg"; "Weight
    (kg)", 3 → "Weight", "3 kg"); as given where the value is not a bare figure or the label names no unit."""
    if not _BARE_FIGURE.fullmatch(value.strip()):
        return label, value
    named = _NAMED_UNIT.match(label.strip())
    if named and (unit := _KEY_UNITS.get(named["unit"].strip().lower())):
        head = named["label"]
    else:
        words = label.split()
        unit = _KEY_UNITS.get(words[-1].lower()) if len(words) > 1 else None
        head = " ".join(words[:-1])
    if not unit or not head:
        return label, value
    return head, f"{value.strip()}{'' if unit == '%' else ' '}{unit}"


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = Decimal(str(value).strip().replace(",", ""))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _number(value: Any) -> str:
    number = _decimal(value)
    if number is None:
        return str(value)
    text = format(number.normalize(), "f")
    return "0" if text in ("-0", "") else text


def format_money(amount: Any, currency: str) -> str:
    """Money as shoppers read it: £89.00, €1,250.00, ¥1,200, 89.00 CHF (ISO code when no symbol is well known)."""
    number = _decimal(amount)
    if number is None:
        return f"{amount} {currency}".strip()
    code = currency.upper()
    text = f"{number:,.0f}" if code in _ZERO_DECIMAL else f"{number:,.2f}"
    symbol = _CURRENCY_SYMBOLS.get(code)
    if symbol is None:
        return f"{text} {code}"
    return f"{text} {symbol}" if code in _SUFFIX_SYMBOLS else f"{symbol}{text}"


def _join_and(items: Sequence[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def humanise_label(key: str) -> str:
    """Label from a key: country_of_origin → "Country of origin", careInstructions → "Care instructions"."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key).replace("_", " ").replace("-", " ").replace(".", " ")
    words = _collapse(words)
    if not words:
        return key
    parts = [w if (w.isupper() and len(w) > 1) else w.lower() for w in words.split(" ")]
    first = parts[0]
    parts[0] = first[:1].upper() + first[1:]
    return " ".join(parts)


def _rich_inline(node: Any, markdown: bool) -> str:
    if not isinstance(node, dict):
        return ""
    if node.get("type") == "text":
        value = str(node.get("value", ""))
        return f"**{value}**" if markdown and value.strip() and node.get("bold") else value
    inner = "".join(_rich_inline(c, markdown) for c in node.get("children") or ())
    if node.get("type") == "link" and markdown and node.get("url"):
        return f"[{inner}]({node['url']})"
    return inner


def _rich_text(root: Any, markdown: bool) -> str:
    """Text of a Shopify rich_text_field JSON tree; Markdown when `markdown` (disclosures keep their layout)."""
    if not isinstance(root, dict) or root.get("type") != "root":
        raise _BadValueError('expected a rich text tree {"type": "root", "children": [...]}')
    blocks: list[str] = []
    for node in root.get("children") or ():
        if not isinstance(node, dict):
            continue
        if node.get("type") == "list":
            items = [_collapse(_rich_inline(i, markdown)) for i in node.get("children") or ()]
            ordered = node.get("listType") == "ordered"
            if markdown:
                blocks.append("\n".join(f"{n}. {i}" if ordered else f"- {i}" for n, i in enumerate(items, 1) if i))
            else:
                blocks.append(_sentence(_join_and(items)) if items else "")
        elif node.get("type") == "heading" and markdown:
            blocks.append("#" * int(node.get("level") or 3) + " " + _collapse(_rich_inline(node, markdown)))
        else:
            blocks.append(_collapse(_rich_inline(node, markdown)))
    return ("\n\n" if markdown else " ").join(b for b in blocks if b)


class _BadValueError(ValueError):
    """A metafield value that does not match its declared type."""


def _json_value(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise _BadValueError(f"not valid JSON ({exc.msg})") from None
    return value


def humanise_value(value: Any, mtype: str | None, currency: str = "USD") -> str | None:
    """A metafield value as a shopper reads it; None when there is nothing to show (empty, a reference).

    Raises _BadValueError when the value does not match its type.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    mtype = (mtype or "").strip().lower()
    if mtype.endswith("_reference"):
        return None  # GIDs of other resources mean nothing to a shopper
    if mtype.startswith("list."):
        items = _json_value(value)
        if not isinstance(items, list):
            raise _BadValueError("expected a JSON list")
        inner = [humanise_value(item, mtype[5:], currency) for item in items]
        return _join_and([i for i in inner if i]) or None
    if mtype == "boolean":
        if isinstance(value, bool):
            return "yes" if value else "no"
        text = str(value).strip().lower()
        if text not in ("true", "false"):
            raise _BadValueError("expected true or false")
        return "yes" if text == "true" else "no"
    if mtype in ("dimension", "weight", "volume"):
        data = _json_value(value)
        if not isinstance(data, dict) or "value" not in data:
            raise _BadValueError('expected {"value": ..., "unit": ...}')
        unit = str(data.get("unit") or "")
        # a unit code no table here knows ("US_FLUID_OUNCES") is still written as words, not as a code
        shown = (
            _UNITS.get(unit) or _UNITS.get(unit.upper()) or _UNITS.get(unit.lower()) or unit.lower().replace("_", " ")
        )
        return f"{_number(data['value'])} {shown}".strip()
    if mtype == "rating":
        data = _json_value(value)
        if not isinstance(data, dict) or "value" not in data:
            raise _BadValueError('expected {"value": ..., "scale_max": ...}')
        scale = data.get("scale_max")
        return f"{_number(data['value'])} out of {_number(scale)}" if scale is not None else _number(data["value"])
    if mtype == "money":
        data = _json_value(value)
        if not isinstance(data, dict) or "amount" not in data:
            raise _BadValueError('expected {"amount": ..., "currency_code": ...}')
        return format_money(data["amount"], str(data.get("currency_code") or data.get("currencyCode") or currency))
    if mtype == "rich_text_field":
        return _rich_text(_json_value(value), markdown=False) or None
    if mtype == "json":
        return _compact(_json_value(value)) or None
    if mtype in ("number_integer", "number_decimal"):
        if _decimal(value) is None:
            raise _BadValueError("expected a number")
        return str(value).strip()
    if mtype == "multi_line_text_field" or (isinstance(value, str) and "\n" in value.strip()):
        lines = [_collapse(line) for line in str(value).splitlines() if line.strip()]
        return "; ".join(line.rstrip(";") for line in lines)
    if not mtype:
        return _untyped(value)
    return _collapse(str(value)) if isinstance(value, str) else _compact(value)


def _untyped(value: Any) -> str | None:
    """Values without a declared type (CSV columns, hand-written JSON): guess booleans, JSON and GIDs."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, str):
        return _compact(value) or None
    text = value.strip()
    if text.lower() in ("true", "false"):
        return "yes" if text.lower() == "true" else "no"
    if text.startswith("gid://"):
        return None
    if text[:1] in "[{":
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            return _collapse(text)
        if isinstance(parsed, dict) and {"value", "unit"} <= parsed.keys():
            return humanise_value(parsed, "dimension")
        if isinstance(parsed, dict) and "amount" in parsed:
            return humanise_value(parsed, "money")
        if isinstance(parsed, dict) and parsed.get("type") == "root":
            return humanise_value(parsed, "rich_text_field")
        if isinstance(parsed, dict) and {"value", "scale_max"} <= parsed.keys():
            return humanise_value(parsed, "rating")  # {"scale_min": "1.0", "scale_max": "5.0", "value": "4.6"}
        if isinstance(parsed, list) and parsed and all(isinstance(i, str) and i.startswith("gid://") for i in parsed):
            return None  # a list of references (a CSV's "Complementary products" column): GIDs mean nothing
        return _compact(parsed) or None
    return _collapse(text)


def _compact(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{humanise_label(str(k))}: {_compact(v)}" for k, v in value.items() if _compact(v))
    if isinstance(value, list):
        return _join_and([_compact(v) for v in value])
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return ""
    return _collapse(str(value))


def _plural(word: str, language: str) -> str:
    if not language.lower().startswith("en") or not word or word[-1:] in "sS" or not word[-1:].isalpha():
        return word
    if re.search(r"[^aeiou]y$", word, re.IGNORECASE):
        return word[:-1] + "ies"
    if re.search(r"(ch|sh|x|z)$", word, re.IGNORECASE):
        return word + "es"
    return word + "s"
