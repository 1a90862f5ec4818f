"""Price, stock, options and SKU of a product, from its variants and price facts."""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import pairwise

from ask_engine.answering.facts import _fact_sentence, _is_plural_title, _plural_label, _price_phrase
from ask_engine.answering.gaps import option_gap
from ask_engine.answering.measures import written_forms
from ask_engine.answering.options import (
    _ANY_OPTION,
    _ASKS_WHICH,
    _FOR_SITUATION,
    _OPTION_WORD,
    _free_figures,
    _holding_values,
    _is_colour_option,
    _is_size_option,
    _match_options,
    _named_option,
    _named_options,
    _named_variant,
    _options,
    _size_words,
    _variants_with,
)
from ask_engine.answering.query import _product_words
from ask_engine.answering.units import description_units, usable_value
from ask_engine.answering.work import _Answer, _cites_for, _plain, _Work
from ask_engine.language import (
    Intent,
    content_stems,
    join_and,
    parse_query,
    stem,
    text_cue,
    word_stems,
)
from ask_engine.phrases import phrase
from ask_engine.retrieve import AMOUNT_RE
from ask_engine.sources import format_money
from ask_engine.types import BACKORDER_WORDS, Document, Gap, Sentence, Variant


def _commerce(work: _Work, doc: Document) -> _Answer:
    """Price, stock and options, from the variants and the price facts."""
    task, intent = work.task, work.intent
    answer = _Answer()
    answer.use(doc.id)
    options = _options(doc)
    chosen, missing = _match_options(intent, options, doc.title)
    chosen = _with_other_parts(work, options, chosen)
    named = _named_variant(task, doc)
    variants = [named] if named else _variants_with(doc, chosen) if chosen else []
    title = doc.title
    cites = _cites_for(task, doc)

    for name, _value in missing:
        # The recorded options are the whole list, so an option outside it is answered by the list itself.
        values = list(dict(options).get(name, ()))
        if values:
            sizes = "sizes " if _is_size_option(name) and not _is_colour_option(name) else ""
            # the whole recorded list, without "only": the guard holds an exclusive claim to an exclusive source
            answer.claim(
                f"The {title} comes in {sizes}{join_and(values)}",
                cites,
                markdown=f"The **{title}** comes in {sizes}{join_and(values)}",
            )

    if intent.price:
        _price(answer, doc, variants, cites)
        for line in _priced_ranges(intent, doc):
            # "… in dove grey with the hub, window is 160cm wide" and "121–180 cm wide adds €30": what the figure adds
            answer.claim(line, _cites_for(task, doc, line), doc=doc.id)
    if intent.price and _SALE_END.search(intent.lower) and not _SALE_END_STATED.search(doc.body or ""):
        # "these are on sale, how long is the sale on for?": the reduced price is recorded, its end is not
        _unrecorded_when(answer, title, "when the sale on the {} ends")
        answer.gaps.append(Gap(field="sale end", key="sale_end", doc_id=doc.id))
    stated = _restock_lines(doc) if intent.stock and _RESTOCK_WHEN.search(intent.lower) else []
    for line in stated:
        # "SOLD OUT for now - next shipment expected in May": the page says when, and that is the answer
        answer.claim(line, _cites_for(task, doc, line), doc=doc.id)
    if intent.stock and _RESTOCK_WHEN.search(intent.lower) and not stated:
        _unrecorded_when(answer, title, "when the {} will be back in stock")
        answer.not_recorded = True
        answer.gaps.append(Gap(field="restock date", key="restock_date", doc_id=doc.id))
    if _asks_sku(intent):
        coded = [v for v in (variants or doc.variants) if v.sku][:4]
        for v in coded:
            which = "" if len(doc.variants) == 1 else f" in {v.title}"
            answer.claim(
                f"The SKU of the {title}{which} is {v.sku}",
                cites,
                markdown=f"The SKU of the **{title}**{which} is {v.sku}",
            )
    # the variants the question names by their option values, all sold out, are said to be, whatever was asked ("is
    # it on sale? need a size 2" when size 2 is sold out): their price or size chart alone reads as on offer
    sold_named = bool(chosen) and len(variants) < len(doc.variants) and all(v.available is False for v in variants)
    said_stock = bool(variants) and (intent.stock or named or sold_named)
    if said_stock:
        _stock_sentences(answer, doc, variants, cites)
    elif intent.stock and not variants:
        availability = doc.fact("availability")
        if availability is not None:
            _fact_sentence(answer, work, doc, availability, lead=False)
        elif doc.variants:
            _stock_sentences(answer, doc, list(doc.variants), cites)
    if (
        chosen
        and not intent.stock
        and not intent.price
        and not missing
        and (intent.yes_no or _ASKS_WHICH.search(intent.lower))
        and not named
        and _asks_only_having(intent, doc, chosen)
    ):
        named_values = [v for vals in chosen.values() for v in vals]
        # "do you have it in white, size S?" when that one is sold out: it comes in them, but is not had
        had = not variants or any(v.available is not False for v in variants)
        yes = "Yes, the" if had and intent.yes_no else "The"  # (not for "which of your coolers come in white?")
        if len(chosen) > 1 and not variants and doc.variants:
            # "do the dpns come in 5mm in the 15cm length?": each value is sold, but no variant has both; the
            # variants with the first value are what it comes in
            answer.claim(
                f"The {title} does not come in {join_and(named_values)} together",
                cites,
                markdown=f"The **{title}** does not come in {join_and(named_values)} together",
            )
            first = next(iter(chosen.items()))
            _stock_sentences(answer, doc, _variants_with(doc, dict([first])), cites)
            answer.settled = True
        elif had or not said_stock:
            # (sold out, and said to be: "Black / 4 is sold out" names what it comes in)
            answer.claim(
                f"{yes} {title} comes in {join_and(named_values)}",
                cites,
                markdown=f"{yes} **{title}** comes in {join_and(named_values)}",
            )
        if variants and not any(v.status in ("in_stock", None) for v in variants):
            # "do you have it in white, size S?": none of them in stock is said
            _stock_sentences(answer, doc, variants, cites)
    wants_list = intent.options and not chosen and not missing
    if wants_list:
        listed_options = _named_options(intent, options)
        asked = listed_options or options
        word = _OPTION_WORD.search(intent.lower)
        no_colours = _asks_unrecorded_colour(intent, doc, options)
        # "what colour is it?" names a kind of option the product lacks ("options", "variants" name every kind)
        lacking = bool(options) and not listed_options and word is not None and not _ANY_OPTION.match(word.group(0))
        lacking = lacking or (no_colours and bool(options))
        if lacking:
            # "what colour is the bottle?" when its only option is Size: colours are not recorded; its sizes are
            asked_word = _asked_option_word(word, no_colours)
            answer.meta(
                phrase("not_recorded", subject="", predicate=f"any {asked_word} for the {title}"),
                markdown=phrase("not_recorded", subject="", predicate=f"any {asked_word} for the **{title}**"),
            )
            answer.not_recorded = True  # the description may still state it (`product._product` looks there)
            answer.gaps.append(option_gap(asked_word, doc))
        for n, (option_name, option_values) in enumerate(asked[:2]):
            label = _plural_label(option_name.lower())
            verb = "are" if len(option_values) > 1 else "is"
            listed = join_and(list(option_values))
            if lacking and n == 0:
                owner = "Their" if _is_plural_title(title) else "Its"
                answer.claim(f"{owner} {label} {verb} {listed}", cites)
                continue
            answer.claim(
                f"The {label} of the {title} {verb} {listed}",
                cites,
                markdown=f"The {label} of the **{title}** {verb} {listed}",
            )
        if not options and (word or no_colours):
            # one variant and no options: nothing to list, and silence would read as if the question was missed
            asked_word = _asked_option_word(word, no_colours)
            answer.meta(
                phrase("not_recorded", subject="", predicate=f"any {asked_word} for the {title}"),
                markdown=phrase("not_recorded", subject="", predicate=f"any {asked_word} for the **{title}**"),
            )
            answer.not_recorded = not answer.sentences[:-1]
            answer.gaps.append(option_gap(asked_word, doc))
    answer.sentences = _dedupe_sentences(answer.sentences)
    return answer


