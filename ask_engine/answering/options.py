"""A product's options and variants as a question names them: an option by its name ("what scents?"), its values by
their words, a figure or a size word ("the 12-inch", "the biggest"), and the variants holding the values chosen."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache

from ask_engine.answering.addressing import asked_measures, framing_stems
from ask_engine.answering.measures import FIGURE_ONLY, measure, measures_in, ranges_in, value_pattern
from ask_engine.answering.query import _head, _strip_title
from ask_engine.answering.units import Unit
from ask_engine.language import (
    Intent,
    concept_words,
    content_stems,
    lexicon_section,
    mentions_concept,
    parse_query,
    text_cue,
    word_list,
    word_stems,
)
from ask_engine.types import Document, Task, Variant


def _options(doc: Document) -> list[tuple[str, tuple[str, ...]]]:
    if doc.options:
        return [(name, tuple(values)) for name, values in doc.options]
    found: dict[str, list[str]] = {}
    for v in doc.variants:
        for name, value in v.options:
            found.setdefault(name, [])
            if value not in found[name]:
                found[name].append(value)
    return [(k, tuple(v)) for k, v in found.items()]


_ANY_OPTION = text_cue("any_option", re.IGNORECASE)
_OPTION_WORD = text_cue("option_word", re.IGNORECASE)
_COLOUR_OPTION = text_cue("colour_option", re.IGNORECASE)  # an option name that holds colours
_SIZE_OPTION = text_cue("size_option", re.IGNORECASE)  # an option name that holds sizes
_ASKS_COLOUR = text_cue("asks_colour")
_ASKS_SIZE = text_cue("asks_size")
_ASKS_WHICH = text_cue("asks_which")  # "which one", "ok for", "what size": a choice among versions
_FOR_SITUATION = text_cue("for_situation")  # "for my 8 yr old", "if we do judo throws"


def value_stems(doc: Document) -> frozenset[str]:
    """The stems of every value of the product's options ("Blonde", "35cm")."""
    return content_stems(" ".join(v for _, vs in _options(doc) for v in vs))


def _named_option(intent: Intent, doc: Document) -> bool:
    """True when the question names one of the product's options by its name ("scents", "finishes"), not only as the
    first word of a phrase its own description uses (`phrased_option_words`), nor only in the product's own name
    ("protein content of the marine pellets?" names no option Pellet of the Tidewell Marine Pellets)."""
    unnamed = _strip_title(intent.text, doc.title)
    outside = parse_query(unnamed) if unnamed and unnamed != intent.text else intent
    return any(
        _names_option(outside, name, values) and not _phrased(intent, doc, (name.split() or [""])[-1].lower())
        for name, values in _options(doc)
        if len(values) > 1
    )


def _phrased(intent: Intent, doc: Document, word: str) -> bool:
    """Every time the question says `word`, it is the first word of a phrase the product's description uses too."""
    after = re.findall(rf"\b{re.escape(word)}\s+([^\W\d_]+)", intent.lower)
    if not after or len(after) != len(re.findall(rf"\b{re.escape(word)}\b", intent.lower)):
        return False
    body = doc.body.lower()
    return all(re.search(rf"\b{re.escape(word)}\s+{re.escape(w)}\b", body) for w in after)


def phrased_option_words(intent: Intent, doc: Document) -> bool:
    """The question's option words ("flavor", "size") are each said only as the first word of a phrase the product's
    own description uses ("do your pellets have flavor oils?" and "No flavor oils, no binders"): they name that thing,
    and ask for no option values."""
    words = {m.group().lower() for m in _OPTION_WORD.finditer(intent.lower)}
    return bool(words) and all(_phrased(intent, doc, w) for w in words)


