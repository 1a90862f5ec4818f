"""Destinations and mishaps, as four blind probe shops (Japanese knives, supplements, toys, art supplies) found them:
"Can I get a santoku sent to my sister in Germany?" found nothing, because retrieval did not bring the shipping
policy's section naming "EU countries" (only a question with a shipping word did); "I live in Jersey - can you send me
one?" was no shipping question ("send me" names no place), its second part "how much would postage be?" forgot Jersey,
and a line allowing delivery to other places ("… Northern Ireland and the Isle of Man for £5.95") was quoted as the
product's own rule; "This covers postcodes IV, HS, …" came without the sentence it leans on; "the U.S. Virgin Islands"
and "P.O. Boxes" ended sentences; "Nov 20" was reported as never mentioned beside "November 1"; "a piece torn" and "the
almonds showed" were read as things the shop does not name, and a parcel that "showed up with the lid cracked" was no
question about the shop's processes; and "any nakiri in stock at the moment?" found nothing because the best
sentences did not say "moment". Also: "is it on offer?" was not "on sale", "can I get the 1kg right now?" no stock
question, a table whose bold first row is its header was quoted as "Size | Hair length", "Atlantic Canada" named no
province, "… and are they included?" was said to be unrecorded beside "(included)", and a policy list whose markers
the export dropped lost its lead-in after the first item. A small tea and teaware shop
of another trade, indexed with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.answering.extractive import _stated_elsewhere
from ask_engine.answering.query import _GENERIC_QUERY_STEMS
from ask_engine.answering.rules import _VAGUE_STEMS
from ask_engine.answering.work import _Answer
from ask_engine.engine import Engine
from ask_engine.guard.sentences import split_sentences
from ask_engine.language import content_stems, parse_query
from ask_engine.retrieve import with_rate_passages
from ask_engine.sources.markup import html_to_text
from ask_engine.towns import regions_named
from tests.shop_helpers import ask_plain, inline_engine, single_variant_product


def _sizes(product: dict[str, Any], sizes: list[tuple[str, str, bool]]) -> dict[str, Any]:
    """The product sold in `sizes` (value, price, available)."""
    pid = product["id"]
    product["options"] = [{"name": "Size", "position": 1, "values": [v for v, _, _ in sizes]}]
    product["variants"] = [
        {"id": pid * 10 + i, "title": v, "option1": v, "price": p, "available": a}
        for i, (v, p, a) in enumerate(sizes, 1)
    ]
    return product


PRODUCTS = [
    single_variant_product(
        1,
        "Hokusai Glass Teapot 600ml",
        "hokusai-glass-teapot",
        "<p>Borosilicate glass teapot with a stainless steel infuser. Holds 600ml, about three cups.</p>",
        "Teapots",
        "34.00",
        vendor="Leaf & Kettle",
    ),
    single_variant_product(
        2,
        "Darjeeling First Flush 100g",
        "darjeeling-first-flush",
        "<p>A bright, floral spring Darjeeling from a single estate. Brew at 85°C for 3 minutes.</p>",
        "Loose Leaf Tea",
        "12.50",
        vendor="Leaf & Kettle",
    ),
    _sizes(
        single_variant_product(
            3,
            "Yorkshire Breakfast Blend",
            "yorkshire-breakfast-blend",
            "<p>Our strong everyday blend of Assam and Kenyan teas. Takes milk well.</p>",
            "Loose Leaf Tea",
            "8.95",
            vendor="Leaf & Kettle",
        ),
        [("250g", "8.95", True), ("1kg", "29.00", False)],
    ),
    single_variant_product(
        4,
        "Cast Iron Tetsubin Kettle",
        "cast-iron-tetsubin",
        "<p>Hand-cast iron kettle from Iwate with an enamel-free interior.</p>"
        # a table pasted without <thead> or <th>: its bold first row is its header
        "<table><tbody><tr><td><strong>Model</strong></td><td><strong>Capacity</strong></td>"
        "<td><strong>Weight</strong></td></tr><tr><td>Arare</td><td>0.8 litres</td><td>1.6 kg</td></tr>"
        "<tr><td>Hira</td><td>1.2 litres</td><td>2.1 kg</td></tr></tbody></table>",
        "Kettles",
        "89.00",
        vendor="Leaf & Kettle",
    ),
]
PRODUCTS[1]["variants"][0]["compare_at_price"] = "15.00"

SHIPPING = """---
type: shipping_policy
title: Delivery
---
# Delivery

