"""sources: shop folders (Shopify JSON/CSV, Markdown/HTML policies and pages, FAQ) → Documents, ids and errors."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from ask_engine.errors import SourceError
from ask_engine.protocols import CatalogSource
from ask_engine.sources import (
    ShopSource,
    alias_key,
    alias_keys,
    load_documents,
    load_shop_info,
    slugify,
)
from ask_engine.types import Document, ShopInfo

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_SHOP = ROOT / "eval" / "shops" / "fjord-fell"
FIXTURES = ROOT / "tests" / "fixtures" / "shops"

SHOP_TOML = """\
[shop]
name = "Test Outfitters"
url = "https://test-outfitters.example/"
currency = "GBP"
gid_namespace = "testout"
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def shop(tmp_path: Path, files: dict[str, str], toml: str = SHOP_TOML) -> list[Document]:
    write(tmp_path, {"shop.toml": toml, **files})
    return load_documents(tmp_path)[1]


def by_id(docs: list[Document]) -> dict[str, Document]:
    return {d.id: d for d in docs}


def facts(doc: Document) -> dict[str, str]:
    return {f.key: f.value for f in doc.facts}


def source_error(path: Path) -> SourceError:
    with pytest.raises(SourceError) as info:
        load_documents(path)
    return info.value


def storefront_product(**overrides: Any) -> dict[str, Any]:
    """A product as Shopify's storefront /products.json gives it."""
    product: dict[str, Any] = {
        "id": 501,
        "title": "Tarn Wellington Boot",
        "handle": "tarn-wellington-boot",
        "body_html": "<p>A <strong>natural rubber</strong> boot.</p><ul><li>Neoprene lining</li><li>Grippy sole</li></ul>",
        "vendor": "Fjord & Fell",
        "product_type": "Wellington boots",
        "tags": ["waterproof", "boots"],
        "options": [{"name": "Colour", "position": 1, "values": ["Olive", "Black"]}, {"name": "Size", "values": ["37", "38"]}],
        "variants": [
            {"id": 5011, "title": "Olive / 37", "option1": "Olive", "option2": "37", "sku": "TARN-OL-37", "price": "65.00", "compare_at_price": None, "available": False},
            {"id": 5012, "title": "Olive / 38", "option1": "Olive", "option2": "38", "sku": "TARN-OL-38", "price": "65.00", "compare_at_price": "80.00", "available": True},
            {"id": 5013, "title": "Black / 37", "option1": "Black", "option2": "37", "sku": "TARN-BK-37", "price": "65.00", "available": True},
        ],
        "metafields": [
            {"namespace": "specs", "key": "material", "value": "natural rubber", "type": "single_line_text_field"},
            {"namespace": "specs", "key": "waterproof", "value": "true", "type": "boolean"},
            {"namespace": "disclosures", "key": "safety", "value": "**Not** for use near open flames.", "type": "multi_line_text_field"},
        ],
    }  # fmt: skip
    product.update(overrides)
    return product


POLICY_MD = """\
---
type: refund_policy
title: Refund policy
disclosures:
  consumer_rights: Your statutory rights are not affected.
---
# Refund policy

We want you to love your kit.

## Returns window {#window}

You can return items within **30 days** of delivery. See [our FAQ](/pages/faq).

## Non-returnable items

- Food
- Gift cards

### Sizes

| UK | EU | Foot length |
|----|----|-------------|
| 7  | 41 | 26 cm       |
| 8  | 42 | 27 cm       |
"""


# --------------------------------------------------------------------------------------------------- shop.toml


def test_shop_info_reads_the_shop_table_and_strips_the_trailing_slash(tmp_path: Path) -> None:
    write(tmp_path, {"shop.toml": SHOP_TOML + 'disclosure_namespace = "legal"\nfacts_namespaces = ["specs"]\n'})
    info = load_shop_info(tmp_path)
    assert (info.name, info.url, info.currency, info.gid_namespace) == (
        "Test Outfitters",
        "https://test-outfitters.example",
        "GBP",
        "testout",
    )
    assert info.disclosure_namespace == "legal"
    assert info.facts_namespaces == ("specs",)


def test_shop_info_defaults_disclosure_namespace_and_all_fact_namespaces(tmp_path: Path) -> None:
    write(tmp_path, {"shop.toml": '[shop]\nname = "A"\nurl = "https://a.example"\n'})
    info = load_shop_info(tmp_path)
    assert info.disclosure_namespace == "disclosures"
    assert info.facts_namespaces is None


def test_shop_synonyms_are_read_from_their_own_table(tmp_path: Path) -> None:
    toml = '[shop]\nname = "A"\nurl = "https://a.example"\n\n[synonyms]\nwellington = ["wellies", " welly "]\n'
    write(tmp_path, {"shop.toml": toml + '"sun  cream" = "sunscreen"\n'})
    info = load_shop_info(tmp_path)
    assert info.synonyms == (("wellington", ("wellies", "welly")), ("sun cream", ("sunscreen",)))
    assert ShopInfo.from_dict(json.loads(json.dumps(asdict(info)))) == info  # as the index manifest keeps it


def test_missing_shop_toml_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        load_shop_info(tmp_path)
    assert info.value.file == "shop.toml"