def _names_option(intent: Intent, name: str, values: Sequence[str]) -> bool:
    """The question says the option's name, and not only as a word of one of its values it names ("dimensions of
    shape 1?" names the value "Shape 1", and asks nothing of the option Shape)."""
    head = _head(name)
    if head not in intent.stems or any(head in content_stems(v) for v in _said_values(intent, values)):
        return False
    # "what was in last month's snack box?", "the bag came split open in the box": the option's name said as it is
    # named, after a determiner, is the thing itself; "which box?", "what boxes do you do?" and "a size 14" (a value
    # after it) ask for the values
    said = (name.split() or [""])[-1].lower()
    lowered = [v.lower() for v in values]

    def valued(rest: str) -> bool:
        return rest[:1].isdigit() or any(rest.startswith(v) for v in lowered)

    return not all(
        w.group() == said
        and _SAID_AS_THING.search(intent.lower[: w.start()])
        and not valued(intent.lower[w.end() :].strip())
        for w in re.finditer(r"[^\W\d_]+", intent.lower)
        if head in content_stems(w.group())
    )


_SAID_AS_THING = text_cue("said_as_thing")  # "the ", "my snack ", "month's "


def _said_values(intent: Intent, values: Sequence[str]) -> list[str]:
    """The values the question says every word of ("Shape 1", "35cm")."""
    return [v for v in values if (own := content_stems(v)) and own <= intent.stems]


def _is_colour_option(name: str) -> bool:
    return bool(_COLOUR_OPTION.search(name))


def _is_size_option(name: str) -> bool:
    return bool(_SIZE_OPTION.search(name))


def _singled_values(intent: Intent, values: Sequence[str]) -> list[str]:
    """The values of one option that a content word of the question (of three letters or more, not a figure) singles
    out: a word used by exactly one of the values ("velvet" in "Forest Green Velvet" among "Oatmeal Bouclé" and
    "Slate Recycled Weave"). None when a word is shared by several values, or the values are single letters."""
    words = {w for w in intent.stems if len(w) >= 3 and not w[0].isdigit()}
    words -= content_stems(" ".join(_OWNED.findall(intent.lower)))  # ("my pony's name": the asker's)
    found: list[str] = []
    for value in values:
        own = content_stems(value)
        others = frozenset().union(*(content_stems(v) for v in values if v != value))
        if words & (own - others) and value not in found:
            found.append(value)
    return found


_NUMBER_VALUE = re.compile(r"[+-]?\d+(?:\.\d+)?")
_OWNED = text_cue("owned_possessive")  # the asker's own: "my pony's name"
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])[+-]?\d+(?:\.\d+)?(?![\w.])")


def _same_number(value: str, said: str) -> bool:
    """`said` is the number `value` is ("+2.5" and "+2.50", "2.5" and "+2.50"; not "-2.50")."""
    if said[0] not in "+-" and value[0] == "+":
        said = f"+{said}"
    return (value[0] == "-") == (said[0] == "-") and float(value) == float(said)


