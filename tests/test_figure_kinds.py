"""What kind of figure a question asks for, and what it asks at all, as two blind probe shops (bicycle parts, pet
supplies) found it: "how strong is the rope lead?" asked for no kind of figure, so "Tested to a breaking strain of
250 kg" was "not recorded"; "is there a weight limit?" was answered with the product's own weight; "are any of the
colours discounted?" was read as a question about discount codes; "can I get gift wrap on a balance bike?" as a
stock question. A small camping shop of another trade, indexed with the real embedding model and asked through
`Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.answering.addressing import asked_measures
from ask_engine.engine import Engine
from ask_engine.language import parse_query
from tests.shop_helpers import ask_plain, inline_engine

PRODUCTS = [
    {
        "id": 1,
        "title": "Drift Camping Hammock",
        "handle": "drift-hammock",
        "body_html": "<p>A parachute-nylon hammock with tree straps.</p><ul><li>Tested to a breaking load of 400 kg"
        "</li><li>Packs into its own pouch</li></ul>",
        "product_type": "Hammocks",
        "vendor": "Birchfold",
        "variants": [{"id": 11, "title": "Default Title", "price": "45.00", "available": True}],
        "metafields": [{"namespace": "specs", "key": "weight", "type": "single_line_text_field", "value": "540 g"}],
    },
    {
        "id": 2,
        "title": "Ridge Tarp 3x3",
        "handle": "ridge-tarp",
        "body_html": "<p>A square tarp with 16 tie-out points for any pitch.</p>",
        "product_type": "Tarps",
        "vendor": "Birchfold",
        "options": [{"name": "Colour", "values": ["Olive", "Sand"]}],
        "variants": [
            {
                "id": 21,
                "title": "Olive",
                "option1": "Olive",
                "price": "60.00",
                "compare_at_price": "80.00",
                "available": True,
            },
            {"id": 22, "title": "Sand", "option1": "Sand", "price": "80.00", "available": True},
        ],
        "metafields": [{"namespace": "specs", "key": "weight", "type": "single_line_text_field", "value": "820 g"}],
    },
]
FILES = {
    "shop.toml": '[shop]\nname = "Birchfold Camping"\nurl = "https://birchfold.example"\ncurrency = "GBP"\n'
    'gid_namespace = "birchfold"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "faq.yaml": """- question: Can you gift wrap my order?
  answer: Gift wrap is £3 per item. Hammocks can't be gift wrapped because of their tree straps.
- question: Do you offer discount codes?
  answer: Sign up to our newsletter for a 10% welcome code; codes can't be combined.
""",
}
HAMMOCK, TARP = "gid://birchfold/Product/1", "gid://birchfold/Product/2"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("birchfold") / "shop", FILES, embedder)


def test_strength_is_a_kind_of_figure_and_a_weight_limit_is_no_weight() -> None:
    assert [m.name for m in asked_measures("how strong is it?")] == ["strength"]
    assert [m.name for m in asked_measures("is there a weight limit?")] == ["strength"]
    assert [m.name for m in asked_measures("how much weight can it hold?")] == ["strength"]
    assert [m.name for m in asked_measures("how much does it weigh?")] == ["weight"]


def test_how_strong_is_answered_by_the_stated_load(engine: Engine) -> None:
    answer = ask_plain(engine, "how strong is it? I'm a big guy", HAMMOCK)
    assert "400 kg" in answer, answer


def test_a_weight_limit_is_not_answered_with_the_products_weight(engine: Engine) -> None:
    answer = ask_plain(engine, "is there a weight limit on the tarp?", TARP)
    assert "not recorded" in answer, answer
    # the product's weight may follow as the nearest recorded fact, never as the answer before it
    assert not answer.startswith("The weight"), answer


def test_discounted_asks_for_the_products_sale_price(engine: Engine) -> None:
    assert parse_query("are any of the colours discounted?").price
    assert parse_query("do you have a student discount?").policy
    answer = ask_plain(engine, "are any of the colours discounted?", TARP)
    assert "£60.00" in answer and "£80.00" in answer, answer
    assert "newsletter" not in answer, answer


def test_getting_a_service_is_no_stock_question(engine: Engine) -> None:
    assert not parse_query("can I get gift wrap on the hammock?").stock
    assert parse_query("can I get it now?").stock
    answer = ask_plain(engine, "can I get gift wrap on the hammock?")
    assert "can't be gift wrapped" in answer, answer
    assert "in stock" not in answer, answer
