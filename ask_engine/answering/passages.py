"""Policy, FAQ and page questions: the best one to three evidence sentences, an FAQ entry or section whose
question or heading is this one, a policy's list entry for a kind of goods, or "not mentioned"."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ask_engine.answering.absence import (
    _absent_compounds,
    _absent_names,
    _apart,
    _names_other_product,
    _unnamed_kind,
    _unsaid,
    insisted_on,
    names_other_title,
    names_title,
)
from ask_engine.answering.addressing import measures
from ask_engine.answering.gaps import shop_gap
from ask_engine.answering.query import (
    _COMMON_TITLE_STEMS,
    _GENERIC_QUERY_STEMS,
    _SHIP_WORDS,
    _kind_stems,
    _query_names,
    _title_stems,
)
from ask_engine.answering.rules import (
    _OFFER_STEMS,
    _PROCESS_STEMS,
    _RETURN_STEMS,
    _head_stems,
    _kind_section,
    done_verbs,
    tagged_rules,
)
from ask_engine.answering.sentences import (
    _OWN_LABEL,
    FAQ_QUESTION_MATCH,
    PLAIN_ANSWER,
    PRODUCT_RULE_BONUS,
    _bare_item,
    _fits,
    _goods_alike,
    _heading_words,
    _kind_item,
    _led_item,
    _looks_like_item,
    _near_duplicate,
    _quote,
    _score,
    _units,
    _with_context,
    damaged_rule,
)
from ask_engine.answering.sizing import _ROW, page_sizes
from ask_engine.answering.work import _Answer, _Unit, _Work
from ask_engine.language import (
    _PRICE_RE,
    Intent,
    content_stems,
    folded_phrases,
    join_and,
    lexicon_section,
    text_cue,
)
from ask_engine.phrases import phrase
from ask_engine.retrieve import AMOUNT_RE, COST_RE
from ask_engine.types import Document

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
# When the best sentence is another FAQ entry's answer, an entry whose question is this close (by the margin) answers.
FAQ_QUESTION_CLOSER_FLOOR = 0.50
FAQ_QUESTION_MARGIN = 0.05
# A policy/FAQ sentence must score this well to answer a product question the product itself does not record.
POLICY_OVER_PRODUCT = 0.55

_DEICTIC_RE = text_cue("deictic")
_BARE_YES_NO = text_cue("bare_yes_no", re.IGNORECASE)  # "Yes." or "No, we don't." says nothing without its question
_SELF_REFERENCE = text_cue("self_reference", re.I)
# "what micron is …", "which needle size …": the thing a wh- question asks for
_WH_NOUN = re.compile(r"^\s*(?:what|which)\s+([a-z]{3,})\b")
# "how long do I have to return it?": the time the buyer has to do something, and the verb of it
_ASKER_DEADLINE = text_cue("asker_deadline", re.IGNORECASE)
_ACTED_ON: list[str] = lexicon_section("text_cues")["acted_on"]  # the verb done ("to return it"), {verb} its stem
_DURATION = text_cue("duration", re.IGNORECASE)
_BY_DATE = next(m.states for m in measures() if m.name == "date")  # "... up to 15 January"
_ASKS_ADDRESS = text_cue("asks_address", re.IGNORECASE)  # "where are you guys located?"
_ADDRESS = text_cue("street_address")  # "1840 Commerce Pkwy", "Oudegracht 112", "Unit 7, Heron Cross Works"
_ABROAD = text_cue("abroad", re.IGNORECASE)  # "international", "overseas": delivery beyond the shop's own country


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

        def names_others(text: str) -> bool:
            named = any(t in text.lower() for t in others) or names_other_title(text, targets, others)
            return named or _names_other_product(text, own, task.catalogue_words)

        # ... nor where its section speaks of other products by name and never of this one ("Superwash wool (like
        # Calder Sock 4ply) … Put socks in a mesh bag" says nothing of whether another yarn is superwash)
        sections: dict[tuple[str, str], list[_Unit]] = {}
        for u in units:
            sections.setdefault((u.evidence.passage.id, u.context), []).append(u)
        about_others = {
            key
            for key, lines in sections.items()
            if any(names_others(v.text) for v in lines) and not any(distinct & content_stems(v.text) for v in lines)
        }
        units = [
            u
            for u in units
            if u.evidence.passage.kind != "product"
            and kinds & content_stems(u.text + " " + u.context)
            and (distinct & content_stems(u.text) or not names_others(u.text))
            and (u.evidence.passage.id, u.context) not in about_others
        ]
    elif (intent.policy and any(u.evidence.passage.kind != "product" for u in units)) or (
        deictic and intent.product_specific
    ):
        # Process questions are answered by policies and pages, even when a product is in view; and "is this
        # in stock?" about a product nobody could identify is never answered from some other product.
        units = [u for u in units if u.evidence.passage.kind != "product"]
    # "this policy explains how to return it" points at the answer instead of giving it
    units = [u for u in units if not u.header and not _SELF_REFERENCE.search(u.text)]
    units = damaged_rule(intent, units)  # "my tent arrived with a broken pole": the rule for damaged goods
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
        rate = intent.price or intent.asks_duration or bool(COST_RE.search(intent.lower))  # a cost, a time, "free"
        if rate and not intent.countries and not _ABROAD.search(intent.lower):
            # "free shipping above how much?": the shop's own country's, not "Free international shipping above ₹12,000"
            home = [u for u in units if not (_ABROAD.search(u.text) or _ABROAD.search(u.context))]
            units = home or units
    if not units:
        return None
    if task.resolution.unresolved and deictic and intent.product_specific and not intent.policy:
        work.notes.append("the question is about a product whose id could not be resolved")
        return None
    absent = _absent_names(work.intent.text, task)
    # "these boots" names the product in view, which a policy does not mention: score on the rest of the words
    in_view = frozenset().union(*(_title_stems(d) | content_stems(d.product_type or "") for d in targets))
    if intent.policy:
        # "can I swap the charcoal bowl for celadon?": the option values it names, and their option's name, describe
        # the product, not the rule asked ("I bought the wrong nib" names no value: the nib is what is asked about)
        in_view |= frozenset().union(
            *(
                content_stems(" ".join((n, *vs)))
                for d in targets
                for n, vs in d.options
                if any(content_stems(v) and content_stems(v) <= intent.stems for v in vs)
            )
        )
    if policy_only and not intent.stems - _GENERIC_QUERY_STEMS - in_view:
        # "what comes in the discovery kit?" asks nothing of a policy but the product's name (its non-returnables use)
        return None
    _score(work, units, ignore=in_view)
    if intent.stems & _RETURN_STEMS:
        tagged_rules(units, targets)  # the returns rule for the product's tag: "final sale", "clearance"
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
    deadline = _ASKER_DEADLINE.search(intent.lower)
    if deadline is not None:
        # "how long do I have to return it?" asks the time the buyer has to do it: the sentences stating a duration (or
        # a date: "… can be returned up to 15 January") in which the verb is done ("You have 30 days … to return it",
        # "How long do I have to return an item?" and its answer) answer, before any using the word as a noun ("Once
        # your return arrives we'll process your refund within 5 business days"); not a rule headed by another kind of
        # goods ("Pointe shoes" for "… return a leotard?") (the verb of "how long do I have to return it?", or of
        # "returns window")
        verb = done_verbs(next(g for g in deadline.groups() if g))  # ("send it back" does what "return" asks)
        acted = re.compile("|".join(p.replace("{verb}", verb) for p in _ACTED_ON), re.IGNORECASE)
        kinds = (intent.stems | in_view) & task.kind_words

        def states_deadline(u: _Unit) -> bool:
            headed = content_stems(u.context) & task.kind_words
            done = acted.search(u.text) or (u.evidence.passage.kind == "faq" and acted.search(u.context))
            stated = _DURATION.search(u.text) or _BY_DATE.search(u.text)
            return bool(stated and done) and (not headed or bool(headed & kinds))

        ranked = [u for u in ranked if states_deadline(u)] or ranked
    if not ranked:
        return None
    if not targets and _ASKS_ADDRESS.search(intent.lower):
        # "where are you guys located?" asks where the shop is: the best-ranked line of a page, policy or FAQ stating a
        # street address answers, with the lines after it in its section, however far its words are from the
        # question's ("1840 Commerce Pkwy, Suite B")
        # (a page's or an FAQ entry's address before a policy's, which is more often where returns go)
        stating = [u for u in ranked if u.evidence.passage.kind != "product" and _ADDRESS.search(u.text)]
        placed = min(stating, key=lambda u: u.evidence.passage.kind not in ("page", "faq"), default=None)
        if placed is not None:
            where = (placed.evidence.passage.id, placed.context)
            lines = sorted((u for u in units if (u.evidence.passage.id, u.context) == where), key=lambda u: u.key)
            return _quoted([u for u in lines if u.key >= placed.key][:3], targets)
    sized = None if targets else page_sizes(work, ranked)
    if sized is not None:
        return sized  # "head measures 57 cm, which hood size?": the size guide's entry holding the figure
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
    specific = None
    if intent.policy and not work.guarded:
        # (the catalogue's makers; a task made without them, as a test's or the guard eval's, has its documents')
        makers = set(task.vendors) | {d.vendor.strip().lower() for d in task.documents.values() if d.vendor}
        specific = _kind_rule(ranked, best, targets, intent, makers, task.kind_words)
    # a section headed by the process asked ("Exchanges" for "can I swap it for the blue?"), or mostly by the
    # question's own words ("Wrong nib size?" for "I bought the wrong nib, can I swap it?"), is its rule, not a list
    # entry for the product's kind under another heading that speaks of no process asked ("Tea: unopened and sealed"
    # under "Changed your mind?", "nibs that have been dropped" under "The warranty doesn't cover")
    asked_process = _PROCESS_STEMS & intent.stems
    heading = content_stems(best.context)
    shared = heading & intent.stems
    headed_process = bool(asked_process & heading) or (len(shared) >= 2 and 2 * len(shared) >= len(heading))
    if specific is not None and headed_process and not asked_process & _unit_stems(specific):
        specific = None
    # "Do you accept Interac?" reads far from "Visa, Mastercard, Interac debit and PayPal", but the name it asks
    # about is there: the name stands for the meaning
    names = _query_names(intent.text) - content_stems(task.shop_name)  # "a Northwind gift card" names the shop
    only_names = not intent.stems - names - _OFFER_STEMS  # "do you take Bancontact?" asks about nothing but a name
    named = bool(names) and names <= content_stems(best.text) and only_names
    # "can I swap the charcoal bowl for celadon?" reads far from "Exchanges: we don't do direct swaps", but every
    # word it asks beyond the product in view is the sentence's or its heading's
    named = named or (process and best.lexical >= 0.75)
    # (with no product in view, the entry naming goods the shop sells that the question names is the rule too:
    # "can i return soap if i opened it?" and "Soap … that have been unwrapped or used" under "What we can't take back")
    goods_rule = specific is not None and bool(intent.stems & task.kind_words & _unit_stems(specific))
    if (specific is None or not (targets or goods_rule)) and (
        best.score < floor or (max(best.semantic, best.context_semantic) < semantic_floor and not named)
    ):
        return None
    # a sentence or FAQ question that plainly answers is not second-guessed
    plainly = best.semantic >= PLAIN_ANSWER or best.context_semantic >= FAQ_QUESTION_MATCH
    work.plain_match = plainly
    # ... nor is the policy's entry naming the product's kind ("Opened lubricants" for "an opened bottle of chain
    # lube?"): the compound the question names is the product in view, not another thing
    compounds = [] if plainly or specific is not None else _absent_compounds(work, units) or _apart(work, units)
    # ("any student discount?" where only a rescue discount is recorded: said before the line that is)
    absent = absent or ([] if plainly or specific is not None or targets else _unnamed_kind(work, units))
    if compounds:
        # "gift wrapping" against "gift cards": the shop names a different thing sharing a word with the asked one
        answer = _Answer(not_recorded=True, gaps=[shop_gap(c) for c in compounds])
        answer.meta(phrase("not_mentioned", thing=join_and(compounds), shop=task.shop_name))
        work.notes.append(f"the question asks about {', '.join(compounds)}, which no evidence mentions")
        return answer
    # "can I use Afterpay on a $2,300 mattress?" asks about the name and the goods it pays for, no payment line's
    goods = frozenset().union(*(content_stems(d.product_type or "") for d in task.documents.values()))
    only_names = only_names or all(
        w.isdigit() for w in intent.stems - names - _OFFER_STEMS - _GENERIC_QUERY_STEMS - goods
    )
    if names and not best.plain_overlap and best.semantic < PLAIN_ANSWER and not only_names:
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
    # (a word of the shop's own name is its trade, no topic of one question: "swim" in "discount for a school swim team
    # order?" at a shop named for swimwear; nor, asked of a policy with no product in view, a word of the goods it
    # sells: "how many days do I have to return shoes?" at a shoe shop, whose policy speaks of items)
    sold = task.catalogue_words if intent.policy and not targets else frozenset()
    trade = in_view | content_stems(task.shop_name) | sold
    ranked = ranked if specific is not None else insisted_on(work, units, ranked, ignore=trade)
    if not ranked:
        return None
    best = ranked[0]
    # (an FAQ entry whose question reads as this one answers however few of its words it shares: "Do gift cards
    # expire?" for "do gift vouchers expire?")
    asked_as = best.evidence.passage.kind == "faq" and best.context_semantic >= FAQ_QUESTION_MATCH
    # (or a page's line naming the product in view by its name: "Bring the balance bike in after use and don't leave it
    # out in the rain" for "can the balance bike be left outside in the rain?")
    asked_as = asked_as or (best.score >= POLICY_OVER_PRODUCT and names_title(best.text, targets))
    if policy_only and (best.score < POLICY_OVER_PRODUCT or best.lexical < 0.5) and not asked_as:
        return None
    asked_noun = _WH_NOUN.match(intent.lower) if policy_only else None
    if asked_noun and content_stems(asked_noun.group(1)) & set(_unsaid(work, [best], names, in_view)):
        # what the product's page does not record, a policy answers only naming what is asked for: "what micron is
        # the merino?" is not answered by a line listing merino yarns' wash temperatures
        return None
    section = None if absent or targets else _section_answer(units, targets)
    if section is not None:
        return section  # a section whose heading is the question answers it, before any list entry
    rule = _kind_section(work, ranked, targets, intent) if specific is None and not work.guarded else None
    if rule and headed_process and not asked_process & frozenset().union(*(_unit_stems(u) for u in rule)):
        rule = None
    if rule:
        # "What does it cost to return a sofa?": the refund policy's section about large furniture, its sentence
        # naming sofas and its sentence with the collection fee; the policy's general lines would mislead
        return _quoted(rule, targets)
    if specific is not None:
        # The same policy's line naming the product's kind ("Coffee beans and other food" under "What we can't take
        # back", for beans) is the rule for it; the general rule, or an FAQ entry on selling such goods, would mislead
        answer = _Answer()
        if specific.lead is not None:  # the lead-in says what the rule is ("... cannot be returned:")
            lead = f"{specific.lead.lead_in()} "
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
    if (intent.price or _PRICE_RE.search(intent.lower)) and not any(AMOUNT_RE.search(u.text) for u in chosen):
        # "how much is delivery for a workbench?": the section's line with the amount ("… costs £29.95 per order")
        priced = [u for u in ranked if u.evidence.passage.id == best.evidence.passage.id and AMOUNT_RE.search(u.text)]
        chosen += [u for u in priced[:1] if u not in chosen and _fits(chosen, u)]
    if len(chosen) == 1 and not content_stems(best.text) - intent.stems:
        # 'Yes – "Trail Points".' for "how does trail points work?" says nothing the question does not: the sentences
        # after it in its passage say what is asked
        after = sorted(
            (u for u in units if u.evidence.passage.id == best.evidence.passage.id and u.key > best.key),
            key=lambda u: u.key,
        )
        chosen += [u for u in after[:2] if _fits(chosen, u)]
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
    # a list item further down that the question names ("… for the full day?": "Softboard + wetsuit, full day: R450")
    # stands for the first items, which are other cases of the list
    items = [u for u in entry if u.lead is not None]
    named = max(items, key=lambda u: u.score) if items else None
    if named is not None and named not in chosen and all(named.score > u.score for u in chosen if u.lead is not None):
        chosen = [u for u in chosen if u.lead is None]
        chosen.append(named)
    return _quoted(chosen, targets) if chosen else None


def _quoted(units: Sequence[_Unit], targets: Sequence[Document]) -> _Answer:
    """An answer quoting `units` in order, about the products in view (the question is about them). A list item
    whose lead-in is not quoted comes after it, which says what the list is ("we can't take back: Bikini bottoms
    with the hygiene liner removed"), unless the item is led by a label of its own ("Parking: …")."""
    answer = _Answer()
    led: set[int] = set()
    for u in units:
        lead = u.lead
        if (
            lead is not None
            and lead not in units
            and not any(v.text in (lead.text, lead.opener) for v in units)  # its opener is quoted: it says what it is
            and id(lead) not in led
            and u.evidence.passage.kind != "product"
            and not _OWN_LABEL.match(u.text)  # "Parking: …" says what it is
        ):
            led.add(id(lead))
            _quote(answer, u, lead=f"{lead.lead_in()} ")
        else:
            _quote(answer, u, opened=any(v.text == u.opener for v in units))
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
    # whose answer happens to say "stores"; not past a best sentence that plainly answers ("We don't buy, sell or trade
    # used gear, and we will never sell a used helmet" for "do you sell used helmets", not "Do you do helmet fittings?")
    closer_question = (
        best.evidence.passage.kind == "faq"
        and best.semantic < PLAIN_ANSWER
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


def _unit_stems(unit: _Unit) -> frozenset[str]:
    """The words of a unit and its heading, everyday phrasings folded ("Items we can't take back" says "return")."""
    return content_stems(folded_phrases(f"{unit.text} {unit.context}"))


def _kind_rule(
    ranked: list[_Unit],
    best: _Unit,
    targets: Sequence[Document],
    intent: Intent,
    makers: set[str],
    sold: frozenset[str] = frozenset(),
) -> _Unit | None:
    """The best-ranked list entry of the best sentence's policy that names the kind of a product in view, or with
    no product in view every word the question asks, or every kind of goods the shop sells (`sold`) it names ("can I
    return a gift card?", "can I return soap if I opened it?"), if any; not one whose heading or lead-in names another
    of the shop's `makers` (vendors) and not the product's."""
    if best.evidence.passage.kind == "product":
        return None
    # (its maker's name in its title is no kind of goods: the "Harbour & Spoon Cutting Board" is no spoon)
    kinds = frozenset().union(
        *(_kind_stems(d) - (content_stems(d.vendor or "") - content_stems(d.product_type or "")) for d in targets)
    )
    tags = frozenset().union(*(_tag_stems(d) for d in targets)) - kinds
    asked = intent.stems - _PROCESS_STEMS - _GENERIC_QUERY_STEMS - _OFFER_STEMS
    if not targets and not asked:
        return None
    returns = bool(intent.stems & _RETURN_STEMS)
    goods = asked & sold  # (the goods a returns question names stand for it: "if i opened it" is its condition)
    needed = goods or asked  # what the entry must say, with no product in view
    own_makers = {d.vendor.strip().lower() for d in targets if d.vendor}
    makers = makers - own_makers
    for u in ranked:
        # the refund policy's list is the rule for a returns question, even when an FAQ entry about the goods scores
        # higher ("Do you sell gift cards?" for "can I return a gift card?")
        same_doc = u.evidence.passage.doc_id == best.evidence.passage.doc_id or (
            returns and u.evidence.passage.link_type == "refund_policy"
        )
        # only a list entry naming kinds of goods ("Gift cards.", "Candles that have been lit."): a full sentence
        # that mentions the kind in passing ("mud on boot soles") is a condition, not the rule for every such product
        # ... or a rule whose label (a row's first cell, the goods it is of: "Kits must be …") names the product's kind
        # as what it is ("Kitchen tools (masala dabba, …): returnable within 7 days"; garam masala is no "masala dabba")
        label = row if (row := _FIRST_CELL.match(u.text)) else _RULE_LABEL.match(u.text) or _RULE_SUBJECT.match(u.text)
        labelled = targets and label is not None and bool(kinds & _head_stems(label.group(1)))
        if not same_doc or not (_bare_item(u) or _kind_item(u) or _led_item(u) or labelled):
            continue
        if targets and _names_maker(f"{u.context} {u.lead.opener if u.lead else ''}", makers, own_makers):
            continue  # "Kettle & Crane cookware … Covered: Ceramic nonstick fry pans" is no rule for an All-Clad pan
        words = content_stems(u.text)
        # with no product in view, only a returns question reads its goods against the policy's list
        if targets:
            if kinds & words or tags & _head_stems(u.text):
                return u
        # (nor an entry naming goods of another kind by the word: "protein bars" for "an opened tub of protein")
        elif returns and needed <= words and (not goods or _goods_alike(intent, u.text, goods, words - sold)):
            return u
    return None


_RULE_LABEL = re.compile(r"^([^:]{3,80}):\s")  # "Kitchen tools (…) and empty gift boxes: returnable within 7 days"
_RULE_SUBJECT = text_cue("rule_subject")  # "Kits must be complete …": the goods a list's rule is of
# a table row's first cell: "Category: Thermal paste and other consumables, Unopened: …" names the goods of its rule
_FIRST_CELL = re.compile(r"^[^:,;]{1,40}:\s*([^:,;]{3,80}),\s*[^:,;]{1,40}:")


def _names_maker(text: str, makers: set[str], own: set[str]) -> bool:
    """`text` names one of `makers` and none of `own` (vendors, lower case)."""
    low = text.lower()

    def says(name: str) -> bool:
        return name in low and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", low) is not None

    return any(says(m) for m in makers) and not any(says(m) for m in own)


def _singled_out(chosen: list[_Unit], asked: frozenset[str]) -> list[_Unit]:
    """Of the lines of one passage, those naming no fewer of the question's words than a sibling does ("Sunday: 11:00
    am - 5:00 pm" for "what are your hours on Sunday?", not the weekday lines beside it; "Toys and chews that have
    been used" for "can I return a used chew toy?", not "Used cat litter"); a lead-in stays with its items."""
    if len(chosen) < 2 or len({u.evidence.passage.id for u in chosen}) > 1:
        return chosen
    leads = {id(u.lead) for u in chosen if u.lead is not None}
    # (prose stays, each sentence supporting the others; list lines stand alone: the Blue row, not the Yellow one)
    listed = (
        u for u in chosen if u.lead is not None or _bare_item(u) or _looks_like_item(u.text) or _ROW.match(u.text)
    )
    items = [u for u in listed if id(u) not in leads]
    # (the words of its heading, lead-in and page title are every line's: "hours" under "Opening hours")
    words = {id(u): (content_stems(u.text) & asked) - _heading_words(u) for u in items}
    return [u for u in chosen if id(u) not in words or not any(words[id(u)] < words[v] for v in words if v != id(u))]


def _heading_lead(unit: _Unit) -> str:
    return f"{unit.context.strip().rstrip(':.')}: "


def _tag_stems(doc: Document) -> frozenset[str]:
    """Words of the product's tags that name a kind of goods ("food", "gift"), not generic ones, nor its maker's
    name (a "kelp-and-comb" tag on a shampoo names no comb)."""
    maker = content_stems(doc.vendor or "")
    return content_stems(" ".join(doc.tags)) - _GENERIC_QUERY_STEMS - _COMMON_TITLE_STEMS - maker
