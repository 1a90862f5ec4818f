"""The nearest things a product records to a question it does not answer outright: the recorded fact closest to an
unrecorded attribute, the description sentence shown (hedged) below the ranker's bar, and the line of a disclosure
notice speaking of what is asked."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from ask_engine.answering.addressing import asked_figures, framing_stems, measured_kinds, ways_of
from ask_engine.answering.facts import (
    _IDENTITY_KEYS,
    RELATED_BAR,
    RELATED_SEMANTIC,
    _facts,
    _key_concepts,
    _probe,
    _safe_fact,
    fact_text,
)
from ask_engine.answering.options import value_stems
from ask_engine.answering.query import _GENERIC_QUERY_STEMS, _product_words, _title_stems
from ask_engine.answering.units import Unit, usable_value
from ask_engine.answering.work import _Work
from ask_engine.faithfulness import split_sentences
from ask_engine.language import (
    CONCEPTS_BY_NAME,
    PREPOSITIONS,
    Intent,
    content_stems,
    fact_key_matches,
    mentions_concept,
    stem,
    text_cue,
    word_stems,
)
from ask_engine.types import Document, Fact


def _own_words(work: _Work, doc: Document) -> frozenset[str]:
    """The question's words beyond the product's name, type and tags and the generic ones."""
    return work.asked - _title_stems(doc) - _product_words(doc) - _GENERIC_QUERY_STEMS


def _asked_fact(work: _Work, doc: Document, ranked: Sequence[tuple[float, Unit]] = ()) -> Fact | None:
    """The fact keyed by the attribute the question asks about, when it was too far from the question to answer it
    and the ranker still sees it as related (RELATED_BAR): the nearest thing the shop records."""
    probability = {unit.key: p for p, unit in ranked if unit.kind in ("fact", "identity")}
    asked = [
        f
        for name in work.intent.concepts
        for f in _facts(doc)
        if name in _key_concepts(f.key) and probability.get(f.key, 0.0) >= RELATED_BAR and usable_value(f.value)
    ]
    if not asked:
        return None
    nearest = max(asked, key=lambda f: probability[f.key])
    work.notes.append(f"related (asked): {probability[nearest.key]:.2f} {nearest.key}")
    return _safe_fact(nearest)


def _related_facts(work: _Work, doc: Document, ranked: Sequence[tuple[float, Unit]] = ()) -> list[Fact]:
    """What is recorded that comes closest to an unrecorded attribute: a fact keyed by the asked attribute itself,
    the lexicon's related keys, else the most similar fact."""
    facts = [
        f
        for f in _facts(doc)
        if f.key not in _IDENTITY_KEYS and not f.key.endswith("_options") and usable_value(f.value)
    ]
    # the asked attribute itself, where a fact records it that was too far from the question to answer it ("how much
    # can it hold?" and "Digital storage capacity: 128 gb"), when the ranker sees it as related at all
    # (the brand and type count here: "who makes it?" asks for the brand)
    own = _asked_fact(work, doc, ranked)
    if own is not None:
        return [own]
    for name in work.intent.concepts:
        for key in CONCEPTS_BY_NAME[name].related:
            for fact in facts:
                if fact_key_matches(fact.key, key) and _safe_fact(fact).value:
                    return [_safe_fact(fact)]
    asked = _own_words(work, doc)
    for name in work.intent.concepts:
        # a notice that speaks of the attribute ("Not for use on children under 2 years" for "is it OK for my
        # toddler?") comes closest of all, unless the question names a thing the notice never mentions and the notice
        # is about something else ("does it come with a dust cover?" and a recycling notice's "the disposal fee is
        # included in the price"; "iron content?" and "Contains crystalline silica")
        things = frozenset(w for w in asked if not mentions_concept(w, name))
        for fact in facts:
            if (
                fact.source == "disclosure"
                and mentions_concept(fact.value, name)
                and _safe_fact(fact).value
                and (
                    not things
                    or things & content_stems(fact.value)
                    or float(work.similarity([fact_text(fact)], probe=_probe(work, doc))[0]) >= RELATED_SEMANTIC
                )
            ):
                return [_safe_fact(fact)]
    if not facts:
        return []
    for p, unit in ranked:
        if unit.kind == "fact" and unit.fact is not None:
            # the recorded fact the ranker puts nearest the question, if the ranker sees it as related at all
            work.notes.append(f"related: {p:.2f} {unit.text[:40]}")
            return [_safe_fact(unit.fact)] if p >= RELATED_BAR else []
    texts = [fact_text(f) for f in facts]
    sims = work.similarity(texts, probe=_probe(work, doc))
    best = int(np.argmax(sims)) if len(sims) else 0
    if len(sims) and float(sims[best]) >= RELATED_SEMANTIC and _safe_fact(facts[best]).value:
        return [_safe_fact(facts[best])]
    return []


