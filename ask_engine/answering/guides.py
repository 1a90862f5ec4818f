"""A product's size tables: the rows of its own description's table, the section of a size guide page for it, and a
size written in one sizing system read in another ("I'm a US 10, what EU size?").
"""

from __future__ import annotations

import re

from ask_engine.answering.options import _ASKS_SIZE
from ask_engine.answering.units import product_units
from ask_engine.answering.work import _Answer, _cites_for, _is_untrusted, _plain, _Work
from ask_engine.language import content_stems
from ask_engine.types import Document, Task

# a table's row as the shop's description gives it: "Dog's weight: 30–40 kg, Grams per day: 380–470 g."
_ROW = re.compile(r"^[^:,;]{1,40}:\s*[^:;]+?(?:,\s*[^:,;]{1,40}:\s*[^:;]+?)+\.?$")
_CELL = re.compile(r"([^:,;]{1,40}):\s*([^,;]+)")
# a size the question writes in a sizing system ("I'm a US 10", "an EU 44.5", "uk9"): the word before it and the size,
# no measure ("10 cm") nor part of a longer figure
_SYSTEM_SIZE = re.compile(
    r"\b([^\W\d_][\w'’]*)\s?(\d{1,2}(?:[.,]5)?)(?![.,]?\d)(?!\s*(?:cm|mm|m|in|inch\w*|kg|lbs?|g|oz|%|\"|”|″)\b)"
)
_NUMBER_CELL = re.compile(r"^\s*(\d{1,3}(?:[.,]\d)?)\s*\.?\s*$")


def _guide_sections(task: Task, doc: Document) -> list[tuple[str, str, str, int | None]]:
    """The lines of the evidence's page sections headed by the product's name (every word of its title, or of the
    heading, in the other), or of a page whose title shares two words or more with the product's: a size guide page's
    table for this product."""
    title = content_stems(doc.title)
    kind = content_stems(doc.product_type or "")
    out: list[tuple[str, str, str, int | None]] = []
    kinds: list[tuple[str, str, str, int | None]] = []
    for ev in task.evidence:
        passage = ev.passage
        if passage.kind != "page" or " — " not in passage.title:
            continue
        page, section = passage.title.split(" — ", 1)
        heading = content_stems(section)
        named = bool(heading) and bool(title) and (title <= heading or (len(heading) >= 2 and heading <= title))
        lines = [line.strip() for line in passage.text.split("\n")[1:] if line.strip()]
        # ... or, where no section is, by its kind ("Hoods & gloves" for a hood whose product type is "Hoods & Gloves",
        # "Men's wetsuits (Reefline & Bare)" for a suit of type "Wetsuits"; not another pair of gloves' own table), or
        # by words its kind and its name both say ("Rugs" for the "Burren Turnout Rug" of type "Turnout Rugs")
        if not named and kind and (kind <= heading or (bool(heading) and heading <= kind & title)):
            kinds += [(line, "", line, ev.number) for line in lines]
            continue
        # ... or a section of a guide whose own title names the product's kind in two words or more ("Bee Suit Size
        # Guide" for the "Ventilated Bee Suit"): only its rows starting with one of the product's sizes are read
        if not named and len(content_stems(page) & title) < 2:
            continue
        out += [(line, "", line, ev.number) for line in lines]
    return out or kinds


def _claim_line(answer: _Answer, work: _Work, doc: Document, text: str, cite: int | None = None) -> None:
    """A guide entry or table row quoted after the product's name: "Harness — Size: M, Chest girth: 56–72 cm."."""
    answer.claim(
        f"{doc.title} — {_plain(text)}",
        [cite] if cite is not None else _cites_for(work.task, doc, text),
        markdown=f"**{doc.title}** — {text}",
        doc=doc.id,
    )
    if cite is not None:
        # a size guide page's row: the page is linked beside the product
        answer.use(next(ev.passage.doc_id for ev in work.task.evidence if ev.number == cite))


def _system_words(label: str) -> frozenset[str]:
    """The words of a size column's heading, lower case, without a possessive's "s" ("US men's" → us, men)."""
    return frozenset(w for w in re.findall(r"[^\W\d_]+", label.lower()) if w != "s")


def converted_row(work: _Work, doc: Document) -> _Answer | None:
    """ "I'm a US 10, what EU size do I need?": the rows of the product's own size table, or of the size guide's
    section for it, whose column headed by the system the question writes its size in holds that size ("US men's: 10,
    EU: 44, UK: 9, Foot length (cm): 27.5"); None where no row, or more than two, does."""
    intent = work.intent
    if intent.price or intent.stock or not _ASKS_SIZE.search(intent.lower):
        return None
    asked = [
        (re.sub(r"['’]s$", "", m.group(1)), float(m.group(2).replace(",", ".")))
        for m in _SYSTEM_SIZE.finditer(intent.lower)
    ]
    if not asked:
        return None
    units = product_units(doc, untrusted=_is_untrusted)
    rows: list[tuple[str, int | None]] = [
        (u.text.strip(), None) for u in units if u.kind == "description" and _ROW.match(u.text.strip())
    ]
    rows += [(line, cite) for line, _, _, cite in _guide_sections(work.task, doc) if _ROW.match(line)]

    said = {re.sub(r"['’]s$", "", w) for w in re.findall(r"[^\W\d_][\w'’]*", intent.lower)} - {"size", "sizes"}

    def holds(line: str) -> bool:
        # a cell in the system the size is written in holding it, and another column the question names ("… what EU
        # size?"): "how much in size 22?" asks no other system
        cells = [(_system_words(label), _NUMBER_CELL.match(value)) for label, value in _CELL.findall(line)]
        for i, (words, number) in enumerate(cells):
            if number and any(w in words and float(number.group(1).replace(",", ".")) == n for w, n in asked):
                return any(said & (other - {"size", "sizes"}) for j, (other, _) in enumerate(cells) if j != i)
        return False

    found = list(dict.fromkeys((line, cite) for line, cite in rows if holds(line)))
    if not found or len(found) > 2:
        return None
    answer = _Answer()
    answer.use(doc.id)
    for line, cite in found:
        _claim_line(answer, work, doc, line.rstrip(". ") + ".", cite)
    return answer