## UK delivery {#uk}

Tea and teaware go by Royal Mail Tracked 48 for £3.95, free on orders over £40.

## Where we can't send glass teapots {#glass}

Glass teapots are fragile, so we cannot deliver glass teapots to:

- Northern Ireland
- The Isle of Man
- The Channel Islands (Jersey, Guernsey, Alderney, Sark)
- Anywhere outside the United Kingdom

Everything else we sell (tea, kettles, cups) can still be delivered to Northern Ireland and the Isle of Man by Royal \
Mail Tracked 48 for £5.95. Channel Islands deliveries cost £8.95 and local GST may apply.

## Scottish Highlands and Islands {#highlands}

We deliver to the Highlands and Islands in 2–3 working days for a flat £9.95. This covers postcodes IV, HS, KW, ZE \
and PH17–PH26.

## International delivery {#international}

We send tea and kettles to the Republic of Ireland and EU countries by Royal Mail International Tracked for £12.50, \
usually 5–8 working days. Orders to the U.S. Virgin Islands and P.O. Boxes abroad are not possible at the moment.
"""

REFUNDS = """---
type: refund_policy
title: Returns
---
# Returns

## Returns window {#window}

You can return unopened tea and unused teaware within 30 days of delivery for a full refund.

## Final sale {#final-sale}

These can't be returned or refunded, opened or not:

- Gift cards
- Tea weighed out to order at our shop counter (sold in paper bags)

## Christmas returns {#christmas}

Gifts bought between November 1 and December 24 can be returned until January 15.

## How to return {#how}

**In the shop:** bring the item and your receipt; in-store returns are free.

**By post:** email hello@leafandkettle.example with your order number. We'll email you a prepaid label; £3.50 is \
deducted from your refund for the label.

## Damaged in transit {#damaged}