@pytest.mark.parametrize(
    ("toml", "where"),
    [
        ('[shop]\nurl = "https://a.example"\n', "shop.name"),
        ('[shop]\nname = "A"\n', "shop.url"),
        ('[shop]\nname = "A"\nurl = "a.example"\n', "shop.url"),
        ('[shop]\nname = "A"\nurl = "https://a.example"\nfacts_namespaces = "specs"\n', "shop.facts_namespaces"),
        ('name = "A"\n', "shop"),
        ('[shop]\nname = "A"\nurl = "https://a.example"\n[synonyms]\nwellington = []\n', "synonyms.wellington"),
        ('[shop]\nname = "A"\nurl = "https://a.example"\n[synonyms]\nwellington = [1]\n', "synonyms.wellington"),
        ('synonyms = "wellies"\n[shop]\nname = "A"\nurl = "https://a.example"\n', "synonyms"),
    ],
)
def test_invalid_shop_toml_names_the_field(tmp_path: Path, toml: str, where: str) -> None:
    write(tmp_path, {"shop.toml": toml})
    with pytest.raises(SourceError) as info:
        load_shop_info(tmp_path)
    assert (info.value.file, info.value.where) == ("shop.toml", where)


# --------------------------------------------------------------------------------------------------- products JSON


def test_storefront_product_gets_a_generated_gid_url_variants_and_facts(tmp_path: Path) -> None:
    docs = shop(tmp_path, {"products.json": json.dumps({"products": [storefront_product()]})})
    (doc,) = docs
    assert doc.id == "product:gid://testout/Product/501"
    assert doc.gid == "gid://testout/Product/501"
    assert doc.url == "https://test-outfitters.example/products/tarn-wellington-boot"
    assert [v.gid for v in doc.variants] == [f"gid://testout/ProductVariant/{n}" for n in (5011, 5012, 5013)]
    assert doc.variants[0].options == (("Colour", "Olive"), ("Size", "37"))
    assert [v.available for v in doc.variants] == [False, True, True]
    found = facts(doc)
    assert found["vendor"] == "Fjord & Fell"
    assert found["product_type"] == "Wellington boots"
    assert found["material"] == "natural rubber"
    assert found["waterproof"] == "yes"
    assert found["price"] == "£65.00"
    assert "Olive / 38" in found["sale"] and "£80.00" in found["sale"]
    assert found["colour_options"] == "Olive, Black"
    assert found["size_options"] == "37, 38"
    assert "Olive / 37" in found["availability"] and "sold out" in found["availability"]
    labels = {f.key: f.label for f in doc.facts}
    assert labels["vendor"] == "Brand" and labels["colour_options"] == "Colours"
    assert doc.tags == ("waterproof", "boots")
    assert doc.body.splitlines() == ["A natural rubber boot.", "Neoprene lining.", "Grippy sole."]


def test_markup_the_merchant_entity_escaped_is_never_decoded_into_text(tmp_path: Path) -> None:
    escaped = (
        "<p>A natural rubber boot.</p>"
        "<p>&lt;script&gt;alert(document.cookie)&lt;/script&gt;</p>"
        "<p>Grippy sole &lt;img src=x onerror=alert(1)&gt; for mud.</p>"
        "<p>&amp;lt;b onmouseover=alert(2)&amp;gt;Lined.</p>"
        '<p>&lt;a href="javascript:alert(3)"&gt;Neoprene&lt;/a&gt; lining.</p>'
    )
    plain_description = "Packs flat.\n<iframe src=javascript:alert(4)></iframe>\n<b>Light</b> and warm."
    policy = "---\ntype: refund_policy\n---\n# Refunds\n\nRefunds in 14 days. &lt;img src=x onerror=alert(5)&gt;\n"
    docs = by_id(
        shop(
            tmp_path,
            {
                "products.json": json.dumps(
                    {
                        "products": [
                            storefront_product(body_html=escaped),
                            storefront_product(
                                id=502, handle="second", title="Second", body_html=None, description=plain_description
                            ),
                        ]
                    }
                ),
                "policies/refund.md": policy,
            },
        )
    )
    boot = docs["product:gid://testout/Product/501"]
    assert boot.body.splitlines() == [
        "A natural rubber boot.",
        "Grippy sole for mud.",
        "Lined.",
        "Neoprene lining.",
    ]
    assert docs["product:gid://testout/Product/502"].body.splitlines() == ["Packs flat.", "Light and warm."]
    refund = docs["policy:refund_policy"]
    texts = [boot.body, docs["product:gid://testout/Product/502"].body, *(s.text for s in refund.sections)]
    assert all("<" not in t and "alert" not in t for t in texts), texts
    assert "Refunds in 14 days." in refund.sections[-1].text


def test_disclosure_namespace_metafields_become_verbatim_disclosures_and_readable_facts(tmp_path: Path) -> None:
    (doc,) = shop(tmp_path, {"products.json": json.dumps([storefront_product()])})
    assert [(d.code, d.content, d.content_type) for d in doc.disclosures] == [
        ("safety", "**Not** for use near open flames.", "markdown")
    ]
    # the notice verbatim (markdown) as the disclosure; as a fact, what a reader sees of it
    assert [(f.key, f.value, f.source) for f in doc.facts if f.key == "safety"] == [
        ("safety", "Not for use near open flames.", "disclosure")
    ]


def test_facts_namespaces_limits_which_metafields_become_facts(tmp_path: Path) -> None:
    product = storefront_product()
    product["metafields"].append({"namespace": "seo", "key": "hidden", "value": "1", "type": "number_integer"})
    toml = SHOP_TOML + 'facts_namespaces = ["specs"]\n'
    (doc,) = shop(tmp_path, {"products.json": json.dumps([product])}, toml)
    assert "material" in facts(doc)
    assert "hidden" not in facts(doc)


