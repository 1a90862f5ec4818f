"""Answer units: every recorded thing of a product an answer may state or quote, as one candidate each.

A unit is a metafield fact ("Material: natural rubber"), an option with its name as the attribute ("Thickness: 4mm,
5mm, 6mm"), the brand, type or tags, or one description sentence. A list keeps its lead-in ("This set includes: a
teapot, a tray, 2 cups" is one unit), and a short heading line ("Features:") is the context of what follows it,
never a unit of its own. Shopify's single-variant placeholder ("Default Title") is never a value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from ask_engine.faithfulness import split_sentences
from ask_engine.types import Document, Fact

__all__ = ["COMMERCE_KEYS", "PLACEHOLDER_VALUES", "Unit", "description_units", "product_units", "usable_value"]

UnitKind = Literal["fact", "option", "identity", "description"]

# Facts answered by the price / stock / SKU logic, from the variants, not by attribute matching.
COMMERCE_KEYS = frozenset({"price", "sale", "availability", "compare_at_price", "sku", "barcode"})
IDENTITY_KEYS = frozenset({"vendor", "product_type", "category"})
# They name nothing: what Shopify writes for a product without options, and what export tools write into a field
# nobody filled (a schema's type name, "string"; JavaScript's and pandas' empty values)
PLACEHOLDER_VALUES = frozenset(
    {"default title", "default", "title", "string", "null", "undefined", "nan", "[object object]"}
)
_LIST_ITEM_CHARS = 90  # a line this short after a "…:" lead-in is one of its items
_HEADING_WORDS = 4
_LABELLED_LINE = re.compile(r"^[A-Z][^:]{0,30}:\s+\S")  # "Includes: …", "Length: 135 mm": a label and its value


@dataclass(frozen=True)
class Unit:
    """One candidate answer: what is shown, what kind of record it is, and the attribute it speaks of."""

    text: str  # as quoted or stated: "Material: natural rubber", or the description sentence
    kind: UnitKind
    label: str = ""  # the attribute ("Material", "Thickness"); "" for description sentences
    value: str = ""  # the recorded value (the sentence itself for description units)
    key: str = ""  # the fact key, for facts and options
    context: str = ""  # the heading a description sentence sits under
    position: int = 0  # order within the product
    lead: str = ""  # a list unit's lead-in ("Care:"), its items after it
    items: tuple[str, ...] = ()

    @property
    def fact(self) -> Fact | None:
        if self.kind == "description":
            return None
        return Fact(self.key, self.label, self.value, "metafield" if self.kind == "fact" else "field")


def usable_value(value: str) -> str:
    """The value as a shopper may read it, or "" when it is junk: empty, punctuation only, a spreadsheet's text
    marker (`'6`), or Shopify's placeholder."""
    text = value.strip()
    if text.startswith("'") and text[1:2].isalnum() and "'" not in text[1:]:
        text = text[1:]  # a spreadsheet's "store as text" apostrophe, not part of the value
    if not re.search(r"[^\W_]", text):
        return ""
    if text.casefold() in PLACEHOLDER_VALUES:
        return ""
    return text


def _option_values(fact: Fact) -> str:
    values = [v.strip() for v in fact.value.split(",") if usable_value(v)]
    return ", ".join(values)


def product_units(doc: Document, *, untrusted: object = None) -> list[Unit]:
    """Every unit of a product in a stable order: facts, options, identity, then the description.

    `untrusted` is a predicate over text (the guard's detector); units it flags are left out."""
    is_untrusted = untrusted if callable(untrusted) else (lambda _text: False)
    units: list[Unit] = []
    for fact in doc.facts:
        # A disclosure notice answers through the attribute lexicon's keys ("allergens", "age_restricted"), not the
        # ranker: it is several sentences of warnings, unlike the recorded facts the ranker was calibrated on.
        if fact.key in COMMERCE_KEYS or fact.source == "disclosure":
            continue
        if fact.key.endswith("_options"):
            value = _option_values(fact)
            name = fact.key[: -len("_options")].replace("_", " ")
            label = name[:1].upper() + name[1:]
            kind: UnitKind = "option"
        else:
            value = usable_value(fact.value)
            label = fact.label
            kind = "identity" if fact.key in IDENTITY_KEYS else "fact"
        if not value or is_untrusted(value):
            continue
        units.append(Unit(f"{label}: {value}", kind, label=label, value=value, key=fact.key))
    tags = [t for t in doc.tags if ":" not in t and not t.startswith("_") and usable_value(t)]
    if tags:
        units.append(Unit("Tags: " + ", ".join(tags), "identity", label="Tags", value=", ".join(tags), key="tags"))
    units += [u for u in description_units(doc.body) if not is_untrusted(u.text)]
    return [replace(u, position=n) for n, u in enumerate(units)]


def _is_title(line: str) -> bool:
    """A short line without figures that may title what follows it ("Materials:", "Key features")."""
    words = line.strip().rstrip(".:").split()
    return bool(words) and len(words) <= _HEADING_WORDS and not re.search(r"\d", line)


def _is_heading(line: str, following: str) -> bool:
    """A short title-like line ("Features", "Key Features:", "DESCRIPTION.") that names the prose after it. A short
    line followed by another short line is a list item ("Machine washable." then "Quick drying.")."""
    bare = line.strip().rstrip(".:")
    words = bare.split()
    if not words or len(words) > _HEADING_WORDS or re.search(r"\d", bare):
        return False
    if len(following.split()) < 8:
        return False
    titled = all(w[:1].isupper() or not w[:1].isalpha() for w in words)
    return line.rstrip().endswith(":") or titled or bare.isupper()


def description_units(body: str) -> list[Unit]:
    """Description lines → units: sentences, lead-ins joined with their list items, headings as context."""
    lines = [" ".join(line.split()) for line in body.split("\n") if line.strip()]
    units: list[Unit] = []
    context = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith(":"):
            sentences = [t.strip() for t in split_sentences(line) if t.strip()]
            if len(sentences) > 1:
                # "Headboard height 105 cm. Under-bed clearance 24 cm. External dimensions:": the sentences before
                # the lead-in are units of their own, the lead-in leads the list alone
                units += [Unit(t, "description", value=t, context=context) for t in sentences[:-1] if len(t) > 3]
                line = sentences[-1]
            items: list[str] = []
            j = i + 1
            while (
                j < len(lines)
                and len(lines[j]) <= _LIST_ITEM_CHARS
                and not lines[j].rstrip().endswith(":")
                and not _LABELLED_LINE.match(lines[j])  # "Includes: a quick link." starts a line of its own
                and len(split_sentences(lines[j])) < 2  # "Turnaround is 3 days. Parts are extra." is prose after it
            ):
                items.append(lines[j].rstrip(" ."))
                j += 1
            if items and len(items) >= 1 and not (len(items) == 1 and len(lines[i + 1]) > _LIST_ITEM_CHARS):
                text = f"{line.rstrip()} {'; '.join(items)}."
                units.append(
                    Unit(text, "description", value=text, context=context, lead=line.rstrip(), items=tuple(items))
                )
                if _is_title(line):
                    context = line.rstrip(" :")  # a heading's lines after its list ("Care:" …) are still under it
                i = j
                continue
            context = line.rstrip(" :")  # a lead-in with prose after it is that prose's heading
            i += 1
            continue
        if i + 1 < len(lines) and _is_heading(line, lines[i + 1]):
            context = line.rstrip(" .:")
            i += 1
            continue
        for sentence in split_sentences(line):
            text = sentence.strip()
            if len(text) > 3:
                units.append(Unit(text, "description", value=text, context=context))
        i += 1
    return units
