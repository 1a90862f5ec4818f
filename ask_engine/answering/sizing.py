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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from ask_engine.answering.addressing import asked_measures
from ask_engine.answering.facts import _fact_sentence, _ranked_units
from ask_engine.answering.guides import _CELL, _ROW, _claim_line, _guide_sections, converted_row
from ask_engine.answering.measures import _FIGURE, in_inches, measure, measures_in, with_label_units
from ask_engine.answering.measures import ranges_in as _ranges
from ask_engine.answering.options import (
    _ASKS_SIZE,
    _ASKS_WHICH,
    _FOR_SITUATION,
    _free_figures,
    _holding_values,
    _is_size_option,
    _match_options,
    _named_sizes,
    _options,
    _variants_with,
    value_stems,
)
from ask_engine.answering.query import _title_stems
from ask_engine.answering.ranker import lexicon
from ask_engine.answering.units import product_units
from ask_engine.answering.work import _Answer, _cites_for, _is_untrusted, _plain, _Unit, _Work
from ask_engine.language import content_stems, mentions_concept, text_cue
from ask_engine.types import Document, Task

MAX_ENTRIES = 4  # a whole guide is quoted only up to this many entries; more is the option list's job
_T = TypeVar("_T")


@dataclass(frozen=True)
class _Entry:
    value: str  # the size it is for ("M")
    text: str  # as the shop wrote it ("M: fits necks 35-50 cm, 25 mm wide")
    ranges: tuple[tuple[float, float, str], ...]  # (low, high, unit) of every range it states
    label: str = ""  # the fact's label, for a part of a fact ("Max dog weight")
    cite: int | None = None  # the evidence number of the size guide page's section it comes from


def _entries(doc: Document, values: tuple[str, ...], task: Task | None = None) -> list[_Entry]:
    """The product's size guide: each line or fact part that starts with one of `values` (or a table row whose first
    cell is one) and states a range; with `task`, the product's own section of a size guide page among the evidence
    too (a "Harness & Collar Size Guide" with a "TrailMate No-Pull Dog Harness" table), when its own text has none."""
    alternatives = "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))
    # "M: fits necks 35-50 cm", or a table's row whose first cell is the size ("Size: L, Chest girth: 70–85 cm")
    starts = re.compile(
        rf"^\s*(?:({alternatives})\s*[:=–-]|[^:,;]{{1,30}}:\s*({alternatives})\s*,)\s*\S",
        re.IGNORECASE,
    )
    # "S 54-56 cm, M 56-58 cm, L 58-60 cm": a size written before its range, one entry after another in a line
    inline = re.compile(rf"(?:^|[,;./]\s+)({alternatives})\s+(?=\d)", re.IGNORECASE)
    parts: list[tuple[str, str, str, int | None]] = []  # (part, its label, the text quoted, the page's evidence)
    for unit in product_units(doc, untrusted=_is_untrusted):  # the units the ranker reads
        if unit.kind == "description":
            parts.append((unit.text, "", unit.text, None))
        elif unit.kind == "fact":
            # (its parts split at a semicolon, or at a dot or bar set between them: "Pony: 15–16.5" · Cob: 16.5–17.5"")
            parts += [
                (p, unit.label, f"{unit.label}: {p}", None) for p in re.split(r"\s*(?:;|\s[·•|]\s)\s*", unit.value)
            ]
    own = _matching(parts, starts, values)
    if own or task is None:
        return own
    sections = _guide_sections(task, doc)
    return _matching(sections, starts, values) or _matching(_inline(sections, inline), starts, values)