def _with_other_parts(
    work: _Work, options: list[tuple[str, tuple[str, ...]]], chosen: dict[str, list[str]]
) -> dict[str, list[str]]:
    """The option values a part of a question names, with the one value of each other option the rest of the
    question names: "is the rosewood cardi on sale? can i get it in a size 2" asks of Rosewood / 2 in both parts,
    though each part names one of them. A part naming no value is left as it is."""
    if not chosen or " ".join(work.task.query.split()) == " ".join(work.intent.text.split()):
        return chosen
    whole, _ = _match_options(parse_query(work.task.query), options)
    extra = {name: values for name, values in whole.items() if name not in chosen and len(values) == 1}
    return {**chosen, **extra} if extra else chosen


def _priced_ranges(intent: Intent, doc: Document) -> list[str]:
    """The description's sentence stating an amount and a range that holds a figure the question gives which no option
    value is ("window is 160cm wide" and "121–180 cm wide adds €30 and 181–240 cm adds €60"), the narrowest of them."""
    figures = _free_figures(intent, _options(doc))
    lines = [u.text for u in description_units(doc.body) if AMOUNT_RE.search(u.text)] if figures else []
    held = _holding_values(lines, figures)
    return [held] if held is not None else []


def _asks_only_having(intent: Intent, doc: Document, chosen: dict[str, list[str]]) -> bool:
    """The question asks only whether the product comes in the option values it names ("do you have it in clay, size
    S?"), not something about that variant ("will the 12-speed one work with SRAM AXS?"): no content word of it is
    left beside the product's name, the options and the lexicon's `having_words`."""
    values = [v for vs in chosen.values() for v in vs]
    # a size named by its word ("small" for S) is named too
    spoken = [w for v in values for w in _size_words().get(v.casefold(), ())]
    # ... as the question writes a figure and its unit ("15mm" or "15 mm"; "the 16 inch ones" for '16"')
    forms = [f for v in values for f in written_forms(v, intent.text)]
    named = " ".join([*chosen, *values, *spoken, *forms])
    own = content_stems(named)
    left = intent.stems - _product_words(doc) - own - word_stems("having_words")
    # "elevating leg rests" names "Elevating legrests": two words of the question written as one of the value's
    words = re.findall(r"[a-z0-9]+", intent.lower)
    for first, second in pairwise(words):
        if content_stems(first + second) & own:
            left -= content_stems(f"{first} {second}")
    return not left