def _match_options(
    intent: Intent, options: list[tuple[str, tuple[str, ...]]], title: str = ""
) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """Option values the question names ({"Colour": ["Olive"]}) and asked values the product lacks (not a measure of
    the product's own `title`: "the 6 ft leash" of the "Padded Leash, 6 ft" asks for no width of 6 ft)."""
    chosen: dict[str, list[str]] = {}
    other: list[tuple[str, str]] = []  # values named with a word making them another value
    text = _OWNED.sub(" ", intent.lower)  # "my pony's name" is the asker's pony, no "Pony" size
    asked_kinds = {unit for _, unit in measures_in(intent.text)}
    free = _free_figures(intent, options) if asked_kinds else []
    for name, values in options:
        named_sizes = _named_sizes(intent.text, values) if _is_size_option(name) else []  # "the large" is size L
        whole: set[str] = set()  # values the question writes out in full
        for value in values:
            low = value.lower()
            if len(low) <= 1:
                hit = bool(re.search(rf"\bsize\s+{re.escape(low)}\b", text)) or bool(
                    re.search(rf"(?<![\w'])({re.escape(value)})(?![\w'])", intent.text)
                )
            else:
                # "11 speed" names "11-speed", and "t-shirt" "T Shirt": a hyphen and a space join words alike
                joined = value_pattern(low)
                found = re.search(rf"(?<![\w-]){joined}(?![\w-])", text) if joined else None
                hit = found is not None and not _modified(text[: found.start()], low, values)
                if hit:
                    whole.add(value)
                if found is not None and not hit:
                    # "super king" of a mattress sold up to King: a value the product lacks
                    other.append((name, f"{re.findall(r'[a-z]+', text[: found.start()])[-1]} {low}"))
            if not hit and _NUMBER_VALUE.fullmatch(low):
                # "+2.5" names "+2.50": a value that is a number is named by the same number however written
                hit = any(_same_number(low, n) for n in _NUMBER_IN_TEXT.findall(text))
            if not hit and asked_kinds:
                # "the 16 inch ones" names '16"': the same measure however its unit is written
                own = measure(value) if FIGURE_ONLY.fullmatch(low.strip()) else None
                hit = own is not None and own in measures_in(intent.text)
            if not hit and _is_colour_option(name):
                hit = any(c in low.split() for c in intent.colours)
            if not hit and _is_size_option(name):
                tokens = re.findall(r"[a-z0-9.]+", low)
                hit = any(n in tokens for n in intent.numbers) and len(values) > 1
                # "a 250 ml cup" gives a volume: it names no "250 g" bag
                own = measure(value)
                hit = hit and not (own is not None and asked_kinds and own[1] not in asked_kinds)
                hit = hit or value in named_sizes
            if hit:
                chosen.setdefault(name, []).append(value)
        if len(chosen.get(name, ())) > 1:
            # "a 17.5 medium wide" names "Medium Wide", not also the "Medium" and "Wide" its words hold; "a gold 7"
            # names "Gold", not "Rose Gold", which holds its colour word
            if whole & set(chosen[name]):
                chosen[name] = [v for v in chosen[name] if v in whole or not _is_colour_option(name)]
            longer = [v.lower() for v in chosen[name] if v in whole]
            chosen[name] = [
                v
                for v in chosen[name]
                if not any(w != v.lower() and re.search(rf"\b{re.escape(v.lower())}\b", w) for w in longer)
            ]
        if len(chosen.get(name, ())) > 1 and intent.numbers:
            # "an 18 x 18 seat" names "18 x 18 in", not "18 x 16 in": the values whose figures the question gives in
            # their order (or that give the question's in theirs: "rear is 180/55" and "Set 120/70 + 180/55"), where
            # one does
            said = _NUMBER_IN_TEXT.findall(text)
            runs = [
                v
                for v in chosen[name]
                if _in_order(figs := _NUMBER_IN_TEXT.findall(v.lower()), said) or _in_order(said, figs)
            ]
            chosen[name] = runs or chosen[name]
        if len(chosen.get(name, ())) > 1 and intent.numbers:
            # "in 28 x 1.75? need the 47-622 one": the value using the most of the question's figures, not every
            # value sharing one of them ("28 x 1.40 (37-622)")
            used = {v: sum(n in re.split(r"[^a-z0-9]+", v.lower()) for n in intent.numbers) for v in chosen[name]}
            most = max(used.values())
            if most > 1:
                chosen[name] = [v for v in chosen[name] if used[v] == most]
        if name not in chosen and len(values) > 1:
            # "the green velvet one" for "Forest Green Velvet", "the boucle" for "Oatmeal Bouclé": a word of the
            # question that only one of the option's values uses names that value
            singled = _singled_values(intent, values)
            if singled:
                chosen[name] = singled
        if name not in chosen and len(values) > 1 and asked_kinds:
            # "how much for a 7 year old?" names "6-8 years", "she weighs 17kg" names "Child 15–25 kg": the value
            # whose range holds a figure the question gives, the tightest of several
            held = _holding_values(values, free)
            if held is not None:
                chosen[name] = [held]
        if _is_size_option(name) and name not in chosen:
            # "the 1kg bag" for "1 kg", "500ml" for "0.5 L"; else "the smaller bottle", "the big bag"
            same = _same_measure(intent, values)
            extreme = same or _extreme_size(intent, values)
            if extreme is not None:
                chosen[name] = [extreme]
    missing: list[tuple[str, str]] = []
    colour_options = [name for name, _ in options if _is_colour_option(name)]
    if colour_options and not any(n in chosen for n in colour_options):
        for colour in intent.colours:
            missing.append((colour_options[0], colour))
    size_options = [name for name, _ in options if _is_size_option(name)]
    if size_options and not any(n in chosen for n in size_options):
        # "in a 1kg bag?" of a coffee sold in 250g only: a measure of the kind the sizes are written in, none of them
        for name, values in options:
            kinds = {m[1] for v in values if (m := measure(v)) is not None}
            titled = measures_in(title)
            asked = [a for a in measures_in(intent.text) if a[1] in kinds and a not in titled]
            if name in size_options and kinds and asked:
                missing.append((name, f"{asked[0][0]:g} {asked[0][1]}"))
        for number in intent.numbers:
            # "in size 9", "in UK 7", "in a 1kg bag"
            if re.search(rf"\b(?:size|in|in an?|uk|eu|us)\s+{re.escape(number)}(?![\d.,])", text):
                missing.append((size_options[0], number))
        lettered = [n for n, vs in options if n in size_options and any(v.casefold() in _LETTERS for v in vs)]
        for word in _ASKED_SIZE.findall(text) if lettered else ():
            # "does it come in a small?" of a wetsuit sold in M to XL: a size written as a letter, in words
            missing.append((lettered[0], _LETTER_OF.get(word, word.upper())))
    missing += [(name, value) for name, value in other if name not in chosen]
    return chosen, missing[:1]


