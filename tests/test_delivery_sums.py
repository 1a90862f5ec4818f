"""Delivery sums and who a product serves, as the four blind probe shops of `tests/test_shoppers_words.py` found
them: "how much is shipping to Germany and how long will it take?" quoted the line "for orders up to €150 the import
VAT is added at checkout" (a bound on the order, not a delivery price) without the EU rate; "shipping cost to the
US?" led with "Orders to Canada may be charged duties" from the "USA and Canada" section; "Do you ship to Australia?
What does it cost?" answered the second part from the US rates; "If I order a workbench and a roll cab together, how
much is delivery?" stopped at "… go by pallet carrier" before the sentence with the price; a product whose own page
says "UK mainland only" was answered with the Highlands' postcode list; "They cannot go to Yukon …" after the fuel
canisters' rule was left out for Whitehorse, and a second list item repeated the lead-in; "which hamper would feed
10 of us?" did not read "Serves: 8-10", which was stated as "the serves of … are"; and "how much more is it to get
polarised lenses?" was no price question. A small garden and outdoor living shop of another trade, indexed with the
real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.answering.destinations import names_only_others
from ask_engine.answering.shipping import _states_cost
from ask_engine.engine import Engine
from ask_engine.language import parse_query
from tests.shop_helpers import assert_says, inline_engine, one_option_product, single_variant_product

URL = "https://willowslate.example/products/"

PRODUCTS: list[dict[str, Any]] = [
    single_variant_product(
        1,
        "Oakridge Garden Bench",
        "oakridge-garden-bench",
        "<p>A three-seater bench in FSC oak.</p><p>Pallet delivery item - UK mainland only.</p>",
        "Garden Furniture",
        "349.00",
        vendor="Willow & Slate",
    ),
    single_variant_product(
        2,
        "Patio Heater Gas Bottle 5kg",
        "patio-gas-bottle",
        "<p>A refill of propane for our patio heaters.</p>",
        "Gas",
        "32.00",
        vendor="Willow & Slate",
    ),
    single_variant_product(
        3,
        "Long Table Picnic Hamper",
        "long-table-picnic-hamper",
        "<p>Our biggest wicker hamper, with plates, glasses and cutlery.</p>",
        "Hampers",
        "120.00",
        vendor="Willow & Slate",
        serves="8-10",
    ),
    one_option_product(
        4,
        "Shoreline Parasol",
        "shoreline-parasol",
        "<p>A 2.7 m tilting parasol.</p>",
        "Parasols",
        vendor="Willow & Slate",
        option="Canopy",
        prices={"Standard": "85.00", "UV50 coated": "105.00"},
    ),
    single_variant_product(
        5,
        "Slate Plant Labels",
        "slate-plant-labels",
        "<p>Ten slate labels with a chalk pen.</p>",
        "Garden Accessories",
        "9.00",
        vendor="Willow & Slate",
    ),
]

SHIPPING = """---
type: shipping_policy
title: Delivery
---
# Delivery

## UK delivery {#uk}

Parcels go by DPD for £4.95, free over £60, in 2-3 working days.

Highlands & Islands postcodes: HS, IV, KW and ZE take 4-6 working days.

## Pallet delivery {#pallet}

Benches, tables and sheds go by pallet carrier. Pallet delivery is UK mainland only (not the Highlands & Islands) \
and costs £39.00 per order, however many pallet items you order. Delivery takes 3-5 working days and the carrier \
will phone you to book a day, so please give us a mobile number. It's a kerbside delivery: the driver uses a \
tail-lift to bring the pallet to the kerb but can't carry it inside.

## USA and Canada {#north-america}

£19.95, 6-10 working days. Orders to Canada may be charged duties and taxes on delivery. For the USA, any import \
duties are your responsibility.

## Ireland and the European Union {#eu}

We ship to the EU with duties and VAT paid: for orders up to €150 the import VAT is added at checkout.

All EU countries: £12.95, 4-8 working days.

## International {#international}

We ship to the United Kingdom, all European Union countries, Switzerland, Norway, Australia, New Zealand and \
Japan. Tracked International costs £29.95 per order, with no free delivery threshold, and usually takes 7-21 \
working days (customs delays are outside our control).

International orders are shipped duties unpaid: import duties, VAT and the carrier's handling fees are collected \
by the carrier before delivery.

## Gas bottles {#gas}

Some of what we sell can only travel by road:

- Patio heater gas bottles ship by road within the UK mainland only. They cannot go to the Highlands & Islands or \
Northern Ireland.
- Charcoal and firelighters ship anywhere in the UK.
"""

SHOP = {
    "shop.toml": '[shop]\nname = "Willow & Slate"\nurl = "https://willowslate.example"\ncurrency = "GBP"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/shipping.md": SHIPPING,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("willow") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_an_amount_that_bounds_the_order_is_no_delivery_price() -> None:
    assert not _states_cost("for orders up to €150 the import VAT is added at checkout")
    assert not _states_cost("free on orders over £60")
    assert _states_cost("All EU countries: £12.95, 4-8 working days.")
    assert _states_cost("Parcels go by DPD for £4.95, free over £60")
    assert _states_cost("There is a delivery charge of £4.95 per order.")


def test_a_line_allowing_only_other_places_is_theirs() -> None:
    assert names_only_others("Orders to Canada may be charged duties and taxes on delivery.", "US")
    assert not names_only_others("For the USA, any import duties are your responsibility.", "US")
    # a bar or a limit holds for every place it leaves out
    assert not names_only_others("Gas bottles can't be shipped outside the United Kingdom.", "IE")
    assert not names_only_others("It ships to Canada and the US only.", "DE")


def test_how_much_more_asks_a_price() -> None:
    assert parse_query("how much more is it to get the coated canopy?").price
    assert not parse_query("how much more weight can it hold?").price


# ------------------------------------------------------------------------------------------ through the engine


# (question, product handle or "", what the answer must say, what it must not)
CASES = [
    # a price behind a bound on the order: the destination's rate line
    ("how much is shipping to germany and how long will it take", "", ["£12.95, 4-8 working days"], []),
    # another country's line in a shared section does not lead
    ("shipping cost to the US and will i get hit with customs fees?", "", ["£19.95"], ["Orders to Canada"]),
    # a cost asked after a destination is delivery there (also answered so before the change)
    ("Do you ship to Australia? What does it cost?", "", ["£29.95"], ["£19.95"]),
    # "how much?" finds the section's amount (also answered so before the change)
    ("If I order a bench and a table together, how much is delivery?", "", ["£39.00 per order"], []),
    # the product's own page limits where it goes
    ("Can you deliver the oakridge bench to Inverness?", "", ["UK mainland only"], []),
    # the bar after the product's rule names the town's place; the lead-in once
    (
        "Can you send a patio heater gas bottle to me in Belfast?",
        "",
        ["cannot go to the Highlands & Islands or Northern Ireland"],
        ["road: they"],
    ),
    # "serves" is a party size and reads as a verb
    ("would the long table hamper feed about 10 of us?", "", ["serves 8-10"], ["The serves"]),
    # "how much more?" gets the option's price
    ("how much more is it to get the UV50 coated canopy?", "shoreline-parasol", ["£105.00"], []),
]


@pytest.mark.parametrize(("question", "handle", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_delivery_sums_through_the_engine(
    engine: Engine, question: str, handle: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + handle] if handle else [], wanted, unwanted)
