"""Whether an answer unit addresses what a question asks, read from the words alone.

A unit addresses a question when it states the kind of figure the question asks for ("how bright?" and "800
lumens", "how long does it take?" and "3 to 5 business days", "how many pieces?" and "1000 pieces"), or uses one
of the question's own content words beyond the product's name ("when should I replace it?" and "Replace the chain
once it has stretched by 0.5%"). The ranker's probability says how likely a unit answers; this says how it speaks
to the question, and a unit that does may answer below the ranker's bar (`Ranker.addressed_bars`, one per way, calibrated on the same product-QA data by
`python -m ask_engine.answering.calibrate`). The kinds of figure and their units of measure are data:
`lexicon/<language>.json`, "measures".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ask_engine.answering.ranker import lexicon
from ask_engine.answering.units import Unit
from ask_engine.language import CONCEPTS, concept_words, content_stems, mentions_concept, normalize, word_list
from ask_engine.types import Fact

__all__ = [
    "ADDRESSING",
    "Measure",
    "addressed_by",
    "asked_figure_values",
    "asked_figures",
    "asked_lengths",
    "asked_measures",
    "counted_stems",
    "framing_stems",
    "joined_labels",
    "measures",
    "number_words",
    "other_kind",
    "other_length",
    "stated_kinds",
    "states_count",
    "states_figure",
    "version_rows",
    "ways_of",
]

ADDRESSING = ("measure", "word")  # the ways a unit can address a question, each with its own calibrated bar


@dataclass(frozen=True)
class Measure:
    name: str
    asks: re.Pattern[str]
    states: re.Pattern[str]


@lru_cache(maxsize=8)
def _lexicon_measures(key: str, language: str) -> tuple[Measure, ...]:
    return tuple(
        Measure(m["name"], re.compile("|".join(m["asks"])), re.compile(m["states"], re.IGNORECASE))
        for m in lexicon(language).get(key, ())
    )


def measures(language: str = "en") -> tuple[Measure, ...]:
    """The kinds of figure a question can ask for, from the language's lexicon."""
    return _lexicon_measures("measures", language)


def framing_stems(text: str, language: str = "en") -> frozenset[str]:
    """The content stems of `text`'s words that ask for a kind of figure ("how long", "how much") or name one
    ("address", "weight", and a price's "fee": a sentence stating "$3.50 per box" need not say "fee"): they frame a
    question and say nothing of what it is about."""
    low = " ".join(normalize(text).lower().split())
    # (a month or a season a question names is what it is about: "do you ship in December?")
    kinds = tuple(k for k in measures(language) if k.name != "date") + _lexicon_measures("answer_figures", language)
    framing = content_stems(" ".join(m.group(0) for kind in kinds for m in kind.asks.finditer(low)))
    return framing | content_stems(
        " ".join(w for w in re.findall(r"[\w'-]+", low) if any(k.asks.search(w) or k.states.search(w) for k in kinds))
    )


def _asking(question: str, kinds: Sequence[Measure]) -> tuple[Measure, ...]:
    low = " ".join(normalize(question).lower().split())
    return tuple(m for m in kinds if m.asks.search(low))


def asked_measures(question: str, language: str = "en") -> tuple[Measure, ...]:
    """The kinds of figure `question` asks for ("how long" asks for a duration or a length)."""
    return _asking(question, measures(language))


# Kinds of figure any line may state in passing (a count, a percentage, a place): a line stating one says nothing of
# whether it states the kind of figure asked.
UNCOUNTED = frozenset({"count", "percentage", "place"})


def measured_kinds(question: str, language: str = "en") -> tuple[Measure, ...]:
    """The kinds of figure `question` asks for (`asked_measures`) other than a count, a percentage or a place."""
    return tuple(k for k in asked_measures(question, language) if k.name not in UNCOUNTED)


def asked_figures(question: str, language: str = "en") -> tuple[Measure, ...]:
    """Every kind of figure `question` asks for: the measures, and the lexicon's `answer_figures` (a price)."""
    return _asking(question, measures(language) + _lexicon_measures("answer_figures", language))


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _number(text: str) -> str:
    plain = text.replace(",", "")
    try:
        return f"{float(plain):g}"
    except ValueError:
        return plain


