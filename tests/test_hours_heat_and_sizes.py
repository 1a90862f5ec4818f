"""Readings six more blind probe shops (fly fishing, children's shoes, Indian spices, motorcycle gear; wedding
stationery and home brewing kept apart) found wanting. "what time are you open on sunday" found nothing, the line
"Sunday: 11:00 am – 4:00 pm" sitting under "Store hours" and never saying "open"; "how many days do i have to return
shoes that don't fit" found nothing at a shoe shop, the return window's line not saying "shoes"; "can I collect my
order at your shop instead of delivery" found nothing, the Click & Collect line ranking fourth; "what's the phone
number for the shop" quoted "The shop phone is the quickest way to reach us"; "one of the jars arrived smashed"
found nothing beside a section headed "Damaged, leaking or wrong items"; "is it spicy?" was not recorded beside a
"Heat level"; "do you sell used helmets" quoted the fitting FAQ beside "we will never sell a used helmet"; "I paid
with a gift card and want to return the gloves" was read as returning the gift card; "i'm a US 10, what EU size do
I need" listed the sizes beside a size guide converting them; and a Storefront API export's `null` metafield (one
a product has not set) stopped the index. A running shop of another trade, indexed with the real embedding model
and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ask_engine.engine import Engine
from ask_engine.language import ARRIVED_DAMAGED_RE, folded_phrases, parse_query
from ask_engine.resolve import _PAID_WITH
from ask_engine.retrieve import policy_intents
from ask_engine.sources import load_documents
from tests.shop_helpers import assert_says, inline_engine, options_product, single_variant_product

URL = "https://glenrock.example/products/"
OWN = "Glenrock Running"

_single = partial(single_variant_product, vendor=OWN)
_UK_SIZES = ["UK 7", "UK 8", "UK 9", "UK 10", "UK 11"]


def _shoe(pid: int, title: str, handle: str, body: str, kind: str, price: str) -> dict[str, Any]:
    return options_product(
        pid, title, handle, body, kind, {"Size": _UK_SIZES}, {(s,): (price, True) for s in _UK_SIZES}, vendor=OWN
    )


PRODUCTS: list[dict[str, Any]] = [
    _shoe(1, "Glenrock Fell Shoe", "fell-shoe", "<p>Deep 6 mm lugs for wet grass and bog.</p>", "Fell Shoes", "120.00"),
    _shoe(2, "Glenrock Road Shoe", "road-shoe", "<p>A cushioned daily trainer.</p>", "Road Shoes", "110.00"),
    _shoe(
        3, "Glenrock Recovery Shoe", "recovery-shoe", "<p>A soft slip-on for after the race.</p>", "Sandals", "45.00"
    ),
    _single(4, "Merino Trail Sock", "trail-sock", "<p>Cushioned merino for long days.</p>", "Socks", "16.00"),
    _single(
        5,
        "Hot Chilli Energy Chews",
        "chilli-chews",
        "<p>Fast carbs with a kick, for cold hill days.</p>",
        "Nutrition",
        "2.50",
        heat_level="3 out of 5 (medium-hot)",
    ),
    _single(
        6,
        "Ginger Energy Chews",
        "ginger-chews",
        "<p>Gentle on the stomach, with real ginger.</p>",
        "Nutrition",
        "2.50",
        heat_level="1 out of 5 (mild)",
    ),
    _single(
        7, "Glenrock Gift Card", "gift-card", "<p>Sent by email straight after payment.</p>", "Gift Cards", "25.00"
    ),
]
REFUNDS = """---
type: refund_policy
title: Returns & Refunds
---
# Returns & Refunds
## Our 28-day returns
We give you 28 days from delivery to return full-price items. Sale items can be returned within 14 days only.
## Condition
Shoes must be unworn: please try them on indoors, on a carpet. Shoes with marks on the sole can only be refunded at reduced value.
## Damaged, leaking or wrong items
If a gel flask breaks or a pouch splits in transit, email us within 48 hours of delivery with a photo and we'll send a replacement or a full refund.
## Exchanges
We exchange once per order for free: tell us the size you want in the returns form and we'll send it as soon as your return arrives.
## Right to cancel
Under the Consumer Contracts Regulations you may cancel your order within 14 days of delivery, for any reason.
## Refunds
We refund within 5 working days of receiving your return. Orders paid with a gift card are refunded as store credit.
## Final sale items
- Gift cards
- Opened nutrition products
"""
SHIPPING = """---
type: shipping_policy
title: Shipping & Delivery
---
# Shipping & Delivery
We pack every order ourselves in our shop in Fort William and ship with Royal Mail.
## Parcel lockers
Yes, you can ship to an InPost locker: enter the locker's code in the address field.
If you give us your phone number, InPost will text you when it arrives.
## UK delivery
Royal Mail Tracked 48: £3.95, free over £50.
Royal Mail Tracked 24: £5.95, 1–2 working days.
Orders placed by 1 pm on a working day go out the same day.
## Highlands and islands
Same prices; please allow an extra 1–2 days.
## Express delivery
Order by 1 pm for next working day delivery, £7.95.
## International
We ship to Ireland and the EU for £12.95, 4–7 working days. Any import duties are paid by the buyer.
## Click & Collect in Fort William
Choose "Pick up in store" at checkout - it's free. We'll email you when your order is ready, usually within 2 hours.
"""
CONTACT = """---
type: contact
title: Contact Us
---
# Contact Us

