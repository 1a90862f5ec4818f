"""Questions over several products: a catalogue search ("do you sell tents?") and a comparison."""

from __future__ import annotations

import re
from dataclasses import replace

from ask_engine.answering.addressing import asked_measures, ways_of
from ask_engine.answering.commerce import _commerce, _price
from ask_engine.answering.facts import (
    _BOOLEAN_VALUES,
    _chosen_units,
    _differing_key,
    _fact_sentence,
    _match_facts,
    _predicate,
    _ranked_units,
    _safe_fact,
    _state_unit,
    _subject,
)
from ask_engine.answering.gaps import product_gaps, shop_gap
from ask_engine.answering.options import _is_size_option, _match_options, _options, _variants_with
from ask_engine.answering.passages import _select
from ask_engine.answering.query import (
    _GENERIC_QUERY_STEMS,
    _attribute_stems,
    _concept_stems,
    _head,
    _heads,
    _product_words,
    _title_stems,
)
from ask_engine.answering.units import Unit, product_units
from ask_engine.answering.work import _Answer, _cites_for, _is_untrusted, _Work
from ask_engine.chunking import quotable_lines
from ask_engine.language import Intent, content_stems, join_and, mentions_concept, text_cue, word_list, word_stems
from ask_engine.phrases import phrase
from ask_engine.retrieve import PRICE_LIST_MAX, price_ordered
from ask_engine.types import Document, Evidence, Task

# the words of a comparison that name no attribute, with the lexicon's vague words ("what's the actual difference?")
_COMPARISON_STEMS = content_stems(
    "difference differences differ compare comparison versus vs better best which between one ones two both"
) | word_stems("vague_words")
_CATALOGUE_STEMS = word_stems("catalogue_frame")


# "do you sell / stock / rent X?": the verb and the thing asked for ("do you have / offer X?" may ask about a
# store, a scheme or a service as much as goods, and is left to sentence selection)
_OFFER_RE = text_cue("offer_thing")
_THING_EDGES_RE = text_cue("thing_edges")
# the thing ends where a phrase about it starts: "bikes for kids", "my data to advertisers", "kayaks in stock"
_THING_END_RE = text_cue("thing_end")
_POSSESSIVE_RE = text_cue("possessive")
_SALE_RE = text_cue("on_sale")
_SALE_LISTING_RE = text_cue("sale_listing")  # "what's on sale?", "is anything discounted?"
_SALE_STEMS = word_stems("sale_words")
_LIST_MAX = 6
_SERVICE_VERBS = word_list("service_verbs")  # "do you rent bikes?" asks for a service, not for bikes


