"""Questions about one product in view: an attribute, an overview, "do you sell it?", a how-to guide, with
price/stock/options from `commerce` and comparisons from `catalogue`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from ask_engine.answering.addressing import (
    asked_lengths,
    asked_measures,
    other_kind,
    other_length,
    stated_kinds,
    states_figure,
    version_rows,
)
from ask_engine.answering.catalogue import _compare
from ask_engine.answering.commerce import _asks_for_other_thing, _asks_for_value, _asks_sku, _commerce, differences
from ask_engine.answering.facts import (
    _chosen_units,
    _fact_sentence,
    _is_boolean,
    _key_concepts,
    _match_facts,
    _missing_predicate,
    _predicate,
    _probe,
    _ranked_units,
    _ranker,
    _single_item,
    _state_units,
    _subject,
    fact_text,
    states_asked_kind,
    states_kind,
)
from ask_engine.answering.gaps import product_gaps
from ask_engine.answering.nearest import (
    _AGE_LIMIT,
    NEAR_NAMED_BAR,
    _asked_fact,
    _labelled_lines,
    _near_sentence,
    _notice_line,
    _related_facts,
    _says_asked_words,
    _speaks_to,
    _tied,
    denies_asked,
    free_of_asked,
    naming_stems,
    past_named,
    said_label,
    said_outright,
    speaks_if_named,
    speaks_of_asked,
    value_item,
)
from ask_engine.answering.options import (
    _colour_asked,
    _named_option,
    _named_variant,
    held_concepts,
    names_value_only,
    phrased_option_words,
    value_line,
    value_stems,
    within_options,
)
from ask_engine.answering.overview import _overview
from ask_engine.answering.passages import _select
from ask_engine.answering.query import (
    _attribute_stems,
    _names_in,
    _process_words,
    _reference_stems,
    _title_stems,
    _without_named_values,
)
from ask_engine.answering.siblings import (
    answers_asked,
    names_label,
    of_part,
    other_attribute,
    same_attribute,
    unrecorded_label,
)
from ask_engine.answering.sizing import _held_value, _party_size, _size_guide, _table_row, _variant_row, chosen_row
from ask_engine.answering.terms import _guide, _names_only, _offered, _own_terms, asks_how_to
from ask_engine.answering.units import Unit, usable_value
from ask_engine.answering.work import _Answer, _cites_for, _Work, said_of
from ask_engine.language import (
    COLOUR_WORDS,
    OFFER_QUESTION_RE,
    Intent,
    asks_options,
    content_stems,
    mentions_concept,
    parse_query,
)
from ask_engine.phrases import phrase
from ask_engine.types import Document, Fact


def _product(work: _Work, targets: list[Document]) -> _Answer | None:
    task, intent = work.task, work.intent
    if not targets:
        return None
    has_policy_evidence = any(ev.passage.kind != "product" for ev in task.evidence)
    strong_product = bool(intent.concepts) or intent.options or intent.stock
    if intent.policy and has_policy_evidence and not (strong_product and not _process_words(intent)):
        # "can I return these boots?": the refund policy, unless the page of the one in view (by id, where the question
        # names another: "swap the sencha in it for lapsang?") states its terms ("Final sale – can't be returned")
        ided = set(task.resolution.doc_ids) - set(task.resolution.mentioned_doc_ids)
        own = targets if len(targets) == 1 else [d for d in targets if d.id in ided]
        return _own_terms(work, own[0]) if len(own) == 1 else None
    # ("do you have the heart sparklers in?" asks whether they are in stock, not whether they are sold here)
    offer = OFFER_QUESTION_RE.match(intent.lower) and not intent.stock
    if (
        offer
        and not (intent.concepts or intent.price or intent.options or intent.colours)
        and _names_only(work, targets)
    ):
        # "Do you sell the Marsh boot?" with the product named: it is in the catalogue; say so, with its price
        return _offered(work, targets)
    if asks_how_to(intent):
        # "How do I look after a cast iron pan?": the care guide's "Cast iron" section, not the pan's facts; but where
        # the one in view records the attribute asked in words of its own ("Care: Wipe with a dry cloth. Re-oil once a
        # year"), only a section headed by its name is more its guide than that (not "Do you engrave pens?" for "how
        # do I look after the wooden pen case?", nor the pen care page's "Storing pens")
        guide = _guide(work, targets, named_only=len(targets) == 1 and _own_instructions(intent, targets[0]))
        if guide is not None:
            return guide
    if len(targets) > 1:
        return _compare(work, targets)
    if (between := differences(work, doc := targets[0])) is not None:
        return between  # "what's the difference between the small and the large?"
    described = _without_named_values(intent.text, doc)
    if described != intent.text:
        # "is the boucle fabric stain resistant?" asks about stains, not what fabric it is (only concepts the values
        # named are dropped: the product's own name stays out, as `_without_mentions` read it)
        kept = parse_query(described).concepts
        intent = work.intent = replace(intent, concepts=tuple(c for c in intent.concepts if c in kept))
    if held := held_concepts(intent, doc):  # "how much for a 7 year old?": the variant "Age: 6-8 years" says the age
        intent = work.intent = replace(intent, concepts=tuple(c for c in intent.concepts if c not in held))
    if intent.options and intent.colours and not asks_options(intent.text) and not _colour_asked(intent, doc):
        # "does the brisket rub have mustard in it?": a colour word ("mustard", "honey", "olive") said other than after
        # "in", of a product with no colour option and no option value naming it, names a thing in it, not an option
        intent = work.intent = replace(intent, options=False, colours=())
    if not intent.options and _named_option(intent, doc) and intent.wh not in ("when", "where", "why", "how long"):
        # "what scents does it come in?": an option name the merchant chose (Scent, Finish, Flavour) asks for its
        # values, as "colours" and "sizes" do (not "when do the boxes go out?")
        intent = work.intent = replace(intent, options=True)
    elif not (intent.options or intent.price or intent.stock) and intent.yes_no and _asks_for_value(intent, doc):
        # "can I get the kettle in polished steel?", "can I buy it in a 1kg bag?": whether it comes in that option
        # value (and is in stock), from the variants, not the description line that lists the options
        intent = work.intent = replace(intent, options=True)
    elif (intent.options or intent.stock) and (
        (other := _asks_for_other_thing(intent, doc)) or phrased_option_words(intent, doc)
    ):
        # "does the whisky come in a gift tube?" names neither an option nor one of its values, "flavor oils" no
        # flavors: the description may say ("70cl comes in a gift tube"), and the list of values would answer nothing;
        # "is the pattern available in German?" asks no stock either
        intent = work.intent = replace(intent, options=False, stock=intent.stock and not other)
    # "do u have it in clay size 0000?" asks whether that variant is had, which its size chart row does not say
    having = intent.yes_no and not intent.price and _asks_for_value(intent, doc)
    guide = None
    if not having:
        guide = _size_guide(work, doc) or _held_value(work, doc) or _table_row(work, doc) or _variant_row(work, doc)
        guide = guide or _party_size(work, doc) or chosen_row(work, doc)
    if guide is not None:
        # "what size for a 42 cm neck?": the size guide's entry, not the list of sizes; "my dog is 32 kg, how much a
        # day?": the feeding table's row for 32 kg
        return guide
    answer = _Answer()
    answer.use(doc.id)
    commerce = intent.price or intent.stock or intent.options or bool(intent.colours) or _asks_sku(intent)
    variant = _named_variant(task, doc)
    if (
        variant is not None
        and usable_value(variant.title)
        and len(doc.variants) > 1
        and not (intent.price or intent.stock)
    ):
        # "is this the long leg?" about a variant named by id: say which variant it is
        answer.claim(
            f"This is the {variant.title} variant of the {doc.title}",
            _cites_for(task, doc, variant.title),
            markdown=f"This is the {variant.title} variant of the **{doc.title}**",
            doc=doc.id,
        )
    sold = _commerce(work, doc) if commerce else _Answer()
    answer.extend(sold)
    # a price/stock/option reading that finds nothing to say ("can this be left outside?" is not "any left?") leaves
    # the question to the product's recorded units, as any other question
    # "when will the 24 lb bag be back in stock?": no restock date recorded is the answer, not the product's sizes
    # (a product on backorder may say in its text when it ships: the reading runs as for any other question)
    backorder = any(v.status == "backorder" for v in doc.variants)
    restock_only = bool(sold.gaps) and all(g.key == "restock_date" for g in sold.gaps) and not backorder
    # (an option it lacks is unrecorded beside the stock a variant named by id has: "filter size?" with a SKU asks the
    # filter's size, which a fact may record, not sizes the lens comes in)
    unrecorded = (sold.not_recorded or bool(sold.gaps)) and not restock_only
    attribute_ran = not sold.settled and (bool(intent.concepts) or not commerce or unrecorded or not sold.sentences)
    recorded_elsewhere = False
    if attribute_ran:
        recorded = _attribute(work, doc, standalone=not commerce)
        recorded_elsewhere = recorded.not_recorded and recorded.settled
        found = bool(recorded.sentences) and not recorded.not_recorded
        # "is it washed or natural?": a colour word ("natural") read as asking for the options, where a recorded
        # fact answers ("Process: Washed"); the options listed would answer nothing
        colour_only = bool(intent.colours) and not (intent.price or intent.stock or asks_options(intent.text))
        # ... and "does it come in white?" of a veil sold in no colours, its "Ivory only." (shown hedged)
        shown = found or (unrecorded and bool(intent.colours) and any(x.kind == "claim" for x in recorded.sentences))
        if (unrecorded or colour_only) and shown:
            # the variants record no sizes, but a fact does ("Size: ages 9-12"): that answers, and "has not recorded
            # any sizes" before it would contradict it; the other options listed in its place ("its colours are …"
            # for "what size are they?") answer nothing once the size is found
            dropped = [s for s in sold.sentences if s.kind == "meta" or not (intent.price or intent.stock)]
            answer.sentences = [s for s in answer.sentences if s not in dropped]
            answer.not_recorded = False
            answer.gaps = [g for g in answer.gaps if g not in sold.gaps]
        elif (intent.concepts or not commerce) and unrecorded and any(s.kind == "claim" for s in recorded.sentences):
            # the sizes the variants lack, in the description's line shown as what the shop records ("5, 6, 8, 10 and
            # 12mm"): "has not recorded any sizes" before it would contradict it; the hedge stands for both
            answer.sentences = [s for s in answer.sentences if not (s in sold.sentences and s.kind == "meta")]
        # (a "not recorded" naming nothing missing only casts doubt on the price, stock or options stated: "swim vest
        # for my 5yo, … in stock?" is answered by its sizes and stock)
        vague = (
            recorded.not_recorded
            and recorded.unnamed
            and not any(x.kind == "claim" for x in recorded.sentences)
            and any(x.kind == "claim" for x in sold.sentences)
        )
        if (shown or intent.concepts or not commerce or not sold.sentences) and not vague:
            answer.extend(recorded)
    if not answer.sentences:
        return None
    if answer.not_recorded and unrecorded and commerce and not attribute_ran:
        # "what size is the bottle?" names no option the product has, but its description may state it (when
        # `_attribute` ran, it already stated any unit this would choose)
        chosen = _naming_units(_chosen_units(_ranked_units(work, doc)), work, doc)
        if chosen:
            answer = _Answer()
            _state_units(answer, work, doc, chosen)
    if answer.not_recorded and has_policy_evidence and not recorded_elsewhere:
        # The product does not record it, but a policy or FAQ may answer it outright ("do I need ID for a knife?");
        # not an attribute other products record as theirs ("bed temperature"), nor one saying fewer asked words than
        # the product's line ("kayak seat" on a board), nor one stating no figure of the kind asked (a bulky surcharge)
        policy, asked = _select(work, targets, policy_only=True), intent.stems - naming_stems(work, doc)
        if policy is not None and states_kind(intent.text, policy) and said_of(policy, asked) >= said_of(answer, asked):
            return policy
    return answer


def _own_instructions(intent: Intent, doc: Document) -> bool:
    """`doc` records an attribute the question asks in words, not as yes or no ("Care: Wipe with a dry cloth")."""
    asked = frozenset(intent.concepts)
    return any(_key_concepts(f.key) & asked and _is_boolean(f) is None and usable_value(f.value) for f in doc.facts)


def _attribute(work: _Work, doc: Document, *, standalone: bool) -> _Answer:
    """The recorded fact(s) the question asks about, a description sentence, or "not recorded"."""
    intent = work.intent
    answer = _Answer()
    answer.use(doc.id)
    asked = _attribute_stems(intent, doc)
    if standalone and not intent.concepts and intent.overview:
        return _overview(work, doc)
    if standalone and not intent.concepts and not asked:
        # no attribute word survives ("what is it compatible with?"): a unit clearing the bar answers, else the overview
        chosen = _chosen_units(_ranked_units(work, doc))
        if not chosen:
            return _overview(work, doc)
        _state_units(answer, work, doc, chosen)
        return answer
    # Every recorded unit of the product (facts, options, brand/type/tags, description sentences with their
    # lists) is scored by the calibrated ranker; the best ones above its bar answer.
    ranked = _ranked_units(work, doc)
    naming = naming_stems(work, doc)  # the question's words naming the product (read once: it reads the description)
    lengths = asked_lengths(intent.text)  # ("how wide?" and "Height: 25 mm, …": another side)
    ranked = [(p, u) for p, u in ranked if not other_length(u.label, lengths) and speaks_if_named(u, intent)]
    best = _chosen_units(ranked, intent.text)  # (an option a value of which alone is named says which: "35cm pack")
    named = [u for u in best if names_value_only(intent, doc, u)]
    if not named:  # (nor does an option named as a thing, asked what its values do not say: "does the light base …
        ranked = within_options(ranked, intent.text, doc, naming)  # take batteries?")
        best = _chosen_units(ranked, intent.text)
    chosen = [u for u in _naming_units(best, work, doc) if u not in named]
    chosen = chosen or [u for u in [value_line(intent, doc, ranked, named)] if u is not None]  # "in the X bundle?"
    chosen = said_label(work, doc, ranked, chosen)  # ("what colours come in it?": "Colours: …" before "12 colours …")
    ranked = past_named(work, doc, ranked, named)
    facts = _lexicon_facts(_match_facts(work, doc, asked), ranked, chosen, yes_no=intent.yes_no, asked=asked)
    # "Weight capacity" answers no "how much does it weigh?": another attribute, qualified by the asked one's word
    facts = [
        f
        for f in facts
        if not other_attribute(f.label, intent.concepts)
        and not other_length(f.label, lengths)
        and (f.source != "disclosure" or speaks_of_asked(fact_text(f), intent.concepts))
    ]
    chosen = [u for u in chosen if answers_asked(u, intent.concepts)]  # (nor "Category: … > Tea" what teas are in it)
    facts, chosen = of_part(intent.text, naming, facts, chosen)  # (a part's measure, not the product's)
    # "bed temp for the silk PLA?" names "Bed temperature", which other products record and this one does not: its
    # "Nozzle temperature" is the nearest recorded fact, not the answer
    missing = unrecorded_label(_probe(work, doc), doc, work.task.fact_labels)
    siblings: list[Fact] = []
    if missing is not None:
        siblings = [f for f in facts if not names_label(fact_text(f), missing) and not same_attribute(missing, f)]
        siblings += [
            u.fact
            for u in chosen
            if u.kind == "fact"
            and u.fact is not None
            and u.fact not in siblings
            and not names_label(u.text, missing)
            and not same_attribute(missing, u.fact)
        ]
        facts = [f for f in facts if f not in siblings]
        chosen = [u for u in chosen if not (u.kind == "fact" and u.fact in siblings)]
    scores = {u.key: p for p, u in ranked if u.kind != "description"}
    if facts and not chosen and ranked and ranked[0][0] > max(scores.get(f.key, 0.0) for f in facts):
        # "does it come with a blade and battery?": "Body only - battery and charger not included", above the
        # lexicon's bar and naming what is asked, ranks above "Blade diameter: 165 mm" and answers in its place
        facts = [] if _tied_lines(work, doc, ranked) else facts
    # "how many milligrams of caffeine are in a cup?" asks for a figure; "Caffeine level: High" states none: it is
    # the nearest recorded fact, not the answer ("how long is the hair?" and "Hair type: long" answer in its own word)
    kinds = asked_measures(intent.text)
    # "what's the rear facing height limit?" asks for a length; "Rear-facing 5–40 lb." states a weight and nothing
    # else: the nearest line, not the answer (one stating two kinds may answer in either: "how fast does it boil?"
    # and "boils 1 litre in 3 minutes 20 seconds")
    drop = [
        u for u in chosen if u.kind == "description" and len(stated_kinds(u.text)) == 1 and other_kind(u.text, kinds)
    ]
    # (a count is stated by a bare number: "how many crystals?" and a "4M" kit say nothing either way)
    counted = any(k.name in ("count", "percentage", "place") for k in kinds)
    dropped = bool(drop) and len(drop) == len(chosen) and not facts and not intent.yes_no and not counted
    if dropped:  # (nor is a notice or another line, which states no figure of the asked kind either)
        chosen, ranked = [], [(p, u) for p, u in ranked if u not in drop]
    figureless = (
        facts
        if facts
        and not intent.yes_no
        and kinds
        and not any(states_figure(f.value) or content_stems(f.value) & intent.stems for f in facts)
        else []
    )
    # "is there a weight limit?" asks for a strength; "Weight: 6.2 kg" states a figure of another kind: it too is
    # the nearest recorded fact, not the answer
    figureless = figureless or (
        facts if facts and all(other_kind(f"{f.label}: {f.value}", kinds) for f in facts) else []
    )
    # ... as is one the ranker chose that states one figure, of another kind ("max user weight?" and "Weight:
    # 470 g"; not a nutrition panel's many figures for "how many calories?")
    unit_facts = [
        u.fact for u in chosen if u.kind == "fact" and u.fact is not None and len(_FIGURES.findall(u.value)) == 1
    ]
    if not facts and unit_facts and len(unit_facts) == len(chosen) and all(other_kind(u.text, kinds) for u in chosen):
        figureless = unit_facts
    rows = version_rows(facts[0], [u for _, u in ranked], intent.text) if len(facts) == 1 and not figureless else []
    rows = rows or ([] if facts or chosen else value_item(work, doc, ranked))  # ("how heavy is the 700x35c?")
    if rows:  # "how heavy is the 28c?": the row of the version asked, not the one figure recorded for all
        _state_units(answer, work, doc, rows)
        return answer
    if facts and not figureless:
        for n, fact in enumerate(facts):
            _fact_sentence(answer, work, doc, fact, lead=n == 0, pronoun=n > 0)
        return answer
    chosen = [u for u in chosen if not figureless or (states_figure(u.value) and not other_kind(u.text, kinds))]
    if figureless and not chosen and len(kinds) == 1:
        # "what's the weight limit?" and "Weight: 950 g" ranked first: the next line stating a figure of the asked
        # kind ("Holds up to 120 kg"), likely enough by the bar a fact the lexicon ties to the question needs
        bar = _ranker().lexicon_bar
        chosen = [
            u for p, u in ranked[1:3] if p >= bar and kinds[0].states.search(u.text) and not other_kind(u.text, kinds)
        ][:1]
    if dropped and not chosen:
        # "how long does a 5kg bag last?" and "5kg bag." dropped: the next line stating a figure of an asked kind in a
        # word of the question ("Lasts 6 hens about 3 months."), likely enough by the bar a named attribute needs
        asked_words = intent.stems - naming
        chosen = [
            u
            for p, u in ranked[:2]
            if u.kind == "description" and p >= NEAR_NAMED_BAR and any(k.states.search(u.text) for k in kinds)
            if content_stems(u.text) & asked_words
        ][:1]
    if chosen:
        _state_units(answer, work, doc, chosen)
        return answer
    labelled = [] if figureless or dropped else _labelled_lines(work, doc, ranked) or _tied_lines(work, doc, ranked)
    if missing is not None and siblings:
        labelled = [u for u in labelled if names_label(u.text, missing)]
    if not labelled and not figureless and "contents" in intent.concepts:
        # (a thing it may come with, not an option value or a word of stock: "is blonde in stock and what comes in
        # it?" asks what it comes with)
        things = frozenset(w for w in asked - value_stems(doc) if not parse_query(w).stock)
        # "what's in the care kit?": the description's lead-in with its list of items ("Everything you need to refresh
        # an oiled surface: 250 ml hardwax oil; 1 fine abrasive pad; …"), however the ranker reads its opening words
        # ("does it come with a mattress protector?" only where the list names it: "Choose your feel: Medium; Firm"
        # lists no contents)
        labelled = [
            u
            for _, u in ranked
            if u.kind == "description"
            and _LEAD_AND_ITEMS.search(u.text)
            and (not intent.yes_no or not things or things & content_stems(u.text))
        ]
        # ... or the lines under a heading naming the contents ("What's inside", a table of its products)
        listed = sorted(
            (u for _, u in ranked if u.kind == "description" and mentions_concept(u.context, "contents")),
            key=lambda u: u.position,
        )
        if not labelled and listed:
            _state_units(answer, work, doc, listed[:4])
            return answer
    if labelled:
        _state_units(answer, work, doc, labelled[:1])
        return answer
    notice = None if figureless or dropped else _notice_line(work, doc, ranked)
    if notice is not None:
        # "what if my power bank starts swelling?": the safety notice's own line ("Stop using it if it swells")
        # answers; "not recorded" beside the notice would contradict the warning that comes with the answer
        answer.claim(notice, _cites_for(work.task, doc), doc=doc.id)
        return answer
    if (free := free_of_asked(work, doc, ranked)) is not None:
        _state_units(answer, work, doc, [free])  # "latex allergy … safe?" and "Latex-free."
        return answer
    answer.not_recorded = True  # Not recorded: say so, then what is recorded that comes closest.
    predicate = _predicate(intent, doc) if not siblings else _missing_predicate(missing or "", doc)
    answer.unnamed = not predicate
    answer.gaps += product_gaps(intent, doc)
    own = None if predicate or figureless else _asked_fact(work, doc, ranked)
    related = [own] if own is not None else figureless[:1] or siblings[:1] or _related_facts(work, doc, ranked)
    noticed = bool(related) and related[0].source == "disclosure"
    noticed = noticed and speaks_of_asked(fact_text(related[0]), intent.concepts)  # ("Check the strap": no warranty)
    # (the attribute or colour named, not a kind of figure: a row stating a weight may be another variant's)
    names_asked = _states_asked(work, doc, words=False, measured=False)
    near = (
        None
        if own is not None or figureless or siblings or dropped
        else _near_sentence(ranked, _tied(work, doc, ranked, names_asked), names_asked)
    )
    if near is not None and not _speaks_to(work, near):
        near = None
    if near is not None and noticed and not _says_asked_words(work, doc, near, ranked[0][0]):
        # a notice closest among the facts speaks before a sentence only likely to answer; not before one saying
        # the question's own words ("will it stain pale stone?" and "… it can mark pale paving slabs", hedged)
        near = None
    if near is not None:
        # below the bar, the description's sentence the ranker finds likelier than not to answer, and likelier than
        # any fact ("is it OK for a dog that swims most days?" and "We don't recommend leather for dogs who swim
        # often"): not stated as the answer, but shown as what the shop records
        # (stated without the hedge where it says the question's own words, it answered as often on product-QA
        # data's unanswerable questions as on its answerable ones: hetPQA's abstention fell from 0.86 to 0.68)
        # ... unless it says the answer outright (`nearest.said_outright`: a figure, or a name no other line says)
        if said_outright(work, doc, near, ranked):
            answer.not_recorded = answer.unnamed = False
            answer.gaps = []
        else:
            answer.meta(
                phrase("not_stated_exactly", subject=_subject(doc)),
                markdown=phrase("not_stated_exactly", subject=_subject(doc, md=True)),
            )
        text = _single_item(near, work.asked - _title_stems(doc)) or near.text
        answer.claim(text, _cites_for(work.task, doc, text), doc=doc.id)
        return answer
    if related and intent.yes_no and denies_asked(work, doc, fact_text(related[0])):
        # "is it waxed?" and "Material: Unwaxed, uncoated kraft paper": the fact says no in the question's own word
        answer.not_recorded = answer.unnamed = False
        answer.gaps = []
        _fact_sentence(answer, work, doc, related[0], lead=True)
        return answer
    if own is None and noticed:
        own = related[0]  # a notice speaking of it ("Meets BS 7177" for "fire retardant?") is not "not recorded"
        if "age" in intent.concepts and mentions_concept(own.value, "age") and _AGE_LIMIT.search(own.value):
            # "ok for a 2 yr old?" and "Safety: Not suitable for children under 3 years": the notice's age limit
            # is the answer, with nothing hedged before it
            answer.not_recorded = answer.unnamed = False
            answer.gaps = []
            _fact_sentence(answer, work, doc, own, lead=True)
            return answer
    if own is not None:
        # the asked attribute is recorded, only not as asked ("can my 4-month-old puppy eat it?" and "Age range:
        # Puppies 8 weeks to 12 months"): "has not recorded that" before it would read as a contradiction
        answer.meta(
            phrase("not_stated_exactly", subject=_subject(doc)),
            markdown=phrase("not_stated_exactly", subject=_subject(doc, md=True)),
        )
    else:
        answer.meta(
            phrase("not_recorded", subject=_subject(doc), predicate=predicate or ""),
            markdown=phrase(
                "not_recorded",
                subject=_subject(doc, md=True),
                predicate=(
                    _predicate(intent, doc, md=True)
                    if not siblings
                    else _missing_predicate(missing or "", doc, md=True)
                )
                or "",
            ),
        )
    for fact in related[:1]:
        _fact_sentence(answer, work, doc, fact, lead=False, pronoun=True)
    answer.settled = bool(siblings)  # what is missing is known: no other reading answers in its place
    return answer


_FIGURES = re.compile(r"\d+(?:[.,]\d+)?")


def _naming_units(chosen: list[Unit], work: _Work, doc: Document) -> list[Unit]:
    """An attribute the lexicon knows ("is it vegan?") is stated by a description sentence that names it, or that
    shares a word of the question beyond the product's own name ("for kids 3 years and up" for "what age kids would
    enjoy it?"), never by one that only reads close to the question."""
    if not work.intent.concepts:
        return chosen
    states = _states_asked(work, doc)
    return [u for u in chosen if u.kind != "description" or states(u.text)]


