"""A product's recorded facts and units: which answer the question (lexicon, label words, embeddings, the
calibrated ranker) and the templates that state them with the value verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

import numpy as np

from ask_engine.answering.addressing import joined_labels as _joined
from ask_engine.answering.addressing import measured_kinds, ways_of
from ask_engine.answering.options import _in_order
from ask_engine.answering.query import _strip_title, _title_stems, _without_named_values
from ask_engine.answering.ranker import QuestionShape, Ranker, features, lifted, load_ranker
from ask_engine.answering.restate import _asked_adjective, _asked_phrase
from ask_engine.answering.units import Unit, product_units, usable_value
from ask_engine.answering.work import _Answer, _cites_for, _is_untrusted, _plain, _Work
from ask_engine.faithfulness import split_sentences
from ask_engine.language import (
    CONCEPTS,
    CONCEPTS_BY_NAME,
    Intent,
    content_stems,
    fact_key_matches,
    join_and,
    text_cue,
    word_list,
)
from ask_engine.types import Document, Fact

# The least ranker probability for the fact offered after "not recorded" as the nearest recorded one. Measured on the
# hetPQA evidence-ranking dev file converted to a shop: of 50 nearest facts below 0.40, none carried the labelled
# evidence and by hand none spoke to the question ("Brand: ..." for "does her mouth look open?", "Customer return
# policy: standard" for "does water get in when it rains?"); of 44 at or above, 15 carried it ("Number of channels:
# 3" for "is this a 4 channel aircraft?"). Below it the answer says what is missing and stops.
RELATED_BAR = 0.40
# verbs a yes/no attribute's label may start with ("Is heat sensitive", "Contains liquid contents")
_LABEL_VERBS = word_list("label_verbs")

# A fact whose label the question does not mention must be this close to the question to answer it.
FACT_SEMANTIC = 0.50
FACT_SEMANTIC_WITH_WORD = 0.22
RELATED_SEMANTIC = 0.20
# Keys whose facts are answered by the price/stock/options logic, not by attribute matching.
_COMMERCE_KEYS = {"price", "sale", "availability", "compare_at_price", "sku", "barcode"}
_IDENTITY_KEYS = {"vendor", "product_type", "category", "tags"}
_BOOLEAN_VALUES = {"yes": True, "true": True, "no": False, "false": False}
# Second halves of compound attributes ("fragrance free", "dishwasher safe", "water resistant"): shared alone, they
# do not make a fact the one asked about.
_QUALIFIER_STEMS = content_stems("free safe proof resistant friendly compatible suitable certified approved based")
_ADJECTIVE_END = text_cue("adjective_end", re.IGNORECASE)
_PRIVATIVE = word_list("privative_words")
_ACCOMPANYING = word_list("accompanying_participles")
_LABEL_PREPOSITIONS = word_list("label_prepositions")
# the endings of an adjective or participle that links a label's subject to its value ("compatible with", "made in")
_LINKING_ENDINGS = tuple(sorted(word_list("linking_endings")))
_AUXILIARIES = word_list("auxiliary_label_verbs")  # "Can be used with" is no verb of the product's own


def _linking_label(label: str, plural: bool) -> str | None:
    """A label that ends in a preposition and reads as a predicate of the product with its value after it
    ("Compatible with" → "is compatible with", "Made in" → "is made in", "Works with" → "works with"); None for any
    other label ("Price", "Pairs well with" reads as a noun with no verb in it)."""
    words = label.split()
    if len(words) < 2 or words[-1].lower() not in _LABEL_PREPOSITIONS:
        return None
    first = words[0].lower()
    if first.endswith(_LINKING_ENDINGS):
        return f"{'are' if plural else 'is'} {label.lower()}"
    if first in _LABEL_VERBS and first not in _AUXILIARIES:
        verb = first[:-2] if first.endswith(("ches", "shes", "sses")) else first[:-1]
        return " ".join([verb if plural else first, *words[1:]]).lower()
    return None


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def fact_text(fact: Fact) -> str:
    """A fact as its similarity to the question is measured: "Label: value" (the indexer embeds it ahead)."""
    return f"{fact.label}: {_plain(fact.value)}"


def _facts(doc: Document) -> list[Fact]:
    return [f for f in doc.facts if f.key not in _COMMERCE_KEYS and not _is_untrusted(f.value)]


def _concept_facts(work: _Work, doc: Document) -> list[Fact]:
    """Facts whose key the attribute lexicon ties to what the question asks ("waterproof" → `waterproof_rating`)."""
    facts = [f for f in doc.facts if f.key not in _COMMERCE_KEYS and not f.key.endswith("_options")]
    hits: list[Fact] = []
    for name in work.intent.concepts:
        # the first concept the product records answers; its keys in the lexicon's order of importance
        for key in CONCEPTS_BY_NAME[name].keys:
            hits += [f for f in facts if fact_key_matches(f.key, key) and f not in hits]
        # "how heavy is it?" and `weight_capacity` beside `product_weight`: a key that also names another attribute
        # (a capacity) answers after one naming only the attribute asked
        hits.sort(key=lambda f: _names_other_concept(f.key, work.intent.concepts))
        if hits:
            safe = [_safe_fact(f) for f in hits]
            return [f for f in safe if usable_value(f.value)]
    return []


def _names_other_concept(key: str, asked: Sequence[str]) -> bool:
    """A part of the fact's `key` is a lexicon key of an attribute not `asked` ("capacity" of `weight_capacity`)."""
    parts = key.lower().split("_")
    return any(
        part in CONCEPTS_BY_NAME[name].keys for name in CONCEPTS_BY_NAME if name not in asked for part in parts[1:]
    )


