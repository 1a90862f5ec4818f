"""A variant asked for by its option values, and FAQ questions in a shopper's words, as four blind probe shops (pet
supplies, bicycle parts, baby clothes, candles) found them: "do u have the candle in the 8 oz jar right now" listed
the sizes without saying the jar is sold out; "is this set on sale? need a size 2" gave the price and the size
chart's row for size 2, which is sold out; "is the rosewood cardi on sale? can i get it in a size 2" said "Yes, it
comes in 2" (Rosewood / 2 is sold out); "do u have it in clay size 0000??" quoted the size chart; "is there a
subscribe & save option?" found nothing against an FAQ "Do you have autoship or a subscription?"; "can i bring my
dog w me" asked about "dog w". A small tea and linen shop of another trade, indexed with the real embedding model
and asked through `Engine.ask`. Also: "do you have this in 28 x 1.75?" said "Yes, it comes in" three sizes sharing the
28 (the one asked for is sold out), "what comes in the candle care kit?" listed its finishes, and "do you give a
military discount?" quoted "Discount codes can't be combined" and the rate for military addresses; "my dog's chest
measures 24 inches, what size?" listed the sizes where the size guide page has the product's own table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.engine import Engine
from ask_engine.language import parse_query, stem
from tests.shop_helpers import ask_plain, inline_engine


def _variant(
    vid: int, values: list[str], price: str, available: bool = True, compare: str | None = None
) -> dict[str, Any]:
    variant: dict[str, Any] = {"id": vid, "title": " / ".join(values), "price": price, "available": available}
    for n, value in enumerate(values, start=1):
        variant[f"option{n}"] = value
    if compare:
        variant["compare_at_price"] = compare
    return variant


APRON_BODY = (
    "<p>A heavyweight linen apron with a cross-back strap and two deep pockets, for kitchens and potting sheds.</p>"
    "<table><tr><th>Size</th><th>Length</th><th>Fits</th></tr>"
    "<tr><td>10</td><td>80 cm</td><td>Waist 66-70 cm</td></tr><tr><td>12</td><td>86 cm</td><td>Waist 71-76 cm</td></tr>"
    "<tr><td>14</td><td>92 cm</td><td>Waist 77-82 cm</td></tr></table>"
)
PRODUCTS = [
    {
        "id": 1,
        "title": "Linen Cross-Back Apron",
        "handle": "linen-apron",
        "body_html": APRON_BODY,
        "product_type": "Apron",
        "options": [{"name": "Colour", "values": ["Rust", "Heron"]}, {"name": "Size", "values": ["10", "12", "14"]}],
        "variants": [
            _variant(11, ["Rust", "10"], "38.00", compare="45.00"),
            _variant(12, ["Rust", "12"], "38.00", compare="45.00"),
            _variant(13, ["Rust", "14"], "38.00", available=False, compare="45.00"),
            _variant(14, ["Heron", "10"], "45.00"),
            _variant(15, ["Heron", "12"], "45.00"),
            _variant(16, ["Heron", "14"], "45.00", available=False),
        ],
    },
    {
        "id": 2,
        "title": "Smoky Lapsang Souchong Loose Leaf Tea",
        "handle": "smoky-lapsang",
        "body_html": "<p>Pine-smoked black tea from Fujian.</p><p>Use 2 g of leaf per 250 ml cup, and brew for 3 to 4 "
        "minutes.</p><table><tr><th>Size</th><th>Cups</th><th>Packed in</th></tr><tr><td>50 g</td><td>about 25</td>"
        "<td>foil pouch</td></tr><tr><td>100 g</td><td>about 50</td><td>tin caddy</td></tr><tr><td>250 g</td>"
        "<td>about 125</td><td>paper refill bag</td></tr></table>",
        "product_type": "Loose leaf tea",
        "options": [{"name": "Size", "values": ["50 g Pouch", "100 g Caddy", "250 g Refill Bag"]}],
        "variants": [
            _variant(21, ["50 g Pouch"], "6.50"),
            _variant(22, ["100 g Caddy"], "14.00", available=False),
            _variant(23, ["250 g Refill Bag"], "24.00"),
        ],
    },
]
PRODUCTS += [
    {
        "id": 3,
        "title": "Washed Linen Tablecloth",
        "handle": "linen-tablecloth",
        "body_html": "<p>Stonewashed European linen that softens with every wash.</p>",
        "product_type": "Tablecloth",
        "options": [{"name": "Size", "values": ["140 x 180 cm", "140 x 240 cm", "160 x 240 cm"]}],
        "variants": [
            _variant(31, ["140 x 180 cm"], "48.00"),
            _variant(32, ["140 x 240 cm"], "58.00", available=False),
            _variant(33, ["160 x 240 cm"], "64.00"),
        ],
    },
    {
        "id": 4,
        "title": "Afternoon Tea Taster Set",
        "handle": "tea-taster-set",
        "body_html": "<p>Five of our best-loved teas in a keepsake tin:</p><ul><li>Smoky Lapsang Souchong, 20 g</li>"
        "<li>Darjeeling First Flush, 20 g</li><li>Jasmine Pearls, 20 g</li><li>Rooibos Chai, 20 g</li>"
        "<li>Peppermint Leaf, 10 g</li></ul>",
        "product_type": "Gift set",
        "options": [{"name": "Tin colour", "values": ["Red", "Green"]}],
        "variants": [_variant(41, ["Red"], "22.00"), _variant(42, ["Green"], "22.00")],
    },
]
PRODUCTS += [
    {
        "id": 5,
        "title": "Waxed Canvas Gardening Gloves",
        "handle": "gardening-gloves",
        "body_html": "<p>Waxed cotton canvas with suede palms, for pruning roses and clearing brambles.</p>",
        "product_type": "Gloves",
        "options": [{"name": "Size", "values": ["S", "M", "L"]}],
        "variants": [_variant(51, ["S"], "24.00"), _variant(52, ["M"], "24.00"), _variant(53, ["L"], "24.00")],
    },
]
PRODUCTS += [
    {
        "id": 6,
        "title": "Borosilicate Glass Teapot 1 L",
        "handle": "glass-teapot",
        "body_html": "<p>A clear teapot with a removable stainless steel infuser.</p><p>Dishwasher safe on the top rack. "
        "Never sterilise it in boiling water, as the glass may crack. Keep it away from open flames and hobs.</p>",
        "product_type": "Teapot",
        "variants": [{"id": 61, "title": "Default Title", "price": "32.00", "available": True}],
    },
]
PRODUCTS += [
    {
        "id": 7 + n,
        "title": f"{kind} Teapot Warmer",
        "handle": f"{kind.lower()}-teapot-warmer",
        "body_html": f"<p>{body}</p>",
        "product_type": "Teapot warmer",
        "variants": [{"id": 70 + n, "title": "Default Title", "price": price, "available": True}],
    }
    for n, (kind, body, price) in enumerate(
        [
            ("Ceramic", "A glazed stoneware stand that holds one tealight under the pot.", "18.00"),
            ("Electric", "A 20 W heated plate that switches itself off after 2 hours.", "35.00"),
        ]
    )
]
SIZE_GUIDE = """---
type: size_guide
title: Size Guide
url: https://leafandloom.example/pages/size-guide
---
# Size Guide