# The ranker's probability from which the best-ranked description sentence is shown, hedged, where nothing clears
# its bar: set on four blind probe shops written from merchants' exports (bicycle parts, pet supplies, furniture,
# board games), where the right sentence ranked first at 0.6-0.9 for most false "not recorded" answers, and the
# first-ranked sentence of an unanswerable question was mostly below it or a hedged near miss. A presentation floor,
# not an answer bar: the answer still says the shop does not say exactly that.
NEAR_SENTENCE_BAR = 0.6
# ... when the sentence shares no word with the question beyond the product's name and states no figure of the kind
# it asks ("can I run it on a saltwater reef tank?" and "Suitable for freshwater and marine aquariums"): a sentence
# ranked first only for being about the product ("Twenty warm bulbs on a weatherproof cable" for "is the cable safe
# for pets to chew?") stays below it
NEAR_UNTIED_BAR = 0.8
# ... and from which it is shown when it names the attribute the lexicon reads in the question ("can I swim with it?"
# and "Water resistance is not guaranteed on vintage watches", 0.5): the shop speaks of what is asked, so "has not
# recorded whether it is waterproof" would deny a line it holds. Set on six blind probe shops (barbecue, bridal,
# watches, archery; solar and tiles kept apart), hedged as the sentences above are.
NEAR_NAMED_BAR = 0.4


# The ranker's probability from which a description sentence below the bar is shown (hedged) before a disclosure
# notice that is the closest fact, when it says a word of the question that is not the product's name, type, tags
# or option values (`_says_asked_words`): "will it stain pale stone?" is shown "… it can mark pale paving slabs",
# not the oil's fire notice. Set on four blind probe shops written from merchants' exports (skincare, plants,
# furniture, music gear), where the sentences saying the question's own words at or above it were the answer.
NEAR_STATED_BAR = 0.75
_DEMONSTRATED = text_cue("demonstrated")  # "this mic": the word after a demonstrative


def _says_asked_words(work: _Work, doc: Document, unit: Unit, probability: float) -> bool:
    """`unit` at or above `NEAR_STATED_BAR` says a content word of the question beyond what names the product (its
    title, handle, type, tags and option values), a generic query word or a word framing a figure."""
    if probability < NEAR_STATED_BAR:
        return False
    wanted = work.intent.stems - naming_stems(work, doc) - framing_stems(work.intent.text)
    return bool(wanted & content_stems(unit.text))


def speaks_of_asked(text: str, concepts: Sequence[str]) -> bool:
    """A notice's `text` sharing a word of the question ("Check the wrist strap before every hike"), or a product's
    type, brand or tags, speaks to it only if it names an attribute the lexicon reads there (`concepts`), if any
    ("does the warranty cover the strap?")."""
    return not concepts or any(mentions_concept(text, c) for c in concepts)


def speaks_if_named(unit: Unit, intent: Intent) -> bool:
    """A unit other than the product's type, brand or tags, or one of those naming an attribute asked, for a question
    asking for no figure: one naming none answers nothing, nor keeps the next line from answering ("where does this
    starter come from?" and "Type: Sourdough Starter" before "Our starter has been fed daily in Haarlem since 2011,
    …"; "how long is the sale on for?" and "Tags: wetsuit, 5mm, …, sale")."""
    if unit.kind != "identity":
        return True
    return speaks_of_asked(unit.text, intent.concepts) and not measured_kinds(intent.text)