Questions about sizing or an order? The shop phone is the quickest way to reach us during opening hours.

## Visit the shop

Glenrock Running
12 High Street
Fort William PH33 6AD

## Store hours

Monday: Closed
Tuesday–Friday: 9:30 am – 6:00 pm
Saturday: 9:00 am – 5:00 pm
Sunday: 11:00 am – 3:00 pm

We're closed on Christmas Day, New Year's Day and Easter Sunday.

## Phone and email

Phone: 01397 700 123
Email: hello@glenrock.example

Phone lines are open Tuesday–Saturday, 9:30 am – 5:00 pm. We answer emails within one working day.

## Running club

Our club run leaves the shop every Thursday at 6:30 pm, and a long run every Sunday at 8:00 am: all paces welcome, and it's free.
"""
SIZES = """---
type: size_guide
title: Size Guide
---
# Size Guide
## Shoes

| UK | EU | US men's | Foot length (cm) |
|---|---|---|---|
| 7 | 41 | 8 | 25.8 |
| 8 | 42 | 9 | 26.7 |
| 9 | 43 | 10 | 27.5 |
| 10 | 44.5 | 11 | 28.3 |
| 11 | 46 | 12 | 29.2 |
"""
FAQ = """url: https://glenrock.example/pages/faq
title: FAQ
entries:
  - question: Do you do shoe fittings?
    answer: Yes, and they're free. Walk in Tuesday to Friday, or book a slot for Saturdays. It takes about 20 minutes and you try a few shoes on the treadmill.
  - question: Do you buy used gear or take trade-ins?
    answer: No. We don't buy, sell or trade used gear, and we will never sell used shoes. Old shoes can go in the recycling bin by the door.
