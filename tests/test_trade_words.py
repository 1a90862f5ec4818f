"""Words of a trade and how its shops write them, as six more blind probe shops (cookware, running, home brewing, hair
care, luggage, golf) found them: "do u ship to BC?" found nothing beside "British Columbia"; "what else do I need for
the Coopers Canadian Blonde?" was read as delivery to Canada; "how many quarts?" of the "Lodge 3.2 Quart Combo
Cooker" lost "quarts" with the name; "will I get charged now?" asked for battery details; "hydrometer or
refractometer for a total beginner?" said not recorded for both beside the FAQ asked the same; "do you guys sell
kegging stuff?" said not recorded; "do you ship to germany" quoted a line about "every country on our list"; "can I
return a shampoo I opened?" quoted the used-combs entry (the maker's tag "kelp-and-comb"); "can I get 15mm spike
pins?" and "the 16 inch tongs" missed the values "15 mm" and '16"'; "what attachments come in the box" listed the
colours; "Covered:" was quoted without the sentence saying what the list is, and an own-brand trial's list answered for
another maker's pan; "does the forerunner store music?" quoted the privacy policy; "what's the diameter?" and "what
temp?" named no attribute; "what time do you close on a thursday" quoted every day's hours. A small Canadian kitchen
supply shop of another trade, indexed with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ask_engine.answering.options import _match_options
from ask_engine.answering.passages import _names_maker
from ask_engine.answering.query import _strip_title
from ask_engine.answering.work import _end
from ask_engine.countries import group_members
from ask_engine.engine import Engine
from ask_engine.errors import SourceError
from ask_engine.language import parse_query
from ask_engine.sources.shop import load_shop_info
from tests.shop_helpers import assert_says, inline_engine, single_variant_product

URL = "https://harbourspoon.example/products/"
OWN = "Harbour & Spoon"


def _optioned(
    pid: int, title: str, handle: str, body: str, kind: str, vendor: str, options: dict[str, list[str]], rows: list[Any]
) -> dict[str, Any]:
    """A storefront product with `options` and a variant per row: its option values, its price, and whether it is
    available."""
    return {
        "id": pid,
        "title": title,
        "handle": handle,
        "body_html": body,
        "product_type": kind,
        "vendor": vendor,
        "options": [{"name": name, "values": values} for name, values in options.items()],
        "variants": [
            {
                "id": pid * 100 + n,
                "title": " / ".join(row[:-2]),
                **{f"option{i + 1}": value for i, value in enumerate(row[:-2])},
                "price": row[-2],
                "available": row[-1],
            }
            for n, row in enumerate(rows)
        ],
    }


PRODUCTS: list[dict[str, Any]] = [
    single_variant_product(
        1,
        "Canadian Maple Smoker Chips",
        "canadian-maple-smoker-chips",
        "<p>Sugar maple chips for stovetop smokers.</p><p>You'll also need a stovetop smoker (not included).</p>",
        "Smoker Chips",
        "14.00",
        vendor=OWN,
    ),
    single_variant_product(
        2,
        "Stoneware 3 Quart Fermentation Crock",
        "stoneware-fermentation-crock",
        "<p>A glazed stoneware crock with weights and a water-seal lid.</p>"
        "<p>Ferment at 18–22 °C for the crispest pickles.</p>",
        "Fermentation Crocks",
        "89.00",
        vendor="Kiln Works",
        capacity="3 qt (2.8 L)",
        weight="6 lb",
    ),
    _optioned(
        3,
        "Harbour & Spoon Bar Spoon",
        "bar-spoon",
        "<p>A weighted, twisted-shaft bar spoon.</p>",
        "Bar Tools",
        OWN,
        {"Length": ["30 cm", "40 cm", "50 cm"]},
        [["30 cm", "12.00", True], ["40 cm", "14.00", False], ["50 cm", "16.00", True]],
    ),
    _optioned(
        4,
        "Harbour & Spoon End Grain Cutting Board",
        "end-grain-cutting-board",
        "<p>End grain boards, oiled by hand.</p>",
        "Cutting Boards",
        OWN,
        {"Size": ['12"', '16"'], "Wood": ["Maple", "Walnut"]},
        [
            ['12"', "Maple", "79.00", True],
            ['12"', "Walnut", "89.00", True],
            ['16"', "Maple", "119.00", True],
            ['16"', "Walnut", "139.00", True],
        ],
    ),
    single_variant_product(
        5,
        "Boos Block Maple Cutting Board",
        "boos-block-cutting-board",
        "<p>A classic edge grain maple board.</p>",
        "Cutting Boards",
        "129.00",
        vendor="John Boos",
    ),
    {
        **single_variant_product(
            6,
            "Brine Starter Mix",
            "brine-starter-mix",
            "<p>Salt, dill seed and mustard seed for a litre of brine.</p>",
            "Brine Mix",
            "9.00",
            vendor=OWN,
        ),
        "tags": ["pickling", "harbour-and-spoon"],
    },
    _optioned(
        7,
        "Swing Top Bottle Set",
        "swing-top-bottle-set",
        "<ul><li>Six 500 ml bottles</li><li>Comes with a funnel and a bottle brush</li></ul>",
        "Bottles",
        OWN,
        {"Colour": ["Clear", "Amber"]},
        [["Clear", "32.00", True], ["Amber", "34.00", True]],
    ),
    single_variant_product(
        8,
        "Smart Sous Vide Stick",
        "smart-sous-vide-stick",
        "<ul><li>1100 W heater</li><li>Recipes: no onboard recipe storage (use the app)</li></ul>",
        "Sous Vide",
        "199.00",
        vendor="Anova",
    ),
    single_variant_product(
        9,
        "Wide Mouth Mason Jars (6-pack)",
        "wide-mouth-mason-jars",
        "<p>Six 1 L jars with two-piece lids.</p>",
        "Jars",
        "18.00",
        vendor="Bernardin",
    ),
]

SHIPPING = """---
type: shipping_policy
title: Shipping
---
# Shipping