def _asks_unrecorded_colour(intent: Intent, doc: Document, options: list[tuple[str, tuple[str, ...]]]) -> bool:
    """ "Do they come in purple?", "can I get it in blue?" about a product without a colour option: its colours are
    not recorded. A colour word after "in", and one the product's own text does not use ("is your sun cream vegan?",
    "does it work in sand?" ask no colour)."""
    asked = [c for c in intent.colours if re.search(rf"\bin\s+{re.escape(c)}\b", intent.lower)]
    if not asked or any(_is_colour_option(name) for name, _ in options):
        return False
    own = _product_words(doc) | content_stems(doc.body)
    return any(stem(c) not in own for c in asked)


def _asked_option_word(word: re.Match[str] | None, colour: bool) -> str:
    """The kind of option a question asks for, in its own word ("colors", "sizes"); "colours" for a colour it names
    ("in purple") when its word names no kind ("options")."""
    if word is not None and not (colour and _ANY_OPTION.match(word.group(0))):
        return _plural_label(word.group(0).lower())
    return "colours"


def _price(answer: _Answer, doc: Document, variants: list[Variant], cites: list[int]) -> None:
    title = doc.title
    currency = doc.currency or "USD"
    # the variants the question names, each with its price; all of them too, when they differ and are few ("is the
    # tweed one dearer than the ripstop?" names both)
    named_all = len(variants) <= 3 and len({v.price for v in variants}) > 1
    if variants and (len(variants) < len(doc.variants) or len(doc.variants) == 1 or named_all):
        priced = [v for v in variants if v.price is not None][:3]
        prices = {v.price for v in priced}
        if priced and len(prices) == 1 and len(priced) > 1 and all(usable_value(v.title) for v in priced):
            value = format_money(priced[0].price, currency)
            before = {v.compare_at_price for v in priced}
            first = priced[0]
            if len(before) == 1 and first.compare_at_price and _greater(first.compare_at_price, first.price or "0"):
                value += f", reduced from {format_money(first.compare_at_price, currency)}"
            # the option value they share names them ("in L"), else their titles
            shared = [val for name, val in first.options if all(dict(v.options).get(name) == val for v in variants)]
            which = " / ".join(shared) if shared else join_and([v.title for v in priced])
            answer.claim(
                f"The price of the {title} in {which} is {value}",
                cites,
                markdown=f"The price of the **{title}** in {which} is {value}",
            )
            return
        for v in priced:
            value = format_money(v.price, currency)
            was = (
                f", reduced from {format_money(v.compare_at_price, currency)}"
                if v.compare_at_price and _greater(v.compare_at_price, v.price or "0")
                else ""
            )
            # one variant (Shopify's "Default Title") names nothing: its price is the product's price
            which = f" in {v.title}" if len(doc.variants) > 1 and usable_value(v.title) else ""
            answer.claim(
                f"The price of the {title}{which} is {value}{was}",
                cites,
                markdown=f"The price of the **{title}**{which} is {value}{was}",
            )
        if priced:
            return
    fact = doc.fact("sale") or doc.fact("price")
    if fact is not None:
        if fact.key == "sale":
            answer.claim(
                f"The {title} is on sale: {_plain(fact.value)}",
                cites,
                markdown=f"The **{title}** is on sale: {fact.value}",
            )
        else:
            answer.claim(
                f"The {title} is priced {_price_phrase(fact.value)}",
                cites,
                markdown=f"The **{title}** is priced {_price_phrase(fact.value)}",
            )
        return
    priced = [v for v in doc.variants if v.price is not None]
    if priced:
        low = min(priced, key=lambda v: float(v.price or 0))
        answer.claim(
            f"The price of the {title} is {format_money(low.price, currency)}",
            cites,
            markdown=f"The price of the **{title}** is {format_money(low.price, currency)}",
        )


