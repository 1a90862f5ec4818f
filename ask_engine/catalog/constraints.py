"""What a search question asks for: price bounds, required attributes, options, context, and one pass per thing.

Read with the answerer's general mechanism: the attribute lexicon (`lexicon/en.json`: cues and fact keys), the
colour and size readers of `language.py`, and `lexicon/search.json` (price cues and currency words). Nothing here
knows a shop: "waterproof" is required because the lexicon names it an attribute with an adjective, never because
this module lists it.

- A price stated once holds for every pass ("a jacket and gloves under £50": each item under £50, since the shop
  cannot know how the shopper would split a total). A bound in another currency than the shop's is read and
  reported, but not applied (nothing here converts money): the reading is then `degraded`.
- An attribute applies to what it was said of: the question is split on "and", "or", "plus" and commas, and a part
  naming no kind of thing ("waterproof and breathable jackets") joins the next one.
- "for ..." phrases are context ("for a wet week in Iceland"): reported, used for nothing that filters.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from ask_engine.language import COLOUR_WORDS, CONCEPTS, CURRENCY_SIGNS, alternation, normalize, stem

__all__ = [
    "Attribute",
    "OptionWanted",
    "Pass",
    "Remembered",
    "Understood",
    "minor_units",
    "read_constraints",
    "remember",
]

# --- data -------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _lexicon() -> dict[str, Any]:
    path = Path(__file__).resolve().parent.parent / "lexicon" / "search.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def minor_units(amount: Decimal | str | float, currency: str) -> int:
    """An amount in the minor units of `currency` (2 decimals, or none for the zero-decimal currencies)."""
    from ask_engine.sources.values import _ZERO_DECIMAL

    exponent = 0 if currency.upper() in _ZERO_DECIMAL else 2
    return int((Decimal(str(amount)) * (10**exponent)).to_integral_value())


# --- what was read ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attribute:
    """A required property: a yes/no attribute ("waterproof") or a value the product must record ("leather")."""

    key: str  # the lexicon attribute: "waterproof", "material"
    wanted: str  # "true" / "false" for yes/no attributes; the value word otherwise ("leather")
    said: str  # as written: "waterproof", "not waterproof", "leather"
    negated: bool = False

    @property
    def yes_no(self) -> bool:
        return self.wanted in ("true", "false")


@dataclass(frozen=True)
class OptionWanted:
    """A variant option the shopper named: a colour ("in black") or a size ("size 10")."""

    kind: Literal["colour", "size"]
    value: str  # lower case: "black", "10", "xl"
    negated: bool = False


@dataclass(frozen=True)
class Pass:
    """One search of the question: the kind of thing asked for and what was said of it."""

    text: str  # the part of the question: "a waterproof jacket"
    kind: str  # the words naming the thing: "jacket"; "" when none ("anything waterproof")
    attributes: tuple[Attribute, ...] = ()
    options: tuple[OptionWanted, ...] = ()


@dataclass(frozen=True)
class Remembered:
    """A constraint taken from earlier in the conversation because this message left that gap."""

    constraint: str  # "max_price", "min_price", "attribute", "kind"
    wanted: Any
    said_in: str  # the earlier message it was read from
    key: str | None = None
    scope: str = "conversation"


@dataclass(frozen=True)
class Understood:
    """How the question was read."""

    query: str
    currency: str  # the shop's currency: what every minor-unit amount is in
    passes: tuple[Pass, ...]
    min_price_minor: int | None = None
    max_price_minor: int | None = None
    stated_currency: str | None = None  # the currency a bound was stated in, when not the shop's (not applied)
    in_stock: bool = False
    context: tuple[str, ...] = ()
    remembered: tuple[Remembered, ...] = ()
    degraded: bool = False
    notes: tuple[str, ...] = field(default=())

    @property
    def price_applied(self) -> bool:
        return self.stated_currency is None

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        return tuple(a for p in self.passes for a in p.attributes)


# --- prices -----------------------------------------------------------------------------------------------

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?"
_SYMBOLS = CURRENCY_SIGNS


def _amount(p: str) -> str:
    """An amount with its currency written before or after it; groups named with the prefix `p`."""
    words = alternation(list(_lexicon()["currency_words"]))
    return (
        rf"(?:(?P<{p}pre>[{_SYMBOLS}]|\b(?-i:[A-Z]{{3}})\s?)\s?(?P<{p}n1>{_NUMBER})(?P<{p}k1>k\b)?"
        rf"|(?P<{p}n2>{_NUMBER})(?P<{p}k2>k\b)?\s?(?P<{p}post>(?:{words})\b|[{_SYMBOLS}]))"
    )


@lru_cache(maxsize=1)
def _price_res() -> tuple[re.Pattern[str], ...]:
    lex = _lexicon()
    loose = rf"(?:{_amount('b')}|(?P<bare>{_NUMBER})(?P<bk>k\b)?)"  # after a cue the currency is optional
    low = rf"(?:{_amount('c')}|(?P<clo>{_NUMBER}))"
    high = rf"(?:{_amount('d')}|(?P<dhi>{_NUMBER}))"
    between = re.compile(rf"\b(?:between|from)\s+{low}\s*(?:and|to|-|–)\s*{high}", re.IGNORECASE)
    dashed = re.compile(rf"(?<![\w.]){low}\s*(?:-|–|to)\s*{high}(?![\w.])", re.IGNORECASE)
    cue_max = alternation(lex["max_cues"])
    cue_min = alternation(lex["min_cues"])
    before = re.compile(rf"(?:(?<=\s)|^)(?P<cue>{cue_max}|{cue_min})\s*(?:of\s+|than\s+)?{loose}", re.IGNORECASE)
    after_cues = alternation(lex["max_after"] + lex["min_after"])
    after = re.compile(rf"{_amount('a')}\s+(?P<after>{after_cues})(?![\w])", re.IGNORECASE)
    alone = re.compile(_amount("a"), re.IGNORECASE)
    return between, dashed, before, after, alone


def _currency(groups: dict[str, str | None], prefix: str, shop_currency: str) -> str | None:
    """The currency an amount was written in (None: none written, so the shop's)."""
    from ask_engine.sources.values import _CURRENCY_SYMBOLS

    mark = (groups.get(f"{prefix}pre") or groups.get(f"{prefix}post") or "").strip()
    if not mark:
        return None
    lex = _lexicon()
    if mark == "$" or lex["currency_words"].get(mark.lower()) == "$":
        return shop_currency if shop_currency in lex["dollar_currencies"] else "USD"
    if mark.lower() in lex["currency_words"]:
        return str(lex["currency_words"][mark.lower()])
    for code, symbol in _CURRENCY_SYMBOLS.items():
        if symbol == mark:
            return code
    if re.fullmatch(r"[A-Z]{3}", mark):
        return mark
    return None


def _value(groups: dict[str, str | None], prefix: str, bare: str | None = None) -> Decimal | None:
    text = groups.get(f"{prefix}n1") or groups.get(f"{prefix}n2") or (groups.get(bare) if bare else None)
    if not text:
        return None
    try:
        number = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    thousands = groups.get(f"{prefix}k1") or groups.get(f"{prefix}k2") or (groups.get("bk") if bare else None)
    return number * 1000 if thousands else number


@dataclass
class _Prices:
    low: Decimal | None = None
    high: Decimal | None = None
    currency: str | None = None
    spans: list[tuple[int, int]] = field(default_factory=list)


def _read_prices(text: str, shop_currency: str) -> _Prices:
    between, dashed, before, after, alone = _price_res()
    lex = _lexicon()
    max_cues = {re.sub(r"\s+", " ", c) for c in lex["max_cues"]}
    max_after = set(lex["max_after"])
    found = _Prices()

    def taken(m: re.Match[str]) -> bool:
        return any(m.start() < e and s < m.end() for s, e in found.spans)

    def note_currency(code: str | None) -> None:
        if code is not None and code != shop_currency:
            found.currency = code

    ranges = [(m, True) for m in between.finditer(text)] + [(m, False) for m in dashed.finditer(text)]
    for m, worded in ranges:
        if taken(m):
            continue
        g = m.groupdict()
        lo, hi = _value(g, "c", "clo"), _value(g, "d", "dhi")
        stated = _currency(g, "c", shop_currency) or _currency(g, "d", shop_currency)
        if lo is None or hi is None or (stated is None and not worded):
            continue  # "2-person" or "10-12" alone is not a price range
        found.low, found.high = min(lo, hi), max(lo, hi)
        note_currency(stated)
        found.spans.append(m.span())
    for m in before.finditer(text):
        if taken(m):
            continue
        g = m.groupdict()
        value = _value(g, "b", "bare")
        if value is None:
            continue
        cue = re.sub(r"\s+", " ", m.group("cue").lower())
        stated = _currency(g, "b", shop_currency)
        if (
            stated is None
            and cue in ("from", "over", "above", "within", "max", "min")
            and not re.search(r"\b(?:price|cost|budget|spend|£|\$|€)", text, re.I)
        ):
            continue  # "over 10 years", "from 2020": a bare number after an ambiguous cue is not a price
        if cue in max_cues:
            found.high = value
        else:
            found.low = value
        note_currency(stated)
        found.spans.append(m.span())
    for m in after.finditer(text):
        if taken(m):
            continue
        g = m.groupdict()
        value = _value(g, "a")
        if value is None:
            continue
        if m.group("after").lower() in max_after:
            found.high = value
        else:
            found.low = value
        note_currency(_currency(g, "a", shop_currency))
        found.spans.append(m.span())
    if found.low is None and found.high is None:
        for m in alone.finditer(text):
            g = m.groupdict()
            value = _value(g, "a")
            if value is not None and _currency(g, "a", shop_currency) is not None:
                # "a £50 jacket", "boots, 100 pounds": a budget, held as the most to pay
                found.high = value
                note_currency(_currency(g, "a", shop_currency))
                found.spans.append(m.span())
                break
    return found


# --- attributes, options, context ---------------------------------------------------------------------------

_NEGATOR = re.compile(r"(?:\b(?:not|no|non|without|never|isn't|aren't|nothing)|\banything but)[\s-]*(?:\w+[\s-]+)?$")
_FREE_AFTER = re.compile(r"^[\s-]*free\b")
_SIZE_RE = re.compile(
    r"\b(?:size|sizes|uk|eu|us)\s+((?:\d+(?:\.5)?)|xxs|xs|s|m|l|xl|xxl|xxxl)\b|\b(xxs|xs|xxl|xxxl|xl)\b"
)
_CONTEXT_RE = re.compile(
    r"\bfor\s+(?!(?:less|under|over|more|about|around|up to|between|at most|no more|a budget|\d|[£$€]))"
    r"((?:an?\s+|my\s+|the\s+|our\s+)?[\w' -]+?)(?=\s*(?:$|[,.;!?]|\band\b|\bor\b|\bplus\b|\bin\s+(?:black|white)|"
    r"\b(?:under|below|over|above|between|less than|up to)\b))",
    re.IGNORECASE,
)
_STOCK_ASK = re.compile(r"\bin\s+stock\b|\bavailable\s+(?:now|today)\b|\bnot\s+sold\s+out\b|\bavailable\b")
_SPLIT = re.compile(r"\s*(?:,|;|\band\b|\bor\b|\bplus\b|&|\bas well as\b|\balong with\b)\s*", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")


@lru_cache(maxsize=1)
def _concepts() -> tuple[tuple[str, re.Pattern[str], bool], ...]:
    """(attribute name, its cues, whether it takes a value) for every searchable lexicon attribute."""
    valued = set(_lexicon()["value_attributes"])
    return tuple(
        (c.name, re.compile("|".join(c.cues)), c.name in valued)
        for c in CONCEPTS
        if c.adjective is not None or c.name in valued
    )


@lru_cache(maxsize=1)
def _filler_stems() -> frozenset[str]:
    return frozenset(stem(w) for w in _lexicon()["search_fillers"])


def _negated(text: str, start: int, end: int) -> bool:
    return bool(_NEGATOR.search(text[:start])) or bool(_FREE_AFTER.match(text[end:]))


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    out = list(text)
    for start, end in spans:
        for i in range(max(0, start), min(len(out), end)):
            out[i] = " "
    return "".join(out)


def _negator_span(text: str, start: int) -> int:
    m = _NEGATOR.search(text[:start])
    return m.start() if m else start


def _read_pass(text: str) -> Pass:
    """Attributes, options and the kind of thing in one part of the question (lower-cased, prices masked)."""
    spans: list[tuple[int, int]] = []
    attributes: list[Attribute] = []
    for name, pattern, valued in _concepts():
        for m in pattern.finditer(text):
            if not m.group(0).strip():
                continue
            negated = _negated(text, m.start(), m.end())
            said = text[_negator_span(text, m.start()) if negated else m.start() : m.end()].strip()
            end = m.end()
            free = _FREE_AFTER.match(text[end:])
            if free:
                end += free.end()
            spans.append((_negator_span(text, m.start()) if negated else m.start(), end))
            if valued:
                word = m.group(0).strip().lower()
                if " " in word or stem(word) == stem(name):
                    continue  # "made of", "materials": asks about it, names no value
                attributes.append(Attribute(name, word, said, negated))
            else:
                attributes.append(Attribute(name, "false" if negated else "true", said, negated))
            break  # one requirement per attribute and pass
    options: list[OptionWanted] = []
    for m in _SIZE_RE.finditer(text):
        value = (m.group(1) or m.group(2)).lower()
        options.append(OptionWanted("size", value, _negated(text, m.start(), m.end())))
        spans.append(m.span())
    for m in _WORD.finditer(text):
        if m.group(0) in COLOUR_WORDS and not any(s <= m.start() < e for s, e in spans):
            negated = _negated(text, m.start(), m.end())
            options.append(OptionWanted("colour", m.group(0), negated))
            spans.append((_negator_span(text, m.start()) if negated else m.start(), m.end()))
    rest = _mask(text, spans)
    words = [w for w in _WORD.findall(rest) if not w.isdigit() and stem(w) not in _filler_stems()]
    from ask_engine.language import content_stems

    kind = " ".join(w for w in words if content_stems(w) and not _NEGATOR.fullmatch(w))
    return Pass(text=text.strip(), kind=kind, attributes=tuple(attributes), options=tuple(dict.fromkeys(options)))


def _passes(text: str) -> list[Pass]:
    parts = [p for p in _SPLIT.split(text) if p and p.strip()]
    read = [_read_pass(p) for p in parts] or [_read_pass(text)]
    merged: list[Pass] = []
    pending: list[Pass] = []
    for part in read:
        if not part.kind:
            pending.append(part)
            continue
        merged.append(_join([*pending, part]))
        pending = []
    if pending:
        if merged:
            merged[-1] = _join([merged[-1], *pending])
        else:
            merged.append(_join(pending))
    return merged


def _join(parts: list[Pass]) -> Pass:
    attributes: dict[str, Attribute] = {}
    for part in parts:
        for a in part.attributes:
            attributes.setdefault(a.key, a)
    options = tuple(dict.fromkeys(o for part in parts for o in part.options))
    kind = " ".join(p.kind for p in parts if p.kind)
    text = " and ".join(p.text for p in parts)
    return Pass(text=text, kind=kind, attributes=tuple(attributes.values()), options=options)


def read_constraints(
    query: str, shop_currency: str, *, context_intent: str | None = None, in_stock: bool = False
) -> Understood:
    """The constraints of a search question, in the shop's currency."""
    from ask_engine.answering.query import _clean_query

    text = _clean_query(query) or normalize(query)
    prices = _read_prices(text, shop_currency.upper())
    lower = _mask(text, prices.spans).lower()
    context = [m.group(1).strip() for m in _CONTEXT_RE.finditer(lower) if m.group(1).strip()]
    stock = in_stock or bool(_STOCK_ASK.search(lower))
    passes = _passes(_STOCK_ASK.sub(" ", _CONTEXT_RE.sub(" ", lower)))
    if context and not any(p.kind for p in passes):
        # "something for a wet walk" names nothing else: the "for ..." phrase is what is asked for
        passes, context = _passes(_STOCK_ASK.sub(" ", lower)), []
    if context_intent and context_intent.strip():
        context.append(context_intent.strip())
    currency = shop_currency.upper()
    stated = prices.currency
    understood = Understood(
        query=normalize(query),
        currency=currency,
        passes=tuple(passes),
        min_price_minor=minor_units(prices.low, stated or currency) if prices.low is not None else None,
        max_price_minor=minor_units(prices.high, stated or currency) if prices.high is not None else None,
        stated_currency=stated,
        in_stock=stock,
        context=tuple(dict.fromkeys(context)),
        degraded=stated is not None,
        notes=(f"price stated in {stated}, the shop prices in {currency}: not converted, not applied",)
        if stated
        else (),
    )
    return understood


def remember(now: Understood, earlier: list[Understood]) -> Understood:
    """`now` with the gaps it leaves filled from earlier messages of the conversation (latest first): the price
    bounds, the kind of thing, and attributes of a kind this message does not state. What it says always wins."""
    if not earlier:
        return now
    remembered: list[Remembered] = []
    low, high = now.min_price_minor, now.max_price_minor
    passes = list(now.passes)
    for past in earlier:
        stated = past.min_price_minor is not None or past.max_price_minor is not None
        if low is None and high is None and stated and past.price_applied:
            low, high = past.min_price_minor, past.max_price_minor
            for name, value in (("min_price", low), ("max_price", high)):
                if value is not None:
                    remembered.append(Remembered(name, value, past.query))
        if len(passes) == 1 and len(past.passes) == 1:
            current, before = passes[0], past.passes[0]
            if not current.kind and before.kind:
                current = replace(current, kind=before.kind)
                remembered.append(Remembered("kind", before.kind, past.query))
            keys = {a.key for a in current.attributes}
            added = tuple(a for a in before.attributes if a.key not in keys)
            if added:
                current = replace(current, attributes=current.attributes + added)
                remembered += [Remembered("attribute", a.wanted, past.query, key=a.key) for a in added]
            passes[0] = current
    if not remembered:
        return now
    return replace(now, min_price_minor=low, max_price_minor=high, passes=tuple(passes), remembered=tuple(remembered))
