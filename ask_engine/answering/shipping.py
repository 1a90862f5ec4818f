"""Shipping to a country (or a state or province): the sentences naming it, its region or a rule for the
product in view, else "not listed" with where the shop does ship.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ask_engine.answering.destinations import (
    _ONLY,
    bars,
    bars_only_others,
    elsewhere,
    goods_head,
    lists_other_members,
    names_a_place,
    names_country,
    names_only_others,
    place_section,
    placed,
    with_lead,
)
from ask_engine.answering.query import _SHIP_WORDS, _kind_stems
from ask_engine.answering.sentences import (
    _ANAPHOR_START,
    _DURATION,
    _NEGATION,
    PRODUCT_RULE_BONUS,
    _fits,
    _quote,
    _score,
    _units,
)
from ask_engine.answering.work import _Answer, _Unit, _Work
from ask_engine.countries import elsewhere_only, named_by_state_code, region_named, subdivisions
from ask_engine.language import (
    content_stems,
    country_aliases,
    country_codes_in,
    country_name,
    group_members,
    text_cue,
)
from ask_engine.phrases import phrase
from ask_engine.retrieve import AMOUNT_RE, COST_RE
from ask_engine.towns import (
    Town,
    code_lister,
    fold_name,
    home_country,
    named_as_origin,
    names_region_group,
    names_town,
    near_named_city,
    place_written,
    postcode_areas_listed,
    region_codes,
    region_display,
    regions_named,
    town_named,
    towns_in,
)
from ask_engine.types import Document, Task

NOT_LISTED_CHARS = 260  # where the shop does ship, after "not listed": a sentence or two, not the whole table
# What the sentences saying where the shop ships are compared with (a fixed text: the indexer embeds it ahead).
DESTINATIONS_PROBE = "Which countries and destinations do you ship and deliver to?"
# A line defining a delivery zone by what it covers: "Metro covers metropolitan Sydney, …", "Zone B includes …"
_ZONE_DEFINED = re.compile(
    r"^\s*(?:the\s+)?([A-Z][\w&'’/-]*(?:\s+[A-Z0-9][\w&'’/-]*){0,3})\s+(?:zone\s+)?(?:covers|includes)\b"
)
_FREE = re.compile(r"\bfree\b", re.IGNORECASE)
# (a zone's letter in capitals: "Zone B", not "zone a few days")
_ZONES = re.compile(r"\b(?i:zones?)\s+((?:\d+|[A-Z])\b(?:\s*(?i:,|and|&|or|-|–|to)\s*(?:\d+|[A-Z])\b)*)")


def _zones(text: str) -> frozenset[str]:
    """The delivery zones a line names by number or letter ("Zone 2", "Zones 1, 2 and 3", "Zones 1-3")."""
    out: set[str] = set()
    for m in _ZONES.finditer(text):
        names = re.findall(r"\d+|\b[A-Z]\b", m.group(1))
        out.update(n.upper() for n in names)
        span = re.fullmatch(r"\s*(\d+)\s*(?:-|–|to)\s*(\d+)\s*", m.group(1))
        if span is not None and int(span.group(2)) - int(span.group(1)) < 20:
            out.update(str(n) for n in range(int(span.group(1)), int(span.group(2)) + 1))
    return frozenset(out)


def _zones_of(units: Sequence[_Unit]) -> frozenset[str]:
    """The zones `units` are in, by their lines and headings ("EU Zone 2" over "€18.00 per order")."""
    return frozenset().union(*(_zones(placed(u)) for u in units))


_CUSTOMS = text_cue("customs_words", re.I)  # "import fees", "duties", "VAT"
_SENDING = text_cue("sending_heading", re.I)  # a heading about what is sent where ("Items we can only send …")
_MONEY = AMOUNT_RE  # "₹1,150", "CHF 12"
# an amount that is a bound on the order ("free on orders over £60", "orders up to €150"), not what delivery costs
_BOUND_BEFORE = text_cue("amount_bound", re.IGNORECASE)


def _states_cost(text: str) -> bool:
    """`text` gives an amount that is not a bound on the order ("£9.95", not only "orders up to €150")."""
    return any(not _BOUND_BEFORE.search(text[: m.start()]) for m in _MONEY.finditer(text))


def _shipping(work: _Work, targets: list[Document]) -> _Answer | None:
    task, intent = work.task, work.intent
    if not intent.shipping_place or not intent.shipping:
        return None
    region = region_named(intent.text) or _region_by_code(intent.text, task)
    units = [
        u for u in _units(task) if u.evidence.passage.kind != "product" or (u.doc is not None and u.doc in targets)
    ]
    shipping_units = [u for u in units if _is_shipping_unit(u)]
    # "shipping to LA?" in a shop whose policy never names Laos means Los Angeles or Louisiana: a state's code read
    # as a country the policy does not name is no country
    stated = [
        c
        for c in intent.countries
        if not named_by_state_code(intent.text, c)
        or any(c in country_codes_in(u.text) or c in country_codes_in(u.context) for u in shipping_units)
    ]
    if len(stated) != len(intent.countries):
        intent = replace(intent, countries=tuple(stated))
    home_town = None
    if region is not None and not intent.countries and region[0] not in buyer_then_home(task):
        # "ship to Victoria on the island?" of a Canadian shop is the city in British Columbia, not Australia's state:
        # a state abroad sharing its name with a town at home is the town
        home_town = _town(work, shipping_units)
        region = None if home_town is not None and home_town.country in buyer_then_home(task) else region
    # "Do you deliver to Brighton?": the town's country, region and postcode area are what the policy names
    town = None if region is not None or intent.countries else home_town or _town(work, shipping_units)
    if town is None and region is None and not intent.countries:  # "to Sylt", which the lines name, not the data
        home = home_country(task.shop_currency, task.shop_country)
        town = place_written(intent.text, [u.text for u in shipping_units], home)
    if town is not None:
        intent = replace(intent, countries=(town.country,))
        region = (town.country, town.region) if town.region else None
    code = intent.countries[0] if intent.countries else (task.country or "").upper() or None
    if region is None and task.region and code and not intent.countries:
        name = _region_name(code, task.region)  # the buyer's own state or province, from the context
        region = (code, name) if name else None
    if code is None and region is not None:
        code = region[0]  # "Do you ship to Alaska?" is a question about the country Alaska is in
    if code is None:
        return None
    place_name = region[1].lower() if region is not None and region[0] == code else None
    # "Central (ND, SD, NE, KS, OK, TX, …): 3–5 business days" names Texas by its code among its neighbours'
    listing = code_lister(code, region[1]) if region is not None and region[0] == code else None
    # a sentence names the destination itself, its region, or sits under a heading that names it ("Canada"); for
    # a town, a line listing other postcode areas than its own is about somewhere else
    # (a line naming no place of its own is about the place its heading names: "## Northern Ireland" over "€6.95, free
    # over €60" for Belfast)
    levels = {id(u): _town_level(town, u.text) or _town_level(town, u.context) for u in shipping_units} if town else {}
    if listing is not None:  # Tulsa's state by its code among its neighbours' ("South Central (TX, OK, AR, KS)")
        levels.update({id(u): 1 for u in shipping_units if levels.get(id(u)) == 0 and listing(u.text)})
    direct = [
        u
        for u in shipping_units
        if levels.get(id(u), 0) >= 0
        and (
            levels.get(id(u), 0) > 0
            or names_country(u.text, code)
            or (place_name is not None and _names_place(u.text, place_name, listing))
            or code in country_codes_in(u.context)
        )
    ]
    # the zones the destination's own lines are in ("EU Zone 2"): a line for the group naming another zone ("Free
    # delivery … to EU Zone 1") is not the destination's
    own_zones = _zones_of(direct)
    grouped = [
        u
        for u in shipping_units
        if u not in direct
        and levels.get(id(u), 0) >= 0
        and any(code in members for members in group_members(u.text).values())
        and not lists_other_members(u.text, code)
        and not (own_zones and _zones(u.text) and not own_zones & _zones(u.text))
    ]
    # A product in view may have its own delivery rule ("knives can only be delivered to UK addresses"), which
    # outranks the general destination table.
    kinds = frozenset().union(*(_kind_stems(d) for d in targets))
    if not targets:
        # "do you ship saddles to France?" names a kind of product the catalogue sells, with none in view: its own
        # delivery rule ("Saddles - UK and Republic of Ireland only") outranks the destination's rates
        place_stems = content_stems(" ".join(country_name(c) for c in intent.countries))
        kinds = (intent.stems & task.kind_words) - place_stems

    def rule_of_kind(u: _Unit) -> bool:
        # "RestWell … Dog Bed, sizes L and XL" under "These items cannot ship to Alaska …:"
        # (or under a heading limiting where things are sent: "Items we can only send within Ireland" over "Saddles -
        # …"; not "UK delivery" over "Tea and teaware go by Royal Mail …", the rates for everything)
        sent = bool(_SHIP_WORDS.search(u.context) or _SENDING.search(u.context))
        limits = bool(_ONLY.search(u.context) or _NEGATION.search(u.context))
        # (or a sentence limiting where the kind is sent: "Whiskey truffles can only be sent to addresses in Ireland")
        said = with_lead(u)
        limited = bool(_SENDING.search(said) and (_ONLY.search(said) or _NEGATION.search(said)))
        # (or a line under such a heading limiting the kind itself: "Darkroom chemistry – Irish addresses only.")
        limits = limits or (bool(_ONLY.search(said) or _NEGATION.search(said)) and bool(goods_head(u.text) & kinds))
        about = bool(_SHIP_WORDS.search(said)) or (sent and limits) or limited
        return bool(kinds & content_stems(u.text if u.line_first is None else said)) and about

    restricted = [
        u
        for u in shipping_units
        if u not in direct
        and u not in grouped
        and rule_of_kind(u)
        and (u.evidence.passage.kind != "product" or names_a_place(u.text))
        # with none in view, a rule saying where the kind goes ("… only", "cannot …"), not when it is dispatched
        and (bool(targets) or names_a_place(u.text) or bool(_ONLY.search(u.text) or _NEGATION.search(u.text)))
        and not elsewhere(u.text)
        and not bars_only_others(u.text, code)  # ("We can't send batteries to the UK", asked about Germany)
        and not elsewhere_only(u.context, code)  # (the "Australia" section's "only to Australia – no kayaks"; and
        # "return unopened tea within 30 days of delivery" is a returns rule, not where the tea can go)
        and u.evidence.passage.link_type != "refund_policy"
    ]
    # "will I get hit with import fees ordering to the US?": where no line naming the destination speaks of customs, the
    # policy's customs line of no other place ("… duties charged by the destination country are the recipient's")
    customs = bool(_CUSTOMS.search(intent.lower))
    said = direct + grouped + restricted
    if customs and said and not any(_CUSTOMS.search(placed(u)) for u in said):
        said += [
            u for u in shipping_units if u not in said and _CUSTOMS.search(placed(u)) and not names_a_place(u.text)
        ]
    if said:
        pool = said
        # the product's own rules, among the lines naming the destination too (one barring it goes first: "Gara fins to Fiji?")
        own = restricted + [u for u in direct + grouped if rule_of_kind(u) and u.evidence.passage.kind != "product"]
        # ... and the product's own page limiting where it goes ("Pallet delivery item - UK mainland only")
        own += [
            u
            for u in pool
            if u.doc in targets and _SHIP_WORDS.search(u.text) and (_ONLY.search(u.text) or _NEGATION.search(u.text))
        ]
        _score(work, pool)
        # "will I get hit with import fees?" asks about customs, answered by the destination's customs line ("Great
        # Britain: … we collect UK VAT at checkout"), not by its rate, whatever fee is asked about
        asks_cost = (intent.price or bool(COST_RE.search(intent.lower))) and not customs  # "is it free?"
        place = place_name or _place_phrase(intent.text, code)
        for u in pool:
            u.score += 0.15 if u in direct else 0.0
            # "Northern Ireland", not just "UK"; Texas's own line ("… OK, TX, MN …"), not just the US rates
            u.score += 0.1 if place and _names_place(u.text, place, listing) else 0.0
            u.score += 0.1 * levels.get(id(u), 0)  # the town's own postcode area before its nation
            # "how long?" / "how much?" is answered by the sentence with the duration or the price in it
            u.score += 0.12 if intent.asks_duration and _DURATION.search(u.text) else 0.0
            u.score += 0.12 if asks_cost and _MONEY.search(u.text) else 0.0
            u.score += PRODUCT_RULE_BONUS if kinds & content_stems(u.text) else 0.0
            # ... and asked of no goods, a line of some kind's own ("The 25 kg flour sack … for €19.50", or "Only to
            # Australia." under "Do you ship bottled ink overseas?") after the rest
            u.score -= (
                PRODUCT_RULE_BONUS if not (kinds or targets) and content_stems(placed(u)) & task.kind_words else 0
            )
            # "Orders to Canada may be charged duties" under "USA and Canada" is Canada's line, not the USA's
            u.score -= OTHER_PLACE_PENALTY if names_only_others(u.text, code) else 0.0
        # how specifically each line is the town's: its own level, the product's own rule as specific as any zone
        # (below a line naming the town itself: "… islands (Sylt, Föhr, …)" before the tyres' mainland rate)
        closest = max(levels.values(), default=0)
        top = min(closest, 2)
        standing = {id(u): max(top, levels.get(id(u), 0)) if u in own else levels.get(id(u), 0) for u in pool}
        # a state's own line ("Alaska, Hawaii …: $14.95 flat") before the country's rates
        if place_name is not None and town is None:
            for u in pool:
                # the product's own rule under a lead-in naming the state ("… cannot ship to Alaska, Hawaii …:")
                named = _names_place(with_lead(u) if u in own else u.text, place_name, listing)
                standing[id(u)] += 1 if named else 0
        # the town's own zone first (a customs question: the destination's customs line first)
        pool.sort(key=lambda u: (not (customs and _CUSTOMS.search(placed(u))), -standing[id(u)], -u.score))
        pool = pool if customs or place_name or town else place_section(pool, code, content_stems(intent.text))
        chosen = [pool[0]]
        for u in pool[1:]:
            if place and _names_place(pool[0].text, place, listing) and not _names_place(u.text, place, listing):
                continue  # the sentence about Alaska answers for Alaska; the mainland rate would mislead
            if standing[id(u)] < standing[id(pool[0])]:
                continue  # Brighton's zone (BN) answers for Brighton; the rest of England's would mislead
            if len(chosen) < 2 and u.score >= pool[0].score - 0.06 and _fits(chosen, u):
                chosen.append(u)
        if town is not None and not targets and not any(_NEGATION.search(u.text) for u in chosen):
            # "Live plants … can't be sent to … Tasmania" holds for Hobart whatever rate is quoted: with no product in
            # view, a restriction naming the town's place as closely as the quoted lines is quoted too
            floor = max(standing[id(chosen[0])], 1)
            barred = [u for u in pool if u not in chosen and standing[id(u)] >= floor and _NEGATION.search(u.text)]
            if barred and _fits(chosen, barred[0]):
                chosen.append(barred[0])
        elif town is not None and not any(_NEGATION.search(u.text) for u in chosen):
            # ... with one in view, the bar in its own rule's section that names the town's place ("Fuel canisters …
            # ship by ground within Canada only. They cannot go to Yukon, …" for Whitehorse)
            sections = {(u.evidence.passage.id, u.context) for u in chosen if u in own}
            barred = [
                u
                for u in pool
                if u not in chosen
                and (u.evidence.passage.id, u.context) in sections
                and levels.get(id(u), 0) >= 1
                and _NEGATION.search(u.text)
            ]
            if barred and _fits(chosen, barred[0]):
                chosen.append(barred[0])
        limiting = [
            u
            for u in own
            if u not in chosen
            and (_ONLY.search(u.text) or _NEGATION.search(u.text))
            and not bars_only_others(u.text, code)
            and not u.text.rstrip().endswith(":")  # (a lead-in, its list not quoted, says nothing of where)
        ]
        if targets and limiting and not any(u in own for u in chosen) and _fits(chosen, limiting[0]):
            chosen[:0] = [u for u in (limiting[0].line_first, limiting[0]) if u is not None and u not in chosen]
        if asks_cost and not any(_states_cost(u.text) for u in chosen):
            # "how much is shipping to Germany?": the destination's line with what delivery costs ("All other EU
            # countries: £9.95, 4-8 working days"), where the best gives a bound ("up to €150"); a duration if asked
            priced = [  # (not one naming only other places: the US flat rate is no rate to Winnipeg)
                u
                for u in pool
                if u not in chosen
                and standing[id(u)] >= standing[id(pool[0])]
                and _states_cost(u.text)
                and not names_only_others(u.text, code)
            ]
            # ... or its own section's ("We ship to … Australia …" and, after it, "Tracked International costs
            # CA$44.95"), before another zone's rates
            priced += [u for u in _own_section(chosen, shipping_units, code, _states_cost) if u not in priced]
            priced.sort(key=lambda u: not (intent.asks_duration and _DURATION.search(u.text)))
            if priced and _fits(chosen, priced[0]):
                chosen.append(priced[0])
        if asks_cost and not any(_states_cost(u.text) for u in chosen):
            # "Metro covers … Hobart" says which zone; the rates table's rows for that zone say what it costs
            rates = [u for u in _zone_rates(chosen, shipping_units) if _fits(chosen, u)][:2]
            # ... and a charge the town's state or nation adds on top ("Deliveries to Tasmania … attract a surcharge")
            # (a sentence, not another zone's row of the rates table: "Zone: UK mainland (… Scotland), …: £6.95")
            extra = [
                u
                for u in pool
                if u not in chosen
                and levels.get(id(u), 0) >= 1
                and _MONEY.search(u.text)
                and not _TABLE_ROW.match(u.text)
            ]
            chosen += rates + (extra[:1] if rates else [])
        if intent.asks_duration and not any(_DURATION.search(u.text) for u in chosen):
            # "how long to Hawaii?": its own section's line stating the time ("Delivery: 4–10 business days")
            timed = _own_section(chosen, shipping_units, code, lambda text: bool(_DURATION.search(text)))
            chosen += [u for u in timed[:1] if _fits(chosen, u)]
        if _FREE.search(intent.lower) and not any(_FREE.search(u.text) for u in chosen):
            # "whats the free shipping threshold to melbourne": the line saying when delivery is free ("… over $150
            # to Zones 1, 2 and 3"), naming no other place than the destination
            zones = _zones_of(chosen)
            free = [
                u
                for u in shipping_units
                if u not in chosen
                and _FREE.search(u.text)
                and _MONEY.search(u.text)
                and (not names_a_place(u.text) or names_country(u.text, code))
                and not names_only_others(u.text, code)
                # "… to EU Zone 1" is no line for a destination in Zone 2
                and not (zones and _zones(u.text) and not zones & _zones(u.text))
            ]
            chosen += [u for u in free[:1] if _fits(chosen, u)]
        # the product's own rule limiting it to other countries, naming its kind ("Gooseneck kettle – UK addresses only",
        # not "Darkroom chemistry – …" for a darkroom tank): the destination's rate is moot
        if targets and (barring := [u for u in own if bars(with_lead(u), code) and goods_head(u.text) & kinds]):
            chosen = [u for u in chosen if u in own] or barring[:1]
        # best first: the sentence naming the buyer's country with the asked figure leads
        answer = _Answer()
        if town is not None and levels[id(chosen[0])] < 3:  # a line naming the town says it itself
            answer.meta(_town_phrase(town, [levels[id(u)] for u in chosen], [u.text for u in chosen]))
        led: list[_Unit] = []
        for u in _leaning(chosen, shipping_units):
            # a list entry is quoted after its lead-in, which says what the list is ("These items cannot ship to …:",
            # "we cannot deliver knives to:" before "The Channel Islands (Jersey, …)"), once
            fresh = u.lead is not None and u.lead not in chosen and u.lead not in led
            _quote(answer, u, lead=f"{u.lead.lead_in()} " if fresh and u.lead is not None else "")
            led += [u.lead] if u.lead is not None else []
        for d in targets:
            answer.use(d.id)
        return answer
    # The country appears nowhere in the evidence: is it absent from the whole shipping policy too?
    policy_text = "\n".join(
        [
            *(
                d.body + "\n" + "\n".join(s.text for s in d.sections)
                for d in task.documents.values()
                if d.link_type == "shipping_policy"
            ),
            *(u.text for u in shipping_units),
        ]
    )
    if not policy_text.strip():
        return None
    if code in country_codes_in(policy_text) or any(code in m for m in group_members(policy_text).values()):
        return None  # named in a part of the policy the evidence does not hold: general selection answers
    if not country_codes_in(policy_text) and not group_members(policy_text):
        return None  # the policy names no places at all, so "not listed" would mean nothing
    home = home_country(task.shop_currency, task.shop_country)
    if (town is not None and town.country == home) or (region is not None and region[0] == home):
        # a home town or state the policy does not name ("the 48 contiguous states" for Denver or Texas): not "not
        # listed"
        return None
    answer = _Answer()
    if town is not None:
        answer.meta(_town_phrase(town, [], []))
    answer.meta(phrase("not_listed_country", country=country_name(code)))
    answer.not_recorded = True
    candidates = [u for u in shipping_units if not u.text.rstrip().endswith(":")]
    if candidates:
        sims = work.similarity([u.text for u in candidates], probe=DESTINATIONS_PROBE)
        for u, s in zip(candidates, sims, strict=True):
            # the sentence naming the most destinations says best where the shop does ship
            places = len(country_codes_in(u.text)) + 2 * len(group_members(u.text))
            u.score = float(s) + 0.03 * places
        candidates.sort(key=lambda u: -u.score)
        best = candidates[0]
        _quote(answer, best)
        for u in candidates[1:3]:
            if u.score >= best.score - 0.05 and len(best.text) + len(u.text) <= NOT_LISTED_CHARS:
                _quote(answer, u)
                break
    for d in task.documents.values():
        if d.link_type == "shipping_policy":
            answer.use(d.id)
    return answer


def _own_section(chosen: list[_Unit], units: list[_Unit], code: str, states: Callable[[str], bool]) -> list[_Unit]:
    """The lines of the first chosen line's own section (passage and heading), not chosen, that state what is asked
    (`states`: a cost, a time) and name no place but others than `code`."""
    here = (chosen[0].evidence.passage.id, chosen[0].context)
    return [
        u
        for u in units
        if u not in chosen
        and (u.evidence.passage.id, u.context) == here
        and states(u.text)
        and not names_only_others(u.text, code)
    ]


def _zone_rates(chosen: list[_Unit], shipping_units: list[_Unit]) -> list[_Unit]:
    """The rate rows of the zones the chosen lines define ("Metro covers metropolitan Sydney, …" defines Metro): lines
    led by the zone's name, or by "Zone: <name>", in evidence order ("Zone: Remote, Bulky delivery: Quoted on
    request" is the answer for a sofa, though it names no amount)."""
    names = [m.group(1).strip() for u in chosen if (m := _ZONE_DEFINED.match(u.text))]
    if not names:
        return _heading_zone_rates(chosen, shipping_units)
    led = re.compile(
        rf"^\s*(?:(?:zone|region|area|band|destination)\s*:\s*)?(?:{'|'.join(re.escape(n) for n in names)})\b",
        re.IGNORECASE,
    )
    return [u for u in shipping_units if u not in chosen and led.match(u.text)]