@lru_cache(maxsize=1)
def _ranker() -> Ranker:
    return load_ranker()


def _ranked_units(work: _Work, doc: Document) -> list[tuple[float, Unit]]:
    """The product's units with the ranker's probability that each answers the question, best first."""
    units = _questions_led(product_units(doc, untrusted=_is_untrusted))
    if not units or work.embedder is None:
        return []
    probe = _ranking_probe(work, doc)
    sims = work.similarity([u.text for u in units], probe=probe)
    labelled = [u.label for u in units if u.label]
    label_values = iter(work.similarity(labelled, probe=probe)) if labelled else iter(())
    label_sims = np.asarray([float(next(label_values)) if u.label else 0.0 for u in units], dtype=np.float32)
    ranker = _ranker()
    probabilities = ranker.probabilities(features(QuestionShape.read(probe), units, sims, label_sims))
    if ranker.addressed_bars:
        names = _title_stems(doc)
        ways = ways_of(probe, units, name_stems=names)
        probabilities = np.asarray(lifted(probabilities, ways, ranker.bar, ranker.addressed_bars), dtype=np.float32)
    said = _FIGURE.findall(work.intent.text)
    # (a near tie goes to the row whose leading figures the question gives in order: "how many quarts for an
    # 18x18x24?" and "Enclosure footprint: 18 x 18, …", not "… 24 x 18, …"; a question of fewer than two figures
    # gives no order, and no row is read for one)
    ranked = sorted(
        zip((float(p) for p in probabilities), units, strict=True),
        key=lambda pu: -pu[0] - (_NEAR_TIE if len(said) > 1 and _leads_with_said(pu[1].text, said) else 0.0),
    )
    work.notes.append("units: " + "; ".join(f"{p:.2f} {u.text[:40]}" for p, u in ranked[:3]))
    return ranked


_FIGURE = re.compile(r"\d+(?:\.\d+)?")
_NEAR_TIE = 0.01  # the ranker's probabilities this close order units alike


def _leads_with_said(text: str, said: Sequence[str]) -> bool:
    """The figures of `text`'s first cell ("Enclosure footprint: 18 x 18"), two or more, come one after another among
    the question's figures (`said`)."""
    return _in_order(_FIGURE.findall(text.split(",")[0]), said)


def _questions_led(units: list[Unit]) -> list[Unit]:
    """The units, a description's own question ("Need a bigger size?") joined to the sentence it leads into ("Need a
    bigger size? Ask for the XL lining when you order."): alone, it answers nothing."""
    out: list[Unit] = []
    for u in units:
        before = out[-1] if out else None
        if (
            before is not None
            and before.kind == u.kind == "description"
            and before.text.rstrip().endswith("?")
            and not before.items
            and not u.items
            and before.context == u.context
        ):
            text = f"{before.text.rstrip()} {u.text}"
            out[-1] = replace(u, text=text, value=text, position=before.position)
        else:
            out.append(u)
    return out


