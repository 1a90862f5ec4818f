"""Policy, FAQ and page questions: the best one to three evidence sentences, an FAQ entry or section whose
question or heading is this one, a policy's list entry for a kind of goods, or "not mentioned".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from ask_engine.answering.addressing import framing_stems
from ask_engine.answering.gaps import shop_gap
from ask_engine.answering.query import (
    _COMMON_TITLE_STEMS,
    _GENERIC_QUERY_STEMS,
    _SHIP_WORDS,
    _kind_stems,
    _names_in,
    _query_names,
    _title_stems,
)
from ask_engine.answering.rules import (
    _OFFER_STEMS,
    _PROCESS_STEMS,
    _RETURN_STEMS,
    _VAGUE_STEMS,
    _head_stems,
    _kind_section,
)
from ask_engine.answering.sentences import (
    FAQ_QUESTION_MATCH,
    PRODUCT_RULE_BONUS,
    _bare_item,
    _fits,
    _heading_names,
    _heading_words,
    _looks_like_item,
    _near_duplicate,
    _quote,
    _score,
    _units,
    _with_context,
)
from ask_engine.answering.shipping import _MONEY
from ask_engine.answering.work import _Answer, _Unit, _Work
from ask_engine.language import (
    _PRICE_RE,
    Intent,
    content_stems,
    country_codes_in,
    join_and,
    stem,
    text_cue,
    word_list,
)
from ask_engine.phrases import phrase
from ask_engine.towns import is_town
from ask_engine.types import Document, Task

# Relevance floor for quoting a sentence: below it the question is off-topic for this shop (on the calibration set
# every on-topic question scored above 0.42 and every off-topic one - weather, poems, sport, trivia - below 0.39).
MIN_RELEVANCE = 0.40
MIN_SEMANTIC = 0.30
MIN_RELEVANCE_PROCESS = 0.32
MIN_RELEVANCE_GUARDED = 0.55
MIN_SEMANTIC_PROCESS = 0.20
FAQ_QUESTION_NEAR = 0.70
# Below this similarity the best sentence does not answer a question using a word no evidence uses
UNSAID_SEMANTIC = 0.45
# A section heading this close to the question is the question ("How to start a return"): quoted from its start.
HEADING_QUESTION_MATCH = 0.85
# A two-word thing the question asks about reads as the same thing as the shop's ("size chart" / "size guide") at
# this similarity; below it, a shared first word names a different thing ("gift wrapping" / "gift cards").
COMPOUND_SAME = 0.70
# When the best sentence is another FAQ entry's answer, an entry whose question is this close, and this much closer
# than that entry's, answers instead.
FAQ_QUESTION_CLOSER_FLOOR = 0.50
FAQ_QUESTION_MARGIN = 0.05
# A policy/FAQ sentence must score this well to answer a product question the product itself does not record.
POLICY_OVER_PRODUCT = 0.55

_DEICTIC_RE = text_cue("deictic")
# "Yes." or "No, we don't." says nothing without its FAQ question.
_BARE_YES_NO = text_cue("bare_yes_no", re.IGNORECASE)
_SELF_REFERENCE = text_cue("self_reference", re.I)


def _select(work: _Work, targets: list[Document], *, policy_only: bool = False) -> _Answer | None:
    """The best one to three evidence sentences for a policy, FAQ or general question."""
    task, intent = work.task, work.intent
    units = _units(task)
    deictic = not targets and bool(_DEICTIC_RE.search(intent.lower))
    if policy_only:
        # a policy answers a product's question only where it speaks of that product or its kind, and of no other
        kinds = frozenset().union(*(_kind_stems(d) for d in targets))
        others = [d.title.lower() for d in task.documents.values() if d.kind == "product" and d not in targets]
        own = {w.lower() for d in targets for w in re.findall(r"[\w'’]+", d.title)} | {
            w.lower() for w in re.findall(r"[\w'’]+", task.shop_name)
        }
        # ... unless it names the product in view among others ("The Vero, Pico and C64 are 120 V only")
        # by a word of its name that no other product's name has and that is not its kind ("C64", not "oil")
        distinct = frozenset().union(
            *(_title_stems(d) - content_stems(d.product_type or "") for d in targets)
        ) - frozenset().union(*(content_stems(title) for title in others))
        units = [
            u
            for u in units
            if u.evidence.passage.kind != "product"
            and kinds & content_stems(u.text + " " + u.context)
            and (
                distinct & content_stems(u.text)
                or not (any(title in u.text.lower() for title in others) or _names_other_product(u.text, own))
            )
        ]
    elif (intent.policy and any(u.evidence.passage.kind != "product" for u in units)) or (
        deictic and intent.product_specific
    ):
        # Process questions are answered by policies and pages, even when a product is in view; and "is this
        # in stock?" about a product nobody could identify is never answered from some other product.
        units = [u for u in units if u.evidence.passage.kind != "product"]
    # "this policy explains how to return it" points at the answer instead of giving it
    units = [u for u in units if not u.header and not _SELF_REFERENCE.search(u.text)]
    if intent.shipping and _SHIP_WORDS.search(intent.lower) and not (intent.stems & _RETURN_STEMS):
        # "How long will delivery take?" is answered by the shipping policy, not by a refund rule that happens
        # to say "delivery date"; shops without a typed shipping policy keep every passage
        # (an FAQ entry about something else the question asks, its question sharing two of the question's words
        # and none about shipping, stays: "Can I collect my order from the workshop?" for "can I collect my order
        # myself to save on delivery?"; an entry about shipping says less than the policy)
        shipping = [
            u
            for u in units
            if u.evidence.passage.link_type == "shipping_policy"
            or (
                u.evidence.passage.kind == "faq"
                and not _SHIP_WORDS.search(u.context)
                and len((content_stems(u.context) & intent.stems) - _GENERIC_QUERY_STEMS) >= 2
            )
        ]
        units = shipping or units
    if not units:
        return None
    if task.resolution.unresolved and deictic and intent.product_specific and not intent.policy:
        work.notes.append("the question is about a product whose id could not be resolved")
        return None
    absent = _absent_names(work.intent.text, task)
    # "these boots" names the product in view, which a policy does not mention: score on the rest of the words
    in_view = frozenset().union(*(_title_stems(d) | content_stems(d.product_type or "") for d in targets))
    if policy_only and not intent.stems - _GENERIC_QUERY_STEMS - in_view:
        # "what comes in the discovery kit?" asks nothing of a policy beyond the product's name, which its line of
        # non-returnable items also uses
        return None
    _score(work, units, ignore=in_view)
    if targets and intent.shipping:
        # "can you ship the chain lube by air?": the shipping sentence naming the product's kind is its own rule
        kinds = frozenset(w for d in targets for w in _kind_stems(d) if not w.isdigit())  # "Kirkstone 2" is no "Zone 2"
        for u in units:
            ships = u.evidence.passage.link_type == "shipping_policy" or bool(_SHIP_WORDS.search(u.text))
            if u.evidence.passage.kind != "product" and ships and kinds & content_stems(u.text):
                u.score += PRODUCT_RULE_BONUS
    # A bare "Yes." answers its own FAQ question: unless that question is this one, quoting it would answer this
    # one ("Do you offer click and collect?" - "Yes." from "Do you offer samples?")
    ranked = [
        u
        for u in sorted(units, key=lambda u: -u.score)
        if not (_BARE_YES_NO.match(u.text) and u.context.endswith("?") and u.context_semantic < FAQ_QUESTION_MATCH)
    ]
    if not ranked:
        return None
    best = ranked[0]
    work.notes.append(
        f"best sentence score {best.score:.3f} (similarity {best.semantic:.3f}, "
        f"heading similarity {best.context_semantic:.3f}, overlap {best.lexical:.2f})"
    )
    # A question with a store-process word ("return", "deliver") is about the shop even when the wording is far
    # from the policy's, so a lower floor applies, provided the process word itself is matched.
    process = intent.policy and best.lexical >= 0.3 and not work.guarded
    floor, semantic_floor = (MIN_RELEVANCE_PROCESS, MIN_SEMANTIC_PROCESS) if process else (MIN_RELEVANCE, MIN_SEMANTIC)
    if work.guarded:
        floor = MIN_RELEVANCE_GUARDED
    # A process question about a product in view is answered by the policy's entry naming the product's kind
    # ("Candles that have been lit" under "Items we cannot take back"), however the question is worded.
    specific = _kind_rule(ranked, best, targets, intent) if intent.policy and not work.guarded else None
    # "Do you accept Interac?" reads far from "Visa, Mastercard, Interac debit and PayPal", but the name it asks
    # about is there: the name stands for the meaning
    names = _query_names(intent.text) - content_stems(task.shop_name)  # "a Northwind gift card" names the shop
    only_names = not intent.stems - names - _OFFER_STEMS  # "do you take Bancontact?" asks about nothing but a name
    named = bool(names) and names <= content_stems(best.text) and only_names
    if (specific is None or not targets) and (
        best.score < floor or (max(best.semantic, best.context_semantic) < semantic_floor and not named)
    ):
        return None
    # a sentence or FAQ question that plainly answers is not second-guessed
    plainly = best.semantic >= 0.6 or best.context_semantic >= FAQ_QUESTION_MATCH
    work.plain_match = plainly
    # ... nor is the policy's entry naming the product's kind ("Opened lubricants" for "an opened bottle of chain
    # lube?"): the compound the question names is the product in view, not another thing
    compounds = [] if plainly or specific is not None else _absent_compounds(work, units) or _apart(work, units)
    if compounds:
        # "gift wrapping" against "gift cards": the shop names a different thing sharing a word with the asked one
        answer = _Answer(not_recorded=True, gaps=[shop_gap(c) for c in compounds])
        answer.meta(phrase("not_mentioned", thing=join_and(compounds), shop=task.shop_name))
        work.notes.append(f"the question asks about {', '.join(compounds)}, which no evidence mentions")
        return answer
    if names and not best.plain_overlap and best.semantic < 0.6 and not only_names:
        # only a name matched ("the weather in Keswick" against Keswick's address): not what was asked; "do you
        # take Bancontact?" asks about nothing but the name, so a sentence naming it answers
        return None
    unsaid = (
        []
        if process or targets or specific is not None or best.semantic >= UNSAID_SEMANTIC
        else _unsaid(work, units, names, in_view)
    )
    if unsaid:
        # "Do you price match?" against the swatches FAQ: the question's own word is nowhere in the shop's evidence,
        # and the best sentence is not close in meaning: it is about something else
        work.notes.append(f"no evidence uses {', '.join(unsaid)}")
        return None
    key = _key_word(units, intent, ignore=in_view)
    town = key is not None and any(is_town(w) for w in re.findall(r"[\w'-]+", intent.text) if stem(w.lower()) == key)
    headed = _heading_names(names, units)
    if (
        key
        and specific is None
        and best.semantic < 0.6
        and not any(
            # said by the sentence, or a town its page names ("your Falmouth shop" and the studio page's "we don't
            # do eye tests", whose address names Falmouth)
            key in _said_by(u) or (town and key in _page_names(u))
            for u in ranked[:3]
            # not the parking of another place's section; an FAQ entry is no place's section ("Can I pay in
            # instalments?" for "Klarna instalments from Switzerland?" where a shipping section is headed Switzerland)
            if not headed or headed & content_stems(u.context) or u.evidence.passage.kind == "faq"
        )
    ):
        # the question's most specific word ("parking") is in the evidence, but not where the best sentences are
        work.notes.append(f"the best sentences do not mention {key!r}")
        return None
    if policy_only and (best.score < POLICY_OVER_PRODUCT or best.lexical < 0.5):
        return None
    section = None if absent or targets else _section_answer(units, targets)
    if section is not None:
        return section  # a section whose heading is the question answers it, before any list entry
    rule = _kind_section(work, ranked, targets, intent) if specific is None and not work.guarded else None
    if rule:
        # "What does it cost to return a sofa?": the refund policy's section about large furniture, its sentence
        # naming sofas and its sentence with the collection fee; the policy's general lines would mislead
        return _quoted(rule, targets)
    if specific is not None:
        # The same policy's line naming the product's kind ("Coffee beans and other food" under "What we can't
        # take back", for a bag of beans) is the rule for this product; the general rule, or an FAQ entry about
        # selling such goods, would mislead.
        answer = _Answer()
        if specific.lead is not None:  # the lead-in says what the rule is ("... cannot be returned:")
            lead = f"{specific.lead.text.strip()} "
        else:
            lead = "" if _bare_item(specific) else _heading_lead(specific)
        _quote(answer, specific, lead=lead)
        for doc in targets:
            answer.use(doc.id)
        return answer
    faq = None if absent else _faq_answer(units, best, targets)
    if faq is not None:
        return faq
    chosen = [best]
    for u in ranked[1:]:
        if len(chosen) >= 3:
            break
        same = u.evidence.passage.id == best.evidence.passage.id
        floor = best.score * (0.8 if same else 0.95)
        if not same and u.semantic < 0.5:
            continue  # a second source must be on topic in its own right
        if u.score >= floor and _fits(chosen, u) and not _near_duplicate(u, chosen):
            chosen.append(u)
    if (intent.price or _PRICE_RE.search(intent.lower)) and not any(_MONEY.search(u.text) for u in chosen):
        # "how much is delivery for a workbench?": the section's line with the amount ("… costs £29.95 per order")
        priced = [u for u in ranked if u.evidence.passage.id == best.evidence.passage.id and _MONEY.search(u.text)]
        chosen += [u for u in priced[:1] if u not in chosen and _fits(chosen, u)]
    chosen = _singled_out(_with_context(units, chosen), intent.stems)
    chosen.sort(key=lambda u: u.key)
    answer = _Answer()
    if absent:
        # "Can I pay in bitcoin?": say the shop never mentions it, then what it does say
        answer.meta(phrase("not_mentioned", thing=join_and(absent), shop=task.shop_name))
        work.notes.append(f"the question names {', '.join(absent)}, which no evidence mentions")
    for u in chosen:
        _quote(answer, u)  # a section's heading leads its first line only ("Opening hours: Saturday: …. Sunday: …")
    for doc in targets:
        answer.use(doc.id)  # the question is about it: the policy answers for this product
    return answer


def _entry_from_start(units: list[_Unit], top: _Unit, targets: Sequence[Document]) -> _Answer | None:
    """The first sentences (up to three that fit) of the passage `top` belongs to, quoted in order."""
    entry = sorted((u for u in units if u.evidence.passage.id == top.evidence.passage.id), key=lambda u: u.key)
    chosen: list[_Unit] = []
    for u in entry:
        if len(chosen) >= 3 or not _fits(chosen, u):
            break
        chosen.append(u)
    return _quoted(chosen, targets) if chosen else None


def _quoted(units: Sequence[_Unit], targets: Sequence[Document]) -> _Answer:
    """An answer quoting `units` in order, about the products in view (the question is about them)."""
    answer = _Answer()
    for u in units:
        _quote(answer, u)
    for doc in targets:
        answer.use(doc.id)
    return answer


def _section_answer(units: list[_Unit], targets: Sequence[Document]) -> _Answer | None:
    """A policy or page section whose heading is the question ("How to start a return" for "How do I start a
    return?") answers it from its first sentences, as an FAQ entry whose question matches does."""
    sections = [u for u in units if u.evidence.passage.kind in ("policy", "page") and u.lead is None]
    if not sections:
        return None
    top = max(sections, key=lambda u: (u.context_semantic, u.score))
    if top.context_semantic < HEADING_QUESTION_MATCH:
        return None
    return _entry_from_start(units, top, targets)


def _faq_answer(units: list[_Unit], best: _Unit, targets: Sequence[Document]) -> _Answer | None:
    """An FAQ entry whose question matches this one is answered by quoting its answer from the start."""
    faq = [u for u in units if u.evidence.passage.kind == "faq" and u.lead is None]
    if not faq:
        return None
    top = max(faq, key=lambda u: (u.context_semantic, u.score))
    # When the best sentence is itself an FAQ answer, the entry whose QUESTION is clearly closer to the query
    # answers it: "Do you have a physical store?" is "Do you have a shop I can visit?", not the wholesale entry
    # whose answer happens to say "stores".
    closer_question = (
        best.evidence.passage.kind == "faq"
        and top.evidence.passage.id != best.evidence.passage.id
        and top.context_semantic >= FAQ_QUESTION_CLOSER_FLOOR
        and top.context_semantic >= best.context_semantic + FAQ_QUESTION_MARGIN
    )
    # the best sentence answers an FAQ entry whose question is close: quote that entry's answer from its start
    same_entry = top.evidence.passage.id == best.evidence.passage.id and top.context_semantic >= FAQ_QUESTION_NEAR
    if (
        not closer_question
        and not same_entry
        and (top.context_semantic < FAQ_QUESTION_MATCH or top.score < 0.9 * best.score)
    ):
        return None
    return _entry_from_start(units, top, targets)


def _names_other_product(text: str, own_words: set[str]) -> bool:
    """True when a sentence names something by a multi-word capitalised name that is not this product's or the
    shop's ("For example, the Redmere Lightweight Hiking Boot runs small" says nothing about the Greystone)."""
    for m in re.finditer(r"\b([A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)+)", text):
        words = [w.lower() for w in m.group(1).split()]
        if m.start() == 0:
            # a sentence's first word is capitalised anyway: "The Nordvik Brio has …" names the Brio, "Our Returns"
            # nothing
            if content_stems(words[0]) or len(words) < 3:
                continue
            words = words[1:]
        if not all(w in own_words for w in words):
            return True
    return False


def _said_by(u: _Unit) -> frozenset[str]:
    """The words a unit says, with its heading's and its page title's ("Monday to Saturday: 9:00am - 6:00pm" under
    "Our Stores — Fort William" speaks of a store)."""
    return content_stems(u.text) | _heading_words(u)


def _page_names(unit: _Unit) -> frozenset[str]:
    """The proper names (capitalised mid-sentence: a town, a brand) of `unit`'s policy or page, not of a product's:
    a name elsewhere on the page is what the page is about ("your Falmouth shop" and the studio page giving its
    Falmouth address), where a common word elsewhere on it ("parking") is another topic."""
    if unit.evidence.passage.kind == "product" or unit.doc is None:
        return frozenset()
    return frozenset().union(*(_query_names(line) for line in unit.doc.body.splitlines()))


def _key_word(units: Sequence[_Unit], intent: Intent, ignore: frozenset[str]) -> str | None:
    """The question's most specific word that the evidence uses at all: the word found in the fewest sentences
    (never a name, a number, a word naming the product in view, nor one asking for a kind of figure: "how long do I
    have to report damage?" insists on "report", not on "long")."""
    names = _query_names(intent.text)
    counts: dict[str, int] = {}
    for u in units:
        words = _said_by(u)
        for w in intent.stems - ignore - names - _GENERIC_QUERY_STEMS - framing_stems(intent.text) - _VAGUE_STEMS:
            if w in words and not w.isdigit():
                counts[w] = counts.get(w, 0) + 1
    if len(counts) < 2:
        return None  # one shared word is the whole overlap; nothing more specific to insist on
    rarest = min(counts, key=lambda w: counts[w])
    return rarest if counts[rarest] * 4 <= len(units) else None


def _unsaid(work: _Work, units: Sequence[_Unit], names: frozenset[str], ignore: frozenset[str]) -> list[str]:
    """The question's content words (not names, numbers, generic or offering words, nor the product in view's) that
    none of the sentences that may answer it (with their headings), no document title and not the shop's name use."""
    task, intent = work.task, work.intent
    said = frozenset().union(*(_said_by(u) for u in units)) | content_stems(
        " ".join([task.shop_name, *(d.title for d in task.documents.values())])
    )
    # the words asking for a kind of figure ("how long", "how often") frame the question, and a word naming a kind of
    # figure ("address", "weight") is one a sentence stating it need not use
    wanted = intent.stems - ignore - names - framing_stems(intent.text) - _GENERIC_QUERY_STEMS - _OFFER_STEMS
    wanted -= _VAGUE_STEMS  # "leaking everywhere": a vague word is not what a sentence must say
    return sorted(w for w in wanted if w not in said and not w.isdigit())


def _absent_names(text: str, task: Task) -> list[str]:
    """Names in the question that no evidence passage or document mentions: the evidence is about something else
    ("Do you deliver to BFPO addresses?", "Do you sell Patagonia jackets?")."""
    names = _names_in(text)
    if not names:
        return []
    haystack = " ".join(
        [task.shop_name, *(e.passage.text for e in task.evidence), *(d.title for d in task.documents.values())]
    )
    words = content_stems(haystack)
    codes = set(country_codes_in(haystack))
    absent = []
    for name in names:
        # a hyphenated name ("Betws-y-Coed") is found when all its parts are
        if content_stems(name) <= words or set(country_codes_in(name, query=True)) & codes:
            continue
        absent.append(name)
    return absent


_AGE_PHRASE = text_cue("age_phrase", re.IGNORECASE)
# what became of a thing ("torn", "arrived", "melted") names no second thing after it
_STATE_WORDS = word_list("state_words")
_REGULAR_PAST = text_cue("regular_past")


def _absent_compounds(work: _Work, units: Sequence[_Unit]) -> list[str]:
    """Two-word things the question asks about ("gift wrapping") whose second word the evidence never uses, while
    it uses the first only in a different thing ("gift cards") that does not read as the same one."""
    task = work.task
    haystack = " ".join(
        [task.shop_name, *(e.passage.text for e in task.evidence), *(d.title for d in task.documents.values())]
    )
    known = content_stems(haystack)
    # process verbs ("return stuff"), vague nouns and the words naming a kind of figure ("the frost cover fee": the
    # fee is what the cover costs) name no thing
    ignore = _GENERIC_QUERY_STEMS | _OFFER_STEMS | _PROCESS_STEMS | _VAGUE_STEMS | _query_names(work.intent.text)
    ignore |= framing_stems(work.intent.text)
    # "my 17 year old son": an age, not an "old son"
    words = re.findall(r"[a-z][a-z'’-]*", _AGE_PHRASE.sub(" ", work.intent.lower))
    # the shop names its things in headings, FAQ questions, titles and list lines, not in running prose ("leave the
    # same day" names nothing)
    names = {u.context for u in units} | {u.text for u in units if len(u.text.split()) <= 6}
    names |= {d.title for d in task.documents.values()}
    evidence_words = [re.findall(r"[a-z][a-z'’-]*", text.lower()) for text in names]
    # a shopper's word with the shop's own written after it ("specs (optical frames)") is the shop's thing
    annotated = set(re.findall(r"([a-z][a-z'’-]*)\s*\(", work.intent.lower))
    found: list[str] = []
    for first, second in pairwise(words):
        if "'" in second or "’" in second or second in _STATE_WORDS or _REGULAR_PAST.search(second):
            continue  # "a piece torn", "the almonds showed up", "an easel that'll take": a thing and what befell it
        if second in annotated:
            continue
        head, modifier = content_stems(second), content_stems(first)
        if not head or not modifier or head & ignore or modifier & ignore or head & known or not modifier <= known:
            continue
        rivals = {
            f"{a} {b}"
            for sentence in evidence_words
            for a, b in pairwise(sentence)
            if content_stems(a) == modifier and content_stems(b)
        }
        if not rivals:
            continue
        asked = f"{first} {second}"
        if float(np.max(work.similarity(sorted(rivals), probe=asked))) < COMPOUND_SAME:
            found.append(asked)
    return found


_HAS_THING = text_cue("has_thing", re.IGNORECASE)


def _apart(work: _Work, units: Sequence[_Unit]) -> list[str]:
    """The two-word thing a question asks whether the shop has ("do you give a military discount?") when the evidence
    uses both its words, but never in one sentence with its heading ("Discount codes can't be combined", "Military
    addresses ship by Priority Mail"): the shop names two other things. Only the
    first such pair of the question's content words (process, offering and generic words, names and numbers are
    not things), and only for a question asking whether the shop has something (lexicon `has_thing`)."""
    intent = work.intent
    if not _HAS_THING.search(intent.lower):
        return []
    ignore = _GENERIC_QUERY_STEMS | _OFFER_STEMS | _PROCESS_STEMS | _VAGUE_STEMS | _query_names(intent.text)
    ignore |= framing_stems(intent.text)
    said = [_said_by(u) for u in units]
    known = frozenset().union(*said)
    # a figure's unit is no thing ("a 28 inch inner tube" is no "inch inner")
    words = re.findall(r"\d[\d.,/]*\s*[a-z]*|[a-z][a-z'’-]*", _AGE_PHRASE.sub(" ", intent.lower))
    for first, second in pairwise(words):
        if first[0].isdigit() or second[0].isdigit():
            continue
        pair = content_stems(first) | content_stems(second)
        # a word the evidence never uses may be the shop's thing in other words ("a physical store" for "a shop I
        # can visit"): only two words both used elsewhere say the thing is two other things
        if len(pair) != 2 or pair & ignore or not pair <= known:
            continue
        return [] if any(pair <= s for s in said) else [f"{first} {second}"]
    return []


def _kind_rule(ranked: list[_Unit], best: _Unit, targets: Sequence[Document], intent: Intent) -> _Unit | None:
    """The best-ranked list entry of the best sentence's policy that names the kind of a product in view, or with
    no product in view every kind of goods the question names ("can I return a gift card?"), if any."""
    if best.evidence.passage.kind == "product":
        return None
    kinds = frozenset().union(*(_kind_stems(d) for d in targets))
    tags = frozenset().union(*(_tag_stems(d) for d in targets)) - kinds
    asked = intent.stems - _PROCESS_STEMS - _GENERIC_QUERY_STEMS - _OFFER_STEMS
    if not targets and not asked:
        return None
    returns = bool(intent.stems & _RETURN_STEMS)
    for u in ranked:
        # the refund policy's list is the rule for a returns question, even when an FAQ entry about the goods scores
        # higher ("Do you sell gift cards?" for "can I return a gift card?")
        same_doc = u.evidence.passage.doc_id == best.evidence.passage.doc_id or (
            returns and u.evidence.passage.link_type == "refund_policy"
        )
        # only a list entry naming kinds of goods ("Gift cards.", "Candles that have been lit."): a full sentence
        # that mentions the kind in passing ("mud on boot soles") is a condition, not the rule for every such product
        if not same_doc or not (_bare_item(u) or _kind_item(u) or _led_item(u)):
            continue
        words = content_stems(u.text)
        # with no product in view, only a returns question reads its goods against the policy's list
        if (kinds & words or tags & _head_stems(u.text)) if targets else (returns and asked <= words):
            return u
    return None


# Words of a rule sentence (who may do what, on which condition), as opposed to a list entry naming goods.
_RULE_WORDS = text_cue("rule_words", re.IGNORECASE)


def _kind_item(unit: _Unit) -> bool:
    """A list entry under a section heading that names goods with a qualifier ("Opened or used skincare, for
    hygiene reasons", "Candles that have been lit"): read with its heading, it is the rule for those goods."""
    context = unit.context.strip()
    if unit.evidence.passage.kind == "product" or unit.lead is not None or not context or context.endswith("?"):
        return False
    if unit.doc is not None and context.lower() == unit.doc.title.lower():
        return False
    return _names_goods(unit.text)


def _names_goods(text: str) -> bool:
    """A short line that names goods rather than stating a rule ("Candles that have been lit", not "You can return
    …")."""
    return len(text.split()) <= 10 and not _RULE_WORDS.search(text)


def _singled_out(chosen: list[_Unit], asked: frozenset[str]) -> list[_Unit]:
    """Of the lines of one passage, those naming no fewer of the question's words than a sibling does ("Sunday: 11:00
    am - 5:00 pm" for "what are your hours on Sunday?", not the weekday lines beside it; "Toys and chews that have
    been used" for "can I return a used chew toy?", not "Used cat litter"); a lead-in stays with its items."""
    if len(chosen) < 2 or len({u.evidence.passage.id for u in chosen}) > 1:
        return chosen
    leads = {id(u.lead) for u in chosen if u.lead is not None}
    items = [u for u in chosen if id(u) not in leads]
    if not all(u.lead is not None or _bare_item(u) or _looks_like_item(u.text) for u in items):
        return chosen  # sentences of prose support each other; only list lines stand alone
    # the words of the section's heading and lead-in are every line's ("hours" under "Opening hours")
    words = {id(u): (content_stems(u.text) & asked) - content_stems(u.context) for u in items}
    return [u for u in chosen if id(u) in leads or not any(words[id(u)] < words[id(v)] for v in items if v is not u)]


def _led_item(unit: _Unit) -> bool:
    """A short list entry after its lead-in that names goods ("Certain types of items cannot be returned:" - "Opened
    lubricants, sealants and cleaners"): read with the lead-in, it is the rule for those goods."""
    if unit.lead is None or unit.evidence.passage.kind == "product":
        return False
    return _names_goods(unit.text)


def _heading_lead(unit: _Unit) -> str:
    return f"{unit.context.strip().rstrip(':.')}: "


def _tag_stems(doc: Document) -> frozenset[str]:
    """Words of the product's tags that name a kind of goods ("food", "gift"), not generic ones."""
    return content_stems(" ".join(doc.tags)) - _GENERIC_QUERY_STEMS - _COMMON_TITLE_STEMS