## Shipping within Canada {#canada}

| Region | Standard rate | Estimated delivery |
|---|---|---|
| Ontario and Quebec | $12.95 | 1–3 business days |
| Manitoba, Saskatchewan, Alberta, British Columbia | $17.95 | 3–6 business days |
| Yukon, Northwest Territories, Nunavut | $34.95 | 7–15 business days |

## Other countries {#international}

We ship to the United States for $24.95. We don't currently ship to any other countries.

## Gift sets {#gift-sets}

Our gift sets can be shipped to every country on our list.
"""

REFUNDS = """---
type: refund_policy
title: Returns
---
# Returns

## Standard returns {#standard}

Most items can be returned within 30 days, unused and in the original packaging.

## Harbour & Spoon 1-Year Trial {#trial}

Harbour & Spoon branded tools can be returned within a year, even if you've used them. Covered:

- Bar spoons and jiggers
- Cutting boards

## Opened and used items {#hygiene}

For hygiene reasons we can't take back anything opened or used. This includes:

- spoons, ladles and strainers that have been used;
- brine mixes, spices and syrups with a broken seal;
"""

PRIVACY = """---
type: privacy_policy
title: Privacy
---
# Privacy

## Recipe cards {#recipes}

If you send us a recipe card to print, we'll store it against your account until you ask us to delete it.
"""

HOURS = """---
title: Visit the shop
url: https://harbourspoon.example/pages/visit
---
# Visit the shop

## Opening hours {#hours}