def denies_asked(work: _Work, doc: Document, text: str, *, prefixed: bool = False) -> bool:
    """`text` says a word the question asks about with a prefix denying it ("is it waxed?" and "Unwaxed, uncoated
    kraft paper", "non-slip", "non toxic"), or, asked what comes with the product (unless `prefixed`: the prefix
    only), says whether that thing is included ("does it come with a propane tank?" and "Propane (LP) only - 20 lb
    tank, not included"): it answers, however far the ranker reads it."""
    asked = [s for s in work.intent.stems - naming_stems(work, doc) if len(s) >= 3 and s.isalpha()]
    low = text.lower()
    contents = not prefixed and "contents" in work.intent.concepts
    if contents and _INCLUDED.search(low) and content_stems(low) & set(asked):
        return True
    # (the denied word read as the question's is: "non-prescription" denies "prescription lenses", whose stem is
    # "prescrib")
    denied = {stem(m.group(1)) for m in re.finditer(r"\b(?:un|non)[- ]?([a-z]{3,})", low)}
    return bool(denied & set(asked)) or any(re.search(rf"\b(?:un|non-?|non )(?:-)?{re.escape(s)}", low) for s in asked)


def free_of_asked(work: _Work, doc: Document, ranked: Sequence[tuple[float, Unit]]) -> Unit | None:
    """The description's sentence saying the product is free of a thing the question names, or has an imitation of it,
    however far the ranker reads it ("I have a latex allergy, is it safe?" and "Latex-free."; "free from nuts"; "is
    it real leather?" and "a polyurethane faux leather"), where the question does not say so itself."""
    # (the words of its name only: a tag may say it too, "latex free")
    asked = [s for s in work.intent.stems - _title_stems(doc) - _LIGHT_VERB_STEMS if len(s) >= 4 and s.isalpha()]
    question = work.intent.lower
    for n, (_, unit) in enumerate(ranked):
        if unit.kind != "description":
            continue
        if (
            n < 3
            and work.intent.yes_no
            and denies_asked(work, doc, unit.text, prefixed=True)
            and not denies_asked(work, doc, question, prefixed=True)
        ):
            return unit  # ... or denies it in the question's own word, ranked near the top ("can it be made with
            # prescription lenses?" and "Heads up: this one is non-prescription only.")
        low = unit.text.lower()
        for word in map(re.escape, asked):
            free = rf"\b{word}\w{{0,3}}[- ]free\b|\bfree (?:of|from) {word}"
            # ("is the wood FSC certified?" asks nothing "faux wood" answers; "real wood?" does)
            fake = rf"\b{_IMITATION} {word}"
            if re.search(free, low) and not re.search(free, question):
                return unit
            if re.search(fake, low) and _GENUINE.search(question) and not re.search(fake, question):
                return unit
    return None


_IMITATION = r"(?:faux|fake|imitation|artificial|synthetic|vegan)"
_GENUINE = re.compile(r"\b(?:real|genuine|actual|proper|authentic|fake|faux|vegan|animal)\b")


_INCLUDED = re.compile(r"\b(?:not )?included\b|\bsold separately\b")


def naming_stems(work: _Work, doc: Document) -> frozenset[str]:
    """The question's words that may name the product in view: its title, handle, type, tags and option values, a
    generic query word, and the word after a demonstrative that its own text uses ("this mic", where the description
    says "one of the quietest mics")."""
    naming = _product_words(doc) | _title_stems(doc) | value_stems(doc) | _GENERIC_QUERY_STEMS
    own = content_stems(doc.body)
    return naming | frozenset(w for w in content_stems(" ".join(_DEMONSTRATED.findall(work.intent.lower))) if w in own)


def _near_sentence(
    ranked: Sequence[tuple[float, Unit]],
    ties: Callable[[Unit], bool] = lambda unit: True,
    names_asked: Callable[[str], bool] = lambda text: False,
) -> Unit | None:
    """The best-ranked unit when it is a description sentence (and so ranked above every fact) at or above
    `NEAR_SENTENCE_BAR` that `ties` to the question, at or above `NEAR_NAMED_BAR` naming the attribute the lexicon reads
    in the question (`names_asked`), or at or above `NEAR_UNTIED_BAR` however worded; the second-ranked, held to the
    same bars, when the first ties to nothing asked; else None."""
    for n, (p, unit) in enumerate(ranked[:2]):
        if unit.kind != "description" or p < min(NEAR_SENTENCE_BAR, NEAR_NAMED_BAR):
            return None
        if p >= NEAR_NAMED_BAR and names_asked(unit.text):
            return unit
        if p >= NEAR_UNTIED_BAR or (p >= NEAR_SENTENCE_BAR and ties(unit)):
            return unit
        if n == 0 and ties(unit):
            return None
        # ... or the next, where the first ties to nothing asked (the description's opening line, "Heat with zero
        # light.") and the next does ("does it give off any light?" and "Emits infrared heat only — no visible light")
    return None


