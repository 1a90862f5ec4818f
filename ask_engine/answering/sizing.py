"""Which size fits: the product's own size guide read against what the question gives.

A size guide is what a product records pairing its size option's values with measures: description lines ("M: fits
necks 35-50 cm", "L: 69-94 cm") or the parts of a fact ("Dog size: Small: dogs up to 9 kg; Medium: 9-20 kg"). A
question about size that gives a measurement ("what size for a 42 cm neck?", "which size for a 15 kg dog?") is
answered by the entries whose range holds it; one that names a size ("what chest size does the large fit?") by that
size's entry. The size words ("large" for "L") are lexicon data ("size_words").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ask_engine.answering.commerce import _ASKS_SIZE, _is_size_option, _named_sizes, _options
from ask_engine.answering.measures import _AND_UP, _RANGE, _UP_TO, _base, _number, _unit, measures_in
from ask_engine.answering.units import product_units
from ask_engine.answering.work import _Answer, _cites_for, _is_untrusted, _plain, _Work
from ask_engine.language import content_stems
from ask_engine.types import Document

MAX_ENTRIES = 4  # a whole guide is quoted only up to this many entries; more is the option list's job


@dataclass(frozen=True)
class _Entry:
    value: str  # the size it is for ("M")
    text: str  # as the shop wrote it ("M: fits necks 35-50 cm, 25 mm wide")
    ranges: tuple[tuple[float, float, str], ...]  # (low, high, unit) of every range it states
    label: str = ""  # the fact's label, for a part of a fact ("Max dog weight")


def _ranges(text: str) -> tuple[tuple[float, float, str], ...]:
    """Every range `text` states, in its kind's base unit: (low, high, base unit)."""
    found = [(m.group(1), m.group(2), m.group(3)) for m in _RANGE.finditer(text)]
    found += [("0", m.group(1), m.group(2)) for m in _UP_TO.finditer(text)]
    found += [(m.group(1), "inf", m.group(2)) for m in _AND_UP.finditer(text)]
    out = []
    for low, high, unit in found:
        lo, base = _base(_number(low), _unit(unit))
        hi = math.inf if high == "inf" else _base(_number(high), _unit(unit))[0]
        out.append((lo, hi, base))
    return tuple(out)


def _entries(doc: Document, values: tuple[str, ...]) -> list[_Entry]:
    """The product's size guide: each line or fact part that starts with one of `values` (or a table row whose first
    cell is one) and states a range."""
    alternatives = "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))
    # "M: fits necks 35-50 cm", or a table's row whose first cell is the size ("Size: L, Chest girth: 70–85 cm")
    starts = re.compile(
        rf"^\s*(?:({alternatives})\s*[:=–-]|[^:,;]{{1,30}}:\s*({alternatives})\s*,)\s*\S",
        re.IGNORECASE,
    )
    out: list[_Entry] = []
    for unit in product_units(doc, untrusted=_is_untrusted):  # the units the ranker reads
        if unit.kind not in {"description", "fact"}:
            continue
        parts = [unit.text] if unit.kind == "description" else re.split(r"\s*;\s*", unit.value)
        for part in parts:
            match = starts.match(part)
            ranges = _ranges(part) if match else ()
            if match and ranges:
                named = match.group(1) or match.group(2)
                value = next(v for v in values if v.lower() == named.lower())
                text = part if unit.kind == "description" else f"{unit.label}: {part}"
                label = unit.label if unit.kind == "fact" else ""
                out.append(_Entry(value, text.rstrip(". ") + ".", ranges, label))
    return out


def _size_guide(work: _Work, doc: Document) -> _Answer | None:
    """The size guide's entries for the measurement or the size the question gives, or None."""
    intent = work.intent
    if intent.price or intent.stock or intent.colours:
        return None
    filled = [tuple(v for v in values if v.strip()) for name, values in _options(doc) if _is_size_option(name)]
    sizes = [values for values in filled if len(values) > 1]
    if not sizes:
        return None
    about_size = bool(_ASKS_SIZE.search(intent.lower)) or "fit" in intent.concepts
    named = _named_sizes(intent.text, sizes[0])
    if not (about_size or named):
        return None
    entries = _entries(doc, sizes[0])
    if not about_size:
        # "what's the weight limit of the XL?": a size named, and a fact by size whose label the question names
        entries = [e for e in entries if e.label and content_stems(e.label) & intent.stems]
    if not entries:
        return None
    figures = measures_in(intent.text)
    fitting = [e for e in entries if any(lo <= x <= hi and u == unit for x, unit in figures for lo, hi, u in e.ranges)]
    chosen = fitting or [e for e in entries if e.value in named]
    if not chosen:
        return None
    answer = _Answer()
    answer.use(doc.id)
    if intent.yes_no and named and fitting:
        # "is the large a good fit for an 80 cm chest?": the entry holding 80 cm says
        answer.meta("Yes." if any(e.value in named for e in fitting) else "No.")
    for entry in chosen[:MAX_ENTRIES]:
        answer.claim(
            f"{doc.title} — {_plain(entry.text)}",
            _cites_for(work.task, doc, entry.text),
            markdown=f"**{doc.title}** — {entry.text}",
            doc=doc.id,
        )
    return answer