If your order arrives broken or leaking, email us within 7 days of delivery with a photo and we'll send a replacement \
at no cost.
"""

SHOP = {
    "shop.toml": '[shop]\nname = "Leaf & Kettle"\nurl = "https://leafandkettle.example"\ncurrency = "GBP"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/delivery.md": SHIPPING,
    "policies/returns.md": REFUNDS,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("leaf") / "shop", SHOP, embedder)


def test_a_country_named_without_a_shipping_word_brings_its_section(engine: Engine) -> None:
    # retrieval may rank the policy's section for the destination anywhere: it joins the evidence however the
    # question is worded, by the country or a group naming it ("EU countries")
    query = "Can I get a tetsubin kettle sent to my sister in Germany?"
    added = with_rate_passages(engine.index, [], query)
    assert [ev.passage.id for ev in added] == ["policy:shipping_policy#3"], added
    assert "EU countries" in added[0].passage.text
    answer = ask_plain(engine, query)
    assert "EU countries by Royal Mail International Tracked for £12.50" in answer, answer


def test_send_me_names_a_destination_and_a_later_part_keeps_it(engine: Engine) -> None:
    assert parse_query("I live in Jersey - can you send me a tin of the breakfast blend?").shipping
    assert not parse_query("can you send me a receipt?").shipping
    answer = ask_plain(engine, "I live in Jersey - can you send me some breakfast blend? how much would postage be")
    assert "Channel Islands deliveries cost £8.95" in answer, answer
    # the line allowing delivery to Northern Ireland and the Isle of Man is their rule, not Jersey's
    assert "£5.95" not in answer, answer


def test_a_sentence_leaning_on_the_one_before_brings_it(engine: Engine) -> None:
    answer = ask_plain(engine, "I'm up in Inverness (IV2 postcode). Can you send me some darjeeling and how long?")
    assert "We deliver to the Highlands and Islands in 2–3 working days" in answer, answer


def test_dotted_abbreviations_end_no_sentence() -> None:
    text = "Orders to the U.S. Virgin Islands and P.O. Boxes abroad are not possible. We ship within the U.S. We also"
    assert split_sentences(text + " ship to Canada.") == [
        "Orders to the U.S. Virgin Islands and P.O. Boxes abroad are not possible.",
        "We ship within the U.S.",
        "We also ship to Canada.",
    ]


def test_a_month_named_short_is_the_month(engine: Engine) -> None:
    answer = ask_plain(engine, "Bought a gift on Nov 20 for Christmas, if it's unopened can I return it in January?")
    assert "until January 15" in answer, answer
    assert "couldn't find anything about" not in answer, answer


def test_what_befell_a_parcel_is_no_unnamed_thing_and_asks_the_policy(engine: Engine) -> None:
    assert parse_query("my teapot showed up with the lid cracked, what now?").policy
    assert parse_query("the tin arrived crushed and leaking").policy
    assert not parse_query("is the lid cracked glass?").policy
    answer = ask_plain(engine, "The tea I ordered came with a tin dented and a lid torn. Can I get a new one?")
    assert "couldn't find anything about" not in answer, answer


def test_a_vague_word_is_no_word_the_answer_must_say(engine: Engine) -> None:
    answer = ask_plain(engine, "any loose leaf tea in stock at the moment?")
    assert "in stock" in answer and "couldn't find" not in answer, answer


def test_a_table_whose_first_row_is_bold_has_that_row_for_its_header(engine: Engine) -> None:
    html = PRODUCTS[3]["body_html"]
    assert "Model: Hira, Capacity: 1.2 litres, Weight: 2.1 kg." in html_to_text(html)
    answer = ask_plain(engine, "how heavy is the hira one?", "cast-iron-tetsubin")
    assert "2.1 kg" in answer and "Model | Capacity" not in answer, answer


def test_on_offer_asks_whether_it_is_on_sale(engine: Engine) -> None:
    answer = ask_plain(engine, "is this on offer?", "darjeeling-first-flush")
    assert "reduced from £15.00" in answer, answer
    assert "not recorded" not in answer, answer


def test_can_i_get_it_right_now_asks_for_stock(engine: Engine) -> None:
    answer = ask_plain(engine, "can I get the 1kg right now?", "yorkshire-breakfast-blend")
    assert "sold out" in answer, answer


def test_a_regional_group_names_each_of_its_regions() -> None:
    named, _ = regions_named("Standard – Western Canada and Atlantic Canada: $9.95, 3–7 business days", "CA")
    assert {"Nova Scotia", "Alberta", "Prince Edward Island"} <= named and "Ontario" not in named
    assert "Maine" in regions_named("New England: 2–4 days", "US")[0]


def test_a_part_another_part_already_answers_is_not_called_unrecorded() -> None:
    # "what kind of batteries does it use, and are they included?" on the toy shop: the second part said the
    # product's inclusion was not recorded beside "3 x CR2032 coin cell (included)"
    stated, unrecorded, other = _Answer(), _Answer(not_recorded=True), _Answer(not_recorded=True)
    stated.claim("The batteries of the Night Light are 3 x CR2032 coin cell (included)", [1])
    unrecorded.meta("The shop has not recorded whether the Night Light is included.")
    other.meta("The shop has not recorded whether the Night Light is waterproof.")
    answers = [stated, unrecorded, other]
    words = content_stems("and are they included?") - _GENERIC_QUERY_STEMS - _VAGUE_STEMS
    assert _stated_elsewhere(unrecorded, answers, words)
    assert not _stated_elsewhere(other, answers, content_stems("is it waterproof?") - _GENERIC_QUERY_STEMS)
    assert not _stated_elsewhere(stated, answers, content_stems("what batteries?"))


def test_a_list_whose_markers_the_export_dropped_keeps_its_lead_in(engine: Engine) -> None:
    answer = ask_plain(engine, "if I buy tea weighed out at your counter and it's still sealed can I send it back?")
    assert "These can't be returned or refunded, opened or not: Tea weighed out to order" in answer, answer