# The ranker's probability from which a description sentence below its bar is stated without the hedge where it writes
# a name or code of the question that no other line of the product, nor its name, type, tags or opening sentence,
# says ("does java fern need co2?" and "… low light, no CO2, no fertiliser needed"; "can I bleed my SRAM brakes with
# it?" and "… never mineral oil in a DOT brake (SRAM, Hayes, Formula)"). Set on four blind probe shops (aquarium,
# babywearing, pet food, bicycle parts), where every hedged sentence at or above it sharing such a word answered;
# below it, near misses ("a matching cabinet?" and "A sturdy, level cabinet or furniture is needed") were as common.
# Any shared word, not only a name, answered as often as not on product-QA data (hetPQA evidence ranking: 4 more
# evidence hits for 7 more unanswerable questions answered, abstention 0.849 to 0.817).
NEAR_OUTRIGHT_BAR = 0.8
_PREPOSITION_STEMS = content_stems(" ".join(PREPOSITIONS))


def said_outright(work: _Work, doc: Document, near: Unit, ranked: Sequence[tuple[float, Unit]]) -> bool:
    """Whether a description sentence below the ranker's bar answers plainly enough to be stated without the hedge:
    it states the kind of figure asked, other than a price ("how often should I oil it?" and "Apply … 2-3 times a
    week"), or, ranked at `NEAR_OUTRIGHT_BAR` or above, it writes a name or code of the question that no other unit of
    the product says, nor its name, type, tags or opening sentence (`_names_written`)."""
    if any(k.states.search(near.text) for k in asked_figures(work.intent.text) if k.name != "price"):
        return True
    if next((p for p, unit in ranked if unit is near), 0.0) < NEAR_OUTRIGHT_BAR:
        return False
    if not speaks_of_asked(near.text, work.intent.concepts):
        return False  # ("… fish allergy. Are the chicken and turkey pâtés safe?" and the line listing the flavours)
    asked = work.intent.stems - _product_words(doc) - _GENERIC_QUERY_STEMS - framing_stems(work.intent.text)
    asked -= _PREPOSITION_STEMS  # ("two way zip … without taking it off" and "… lay baby in without waking them")
    # (the description's opening sentence says what the product is: its words name it, as its title's do)
    described = [unit for _, unit in ranked if unit.kind == "description"]
    opening = min(described, key=lambda unit: unit.position, default=near)
    others = frozenset().union(*(content_stems(unit.text) for _, unit in ranked if unit is not near))
    others |= content_stems(opening.text)
    return bool(asked & _names_written(near.text) - others)


def _names_written(text: str) -> frozenset[str]:
    """The stems of the names and codes `text` writes, capitalised after its first word or with a figure in them
    ("Boba", "SRAM", "CO2", "XL"): a name the question and one line alone share is what the line is about, where a
    common word they share ("stand", "reverse") may be about anything."""
    words = re.findall(r"[^\W_]+", text)[1:]  # (a bare number is no name: "10-year-olds", "25 models")
    coded = [w for w in words if w[:1].isupper() or (any(c.isdigit() for c in w) and not w.isdigit())]
    return content_stems(" ".join(coded))


def _tied(
    work: _Work, doc: Document, ranked: Sequence[tuple[float, Unit]], names_asked: Callable[[str], bool]
) -> Callable[[Unit], bool]:
    """Whether a unit uses a word of the question beyond the product's name, states the kind of figure it asks
    (`addressing.ways_of`) or names the attribute the lexicon reads in it (`names_asked`: "is it waterproof?" and
    "Please treat this one as splash-proof at most"). The description's opening sentence says what the product is
    ("Twenty warm bulbs on a weatherproof cable"): its words are the product's own, as its name's are, and tie it to
    nothing."""
    names = _title_stems(doc)
    described = [u for _, u in ranked if u.kind == "description"]
    opening = min(described, key=lambda u: u.position) if described else None
    return lambda unit: (
        unit is not opening and (bool(ways_of(work.intent.text, [unit], name_stems=names)[0]) or names_asked(unit.text))
    )


def _speaks_to(work: _Work, unit: Unit) -> bool:
    """`unit` names the yes/no attribute the lexicon reads in the question, if it reads one ("is it vegan?" is not
    spoken to by "High-protection mineral-and-chemical sun cream")."""
    asked = [c for c in work.intent.concepts if CONCEPTS_BY_NAME[c].adjective]
    return not asked or any(mentions_concept(unit.text, c) for c in asked)