def _greater(a: str, b: str) -> bool:
    try:
        return float(a.replace(",", "")) > float(b.replace(",", ""))
    except ValueError:
        return False


_RESTOCK_WHEN = text_cue("restock_when")  # "when will it be back in stock?"
_SALE_END = text_cue("sale_end")  # "how long is the sale on for?", "when does the offer end?"
_SALE_END_STATED = text_cue("sale_end_stated", re.IGNORECASE)  # "Sale ends 30 June", "offer valid until Sunday"
_SKU = text_cue("sku")


_RESTOCK_STATED = text_cue("restock_stated", re.IGNORECASE)  # "next shipment expected", "new stock due"
_RESTOCK_TIME = text_cue("restock_time", re.IGNORECASE)  # "in May", "w/c 14 April", "end of the month"


def _unrecorded_when(answer: _Answer, title: str, predicate: str) -> None:
    """Says the product's page does not record when something happens (the sale ends, the stock is back), the title
    put into the predicate's "{}" as it is, or in bold for Markdown."""
    answer.meta(
        phrase("not_recorded", subject=f"the {title}", predicate=predicate.format(title)),
        markdown=phrase("not_recorded", subject=f"the **{title}**", predicate=predicate.format(f"**{title}**")),
    )


def _restock_lines(doc: Document) -> list[str]:
    """The product's description sentences saying when stock comes back ("next shipment expected in May"): a
    restock phrase with a time in one sentence."""
    return [
        u.text for u in description_units(doc.body) if _RESTOCK_STATED.search(u.text) and _RESTOCK_TIME.search(u.text)
    ][:2]