def test_admin_rest_fixture_keeps_gids_splits_tags_and_reads_inventory() -> None:
    info, docs = load_documents(FIXTURES / "admin-shop")
    raw = json.loads((FIXTURES / "admin-shop" / "products.json").read_text("utf-8"))["products"]
    active = [p for p in raw if p.get("status") not in ("draft", "archived")]
    products = [d for d in docs if d.kind == "product"]
    assert [d.gid for d in products] == [p["admin_graphql_api_id"] for p in active]
    assert len(active) < len(raw), "the fixture holds a draft product"
    for product, doc in zip(active, products, strict=True):
        assert doc.tags == tuple(t.strip() for t in product["tags"].split(",") if t.strip())
        assert [v.gid for v in doc.variants] == [v["admin_graphql_api_id"] for v in product["variants"]]
        for variant, parsed in zip(product["variants"], doc.variants, strict=True):
            expected = variant["inventory_quantity"] > 0 or variant["inventory_policy"] == "continue"
            if variant.get("inventory_management") is None:
                expected = True
            assert parsed.available is expected
    assert info.currency == "EUR"
    assert all(f.value.startswith(("€", "from €")) for d in products for f in d.facts if f.key == "price")


def test_draft_and_archived_products_are_skipped(tmp_path: Path) -> None:
    products = [
        storefront_product(id=1, handle="live", status="active"),
        storefront_product(id=2, handle="draft", status="draft"),
        storefront_product(id=3, handle="old", status="ARCHIVED"),
    ]
    docs = shop(tmp_path, {"products.json": json.dumps({"products": products})})
    assert [d.handle for d in docs] == ["live"]


def test_admin_graphql_shape_keeps_gids_and_reads_connections(tmp_path: Path) -> None:
    node = {
        "id": "gid://shopify/Product/42",
        "title": "Fell Flask",
        "handle": "fell-flask",
        "descriptionHtml": "<p>Keeps tea hot for 12 hours.</p>",
        "productType": "Flasks",
        "vendor": "Fjord & Fell",
        "status": "ACTIVE",
        "tags": ["flask"],
        "options": [{"name": "Size", "optionValues": [{"name": "500 ml"}, {"name": "1 L"}]}],
        "variants": {
            "edges": [
                {"node": {"id": "gid://shopify/ProductVariant/421", "title": "500 ml", "sku": "FLASK-05", "price": "25.00",
                          "availableForSale": True, "selectedOptions": [{"name": "Size", "value": "500 ml"}]}},
                {"node": {"id": "gid://shopify/ProductVariant/422", "title": "1 L", "sku": "FLASK-10",
                          "price": {"amount": "35.0", "currencyCode": "GBP"}, "inventoryQuantity": 0,
                          "inventoryPolicy": "CONTINUE", "selectedOptions": [{"name": "Size", "value": "1 L"}]}},
            ]
        },
        "metafields": {"nodes": [{"namespace": "specs", "key": "capacity", "type": "volume", "value": '{"value": 0.5, "unit": "LITERS"}'}]},
    }  # fmt: skip
    draft = {**node, "id": "gid://shopify/Product/43", "handle": "draft-flask", "status": "DRAFT"}
    data = {"data": {"products": {"edges": [{"node": node}, {"node": draft}]}}}
    (doc,) = shop(tmp_path, {"products/graphql.json": json.dumps(data)})
    assert doc.gid == "gid://shopify/Product/42"
    assert [v.gid for v in doc.variants] == ["gid://shopify/ProductVariant/421", "gid://shopify/ProductVariant/422"]
    assert [v.available for v in doc.variants] == [True, True]
    assert facts(doc)["price"] == "from £25.00 to £35.00"
    assert facts(doc)["capacity"] == "0.5 l"
    assert facts(doc)["size_options"] == "500 ml, 1 L"
    assert "42" in doc.aliases and "421" in doc.aliases
    assert doc.body == "Keeps tea hot for 12 hours."


def test_products_without_ids_get_handle_based_gids(tmp_path: Path) -> None:
    product = {
        "title": "Hand-Knitted Hat",
        "variants": [{"sku": "HAT-1", "price": 20}, {"price": "22.50"}],
    }
    (doc,) = shop(tmp_path, {"products.json": json.dumps([product])})
    assert doc.handle == "hand-knitted-hat"
    assert doc.gid == "gid://testout/Product/hand-knitted-hat"
    assert [v.gid for v in doc.variants] == [
        "gid://testout/ProductVariant/HAT-1",
        "gid://testout/ProductVariant/hand-knitted-hat-2",
    ]
    assert doc.variants[0].price == "20.00"
    assert facts(doc)["price"] == "from £20.00 to £22.50"


