"""What two probe shops written by someone who had not read the answerer found (a furniture shop in Shopify
products.json form and an electronics accessories shop; questions and expected answers written before anything
ran): headings and lists in product HTML, a list's one item, disclosure notices that answer, an FAQ reply word that
answers another question, a word no evidence uses, the buyer's own device, comparisons by a measure, labelled lines
and addresses on pages. A small shop of the same kinds, indexed with the real embedding model and asked through
`Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.engine import Engine
from tests.shop_helpers import ask_plain, inline_engine, plain

NS = "oakandamp"
SOFA, BED, CUSHION, MATTRESS, BANK, CABLE, CASE, CHARGER_S, CHARGER_L = (
    f"gid://{NS}/Product/{n}" for n in range(1, 10)
)


def _product(pid: int, title: str, body: str, **extra: Any) -> dict[str, Any]:
    variants = extra.pop("variants", None) or [
        {"id": pid * 100 + 1, "title": "Default Title", "option1": "Default Title", "price": "100.00"}
    ]
    options = extra.pop("options", None) or [{"name": "Title", "values": ["Default Title"]}]
    return {
        "id": pid,
        "title": title,
        "handle": title.lower().replace(" ", "-"),
        "body_html": body,
        "vendor": "Oak & Amp",
        "variants": variants,
        "options": options,
        **extra,
    }


PRODUCTS = [
    _product(
        1,
        "Marlow 3-Seater Sofa",
        "<p>A deep, comfortable three-seater for long evenings.</p>"
        "<p><strong>Dimensions:</strong> W 212 x D 96 x H 80 cm.</p>"
        "<h4>Materials</h4><ul><li>Kiln-dried beech frame</li><li>Seat cushions: foam wrapped in feather</li>"
        "<li>Solid oak feet</li></ul>"
        "<h4>Care</h4><ul><li>Covers are not removable</li><li>Vacuum weekly with a soft brush</li>"
        "<li>Blot spills straight away</li></ul>",
        product_type="Sofas",
    ),
    _product(
        2,
        "Thistle Bed Frame",
        "<p>A low ash bed frame with a panelled headboard.</p>"
        "<p>Headboard height 105 cm. Under-bed clearance 24 cm. External dimensions:<br>"
        "Single: W 100 x L 205 cm<br>Double: W 145 x L 205 cm<br>King: W 160 x L 215 cm</p>",
        product_type="Beds",
    ),
    _product(
        3,
        "Linen Scatter Cushion",
        "<p>Washed linen with a feather pad. 45 x 45 cm.</p>",
        product_type="Cushions",
        options=[{"name": "Colour", "values": ["Clay", "Sage", "Ink"]}],
        variants=[
            {"id": 301 + i, "title": c, "option1": c, "price": "35.00"} for i, c in enumerate(["Clay", "Sage", "Ink"])
        ],
    ),
    _product(
        4,
        "Cloud Pocket Mattress",
        "<p>1,500 pocket springs under a wool comfort layer. Medium-firm.</p>",
        product_type="Mattresses",
        metafields=[
            {
                "namespace": "disclosures",
                "key": "flammability",
                "type": "multi_line_text_field",
                "value": "Meets BS 7177 (resistance to ignition). Keep away from naked flames.",
            }
        ],
    ),
    _product(
        5,
        "Trek 20K Power Bank",
        "<p>Charges a laptop on the go.</p><ul><li>Capacity: 20,000 mAh (74 Wh)</li><li>Weight 430 g</li></ul>",
        product_type="Power Banks",
        metafields=[
            {
                "namespace": "disclosures",
                "key": "battery_safety",
                "type": "multi_line_text_field",
                "value": "Contains a lithium-ion battery. Do not puncture or crush it. Stop using it if it swells "
                "or gets unusually hot.",
            }
        ],
    ),
    _product(
        6,
        "USB-C to Lightning Cable",
        "<p>MFi certified, 1 m.</p><p>Note: iPhone 15 and later use USB-C and need a USB-C cable instead.</p>",
        product_type="Cables",
    ),
    _product(7, "Clear Case – iPhone 15 Series", "<p>Works with: iPhone 15, iPhone 15 Pro.</p>", product_type="Cases"),
    _product(10, "Glass Screen Protector – iPhone 15 (2-Pack)", "<p>Fits the iPhone 15.</p>", product_type="Screen"),
    _product(8, "Volt 30W Charger", "<p>A pocket charger. Weighs 60 g.</p>", product_type="Chargers"),
    _product(
        9, "Volt 140W Charger", "<p>A desktop charger with four ports. Weight 285 g.</p>", product_type="Chargers"
    ),
]

FILES = {
    "shop.toml": '[shop]\nname = "Oak & Amp"\nurl = "https://oakandamp.example"\ncurrency = "GBP"\n'
    f'language = "en"\ngid_namespace = "{NS}"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "policies/shipping-policy.md": "---\ntype: shipping_policy\ntitle: Delivery\n---\n# Delivery\n\n"
    "Small items travel by tracked courier in 3-5 working days. Furniture is delivered by our own team in 5-10 "
    "working days.\n",
    "pages/about-us.md": "---\ntype: page\ntitle: About Us\n---\n# About Us\n\n"
    "We design furniture and sell a few gadgets.\n\n## Visit our showroom\n\n"
    "Come and sit on every sofa at our showroom.\n\nArch 7, Mentmore Terrace\nLondon E8 3PH\n\n"
    "## Get in touch\n\nPhone: 020 7946 0321\nEmail: hello@oakandamp.example\n",
    "faq.yaml": "entries:\n  - question: Can I pay in instalments?\n    answer: Yes, we offer Klarna Pay in 3 on all "
    "orders.\n  - question: Do you offer gift wrapping?\n    answer: Not at the moment, but we can include a gift "
    "note.\n  - question: Do you sell phones?\n    answer: No - we sell accessories only, not phones or laptops.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("oakandamp") / "shop", FILES, embedder)


def ask(engine: Engine, query: str, *ids: str) -> str:
    return ask_plain(engine, query, *ids, asker="structure-test")


def test_a_heading_in_product_html_leads_its_list(engine: Engine) -> None:
    text = ask(engine, "What is the sofa frame made of?", SOFA)
    assert "beech frame" in text and "not recorded" not in text, text


def test_the_one_item_of_a_list_that_answers_stands_alone_with_its_lead_in(engine: Engine) -> None:
    text = ask(engine, "Are the sofa covers removable?", SOFA)
    assert "Covers are not removable" in text and "Vacuum" not in text, text


def test_a_lead_in_after_sentences_leads_its_list_alone(engine: Engine) -> None:
    text = ask(engine, "What are the external dimensions of the king size bed?", BED)
    assert "W 160 x L 215 cm" in text and "Headboard" not in text, text


def test_a_size_stated_in_the_description_answers_without_the_other_options(engine: Engine) -> None:
    text = ask(engine, "What size are the linen cushions?")
    assert "45 x 45 cm" in text and "colours" not in text.lower(), text


def test_a_figure_question_in_watt_hours_is_answered_by_the_line_stating_them(engine: Engine) -> None:
    text = ask(engine, "What is the Wh rating of the Trek power bank?")
    assert "74 Wh" in text and "not recorded" not in text, text


def test_a_disclosure_line_answers_and_never_beside_not_recorded(engine: Engine) -> None:
    text = ask(engine, "What should I do if the Trek power bank swells?")
    assert "Stop using it if it swells" in text and "not recorded" not in text, text
    text = ask(engine, "Is the Cloud mattress fire retardant?")
    assert "BS 7177" in text and "has not recorded" not in text, text


def test_an_faq_reply_word_never_answers_another_question(engine: Engine) -> None:
    text = ask(engine, "Can I pay with PayPal?")
    assert "PayPal" in text and not text.startswith("Yes") and "Yes, we offer" not in text, text
    assert "Yes, we offer Klarna" in ask(engine, "Can I pay in instalments?")


def test_a_question_word_no_evidence_uses_gets_no_unrelated_line(engine: Engine) -> None:
    text = ask(engine, "Do you offer a student discount?")
    assert "gift note" not in text and "Klarna" not in text, text
    text = ask(engine, "How long does delivery take?")
    assert "working days" in text, text


def test_the_buyers_own_device_is_not_another_product(engine: Engine) -> None:
    data = engine.ask({"query": "Will this cable work with my iPhone 15?", "ids": [CABLE]}).to_json()
    text = plain(data)
    assert "USB-C" in text and "Clear Case" not in text and "Screen Protector" not in text, text
    assert [link.get("id") for link in data["links"] if link["type"] == "product"] == [CABLE], data["links"]


def test_a_comparison_by_a_measure_states_each_products_figure(engine: Engine) -> None:
    text = ask(engine, "Which is lighter, the Volt 30W or the Volt 140W?")
    assert "60 g" in text and "285 g" in text and "not recorded" not in text, text


def test_a_labelled_page_line_needs_no_heading_and_an_address_keeps_its_postcode(engine: Engine) -> None:
    text = ask(engine, "What's your phone number?")
    assert "020 7946 0321" in text and "Get in touch" not in text, text
    text = ask(engine, "What's the showroom address?")
    assert "Mentmore Terrace" in text and "E8 3PH" in text, text


def test_a_do_you_sell_question_lists_the_goods_it_names_not_an_faq_reply(engine: Engine) -> None:
    text = ask(engine, "Do you sell chargers?")
    assert "Volt 30W Charger" in text and "Volt 140W Charger" in text and "No" not in text.split(), text
