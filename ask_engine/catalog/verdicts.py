"""Per-product verdicts: does this product meet each stated constraint, and on what evidence?

Sources, as the Storeware reference names them:

- `live_price`, `inventory`: the prices, options and stock of the product's variants, as the index holds them;
- `enrichment`: the merchant's recorded facts (metafields, "Label: value" description lines, tags, the title and
  product type);
- `not_recorded`: the product has recorded facts, and none is about this attribute (always `not_assessed`);
- `unenriched`: nothing at all is recorded about the product (always `not_assessed`).

`not_assessed` is never a "no": the product is left out of the results because it cannot be shown to qualify, and
the verdict says what is missing. A yes/no fact decides; a less specific recorded value ("Waterproof rating: IPX4")
is reported as `found` with `not_assessed`, unless it states the attribute itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from ask_engine.catalog.constraints import Attribute, OptionWanted, Pass, Understood, minor_units
from ask_engine.language import CONCEPTS_BY_NAME, concept_words, content_stems, fact_key_matches, stem
from ask_engine.types import Document, Fact, Variant

Outcome = Literal["satisfied", "failed", "not_assessed"]
Source = Literal["live_price", "inventory", "enrichment", "not_recorded", "unenriched"]

_COMMERCE = frozenset({"price", "sale", "availability", "compare_at_price", "sku", "barcode"})
_IDENTITY = frozenset({"vendor", "product_type", "category"})
_LABELLED = re.compile(r"^([A-Z][\w' -]{0,30}?):\s+(\S.{0,200})$")
_BOOLEANS = {"yes": True, "true": True, "no": False, "false": False}
_DENIES = re.compile(r"^\s*(?:no|not|none|non)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    constraint: str  # "max_price" | "min_price" | "attribute" | "option" | "in_stock"
    outcome: Outcome
    wanted: Any
    found: Any
    source: Source
    key: str | None = None  # the attribute, or the option kind ("colour", "size")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"constraint": self.constraint, "outcome": self.outcome}
        if self.key is not None:
            out["key"] = self.key
        out.update({"wanted": self.wanted, "found": self.found, "source": self.source})
        return out


@dataclass(frozen=True)
class Judged:
    """One product against one pass of the question."""

    doc: Document
    pass_index: int
    verdicts: tuple[Verdict, ...]
    price_minor: int | None
    variants: tuple[Variant, ...]  # the variants that meet the options asked for, best first

    @property
    def qualifies(self) -> bool:
        return all(v.outcome == "satisfied" for v in self.verdicts)

    @property
    def price_only(self) -> bool:
        """Turned away by price alone: every other constraint is met."""
        unmet = [v for v in self.verdicts if v.outcome != "satisfied"]
        return bool(unmet) and all(v.constraint in ("max_price", "min_price") for v in unmet)


# --- what is recorded -------------------------------------------------------------------------------------


def recorded_facts(doc: Document) -> list[Fact]:
    """The merchant's recorded facts: metafields, and description lines written as "Label: value"."""
    from ask_engine.answering.facts import _safe_fact
    from ask_engine.answering.units import description_units

    facts = [
        _safe_fact(f)
        for f in doc.facts
        if f.source == "metafield" and f.key not in _COMMERCE and not f.key.endswith("_options")
    ]
    for unit in description_units(doc.body):
        m = _LABELLED.match(unit.text.rstrip("."))
        if m:
            label = m.group(1).strip()
            facts.append(Fact("_".join(re.findall(r"[a-z0-9]+", label.lower())), label, m.group(2).strip(), "line"))
    return [f for f in facts if f.value]


def enriched(doc: Document, facts: Sequence[Fact]) -> bool:
    return bool(facts) or bool(doc.tags)


def _boolean(value: str) -> bool | None:
    return _BOOLEANS.get(value.strip().strip(".").lower())


def _names(doc: Document) -> list[str]:
    """Where a product says what it is: its title, type and tags."""
    return [doc.title, doc.product_type or "", *doc.tags]