def _inline(
    parts: Sequence[tuple[str, str, str, int | None]], inline: re.Pattern[str]
) -> list[tuple[str, str, str, int | None]]:
    """The entries of lines giving two sizes or more each before its range ("Hood: measure around your head. S 54-56
    cm, M 56-58 cm, L 58-60 cm"), each as its own part led by the line's label ("Hood: M 56-58 cm"); the sizes are of
    letters (a figure before a range is more often a count)."""
    out: list[tuple[str, str, str, int | None]] = []
    for part, _, _, cite in parts:
        found = [m for m in inline.finditer(part) if re.search(r"[^\W\d_]", m.group(1))]
        out += [
            (f"{size}: {piece[len(size) :].strip()}", "", quoted, cite) for size, piece, quoted in _pieces(part, found)
        ]
    return out


def _pieces(line: str, found: Sequence[re.Match[str]]) -> list[tuple[str, str, str]]:
    """Each size `found` in `line` with its piece ("M 56-58 cm") and the piece as quoted after the line's label ("Hood:
    M 56-58 cm"), where the line gives two sizes or more."""
    if len(found) < 2:
        return []
    label = re.match(r"^([^:.;,]{1,30}):", line)
    lead = f"{label.group(1)}: " if label else ""
    out: list[tuple[str, str, str]] = []
    for m, after in zip(found, [*found[1:], None], strict=True):
        piece = line[m.start(1) : after.start() if after is not None else len(line)].rstrip(" ,;./")
        out.append((m.group(1), piece, f"{lead}{piece}"))
    return out


def _matching(
    parts: Sequence[tuple[str, str, str, int | None]], starts: re.Pattern[str], values: tuple[str, ...]
) -> list[_Entry]:
    out: list[_Entry] = []
    for part, label, text, cite in parts:
        match = starts.match(part)
        ranges = _ranges(part) if match else ()
        if match and ranges:
            named = match.group(1) or match.group(2)
            value = next(v for v in values if v.lower() == named.lower())
            out.append(_Entry(value, text.rstrip(". ") + ".", ranges, label, cite))
    return out


def _asked_ranges(text: str, stems: frozenset[str]) -> tuple[tuple[float, float, str], ...]:
    """The ranges of the cells of a table row whose heading the question names: for "a 60 cm chest", "Chest girth:
    56–72 cm" and not "Neck girth: 46–62 cm"; () when it names none, or `text` is no row of cells ("Sizes: S for dogs
    under 10 kg, M for 10–25 kg" is one sentence)."""
    cells = _CELL.findall(with_label_units(text))
    if len(cells) < 2:
        return ()
    return tuple(r for label, value in cells if content_stems(label) & stems for r in _ranges(value))


# a child's age said bare ("my son is 6", "she's for my daughter who turns 4"): lexicon data
_CHILD_AGE = text_cue("child_age", re.IGNORECASE)


def asked_figures(text: str) -> list[tuple[float, str]]:
    """The figures with a unit `text` gives (`measures_in`), and a child's age said without one ("my son is 6", in
    months as "6 years" reads), so an age column's "4–7" holds it."""
    return measures_in(text) + [(float(m.group("age")) * 12.0, "month") for m in _CHILD_AGE.finditer(text)]


def _beside_figures(text: str, only: int | None = None) -> frozenset[str]:
    """The content stems of the words just before and after each figure of `text` ("a 60 cm chest" → chest), or of
    its `only`-th: what the figure measures, if the question says. Feet and inches are read as measures_in reads
    them ("5'10" is one figure, 70 in), so the `only`-th is the same figure."""
    text = in_inches(text)
    words: list[str] = []
    for n, m in enumerate(_FIGURE.finditer(text)):
        if only is not None and n != only:
            continue
        words += re.findall(r"[\w'-]+", text[max(0, m.start() - 30) : m.start()])[-2:]
        words += re.findall(r"[\w'-]+", text[m.end() : m.end() + 30])[:2]
    return content_stems(" ".join(words))


def _held_in(
    text: str,
    stems: frozenset[str],
    figures: Sequence[tuple[float, str]],
    ranges: tuple[tuple[float, float, str], ...],
) -> tuple[float, float] | None:
    """`_held` over the ranges of the columns named by the words beside the question's figures (`stems`) that
    measure what the figures do ("a 60 cm chest": the chest's column), else over all of `ranges` ("my lab is 32 kg,
    how much a day?" names no column beside its figure)."""
    units = {u for _, u in figures}
    asked = tuple(r for r in _asked_ranges(text, stems) if r[2] in units)
    return _held(asked or ranges, figures)