Measure around your hand just below the knuckles, with the hand flat.

## Leather Potting Gloves

| Size | Hand circumference |
|---|---|
| S | 16-18 cm |
| M | 18-20 cm |
| L | 20-23 cm |

## Waxed Canvas Gardening Gloves

| Size | Hand circumference |
|---|---|
| S | 17-19 cm |
| M | 19-22 cm |
| L | 22-25 cm |
"""
FAQ = """url: https://leafandloom.example/pages/faq
entries:
  - question: Do you have autoship or a subscription?
    anchor: tea-club
    answer: Yes, it's called the Tea Club. Pick any of our blends and a schedule of every 4, 6 or 8 weeks, and you
      save 10% on every delivery. Skip or cancel from your account.
  - question: Can I visit your shop?
    anchor: shop
    answer: Our shop is at 4 Mill Lane, Hebden Bridge, open Wednesday to Sunday, 10am to 5pm.
  - question: Can I use more than one discount code?
    anchor: codes
    answer: No, discount codes can't be combined and can't be applied to past orders.
  - question: Do you post to military addresses?
    anchor: military
    answer: Yes, military (BFPO) addresses are sent by Royal Mail Tracked at the standard rate.
  - question: Can you gift wrap my order?
    anchor: gift-wrap
    answer: Yes, tick Add gift wrapping in your basket. Wrapping costs £3.50 per order, in recycled paper with a
      linen ribbon. We never put prices in wrapped parcels.
  - question: Are pets allowed in the shop?
    anchor: pets
    answer: Well-behaved dogs on a lead are welcome in the shop, and there's a water bowl by the door.
