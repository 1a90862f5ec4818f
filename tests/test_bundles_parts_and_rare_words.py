"""Readings six more blind probe shops (astronomy optics in Ireland, farm and poultry supplies in Australia, soap and
shaving in Canada, a home gym shop in the United States, party supplies in Britain; lighting in Singapore kept
apart) found wanting. "do you take klarna" found nothing where one FAQ answer names Klarna, the embedding model
knowing the name too little for any passage to clear the retrieval floor; "what time do you shut on saturday" and
"do yall do financing" did not find "Saturday: 9am - 1pm" and the instalments FAQ; "whats actually in the observer
bundle" and "which scents are in the cozy cabin box" said the contents were not recorded where the description writes
out what that version holds; "how long is the hand controller cable" answered with the telescope's focal length;
"is the 10kg in stock" of mealworms sold in 10 kg bags also answered for the "Layer Mash 10kg"; "how long does a 5kg
bag of shell grit last" quoted "5kg bag.", a weight, not "Lasts 6 hens about 3 months."; "can i return soap if i
opened it and didnt like the smell" found nothing where the refund policy's list names soap "that has been unwrapped
or used"; and "my rack showed up with a bent upright" was not read as damaged in delivery. A running garden shop,
indexed with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from ask_engine.answering.sentences import _goods_said
from ask_engine.answering.siblings import measured_part, names_part
from ask_engine.engine import Engine
from ask_engine.language import content_stems, parse_query, stem
from tests.shop_helpers import assert_says, inline_engine, options_product, single_variant_product

URL = "https://brambleandspade.example/products/"
OWN = "Bramble and Spade"

_single = partial(single_variant_product, vendor=OWN)

TOOL_SET = options_product(
    1,
    "Ashwood Garden Tool Set",
    "ashwood-tool-set",
    "<p>Forged carbon-steel tools on ash handles, in a waxed canvas roll.</p>"
    "<p>The <strong>Potting Set</strong> is a trowel, a transplanter and a dibber.</p>"
    "<p><strong>Allotment Set</strong> adds a border spade, a weeding fork and a foam kneeler - everything for a full "
    "plot.</p>",
    "Tool Sets",
    {"Set": ["Potting Set", "Allotment Set"]},
    {("Potting Set",): ("39.00", True), ("Allotment Set",): ("119.00", True)},
    vendor=OWN,
)
TRIMMER = _single(
    2,
    "Cordless Hedge Trimmer",
    "cordless-hedge-trimmer",
    "<p>A 36 V hedge trimmer with a dual-action blade for hedges up to 2 m tall.</p>",
    "Power Tools",
    "189.00",
    cutting_length="60 cm",
    weight="3.4 kg",
    blade_gap="22 mm",
)
PELLETS = options_product(
    3,
    "Chicken Manure Pellets",
    "chicken-manure-pellets",
    "<p>Slow-release organic pellets for beds, borders and the veg patch.</p>",
    "Fertiliser",
    {"Bag": ["5 kg", "10 kg", "20 kg"]},
    {("5 kg",): ("9.50", True), ("10 kg",): ("15.00", False), ("20 kg",): ("24.00", True)},
    vendor=OWN,
)
LAWN_FEED = _single(
    4,
    "Spring Lawn Feed 10kg",
    "spring-lawn-feed",
    "<p>A high-nitrogen lawn feed for March to May, covering 400 square metres.</p>",
    "Lawn Care",
    "21.00",
)
SLUG_WOOL = _single(
    5,
    "Slug Wool Pellets 3kg",
    "slug-wool-pellets",
    "<p>Wool pellets that slugs and snails won't cross, and that feed the soil as they break down.</p>"
    "<p>3kg bag. Lasts a typical veg patch about 3 months.</p>",
    "Pest Control",
    "14.50",
)
PRODUCTS: list[dict[str, Any]] = [TOOL_SET, TRIMMER, PELLETS, LAWN_FEED, SLUG_WOOL]
SHIPPING = """---
type: shipping_policy
title: Delivery
---
# Delivery
Orders placed by 1 pm on a weekday leave the same day. Delivery within mainland Britain is £4.95, free over £60.
"""
REFUNDS = """---
type: refund_policy
title: Returns
---
# Returns
## Returns window
You can return unused tools within 30 days of delivery for a full refund.
## What we can't take back
For hygiene and safety reasons the following are final sale:
- Seeds, bulbs, compost and fertiliser bags that have been opened or partly used
- Gift cards
## Damaged deliveries
If anything arrives damaged, email us a photo within 7 days and we'll send a replacement free of charge.
"""
PAGE = """---
type: page
title: Visit the Nursery
---
# Visit the Nursery
We have grown plants and mended tools on the same farm since 1987, and most of what we sell we use ourselves.
## Find us
Unit 2, Hop Farm Lane.
Paddock Wood TN12 6AA.
Monday to Friday: 8am - 5:30pm.
Saturday: 9am - 1pm.
Sunday: closed.
There is free parking for twelve cars in the yard.
"""
FAQ = """entries:
  - question: Which payment methods do you accept?
    anchor: payment
    answer: >-
      Visa, Mastercard, Maestro and PayPal. We don't offer Laybuy or other buy-now-pay-later schemes.
  - question: Can I pay in instalments?
    anchor: instalments
    answer: >-
      Yes: orders over £250 can be split into 3 interest-free payments with PayPal Pay in 3.
  - question: Do you sharpen tools?
    anchor: sharpening
    answer: >-
      Yes, bring them to the nursery: £6 per blade, ready the next day.