def _held(
    ranges: Sequence[tuple[float, float, str]], figures: Sequence[tuple[float, str]]
) -> tuple[float, float] | None:
    """The narrowest of `ranges` that holds one of `figures` (in the same base unit), or None."""
    holding = [(lo, hi) for x, unit in figures for lo, hi, u in ranges if u == unit and lo <= x <= hi]
    return min(holding, key=lambda r: r[1] - r[0]) if holding else None


def _tightest(items: Sequence[_T], held: Callable[[_T], tuple[float, float] | None]) -> list[_T]:
    """The items with a range holding the figure, less any whose range holds another's whole: for a 20 kg dog
    "up to 25 kg" and not also "up to 38 kg"; for a 71 cm chest both "56–72 cm" and "70–90 cm"."""
    ranges = [(item, r) for item in items if (r := held(item)) is not None]
    return [
        item for item, (lo, hi) in ranges if not any((lo, hi) != (a, b) and lo <= a and b <= hi for _, (a, b) in ranges)
    ]


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
    # (of two size options, the one the guide has entries for: "Size", not the "Fit: Men's, Women's" before it)
    found = ((v, _entries(doc, v, work.task)) for v in sizes)
    values, entries = next(((v, e) for v, e in found if e), (sizes[0], [])) if len(sizes) > 1 else (sizes[0], None)
    named = _named_sizes(intent.text, values)
    if not (about_size or named):
        return None
    entries = _entries(doc, values, work.task) if entries is None else entries
    if not about_size:
        # "what's the weight limit of the XL?": a size named, and a fact by size whose label the question names
        entries = [e for e in entries if e.label and content_stems(e.label) & intent.stems]
    if not entries:
        return None
    figures = asked_figures(intent.text)
    fitting = _fitting(entries, intent.text, figures)
    # a size named with no figure to fit ("is it on sale? need a size 14") asks for that variant, not its chart entry,
    # unless the question asks for a kind of figure ("how long is the 14?") or names one of the entry's labels
    asks_entry = (
        bool(asked_measures(intent.text))
        or "fit" in intent.concepts
        or any(e.label and content_stems(e.label) & intent.stems for e in entries)
    )
    chosen = fitting or ([e for e in entries if e.value in named] if asks_entry or figures else [])
    if not chosen:
        return None
    answer = _Answer()
    answer.use(doc.id)
    if intent.yes_no and named and fitting:
        # "is the large a good fit for an 80 cm chest?": the entry holding 80 cm says
        answer.meta("Yes." if any(e.value in named for e in fitting) else "No.")
    for entry in chosen[:MAX_ENTRIES]:
        _claim_line(answer, work, doc, entry.text, entry.cite)
    return answer


def _fitting(entries: Sequence[_Entry], text: str, figures: Sequence[tuple[float, str]]) -> list[_Entry]:
    """The entries holding the question's figures, the tightest; of several figures, those holding the most ("chest
    74cm waist 64cm": the entry holding both, Child M, not one holding only the waist, Child L)."""
    beside = _beside_figures(text)
    fitting = _tightest(entries, lambda e: _held_in(e.text, beside, figures, e.ranges))
    if len(figures) > 1 and len(fitting) > 1:
        # (each figure by its own words: "im 178cm and my kayak is 61cm wide" holds 61 cm in the kayak's column only)
        each = [_beside_figures(text, n) for n in range(len(figures))]
        held = {
            id(e): sum(_held_in(e.text, b, [f], e.ranges) is not None for b, f in zip(each, figures, strict=True))
            for e in fitting
        }
        fitting = [e for e in fitting if held[id(e)] == max(held.values())]
    if not fitting:
        # a chart of one measure per size ("UK size: 14, Bust (cm): 100, Waist (cm): 82"): for each figure, the first
        # size whose measure in the column the figure is said with ("bust 96cm", "96 cm bust") reaches it, since a
        # body fits the size at or above its measure; the largest of them for several ("bust 96, hips 108": UK 16)
        for n, (x, unit) in enumerate(figures):
            stems = _label_of(text, n)
            points = [(v, e) for e in entries for v, u in _asked_points(e.text, stems) if u == unit]
            above = [(v, e) for v, e in points if v >= x]
            if stems and len(points) > 1 and above:
                fitting.append(min(above, key=lambda p: p[0])[1])
        fitting = sorted(set(fitting), key=entries.index)[-1:]
    return fitting