@pytest.mark.parametrize(
    ("mtype", "value", "expected"),
    [
        ("boolean", "false", "no"),
        ("boolean", True, "yes"),
        ("list.single_line_text_field", '["Olive", "Black", "Navy"]', "Olive, Black and Navy"),
        ("list.single_line_text_field", '["Olive"]', "Olive"),
        ("weight", '{"value": 640.0, "unit": "GRAMS"}', "640 g"),
        ("weight", '{"value": 1.2, "unit": "kg"}', "1.2 kg"),
        ("dimension", '{"value": 26, "unit": "cm"}', "26 cm"),
        ("list.dimension", '[{"value": 26, "unit": "cm"}, {"value": 30, "unit": "cm"}]', "26 cm and 30 cm"),
        ("volume", '{"value": 750, "unit": "ml"}', "750 ml"),
        ("volume", '{"value": 12, "unit": "us_fl_oz"}', "12 US fl oz"),
        # a unit code no table knows is written as words, never as the code
        ("volume", '{"value": 12, "unit": "US_FLUID_OUNCES"}', "12 us fluid ounces"),
        ("rating", '{"value": "4.5", "scale_min": "1.0", "scale_max": "5.0"}', "4.5 out of 5"),
        ("money", '{"amount": "12.5", "currency_code": "EUR"}', "€12.50"),
        ("money", '{"amount": "1200", "currency_code": "JPY"}', "¥1,200"),
        ("money", '{"amount": "10", "currency_code": "CHF"}', "10.00 CHF"),
        ("json", '{"fill": "duck down", "fill_power": 650}', "Fill: duck down; Fill power: 650"),
        (
            "rich_text_field",
            json.dumps(
                {
                    "type": "root",
                    "children": [
                        {"type": "paragraph", "children": [{"type": "text", "value": "Hand wash only."}]},
                        {
                            "type": "list",
                            "listType": "unordered",
                            "children": [
                                {"type": "list-item", "children": [{"type": "text", "value": "cold water"}]},
                                {"type": "list-item", "children": [{"type": "text", "value": "no bleach"}]},
                            ],
                        },
                    ],
                }
            ),
            "Hand wash only. cold water and no bleach.",
        ),
        ("multi_line_text_field", "Line one\nLine two", "Line one; Line two"),
        ("number_decimal", "2.50", "2.50"),
        (None, "TRUE", "yes"),
        # a CSV export's rating cell has no type; its shape says what it is (a blind board-game shop's "Product rating")
        (None, '{"scale_min": "1.0", "scale_max": "5.0", "value": "4.6"}', "4.6 out of 5"),
    ],
)
def test_metafield_values_are_humanised_by_type(tmp_path: Path, mtype: str | None, value: Any, expected: str) -> None:
    field = {"namespace": "specs", "key": "thing", "value": value}
    if mtype:
        field["type"] = mtype
    product = storefront_product(metafields=[field])
    (doc,) = shop(tmp_path, {"products.json": json.dumps([product])})
    assert facts(doc)["thing"] == expected


def test_reference_metafields_are_left_out(tmp_path: Path) -> None:
    field = {
        "namespace": "specs",
        "key": "related",
        "value": '["gid://shopify/Product/1"]',
        "type": "list.product_reference",
    }
    (doc,) = shop(tmp_path, {"products.json": json.dumps([storefront_product(metafields=[field])])})
    assert "related" not in facts(doc)
    # untyped, as a CSV export's "Complementary products" column gives it: a list of GIDs is still references
    field = {
        "namespace": "discovery",
        "key": "related",
        "value": '["gid://shopify/Product/1","gid://shopify/Product/2"]',
    }
    (doc,) = shop(tmp_path / "csv", {"products.json": json.dumps([storefront_product(metafields=[field])])})
    assert "related" not in facts(doc)


def test_metafield_label_is_humanised_from_its_key(tmp_path: Path) -> None:
    field = {"namespace": "specs", "key": "country_of_origin", "value": "Portugal", "type": "single_line_text_field"}
    (doc,) = shop(tmp_path, {"products.json": json.dumps([storefront_product(metafields=[field])])})
    assert [(f.label, f.source) for f in doc.facts if f.key == "country_of_origin"] == [
        ("Country of origin", "metafield")
    ]


def test_metafield_shorthand_object_is_accepted(tmp_path: Path) -> None:
    metafields = {"specs": {"material": "wool", "weight": {"type": "weight", "value": {"value": 300, "unit": "g"}}}}
    (doc,) = shop(tmp_path, {"products.json": json.dumps([storefront_product(metafields=metafields)])})
    assert facts(doc)["material"] == "wool"
    assert facts(doc)["weight"] == "300 g"


# --------------------------------------------------------------------------------------------------- products CSV


def export_csv(rows: list[dict[str, str]]) -> str:
    header = [
        "Handle", "Title", "Body (HTML)", "Vendor", "Type", "Tags", "Published", "Option1 Name", "Option1 Value",
        "Option2 Name", "Option2 Value", "Variant SKU", "Variant Inventory Tracker", "Variant Inventory Qty",
        "Variant Inventory Policy", "Variant Price", "Variant Compare At Price", "Image Src", "Status",
        "Material (product.metafields.specs.material)", "Allergens (product.metafields.disclosures.allergens)",
    ]  # fmt: skip
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header)
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return out.getvalue()