def _in_order(figures: Sequence[str], said: Sequence[str]) -> bool:
    """`figures` (of a value, two or more) come one after another among the question's `said`."""
    n = len(figures)
    return n > 1 and any(list(said[i : i + n]) == list(figures) for i in range(len(said) - n + 1))


def _free_figures(intent: Intent, options: list[tuple[str, tuple[str, ...]]]) -> list[tuple[float, str]]:
    """The question's figures, less those that are an option's value ("6 months" of a plan, not a child's age)."""
    values = {measure(v) for _, vs in options for v in vs if FIGURE_ONLY.fullmatch(v.strip())}
    return [f for f in measures_in(intent.text) if f not in values]


def _holding_values(values: Sequence[str], figures: Sequence[tuple[float, str]]) -> str | None:
    """The one value stating a range that holds one of `figures` (in the same base unit): the narrowest where ranges
    nest ("Up to 15 kg" before "Up to 25 kg"); None where none does, or two do side by side."""
    holding: list[tuple[float, str]] = []
    for value in values:
        spans = [hi - lo for x, unit in figures for lo, hi, u in ranges_in(value) if u == unit and lo <= x <= hi]
        if spans:
            holding.append((min(spans), value))
    holding.sort()
    if not holding or (len(holding) > 1 and holding[0][0] == holding[1][0]):
        return None
    return holding[0][1]


def held_concepts(intent: Intent, doc: Document) -> frozenset[str]:
    """The asked concepts that an option value holding the question's figure answers: "how much for a 7 year old?"
    asks the age only as the variant "Age: 6-8 years" does, which is no age left unrecorded."""
    options = _options(doc)
    figures = _free_figures(intent, options) if intent.concepts else []
    held = [f"{name}: {value}" for name, values in options if (value := _holding_values(values, figures))]
    # ... and those a value the question says whole names, asked whether it is in stock or what it costs: "is the
    # brushed aluminium in 150cm available?" asks of the variant "Brushed aluminium", not of a material
    said = _said_values(intent, [v for _, vs in options for v in vs]) if intent.stock or intent.price else []
    # ... and those only the product's own name says, where the question asks something else: "is the sage eco in
    # stock in fine?" or "how long is the eco?" of the "TWSBI ECO Piston Fountain Pen" ask nothing of sustainability
    # (as often as its name says it: "is the eco in stock, and is it eco friendly?" asks; "is this one waterproof?" of a
    # "Waterproof Jacket" asks nothing else)
    title = content_stems(doc.title)

    def named(c: str) -> bool:
        words = concept_words(intent.text, c)
        return all(content_stems(w) <= title for w in words) and len(words) <= len(concept_words(doc.title, c))

    by_name = frozenset(c for c in intent.concepts if named(c))
    other = intent.stock or intent.price or intent.options or set(intent.concepts) - by_name
    if not (other or asked_measures(intent.text)):
        by_name = frozenset()
    return by_name | frozenset(c for c in intent.concepts if any(mentions_concept(h, c) for h in [*held, *said]))


