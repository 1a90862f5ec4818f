"""What a delivery line says of a destination: whether it names the country asked, lists other members of a group
holding it, limits delivery to other countries, or allows it elsewhere (for `shipping`)."""

from __future__ import annotations

import re

from ask_engine.answering.sentences import _NEGATION
from ask_engine.answering.work import _Unit
from ask_engine.countries import region_named, without_excluded
from ask_engine.language import content_stem_sequence, content_stems, country_codes_in, group_members, text_cue

_ONLY = text_cue("limiting", re.I)  # "knives only to UK addresses" limits where, "not outside the UK" bars


def names_country(text: str, code: str) -> bool:
    """`text` names the country `code` other than among the places a rule is said not to hold ("outside …")."""
    if code not in country_codes_in(text):
        return False
    rest = without_excluded(text)
    return rest == text or code in country_codes_in(rest)


def goods_head(text: str) -> frozenset[str]:
    """The last word of the goods a rule's line names before its dash or colon ("Darkroom chemistry – …": chemistry)."""
    named = re.match(r"\s*([^–—:]{2,60}?)\s+[–—-]\s|\s*([^–—:]{2,60}?):\s", text)
    words = content_stem_sequence(next((g for g in named.groups() if g), "")) if named else ()
    return frozenset(words[-1:])


def bars(text: str, code: str) -> bool:
    """`text` limits delivery to countries, none of them `code` ("… UK addresses only"; "We can't send batteries to
    NZ" bars only NZ)."""
    return bool(_ONLY.search(text)) and names_others_only(text, code)


def names_others_only(text: str, code: str) -> bool:
    """`text` names countries, none of them `code` nor a group holding it."""
    codes = country_codes_in(text)
    return bool(codes) and code not in codes and not any(code in m for m in group_members(text).values())


def lists_other_members(text: str, code: str) -> bool:
    """A line naming a group but listing which of its countries it covers, not `code` ("EU Zone 1: France, Germany,
    Spain, …", "Rest of Europe: Norway, Switzerland, Iceland"): it is those countries' line, not the whole group's;
    not where it names another group holding `code` whole ("Europe: EU countries, Norway, Switzerland, Iceland")."""
    listed = set(country_codes_in(text))
    holding = [m for m in group_members(text).values() if code in m]
    return code not in listed and bool(holding) and all(len(listed & m) >= 2 for m in holding)


def names_a_place(text: str) -> bool:
    """A product's own sentence is a delivery rule only where it names where ("… only ships to addresses in the
    Republic of Ireland"), not for a word such as "Power Delivery" in "any USB-C Power Delivery charger"."""
    return bool(country_codes_in(text) or group_members(text) or region_named(text))


def names_only_others(text: str, code: str) -> bool:
    """`text` allows delivery (`elsewhere`) to countries, none of them `code` nor a group holding it: a line that
    bars or limits ("can't be shipped outside the UK", "ships to Canada and the US only") holds for every place it
    leaves out."""
    return elsewhere(text) and names_others_only(text, code)


def elsewhere(text: str) -> bool:
    """A line allowing delivery to other places than the one asked ("boards can still be delivered to Northern
    Ireland and the Isle of Man for £5.95", asked about Jersey) is their rule, not the destination's; a line that bars
    or limits ("knives only to UK addresses", "not outside the UK") holds for every place it leaves out."""
    return names_a_place(text) and not _NEGATION.search(text) and not _ONLY.search(text)


def bars_only_others(text: str, code: str) -> bool:
    """`text` bars delivery to countries, none of them `code` ("We can't send lithium batteries … to NZ", asked about
    Alice Springs): no rule for the destination; not "… can't send them outside South Africa", which bars all but it."""
    if without_excluded(text) != text or _ONLY.search(text) or not _NEGATION.search(text):
        return False
    return names_others_only(text, code)


def place_section(pool: list[_Unit], code: str, asked: frozenset[str]) -> list[_Unit]:
    """`pool` with the best line's section first, in its own order, where the section's heading is the destination's
    name as the question (its stems `asked`) says it, and no more ("## Australia" over "Tracked airmail, 4–8 working
    days. $15 flat rate, …. Australian GST is …"): the section is the destination's answer, and its opening lines say
    how it is sent; its last may only add a tax. (Not for a place within it: "the Scottish Highlands" is no "United
    Kingdom", whose opening rows are the mainland's.)"""
    head = pool[0]
    heading = content_stems(head.context)
    if not names_country(head.context, code) or len(heading) > 2 or not heading <= asked:
        return pool
    here = [u for u in pool if u.evidence.passage.id == head.evidence.passage.id and u.context == head.context]
    return sorted(here, key=lambda u: u.key) + [u for u in pool if u not in here]


def with_lead(unit: _Unit) -> str:
    """A list entry's text after its lead-in ("… cannot ship to Alaska …: RestWell … Dog Bed"), after its line's first."""
    text = unit.text if unit.line_first is None else f"{unit.line_first.text} {unit.text}"
    return text if unit.lead is None else f"{unit.lead.text} {text}"


def placed(unit: _Unit) -> str:
    """A line after its heading, which may say whose it is ("Do you ship bottled ink overseas?" over "Only to
    Australia.")."""
    return f"{unit.context} {unit.text}"