def _affirms(text: str, name: str) -> str | None:
    """The cue of attribute `name` that `text` uses without denying it ("non-waterproof" denies), or None."""
    lower = text.lower()
    for word in concept_words(text, name):
        at = lower.find(word.lower())
        if at >= 0 and not re.search(r"(?:\bnot|\bno|\bnon|\bwithout)[\s-]*$", lower[:at]):
            return word
    return None


# --- the verdicts -----------------------------------------------------------------------------------------


def _unknown(constraint: str, wanted: Any, doc: Document, facts: Sequence[Fact], key: str | None) -> Verdict:
    source: Source = "not_recorded" if enriched(doc, facts) else "unenriched"
    return Verdict(constraint, "not_assessed", wanted, None, source, key)


def attribute_verdict(doc: Document, facts: Sequence[Fact], attribute: Attribute) -> Verdict:
    concept = CONCEPTS_BY_NAME[attribute.key]
    wanted = attribute.wanted
    matching = [f for key in concept.keys for f in facts if fact_key_matches(f.key, key)]
    matching = list(dict.fromkeys(matching))
    if not attribute.yes_no:
        return _value_verdict(doc, facts, attribute, matching)
    want = wanted == "true"
    for fact in matching:
        value = _boolean(fact.value)
        if value is not None:
            outcome: Outcome = "satisfied" if value == want else "failed"
            return Verdict("attribute", outcome, wanted, ["true" if value else "false"], "enrichment", attribute.key)
    for text in _names(doc):
        word = _affirms(text, attribute.key) if text else None
        if word:
            return Verdict("attribute", "satisfied" if want else "failed", wanted, [text], "enrichment", attribute.key)
    for fact in matching:
        if _DENIES.match(fact.value):
            return Verdict(
                "attribute", "failed" if want else "satisfied", wanted, [fact.value], "enrichment", attribute.key
            )
        if _affirms(fact.value, attribute.key):
            return Verdict(
                "attribute", "satisfied" if want else "failed", wanted, [fact.value], "enrichment", attribute.key
            )
    if matching:
        # recorded, but less specific than asked: "Insulation: 200 g/m²" for "warm"
        return Verdict(
            "attribute", "not_assessed", wanted, [f.value for f in matching[:2]], "enrichment", attribute.key
        )
    return _unknown("attribute", wanted, doc, facts, attribute.key)


def _value_verdict(doc: Document, facts: Sequence[Fact], attribute: Attribute, matching: list[Fact]) -> Verdict:
    """A value the product must (or must not) record: "leather" in its material."""
    wanted_stem = stem(attribute.wanted)
    wanted = f"not {attribute.wanted}" if attribute.negated else attribute.wanted
    key = attribute.key

    def names(text: str) -> bool:
        return wanted_stem in content_stems(text) or attribute.wanted in text.lower()

    if matching:
        hit = [f.value for f in matching if names(f.value)]
        found = hit or [f.value for f in matching[:2]]
        outcome: Outcome = "satisfied" if bool(hit) != attribute.negated else "failed"
        return Verdict("attribute", outcome, wanted, found, "enrichment", key)
    named = [t for t in _names(doc) if t and names(t)]
    if named:
        return Verdict(
            "attribute", "failed" if attribute.negated else "satisfied", wanted, named[:1], "enrichment", key
        )
    return _unknown("attribute", wanted, doc, facts, key)


def _option_matches(value: str, option: OptionWanted) -> bool:
    if option.kind == "size":
        return bool(re.search(rf"(?<![\w.]){re.escape(option.value)}(?![\w.])", value.lower()))
    return option.value in re.findall(r"[a-z]+", value.lower())


def _is_axis(name: str, kind: str) -> bool:
    return stem(name.split()[-1].lower()) == stem(kind) if name.split() else False