def _asked_points(text: str, stems: frozenset[str]) -> list[tuple[float, str]]:
    """The single figures of the cells of a table row whose heading the question names ("Bust (cm): 100" for "bust
    96cm"), in their kind's base unit."""
    cells = _CELL.findall(with_label_units(text))
    if len(cells) < 2:
        return []
    found = [measure(value) for label, value in cells if content_stems(label) & stems and not _ranges(value)]
    return [m for m in found if m is not None]


def _label_of(text: str, n: int) -> frozenset[str]:
    """The content stems of the word(s) the question says its `n`-th figure with, in its own clause: before it ("bust
    96cm"), else after it ("96 cm bust"); `n` counts the figures as measures_in does ("I'm 5'10 with a 70 inch
    wingspan": two figures, 70 in and 70 in)."""
    text = in_inches(text)
    found = list(_FIGURE.finditer(text))
    start = found[n - 1].end() if n else 0
    before = re.split(r"[,;.?!]", text[start : found[n].start()])[-1]
    stems = content_stems(" ".join(re.findall(r"[^\W\d_]+", before)[-2:]))
    after = re.split(r"[,;.?!]", text[found[n].end() :])[0]
    return stems or content_stems(" ".join(re.findall(r"[^\W\d_]+", after)[:2]))


# a size guide's entry with no product to name its sizes: a table row led by a size cell ("Size: ML, Height (cm):
# 173-180, …"), or a letter size written before its range ("S 54-56 cm, M 56-58 cm")
_SIZE_ROW = re.compile(r"^\s*([^:,;]{1,30}):\s*([^:,;]{1,12}?)\s*,\s*\S")
_LETTER_SIZE = re.compile(r"(?:^|[,;./]\s+)((?:[2-4]?X{0,3}[SML]{1,2}|XL)(?:/(?:[2-4]?X{0,3}[SML]{1,2}|XL))?)\s+(?=\d)")


def page_sizes(work: _Work, ranked: Sequence[_Unit]) -> _Answer | None:
    """ "head measures 57 cm, which hood size?" naming no product: the entries of the best-ranked size guide section
    (among the first three sentences' sections of pages) whose ranges hold the question's figures, or None; for a
    question asking a kind of figure, the rows of any table there ("what length paddle? my kayak is 61cm wide")."""
    intent = work.intent
    # (or a question asking a figure: "what length paddle? my kayak is 61cm wide", any table row holding it)
    measured = bool(asked_measures(intent.text))
    if intent.price or intent.stock or not (_ASKS_SIZE.search(intent.lower) or measured):
        return None
    figures = asked_figures(intent.text)
    if not figures:
        return None
    for unit in ranked[:3]:
        passage = unit.evidence.passage
        if passage.kind != "page":
            continue
        entries: list[_Entry] = []
        for line in (line.strip() for line in passage.text.split("\n")[1:]):
            row = _SIZE_ROW.match(line)
            if row and "siz" in content_stems(row.group(1)):
                entries.append(_Entry(row.group(2), line, _ranges(line), cite=unit.evidence.number))
                continue
            if measured and _ROW.match(line):
                entries.append(
                    _Entry(_CELL.findall(line)[0][1].strip(), line, _ranges(line), cite=unit.evidence.number)
                )
                continue
            for size, piece, quoted in _pieces(line, list(_LETTER_SIZE.finditer(line))):
                entries.append(_Entry(size, quoted, _ranges(piece), cite=unit.evidence.number))
        fitting = _fitting(entries, intent.text, figures)
        if fitting:
            answer = _Answer()
            for entry in fitting[:MAX_ENTRIES]:
                answer.claim(_plain(entry.text).rstrip(". ") + ".", [unit.evidence.number], doc=passage.doc_id)
            answer.use(passage.doc_id)
            return answer
    return None