def asked_figure_values(question: str, texts: Sequence[str], language: str = "en") -> frozenset[str] | None:
    """The values of the kinds of figure `question` asks for that `texts` state: the numbers inside each stated
    figure ("4-7 working days" → 4, 7; "£279.00" → 279), or the figure's words when it has no number ("free");
    None when the question asks for no figure."""
    figures = asked_figures(question, language)
    if not figures:
        return None
    values: set[str] = set()
    for text in texts:
        for measure in figures:
            for match in measure.states.finditer(text):
                # the whole numbers the figure touches ("£2" of "£279.00" is 279)
                numbers = [
                    n.group(0) for n in _NUMBER.finditer(text) if n.start() < match.end() and match.start() < n.end()
                ]
                values |= {_number(n) for n in numbers} if numbers else {match.group(0).lower()}
    return frozenset(values)


def addressed_by(
    question: str, unit: Unit, *, name_stems: frozenset[str] = frozenset(), language: str = "en"
) -> frozenset[str]:
    """The ways `unit` speaks to `question`: "measure" (it states the kind of figure asked for) and "word" (it uses
    a content word of the question beyond the product's name, and does not name the attribute the question asks about)."""
    return ways_of(question, [unit], name_stems=name_stems, language=language)[0]


@lru_cache(maxsize=8)
def _counted_questions(language: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in lexicon(language).get("counted_questions", ()))


def counted_stems(question: str, language: str = "en") -> frozenset[str]:
    """The stems of the things `question` asks the number of ("how many pieces is it?" → {"piec"}); lexicon
    "counted_questions"."""
    low = " ".join(normalize(question).lower().split())
    words = [m.group(1) for pattern in _counted_questions(language) for m in pattern.finditer(low)]
    return content_stems(" ".join(words)) if words else frozenset()


_COUNT_WORD = re.compile(r"\d(?:[\d.,]*\d)?(?:\s*(?:-|–|to)\s*\d(?:[\d.,]*\d)?)?|[\w'-]+|[,;:.!?()]")


@lru_cache(maxsize=8)
def number_words(language: str = "en") -> frozenset[str]:
    """The language's number words ("two", "dozen"): lexicon "number_words"."""
    return frozenset(w.casefold() for w in lexicon(language).get("number_words", ()))


def states_count(text: str, counted: frozenset[str], language: str = "en") -> bool:
    """`text` gives a number of one of the `counted` things: a number, or a number word, followed within three words
    by it ("1000 pieces", "for 2-12 players", "3 AA batteries", "for two players")."""
    if not counted:
        return False
    tokens = _COUNT_WORD.findall(text.lower())
    numbers = number_words(language)
    for i, token in enumerate(tokens):
        if not (token[0].isdigit() or token in numbers):
            continue
        for after in tokens[i + 1 : i + 4]:
            if not after[0].isalnum():
                break  # "made in 2019, the pieces are big" gives no count of pieces
            if content_stems(after) & counted:
                return True
    return False


def ways_of(
    question: str, units: Sequence[Unit], *, name_stems: frozenset[str] = frozenset(), language: str = "en"
) -> list[frozenset[str]]:
    """`addressed_by` for each of `units`, reading the question once."""
    asked = {c.name for c in CONCEPTS if concept_words(question, c.name)}
    figures = asked_measures(question, language)
    counted = counted_stems(question, language) - name_stems
    words = content_stems(question) - name_stems
    out = []
    for unit in units:
        ways: set[str] = set()
        named = {c.name for c in CONCEPTS if mentions_concept(unit.text, c.name)}
        # a figure of another attribute is not the one asked: "how long is it guaranteed for?" is not answered by
        # "Waterproof rating: 28,000 mm"
        # ("800 kcal" for "how many calories?" still answers when the same unit also says "freeze-dried")
        other_attribute = bool(asked) and bool(named - asked) and not named & asked
        if not other_attribute and (
            any(m.states.search(unit.text) for m in figures) or states_count(unit.text, counted, language)
        ):
            ways.add("measure")
        # A unit naming the asked attribute is left to the ranker alone: on product-QA data, "is it waterproof?"
        # against a unit that talks about water resistance answers no more often than the ranker's probability says.
        if not named & asked and words & content_stems(unit.text):
            ways.add("word")
        out.append(frozenset(ways))
    return out


def other_kind(text: str, asked: Sequence[Measure]) -> bool:
    """`text` (a fact as "Label: value") states a figure of some kind of measure (lexicon `measures`: "Weight: 6.2
    kg" a weight), and of none of the one kind `asked` ("Load capacity: 150 lb" states a strength). A question asking
    for several kinds at once ("how big?": a length or a volume) asks for size in general, and any figure may be it;
    not "how long?" (a duration or a length), which no weight answers ("how long does a 5kg bag last?" and "5kg bag.")."""
    names = {m.name for m in asked}
    if (len(asked) != 1 and "duration" not in names) or any(m.states.search(text) for m in asked):
        return False
    return any(m.states.search(text) for m in measures() if m.name not in names | UNCOUNTED)