_SMALLEST = word_list("smallest_size_words")
_LARGEST = word_list("largest_size_words")


def _same_measure(intent: Intent, values: tuple[str, ...]) -> str | None:
    """The one size whose measure the question gives, however it is written ("1kg", "1000 g" for "1 kg")."""
    asked = measures_in(intent.text)
    if not asked:
        return None
    hits = [
        v
        for v in values
        if (m := measure(v)) is not None and any(a[1] == m[1] and math.isclose(a[0], m[0], rel_tol=1e-6) for a in asked)
    ]
    return hits[0] if len(hits) == 1 else None


def _extreme_size(intent: Intent, values: tuple[str, ...]) -> str | None:
    """The smallest or the largest of sizes written as measures ("50 mL / 1.7 fl oz", "1 kg") when the question
    asks for it by a word ("the smaller bottle", "the big bag"); None when it uses neither kind of word, or both."""
    words = set(re.findall(r"[a-z]+", intent.lower))
    small, large = bool(words & _SMALLEST), bool(words & _LARGEST)
    if small == large or len(values) < 2:
        return None
    measures = [measure(v) for v in values]
    kinds = {m[1] for m in measures if m is not None}
    if None in measures or len(kinds) != 1:
        return None  # letter sizes ("S", "L") are found by their size words; mixed kinds cannot be ordered
    sizes = [m[0] for m in measures if m is not None]
    pick = min if small else max
    best = pick(sizes)
    if sizes.count(best) > 1:
        return None
    return values[sizes.index(best)]


_THE_SIZE = re.compile(rf"\bthe ({'|'.join(sorted(_SMALLEST | _LARGEST, key=len, reverse=True))})\b")


def with_extreme_size(question: str, doc: Document) -> str | None:
    """ "how many baguettes fit on the large one?" of a product whose sizes are measures ("45 x 70 cm", "65 x 90 cm"):
    the question with the size its word picks written after the word ("the large (65 x 90 cm) one"), so the lines
    naming that size answer as they do when the size is named; None where the question names no size so ("the big
    one", not "is it big enough?"), or names one of the sizes itself."""
    said = _THE_SIZE.search(question.lower())
    if said is None:
        return None
    for name, values in _options(doc):
        if _is_size_option(name) and (value := _extreme_size(parse_query(said.group(0)), values)) is not None:
            if any(re.search(value_pattern(v.lower()), question.lower()) for v in values):
                return None
            return f"{question[: said.end()]} ({value}){question[said.end() :]}"
    return None


@lru_cache(maxsize=1)
def _size_words() -> dict[str, tuple[str, ...]]:
    """Each size's spellings by the way a shop may write it: "XL" gives "extra large", "x-large", …; and "X-Large"
    gives "XL" and the rest of its spellings (a letter of two or more, never "S", "M" or "L" alone)."""
    out: dict[str, tuple[str, ...]] = {}
    for letter, words in lexicon_section("size_words").items():
        out[letter.casefold()] = tuple(words)
        for word in words:
            out.setdefault(word.casefold(), tuple(w for w in (letter, *words) if w != word and len(w) > 1))
    return out