def test_csv_continuation_rows_become_variants_of_the_first_row(tmp_path: Path) -> None:
    text = export_csv(
        [
            {"Handle": "trail-mix", "Title": "Trail Mix", "Body (HTML)": "<p>Nuts and\nfruit.</p>", "Vendor": "Fell Foods",
             "Type": "Snacks", "Tags": "food, vegan", "Published": "TRUE", "Option1 Name": "Size", "Option1 Value": "100 g",
             "Option2 Name": "Flavour", "Option2 Value": "Salted", "Variant SKU": "TM-100-S", "Variant Inventory Tracker": "shopify",
             "Variant Inventory Qty": "0", "Variant Inventory Policy": "deny", "Variant Price": "3.50", "Status": "active",
             "Material (product.metafields.specs.material)": "Peanuts, raisins",
             "Allergens (product.metafields.disclosures.allergens)": "Contains **peanuts**."},
            {"Handle": "trail-mix", "Option1 Value": "250 g", "Option2 Value": "Salted", "Variant SKU": "TM-250-S",
             "Variant Inventory Tracker": "shopify", "Variant Inventory Qty": "4", "Variant Inventory Policy": "deny", "Variant Price": "7.00",
             "Variant Compare At Price": "8.00"},
            {"Handle": "trail-mix", "Option1 Value": "250 g", "Option2 Value": "Sweet", "Variant Inventory Tracker": "",
             "Variant Price": "7.00"},
            {"Handle": "trail-mix", "Image Src": "https://cdn.example/trail-mix-2.jpg"},
            {"Handle": "old-mix", "Title": "Old Mix", "Status": "archived", "Variant Price": "1.00"},
            {"Handle": "old-mix", "Option1 Value": "x", "Variant Price": "1.00"},
            {"Handle": "hidden", "Title": "Hidden", "Published": "FALSE", "Variant Price": "1.00"},
        ]
    )  # fmt: skip
    (doc,) = shop(tmp_path, {"products.csv": text})
    assert doc.gid == "gid://testout/Product/trail-mix"
    assert [v.title for v in doc.variants] == ["100 g / Salted", "250 g / Salted", "250 g / Sweet"]
    assert [v.gid for v in doc.variants] == [
        "gid://testout/ProductVariant/TM-100-S",
        "gid://testout/ProductVariant/TM-250-S",
        "gid://testout/ProductVariant/trail-mix-3",
    ]
    assert [v.available for v in doc.variants] == [False, True, True]
    assert doc.options == (("Size", ("100 g", "250 g")), ("Flavour", ("Salted", "Sweet")))
    assert doc.tags == ("food", "vegan")
    assert doc.body == "Nuts and fruit."
    assert facts(doc)["material"] == "Peanuts, raisins"
    assert [(d.code, d.content) for d in doc.disclosures] == [("allergens", "Contains **peanuts**.")]
    assert "250 g / Salted" in facts(doc)["sale"]


def test_csv_fixture_groups_rows_by_handle() -> None:
    path = FIXTURES / "csv-shop"
    _, docs = load_documents(path)
    rows = list(csv.DictReader((path / "products.csv").read_text("utf-8").splitlines()))
    handles = list(dict.fromkeys(r["Handle"] for r in rows))
    products = [d for d in docs if d.kind == "product"]
    assert [d.handle for d in products] == handles
    for doc in products:
        mine = [r for r in rows if r["Handle"] == doc.handle and (r["Variant SKU"] or r["Variant Price"])]
        assert len(doc.variants) == len(mine)
        assert [v.sku for v in doc.variants] == [r["Variant SKU"] or None for r in mine]
        assert doc.gid == f"gid://penninecandles/Product/{doc.handle}"


# --------------------------------------------------------------------------------------------------- policies, pages


def test_markdown_policy_splits_on_headings_with_anchors_and_front_matter_disclosures(tmp_path: Path) -> None:
    docs = by_id(shop(tmp_path, {"policies/refund.md": POLICY_MD}))
    doc = docs["policy:refund_policy"]
    assert (doc.kind, doc.link_type, doc.title) == ("policy", "refund_policy", "Refund policy")
    assert doc.url == "https://test-outfitters.example/policies/refund-policy"
    assert [(s.heading, s.anchor, s.url) for s in doc.sections] == [
        ("Refund policy", "", doc.url),
        ("Returns window", "window", doc.url + "#window"),
        ("Non-returnable items", "non-returnable-items", doc.url + "#non-returnable-items"),
        ("Sizes", "sizes", doc.url + "#sizes"),
    ]
    window = doc.sections[1].text
    assert window == "You can return items within 30 days of delivery. See our FAQ."
    assert doc.sections[2].text.splitlines() == ["Food.", "Gift cards."]
    assert doc.sections[3].text.splitlines() == [
        "UK: 7, EU: 41, Foot length: 26 cm.",
        "UK: 8, EU: 42, Foot length: 27 cm.",
    ]
    assert [(d.code, d.content) for d in doc.disclosures] == [
        ("consumer_rights", "Your statutory rights are not affected.")
    ]
    assert doc.aliases == ("/policies/refund-policy",)


def test_html_policy_splits_on_h1_to_h4_and_keeps_id_anchors(tmp_path: Path) -> None:
    html = """---
type: shipping_policy
url: /policies/shipping
---
<h1>Shipping</h1>
<p>We ship from Cobh.</p>
<div><h2 id="eu">European Union</h2><p>Tracked, <em>5-7 days</em>.<br>€9.95.</p></div>
<h3>Norway &amp; Switzerland</h3>
<table><thead><tr><th>Service</th><th>Cost</th></tr></thead><tbody><tr><td>Tracked</td><td>€19</td></tr></tbody></table>
<h5>Small print</h5><p>Customs fees apply.</p>
<script>alert("x")</script>
"""
    (doc,) = shop(tmp_path, {"policies/shipping.html": html})
    assert doc.id == "policy:shipping_policy"
    assert doc.title == "Shipping"
    assert doc.url == "https://test-outfitters.example/policies/shipping"
    assert [(s.heading, s.anchor) for s in doc.sections] == [
        ("Shipping", ""),
        ("European Union", "eu"),
        ("Norway & Switzerland", "norway-switzerland"),
    ]
    assert doc.sections[1].text.splitlines() == ["Tracked, 5-7 days.", "€9.95."]
    assert doc.sections[2].text.splitlines() == ["Service: Tracked, Cost: €19.", "Small print:", "Customs fees apply."]
    assert "alert" not in doc.body