_DISPATCH_WHEN = text_cue("dispatch_when")  # "roughly when would it be sent out?", "how long till it ships?"


def unstocked_dispatch(work: _Work, doc: Document) -> _Answer | None:
    """ "ordering it now, roughly when would it be sent out?" of a product on backorder or sold out (the variants the
    question names, else all): that, and when its page says stock comes ("next delivery expected towards the end of
    January"), not the shop's dispatch times, which are for goods in stock; None for goods in stock."""
    if not _DISPATCH_WHEN.search(work.intent.lower):
        return None
    chosen, _missing = _match_options(work.intent, _options(doc), doc.title)
    named = _named_variant(work.task, doc)
    variants = [named] if named else _variants_with(doc, chosen) if chosen else list(doc.variants)
    if not variants or any(v.status != "backorder" and v.available is not False for v in variants):
        return None
    answer = _Answer()
    answer.use(doc.id)
    _stock_sentences(answer, doc, variants, _cites_for(work.task, doc))
    for line in _restock_lines(doc):
        answer.claim(line, _cites_for(work.task, doc, line), doc=doc.id)
    return answer if answer.sentences else None


def _asks_sku(intent: Intent) -> bool:
    return bool(_SKU.search(intent.lower))


def _stock_sentences(answer: _Answer, doc: Document, variants: list[Variant], cites: list[int]) -> None:
    """ "Black / 42 is in stock; Olive / 37 is sold out." At most three names per status, else the recorded
    availability summary."""
    title = doc.title
    single = len(doc.variants) == 1 and not doc.variants[0].options
    available = [v.title for v in variants if v.status == "in_stock"]
    ordered = [v.title for v in variants if v.status == "backorder"]
    sold = [v.title for v in variants if v.available is False]
    unknown = [v.title for v in variants if v.available is None]
    if single:
        words = variants[0].stock_words
        if words is not None:
            answer.claim(f"The {title} is {words}", cites, markdown=f"The **{title}** is {words}")
        return
    if len(available) > 3 or len(sold) > 3 or len(ordered) > 3:
        summary = doc.fact("availability")
        if summary is not None:
            answer.claim(
                f"The {title} is {_plain(summary.value)}",
                cites,
                markdown=f"The **{title}** is {summary.value}",
            )
            return
    if available:
        names = available[:3]
        answer.claim(f"{join_and(names)} {'is' if len(names) == 1 else 'are'} in stock", cites)
    if ordered:
        names = ordered[:3]
        answer.claim(f"{join_and(names)} {'is' if len(names) == 1 else 'are'} {BACKORDER_WORDS}", cites)
    if sold:
        names = sold[:3]
        answer.claim(f"{join_and(names)} {'is' if len(names) == 1 else 'are'} sold out", cites)
    if unknown and not available and not sold and not ordered:
        answer.meta(phrase("not_recorded", subject=f"the {title}", predicate=f"whether the {title} is in stock"))
        answer.not_recorded = True
        answer.gaps.append(Gap(field="stock", key="availability", doc_id=doc.id))


def _dedupe_sentences(sentences: list[Sentence]) -> list[Sentence]:
    seen: set[str] = set()
    out = []
    for s in sentences:
        if s.text not in seen:
            seen.add(s.text)
            out.append(s)
    return out


def _asks_for_value(intent: Intent, doc: Document) -> bool:
    """A yes/no question asking only whether the product comes in an option value it names, or one it lacks."""
    chosen, missing = _match_options(intent, _options(doc), doc.title)
    return bool(missing) or (bool(chosen) and _asks_only_having(intent, doc, chosen))


_COMES_IN = text_cue("comes_in", re.IGNORECASE)