def _chosen_units(ranked: Sequence[tuple[float, Unit]], question: str = "") -> list[Unit]:
    """The best unit when it clears the calibrated bar, and the second when it clears the second bar, or the first
    bar where the `question` names each one's attribute, joined ("how much EPA and DHA per serving?" and "Dha: 480
    mg", "Epa: 690 mg")."""
    ranker = _ranker()
    if not ranked or ranked[0][0] < ranker.bar:
        return []
    chosen = [ranked[0][1]]
    one, two = ranked[1] if len(ranked) > 1 else (0.0, None)
    if two is not None and (one >= ranker.second_bar or (one >= ranker.bar and _joined(chosen[0], two, question))):
        chosen.append(two)
    return chosen


def _state_unit(answer: _Answer, work: _Work, doc: Document, unit: Unit, *, lead: bool, pronoun: bool = False) -> None:
    """A recorded fact through its template; an option as the list of its values; a description unit quoted."""
    fact = unit.fact
    if unit.kind == "description" or fact is None:
        text = _single_item(unit, work.asked - _title_stems(doc)) or unit.text
        answer.claim(text, _cites_for(work.task, doc, text), doc=doc.id)
        return
    if unit.kind == "option":
        values = [v.strip() for v in unit.value.split(",") if v.strip()]
        label = _plural_label(unit.label.lower())
        verb = "are" if len(values) > 1 else "is"
        owner = "Their" if _is_plural_title(doc.title) else "Its"
        subject = f"{owner} {label}" if pronoun else f"The {label} of the {doc.title}"
        subject_md = subject if pronoun else f"The {label} of the **{doc.title}**"
        answer.claim(
            f"{subject} {verb} {join_and(values)}",
            _cites_for(work.task, doc),
            markdown=f"{subject_md} {verb} {join_and(values)}",
            doc=doc.id,
        )
        return
    _fact_sentence(answer, work, doc, replace(fact, value=unit.value), lead=lead, pronoun=pronoun)


def _single_item(unit: Unit, asked: frozenset[str]) -> str | None:
    """A list unit's one item that names words of the question none of its siblings do, after the lead-in ("Care:
    Covers are not removable." for "are the covers removable?", not the whole care list); None when no single item
    stands out (then the list answers as a whole)."""
    if len(unit.items) < 2:
        return None
    shared = content_stems(unit.lead)
    words = [(content_stems(item) & asked) - shared for item in unit.items]
    # an item whose words no sibling's include: two with the same words are both kept, so none stands out
    best = [i for i, w in enumerate(words) if w and not any(w < v for v in words)]
    if len(best) != 1:
        return None
    return f"{unit.lead} {unit.items[best[0]].rstrip(' .;')}."


def _state_units(answer: _Answer, work: _Work, doc: Document, units: Sequence[Unit]) -> None:
    """State each unit in turn: the first leads, the rest name the product by pronoun."""
    for n, unit in enumerate(units):
        _state_unit(answer, work, doc, unit, lead=n == 0, pronoun=n > 0)


def _match_facts(work: _Work, doc: Document, asked: frozenset[str]) -> list[Fact]:
    """Facts that answer the question: lexicon keys first, then label words and embedding similarity."""
    hits = _concept_facts(work, doc)  # the first concept the product records answers
    if hits:
        return hits
    facts = [f for f in doc.facts if f.key not in _COMMERCE_KEYS and not f.key.endswith("_options")]
    if not asked:
        return []
    candidates = [f for f in facts if f.key not in _IDENTITY_KEYS and not f.key.endswith("_options")]
    if not candidates:
        return []
    texts = [fact_text(f) for f in candidates]
    probe = _probe(work, doc)
    sims = work.similarity(texts, probe=probe)
    scored: list[tuple[float, Fact]] = []
    for fact, sim in zip(candidates, sims, strict=True):
        label_words = content_stems(f"{fact.label} {fact.key.replace('_', ' ')}")
        shared = asked & label_words
        if shared <= _QUALIFIER_STEMS and label_words - _QUALIFIER_STEMS:
            shared = frozenset()  # "cruelty-free" is not "fragrance free": the word saying what is free must match
        overlap = len(shared)
        if not overlap and work.intent.yes_no and _is_boolean(fact) is not None:
            continue  # "is it cruelty-free?" is not answered "yes" by "Vegan: yes", however close the two read
        if (overlap and sim >= FACT_SEMANTIC_WITH_WORD) or sim >= FACT_SEMANTIC:
            scored.append((float(sim) + 0.2 * overlap, fact))
    scored.sort(key=lambda x: -x[0])
    top = [f for _, f in scored[:2]]  # the second only where the question joins the two ("EPA and DHA")
    top = top if len(top) == 2 and _joined(top[0], top[1], work.intent.text) else top[:1]
    return [_safe_fact(f) for f in top if usable_value(_safe_fact(f).value)]


