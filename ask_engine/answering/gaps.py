"""What a "not recorded" answer was asked for, as data (`types.Gap`): the question log's list of missing fields."""

from __future__ import annotations

import re

from ask_engine.answering.facts import _is_plural_title, _unrecorded
from ask_engine.answering.query import _attribute_stems
from ask_engine.answering.restate import _asked_phrase
from ask_engine.language import CONCEPTS_BY_NAME, Intent, content_stems, word_list
from ask_engine.types import Document, Gap

_WORD = re.compile(r"[a-z][a-z0-9'-]*")
_MAX_WORDS = 4  # an attribute named in the question's own words: its first few content words
_QUANTITY_WORDS = word_list("quantity_words")  # "how much … this one": they name no attribute


def product_gaps(intent: Intent, doc: Document) -> list[Gap]:
    """The attributes of `doc` a question asked for: each lexicon concept it names that the product records no fact
    for (with the fact key that would answer it), else what the question asks in its own words with "it" for the
    product, as the "not recorded" sentence phrases it ("whether it comes with a rain cover"), else its content
    words beside the product's name."""
    missing = _unrecorded(intent, doc)
    if missing:
        return [
            Gap(field=CONCEPTS_BY_NAME[name].noun, key=CONCEPTS_BY_NAME[name].keys[0], doc_id=doc.id)
            for name in dict.fromkeys(missing)
        ]
    plural = _is_plural_title(doc.title)
    asked = _asked_phrase(intent, doc, "they" if plural else "it", "are" if plural else "is", plural)
    words = asked or asked_words(intent, doc)
    return [Gap(field=words, key=None, doc_id=doc.id)] if words else []


def asked_words(intent: Intent, doc: Document) -> str:
    """The question's words that are neither the product's name nor filler, in the order asked."""
    asked = _attribute_stems(intent, doc)
    out: list[str] = []
    for word in _WORD.findall(intent.lower):
        if content_stems(word) & asked and word not in out and word not in _QUANTITY_WORDS:
            out.append(word)
    return " ".join(out[:_MAX_WORDS])


def option_gap(word: str, doc: Document) -> Gap:
    """A kind of option the product does not come in ("colours" of a product sold in sizes only)."""
    return Gap(field=word, key=None, doc_id=doc.id)


def shop_gap(thing: str) -> Gap:
    """A thing nothing in the shop mentions ("gift wrapping"): no product, policy or page to record it on."""
    return Gap(field=thing, key=None, doc_id=None)
