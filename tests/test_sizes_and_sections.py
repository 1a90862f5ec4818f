"""Size guides, sale prices by variant group, a section's lines and an attribute recorded but not as asked: a small
pet-supplies shop in Shopify products.json form, indexed with the real embedding model and asked through
`Engine.ask`. The shop was first written as a probe by someone who had not read the answerer (its questions and
expected answers written before it was run); these are the general faults it found."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.engine import Engine
from tests.shop_helpers import ask_plain, inline_engine

NS = "pawprobe"
COLLAR, HARNESS, TOY, FLEA, STEW = (f"gid://{NS}/Product/{n}" for n in (1, 2, 3, 4, 5))


def _variants(pid: int, sizes: dict[str, tuple[str, str | None]], colours: list[str]) -> list[dict[str, Any]]:
    out = []
    for size, (price, was) in sizes.items():
        for colour in colours:
            out.append(
                {
                    "id": pid * 100 + len(out) + 1,
                    "title": f"{size} / {colour}",
                    "price": price,
                    "compare_at_price": was,
                    "inventory_quantity": 4,
                    "option1": size,
                    "option2": colour,
                }
            )
    return out


PRODUCTS = [
    {
        "id": 1,
        "title": "Trailhead Reflective Dog Collar",
        "handle": "trailhead-reflective-dog-collar",
        "body_html": "<p>Soft nylon webbing with reflective stitching.</p><ul><li>XS: fits necks 20-30 cm, 15 mm "
        "wide</li><li>S: fits necks 28-40 cm, 20 mm wide</li><li>M: fits necks 35-50 cm, 25 mm wide</li><li>L: fits "
        "necks 45-66 cm, 25 mm wide</li></ul>",
        "vendor": "Pine & Paw",
        "product_type": "Dog Collars",
        "options": [{"name": "Size", "values": ["XS", "S", "M", "L"]}, {"name": "Colour", "values": ["Green", "Grey"]}],
        "variants": _variants(1, {s: ("19.99", None) for s in ("XS", "S", "M", "L")}, ["Green", "Grey"]),
    },
    {
        "id": 2,
        "title": "Ridgeline No-Pull Dog Harness",
        "handle": "ridgeline-no-pull-dog-harness",
        "body_html": "<p>A front-clip harness with a padded lining.</p><p>Sizing by chest girth:</p><ul><li>S: 41-56 "
        "cm</li><li>M: 56-76 cm</li><li>L: 69-94 cm</li><li>XL: 81-112 cm</li></ul>",
        "vendor": "Ridgeline",
        "product_type": "Dog Harnesses",
        "options": [{"name": "Size", "values": ["S", "M", "L", "XL"]}, {"name": "Colour", "values": ["Black", "Red"]}],
        "variants": _variants(
            2,
            {"S": ("39.99", "49.99"), "M": ("44.99", "54.99"), "L": ("44.99", "54.99"), "XL": ("49.99", "59.99")},
            ["Black", "Red"],
        ),
        "metafields": [
            {
                "namespace": "custom",
                "key": "max_pull_load",
                "type": "single_line_text_field",
                "value": "S: up to 20 kg; M: up to 35 kg; L: up to 50 kg; XL: up to 70 kg",
            },
            {"namespace": "custom", "key": "care", "type": "single_line_text_field", "value": "Hand wash cold"},
        ],
    },
    {
        "id": 3,
        "title": "ToughPup Rubber Chew Toy",
        "handle": "toughpup-rubber-chew-toy",
        "body_html": "<p>A bouncy chew toy made from natural rubber.</p>",
        "vendor": "ToughPup",
        "product_type": "Dog Toys",
        "options": [{"name": "Size", "values": ["Small", "Medium", "Large"]}],
        "variants": [
            {"id": 301 + i, "title": s, "price": p, "option1": s, "inventory_quantity": 9}
            for i, (s, p) in enumerate([("Small", "12.99"), ("Medium", "15.99"), ("Large", "18.99")])
        ],
        "metafields": [
            {
                "namespace": "custom",
                "key": "dog_size",
                "type": "single_line_text_field",
                "value": "Small: dogs up to 9 kg; Medium: 9-20 kg; Large: 20-35 kg",
            },
            {
                "namespace": "custom",
                "key": "age_range",
                "type": "single_line_text_field",
                "value": "Adult dogs; not for puppies under 6 months",
            },
        ],
    },
    {
        "id": 4,
        "title": "FleaGuard Spot-On Treatment",
        "handle": "fleaguard-spot-on-treatment",
        "body_html": "<p>Kills fleas and ticks for 30 days.</p><p>Do not bathe your dog for 48 hours before or after "
        "applying.</p>",
        "vendor": "FleaGuard",
        "product_type": "Flea & Tick",
        "options": [{"name": "Dog Weight", "values": ["4-10 kg", "10-25 kg", "25-40 kg"]}],
        "variants": [
            {"id": 401 + i, "title": w, "price": "29.99", "option1": w, "inventory_quantity": 6}
            for i, w in enumerate(["4-10 kg", "10-25 kg", "25-40 kg"])
        ],
    },
    {
        "id": 5,
        "title": "Little Paws Puppy Stew",
        "handle": "little-paws-puppy-stew",
        "body_html": "<p>Tender turkey and pumpkin in gravy. Serve on its own or as a topper on kibble.</p>",
        "vendor": "Little Paws",
        "product_type": "Wet Dog Food",
        "variants": [{"id": 501, "title": "Default Title", "price": "34.99", "inventory_quantity": 20}],
        "metafields": [
            {
                "namespace": "custom",
                "key": "age_range",
                "type": "single_line_text_field",
                "value": "Puppies 8 weeks to 12 months; also pregnant and nursing dogs",
            }
        ],
    },
]

FILES = {
    "shop.toml": f'[shop]\nname = "Paw Probe"\nurl = "https://pawprobe.example"\ncurrency = "CAD"\n'
    f'language = "en"\ngid_namespace = "{NS}"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "pages/visit-our-store.md": "---\ntype: store_locations\ntitle: Visit Our Store\n---\n# Visit Our Store\n\n"
    "Our shop is in the Pandosy Village neighbourhood of Kelowna.\n\n## Opening hours\n\n"
    "- Monday to Friday: 9:00 am - 7:00 pm\n- Saturday: 9:00 am - 6:00 pm\n- Sunday: 11:00 am - 5:00 pm\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("pawprobe") / "shop", FILES, embedder)


def ask(engine: Engine, query: str, *ids: str) -> str:
    return ask_plain(engine, query, *ids, asker="sizes-test")


def test_a_measurement_is_read_against_the_size_guide(engine: Engine) -> None:
    text = ask(engine, "What size for a 42 cm neck?", COLLAR)
    assert "M: fits necks 35-50 cm" in text and "XS" not in text, text
    text = ask(engine, "Which size for a 15 kg dog?", TOY)
    assert "Medium: 9-20 kg" in text and "Large: 20-35" not in text, text
    # another unit of the same kind of measure is converted: 30 lb is 13.6 kg
    text = ask(engine, "My dog weighs 30 lbs, which size?", TOY)
    assert "Medium: 9-20 kg" in text and "Small: dogs" not in text, text


def test_a_size_named_in_words_finds_its_entry_and_a_yes_no_fit_is_answered(engine: Engine) -> None:
    text = ask(engine, "What chest size does the large fit?", HARNESS)
    assert "L: 69-94 cm" in text and "XL" not in text, text
    assert ask(engine, "Is the large a good fit for an 80 cm chest?", HARNESS).startswith("Yes."), HARNESS
    text = ask(engine, "Is the small a good fit for a 60 cm chest?", HARNESS)
    assert text.startswith("No.") and "M: 56-76 cm" in text, text
    # with no measurement and no size named, the sizes it comes in are the answer
    text = ask(engine, "What sizes does it come in?", HARNESS)
    assert "S, M, L and XL" in text, text


def test_a_size_named_picks_its_part_of_a_fact_recorded_by_size(engine: Engine) -> None:
    text = ask(engine, "What is the max pull load of the XL?", HARNESS)
    assert "XL: up to 70 kg" in text and "M: up to 35" not in text, text
    # a size named in a question about something else is no size-guide question
    text = ask(engine, "Is the large hand washable?", HARNESS)
    assert "Hand wash cold" in text and "69-94" not in text, text


def test_sale_prices_are_given_by_the_option_that_sets_them(engine: Engine) -> None:
    text = ask(engine, "Is this harness on sale?", HARNESS)
    assert "M and L at CA$44.99, reduced from CA$54.99" in text, text
    assert "S / Black" not in text and "M / Red" not in text, text
    text = ask(engine, "How much is the large?", HARNESS)
    assert "in L is CA$44.99, reduced from CA$54.99" in text, text


def test_an_option_is_named_by_what_it_is_not_by_a_word_qualifying_it(engine: Engine) -> None:
    # "Dog Weight" is a weight; "dog" in the question does not ask for it
    text = ask(engine, "Can I bathe my dog after applying it?", FLEA)
    assert "Do not bathe your dog for 48 hours" in text and "4-10 kg" not in text, text


def test_an_attribute_recorded_but_not_as_asked_is_offered_without_a_contradiction(engine: Engine) -> None:
    text = ask(engine, "Can I feed this to my 4-month-old puppy?", STEW)
    assert "has not recorded" not in text, text
    assert "does not say exactly that" in text and "Puppies 8 weeks to 12 months" in text, text


def test_lines_of_one_section_name_their_heading_once_and_the_one_asked_for_stands_alone(engine: Engine) -> None:
    text = ask(engine, "What are your store hours on Sunday?")
    assert "Sunday: 11:00 am - 5:00 pm" in text and "Monday" not in text and "Saturday" not in text, text
    text = ask(engine, "What are your opening hours?")
    assert "Monday to Friday" in text and "Sunday: 11:00 am" in text, text
    assert text.count("Opening hours") <= 1, text


def test_what_is_not_recorded_is_phrased_in_the_question_own_case(engine: Engine) -> None:
    text = ask(engine, "Can I take it camping in Banff?", STEW)
    assert "Banff" in text and "banff" not in text, text


def test_a_title_is_plural_by_its_head_noun_not_by_a_qualifying_phrase() -> None:
    from ask_engine.answering.facts import _is_plural_title

    # "The Frosty Teething Ring for Puppies are priced at ..." read the last word as the head
    assert not _is_plural_title("Frosty Teething Ring for Puppies")
    assert not _is_plural_title("Set of 3 Bowls")
    assert _is_plural_title("Wool Socks for Men")
    assert _is_plural_title("Marsh Rain Boots")


def test_a_size_guide_reads_ranges_in_one_unit_whatever_the_unit_and_separators() -> None:
    from ask_engine.answering.measures import _number
    from ask_engine.answering.sizing import _ranges

    assert _number("1,200") == 1200.0 and _number("2,5") == 2.5  # thousands separator, decimal comma
    assert _ranges("M: 1,000-1,200 mm") == ((100.0, 120.0, "cm"),)
    assert _ranges("Small: dogs up to 9 kg") == ((0.0, 9.0, "kg"),)
    low, high, unit = _ranges("XL: 20 lb and up")[0]
    assert unit == "kg" and round(low, 2) == 9.07 and high == float("inf")


def test_a_question_for_a_puppy_or_a_kitten_asks_the_age_a_product_is_for(engine: Engine) -> None:
    # "for puppies" reads as an age, as "for my toddler" does: the products' age facts answer, not their prices
    text = ask(engine, "Which of your toys are for puppies?")
    assert "not for puppies under 6 months" in text and "CA$" not in text, text
    text = ask(engine, "Is the chew toy OK for my puppy?", TOY)
    assert "not for puppies under 6 months" in text, text


def test_a_size_guide_table_row_whose_first_cell_is_the_size_is_an_entry() -> None:
    # A guide written as an HTML table becomes "Size: L, Chest girth: 70–85 cm." rows (a blind probe shop's harness)
    from ask_engine.answering.sizing import _entries
    from ask_engine.types import Document

    body = (
        "A padded harness with two lead rings.\nSize guide – measure around the widest part of the chest:\n"
        "Size: S, Chest girth: 40–55 cm.\nSize: M, Chest girth: 55–70 cm.\nSize: L, Chest girth: 70–85 cm.\n"
        "Size: XL, Chest girth: 85–100 cm.\nWeight: 310 g, Colour: Red."
    )
    doc = Document(
        id="product:gid://t/Product/1", kind="product", title="Trail Harness", url="https://t.example/products/h",
        link_type="product", source="products.json", gid="gid://t/Product/1", body=body,
        options=(("Size", ("S", "M", "L", "XL")),),
    )  # fmt: skip
    entries = _entries(doc, ("S", "M", "L", "XL"))
    assert [e.value for e in entries] == ["S", "M", "L", "XL"]
    assert entries[2].text == "Size: L, Chest girth: 70–85 cm." and entries[2].ranges == ((70.0, 85.0, "cm"),)