def _tied_lines(work: _Work, doc: Document, ranked: list[tuple[float, Unit]]) -> list[Unit]:
    """The product's best unit, when it is a description sentence that names the attribute the lexicon reads in the
    question and reaches the ranker's `lexicon_bar`, the bar a fact the lexicon ties to the question needs: "For ages 3
    years & up" answers "is it OK for my 2 year old?" rather than "not recorded". A word shared with the question is not
    enough here ("twenty warm bulbs" for "are there several kinds of bulb?"): below the ranker's own bar, only the
    lexicon's tie counts."""
    bar, states = _ranker().lexicon_bar, _states_asked(work, doc, words=False)
    named = [u for p, u in ranked[:1] if p >= bar and u.kind == "description" and states(u.text)]
    return [u for u in named if states_asked_kind(work.intent.text, u.text)]  # ("1 x AAA": no battery life)


def _states_asked(work: _Work, doc: Document, *, words: bool = True, measured: bool = True) -> Callable[[str], bool]:
    """A test of whether a sentence names what the question asks about this product: an attribute the lexicon reads
    in the question (other than one its name already says), with `measured` a figure of the kind the question asks
    for (lexicon "measures"), or, with `words`, a word of the question beyond the product's name."""
    concepts = work.intent.concepts
    kind = " ".join([doc.title, doc.product_type or "", *doc.tags])
    # an attribute that only names what the product is ("your SPF 50 sun cream") is not the one asked about
    wanted = tuple(c for c in concepts if not mentions_concept(kind, c)) or concepts
    # the question's words, acronyms included ("a SRAM XD driver"), less the product's name
    shared: frozenset[str] = frozenset()
    if words:
        shared = _attribute_stems(work.intent, doc) | content_stems(" ".join(_names_in(work.intent.text)))
        shared -= _title_stems(doc) | _reference_stems(work.intent.text, doc)

    # ... or the kind of figure the question asks for: "16in" states how tall, "27 x 19 x 24 in" how wide
    figures = asked_measures(work.intent.text) if measured else ()

    def states(text: str) -> bool:
        return (
            any(mentions_concept(text, c) for c in wanted)
            # "what comes in the set?": a lead-in and its list of items ("Five teas in a tin: Darjeeling, 20 g; …")
            or ("contents" in wanted and bool(_LEAD_AND_ITEMS.search(text)))
            or bool(shared & content_stems(text))
            or any(m.states.search(text) for m in figures)
            # "does it come in white?" of a product sold in no colours: a line naming a colour ("Ivory only.")
            or bool(work.intent.colours and COLOUR_WORDS & set(re.findall(r"[a-z]+", text.lower())))
        )

    return states