def _compare(work: _Work, targets: list[Document]) -> _Answer:
    """One sentence per product for what the question asks (or "not recorded" for that product)."""
    intent = work.intent
    named = tuple(c for c in intent.concepts if not all(mentions_concept(d.title, c) for d in targets))
    if named != intent.concepts:
        # "the ceramic wax warmer vs the electric one": "warmer" names the products, it asks for no warmth
        intent = work.intent = replace(intent, concepts=named)
    answer = _Answer()
    names = frozenset().union(*(_title_stems(d) for d in targets))
    differing = _differing_key(targets)
    parts: list[tuple[Document, _Answer]] = []
    for doc in targets[:4]:
        part = _Answer()
        if intent.price:
            # "which is cheaper for a 250g bag?": each product's price in the option value named, where it has one
            values, _ = _match_options(intent, _options(doc))
            _price(part, doc, _variants_with(doc, values) if values else [], _cites_for(work.task, doc))
        if intent.options and not intent.price:
            # "which colours do they come in?": each product's own option list
            part.extend(_commerce(work, doc))
        elif intent.concepts or not intent.price:
            asked = _attribute_stems(intent, doc) - names - _COMPARISON_STEMS
            facts = _match_facts(work, doc, asked) if (asked or intent.concepts) else []
            if facts:
                _fact_sentence(part, work, doc, facts[0], lead=False)
            elif intent.concepts or asked:
                ranked = _ranked_units(work, doc)
                chosen = _chosen_units(ranked) or _measured_unit(work, doc, ranked)
                if chosen and chosen[0].kind == "description" and doc.title.lower() not in chosen[0].text.lower():
                    # a quoted line says which product it is about ("Otto Sofa Bed — Sofa: W 165 x D 92 cm")
                    part.claim(
                        f"{doc.title} — {chosen[0].text}",
                        _cites_for(work.task, doc, chosen[0].text),
                        markdown=f"**{doc.title}** — {chosen[0].text}",
                        doc=doc.id,
                    )
                elif chosen:
                    _state_unit(part, work, doc, chosen[0], lead=False)
                else:
                    part.gaps += product_gaps(intent, doc)
                    part.unnamed = not _predicate(intent, doc)
                    part.meta(
                        phrase("not_recorded", subject=_subject(doc), predicate=_predicate(intent, doc) or ""),
                        markdown=phrase(
                            "not_recorded",
                            subject=_subject(doc, md=True),
                            predicate=_predicate(intent, doc, md=True) or "",
                        ),
                    )
            elif not intent.price:
                # "what's the difference?": the price, and the first recorded attribute whose values differ
                price = doc.fact("sale") or doc.fact("price")
                if price is not None:
                    _fact_sentence(part, work, doc, price, lead=False)
                fact = doc.fact(differing) if differing else None
                if fact is not None and len(targets) == 2:
                    _fact_sentence(part, work, doc, _safe_fact(fact), lead=False)
        parts.append((doc, part))
    mentioned = set(work.task.resolution.mentioned_doc_ids)
    answered = any(doc.id not in mentioned and any(s.kind == "claim" for s in part.sentences) for doc, part in parts)
    for doc, part in parts:
        if answered and doc.id in mentioned and not any(s.kind == "claim" for s in part.sentences):
            # a product the request's id fixes is answered; another the question only mentions ("I already use
            # your vitamin C serum") gets no "not recorded" of its own
            continue
        answer.use(doc.id)
        answer.extend(part)
    if answer.sentences and all(s.kind == "meta" for s in answer.sentences):
        answer.not_recorded = True
        # "… both say blackout" after the comparison: a "not recorded" naming nothing missing for each product
        answer.unnamed = all(part.unnamed for _, part in parts if part.sentences)
    return answer


def _measured_unit(work: _Work, doc: Document, ranked: list[tuple[float, Unit]]) -> list[Unit]:
    """In a comparison asking for a kind of figure ("which is lighter?"), each product's best unit stating that kind
    of figure ("Weighs 112 g"), whatever the bar: the question names the products and what to compare."""
    if not asked_measures(work.intent.text) or not ranked:
        return []
    units = [u for _, u in ranked]
    ways = ways_of(work.intent.text, units, name_stems=_title_stems(doc))
    return [u for u, w in zip(units, ways, strict=True) if "measure" in w][:1]


def product_header(doc: Document) -> str:
    """A product as a catalogue search compares it with the question: its title and type (embedded at index time)."""
    return f"{doc.title}. {doc.product_type or ''}"