_TABLE_ROW = re.compile(r"^\s*[^,:]{1,24}:\s")
# a table row's first field, after its label: "Zone: Scottish Highlands & Islands, Service: Standard, …"
_FIRST_FIELD = re.compile(r"^\s*(?:[^,:]{1,24}:\s*)?(?P<field>[^:]+?)(?:,\s*[^,:]{1,30}:|$)")


def _heading_zone_rates(chosen: list[_Unit], shipping_units: list[_Unit]) -> list[_Unit]:
    """The rate rows of the zone a chosen line's heading names, when the line itself is only a list of places ("AB31–
    AB38, …, IV, KW and ZE." under "Which postcodes count as Highlands & Islands?"): rows stating a price whose
    first field uses mostly words of that heading ("Zone: Scottish Highlands & Islands, …, Cost: £14.95")."""
    heading = frozenset().union(*(content_stems(u.context) for u in chosen if u.context and not _MONEY.search(u.text)))
    if not heading:
        return []
    rows = []
    for u in shipping_units:
        m = _FIRST_FIELD.match(u.text)
        field = content_stems(m.group("field")) if m else frozenset()
        if u not in chosen and _MONEY.search(u.text) and field and 2 * len(field & heading) >= len(field):
            rows.append(u)
    return rows


def _town(work: _Work, shipping_units: list[_Unit]) -> Town | None:
    """The town a shipping question names, read as the one in the buyer's country or a country the shop's
    shipping sentences name, where several places share the name."""
    named = list(dict.fromkeys(c for u in shipping_units for c in country_codes_in(u.text)))
    return town_named(work.intent.text, buyer_then_home(work.task), named)