def test_policy_type_comes_from_the_file_name_when_front_matter_has_none(tmp_path: Path) -> None:
    (doc,) = shop(tmp_path, {"policies/terms-of-service.md": "# Terms\n\nBe nice.\n"})
    assert doc.id == "policy:terms_of_service"
    assert doc.url.endswith("/policies/terms-of-service")


def test_unknown_policy_type_names_file_and_field(tmp_path: Path) -> None:
    write(tmp_path, {"shop.toml": SHOP_TOML, "policies/returns.md": "---\ntitle: Returns\ntype: returns\n---\nText.\n"})
    err = source_error(tmp_path)
    assert (err.file, err.where) == ("policies/returns.md", "front matter: type")
    assert "refund_policy" in err.problem and "line 3" in err.problem


def test_page_defaults_type_and_url_and_uses_the_first_h1_as_title(tmp_path: Path) -> None:
    docs = by_id(
        shop(
            tmp_path,
            {
                "pages/Size Guide.md": "---\ntype: size_guide\n---\n# Size guide\n\nMeasure your feet.\n",
                "pages/about.html": "<h1>About us</h1><p>Since 2016.</p>",
            },
        )
    )
    guide = docs["page:size-guide"]
    assert (guide.kind, guide.link_type, guide.title) == ("page", "size_guide", "Size guide")
    assert guide.url == "https://test-outfitters.example/pages/size-guide"
    about = docs["page:about"]
    assert (about.link_type, about.title, about.body) == ("page", "About us", "Since 2016.")
    assert about.aliases == ("/pages/about",)


def test_page_without_title_or_h1_names_the_title_field(tmp_path: Path) -> None:
    write(tmp_path, {"shop.toml": SHOP_TOML, "pages/x.md": "## Not a title\n\nText.\n"})
    err = source_error(tmp_path)
    assert (err.file, err.where) == ("pages/x.md", "front matter: title")


def test_front_matter_disclosures_as_a_list(tmp_path: Path) -> None:
    page = "---\ntitle: Knives\ndisclosures:\n  - code: age_restricted\n    content: Over 18s only.\n---\nText.\n"
    (doc,) = shop(tmp_path, {"pages/knives.md": page})
    assert [(d.code, d.content) for d in doc.disclosures] == [("age_restricted", "Over 18s only.")]


def test_duplicate_anchors_get_numbered(tmp_path: Path) -> None:
    page = "---\ntitle: Stores\n---\n## Hours\n\nA.\n\n## Hours\n\nB.\n"
    (doc,) = shop(tmp_path, {"pages/stores.md": page})
    assert [s.anchor for s in doc.sections] == ["hours", "hours-1"]


# --------------------------------------------------------------------------------------------------- FAQ


def test_faq_yaml_entries_become_documents_with_anchors(tmp_path: Path) -> None:
    faq = """\
url: /pages/help
entries:
  - question: Do you ship to Norway?
    answer: Yes, in **5-7 days**.
    anchor: norway
    tags: [shipping]
  - question: What allergens are in the trail mix?
    answer: Peanuts.
    disclosures:
      allergens: Contains peanuts.
  - question: Where are you?
    answer: Penrith.
    url: https://test-outfitters.example/pages/contact#address
"""
    docs = shop(tmp_path, {"faq.yaml": faq})
    assert [d.id for d in docs] == ["faq:norway", "faq:what-allergens-are-in-the-trail-mix", "faq:address"]
    first = docs[0]
    assert (first.kind, first.link_type, first.title) == ("faq", "faq", "Do you ship to Norway?")
    assert first.url == "https://test-outfitters.example/pages/help#norway"
    assert first.body == "Yes, in 5-7 days."
    assert [(s.heading, s.text, s.url, s.anchor) for s in first.sections] == [
        ("Do you ship to Norway?", "Yes, in 5-7 days.", first.url, "norway")
    ]
    assert first.tags == ("shipping",)
    assert docs[1].disclosures[0].content == "Contains peanuts."
    assert docs[2].url == "https://test-outfitters.example/pages/contact#address"


def test_faq_json_bare_list_uses_the_default_faq_url(tmp_path: Path) -> None:
    (doc,) = shop(tmp_path, {"faq.json": json.dumps([{"question": "Gift wrap?", "answer": "Yes."}])})
    assert doc.url == "https://test-outfitters.example/pages/faq#gift-wrap"


def test_faq_markdown_uses_h2_questions(tmp_path: Path) -> None:
    faq = "---\nurl: /pages/faq\n---\n# FAQ\n\nIntro text.\n\n## Can I return opened tea? {#opened}\n\nNo.\n\nUnopened tea, yes.\n\n## Gift cards?\n\nYes.\n"
    docs = shop(tmp_path, {"faq/help.md": faq})
    assert [(d.id, d.title, d.body) for d in docs] == [
        ("faq:opened", "Can I return opened tea?", "No.\nUnopened tea, yes."),
        ("faq:gift-cards", "Gift cards?", "Yes."),
    ]


def test_faq_entry_without_answer_names_the_field(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "shop.toml": SHOP_TOML,
            "faq.json": json.dumps({"entries": [{"question": "Q?", "answer": "A."}, {"question": "Q2?"}]}),
        },
    )
    err = source_error(tmp_path)
    assert (err.file, err.where) == ("faq.json", "entries[1].answer")