_LEAD_AND_ITEMS = re.compile(r":\s+[^;:]+;\s+[^;:]+")


def _lexicon_facts(
    facts: list[Fact], ranked: list[tuple[float, Unit]], chosen: list[Unit], *, yes_no: bool, asked: frozenset[str]
) -> list[Fact]:
    """The facts the attribute lexicon or the label words tie to the question, best by the ranker first, unless the
    ranker puts another unit above its bar and above all of them ("how big is the screen?": "Display: 5.5 inches",
    not the item's dimensions): a template never overrides a better-scoring unit. Unless one of the recorded facts
    reaches the ranker's calibrated `lexicon_bar`, none answers: on product-QA data a word tie alone ("light" → "Item
    package weight", "includes" → "Batteries included") names the wrong attribute more often than the right one.
    Notices (not answer units) answer through the lexicon, and before a unit lacking an asked word they say."""
    score = {unit.key: p for p, unit in ranked if unit.kind != "description"}
    if not any(f.key in score and score[f.key] >= _ranker().lexicon_bar for f in facts):
        facts = [f for f in facts if f.key not in score]
    if not facts:
        return []
    keys = {f.key for f in facts}
    best_fact = max((score.get(f.key, 0.0) for f in facts), default=0.0)
    if chosen and chosen[0].key not in keys and ranked and ranked[0][0] > best_fact:
        said = content_stems(chosen[0].text)
        return [f for f in facts if f.source == "disclosure" and asked & content_stems(f.value) - said]
    # a yes/no question is answered "Yes, ..." / "No, ..." first when a yes/no fact is among them that the ranker
    # itself ties to the question: "does the set include a blank piece?" is not "No, batteries are not included"
    bar = _ranker().lexicon_bar

    def leads(f: Fact) -> bool:
        return yes_no and _is_boolean(f) is not None and score.get(f.key, bar) >= bar

    return sorted(facts, key=lambda f: (not leads(f), -score.get(f.key, 0.0)))[:2]