def buyer_then_home(task: Task) -> list[str]:
    """The countries a place a question names is read in first: the buyer's, then the shop's home country."""
    home = home_country(task.shop_currency, task.shop_country)
    return [c for c in dict.fromkeys([(task.country or "").upper(), home or ""]) if c]


def _town_level(town: Town, text: str) -> int:
    """How closely a shipping line names the town's place: 3 the town itself, 2 its postcode area or a city near it
    ("Sydney metro" for Parramatta), 1 its state, province or nation (its name, adjective or code: "English
    postcodes", "Regional NSW"), 0 none of them; -1 for a line about somewhere else: one listing only other postcode
    areas, or naming only other regions of the country and not the country as a whole ("Zone 4: South Australia and
    the rest of Queensland" for Geelong)."""
    if names_town(town.name, text):
        return 0 if named_as_origin(town.name, text) else 3  # ("ships from our workshop in Dublin": no destination)
    if near_named_city(town, text) is not None:
        return 2  # "Zone 1: Sydney metro, …" for Parramatta: the area of a city near the town
    listed = postcode_areas_listed(text)
    if listed and town.postcode_areas:
        return 2 if listed & set(town.postcode_areas) else -1
    named, rest = regions_named(text, town.country)
    if town.region in named:
        # "South-East Queensland (Brisbane, Ipswich, …)" names a part of Queensland that may leave Townsville out:
        # a line about the region as a whole ("the rest of Queensland") comes before it
        # (a town's name inside a region's, "Prince Edward" of "Prince Edward Island", is no town: read in the rest)
        return 0 if towns_in(rest, town.country) - {fold_name(town.name)} else 1
    if named and town.region and town.country not in country_codes_in(rest):
        # (not a line limiting where things go to a group of regions leaving the town's out: "Freight items only ship
        # within the lower 48 states" bars Honolulu)
        return 0 if _ONLY.search(text) and names_region_group(text, town.country) else -1
    return 0


