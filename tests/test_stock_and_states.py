"""Stock as Shopify records it, and a home country's states, as two more blind probe shops found them (a bicycle
parts shop's product CSV and a pet supplies shop's GraphQL export, written by someone who had not read the answerer):
a variant with none in stock that the shop keeps selling (inventory policy "continue") was called "in stock"; "do
you have it in white, size S?" was answered "Yes" for a sold-out variant; "can I still order it, or are they out?"
was not read as a stock question; "how long does it take to get to Texas?" was not read as a shipping question, and
"Texas" found neither the "Central (…, OK, TX, …)" line nor anything but "the United States is not listed" in a US
shop whose policy says "US shipping rates". A small garden-tools shop exported as a Shopify product CSV, indexed with
the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ask_engine.chunking import passages
from ask_engine.countries import country_codes_in, region_named
from ask_engine.engine import Engine
from ask_engine.language import parse_query
from ask_engine.sources import ShopSource
from ask_engine.types import Variant
from tests.shop_helpers import ask_plain, inline_engine

COLUMNS = [
    "Handle",
    "Title",
    "Body (HTML)",
    "Vendor",
    "Type",
    "Tags",
    "Published",
    "Option1 Name",
    "Option1 Value",
    "Option2 Name",
    "Option2 Value",
    "Variant SKU",
    "Variant Inventory Tracker",
    "Variant Inventory Qty",
    "Variant Inventory Policy",
    "Variant Price",
]


def _rows() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []

    def add(handle: str, first: dict[str, str], variants: list[tuple[str, str, str, int, str, str]]) -> None:
        for n, (v1, v2, sku, qty, policy, price) in enumerate(variants):
            row = {"Handle": handle, "Option1 Value": v1, "Option2 Value": v2, "Variant SKU": sku}
            row |= {"Variant Inventory Tracker": "shopify", "Variant Inventory Qty": str(qty)}
            row |= {"Variant Inventory Policy": policy, "Variant Price": price}
            rows.append(first | row if n == 0 else row)

    add(
        "ashwood-pruning-saw",
        {
            "Title": "Ashwood Pruning Saw",
            "Body (HTML)": "<p>A folding saw with a 7-inch blade for branches up to 3 inches thick.</p>",
            "Vendor": "Ashwood",
            "Type": "Saws",
            "Published": "TRUE",
            "Option1 Name": "Title",
        },
        [("Default Title", "", "AW-SAW", 0, "continue", "34.00")],
    )
    add(
        "fieldline-gardening-gloves",
        {
            "Title": "Fieldline Gardening Gloves",
            "Body (HTML)": "<p>Goatskin gloves with a thorn-proof palm.</p>",
            "Vendor": "Fieldline",
            "Type": "Gloves",
            "Published": "TRUE",
            "Option1 Name": "Colour",
            "Option2 Name": "Size",
        },
        [
            ("Moss", "S", "FL-M-S", 5, "deny", "22.00"),
            ("Moss", "M", "FL-M-M", 5, "deny", "22.00"),
            ("Clay", "S", "FL-C-S", 0, "deny", "22.00"),
            ("Clay", "M", "FL-C-M", 4, "deny", "22.00"),
        ],
    )
    add(
        "brass-hose-nozzle",
        {
            "Title": "Brass Hose Nozzle",
            "Body (HTML)": "<p>A twist nozzle that goes from mist to jet.</p>",
            "Vendor": "Fieldline",
            "Type": "Watering",
            "Published": "TRUE",
            "Option1 Name": "Finish",
        },
        [("Brass", "", "NZ-BR", 4, "deny", "18.00"), ("Chrome", "", "NZ-CR", 0, "continue", "19.00")],
    )
    return rows


def _csv() -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS)
    writer.writeheader()
    for row in _rows():
        writer.writerow({c: row.get(c, "") for c in COLUMNS})
    return out.getvalue()


FILES = {
    "shop.toml": '[shop]\nname = "Larch Lane Garden Supply"\nurl = "https://larchlane.example"\ncurrency = "USD"\n'
    'gid_namespace = "larchlane"\n',
    "products.csv": _csv(),
    "policies/shipping.md": """---