def _asks_for_other_thing(intent: Intent, doc: Document) -> bool:
    """A yes/no "does it come in …?" naming no option, no option value, colour, size or figure, but words of its
    own beyond the product's name and the lexicon's `having_words` ("a gift tube"); or a "can I buy / get …?" asking
    no stock in other words, whose object is such words ("a replacement handle", "it without the turps smell")."""
    if (bought := _bought(intent)) is not None:
        asked = replace(intent, text=bought, lower=bought, stems=content_stems(bought))
        values = {name: list(vs) for name, vs in _options(doc)}
        return not (intent.options or intent.colours) and not _asks_only_having(asked, doc, values)
    if not (intent.yes_no and _COMES_IN.search(intent.lower)):
        return False  # "does it come with the stick?" asks what is included, answered as before
    if intent.colours or intent.numbers or _named_option(intent, doc) or _OPTION_WORD.search(intent.lower):
        return False
    chosen, missing = _match_options(intent, _options(doc), doc.title)
    return not chosen and not missing and not _asks_only_having(intent, doc, {})


_BUYING, _PURPOSE = text_cue("buying_frame"), text_cue("buying_purpose")
_ASKED_NOW = text_cue("asked_now")


def _bought(intent: Intent) -> str | None:
    """What a question asking stock only by "can I buy / get …" asks for ("can I buy a replacement handle if one
    splits?": "a replacement handle"), up to a purpose ("… for my son") or the end of its clause; None for any other
    question ("can I still buy the 42 mm, is it in stock?" asks the stock in words of its own)."""
    frame = _BUYING.search(intent.lower)
    # ("can I order the big refill pouch right now?" asks whether it is in stock, as "is it in stock?" does)
    if frame is None or parse_query(_BUYING.sub(" ", intent.lower)).stock or _ASKED_NOW.search(intent.lower):
        return None
    rest = intent.lower[frame.end() :]
    end = _PURPOSE.search(rest)
    return rest[: end.start()] if end else rest


def differences(work: _Work, doc: Document) -> _Answer | None:
    """ "what's the difference between the small and the large?", "peeled or burnt, which is harder?": a comparison
    naming values of one of the product's options (one of two names both) is answered by the description lines
    naming them ("Small: H 27 cm, Ø 23 cm, E14.", "Burnt = heat-treated tiger-stripe pattern") and by each one's
    price where the prices differ; None when the question names no two values of one option. So is a choice between
    two values it names with "or" ("buckle or velcro strap, which should I get?"), for no situation of the asker's
    (`sizing.suited` reads "which length for my 8 yr old?") and no stock asked."""
    intent = work.intent
    choosing = (
        not intent.comparison
        and not intent.stock
        and " or " in intent.lower
        and bool(_ASKS_WHICH.search(intent.lower))
        and not _FOR_SITUATION.search(intent.lower)
        and not intent.numbers
    )
    if not (intent.comparison or choosing):
        return None
    for _, values in _options(doc):
        # a value is named by its first word ("Pelleted" of "Pelleted (approx. 250 seeds)")
        firsts = {v: w for v in values if (w := next(iter(re.findall(r"[^\W\d_]{3,}", v)), ""))}
        named = [v for v, w in firsts.items() if (own := content_stems(w)) and own <= intent.stems]
        if len(named) == 1 and len(values) == 2 and not choosing:
            named = list(values)  # "pelleted or normal seed?" of "Standard" and "Pelleted"
        if len(named) < 2 or len(named) != len({firsts.get(v, "") for v in named}):
            continue
        said = re.compile(r"\b(?:" + "|".join(re.escape(firsts[v]) for v in named if v in firsts) + r")\b", re.I)
        lines = [u.text for u in description_units(doc.body) if said.search(u.text)]
        if not lines:
            continue
        answer = _Answer()
        groups = [[v for v in doc.variants if value in dict(v.options).values()] for value in named]
        priced = len({v.price for group in groups for v in group}) > 1  # each one's price, where they differ
        # the lines saying most, in the description's order, leaving room for the prices
        kept = sorted(lines, key=len, reverse=True)[: max(1, 4 - len(groups)) if priced else 3]
        for text in sorted(kept, key=lines.index):
            answer.claim(text, _cites_for(work.task, doc, text), doc=doc.id)
        for group in groups if priced else []:
            _price(answer, doc, group, _cites_for(work.task, doc))
        return answer
    return None