def option_verdict(doc: Document, facts: Sequence[Fact], option: OptionWanted) -> tuple[Verdict, list[Variant]]:
    """A colour or size, from the variants' options (their stock too), else the recorded facts and names."""
    wanted = f"not {option.value}" if option.negated else option.value
    hits = [v for v in doc.variants if any(_option_matches(val, option) for _, val in v.options)]
    axis = [values for name, values in doc.options if _is_axis(name, option.kind)]
    if hits:
        if option.negated:
            others = [v for v in doc.variants if v not in hits]
            ok = any(v.available is not False for v in others)
            return Verdict(
                "option", "satisfied" if ok else "failed", wanted, _labels(hits), "inventory", option.kind
            ), others
        stocked = [v for v in hits if v.available is not False]
        if stocked:
            return Verdict("option", "satisfied", wanted, _labels(stocked), "inventory", option.kind), stocked
        return Verdict("option", "failed", wanted, ["sold out"], "inventory", option.kind), hits
    if axis:
        found = sorted({v for values in axis for v in values})[:20]
        outcome: Outcome = "satisfied" if option.negated else "failed"
        return Verdict("option", outcome, wanted, found, "inventory", option.kind), list(doc.variants)
    recorded = [f for f in facts if fact_key_matches(f.key, option.kind) or fact_key_matches(f.key, "color")]
    if option.kind == "colour":
        named = [t for t in [*(f.value for f in recorded), doc.title] if t and _option_matches(t, option)]
        if named:
            outcome = "failed" if option.negated else "satisfied"
            return Verdict("option", outcome, wanted, named[:1], "enrichment", option.kind), list(doc.variants)
    if recorded:
        return Verdict(
            "option", "not_assessed", wanted, [f.value for f in recorded[:2]], "enrichment", option.kind
        ), list(doc.variants)
    return _unknown("option", wanted, doc, facts, option.kind), list(doc.variants)


def _labels(variants: Sequence[Variant]) -> list[str]:
    return list(dict.fromkeys(v.title for v in variants))[:10]


def _price(variant: Variant, currency: str) -> int | None:
    try:
        return minor_units(Decimal(variant.price), currency) if variant.price else None
    except (InvalidOperation, ValueError):
        return None


def lowest_price(variants: Sequence[Variant], currency: str) -> int | None:
    """The lowest price among the variants in stock, else among all of them."""
    stocked = [p for v in variants if v.available is not False and (p := _price(v, currency)) is not None]
    every = [p for v in variants if (p := _price(v, currency)) is not None]
    return min(stocked or every) if (stocked or every) else None


def judge(doc: Document, index: int, part: Pass, understood: Understood, *, apply_price: bool = True) -> Judged:
    """Every verdict of one product against one pass, and the price of its best qualifying variant."""
    facts = recorded_facts(doc)
    verdicts: list[Verdict] = []
    variants = list(doc.variants)
    for option in part.options:
        verdict, matched = option_verdict(doc, facts, option)
        verdicts.append(verdict)
        if verdict.outcome == "satisfied" and verdict.source == "inventory":
            variants = [v for v in variants if v in matched]
    for attribute in part.attributes:
        verdicts.append(attribute_verdict(doc, facts, attribute))
    if understood.in_stock:
        known = [v.available for v in variants if v.available is not None]
        if not known:
            verdicts.append(Verdict("in_stock", "not_assessed", True, None, "inventory"))
        else:
            ok = any(known)
            verdicts.append(Verdict("in_stock", "satisfied" if ok else "failed", True, ok, "inventory"))
            variants = [v for v in variants if v.available is not False] or variants
    currency = doc.currency or understood.currency
    price = lowest_price(variants, currency)
    bounds = (("max_price", understood.max_price_minor), ("min_price", understood.min_price_minor))
    for name, bound in bounds if apply_price else ():
        if bound is None:
            continue
        if price is None:
            verdicts.append(Verdict(name, "not_assessed", bound, None, "not_recorded"))
            continue
        if name == "max_price":
            candidates = [p for v in variants if (p := _price(v, currency)) is not None and p <= bound]
            ok = bool(candidates)
            price = min(candidates) if candidates else price
        else:
            top = max((p for v in variants if (p := _price(v, currency)) is not None), default=price)
            ok = top >= bound
            price = price if price >= bound else top
        verdicts.append(Verdict(name, "satisfied" if ok else "failed", bound, price, "live_price"))
    ordered = sorted(variants, key=lambda v: (v.available is False, _price(v, currency) or 0))
    return Judged(doc, index, tuple(verdicts), price, tuple(ordered))