| Day | Hours |
|---|---|
| Monday to Wednesday | 10am – 6pm |
| Thursday | 10am – 8pm |
| Bank holidays | 11am – 4pm (closed Christmas Day, Boxing Day and New Year's Day, and every other day we say so in advance) |
"""

FAQ = json.dumps(
    [
        {
            "question": "Should I use a fermentation crock or mason jars?",
            "answer": "Start with mason jars: they're cheap and fine for small batches. A crock pays off once you "
            "ferment a few kilos of cabbage at a time.",
        }
    ]
)

SHOP = {
    "shop.toml": f'[shop]\nname = "{OWN} Kitchen Supply"\nurl = "https://harbourspoon.example"\ncurrency = "CAD"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/shipping.md": SHIPPING,
    "policies/refunds.md": REFUNDS,
    "policies/privacy.md": PRIVACY,
    "pages/visit.md": HOURS,
    "faq.json": FAQ,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("harbourspoon") / "shop", SHOP, embedder)


# ---------------------------------------------------------------------------------------------- unit seams


def test_every_country_on_the_shops_list_is_not_the_world() -> None:
    assert group_members("Our gift sets can be shipped to every country on our list.") == {}
    assert group_members("ships to all countries we ship to") == {}
    assert set(group_members("We ship to every country in the world")) == {"worldwide"}
    assert set(group_members("We ship worldwide")) == {"worldwide"}


def test_a_list_entrys_separator_ends_with_the_sentence() -> None:
    assert (
        _end("brine mixes, spices and syrups with a broken seal;")
        == "brine mixes, spices and syrups with a broken seal."
    )
    assert _end("spoons and ladles, and") == "spoons and ladles."
    assert _end("Covered:") == "Covered:"


def test_charging_a_card_is_no_battery_and_units_of_volume_ask_capacity() -> None:
    assert "battery" not in parse_query("it says backorder, will i get charged now?").concepts
    assert "battery" not in parse_query("is there a charge for returns?").concepts
    assert "battery" in parse_query("does it hold a charge?").concepts
    assert "battery" in parse_query("will it fast charge an iphone").concepts
    assert "capacity" in parse_query("how many quarts?").concepts
    assert "dimensions" in parse_query("what's the diameter?").concepts
    assert parse_query("what's the abv").stems == parse_query("what's the alcohol").stems


def test_come_in_the_box_is_no_option_and_store_as_a_verb_is_no_shop() -> None:
    assert not parse_query("what attachments come in the box").options
    assert parse_query("does it come in black").options
    assert not parse_query("does the watch store music?").policy
    assert parse_query("can I return it to the store?").policy


def test_a_name_word_that_is_what_is_asked_stays() -> None:
    assert _strip_title("how many quarts?", "Lodge 3.2 Quart Cast Iron Combo Cooker") == "how many quarts?"
    assert _strip_title("is the lodge combo cooker heavy", "Lodge 3.2 Quart Cast Iron Combo Cooker") != (
        "is the lodge combo cooker heavy"
    )


def test_a_value_is_named_however_its_figure_and_unit_are_written() -> None:
    # (an option read as a size matched its values' figures before; one of another name did not)
    options = [("Tip", ("6 mm", "9 mm", "15 mm")), ("Lid", ('12"', '16"'))]
    assert _match_options(parse_query("can i get 15mm tips"), options)[0] == {"Tip": ["15 mm"]}
    assert _match_options(parse_query("do you have the 16 inch lid"), options)[0] == {"Lid": ['16"']}
    assert _match_options(parse_query("the 150mm one"), options)[0] == {}


def test_a_rule_naming_another_maker_is_not_this_products() -> None:
    assert _names_maker("Harbour & Spoon branded tools can be returned", {"harbour & spoon"}, {"john boos"})
    assert not _names_maker("Harbour & Spoon branded tools", {"john boos"}, {"harbour & spoon"})
    assert not _names_maker("Most items can be returned", {"harbour & spoon"}, {"john boos"})


def test_shop_toml_says_the_country_a_shop_sells_from(tmp_path: Path) -> None:
    base = '[shop]\nname = "North Shore Tack"\nurl = "https://northshore.example"\ncurrency = "USD"\n'
    for written, code in (("CA", "CA"), ("ie", "IE"), ("Canada", "CA")):
        (tmp_path / "shop.toml").write_text(base + f'country = "{written}"\n', "utf-8")
        assert load_shop_info(tmp_path).country == code
    (tmp_path / "shop.toml").write_text(base, "utf-8")
    assert load_shop_info(tmp_path).country is None
    (tmp_path / "shop.toml").write_text(base + 'country = "Narnia"\n', "utf-8")
    with pytest.raises(SourceError, match=r"shop\.country"):
        load_shop_info(tmp_path)


# ------------------------------------------------------------------------------------------ through the engine


# (question, product handles (comma-separated) or "", what the answer must say, what it must not)
CASES = [
    # a province by its postal code, read in the shop's home country (its currency's)
    ("do you ship to BC? how much", "", ["$17.95"], ["couldn't find", "$12.95", "$34.95"]),
    # a country said only in a product's name is no destination
    (
        "what else do i need to buy to use the canadian maple chips",
        "canadian-maple-smoker-chips",
        ["stovetop smoker"],
        ["Region", "$12.95"],
    ),
    # a word of the name that is what is asked ("quarts") stays in the question
    ("how heavy is the fermentation crock and how many quarts?", "stoneware-fermentation-crock", ["6 lb", "3 qt"], []),
    # "get charged" is paying, not charging a battery
    ("will I get charged now if I order the walnut one?", "end-grain-cutting-board", [], ["battery"]),
    # the products in view record nothing of it; the FAQ asked the same question answers
    (
        "crock or mason jars for a total beginner?",
        "stoneware-fermentation-crock,wide-mouth-mason-jars",
        ["Start with mason jars"],
        ["has not recorded"],
    ),
    # "every country on our list" is not Germany's line
    ("do you ship to germany", "", ["Germany is not listed", "don't currently ship to any other"], []),
    # the maker's tag ("harbour-and-spoon") names no spoon; the list entry's ";" ends with the sentence
    ("can i return a brine mix i opened?", "brine-starter-mix", ["with a broken seal."], ["ladles", ";."]),
    # "40cm" names "40 cm", '16 inch' names '16"'
    ("can i get the 40cm bar spoon?", "bar-spoon", ["40 cm is sold out"], ["has not recorded"]),
    ("do you have the 16 inch board in walnut?", "end-grain-cutting-board", ['16"', "Walnut"], ["The sizes"]),
    # "come in the box" asks for contents, not the colours it comes in
    ("what attachments come in the box", "swing-top-bottle-set", [], ["The colours"]),
    # "Covered:" is quoted with the sentence saying what the list is; another maker's board is not covered by it
    (
        "can I return the end grain board after I've used it?",
        "end-grain-cutting-board",
        ["even if you've used them. Covered: Cutting boards"],
        [],
    ),
    ("I used my boos board once and don't like it, can I send it back?", "boos-block-cutting-board", [], ["Covered"]),
    # "store" as a verb asks nothing of a shop
    ("does the sous vide stick store recipes?", "smart-sous-vide-stick", ["no onboard recipe storage"], ["account"]),
    # "diameter" asks the dimensions; "temp" asks a temperature the description states
    ("what's the diameter of the crock?", "stoneware-fermentation-crock", ["has not recorded the dimensions"], []),
    ("what temp should the crock sit at?", "stoneware-fermentation-crock", ["18–22 °C"], ["does not say exactly"]),
    # of a table's rows, the one naming the day asked
    ("what time do you close on a thursday", "", ["Thursday", "10am – 8pm"], ["Monday to Wednesday"]),
]


@pytest.mark.parametrize(("question", "handle", "wanted", "unwanted"), CASES, ids=[c[0] for c in CASES])
def test_trade_words_through_the_engine(
    engine: Engine, question: str, handle: str, wanted: list[str], unwanted: list[str]
) -> None:
    assert_says(engine, question, [URL + h for h in handle.split(",") if h], wanted, unwanted)


# A Canadian shop pricing in US dollars: its currency says the US, its shop.toml says Canada, where "BC" is
ABROAD = {
    "shop.toml": '[shop]\nname = "North Shore Tack"\nurl = "https://northshore.example"\ncurrency = "USD"\n'
    'country = "CA"\n',
    "products.json": json.dumps(
        {
            "products": [
                single_variant_product(
                    1, "Rope Halter", "rope-halter", "<p>A knotted rope halter.</p>", "Halters", "29.00", vendor="NST"
                )
            ]
        }
    ),
    "policies/shipping.md": SHIPPING,
}


def test_a_province_code_is_read_in_the_country_shop_toml_names(
    tmp_path_factory: pytest.TempPathFactory, embedder: Any
) -> None:
    for abroad in inline_engine(tmp_path_factory.mktemp("northshore") / "shop", ABROAD, embedder):
        assert_says(abroad, "do you ship to BC? how much", [], ["$17.95"], ["couldn't find", "$12.95"])
