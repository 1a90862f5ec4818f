"""Answers the shop states, as four blind probe shops (skincare, plants, furniture, music gear) found them said as
"not recorded" or hedged: "how much space is there under the bed for storage boxes?" read "storage" as data storage
and said the clearance was not recorded before giving it; "Compatible with for the Isar Extension Leaf: …"; "will
this stain my pillowcase?" answered by the page's own words after "the shop does not say exactly that"; "how often
should I use it?" answered by a pregnancy notice for its "Do not use"; "what's the heat pack fee?" found nothing for
a sentence saying "$3.50 per box" but not "price"; "… as long as they are:" quoted without its list; "Klarna
instalments from Switzerland?" passed over the FAQ entry because a shipping section is headed Switzerland; "my toner
arrived leaking everywhere" found no sentence saying "everywhere"; "can I collect my order myself to save on
delivery?" kept only the shipping policy, not the FAQ entry "Can I collect my order from the workshop?". A small
garden-furniture shop of another trade, indexed with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.answering.addressing import asked_measures
from ask_engine.engine import Engine
from ask_engine.language import content_stems, parse_query
from tests.shop_helpers import ask_plain, inline_engine


def _product(pid: int, title: str, handle: str, body: str, kind: str, price: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": pid,
        "title": title,
        "handle": handle,
        "body_html": body,
        "product_type": kind,
        "variants": [{"id": pid * 10 + 1, "title": "Default Title", "price": price, "available": True}],
        **extra,
    }


PRODUCTS = [
    _product(
        1,
        "Larch Potting Bench",
        "larch-potting-bench",
        "<p>A sturdy potting bench in Scottish larch with a slatted lower shelf.</p><ul><li>Worktop 120 x 60 cm</li>"
        "<li>Worktop height 90 cm</li></ul>",
        "Potting bench",
        "289.00",
        metafields=[
            {
                "namespace": "specs",
                "key": "shelf_clearance",
                "type": "dimension",
                "value": '{"value": 25, "unit": "cm"}',
            },
        ],
    ),
    _product(
        2,
        "Potting Bench Splashback",
        "potting-bench-splashback",
        "<p>A larch splashback that screws onto the back of the worktop.</p>",
        "Bench accessory",
        "39.00",
        metafields=[
            {
                "namespace": "specs",
                "key": "compatible_with",
                "type": "list.single_line_text_field",
                "value": '["Larch Potting Bench"]',
            },
        ],
    ),
    _product(
        4,
        "Outdoor Seat Pad",
        "outdoor-seat-pad",
        "<p>A showerproof seat pad with ties, 45 x 45 cm.</p>",
        "Seat pad",
        "24.00",
    ),
    _product(
        5,
        "Wall-Mounted Tool Rack",
        "tool-rack",
        "<p>An oak rail with six steel hooks for spades, forks and rakes.</p><p>Fixings for brick and stone walls "
        "are included. Not suitable for plasterboard walls with the supplied fixings.</p>",
        "Storage",
        "45.00",
    ),
    _product(
        6,
        "Oak Garden Table",
        "oak-garden-table",
        "<p>A six-seater garden table in solid European oak with no parasol hole, 180 x 90 cm: pair it with a "
        "freestanding parasol.</p>",
        "Garden table",
        "640.00",
        tags=["garden furniture", "table", "oak"],
    ),
    _product(
        7,
        "Folding Bistro Table",
        "folding-bistro-table",
        "<p>A round steel bistro table for two that folds flat against the shed wall.</p><p>A 38 mm parasol hole "
        "in the centre takes most small parasols.</p>",
        "Garden table",
        "89.00",
        tags=["garden furniture", "table", "steel"],
    ),
    {
        "id": 8,
        "title": "Hardy Geranium 'Rozanne'",
        "handle": "hardy-geranium-rozanne",
        "body_html": "<p>Violet-blue saucers from June to the first frosts.</p><p>In late autumn the leaves turn "
        "yellow and the plant dies back to the ground; that is normal, and new shoots come up in spring.</p>",
        "product_type": "Perennial",
        "options": [{"name": "Pot size", "values": ["9 cm", "2 litre"]}],
        "variants": [
            {"id": 81, "title": "9 cm", "option1": "9 cm", "price": "7.50", "available": True},
            {"id": 82, "title": "2 litre", "option1": "2 litre", "price": "14.00", "available": True},
        ],
    },
    _product(
        9,
        "Bench Care Kit",
        "bench-care-kit",
        "<p>Everything you need to look after a hardwood bench for a year:</p><ul><li>250 ml teak oil</li>"
        "<li>1 natural bristle brush</li><li>2 lint-free cloths</li></ul><p>Enough for two coats on a large bench."
        "</p>",
        "Wood care",
        "24.00",
    ),
    _product(
        10,
        "Gardener's Gift Hamper",
        "gardeners-gift-hamper",
        "<p>A wicker hamper for the gardener who has everything.</p><h3>What's inside</h3><table><thead><tr>"
        "<th>Item</th><th>Size</th></tr></thead><tbody><tr><td>Hand cream</td><td>50 ml</td></tr><tr><td>Twine "
        "in a tin</td><td>1</td></tr><tr><td>Seed packets</td><td>3</td></tr></tbody></table><p>Gift wrapped with "
        "a handwritten card.</p>",
        "Gift set",
        "45.00",
    ),
    _product(
        3,
        "Golden Teak Furniture Oil",
        "teak-furniture-oil",
        "<p>A linseed and tung oil blend that feeds weathered hardwood and brings back its colour.</p>"
        "<p>Heads-up: fresh oil is dark and sticky, so it can mark pale paving slabs and decking &ndash; oil your "
        "furniture on the lawn and let it dry overnight.</p><p>Re-oil twice a year, in spring and autumn.</p>",
        "Wood care",
        "16.00",
        metafields=[
            {
                "namespace": "disclosures",
                "key": "fire_warning",
                "type": "multi_line_text_field",
                "value": "Rags soaked in oil can self-ignite. Do not use near open flames. Lay used rags flat "
                "outdoors to dry before binning them.",
            },
        ],
    ),
]
SHIPPING = """---
type: shipping_policy
title: Delivery
---
# Delivery