def _table_row(work: _Work, doc: Document) -> _Answer | None:
    """ "My lab is 32 kg, how much of this a day?": the rows of the product's own table with a range holding the
    figure the question gives ("Dog's weight: 30–40 kg, Grams per day: 380–470 g"), the narrowest first; with no such
    row, its description's sentences stating a bound that holds it ("my dog is only 4 kg, can she have these?" and
    "Not suitable for dogs under 5 kg"). None when the question gives no figure, or nothing or too much holds it. A
    figure naming one of the product's variants ("the 7 kg bag") picks the variant, not a row."""
    intent = work.intent
    if intent.price or intent.stock:
        return None
    own = {m for v in doc.variants for m in measures_in(v.title)}
    figures = [f for f in asked_figures(intent.text) if f not in own]
    if not figures:
        return None
    units = [u for u in product_units(doc, untrusted=_is_untrusted) if u.kind == "description"]
    rows = [u for u in units if _ROW.match(u.text.strip())]
    sentences = [u for u in units if u not in rows]
    beside = _beside_figures(intent.text)
    for candidates in (rows, sentences):
        fitting = _tightest(candidates, lambda u: _held_in(u.text, beside, figures, _ranges(u.text)))
        if fitting:
            break
    if not fitting or len(fitting) > 2:
        return None
    answer = _Answer()
    answer.use(doc.id)
    for unit in fitting:
        _claim_unit(answer, work, doc, unit.text.strip())
    return answer


def _claim_unit(answer: _Answer, work: _Work, doc: Document, text: str) -> None:
    """A table row quoted after the product's name (`_claim_line`), any other line as it stands."""
    if _ROW.match(text):
        _claim_line(answer, work, doc, text.rstrip(". ") + ".")
    else:
        answer.claim(text, _cites_for(work.task, doc, text), doc=doc.id)


def named_row(work: _Work, doc: Document) -> _Answer | None:
    """ "which spray deck do I need for a Kahu Kōwhai 12?": the one row of the product's own table that names a thing
    the question names beyond the product itself ("Deck size: Large cockpit, …, Examples: Kahu Kōwhai 12, …"), for a
    question asking which version suits; None where no row, or more than one, does."""
    intent = work.intent
    # (or how much of it: "how much manure per square metre on the veg beds?" and "Use: Veg beds, Rate: 150g per m²")
    if intent.price or intent.stock or not (_ASKS_WHICH.search(intent.lower) or intent.asks_quantity):
        return None
    units = [u for u in product_units(doc, untrusted=_is_untrusted) if u.kind == "description"]
    rows = [u for u in units if _ROW.match(u.text.strip())]
    if len(rows) < 2:
        return None
    own = _title_stems(doc) | content_stems(doc.product_type or "") | value_stems(doc)
    asked = {w for w in intent.stems - own if not w.isdigit()}
    common = frozenset.intersection(*(content_stems(r.text) for r in rows))  # every row's words ("Deck size")
    naming = [u for u in rows if asked & content_stems(u.text) - common]
    if len(naming) != 1:
        return None
    answer = _Answer()
    answer.use(doc.id)
    _claim_line(answer, work, doc, naming[0].text.strip().rstrip(". ") + ".")
    return answer


SUITED_MIN = 0.5  # the ranker's probability a line naming a value must reach to answer which value suits
SUITED_MARGIN = 0.05  # ... and the lines within this of the best one's answer beside it