def _town_phrase(town: Town, levels: list[int], texts: list[str]) -> str:
    """Where the town is, as the lines quoted next (`texts`, of `_town_level` `levels`) name it: "Brighton is in the
    BN postcode area.", "Parramatta is near Sydney.", "Hobart is in Tasmania." (also before "… within NSW and the ACT
    only"), "Toronto is in Canada."."""
    if 2 in levels and town.postcode_areas:
        return phrase("town_in", town=town.name, place=f"the {'/'.join(town.postcode_areas)} postcode area")
    for text in texts:
        # (a line naming the town itself is no line about a city near it: "…, Guelph, Kitchener-Waterloo-Cambridge")
        city = None if names_town(town.name, text) else near_named_city(town, text)
        if city is not None:
            written = re.search(rf"(?:\bthe )?{re.escape(city)}", text, re.IGNORECASE)  # "the Blue Mountains"
            return phrase("town_near", town=town.name, city=written.group() if written else city.title())
    if town.region and {1, -1} & set(levels):
        return phrase("town_in", town=town.name, place=region_display(town.region))
    return phrase("town_in", town=town.name, place=country_name(town.country))


def _place_phrase(text: str, code: str) -> str | None:
    """The place as the question wrote it ("northern ireland"), when that is more specific than the country."""
    low = text.lower()
    plain_name = country_name(code).lower().removeprefix("the ")
    for alias in sorted(country_aliases(code), key=len, reverse=True):
        if alias != plain_name and re.search(rf"(?<![\w-]){re.escape(alias)}(?![\w-])", low):
            return alias
    return None