_LETTER_OF = {w.lower(): letter for letter, words in lexicon_section("size_words").items() for w in words}
_LETTERS = frozenset(letter.casefold() for letter in lexicon_section("size_words"))
_SPOKEN_SIZES = sorted({*_LETTER_OF, *(x for x in _LETTERS if len(x) > 1)}, key=len, reverse=True)
# a size asked for in words or letters of two or more ("in a small", "in size xs"), ending its phrase ("… for my
# girlfriend?"), not a word before a noun ("in a small dog bed")
_ASKED_SIZE = re.compile(
    rf"\b(?:in|size)\s+(?:an?\s+)?({'|'.join(map(re.escape, _SPOKEN_SIZES))})"
    r"(?=\s*(?:$|[?.!,;]|\b(?:for|or|please|size|one|too|instead)\b))"
)


def _named_sizes(question: str, values: tuple[str, ...]) -> list[str]:
    """The size values the question names: as written ("XL", "size m", "Medium") or by their size words ("large")."""
    text = f" {question} "
    found: list[str] = []
    words = _size_words()
    spellings = [(w, v) for v in values for w in (v, *words.get(v.casefold(), ()))]
    for spelling, value in sorted(spellings, key=lambda s: -len(s[0])):
        # (a two-letter size in any case: "xl" is no English word, where "m" may be a metre)
        loose = len(spelling) > 2 or spelling != value or (spelling.casefold() in words and len(spelling) == 2)
        pattern = re.compile(rf"(?<![\w'-]){re.escape(spelling)}(?![\w'-])", re.IGNORECASE if loose else 0)
        if len(spelling) <= 2 and spelling == value and not pattern.search(text):
            pattern = re.compile(rf"\bsize\s+{re.escape(spelling)}\b", re.IGNORECASE)
        found_at = pattern.search(text)
        if found_at and _modified(text[: found_at.start()].lower(), spelling.lower(), values):
            continue  # "super king" is no King
        if found_at:
            text = pattern.sub(" ", text)  # "extra large" is XL, not L as well
            if value not in found:
                found.append(value)
    return found


def _named_options(intent: Intent, options: list[tuple[str, tuple[str, ...]]]) -> list[tuple[str, tuple[str, ...]]]:
    """The options a "what colours/sizes does it come in?" question names (none when it names none of them)."""
    asked = []
    for name, values in options:
        # an option is named by what it is ("weight" of "Dog Weight"), not by a word qualifying it ("dog")
        if (
            _names_option(intent, name, values)
            or (_is_colour_option(name) and _ASKS_COLOUR.search(intent.lower))
            or (_is_size_option(name) and _ASKS_SIZE.search(intent.lower))
        ):
            asked.append((name, values))
    return asked


_SIZE_MODIFIERS = frozenset(word_list("size_modifiers"))


def _modified(before: str, value: str, values: Sequence[str]) -> bool:
    """`value` is named after a word making it another value the product lacks ("super king" for "King")."""
    words = re.findall(r"[a-z]+", before)
    return bool(words) and words[-1] in _SIZE_MODIFIERS and f"{words[-1]} {value}" not in {v.lower() for v in values}


def _variants_with(doc: Document, chosen: dict[str, list[str]]) -> list[Variant]:
    out = []
    for v in doc.variants:
        values = dict(v.options)
        if all(values.get(name) in wanted for name, wanted in chosen.items()):
            out.append(v)
    return out


def _named_variant(task: Task, doc: Document) -> Variant | None:
    for v in doc.variants:
        if v.gid in task.resolution.variant_gids:
            return v
    return None


def _colour_asked(intent: Intent, doc: Document) -> bool:
    """Whether a colour word the question names asks for a colour: said after "in" ("can I get it in olive?"), or of a
    product sold in colours, or in an option value naming it ("Honey / Large")."""
    if any(re.search(rf"\bin\s+(?:an?\s+|the\s+)?{re.escape(c)}\b", intent.lower) for c in intent.colours):
        return True
    options = _options(doc)
    if any(_is_colour_option(name) for name, _ in options):
        return True
    values = " ".join(v for _, vs in options for v in vs).lower()
    return any(re.search(rf"\b{re.escape(c)}\b", values) for c in intent.colours)


