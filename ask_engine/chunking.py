"""Documents → Passages: products as one fact sheet, policies and pages split on headings, one passage per FAQ entry.

Every passage is plain text with one sentence (or one fact, list item or table row) per line, so an extractive
answerer can quote lines as they are. Products start with a sentence naming the product; policy, page and FAQ
passages start with a heading line ("Refund Policy — Returns window." or the question) that carries the topic for
retrieval: short sections rarely repeat their topic ("5-7 working days, £14.95." under "Shipping — Norway"), so
without it neither BM25 nor the embedding model can match "Do you ship to Norway?". `quotable_lines` leaves that
heading line out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ask_engine.sources import format_money
from ask_engine.types import Document, Passage, ShopInfo, Variant

__all__ = ["FACT_SHEET_LIMIT", "SECTION_LIMIT", "passages", "quotable_lines"]

FACT_SHEET_LIMIT = 1200  # characters: one product fact sheet up to this size, split beyond
SECTION_LIMIT = 900  # characters: longer sections are split on paragraph boundaries
MAX_VARIANT_LINES = 12  # more variants than this are summarised in a one-passage fact sheet
_HEADER_FACTS = {"vendor", "product_type"}  # already in the product's first sentence
_FIRST_FACTS = {"price", "sale", "availability"}  # kept with the description when a fact sheet is split
_SENTENCE_END = (".", "!", "?", ":", ";", "…")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?…])\s+")


def passages(doc: Document, shop: ShopInfo) -> list[Passage]:
    """The passages of one document, ids f"{doc.id}#{n}" numbered from 0 in a stable order."""
    if doc.kind == "product":
        parts = [(doc.title, doc.url, text) for text in _product_texts(doc, shop)]
    elif doc.kind == "faq":
        parts = [(doc.title, doc.url, text) for text in _faq_texts(doc)]
    else:
        parts = _section_parts(doc)
    return [
        Passage(
            id=f"{doc.id}#{n}",
            doc_id=doc.id,
            text=text,
            title=title,
            url=url,
            kind=doc.kind,
            link_type=doc.link_type,
            gid=doc.gid,
        )
        for n, (title, url, text) in enumerate(parts)
    ]


def quotable_lines(passage: Passage) -> list[str]:
    """The lines of a passage an answer may quote: the heading/question line of a section or FAQ passage is left
    out (it is there for retrieval); every line of a product fact sheet is a statement."""
    lines = [line for line in passage.text.split("\n") if line.strip()]
    return lines if passage.kind == "product" else lines[1:]


# --------------------------------------------------------------------------------------------------- products


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text.rstrip("\"')]”’").endswith(_SENTENCE_END) else text + "."


def _product_header(doc: Document) -> str:
    """The sentence naming the product: Marsh Rain Boot by Northwind Outfitters (Rain boots)."""
    text = doc.title
    if doc.vendor and doc.vendor.casefold() not in doc.title.casefold():
        text += f" by {doc.vendor}"
    if doc.product_type:
        text += f" ({doc.product_type})"
    return _sentence(text)


def _is_default(variants: Sequence[Variant]) -> bool:
    return len(variants) == 1 and not variants[0].options


def _variant_line(variant: Variant, currency: str) -> str:
    name = f"Variant {variant.title}"
    if variant.sku:
        name += f" (SKU {variant.sku})"
    details = []
    if variant.price is not None:
        price = format_money(variant.price, currency)
        if variant.compare_at_price and _greater(variant.compare_at_price, variant.price):
            price += f", reduced from {format_money(variant.compare_at_price, currency)}"
        details.append(price)
    if variant.stock_words is not None:
        details.append(variant.stock_words)
    return f"{name}: {', '.join(details)}." if details else f"{name}."


def _greater(a: str, b: str) -> bool:
    try:
        return float(a.replace(",", "")) > float(b.replace(",", ""))
    except ValueError:
        return False


def _human_tags(tags: Sequence[str]) -> list[str]:
    # Shopify themes and apps use tags as switches ("__label:New", "filter_size_40"); those mean nothing to a shopper.
    return [t for t in tags if ":" not in t and not t.startswith("_") and "__" not in t]


def _product_texts(doc: Document, shop: ShopInfo) -> list[str]:
    currency = doc.currency or shop.currency
    header = _product_header(doc)
    first_facts = [_sentence(f"{f.label}: {f.value}") for f in doc.facts if f.key in _FIRST_FACTS]
    other_facts = [
        _sentence(f"{f.label}: {f.value}")
        for f in doc.facts
        if f.key not in _FIRST_FACTS and f.key not in _HEADER_FACTS
    ]
    if _is_default(doc.variants) and doc.variants[0].sku:
        other_facts.append(_sentence(f"SKU: {doc.variants[0].sku}"))
    notes = []
    if doc.disclosures:
        codes = ", ".join(dict.fromkeys(d.code.replace("_", " ") for d in doc.disclosures))
        notes.append(f"Disclosures recorded: {codes}.")
    tags = _human_tags(doc.tags)
    if tags:
        notes.append(_sentence("Tags: " + ", ".join(tags)))
    description = [line for line in doc.body.split("\n") if line.strip()]
    variants = [] if _is_default(doc.variants) else [_variant_line(v, currency) for v in doc.variants]

    # Facts before the description: the facts answer most questions and must survive any truncation downstream.
    summary = variants if len(variants) <= MAX_VARIANT_LINES else [f"{len(variants)} variants."]
    whole = [header, *first_facts, *other_facts, *notes, *description, *summary]
    text = "\n".join(whole)
    if len(text) <= FACT_SHEET_LIMIT:
        return [text]

    # Too long for one passage: keep facts and description together when they fit (the sheet reads as one),
    # variants after; else the overview (price, availability, disclosures, description), then the remaining facts,
    # then the variants. Each passage starts with the product sentence so it reads on its own.
    core = "\n".join([header, *first_facts, *other_facts, *notes, *description])
    if len(core) <= FACT_SHEET_LIMIT:
        return [core, *_pack(header, variants, SECTION_LIMIT)]
    texts = _pack(header, [*first_facts, *notes, *description], FACT_SHEET_LIMIT)
    texts += _pack(header, other_facts, SECTION_LIMIT)
    texts += _pack(header, variants, SECTION_LIMIT)
    return texts


# --------------------------------------------------------------------------------------------------- pages and FAQ


def _section_parts(doc: Document) -> list[tuple[str, str, str]]:
    parts: list[tuple[str, str, str]] = []
    for section in doc.sections:
        lead = not section.anchor or section.heading == doc.title
        title = doc.title if lead else f"{doc.title} — {section.heading}"
        lines = [line for line in section.text.split("\n") if line.strip()]
        parts += [(title, section.url, text) for text in _pack(_sentence(title), lines, SECTION_LIMIT)]
    if not parts and doc.body.strip():
        lines = [line for line in doc.body.split("\n") if line.strip()]
        parts = [(doc.title, doc.url, text) for text in _pack(_sentence(doc.title), lines, SECTION_LIMIT)]
    return parts


def _faq_texts(doc: Document) -> list[str]:
    answer = doc.sections[0].text if doc.sections else doc.body
    lines = [line for line in answer.split("\n") if line.strip()]
    question = doc.title.strip()
    return _pack(question, lines, FACT_SHEET_LIMIT)


def _pack(head: str, lines: Sequence[str], limit: int) -> list[str]:
    """Greedy packing of whole lines under `head`, each chunk at most `limit` characters where lines allow.

    A line longer than the budget is split on sentence boundaries, then on words.
    """
    budget = max(limit - len(head) - 1, 200)
    pieces: list[str] = []
    for line in lines:
        pieces += [line] if len(line) <= budget else _split_long(line, budget)
    chunks: list[list[str]] = []
    size = 0
    for piece in pieces:
        if chunks and size + 1 + len(piece) <= budget:
            chunks[-1].append(piece)
            size += 1 + len(piece)
        else:
            chunks.append([piece])
            size = len(piece)
    return ["\n".join([head, *chunk]) for chunk in chunks]


def _split_long(line: str, budget: int) -> list[str]:
    out: list[str] = []
    current = ""
    for sentence in _SENTENCE_SPLIT.split(line):
        words = [sentence] if len(sentence) <= budget else _split_words(sentence, budget)
        for part in words:
            if current and len(current) + 1 + len(part) > budget:
                out.append(current)
                current = part
            else:
                current = f"{current} {part}" if current else part
    if current:
        out.append(current)
    return out


def _split_words(text: str, budget: int) -> list[str]:
    out: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > budget:
            out.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        out.append(current)
    return out