"""
SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN}"\nurl = "https://brambleandspade.example"\ncurrency = "GBP"\ncountry = "GB"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/shipping.md": SHIPPING,
    "policies/returns.md": REFUNDS,
    "pages/nursery.md": PAGE,
    "faq.yaml": FAQ,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("bramble") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_the_part_a_measure_question_asks_about() -> None:
    naming = frozenset({"cordless", "hedg", "trimmer"})
    part = measured_part("how long is the power cable on the trimmer?", naming)
    assert part is not None and not names_part("Cutting length: 60 cm", part) and names_part("Cable: 10 m", part)
    assert measured_part("how long is the trimmer?", naming) is None  # the product itself
    assert measured_part("how heavy is the hedgetrimmer of it?", frozenset({"hedgetrimmer"})) is None
    # ... nor a part the question does not say is the product's ("how tall is the castle?" of a playset)
    assert measured_part("how long is the cable?", naming) is None
    # a figure of another kind than a part's own is the product's ("Runtime: 45 minutes")
    assert names_part("Runtime: 45 minutes", measured_part("how long is the battery life on it?", naming))


def test_the_goods_a_returns_question_names() -> None:
    entry = content_stems("Seeds, bulbs, compost and fertiliser bags that have been opened or partly used")
    assert _goods_said("can i return fertiliser if i opened the bag", frozenset({stem("fertiliser")}), entry)
    # "the compost club" is no compost
    assert not _goods_said("can i cancel the compost club halfway", frozenset({stem("compost")}), entry)


def test_chat_words_and_everyday_synonyms() -> None:
    assert "lol" not in parse_query("do you deliver on sundays lol").stems
    assert parse_query("what time do you shut?").stems == parse_query("what time do you close?").stems
    assert parse_query("do you do financing").stems == parse_query("do you do instalments").stems


# ------------------------------------------------------------------------------------------ through the engine

# (question, product handle, what the answer must say, what it must not)
CASES = [
    # a name only one passage uses, which the embedding model hardly knows
    ("do you take laybuy", "", ["Laybuy"], ["couldn't find"]),
    # an everyday word for the shop's own, which retrieval reads too
    ("do yall do financing", "", ["3 interest-free payments"], ["couldn't find"]),
    ("what time do you shut on a saturday", "", ["9am - 1pm"], ["couldn't find"]),  # (guard: found before too)
    # what a version the question names holds, in the description's words
    ("whats actually in the allotment set", "ashwood-tool-set", ["border spade"], ["not recorded"]),
    ("what do you get in the potting set?", "ashwood-tool-set", ["dibber"], ["border spade"]),
    # the measure of a part the product does not record is not the product's
    ("how long is the power cable on the trimmer?", "cordless-hedge-trimmer", ["not recorded"], []),
    # ... and one it records answers
    ("how long is the cutting blade?", "cordless-hedge-trimmer", ["60 cm"], ["not recorded"]),
    ("how heavy is the trimmer?", "cordless-hedge-trimmer", ["3.4 kg"], ["not recorded"]),
    # "how long" asks for a duration or a length, which no weight is: the line stating one in the question's word
    ("how long does a 3kg bag of slug wool last?", "slug-wool-pellets", ["about 3 months"], ["3kg bag."]),
    # the list entry naming goods the shop sells, several kinds and their state in one entry, is the rule for a
    # returns question naming them, with no product in view ("if i opened the bag" is its condition, not its topic)
    # (guard: this shop's short policy let the best sentence clear the bar before too)
    (
        "can i return fertiliser if i opened the bag and didnt like the smell",
        "",
        ["opened or partly used"],
        ["couldn't find"],
    ),
    # a delivery that "showed up with a bent blade" arrived damaged
    ("my trimmer showed up with a bent blade, what do i do", "", ["within 7 days"], ["couldn't find"]),
    # a figure of the product's own versions names no other product
    ("is the 10kg in stock?", "chicken-manure-pellets", ["10 kg is sold out"], ["Lawn Feed"]),
    ("got any 10kg bags of the lawn feed?", "", ["Lawn Feed"], []),
]


@pytest.mark.parametrize(("question", "handle", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_bundles_parts_and_rare_words_through_the_engine(
    engine: Engine, question: str, handle: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + handle] if handle else [], wanted, unwanted)
