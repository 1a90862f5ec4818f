"""Product questions a page other than the fact sheet answers, or that need no fact: the product's own terms for a
store process ("Final sale – can't be returned"), "do you sell the X?" with the product named, and the guide section
a how-to question about it reads.
"""

from __future__ import annotations

import numpy as np

from ask_engine.answering.facts import _fact_sentence, states_asked_kind
from ask_engine.answering.query import _GENERIC_QUERY_STEMS, _PROCESS_WORD, _product_words, _title_stems
from ask_engine.answering.rules import _VAGUE_STEMS
from ask_engine.answering.sentences import _fits, _quote, _score, _units
from ask_engine.answering.units import Unit, product_units
from ask_engine.answering.work import _Answer, _cites_for, _is_untrusted, _Unit, _Work
from ask_engine.language import Intent, content_stems, folded_phrases, offer_stems, text_cue, word_stems
from ask_engine.retrieve import AMOUNT_RE
from ask_engine.types import Document

# A how-to question about a product goes to a page section whose heading is at least this close to it.
GUIDE_HEADING_SEMANTIC = 0.30
# "Do you sell / stock / carry / have the X?": a question whether the shop offers a product (lexicon data)
_SELL_STEMS = offer_stems()
_HOW_TO_STEMS = word_stems("how_to_words")


def _own_terms(work: _Work, doc: Document) -> _Answer | None:
    """The product's own description sentence using the store-process word a policy question asks about ("return"
    in "can they return it if they don't like the colours?" and "Final sale – this set can't be returned or
    exchanged."), the one closest to the question; None when its page states no such terms."""
    asked = content_stems(" ".join(_PROCESS_WORD.findall(work.intent.lower)))
    if not asked:
        return None
    # (a fact labelled with it too: "Return by: 2026-04-30")
    units = [u for u in product_units(doc, untrusted=_is_untrusted) if u.kind in ("description", "fact")]
    units = [u for u in units if asked & content_stems(folded_phrases(u.text))]  # "final sale" says "no return"
    # ... one stating the kind of figure asked first ("when must it be returned?" and the date, not "by the return date")
    units = [u for u in units if states_asked_kind(work.intent.text, u.text)] or units
    return _closest_line(work, doc, units)


def own_service_price(work: _Work, doc: Document) -> _Answer | None:
    """ "the tip snapped off, how much extra to fix that by mail?" of a mail-in sharpening service: the price of a
    service asked of the product in view where its own description states one ("Broken tips and reprofiling are $15
    per knife"), the priced sentence closest to the question among those sharing a word of it beyond the product's
    name; None where its page prices nothing so."""
    if not work.intent.service_object:
        return None
    asked = work.intent.stems - _title_stems(doc) - _GENERIC_QUERY_STEMS
    units = [u for u in product_units(doc, untrusted=_is_untrusted) if u.kind == "description"]
    units = [u for u in units if AMOUNT_RE.search(u.text) and asked & content_stems(u.text)]
    return _closest_line(work, doc, units)


def _closest_line(work: _Work, doc: Document, units: list[Unit]) -> _Answer | None:
    """The one of the product's `units` closest in meaning to the question, quoted as the answer; None for none."""
    if not units:
        return None
    sims = work.similarity([u.text for u in units])
    best = units[int(np.argmax(sims))]
    answer = _Answer()
    answer.use(doc.id)
    answer.claim(best.text, _cites_for(work.task, doc, best.text), doc=doc.id)
    return answer


def _names_only(work: _Work, targets: list[Document]) -> bool:
    """ "Do you sell / have ...?" names nothing but the products in view: "do you have a return policy?" or "do you
    offer gift wrapping?" about a product asks about something else, which it is not."""
    named = frozenset().union(*(_product_words(doc) for doc in targets))
    return not (work.intent.stems - named - _SELL_STEMS - _VAGUE_STEMS)  # "do you sell kegging stuff?"


def _offered(work: _Work, targets: list[Document]) -> _Answer:
    answer = _Answer()
    answer.meta("Yes.")
    for doc in targets[:3]:
        answer.use(doc.id)
        price = doc.fact("sale") or doc.fact("price")
        if price is not None:
            _fact_sentence(answer, work, doc, price, lead=False)
        else:
            answer.claim(f"The shop sells the {doc.title}", _cites_for(work.task, doc), doc=doc.id)
        availability = doc.fact("availability")
        if availability is not None and doc.variants and not any(v.available or v.backorder for v in doc.variants):
            # "do you sell the heart sparklers?" when every variant is sold out: it is sold here, but not to be had
            _fact_sentence(answer, work, doc, availability, lead=False)
    return answer


def _headed_by(heading: str, doc: Document, kinds: frozenset[str] = frozenset()) -> bool:
    """`heading` is the product's name and one more word at most ("Hori hori care" for the "Hori Hori Digging Knife"),
    by a word of its name other than the catalogue's product types (`kinds`): "Storing pens" and "Do you engrave pens?"
    name no "Reclaimed Rimu Three-Pen Case" in a shop of "Fountain Pens"."""
    words, title = content_stems(heading), _title_stems(doc)
    return bool((words & title) - kinds) and len(words - title) <= 1


def _guide(work: _Work, targets: list[Document], *, named_only: bool = False) -> _Answer | None:
    """A page or FAQ section whose heading names what a how-to question is about, quoted from its start; with
    `named_only`, only a section headed by the name of a product in view."""
    units = [u for u in _units(work.task) if u.evidence.passage.kind != "product" and not u.header]
    wanted = work.asked - _GENERIC_QUERY_STEMS - _HOW_TO_STEMS
    # (a section headed by the product in view's name ("Brass khal batta care" for "how to clean the brass mortar?"
    # about the Brass Khal Batta (Mortar & Pestle)) is its guide, however far its heading reads from the question)
    named = [u for u in units if any(_headed_by(u.context, d, work.task.kind_words) for d in targets)]
    units = [u for u in units if (wanted & content_stems(u.context) and not named_only) or u in named]
    if not units:
        return None
    _score(work, units)
    best = max(named or units, key=lambda u: (u.context_semantic, u.score))
    if best.context_semantic < GUIDE_HEADING_SEMANTIC and not named:
        return None
    entry = sorted((u for u in units if u.evidence.passage.id == best.evidence.passage.id), key=lambda u: u.key)
    answer = _Answer()
    chosen: list[_Unit] = []
    for u in entry:
        if len(chosen) >= 2 or not _fits(chosen, u):
            break
        chosen.append(u)
        _quote(answer, u)
    for doc in targets:
        answer.use(doc.id)
    return answer if answer.sentences else None


def asks_how_to(intent: Intent) -> bool:
    """A how-to question ("How do I look after a cast iron pan?"), not one about a price, stock or options."""
    return bool(_HOW_TO.match(intent.lower)) and not (intent.price or intent.stock or intent.options)


_HOW_TO = text_cue("how_to")


def untargeted_guide(work: _Work, targets: list[Document]) -> _Answer | None:
    """ "How do I season a brand new offset?" naming no one product: the guide section its heading names ("Seasoning a
    new offset or cabinet smoker"), as for a product in view; None for a question naming one, or no how-to question."""
    return None if targets or not asks_how_to(work.intent) else _guide(work, [])