def states_figure(text: str) -> bool:
    """True when `text` states a figure: a digit, a number word ("two to four players") or a month or season ("Late
    May - June": when)."""
    words = set(re.findall(r"[a-z]+", text.lower()))
    return bool(re.search(r"\d", text)) or bool(words & number_words()) or "date" in stated_kinds(text)


def stated_kinds(text: str) -> frozenset[str]:
    """The kinds of measure `text` states a figure of ("Rear-facing 5–40 lb.": weight), counts and places aside."""
    return frozenset(m.name for m in measures() if m.states.search(text)) - UNCOUNTED


_JOINING = word_list("joining_words")  # "and", "or", "&", "/", ","


def joined_labels(first: Unit | Fact, second: Unit | Fact, question: str) -> bool:
    """Both are recorded facts, and the `question` joins a word of each one's label (that the other's lacks) by "and",
    "or", "&", "/" or a comma ("how much EPA and DHA?" of "Epa" and "Dha"; not "how thick is the watch case?" of
    "Watch movement type" and "Case")."""
    one, other = content_stems(first.label), content_stems(second.label)
    words = re.findall(r"[\w'-]+|[,&/]", question.lower())
    joined = any(
        j in _JOINING and _apart(a, b, one, other) for a, j, b in zip(words, words[1:], words[2:], strict=False)
    )
    return joined and [getattr(x, "kind", "fact") for x in (first, second)] == ["fact", "fact"]


def _apart(a: str, b: str, one: frozenset[str], other: frozenset[str]) -> bool:
    """`a` and `b` name one label each (and not the other's), in either order."""
    x, y = content_stems(a), content_stems(b)
    return bool(x and y) and ((x <= one - other and y <= other - one) or (x <= other - one and y <= one - other))


def version_rows(fact: Fact, units: Sequence[Unit], question: str) -> list[Unit]:
    """The description's table rows stating `fact`'s attribute once per version ("Size: 700x28C, …, Weight (approx.):
    280 g"), where the product records one figure for the whole of it ("Weight: 250 g", the smallest's): the row of
    the version the `question` names ("how heavy is the 28c?"), else every row ("how much does the 540 weigh?" of a
    lock in 230 and 300 mm); none where fewer than two rows state it, or all alike."""
    # (a cell's value runs to the next labelled cell: "Weight: 1,450 g" keeps its thousands)
    label = re.compile(rf"(?:^|, ){re.escape(fact.label)}(?: \([^)]*\))?: (.+?)(?=, [^,:]+: |\.?$)", re.IGNORECASE)
    stated = [(u, m) for u in units if u.kind == "description" and (m := label.search(u.text))]
    rows = [u for u, _ in stated]
    values = {m.group(1).strip(" .").lower() for _, m in stated}
    if len(rows) < 2 or len(values) < 2:
        return []
    # a row named by a figure-bearing word of the question that a word of its first cell is or ends in, after no
    # other digit ("28c" of "700x28C", "220" of "220 cm"; not "10" of "210 cm")
    said = [w for w in re.findall(r"[\w.-]+", question.lower()) if re.search(r"\d", w) and len(w) >= 2]
    named = [u for u in rows if any(_ends_in(t, w) for t in _first_cell(u.text).split() for w in said)]
    return named if len(named) == 1 else sorted(rows, key=lambda u: u.position)[:4]


def _first_cell(text: str) -> str:
    """The value of a table row's first labelled cell, lower-case ("700x28c" of "Size: 700x28C, ETRTO: 28-622")."""
    head = text.split(", ", 1)[0]
    return head.split(": ", 1)[-1].strip(" .").lower()


def _ends_in(word: str, end: str) -> bool:
    return word == end or (word.endswith(end) and not word[-len(end) - 1].isdigit())


def asked_lengths(question: str, language: str = "en") -> frozenset[str]:
    """The lengths `question` asks by its words ("how wide?": the width, or a round thing's diameter; lexicon
    `length_asks`)."""
    words = set(re.findall(r"[a-z]+", question.lower()))
    return frozenset(name for name, said in _length_asks(language).items() if words & set(said))


def other_length(label: str, asked: frozenset[str], language: str = "en") -> bool:
    """`label` names a length other than those `asked` (`asked_lengths`; "Height" for "how wide are they?"): its
    figures are of the kind asked, but of another side."""
    named = {name for name in _length_asks(language) if name in label.lower()}
    return bool(asked) and bool(named) and not named & asked


def _length_asks(language: str) -> dict[str, list[str]]:
    asks: dict[str, list[str]] = lexicon(language).get("length_asks", {})
    return asks