def names_value_only(intent: Intent, doc: Document, unit: Unit) -> bool:
    """`unit` is an option whose value the question names, and not the option itself: the value says which variant
    is meant ("how much does the 35cm pack weigh?", "the dimensions of shape 1?"), the option answers nothing."""
    if unit.kind != "option":
        return False
    values = dict(_options(doc)).get(unit.label, ())
    return bool(_said_values(intent, values)) and not _names_option(intent, unit.label, values)


_CHOICE_STEMS = word_stems("choice_words")


def asks_beyond_option(text: str, doc: Document, unit: Unit, naming: frozenset[str]) -> bool:
    """`unit` is an option the question names while asking something its values do not say: a word of the question
    (`text`) beyond the option's name, its values, what names the product (`naming`) and the words of a question
    asking which versions there are ("does the light base take batteries?", "how thick is the large board?", "which
    distillery makes the gin?"): the list of its values says only which versions the product comes in."""
    if unit.kind != "option":
        return False
    values = dict(_options(doc)).get(unit.label, ())
    own = content_stems(" ".join([unit.label, *values]))
    if _measured_by(text, unit.label):
        own |= framing_stems(text)  # "How thick is it?" of "Thickness: 4mm, 5mm, 6mm"; not of "Size: Small, Large"
    # (a figure is a value asked for, which the list answers: "do you have these in 1/16 size?", and so is the unit
    # written after it: "is there a 75 euro gift card?")
    figured = content_stems(" ".join(re.findall(r"\d[\d.,/]*\s?([a-z]+)", text.lower())))
    return any(not re.search(r"\d", w) for w in content_stems(text) - naming - own - _CHOICE_STEMS - figured)


_LENGTH_LABEL_STEMS = word_stems("length_labels")


def _measured_by(text: str, label: str) -> bool:
    """The option's name names a kind of figure the question asks for: "Weight" for "how heavy?", "Thickness" (or
    "Width", "Diameter": a length) for "how thick?"."""
    named = content_stems(label)
    return any(
        content_stems(k.name) & named or (k.name == "length" and named & _LENGTH_LABEL_STEMS)
        for k in asked_measures(text)
    )


def within_options(
    ranked: Sequence[tuple[float, Unit]], text: str, doc: Document, naming: frozenset[str]
) -> list[tuple[float, Unit]]:
    """`ranked` without the options the question (`text`) asks beyond (`asks_beyond_option`)."""
    return [(p, u) for p, u in ranked if not asks_beyond_option(text, doc, u, naming)]


_VALUE_LINE_RANKS = 3  # the value's line is among the units ranked next after the option naming it
_VALUE_LINE_FLOOR = 0.3  # ... and the ranker gives it at least this


def value_line(
    intent: Intent, doc: Document, ranked: Sequence[tuple[float, Unit]], named: Sequence[Unit]
) -> Unit | None:
    """The description line that writes out whole a value the question names of an option that is neither a size
    nor a colour (a bundle, a collection, a kit), ranked next after that option: what the shop says of that version
    ("what's in the observer bundle?" and "Observer Bundle adds our Plössl eyepieces, a Telrad finder …"). None for
    a yes/no question or one asking for a measure, which the line need not state."""
    if not named or intent.yes_no or asked_measures(intent.text):
        return None
    options = dict(_options(doc))
    values = [
        v
        for u in named
        if not (_is_size_option(u.label) or _is_colour_option(u.label))
        for v in _said_values(intent, options.get(u.label, ()))
    ]
    patterns = [p for p in (value_pattern(v.lower()) for v in values) if p]
    for p, u in [(p, u) for p, u in ranked if u not in named][:_VALUE_LINE_RANKS]:
        written = any(re.search(rf"(?<![\w-]){pattern}(?![\w-])", u.text.lower()) for pattern in patterns)
        if u.kind == "description" and p >= _VALUE_LINE_FLOOR and written:
            return u
    return None