def _names_place(text: str, place: str, listing: Callable[[str], bool] | None) -> bool:
    """`text` names `place` (lower-case), or lists its state's code among its neighbours' (`listing`)."""
    return place in text.lower() or (listing is not None and listing(text))


def _region_by_code(text: str, task: Task) -> tuple[str, str] | None:
    """(country code, name) of a state or province a question names by its postal code in capitals after "to", "in"
    or "from" ("do you ship to BC?", "I live in NSW"), read in the buyer's country, else the shop's home country (codes
    repeat across countries); never in a question written all in capitals ("SHIP TO ME?" names no Maine)."""
    if text == text.upper():
        return None
    for country in buyer_then_home(task):
        for name, code in region_codes(country).items():
            if code.isalpha() and re.search(rf"\b(?i:to|in|into|from)\s+(?:(?i:the)\s+)?{code}(?![\w-])", text):
                return country, name
    return None


def _region_name(country: str, region: str) -> str | None:
    """The name of `address_region` ("AK" or "Alaska") within `country`."""
    import pycountry

    sub = pycountry.subdivisions.get(code=f"{country}-{region.strip().upper()}")
    if sub is not None:
        return str(sub.name)
    hit = subdivisions().get(region.strip().lower())
    return hit[1] if hit is not None and hit[0] == country else None


def _leaning(chosen: list[_Unit], units: list[_Unit]) -> list[_Unit]:
    """`chosen`, each sentence that leans on the one before ("This covers postcodes IV, HS, …") after that one ("We
    can deliver to the Highlands and Islands, but it takes 2–3 working days …")."""
    out: list[_Unit] = []
    for u in chosen:
        siblings = [v for v in units if v.evidence.passage.id == u.evidence.passage.id]
        at = siblings.index(u)
        # ... where it states no delivery rule itself ("This is an oversize item: DPD delivery … only" does)
        leans = _ANAPHOR_START.match(u.text) and not _SHIP_WORDS.search(u.text)
        if leans and at > 0 and siblings[at - 1] not in chosen + out:
            out.append(siblings[at - 1])
        out.append(u)
    return out


OTHER_PLACE_PENALTY = 0.2


def _is_shipping_unit(unit: _Unit) -> bool:
    if unit.evidence.passage.link_type == "shipping_policy":
        return True
    if unit.header:
        return False  # a product's naming line ("… USB-C Power Delivery Wall Charger") is no delivery rule
    return bool(_SHIP_WORDS.search(unit.text) or _SHIP_WORDS.search(unit.evidence.passage.title))