"""
SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN}"\nurl = "https://glenrock.example"\ncurrency = "GBP"\ncountry = "GB"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/refunds.md": REFUNDS,
    "policies/shipping.md": SHIPPING,
    "pages/contact.md": CONTACT,
    "pages/sizes.md": SIZES,
    "faq.yaml": FAQ,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("glenrock") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_a_storefront_exports_unset_metafields_are_skipped(tmp_path: Path) -> None:
    # the Storefront API's metafields(identifiers: …) lists null for each identifier a product has not set
    node = {
        "id": "gid://shopify/Product/1",
        "title": "Chai Masala",
        "handle": "chai-masala",
        "description": "Ginger and cardamom.",
        "metafields": [None, {"namespace": "specs", "key": "heat_level", "value": "1 out of 5", "type": "single_line_text_field"}],
    }  # fmt: skip
    (tmp_path / "shop.toml").write_text('[shop]\nname = "S"\nurl = "https://s.example"\n', encoding="utf-8")
    (tmp_path / "products.json").write_text(json.dumps({"data": {"products": {"edges": [{"node": node}]}}}))
    doc = next(d for d in load_documents(tmp_path)[1] if d.kind == "product")
    assert [f.value for f in doc.facts if f.key == "heat_level"] == ["1 out of 5"]


def test_a_shops_hours_are_its_opening_hours() -> None:
    assert "opening hours" in folded_phrases("Contact Us — Store hours")
    assert "opening hours" in folded_phrases("what are your business hours?")
    assert "opening" not in folded_phrases("delivery takes 48 hours")


def test_a_section_on_goods_arriving_broken_is_the_rule_for_them() -> None:
    assert ARRIVED_DAMAGED_RE.search("Returns & Refunds — Damaged, leaking or wrong items")
    assert ARRIVED_DAMAGED_RE.search(
        "Occasionally a jar breaks or a pouch splits in transit, or we pick the wrong thing"
    )
    assert not ARRIVED_DAMAGED_RE.search("Returns & Refunds — Faulty items")  # a fault that develops is another rule


def test_spiciness_is_an_attribute() -> None:
    assert parse_query("is it spicy?").concepts == ("heat",)
    assert "heat" in parse_query("which is spicier, this or the ginger?").concepts
    assert "heat" not in parse_query("is the jacket too hot for summer?").concepts


def test_what_the_asker_paid_with_is_no_product_asked_about() -> None:
    assert _PAID_WITH.search("i paid with a gift card and want to return the gloves")
    assert _PAID_WITH.search("we bought it using my voucher")
    assert not _PAID_WITH.search("can i return a gift card?")


def test_sending_something_back_is_a_return() -> None:
    assert "refund_policy" in policy_intents("who pays postage if I send something back?")
    assert "refund_policy" in policy_intents("can I post the boots back to you")
    assert "refund_policy" not in policy_intents("do you send samples?")


# ------------------------------------------------------------------------------------------ through the engine

# (question, product handle, what the answer must say, what it must not)
CASES = [
    # a line of hours under "Store hours" says the shop is open, on the day asked (this shop's line answered so before
    # too, its question reading close enough; a probe shop's did not: a guard)
    ("what time are you open on sunday", "", ["11:00 am – 3:00 pm"], ["couldn't find"]),
    # a word the whole catalogue uses is no topic a returns line must say
    ("how many days do i have to return shoes that don't fit", "", ["28 days from delivery"], ["couldn't find"]),
    # the question's own word said by a sentence just below the best three, closer in meaning
    ("can I collect my order at your shop instead of delivery", "", ["Pick up in store"], ["couldn't find"]),
    # a phone number asked is answered by a line stating one
    ("what's the phone number for the shop", "", ["01397 700 123"], []),
    # ... and a line of hours says whether it is open that day (a guard too)
    ("r u open on mondays", "", ["Monday: Closed"], ["couldn't find"]),
    # a section headed by damaged goods is the rule for goods that arrive broken (found here before too, this shop's
    # retrieval bringing it; a probe shop's did not: a guard, its reading a unit seam above)
    (
        "one of the gel flasks arrived smashed and sticky stuff all over the box what do i do",
        "",
        ["within 48 hours"],
        ["couldn't find"],
    ),
    # spiciness is recorded as a heat level
    ("which is spicier, this or the ginger chews?", "chilli-chews", ["3 out of 5", "1 out of 5"], ["not recorded"]),
    # a sentence that plainly answers is not passed over for an FAQ question reading closer
    ("do you sell used shoes", "", ["never sell used shoes"], ["treadmill"]),
    # what the asker paid with is not what is returned
    ("I paid with a gift card and want to return the socks. Do I get cash back?", "", ["store credit"], ["Final sale"]),
    # a size in one system read in another through the size guide's row
    ("i'm a US 10, what UK size do I need", "fell-shoe", ["UK: 9", "EU: 43"], ["UK 7, UK 8"]),
    ("I'm an EU 44.5, which UK size should I order?", "road-shoe", ["UK: 10"], ["UK 7, UK 8"]),
    # ... but a size named in no other system asks for the variant (a guard)
    ("is the UK 9 in stock?", "fell-shoe", ["in stock"], ["EU: 43"]),
]


@pytest.mark.parametrize(("question", "handle", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_hours_heat_and_sizes_through_the_engine(
    engine: Engine, question: str, handle: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + handle] if handle else [], wanted, unwanted)