def _catalogue(work: _Work, targets: list[Document]) -> _Answer | None:
    """ "Do you sell tents?", "which jackets are waterproof?": the matching products, one sentence each."""
    task, intent = work.task, work.intent
    sale_listing = bool(_SALE_LISTING_RE.search(intent.lower))
    if targets or not (intent.catalogue or sale_listing):
        return None
    if work.listing:
        return _listed(work, work.listing)
    by_price = _by_price(work)
    if by_price is not None:
        return by_price
    if sale_listing or _SALE_RE.search(intent.lower):
        # "which of your products are on sale?": every product with a sale price, however its page reads
        on_sale = [d for d in task.documents.values() if d.kind == "product" and d.fact("sale") is not None]
        # "are any of your pumps on sale?": those filed under a word the question names, when any is
        kind = intent.stems - _CATALOGUE_STEMS - _GENERIC_QUERY_STEMS - _SALE_STEMS
        on_sale = [d for d in on_sale if kind & _product_words(d)] or on_sale
        if on_sale:
            return _listed(work, on_sale)
    products: list[Document] = []
    for ev in task.evidence:
        doc = task.documents.get(ev.passage.doc_id)
        if doc is not None and doc.kind == "product" and doc not in products:
            products.append(doc)
    if not products:
        return None
    # "doonas (quilt)": the asker's word with the shop's own written after it asks for the shop's
    glossed = content_stems(" ".join(re.findall(r"([\w'’-]+)\s*\([^()]+\)", intent.lower)))
    wanted = {
        w
        for w in intent.stems - _CATALOGUE_STEMS - _GENERIC_QUERY_STEMS - _concept_stems(intent) - glossed
        if not w.isdigit()
    }
    headers = [product_header(d) for d in products]
    sims = work.similarity(headers)
    keep: list[Document] = []
    for doc, sim in zip(products, sims, strict=True):
        words = _product_words(doc)
        # most of what the buyer wants must be in the product's name, type or tags ("gift wrapping" is not a
        # gift card)
        # "which of your products are vegan?" names no goods: every product recorded as vegan answers
        if intent.policy:
            # "what repair services do you offer?" lists the products that are repair services; "do you offer free
            # returns?" asks about a policy, whatever product shares a word with it
            if wanted and wanted <= words:
                keep.append(doc)
        elif (wanted and len(wanted & words) >= 0.6 * len(wanted)) or sim >= 0.55 or (intent.concepts and not wanted):
            keep.append(doc)
    asked_head = _offered_head(intent)
    if not keep or (asked_head and not any(asked_head in _heads(doc) for doc in keep)):
        # "Do you sell iPhones?" when the products naming iPhones are none of them one (cases, screen protectors):
        # the thing asked for is what they are for, not what they are; `_not_offered` says so
        return None
    # "which of your wetsuits come in navy?": those that come in the value named, said so (not their price)
    chosen = {d.id: c for d in keep if (c := _match_options(intent, _options(d))[0])}
    keep = [d for d in keep if d.id in chosen] if chosen and intent.colours else keep
    answer = _Answer()
    for doc in keep:
        if len(answer.sentences) >= 3:
            break
        if doc.id in chosen:
            sized = [f"size {v}" if _is_size_option(n) else v for n, vs in chosen[doc.id].items() for v in vs]
            values, variants = join_and(sized), _variants_with(doc, chosen[doc.id])
            answer.use(doc.id)
            answer.claim(f"The {doc.title} comes in {values}", _cites_for(task, doc), doc=doc.id)
            if variants and all(v.available is False for v in variants):
                answer.claim(f"{values} is sold out", _cites_for(task, doc), doc=doc.id)
            continue
        fact = None
        # "do you sell chargers?" asks for chargers, whatever attribute the word "charger" also reads as
        if intent.concepts and not (asked_head and asked_head in _heads(doc)):
            facts = _match_facts(work, doc, _attribute_stems(intent, doc))
            fact = facts[0] if facts else None
            if fact is None or _BOOLEAN_VALUES.get(fact.value.strip().lower()) is False:
                continue  # only products recorded as having the asked property
        line = (
            None if fact is not None else _line_naming(doc, wanted - content_stems(f"{doc.title} {doc.product_type}"))
        )
        if line is not None and _denies(line, wanted):
            continue  # "Acoustic only, no pickup" is no acoustic guitar with a pickup built in
        answer.use(doc.id)
        if fact is not None:
            _fact_sentence(answer, work, doc, fact, lead=False)
        elif line is not None:
            # "do you have any armchairs that swivel?": the product's line saying so ("Swivels a full 360°")
            answer.claim(f"{doc.title} — {line}", _cites_for(task, doc, line), doc=doc.id)
        else:
            price = doc.fact("sale") or doc.fact("price")
            if price is not None:
                _fact_sentence(answer, work, doc, price, lead=False)
            else:
                first = _first_passage(task, doc)
                lines = quotable_lines(first.passage) if first is not None else []
                if lines:
                    answer.claim(lines[0], _cites_for(task, doc), doc=doc.id)
    return answer if answer.sentences else None


def _offered_thing(intent: Intent) -> tuple[str, str] | None:
    """The verb and the thing of a yes/no "do you sell …?" question ("sell", "iPhone cases"); None for another."""
    match = _OFFER_RE.search(intent.lower)
    if match is None or not intent.yes_no:
        return None
    return match.group(1), _THING_EDGES_RE.sub("", _THING_END_RE.split(match.group(2), maxsplit=1)[0]).strip()


def _offered_head(intent: Intent) -> str:
    """What a "do you sell …?" question asks for, by the last word of the thing it names ("iPhone cases": case); ""
    for another question, or a thing of more than three words."""
    offered = _offered_thing(intent)
    return _head(offered[1]) if offered and len(offered[1].split()) <= 3 else ""


def _line_naming(doc: Document, words: frozenset[str] | set[str]) -> str | None:
    """The product's first description line using one of `words`, what the question asks of it beyond its name."""
    if not words:
        return None
    for unit in product_units(doc, untrusted=_is_untrusted):
        if unit.kind == "description" and content_stems(unit.text) & words:
            return unit.text
    return None