def _safe_fact(fact: Fact) -> Fact:
    """The fact with any instruction-like sentence removed from its value."""
    if not _is_untrusted(fact.value):
        return fact
    kept = [s for s in split_sentences(fact.value) if not _is_untrusted(s)]
    return replace(fact, value=" ".join(kept))


def _probe(work: _Work, doc: Document) -> str:
    """`_attribute_probe` of the work's question for `doc`, made once per question and product."""
    key = (work.intent.text, doc.id)
    if key not in work.probes:
        work.probes[key] = _attribute_probe(work.intent, doc)
    return work.probes[key]


def _attribute_probe(intent: Intent, doc: Document) -> str:
    """The question with the product's name taken out, so similarity measures the attribute asked about. Only a run of
    the title's words names the product: "Is this one waterproof?" about the "Aldergrove 3L Waterproof Jacket" still
    asks "waterproof", as the ranker was calibrated on whole questions."""
    # (the last word of a label of its own is what the label is of: "Melatonin", "Elemental magnesium"; not "basket" of
    # "Basket depth standard")
    labels = frozenset().union(*(content_stems(f.label.split()[-1]) for f in doc.facts if f.source == "metafield"))
    text = _strip_title(intent.text, doc.title, placeholder="it", labels=labels) or intent.text
    if doc.product_type:
        # "where are the Halden sunglasses made?" about the Halden Titanium, a pair of sunglasses: where it is made
        text = _strip_title(text, doc.product_type, named=True) or text
    return _without_named_values(text, doc)


def _ranking_probe(work: _Work, doc: Document) -> str:
    """What the ranker reads as the question: the attribute probe, or for a follow-up that names nothing but a product
    ("what about the Aldergrove jacket?") the previous question, less the names of the products both are about."""
    probe = _probe(work, doc)
    for other_id in work.task.resolution.doc_ids if work.intent.comparison else ():
        # "which is lighter, the Volt 65W or the Volt 140W?" asks each of them "which is lighter?"
        other_doc = work.task.documents.get(other_id)
        if other_doc is not None and other_doc.id != doc.id and other_doc.kind == "product":
            probe = _strip_title(probe, other_doc.title, placeholder="it") or probe
    history = work.task.history
    if content_stems(probe) or not history or not work.intent.concepts:
        return probe
    previous = history[-1]
    text = previous.query
    for other in [doc, *(work.task.documents[d] for d in previous.doc_ids if d in work.task.documents)]:
        text = _strip_title(text, other.title, placeholder="it")
    return text if content_stems(text) else probe


def _differing_key(docs: Sequence[Document]) -> str | None:
    """The first attribute every product records, with different values (in the first product's order)."""
    if len(docs) < 2:
        return None
    for fact in _facts(docs[0]):
        if fact.key in _IDENTITY_KEYS or fact.key.endswith("_options"):
            continue
        values = [d.fact(fact.key) for d in docs[1:]]
        if all(v is not None for v in values) and any(v.value != fact.value for v in values if v is not None):
            return fact.key
    return None


def _is_boolean(fact: Fact) -> bool | None:
    return _BOOLEAN_VALUES.get(fact.value.strip().strip(".").lower())


def _label(fact: Fact) -> str:
    """The label as it reads mid-sentence: lower case, acronyms and words with a capital after their first letter
    kept ("SPF", "UPF", "pH", "eBike")."""
    words = fact.label.split()
    return " ".join(w if (w.isupper() and len(w) > 1) or any(c.isupper() for c in w[1:]) else w.lower() for w in words)


def _adjective_label(label: str) -> bool:
    words = label.split()
    return len(words) <= 3 and bool(_ADJECTIVE_END.search(words[-1])) and not words[-1].endswith("ity")