type: shipping_policy
title: Shipping Policy
url: https://larchlane.example/policies/shipping-policy
---
# Shipping Policy
## US shipping rates
Ground shipping is $8.50, free on orders over $60. Orders leave our Missouri barn within two business days.
## Transit times by region
West (WA, OR, CA, NV, AZ): 2-4 business days.
South Central (TX, OK, AR, KS): 3-5 business days.
Express (2-day) is $19.00 to every state except Alaska and Hawaii.
Northeast (NY, NJ, PA, MA, CT): 4-6 business days.
Alaska and Hawaii: $24.00 flat, 8-12 business days.
## International
We ship to Canada and Mexico for $30.00, 7-14 business days.
""",
}
SAW, GLOVES, NOZZLE = "ashwood-pruning-saw", "fieldline-gardening-gloves", "brass-hose-nozzle"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("larchlane") / "shop", FILES, embedder)


def _variants(folder: Path, files: dict[str, str]) -> dict[str, Variant]:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    docs = [d for d in ShopSource(folder).documents() if d.kind == "product"]
    return {v.sku or v.title: v for d in docs for v in d.variants}


def test_a_variant_sold_at_zero_stock_is_on_backorder_not_in_stock(tmp_path: Path) -> None:
    found = _variants(tmp_path / "csv", {k: v for k, v in FILES.items() if k != "policies/shipping.md"})
    assert found["AW-SAW"].status == "backorder" and found["AW-SAW"].available is True
    assert found["FL-C-S"].status == "out_of_stock" and found["FL-M-S"].status == "in_stock"
    # Admin REST JSON says the same with inventory_quantity and inventory_policy
    variants = [
        {"id": 11, "title": "Default Title", "price": "5.00", "sku": "A", "inventory_management": "shopify",
         "inventory_quantity": 0, "inventory_policy": "continue"},
        {"id": 12, "title": "Default Title", "price": "5.00", "sku": "B", "inventory_management": "shopify",
         "inventory_quantity": -2, "inventory_policy": "deny"},
        {"id": 13, "title": "Default Title", "price": "5.00", "sku": "C", "inventory_management": None,
         "inventory_quantity": 0, "inventory_policy": "continue"},
    ]  # fmt: skip
    products = [{"id": n, "title": f"P{n}", "handle": f"p{n}", "variants": [v]} for n, v in enumerate(variants)]
    rest = {"shop.toml": FILES["shop.toml"], "products.json": json.dumps({"products": products})}
    found = _variants(tmp_path / "rest", rest)
    assert [found[s].status for s in "ABC"] == ["backorder", "out_of_stock", "in_stock"]


def test_the_passage_and_the_availability_fact_say_backorder(tmp_path: Path) -> None:
    folder = tmp_path / "shop"
    _variants(folder, {k: v for k, v in FILES.items() if k != "policies/shipping.md"})
    source = ShopSource(folder)
    docs = {d.title: d for d in source.documents() if d.kind == "product"}
    nozzle = docs["Brass Hose Nozzle"]
    availability = nozzle.fact("availability")
    assert availability is not None and "Chrome (out of stock, but can still be ordered)" in availability.value
    assert "in stock" in availability.value
    text = " ".join(p.text for p in passages(nozzle, source.info))
    assert "Variant Chrome (SKU NZ-CR): $19.00, out of stock, but can still be ordered." in text, text


def test_a_backordered_product_is_not_called_in_stock(engine: Engine) -> None:
    answer = ask_plain(engine, "Can I order the pruning saw right now?")
    assert "out of stock, but can still be ordered" in answer, answer
    assert "is in stock" not in answer, answer


def test_still_order_or_are_they_out_asks_about_stock(engine: Engine) -> None:
    assert parse_query("can I still order the chrome nozzle, or is it out?").stock
    assert parse_query("can I still buy these?").stock
    answer = ask_plain(engine, "can I still order the chrome hose nozzle, or is it out?")
    assert "Chrome" in answer and "can still be ordered" in answer, answer


def test_a_sold_out_combination_is_not_answered_yes(engine: Engine) -> None:
    answer = ask_plain(engine, "do you have the gardening gloves in clay, size small?")
    assert not answer.startswith("Yes"), answer
    assert "Clay / S is sold out" in answer, answer
    answer = ask_plain(engine, "do you have the gardening gloves in clay, size medium?")
    assert answer.startswith("Yes"), answer


def test_us_in_merchant_prose_is_the_country_and_in_capitals_the_pronoun() -> None:
    assert country_codes_in("US shipping rates") == ("US",)
    assert country_codes_in("Alaska, Hawaii and US territories ship by USPS.") == ("US",)
    assert country_codes_in("CONTACT US") == ()
    assert country_codes_in("Write to us today") == ()


def test_getting_to_a_state_is_a_shipping_question() -> None:
    assert region_named("how long does it take to get to Texas?") == ("US", "Texas")
    intent = parse_query("how long does it take to get to Texas?")
    assert intent.shipping and intent.shipping_place
    assert not parse_query("how long does it take to get to grips with?").shipping


def test_a_state_is_found_by_its_code_in_a_region_line(engine: Engine) -> None:
    answer = ask_plain(engine, "how long does it take to get to Texas?")
    assert "3-5 business days" in answer, answer
    assert "not listed" not in answer, answer
    answer = ask_plain(engine, "do you ship to Oklahoma?")
    assert "South Central" in answer and "not listed" not in answer, answer


def test_a_states_own_line_comes_before_the_countrys_rates(engine: Engine) -> None:
    answer = ask_plain(engine, "what does it cost to ship to Hawaii?")
    assert "$24.00" in answer, answer
    assert answer.index("$24.00") < (answer.index("$8.50") if "$8.50" in answer else len(answer)), answer


def test_express_alone_asks_about_delivery(engine: Engine) -> None:
    assert parse_query("I'm in Darwin – can I pay for express?").shipping
    assert not parse_query("do you have express checkout?").shipping
    answer = ask_plain(engine, "I'm in Tulsa, can I pay for express?")
    assert "Tulsa is in Oklahoma" in answer and "South Central" in answer, answer