## UK mainland

Parcels are delivered by DPD in 2-3 working days for £6.95. Benches and tables go by pallet courier at a charge of
£39.

## Ireland

We deliver to the Republic of Ireland by pallet courier for £79. Allow 5-7 working days. Orders to Ireland are
charged in euros at checkout, and customers in Ireland pay by card or PayPal.

## Frost covers

From November to March, a fleece frost cover is added to every parcel with plants for £2.50 per parcel. You can
ask us to leave the frost cover out, but frost damage to a parcel sent without a frost cover is not covered.

## Delivery days

Deliveries are Monday to Friday. Our courier texts you a one-hour window on the morning of delivery.
"""
REFUNDS = """---
type: refund_policy
title: Returns
---
# Returns

## Returns of cushions and covers

Cushions, seat pads and covers can be returned within 30 days of delivery for a refund, as long as they are:

- Unused and in their original packaging
- Sent back with the delivery note

**Return postage is paid by you.** We recommend a tracked service.

## Damaged items

Very occasionally a tin of oil leaks on its way to you. If anything arrives damaged, email us a photo within 7 days
and we will send a replacement.
"""
FAQ = """url: https://larchandlinseed.example/pages/faq
entries:
  - question: Can I pay in instalments?
    anchor: instalments
    answer: With Klarna you can spread payments over 3, 6 or 12 months (customers in England, Scotland and Wales,
      subject to Klarna's credit check). For other countries we accept PayPal and card.
  - question: Can I collect my order from the workshop?
    anchor: collection
    answer: Yes. Choose Workshop pickup at checkout, it's free, and we will email you when your order is ready.
  - question: Do you make furniture to measure?
    anchor: bespoke
    answer: We build benches to your measurements for a 20% surcharge; allow six weeks.
"""
SHOP = {
    "shop.toml": '[shop]\nname = "Larch & Linseed"\nurl = "https://larchandlinseed.example"\ncurrency = "GBP"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "faq.yaml": FAQ,
    "policies/delivery.md": SHIPPING,
    "policies/returns.md": REFUNDS,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("larch") / "shop", SHOP, embedder)


def test_storage_boxes_ask_for_room_not_data_storage(engine: Engine) -> None:
    assert not asked_measures("how much space is there under the bed for storage boxes")
    assert [m.name for m in asked_measures("how much storage does the tablet have?")] == ["storage"]
    answer = ask_plain(engine, "how much space is there under the shelf for storage boxes?", "larch-potting-bench")
    assert "25 cm" in answer and "not recorded" not in answer, answer


def test_a_label_ending_in_a_preposition_reads_as_a_predicate(engine: Engine) -> None:
    answer = ask_plain(engine, "is the splashback compatible with other benches?")
    assert "The Potting Bench Splashback is compatible with Larch Potting Bench" in answer, answer
    assert "Compatible with for" not in answer, answer


def test_a_likely_sentence_saying_the_questions_words_comes_before_a_notice(engine: Engine) -> None:
    answer = ask_plain(engine, "will it stain pale stone?", "teak-furniture-oil")
    assert "it can mark pale paving slabs" in answer, answer
    assert "self-ignite" not in answer, answer


def test_a_notice_sharing_only_a_light_verb_does_not_answer(engine: Engine) -> None:
    answer = ask_plain(engine, "how often should I use the teak oil on my bench?")
    assert "self-ignite" not in answer and "open flames" not in answer, answer


def test_a_fee_is_stated_by_its_amount(engine: Engine) -> None:
    for question in ("frost cover fee in winter - can i skip it", "is the frost cover fee optional"):
        answer = ask_plain(engine, question)
        assert "£2.50 per parcel" in answer, (question, answer)


def test_a_lead_in_is_quoted_with_its_list(engine: Engine) -> None:
    answer = ask_plain(engine, "can i return the seat pads if i didnt use them? who pays for return postage")
    assert "as long as they are: Unused and in their original packaging" in answer, answer


def test_an_faq_entry_is_no_places_section(engine: Engine) -> None:
    answer = ask_plain(engine, "Can I pay with Klarna instalments from Ireland?")
    assert "spread payments over 3, 6 or 12 months" in answer, answer


def test_a_vague_word_need_not_be_said(engine: Engine) -> None:
    answer = ask_plain(engine, "it came leaking everywhere what do i do")
    assert "leaks on its way to you" in answer, answer


def test_an_faq_entry_asking_the_same_answers_a_delivery_question(engine: Engine) -> None:
    answer = ask_plain(engine, "Can I collect my order myself to save on delivery?")
    assert "Workshop pickup" in answer, answer


def test_which_of_your_things_have_lists_the_catalogues(engine: Engine) -> None:
    for question in (
        "which of your acoustic guitars have a pickup built in?",
        "any deer resistant perennials for a full sun bed?",
        "i only have room for one tree, which ones dont need a pollinator?",
    ):
        assert parse_query(question).catalogue, question
    answer = ask_plain(engine, "what tables have you actually got in stock?")
    assert "Oak Garden Table" in answer and "Folding Bistro Table" in answer, answer


def test_a_colour_something_turns_is_no_colour_asked_for(engine: Engine) -> None:
    assert parse_query("help my geranium is turning yellow, is it dead?").colours == ()
    assert parse_query("does the soap turn the sink black?").colours == ()
    assert parse_query("do you have it in yellow?").colours == ("yellow",)
    assert not parse_query("it's dying back in october, is that normal?").stock
    assert parse_query("when will it be back in?").stock
    answer = ask_plain(engine, "help my geranium is turning yellow and dying back in october, did i kill it")
    assert "dies back to the ground" in answer, answer


def test_a_price_for_the_product_in_an_option_value_is_no_service_price(engine: Engine) -> None:
    assert not parse_query("what do you charge for a setup?").price  # a service's price, for a policy
    answer = ask_plain(engine, "price for a 2 litre rozanne?")
    assert "2 litre is £14.00" in answer, answer


def test_whats_in_a_kit_or_hamper_is_its_list(engine: Engine) -> None:
    kit = ask_plain(engine, "What's in the bench care kit?", "bench-care-kit")
    assert "250 ml teak oil; 1 natural bristle brush; 2 lint-free cloths" in kit, kit
    hamper = ask_plain(engine, "whats in the gift hamper?", "gardeners-gift-hamper")
    assert "Hand cream" in hamper and "Seed packets" in hamper, hamper
    assert "What's inside:" not in hamper, hamper  # never a lead-in without its list
    overview = ask_plain(engine, "tell me about this", "gardeners-gift-hamper")
    assert not overview.rstrip().endswith(":") and "What's inside: The" not in overview, overview


def test_a_line_denying_the_thing_asked_for_lists_no_product() -> None:
    from ask_engine.answering.catalogue import _denies

    wanted = content_stems("pickup built in")
    assert _denies("Acoustic only, no pickup – for the electro version look for the FGX800C.", wanted)
    assert _denies("Electronics: None – this is the straight acoustic.", wanted)
    assert _denies("Comes without a pickup.", wanted)
    assert not _denies("Taylor ES-B pickup with a built-in tuner.", wanted)
    assert not _denies("No batteries needed: the pickup is passive.", wanted)  # the negation is not about it
