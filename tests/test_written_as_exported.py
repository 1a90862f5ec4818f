"""Readings six more blind probe shops (knitting yarn, supplements, equestrian tack, archery; loose-leaf tea and surf
kept apart) found wanting. A metafield key ending in its unit ("dha_mg": 480) read "The dha mg … is 480"; "how much
melatonin is in each gummy?" of the Melatonin 3 mg Gummies lost "melatonin" with the title and answered "60 gummies
per bottle"; "how much EPA and DHA per serving?" gave DHA alone; "my son just turned 3" asked no age; "sweater" asked
about breathability; "any havana in xfull" read "xfull" as a slip for "Full"; a fact's parts set apart by "·" ("Pony:
15–16.5" · Cob: 16.5–17.5" · Full: 17–18"") made the full pad too small for an 18" saddle; a refund policy's
"**Footwear.** Try boots on indoors …" answered "Footwear."; "by Canada Post" named Canada as a destination, so the US
flat rate answered for Winnipeg; "ship a compound bow to Michigan?" never retrieved the section on the United States;
Sudbury was Massachusetts's for a Canadian shop (the data has "Greater Sudbury"); "I'm 5'10 with a 70 inch wingspan"
crashed the size guide's reading; and "do you send gummies with ice packs?" was about the one gummies sold in a
"2-Pack". A Canadian pet and hardware shop of other trades, indexed with the real embedding model and asked through
`Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest

from ask_engine.answering.absence import _names_other_product
from ask_engine.answering.addressing import joined_labels
from ask_engine.answering.shipping import _town_level
from ask_engine.answering.sizing import _beside_figures, _label_of
from ask_engine.countries import country_codes_in
from ask_engine.engine import Engine
from ask_engine.language import parse_query
from ask_engine.sources.markup import markdown_to_text
from ask_engine.sources.values import unit_from_label
from ask_engine.spelling import spelled
from ask_engine.towns import town_named
from ask_engine.types import Fact
from tests.shop_helpers import assert_says, inline_engine, options_product, single_variant_product, with_metafields

URL = "https://northshore.example/products/"
OWN = "Northshore Home & Pet"

_product = partial(options_product, vendor=OWN)
_single = partial(single_variant_product, vendor=OWN)

PRODUCTS: list[dict[str, Any]] = [
    _single(
        1,
        "Salmon Oil for Dogs",
        "salmon-oil-for-dogs",
        "<p>Wild Alaskan salmon oil for a glossy coat, in a pump bottle.</p>",
        "Pet Supplements",
        "32.00",
        epa_mg="400",
        dha_mg="250",
        pump_size="2 ml",
    ),
    _single(
        2,
        "Caffeine Energy Chews",
        "caffeine-energy-chews",
        "<p>Citrus chews for long shifts and early starts.</p><p>12 chews per pouch.</p>",
        "Snacks",
        "6.50",
        caffeine_mg="100",
        flavour="Citrus",
    ),
    with_metafields(
        _single(
            3,
            "Junior Sunscreen Stick SPF 50",
            "junior-sunscreen-stick",
            "<p>A mineral sunscreen stick that glides on without the mess.</p>",
            "Sun Care",
            "14.00",
        ),
        notices={"age_restricted": "For children 3 years of age and older. Not for use on babies under 3."},
    ),
    _product(
        4,
        "Trail Dog Rain Coat",
        "trail-dog-rain-coat",
        "<p>A fleece-lined rain coat with a reflective trim.</p>",
        "Dog Coats",
        {"Size": ["Small", "Large", "X-Large"], "Colour": ["Red", "Navy"]},
        {
            ("Small", "Red"): ("45.00", True),
            ("Small", "Navy"): ("45.00", True),
            ("Large", "Red"): ("49.00", True),
            ("Large", "Navy"): ("49.00", True),
            ("X-Large", "Red"): ("52.00", True),
            ("X-Large", "Navy"): ("52.00", False),
        },
    ),
    with_metafields(
        _product(
            5,
            "Padded Crate Mat",
            "padded-crate-mat",
            "<p>A quilted mat for dog crates, machine washable.</p>",
            "Dog Beds",
            {"Size": ["Small", "Medium", "Large"]},
            {("Small",): ("29.00", True), ("Medium",): ("35.00", True), ("Large",): ("42.00", True)},
        ),
        fits_crate='Small: 18–24" · Medium: 24–30" · Large: 30–36"',
    ),
    with_metafields(
        _single(
            7,
            "Paw Balm",
            "paw-balm",
            "<p>Rub a little beeswax balm into dry paw pads twice a day; it soaks in within minutes.</p>",
            "Dog Care",
            "11.00",
        ),
        notices={"allergens": "Contains beeswax and coconut oil. Free from lanolin and nut oils."},
    ),
    _single(
        8,
        "Grizzly Guard 225",
        "grizzly-guard-225",
        "<p>A 225 g capsaicin spray with a 9 m range, in a belt holster.</p>",
        "Bear Spray",
        "54.00",
    ),
    _single(
        9,
        "Puppy Starter Kit",
        "puppy-starter-kit",
        "<p>What's in the box: a collar, a lead, a chew toy and a bag of training treats.</p>",
        "Kit",
        "59.00",
    ),
    _product(
        6,
        "Beef Liver Dog Treats",
        "beef-liver-dog-treats",
        "<p>Single-ingredient freeze-dried beef liver.</p>",
        "Dog Treats",
        {"Pack": ["Single", "2-Pack"]},
        {("Single",): ("12.00", True), ("2-Pack",): ("21.00", True)},
    ),
]

SHIPPING = """---
type: shipping_policy
title: Shipping Policy
---
# Shipping Policy
We ship from our warehouse in Barrie, Ontario.
## Rates within Canada
| Destination | Rate | Estimated transit |
|---|---|---|
| Ontario and Quebec | $10.95 | 1-3 business days |
| Manitoba, Saskatchewan, New Brunswick, Nova Scotia, Prince Edward Island | $14.95 | 3-5 business days |
| Alberta, British Columbia, Newfoundland and Labrador | $18.95 | 3-7 business days |
## Warm weather
From June to August, orders with treats ship with a cold pack at no extra charge.
## Yukon, Northwest Territories and Nunavut
Parcels to the territories go by Canada Post Expedited only.
- Cost: $29.95 flat
- Delivery: 7–15 business days after shipping
## Shipping to the United States
We ship leashes, collars and coats to the continental United States by Canada Post for a flat $24.95. We do not
ship food, treats or supplements outside Canada.
"""
REFUNDS = """---
type: refund_policy
title: Returns
---
# Returns
## Your 30-day window
You can return most unused items within 30 days of delivery for a refund.
## Items with special conditions
**Food and treats.** For hygiene reasons these can only be returned unopened, with the seal intact.