def _clause_label(label: str) -> tuple[str, str] | None:
    """A label that is a thing and a participle of its coming with the product ("batteries included", "assembly
    required") as (thing, participle); None for a label that reads as an adjective ("machine washable", "waterproof",
    "dry treated": the product itself is treated) or a noun."""
    words = label.split()
    if not 2 <= len(words) <= 4 or words[-1] not in _ACCOMPANYING or words[-2].endswith("lly"):
        return None  # "fully lined" describes the product
    return " ".join(words[:-1]), words[-1]


def _is_plural_title(title: str) -> bool:
    # the head noun comes before a qualifying phrase: "Teething Ring for Puppies" is one ring, "Socks for Men" socks
    head = re.split(r"\s+-\s+|\(|\s+(?:for|with|by|from|in|of)\s+", title, flags=re.IGNORECASE)[0].strip()
    words = re.findall(r"[A-Za-z]+", head)
    if not words:
        return False
    last = words[-1].lower()
    return last.endswith("s") and not last.endswith(("ss", "us", "is", "'s"))


def _a(word: str) -> str:
    """The indefinite article for `word` ("a 2-year", "an 8-year", "an 11-year", "a one-year")."""
    low = word.lower()
    if re.match(r"^(?:8|11|18|8\d)(?:\D|$)", low) or (low[:1] in "aeio" and not low.startswith(("one", "eu", "uni"))):
        return "an"
    return "a"