_LIGHT_VERB_STEMS = word_stems("light_verbs")
_VAGUE_STEMS = word_stems("vague_words")


NOTICE_MARGIN = 0.05  # how much closer in meaning than a notice line a likely sentence must be to go before it
_ADDRESSES = re.compile(r"(?:https?://|www\.)\S+|\S+@\S+\.\w+", re.IGNORECASE)  # a web or email address
_LABELLED = re.compile(r"^([A-Z][\w' -]{0,30}?):\s+\S")  # "Hooks: Two #4 trebles"
_AGE_LIMIT = text_cue("age_limit", re.IGNORECASE)  # "under 3 years", "16+", "aged 8"


def _notice_line(work: _Work, doc: Document, ranked: Sequence[tuple[float, Unit]] = ()) -> str | None:
    """When a sentence of the product's disclosure notices shares a word of the question (not of its name, nor a
    generic one), the notices' sentence closest to the question, after its notice's label: "Battery safety: Stop
    using it if it swells, …"."""
    # what names the product ("bulbs" of "Type: Fall Bulbs") and a light verb ("use" of "Do not use if pregnant" and
    # "how often should I use it?") tie a notice to nothing the question asks
    # (nor does a vague word: "how many waxes will I get out of the bar?" and "Keep out of reach of children")
    asked = _own_words(work, doc) - _LIGHT_VERB_STEMS - _VAGUE_STEMS
    # a line sharing a word ("string") speaks to nothing else asked: not to the attribute the lexicon reads ("does the
    # warranty cover the string?"), nor with the kind of figure asked ("arrow speed at 40 lbs?" and "Never dry-fire")
    concepts = work.intent.concepts
    kinds = measured_kinds(work.intent.text)
    lines: list[tuple[int, str]] = []
    for fact in doc.facts:
        if fact.source != "disclosure":
            continue
        for sentence in split_sentences(_safe_fact(fact).value):
            if not speaks_of_asked(f"{fact.label}: {sentence}", concepts) or (
                kinds and not any(k.states.search(sentence) for k in kinds)
            ):
                continue
            # a line naming the attribute asked with a figure speaks to it without a shared word ("can a 16 year old
            # buy it?" and "Not for sale to anyone under 18"; not "Do not let children twist the swing chains")
            named = bool(concepts and re.search(r"\d", sentence)) and any(
                mentions_concept(sentence, c) for c in concepts
            )
            # (an address says nothing: "is it all solid wood?" and "go to www.P65Warnings.ca.gov/wood")
            said = content_stems(_ADDRESSES.sub(" ", sentence))
            lines.append((len(asked & said) + named, f"{fact.label}: {sentence.strip()}"))
    if not any(shared for shared, _ in lines):
        return None
    # once a notice line shares a word of the question, the notices' line closest in meaning answers: "I'm pregnant,
    # should I stop using it?" is answered by "Not for use during pregnancy", not by "Stop using 1 week before
    # waxing", which shares more of its words
    # ... unless the description's sentence the ranker finds likely enough to answer is plainly closer in meaning:
    # "is it all solid wood or just the top?" and "… a solid Sitka spruce top and solid mahogany back and sides", not
    # "… chemicals including wood dust"; "does the slimline fit under the rear seat …?" and "… bolts to the factory
    # points under the rear seat", not "Fit a correctly rated fuse"
    top_p, top = ranked[0] if ranked else (0.0, None)
    near = top if top is not None and top.kind == "description" and top_p >= NEAR_SENTENCE_BAR else None
    if len(lines) > 1 or near is not None:
        sims = [float(x) for x in work.similarity([line for _, line in lines] + ([near.text] if near else []))]
    else:
        sims = [0.0]
    best = max(range(len(lines)), key=lambda i: (sims[i], lines[i][0]))
    if near is not None and sims[-1] > sims[best] + NOTICE_MARGIN:
        return None
    # "are the hooks barbless?": the notice shares only the word a likely recorded fact is labelled by ("Hooks: Two #4
    # trebles"); that fact is nearer than "Safety warning: Sharp hooks"; so is a labelled line the ranker puts high
    # that says the shared word itself ("how much do I put in the water bucket?" and "Dosage: 1 capful … to 1–2 litres
    # of water", not "Safety: IF IN EYES: Rinse cautiously with water")
    shared = asked & content_stems(lines[best][1].split(":", 1)[-1])
    if shared and any(
        p >= RELATED_BAR
        and not (u.fact is not None and u.fact.source == "disclosure")
        and (shared <= content_stems(label) or (p >= NEAR_UNTIED_BAR and shared <= content_stems(u.text)))
        for p, u in ranked[:3]
        if (label := u.label or (m.group(1) if (m := _LABELLED.match(u.text)) else ""))
    ):
        return None
    return lines[best][1]