**Beds and mats.** Beds must be unwashed and free of pet hair.
## Condition of returned items
- Kits must be complete and unopened (the seal on the box not broken).
- Books must be in resaleable condition.
"""
FAQ = """url: https://northshore.example/pages/faq
entries:
  - question: Do I need a permit to buy or carry bear spray in Canada?
    anchor: bear-spray
    answer: >-
      No. Bear spray sold for use on animals needs no permit or licence. The Criminal Code prohibits carrying it to
      use on people, and some parks ask you to keep it in its holster.
"""
SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN}"\nurl = "https://northshore.example"\ncurrency = "CAD"\ncountry = "CA"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/shipping.md": SHIPPING,
    "policies/refunds.md": REFUNDS,
    "faq.yaml": FAQ,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("northshore") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_a_unit_in_the_key_goes_with_the_figure() -> None:
    assert unit_from_label("Dha mg", "480") == ("Dha", "480 mg")
    assert unit_from_label("Protein per serving g", "21") == ("Protein per serving", "21 g")
    assert unit_from_label("Weight (kg)", "3.5") == ("Weight", "3.5 kg")
    assert unit_from_label("Abv percent", "5.2") == ("Abv", "5.2%")
    assert unit_from_label("Length am pm", "8.3") == ("Length am pm", "8.3")  # no unit named
    assert unit_from_label("Weight kg", "about 3") == ("Weight kg", "about 3")  # no bare figure
    assert unit_from_label("Mg", "3") == ("Mg", "3")  # a unit alone is the label


def test_two_attributes_joined_by_the_question() -> None:
    epa, dha = Fact("epa_mg", "Epa", "690 mg", "metafield"), Fact("dha_mg", "Dha", "480 mg", "metafield")
    assert joined_labels(dha, epa, "How much EPA and DHA per serving?")
    assert joined_labels(dha, epa, "epa/dha per softgel?")
    movement, case = Fact("movement", "Watch movement type", "quartz", "metafield"), Fact("case", "Case", "steel", "x")
    assert not joined_labels(movement, case, "how thick is the watch case?")  # named, not joined
    assert not joined_labels(dha, epa, "how much DHA is in it?")


def test_a_word_not_what_it_starts_with() -> None:
    assert "breathability" not in parse_query("knitting a sweater for my son, is it soft?").concepts
    assert "breathability" in parse_query("does it get sweaty on a run?").concepts
    assert "capacity" not in parse_query("does the phone holder rotate?").concepts
    assert "capacity" in parse_query("how much does it hold?").concepts
    assert "dimensions" not in parse_query("is the folder waterproof?").concepts
    assert "age" in parse_query("my son just turned 3, ok for him?").concepts


def test_a_word_typed_without_its_hyphen() -> None:
    uses = {"x-large": 2, "large": 9, "navy": 3}.get
    assert spelled("is navy in xlarge in stock?", lambda w: uses(w) or 0) == "is navy in x-large in stock?"
    assert spelled("is navy in large in stock?", lambda w: uses(w) or 0) == "is navy in large in stock?"


def test_a_run_in_heading_leads_its_sentence() -> None:
    text = markdown_to_text("**Footwear.** Try boots on indoors. Soles must be clean.\n\n**Gift cards** are final.")
    assert "Footwear: Try boots on indoors. Soles must be clean." in text
    assert "Gift cards are final." in text  # bold, but no heading: it runs on without a stop
    sentence = markdown_to_text("**Fins are not included.** Boards vary by up to 0.3 L.")
    assert "Fins are not included. Boards vary" in sentence  # a bold sentence, no heading


def test_a_national_carrier_is_no_destination() -> None:
    assert country_codes_in("We ship to the continental United States by Canada Post for $24.95.") == ("US",)
    assert country_codes_in("Parcels go by Australia Post within Australia.") == ("AU",)
    assert country_codes_in("We ship to Canada.") == ("CA",)


def test_a_city_the_data_calls_greater() -> None:
    town = town_named("Can you deliver to Sudbury?", prefer=("CA",))
    assert town is not None and town.country == "CA"
    town = town_named("Can you deliver to Sudbury?", prefer=("GB",))
    assert town is not None and town.country == "GB"


def test_a_name_using_no_word_of_the_catalogue_names_no_product() -> None:
    catalogue = frozenset({"crossbow", "ridgeback", "hike", "boot", "redmer"})
    assert _names_other_product("The Criminal Code prohibits crossbows fired with one hand.", set())
    assert not _names_other_product("The Criminal Code prohibits crossbows fired with one hand.", set(), catalogue)
    assert _names_other_product("For example, the Redmere Lightweight Hiking Boot runs small.", set(), catalogue)


def test_a_state_abroad_is_retrieved_with_its_country() -> None:
    assert Engine._retrieval_query("can you ship a bow to Michigan?", None).endswith("(United States)")
    assert Engine._retrieval_query("can you ship a bow to Michigan?", "CA").endswith("(United States)")
    assert Engine._retrieval_query("how long does delivery take?", "DE").endswith("(Germany)")
    assert Engine._retrieval_query("do you ship to France?", "DE") == "do you ship to France?"
    assert Engine._retrieval_query("is it waterproof?", "DE") == "is it waterproof?"


def test_a_row_of_regions_is_its_towns_region_line() -> None:
    row = "Destination: Manitoba, New Brunswick, Prince Edward Island, Rate: $14.95"
    winnipeg = town_named("shipping to Winnipeg?", prefer=("CA",))
    assert winnipeg is not None and _town_level(winnipeg, row) == 1
    brisbane = "South-East Queensland (Brisbane, Ipswich, Logan): $9.95"
    townsville = town_named("shipping to Townsville?", prefer=("AU",))
    assert townsville is not None and _town_level(townsville, brisbane) == 0  # a part of Queensland, not all of it


def test_feet_and_inches_count_as_one_figure_in_the_question() -> None:
    question = "I'm 5'10 with a 70 inch wingspan. What draw length am I?"
    assert _label_of(question, 1) == frozenset({"wingspan"})
    assert "wingspan" in _beside_figures(question, 1)


# ------------------------------------------------------------------------------------------ through the engine

# (question, product handle, what the answer must say, what it must not)
CASES = [
    # a unit in the metafield's key is said with the figure
    ("how much DHA is in it?", "salmon-oil-for-dogs", ["250 mg"], ["dha mg"]),
    # two attributes named apart are both answered
    ("how much EPA and DHA per pump?", "salmon-oil-for-dogs", ["400 mg", "250 mg"], []),
    # a title word that is one of the product's own labels is asked, not dropped with the name
    ("how much caffeine is in each chew?", "caffeine-energy-chews", ["100 mg"], ["12 chews per pouch"]),
    # an age said after "just"
    ("my son just turned 2, is it ok for him?", "junior-sunscreen-stick", ["under 3"], ["does not say exactly"]),
    # a hyphenated value typed without its hyphen
    ("is navy in xlarge in stock?", "trail-dog-rain-coat", ["X-Large / Navy is sold out"], ["Large / Navy is in"]),
    # the parts of a fact set apart by a dot
    ('will the large fit a 36" crate?', "padded-crate-mat", ["Yes", '30–36"'], ["No."]),
    # a run-in heading leads its rule
    ("we opened the bag, can we still send it back?", "beef-liver-dog-treats", ["returned unopened"], []),
    # a carrier named for a country is no line for the destination
    ("how much to ship this to Winnipeg?", "trail-dog-rain-coat", ["$14.95"], ["United States"]),
    # a state abroad reads as its country for retrieval
    ("can you ship dog treats to my sister in Michigan?", "", ["outside Canada"], []),
    # a notice saying the word asked answers before a line that does not
    ("I react to beeswax, which oils are in it?", "paw-balm", ["coconut oil"], ["soaks in"]),
    # a name that is no product's ("the Criminal Code") does not keep an FAQ entry from the product in view
    ("do i need a permit to carry this bear spray in alberta?", "grizzly-guard-225", ["no permit"], []),
    # the goods a list's rule is of ("Kits must be …"), the product's type however common a title word it is
    ("opened the box but haven't used anything, can I still send it back?", "puppy-starter-kit", ["unopened"], []),
    # the time to the destination's own section, with a product in view
    ("what would it cost to send this to Whitehorse and how long will it take?", "paw-balm", ["7–15"], []),
    # a town's name inside a region's ("Prince Edward" of "Prince Edward Island") leaves the row its region's
    ("how much to send this to Charlottetown?", "trail-dog-rain-coat", ["in Prince Edward Island", "$14.95"], []),
    # a town the data names "Greater …"
    ("do you deliver to Sudbury?", "", ["Ontario"], ["Massachusetts", "England"]),
    # an option value's word far from the product's names no product
    ("do you send treats with ice packs in summer?", "", ["cold pack"], ["2-Pack"]),
]


@pytest.mark.parametrize(("question", "handle", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_written_as_exported_through_the_engine(
    engine: Engine, question: str, handle: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + handle] if handle else [], wanted, unwanted)