def _fact_sentence(
    answer: _Answer, work: _Work, doc: Document, fact: Fact, *, lead: bool, pronoun: bool = False
) -> None:
    """State one recorded fact in a template that keeps its value verbatim and always reads correctly."""
    cites = _cites_for(work.task, doc, f"{fact.label}: {fact.value}")
    title = doc.title
    plural = _is_plural_title(title)
    be = "are" if plural else "is"
    label = _label(fact)
    value_md = fact.value.strip().rstrip(".") if not fact.value.strip().endswith(("..", "etc.")) else fact.value
    value = _plain(value_md)
    subject = "they" if pronoun and plural else "it" if pronoun else f"the {title}"
    subject_md = subject if pronoun else f"the **{title}**"
    boolean = _is_boolean(fact)
    # "is there fragrance in it?" answered by "Fragrance free: no" asks the opposite of the label: "No," would say
    # there is none; the fact alone ("it is not fragrance free") answers without a reversed yes or no
    opposite = bool(set(re.findall(r"[a-z]+", label.lower())[-1:]) & _PRIVATIVE) and not (
        _PRIVATIVE & set(re.findall(r"[a-z]+", work.intent.lower))
    )
    yes_no = lead and work.intent.yes_no and not opposite

    def say(text: str, md: str) -> None:
        answer.claim(_sentence_case(text), cites, markdown=_sentence_case(md), doc=doc.id)

    clause = _clause_label(label)
    if boolean is not None and clause is not None:
        # "Batteries included: no" → "No, batteries are not included with the Porch Lights", not "is not batteries
        # included"
        thing, participle = clause
        prefix = ("Yes, " if boolean else "No, ") if yes_no else ""
        verb = f"{'are' if _is_plural_title(thing) else 'is'}{'' if boolean else ' not'} {participle}"
        with_whom = "them" if pronoun and plural else "it" if pronoun else None
        say(
            f"{prefix}{thing} {verb} with {with_whom or subject}",
            f"{prefix}{thing} {verb} with {with_whom or subject_md}",
        )
        return
    verb, _, rest = label.partition(" ")
    if boolean is not None and verb in _LABEL_VERBS and rest:
        # "Is heat sensitive: no" → "it is not heat sensitive", not "it is not is heat sensitive"; "Contains liquid:
        # yes" → "it contains liquid", not "it has contains liquid"
        prefix = ("Yes, " if boolean else "No, ") if yes_no else ""
        does = "do" if plural else "does"
        if verb in ("is", "are"):
            tail = f"{be}{'' if boolean else ' not'} {rest}"
        elif verb == "can":
            tail = f"{'can' if boolean else 'cannot'} {rest}"
        elif verb in ("has", "have"):
            tail = f"{'have' if plural else 'has'} {rest}" if boolean else f"{does} not have {rest}"
        else:
            base = verb[:-2] if verb.endswith(("ches", "shes", "sses")) else verb[:-1]
            tail = f"{base if plural else verb} {rest}" if boolean else f"{does} not {base} {rest}"
        say(f"{prefix}{subject} {tail}", f"{prefix}{subject_md} {tail}")
        return
    if boolean is not None:
        adjective = _adjective_label(label)
        if boolean:
            prefix = "Yes, " if yes_no else ""
            tail = f"{be} {label}" if adjective else f"{'have' if plural else 'has'} {label}"
        else:
            prefix = "No, " if yes_no else ""
            tail = f"{be} not {label}" if adjective else f"{'do' if plural else 'does'} not have {label}"
        say(f"{prefix}{subject} {tail}", f"{prefix}{subject_md} {tail}")
        return
    if fact.key == "price":
        say(f"{subject} {be} priced {_price_phrase(value)}", f"{subject_md} {be} priced {_price_phrase(value_md)}")
        return
    if fact.key == "sale":
        say(f"{subject} {be} on sale: {value}", f"{subject_md} {be} on sale: {value_md}")
        return
    if fact.key == "availability" and re.match(
        r"^(?:in stock|sold out|out of stock|available|unavailable)", value, re.I
    ):
        say(f"{subject} {be} {value}", f"{subject_md} {be} {value_md}")
        return
    verb = label.strip().lower()
    if verb in _LABEL_VERBS and verb not in _AUXILIARIES:
        # "Serves: 8-10" → "the Grand Hamper serves 8-10", not "the serves of the Grand Hamper are 8-10"
        base = verb[:-2] if verb.endswith(("ches", "shes", "sses")) else verb[:-1]
        says = base if plural else verb
        say(f"{subject} {says} {value}", f"{subject_md} {says} {value_md}")
        return
    linked = _linking_label(label, plural)
    if linked is not None:
        # "Compatible with: Isar Extending Dining Table" → "the Isar Extension Leaf is compatible with Isar Extending
        # Dining Table", not "Compatible with for the Isar Extension Leaf: …"
        say(f"{subject} {linked} {value}", f"{subject_md} {linked} {value_md}")
        return
    words = content_stems(label)
    # "Runs half a size small - ..." or "Machine wash at 30 °C. Do not..." reads as a sentence of its own
    sentence_like = (
        bool(re.search(r"[.;:!?]\s", value))
        or len(value.split()) > 14
        or (value[:1].isupper() and len(value.split()) > 3 and not value.split()[0].isupper())
    )
    if (
        not sentence_like
        and words
        and words <= content_stems(value)
        and re.match(r"^[\dA-Za-z]", value)
        and not re.match(r"^(?:all|any|every|each|most|both|some|many)\b", value, re.I)  # "has an All skin types"
    ):
        # "2-year manufacturer's warranty against defects" already says what it is
        article = "" if re.match(r"^(?:a|an|the|one|no)\b", value, re.I) else _a(value) + " "
        verb = "have" if plural else "has"
        say(f"{subject} {verb} {article}{value}", f"{subject_md} {verb} {article}{value_md}")
        return
    if sentence_like:
        if pronoun:
            say(f"{fact.label}: {value}", f"{fact.label}: {value_md}")
        else:
            say(f"{fact.label} for the {title}: {value}", f"{fact.label} for the **{title}**: {value_md}")
        return
    verb = "are" if _plural_word(label) else "is"
    if pronoun:
        owner = "their" if plural else "its"
        say(f"{owner} {label} {verb} {value}", f"{owner} {label} {verb} {value_md}")
    else:
        say(f"the {label} of the {title} {verb} {value}", f"the {label} of the **{title}** {verb} {value_md}")


def _plural_word(label: str) -> bool:
    head = re.split(r"\s+of\s+", label, maxsplit=1)[0].split()  # "number of channels" is one number
    last = head[-1] if head else ""
    return last.endswith("s") and not last.endswith(("ss", "us", "is", "ness", "sis"))


def _plural_label(label: str) -> str:
    if _plural_word(label) or not label[-1:].isalpha():  # "Option 1" has no plural form ("option 1s")
        return label
    if label.endswith("y") and not label.endswith(("ay", "ey", "oy", "uy")):
        return label[:-1] + "ies"
    return label + ("es" if label.endswith(("s", "sh", "ch", "x", "z")) else "s")


def _price_phrase(value: str) -> str:
    return value if value.lower().startswith(("from ", "between ", "at ", "up to ")) else f"at {value}"