# --------------------------------------------------------------------------------------------------- ids


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("gid://testout/Product/501", "gid://testout/Product/501"),
        ("  gid://shopify/ProductVariant/45000000001 ", "gid://shopify/ProductVariant/45000000001"),
        ("TARN-OL-37", "id:tarn-ol-37"),
        ("Tarn-Wellington-Boot", "id:tarn-wellington-boot"),
        ("501", "id:501"),
        (
            "https://test-outfitters.example/products/Tarn-Wellington-Boot?variant=5011#reviews",
            "handle:tarn-wellington-boot",
        ),
        ("https://other.example/en-gb/products/tarn-wellington-boot", "handle:tarn-wellington-boot"),
        ("/collections/boots/products/tarn-wellington-boot/", "handle:tarn-wellington-boot"),
        ("test-outfitters.example/products/tarn-wellington-boot", "handle:tarn-wellington-boot"),
        ("https://test-outfitters.example/policies/refund-policy?x=1", "path:/policies/refund-policy"),
        ("/pages/faq#norway", "path:/pages/faq"),
        ("https://test-outfitters.example/", "path:/"),
        ("", None),
        ("   ", None),
    ],
)
def test_alias_key_normalises_every_id_form(raw: str, key: str | None) -> None:
    assert alias_key(raw) == key


def test_alias_keys_map_variant_ids_to_their_variant_and_the_rest_to_the_product(tmp_path: Path) -> None:
    (doc,) = shop(tmp_path, {"products.json": json.dumps([storefront_product()])})
    keys = alias_keys(doc)
    variant = "gid://testout/ProductVariant/5012"
    for raw in (variant, "TARN-OL-38", "tarn-ol-38", "5012"):
        assert keys[alias_key(raw) or ""] == variant
    for raw in (
        "gid://testout/Product/501",
        "501",
        "tarn-wellington-boot",
        "https://test-outfitters.example/products/tarn-wellington-boot?utm=x",
        "/en-gb/products/TARN-WELLINGTON-BOOT",
    ):
        key = alias_key(raw) or ""
        assert key in keys and keys[key] is None, raw
    assert set(doc.aliases) >= {
        "gid://testout/Product/501",
        "gid://testout/ProductVariant/5011",
        "TARN-OL-37",
        "tarn-wellington-boot",
        "501",
        "5011",
        "/products/tarn-wellington-boot",
    }


def test_page_aliases_resolve_by_url(tmp_path: Path) -> None:
    docs = by_id(shop(tmp_path, {"policies/refund.md": POLICY_MD}))
    keys = alias_keys(docs["policy:refund_policy"])
    assert keys == {"path:/policies/refund-policy": None}
    assert alias_key("https://test-outfitters.example/policies/refund-policy#window") in keys


def test_faq_entries_are_keyed_by_page_path_and_fragment(tmp_path: Path) -> None:
    faq = {
        "entries": [
            {"question": "Norway?", "answer": "Yes.", "anchor": "norway"},
            {"question": "Iceland?", "answer": "No."},
        ]
    }
    docs = shop(tmp_path, {"faq.json": json.dumps(faq)})
    keys = [alias_keys(d) for d in docs]
    assert keys == [{"path:/pages/faq#norway": None}, {"path:/pages/faq#iceland": None}]
    assert alias_key("https://test-outfitters.example/pages/faq?x=1#Norway", fragment=True) in keys[0]
    assert alias_key("/pages/faq#norway") == "path:/pages/faq"


def test_rich_text_disclosure_keeps_its_layout_as_markdown(tmp_path: Path) -> None:
    tree = {
        "type": "root",
        "children": [
            {"type": "paragraph", "children": [{"type": "text", "value": "Contains: milk.", "bold": True}]},
            {"type": "list", "listType": "unordered", "children": [
                {"type": "list-item", "children": [{"type": "text", "value": "May contain nuts"}]},
            ]},
        ],
    }  # fmt: skip
    field = {"namespace": "disclosures", "key": "allergens", "value": json.dumps(tree), "type": "rich_text_field"}
    (doc,) = shop(tmp_path, {"products.json": json.dumps([storefront_product(metafields=[field])])})
    assert [(d.code, d.content) for d in doc.disclosures] == [
        ("allergens", "**Contains: milk.**\n\n- May contain nuts")
    ]


def test_slugify() -> None:
    assert slugify("Returns & Exchanges!") == "returns-exchanges"
    assert slugify("Größe / Crème brûlée") == "grosse-creme-brulee"
    assert slugify("  Men's   tops_and jackets ") == "men-s-tops-and-jackets"
    assert slugify("サイズ") == "サイズ"


# --------------------------------------------------------------------------------------------------- whole shops


def test_load_documents_on_a_shop_with_shopify_json_and_markdown_policies_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "shop.toml": SHOP_TOML,
            "products.json": json.dumps({"products": [storefront_product()]}),
            "policies/refund-policy.md": POLICY_MD,
            "policies/shipping-policy.md": "---\ntitle: Shipping\n---\nWe ship to the UK.\n",
        },
    )
    info, docs = load_documents(tmp_path)
    assert info.name == "Test Outfitters"
    assert [d.id for d in docs] == [
        "product:gid://testout/Product/501",
        "policy:refund_policy",
        "policy:shipping_policy",
    ]
    assert all(d.source for d in docs)


def test_shop_source_is_a_catalog_source_and_streams_documents(tmp_path: Path) -> None:
    write(tmp_path, {"shop.toml": SHOP_TOML, "faq.json": json.dumps([{"question": "Q?", "answer": "A."}])})
    source = ShopSource(tmp_path)
    assert isinstance(source, CatalogSource)
    assert source.info.gid_namespace == "testout"
    assert [d.id for d in source.documents()] == ["faq:q"]