def chosen_row(work: _Work, doc: Document) -> _Answer | None:
    """The one row of the product's table naming what the question names (`named_row`), else the lines naming the
    option value that suits the asker's situation (`suited`)."""
    return converted_row(work, doc) or named_row(work, doc) or suited(work, doc)


def suited(work: _Work, doc: Document) -> _Answer | None:
    """ "what length hand wraps for my 8 yr old?", "which thickness if we do judo throws?": a choice among the
    product's option values for the asker's situation is answered by the description lines naming a value that the
    ranker finds answer the question best ("120\" is for kids and small hands."; two at most, within SUITED_MARGIN
    of the best), not by the list of the values; None when the question gives no situation of its own or no line
    naming a value reaches SUITED_MIN."""
    intent = work.intent
    situation = _FOR_SITUATION.search(intent.lower)
    if intent.price or intent.stock or not intent.options or situation is None:
        return None
    values = [v for _, vs in _options(doc) if len(vs) > 1 for v in vs]
    own = _title_stems(doc) | content_stems(doc.product_type or "") | value_stems(doc)
    # (the product named with a figure naming a value is no situation: "fuse for the dcdc 40" of variants "25A", "40A")
    rest = {w for w in content_stems(intent.text[situation.end() :]) - own if not (w.isdigit() and _figure_of(w, own))}
    if not values or not rest:
        return None

    measured = [(v, set(measures_in(v))) for v in values]  # each value's own figures ("120 in"), none for "Camo"

    def names_value(text: str) -> bool:
        figures = set(measures_in(text))
        return any(held & figures if held else re.search(rf"\b{re.escape(v)}\b", text, re.I) for v, held in measured)

    ranked = [(p, u) for p, u in _ranked_units(work, doc) if u.kind == "description" and names_value(u.text)]
    if not ranked or ranked[0][0] < SUITED_MIN:
        return None
    answer = _Answer()
    answer.use(doc.id)
    for _, unit in [r for r in ranked if r[0] >= ranked[0][0] - SUITED_MARGIN][:2]:
        _claim_unit(answer, work, doc, unit.text.strip())
    return answer


def _figure_of(figure: str, stems: frozenset[str]) -> bool:
    """`figure` is the figure of one of `stems` written with its unit ("40" of "40a")."""
    return any(s.startswith(figure) and s[len(figure) :].isalpha() for s in stems)


def _variant_row(work: _Work, doc: Document) -> _Answer | None:
    """ "How many links does the 11-speed chain have?": the row of the product's own table for the variant the
    question names (its first cell is one of the option values named: "Speed: 11-speed, Links: 118, …"), when the
    question also names another of the row's headings; None otherwise."""
    intent = work.intent
    if intent.price or intent.stock:
        return None
    chosen, _ = _match_options(intent, _options(doc))
    named = {v.casefold() for values in chosen.values() for v in values}
    if len(named) != 1:
        return None
    # the row's first cell is the value, or the same quantity ("14 oz" for the "14 oz Tumbler" the big one is)
    quantity = measure(next(iter(named)))
    rows = []
    for unit in product_units(doc, untrusted=_is_untrusted):
        cells = _CELL.findall(unit.text) if unit.kind == "description" and _ROW.match(unit.text.strip()) else []
        first = cells[0][1].strip().rstrip(".") if cells else ""
        if cells and (first.casefold() in named or (quantity is not None and measure(first) == quantity)):
            labels = " ".join(label for label, _ in cells[1:])
            headings = content_stems(labels)
            # ... by its word, or by the attribute the lexicon reads ("how heavy is the 28mm?" and "Weight: 245 g")
            if headings & (intent.stems - _title_stems(doc) - content_stems(" ".join(named))) or any(
                mentions_concept(labels, c) for c in intent.concepts
            ):
                rows.append(unit)
    if not rows or len(rows) > 2:
        return None
    answer = _Answer()
    answer.use(doc.id)
    for row in rows:
        _claim_line(answer, work, doc, row.text.strip().rstrip(". ") + ".")
    return answer