"""
SHOP = {
    "shop.toml": '[shop]\nname = "Leaf & Loom"\nurl = "https://leafandloom.example"\ncurrency = "GBP"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "faq.yaml": FAQ,
    "pages/size-guide.md": SIZE_GUIDE,
    "policies/shipping.md": "---\ntype: shipping_policy\ntitle: Shipping\n---\n# Shipping\n\n## UK\n\nUK delivery "
    "is £3.95, free over £40.\n\n## International\n\n| Region | Cost | Delivery time |\n|---|---|---|\n"
    "| Europe | £12.95 | 5-8 working days |\n| Rest of the world | £18.95 | 7-14 working days |\n\n"
    "Import duties, taxes and customs charges are the customer's responsibility.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("leaf") / "shop", SHOP, embedder)


def test_a_named_variant_asked_for_right_now_is_said_to_be_sold_out(engine: Engine) -> None:
    answer = ask_plain(engine, "do u have the smoky lapsang in the 100 g caddy right now")
    assert "100 g Caddy is sold out" in answer, answer
    assert "250 g Refill Bag" not in answer, answer  # not the list of sizes


def test_a_named_variant_that_is_sold_out_is_said_to_be_beside_its_price(engine: Engine) -> None:
    answer = ask_plain(engine, "is this on sale? need a size 14", "linen-apron")
    assert "Rust / 14" in answer and "Heron / 14" in answer and "sold out" in answer, answer
    assert "92 cm" not in answer, answer  # not the size chart's row


def test_option_values_named_in_two_parts_name_one_variant(engine: Engine) -> None:
    answer = ask_plain(engine, "is the rust apron on sale? can i get it in a size 14", "linen-apron")
    assert "Rust / 14 is sold out" in answer, answer
    assert "£38.00" in answer and "Heron" not in answer, answer
    assert not answer.startswith("Yes"), answer


def test_do_you_have_it_in_a_colour_and_size_is_no_size_chart_question(engine: Engine) -> None:
    answer = ask_plain(engine, "do u have the linen apron in heron size 14??")
    assert "Heron / 14 is sold out" in answer, answer
    answer = ask_plain(engine, "do you have the linen apron in heron in a size 14?")
    assert "Heron / 14 is sold out" in answer, answer
    assert "92 cm" not in answer, answer


def test_faq_questions_in_a_shoppers_words(engine: Engine) -> None:
    subscription = ask_plain(engine, "is there a subscribe & save option?")
    assert "every 4, 6 or 8 weeks" in subscription, subscription
    dog = ask_plain(engine, "can i bring my dog w me when i visit the shop")
    assert "dogs on a lead are welcome" in dog, dog


def test_a_noun_made_from_a_verb_and_texting_with() -> None:
    assert stem("subscription") == stem("subscribe") == stem("subscriptions")
    assert stem("absorption") == stem("absorbs")
    assert stem("option") != stem("opt")  # only the endings the lexicon lists
    assert "with me" in parse_query("can i bring my dog w me").lower
    assert "with footprint" in parse_query("tent w/ footprint?").lower
    assert "30 w x 40" in parse_query("is it 30 w x 40 h").lower  # a width, not "with"


def test_a_size_named_by_its_figures_is_the_one_using_most_of_them(engine: Engine) -> None:
    answer = ask_plain(engine, "do you have the washed linen tablecloth in 140 x 240?")
    assert "140 x 240 cm is sold out" in answer, answer
    assert not answer.startswith("Yes"), answer
    assert "140 x 180 cm" not in answer, answer


def test_what_comes_in_a_set_asks_for_its_contents_not_its_options(engine: Engine) -> None:
    answer = ask_plain(engine, "what comes in the afternoon tea taster set?")
    assert "Jasmine Pearls" in answer, answer
    assert "Red" not in answer, answer
    assert not parse_query("what comes in the gift box?").options
    assert parse_query("what colours does it come in?").options and parse_query("does it come in red?").options


def test_a_thing_whose_two_words_the_shop_uses_only_apart_is_not_found(engine: Engine) -> None:
    military = ask_plain(engine, "do you give a military discount?")
    assert "couldn't find anything about military discount" in military, military
    assert "combined" not in military, military
    # ... while a thing the shop names with both words, here its FAQ question and answer, is answered
    club = ask_plain(engine, "do you have a tea subscription?")
    assert "Tea Club" in club and "couldn't find" not in club, club


def test_the_parts_that_answer_share_the_sentence_budget(engine: Engine) -> None:
    # three parts, of which the first finds its FAQ entry: its price line is not cut to one sentence of four
    answer = ask_plain(
        engine, "how much for gift wrap, and can you make sure the price isnt in the parcel? its for my sister"
    )
    assert "£3.50" in answer, answer


def test_a_size_guide_pages_table_for_the_product_gives_the_size_for_a_measurement(engine: Engine) -> None:
    data = engine.ask({"query": "my hand measures 21 cm around, what size should i get?", "ids": ["gardening-gloves"]})
    answer = data.to_json()
    assert "Size: M, Hand circumference: 19-22 cm" in answer["answer"]["plain"], answer["answer"]["plain"]
    assert "20-23 cm" not in answer["answer"]["plain"]  # not the other gloves' table
    assert "17-19 cm" not in answer["answer"]["plain"]  # nor the whole table: the row holding 21 cm
    urls = [link["url"] for link in answer.get("links") or []]
    assert any(url.startswith("https://leafandloom.example/pages/size-guide") for url in urls), urls


def test_how_much_to_use_is_no_price_question(engine: Engine) -> None:
    assert not parse_query("how much sealant do i put in a 29er tyre").price
    assert parse_query("how much is the sealant?").price
    answer = ask_plain(engine, "how much lapsang do i put in a 250 ml cup", "smoky-lapsang")
    assert "2 g of leaf per 250 ml cup" in answer, answer
    assert "£" not in answer, answer


def test_when_a_sold_out_variant_comes_back_is_not_recorded_beside_its_stock(engine: Engine) -> None:
    answer = ask_plain(engine, "when will the 100 g caddy be back in stock?", "smoky-lapsang")
    assert "has not recorded when" in answer and "100 g Caddy is sold out" in answer, answer
    assert "250 g Refill Bag" not in answer, answer  # not the list of sizes


def test_a_size_named_by_a_word_gets_its_row_of_the_table(engine: Engine) -> None:
    answer = ask_plain(engine, "how many cups does the biggest one make?", "smoky-lapsang")
    assert "Cups: about 125" in answer, answer
    assert "about 25," not in answer and "about 50," not in answer, answer


def test_a_thing_named_after_what_it_does_is_read_as_the_verb(engine: Engine) -> None:
    assert stem("steriliser") == stem("sterilise") == stem("sterilizers")
    assert parse_query("can i put it in the freezer?").concepts == ()  # a freezer is no temperature rating
    answer = ask_plain(engine, "can i put it in the steriliser or the freezer?", "glass-teapot")
    assert "Never sterilise it in boiling water" in answer, answer
    assert "warm" not in answer, answer


def test_my_babys_name_is_no_age_question(engine: Engine) -> None:
    assert parse_query("can i get my baby's name engraved on it?").concepts == ()
    assert parse_query("is it safe for my baby?").concepts == ("age",)
    answer = ask_plain(engine, "can i get my baby's name engraved on the glass teapot?")
    assert "age" not in answer, answer


def test_a_word_naming_both_products_compared_asks_for_nothing(engine: Engine) -> None:
    # "warmer" names the two products; the comparison asks for no warmth, which neither records
    answer = ask_plain(engine, "ceramic teapot warmer vs the electric one - whats the difference?")
    assert "has not recorded" not in answer, answer
    assert "£18.00" in answer and "£35.00" in answer, answer


def test_an_adverb_before_the_verb_stays_before_it_when_restated(engine: Engine) -> None:
    answer = ask_plain(engine, "does the lapsang ever go stale?", "smoky-lapsang")
    assert "ever goes stale" in answer and "evers" not in answer, answer


def test_and_am_i_starts_a_second_question(engine: Engine) -> None:
    answer = ask_plain(engine, "how much is postage to paris and am i going to get hit with customs fees")
    assert "£12.95" in answer and "customer's responsibility" in answer, answer