def past_named(
    work: _Work, doc: Document, ranked: list[tuple[float, Unit]], named: Sequence[Unit]
) -> list[tuple[float, Unit]]:
    """`ranked` without the `named` units (options only a value of which the question names, which say which variant is
    meant) where the next unit says a word asked beyond the values and the product's name, and so may be the nearest
    line ("can I put a rudder on the no-rudder one later?" and "… can be retrofitted later", below the bar); else
    `ranked` as it is ("dimensions of shape 1?" and "Shape 1 is the tall dome": no nearest line)."""
    rest = [(p, u) for p, u in ranked if u not in named]
    asked = work.intent.stems - naming_stems(work, doc)
    return rest if named and rest and asked & content_stems(rest[0][1].text) else ranked


def _labelled_lines(work: _Work, doc: Document, ranked: list[tuple[float, Unit]]) -> list[Unit]:
    """Description lines written as a fact ("Water resistance: IPX6", "Includes: a pump head; a ball needle") whose
    label the attribute lexicon ties to the question, as a metafield with that key would be, or the question says;
    best by the ranker."""
    keys = [key for name in work.intent.concepts for key in CONCEPTS_BY_NAME[name].keys]
    names = _title_stems(doc) | _GENERIC_QUERY_STEMS
    out = []
    for _, unit in ranked:
        match = _LABELLED.match(unit.text) if unit.kind == "description" else None
        if match is None:
            continue
        label = "_".join(re.findall(r"[a-z0-9]+", match.group(1).lower()))
        # ... or whose label the question says whole, beyond the product's name ("max delay time on the Tidewater
        # Delay?" and "Delay time: 40 – 620 ms")
        said = content_stems(match.group(1))
        if any(fact_key_matches(label, key) for key in keys) or (said <= work.intent.stems and said - names):
            out.append(unit)
    return out


def said_label(work: _Work, doc: Document, ranked: Sequence[tuple[float, Unit]], chosen: list[Unit]) -> list[Unit]:
    """`chosen`, or where its first is a description line led by no label, the best-ranked description line led by a
    label the question says whole beyond the product's name, at or above `NEAR_SENTENCE_BAR` ("Colours: titanium
    white, lemon yellow, …" for "what colours come in the set?", not "Twelve bright, creamy colours in handy tubes")."""
    if not chosen or chosen[0].kind != "description" or _LABELLED.match(chosen[0].text):
        return chosen
    names = _title_stems(doc) | _GENERIC_QUERY_STEMS
    for p, unit in ranked:
        match = _LABELLED.match(unit.text) if unit.kind == "description" else None
        said = content_stems(match.group(1)) if match else frozenset()
        if p >= NEAR_SENTENCE_BAR and said and said <= work.intent.stems and said - names:
            return [unit]
    return chosen


def value_item(work: _Work, doc: Document, ranked: Sequence[tuple[float, Unit]]) -> list[Unit]:
    """The one item of a description list that names the option value the question names and states the kind of
    figure it asks for, with the list's lead-in ("How heavy is the 700x35c?" and "Sizes and pressures: … 700x35c
    (37-622): 4.0-6.0 bar / 55-85 psi, 820 g"), the row of that version; [] where no one item does."""
    kinds = measured_kinds(work.intent.text)
    values = [
        re.compile(rf"(?<![\w-]){re.escape(v)}(?![\w-])", re.I) for _, vs in doc.options for v in vs if len(v) > 1
    ]
    said = [value for value in values if value.search(work.intent.lower)]  # (the one pattern finds it in the list)
    if not kinds or len(said) != 1:
        return []
    found = [
        (unit, item)
        for _, unit in ranked
        if unit.kind == "description"
        for item in unit.items or (unit.text,)  # (a list's items, or a line of its own: "3 L tank: 3.4 kg.")
        if said[0].search(item) and any(k.states.search(item) for k in kinds)
    ]
    if len(found) != 1:
        return []
    unit, item = found[0]
    return [unit if not unit.items else replace(unit, text=f"{unit.lead} {item}".strip(), items=(item,))]