_DENIAL = text_cue("denial")
_DENIED_LABEL = text_cue("denied_label", re.IGNORECASE)


def _denies(line: str, words: frozenset[str] | set[str]) -> bool:
    """`line` says the product lacks what `words` name: a negation just before one of them ("no pickup", "without
    a lid"), or a label whose value is none ("Electronics: None")."""
    if _DENIED_LABEL.match(line):
        return True
    tokens = re.findall(r"[\w'’]+", line.lower())
    for i, token in enumerate(tokens):
        if content_stems(token) & words and any(_DENIAL.fullmatch(t) for t in tokens[max(0, i - 3) : i]):
            return True
    return False


def _by_price(work: _Work) -> _Answer | None:
    """ "Which of your coffees is the cheapest?", "your most expensive tent?": the products of the kind the question
    names, lowest (or highest) price first (`retrieve.price_ordered`; the engine brought them into the evidence)."""
    ordered = price_ordered(work.intent.text, work.task.documents.values())
    if not ordered or not ordered[0]:
        return None
    products, high = ordered
    answer = _Answer()
    answer.meta(phrase("by_price_high" if high else "by_price_low"))
    answer.extend(_listed(work, products[:PRICE_LIST_MAX]))
    return answer


def _listed(work: _Work, products: list[Document]) -> _Answer:
    """One sentence per product, its (sale) price, for a question that asks for a list of them."""
    answer = _Answer()
    for doc in products[:_LIST_MAX]:
        price = doc.fact("sale") or doc.fact("price")
        answer.use(doc.id)
        if price is not None:
            _fact_sentence(answer, work, doc, price, lead=False)
        else:
            answer.claim(doc.title, _cites_for(work.task, doc), doc=doc.id)
    return answer


def _not_offered(work: _Work, targets: list[Document]) -> _Answer | None:
    """ "Do you sell electric bikes?" when no product is one and no policy or FAQ sentence names them: say so.

    The shop's own answer comes first: an FAQ or policy sentence naming every word of the thing ("We don't offer
    equipment rental") is quoted instead."""
    task, intent = work.task, work.intent
    sold = _offered_thing(intent)
    if targets or sold is None:
        return None
    verb, thing = sold
    wanted = content_stems(thing) - _CATALOGUE_STEMS - _GENERIC_QUERY_STEMS
    if not wanted or len(thing.split()) > 5 or _POSSESSIVE_RE.match(thing):
        return None  # "do you sell my data?" asks about a practice, not goods
    # "doonas (quilt)": the shop's own word, written after the asker's (shop or lexicon synonyms), names it too
    readings = dict.fromkeys([thing, re.sub(r"[\w'’-]+\s*\(([^()]+)\)", r"\1", thing)])
    for reading in readings:
        words, head = content_stems(reading) - _CATALOGUE_STEMS - _GENERIC_QUERY_STEMS, _head(reading)
        for doc in task.documents.values():
            if doc.kind == "product" and words and words <= _product_words(doc) and head in _heads(doc):
                return None  # the catalogue has one: the search answers
    selected = _select(work, targets)
    asked = wanted | (content_stems(verb) if verb in _SERVICE_VERBS else frozenset())
    if selected is not None and selected.sentences:
        # what the answer says, with the passages it quotes and their FAQ questions ("Do you have a physical shop?")
        cited = [
            task.evidence[n - 1].passage for s in selected.sentences for n in s.cites if 0 < n <= len(task.evidence)
        ]
        said = content_stems(" ".join([*(s.text for s in selected.sentences), *(f"{p.title} {p.text}" for p in cited)]))
        if asked <= said or selected.not_recorded or work.plain_match:
            return selected  # "Do you have a physical store?": the FAQ "Do you have a shop I can visit?" answers
    answer = _Answer(not_recorded=True)
    offered = f"{thing} to {verb}" if verb in _SERVICE_VERBS else thing
    answer.gaps.append(shop_gap(offered))
    answer.meta(phrase("not_offered", thing=offered, shop=task.shop_name))
    work.notes.append(f"no product, policy or FAQ sentence names {offered!r}")
    return answer


def _first_passage(task: Task, doc: Document) -> Evidence | None:
    for ev in task.evidence:
        if ev.passage.doc_id == doc.id:
            return ev
    return None