def test_shop_without_documents_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, {"shop.toml": SHOP_TOML, "pages/README.md": "# Notes for the merchant\n\nNot a page.\n"})
    err = source_error(tmp_path)
    assert "no documents" in err.problem


def test_duplicate_document_ids_are_an_error(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "shop.toml": SHOP_TOML,
            "products.json": json.dumps([storefront_product()]),
            "products/more.json": json.dumps([storefront_product()]),
        },
    )
    err = source_error(tmp_path)
    assert err.file == "products/more.json" and "duplicate" in err.problem


@pytest.mark.parametrize(
    ("files", "file", "where"),
    [
        ({"products.json": '{"products": [\n  {"title": "A",}\n]}'}, "products.json", "line 2, column 17"),
        ({"products.json": json.dumps([{"handle": "a"}])}, "products.json", "[0].title"),
        ({"products.json": json.dumps({"products": [{"title": "A", "variants": [{"price": "abc"}]}]})}, "products.json", "products[0].variants[0].price"),
        ({"products.json": json.dumps([storefront_product(metafields=[{"namespace": "s", "key": "k", "type": "weight", "value": "{oops"}])])}, "products.json", "[0].metafields[0].value"),
        ({"products.json": json.dumps([storefront_product(metafields=[{"namespace": "s", "key": "k", "type": "boolean", "value": "maybe"}])])}, "products.json", "[0].metafields[0].value"),
        ({"products.csv": "Handle,Title,Variant Price\nmug,,3.00\n"}, "products.csv", "row 2, column Title"),
        ({"products.csv": "Handle,Title,Variant Price\nmug,Mug,cheap\n"}, "products.csv", "row 2, column Variant Price"),
        ({"faq.yaml": "entries:\n  - question: Q?\n    answer: [unclosed\n"}, "faq.yaml", "line 4"),
        ({"faq.yaml": "url: /faq\n"}, "faq.yaml", "entries"),
        ({"pages/a.md": "---\ntitle: [A\n---\nText\n"}, "pages/a.md", "front matter: line 3"),
        ({"pages/a.md": "---\ntitle: A\nText\n"}, "pages/a.md", "front matter"),
        ({"pages/a.md": "---\ntitle: A\nurl: pages/a\n---\nText\n"}, "pages/a.md", "front matter: url"),
        ({"pages/a.md": "---\ntitle: A\ndisclosures: [{code: x}]\n---\nText\n"}, "pages/a.md", "front matter: disclosures[0].content"),
    ],
)  # fmt: skip
def test_bad_sources_name_the_file_and_the_field_or_line(
    tmp_path: Path, files: dict[str, str], file: str, where: str
) -> None:
    write(tmp_path, {"shop.toml": SHOP_TOML, **files})
    err = source_error(tmp_path)
    assert (err.file, err.where) == (file, where)
    assert file in str(err)


# The README in bad-shops/ says which file and which line or field each broken shop's error must name.
BAD_SHOPS = {
    "bad-json": ("products.json", ["line 9", "line 8"]),
    "missing-title": ("products.json", ["products[1]", "title"]),
    "bad-front-matter": ("policies/refund-policy.md", ["type", "returns_policy"]),
    "bad-yaml-faq": ("faq.yaml", ["line 5", "line 10"]),
    "bad-csv": ("products.csv", ["row 1", "Handle"]),
    "bad-toml": ("shop.toml", ["line 2"]),
}


@pytest.mark.parametrize("folder", sorted(BAD_SHOPS))
def test_every_bad_fixture_shop_names_the_right_file_and_place(folder: str) -> None:
    file, mentions = BAD_SHOPS[folder]
    err = source_error(FIXTURES / "bad-shops" / folder)
    assert err.file == file
    message = str(err)
    if folder in ("bad-json", "bad-yaml-faq"):  # either line is acceptable
        assert any(m in message for m in mentions), message
    else:
        assert all(m in message for m in mentions), message


def test_bad_shops_fixture_list_covers_every_folder() -> None:
    folders = {p.name for p in (FIXTURES / "bad-shops").iterdir() if p.is_dir()}
    assert folders == set(BAD_SHOPS)


def test_sample_shop_loads_with_generated_gids_and_every_kind() -> None:
    info, docs = load_documents(SAMPLE_SHOP)
    raw = json.loads((SAMPLE_SHOP / "products.json").read_text("utf-8"))["products"]
    products = [d for d in docs if d.kind == "product"]
    assert [d.gid for d in products] == [f"gid://{info.gid_namespace}/Product/{p['id']}" for p in raw]
    assert [d.url for d in products] == [f"{info.url}/products/{p['handle']}" for p in raw]
    assert {d.link_type for d in docs if d.kind == "policy"} == {
        "refund_policy",
        "shipping_policy",
        "privacy_policy",
        "terms_of_service",
    }
    assert any(d.kind == "page" for d in docs) and any(d.kind == "faq" for d in docs)
    for product, doc in zip(raw, products, strict=True):
        recorded = {m["key"] for m in product.get("metafields", []) if m["namespace"] != info.disclosure_namespace}
        assert recorded <= {f.key for f in doc.facts}, doc.title
        codes = {m["key"] for m in product.get("metafields", []) if m["namespace"] == info.disclosure_namespace}
        assert {d.code for d in doc.disclosures} == codes
        assert all(section.url.startswith(info.url) for section in doc.sections)
    for doc in docs:
        if doc.kind in ("policy", "page"):
            assert doc.sections and all(s.text and s.url.startswith(doc.url) for s in doc.sections)
    assert len({d.id for d in docs}) == len(docs)