def _held_value(work: _Work, doc: Document) -> _Answer | None:
    """ "she weighs 17kg, which one?", "ok for a 7 year old?": the option value whose own range holds the question's
    figure ("Size: Child 15–25 kg", "Age: 6-8 years"), with its stock where none of its variants can be bought; None
    where the question asks no choice of version, gives no such figure, or no value holds it."""
    intent = work.intent
    if intent.price or intent.stock or not _ASKS_WHICH.search(intent.lower):
        return None
    options = _options(doc)
    figures = _free_figures(intent, options)
    for name, values in options if figures else ():
        held = _holding_values(values, figures)
        if held is None:
            continue
        answer = _Answer()
        answer.use(doc.id)
        cites = _cites_for(work.task, doc, held)
        answer.claim(f"{name}: {held}.", cites, doc=doc.id)
        variants = _variants_with(doc, {name: [held]})
        if variants and all(v.available is False for v in variants):
            answer.claim(f"{held} is {variants[0].stock_words}.", cites, doc=doc.id)
        return answer
    return None


@lru_cache(maxsize=4)
def _party_patterns(language: str = "en") -> tuple[tuple[re.Pattern[str], ...], frozenset[str], dict[str, int]]:
    lex = lexicon(language)
    patterns = tuple(re.compile(p) for p in lex.get("party_sizes", ()))
    labels = frozenset().union(*(content_stems(label) for label in lex.get("person_labels", ())))
    return patterns, labels, {k: int(v) for k, v in lex.get("number_values", {}).items()}


_PEOPLE_RANGE = re.compile(r"(\d+)\s*(?:-|–|to)\s*(\d+)")
_PEOPLE_FLOOR = re.compile(r"(\d+)\s*(?:\+|or more|and (?:up|over))|\bat least (\d+)")
_PEOPLE_CEILING = re.compile(r"\b(?:up to|max(?:imum)?\.?|no more than)\s*(\d+)")
_PEOPLE_ONE = re.compile(r"^\D*?(\d+)\b(?!\s*(?:-|–|to)\s*\d)")


def _people_range(value: str) -> tuple[int, float] | None:
    """How many people a value says ("2–4", "5-10 (with the expansion)", "up to 6", "2+", "2"), as (low, high)."""
    if m := _PEOPLE_RANGE.search(value):
        return int(m.group(1)), int(m.group(2))
    if m := _PEOPLE_FLOOR.search(value):
        return int(m.group(1) or m.group(2)), math.inf
    if m := _PEOPLE_CEILING.search(value):
        return 1, int(m.group(1))
    if m := _PEOPLE_ONE.match(value):
        return int(m.group(1)), int(m.group(1))
    return None


def _party_size(work: _Work, doc: Document) -> _Answer | None:
    """ "Can we play it with 6 people?", "we're only 4, can we play it?": the product's fact saying how many people it
    is for (its label one of the lexicon's `person_labels`: "Players: 2–4"), with "Yes." or "No." as the number the
    question gives is in its range or not; None when the question gives no number of people or no such fact."""
    patterns, labels, values = _party_patterns()
    low = work.intent.lower
    counts = [m.group(1) for p in patterns for m in p.finditer(low)]
    if not counts:
        return None
    count = int(counts[0]) if counts[0].isdigit() else values.get(counts[0])
    if count is None:
        return None
    for unit in product_units(doc, untrusted=_is_untrusted):
        if unit.kind not in {"fact", "option"} or not content_stems(unit.label) & labels:
            continue
        people = _people_range(unit.value)
        if people is None:
            continue
        answer = _Answer()
        answer.use(doc.id)
        if work.intent.yes_no:
            answer.meta("Yes." if people[0] <= count <= people[1] else "No.")
        fact = unit.fact
        if fact is not None:
            _fact_sentence(answer, work, doc, fact, lead=True)
        return answer
    return None