def _missing_predicate(label: str, doc: Document, md: bool = False) -> str:
    """What the product does not record, named by a label other products record: "the bed temperature of the X", or
    for a label led by a verb, "whether the X has auto focus" (not "the has auto focus of the X")."""
    first, _, rest = label.partition(" ")
    if first.lower() in _LABEL_VERBS and rest:
        return f"whether {_subject(doc, md)} {first.lower()} {rest.lower()}"
    return f"the {label.lower()} of {_subject(doc, md)}"


def _subject(doc: Document, md: bool = False) -> str:
    return f"the **{doc.title}**" if md else f"the {doc.title}"


@lru_cache(maxsize=4096)
def _key_concepts(key: str) -> frozenset[str]:
    """The lexicon attributes a fact key records ("item_package_weight" → weight)."""
    return frozenset(c.name for c in CONCEPTS if any(fact_key_matches(key, want) for want in c.keys))


def _recorded_concepts(doc: Document) -> frozenset[str]:
    """The lexicon attributes `doc` records a usable fact for, by key ("digital_storage_capacity" records the
    capacity): the shop has recorded them, whether or not that fact answered the question. Options (sizes, colours)
    are the commerce answer's to report."""
    keys = [
        f.key
        for f in doc.facts
        if f.key not in _COMMERCE_KEYS and not f.key.endswith("_options") and usable_value(f.value)
    ]
    return frozenset().union(*(_key_concepts(key) for key in keys))


def _unrecorded(intent: Intent, doc: Document) -> tuple[str, ...]:
    """The attributes the question names that `doc` records nothing for."""
    recorded = _recorded_concepts(doc) if intent.concepts else frozenset()
    return tuple(name for name in intent.concepts if name not in recorded)


def _predicate(intent: Intent, doc: Document, md: bool = False) -> str | None:
    """What the shop has not recorded, phrased from the question: "whether the X is waterproof", "the warranty of
    the X", "how long the X burns". None when no safe phrasing exists (the caller says "that"). An attribute the
    product records a fact for is never said to be missing ("how much can it hold?" when only a storage capacity is
    recorded, and too far from the question to answer it): the question's own words are phrased instead."""
    subject = _subject(doc, md)
    plural = _is_plural_title(doc.title)
    be = "are" if plural else "is"
    for name in _unrecorded(intent, doc):
        concept = CONCEPTS_BY_NAME[name]
        # "is it waterproof?" asks for the adjective; "what's the waterproof rating?" asks for a value
        if intent.yes_no and concept.adjective and intent.wh in (None, "which"):
            # the shopper's own words ("dishwasher safe") over the concept's fixed adjective ("washable"), which
            # stands only for a question saying it or asking what it is ("can I freeze it?" is not "warm": its phrase)
            said = _asked_adjective(intent, doc) or concept.adjective
            if not (content_stems(said) & intent.stems or re.match(r"(?:is|are)\s", intent.lower)):
                return _asked_phrase(intent, doc, subject, be, plural)
            return f"whether {subject} {be} {said}"
        if concept.noun.startswith("whether "):
            return f"whether {subject} {be} {concept.noun.split(' is ', 1)[-1]}"
        if intent.yes_no and not concept.adjective and intent.wh is None:
            # "does it come with a lid?" asks about one thing: "whether the X comes with a lid"
            return _asked_phrase(intent, doc, subject, be, plural) or f"the {concept.noun} of {subject}"
        return f"the {concept.noun} of {subject}"
    return _asked_phrase(intent, doc, subject, be, plural)


def states_kind(question: str, answer: _Answer, language: str = "en") -> bool:
    """`answer` answers (it is no "not recorded"), and one of its stated sentences states a figure of the kind
    `question` asks for, where it asks for one (`states_asked_kind`: "how heavy is the 45L bag?")."""
    stated = [s.text for s in answer.sentences if s.kind == "claim"]
    return not answer.not_recorded and any(states_asked_kind(question, t, language) for t in stated)


def states_asked_kind(question: str, text: str, language: str = "en") -> bool:
    """`text` states a figure of a kind `question` asks for other than a count, or `question` asks for none; a length
    is stated by figures across an "x" without a unit too ("product measures: 6.5 x 2.5 x 23.5")."""
    kinds = measured_kinds(question, language)
    return (
        not kinds
        or any(k.states.search(text) for k in kinds)
        or (any(k.name == "length" for k in kinds) and bool(_ACROSS.search(text)))
    )


_ACROSS = re.compile(r"\d+(?:[.,]\d+)?\s*[x×]\s*\d+(?:[.,]\d+)?")
