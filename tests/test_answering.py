"""Answer units, the calibrated ranker, and the product-QA converter; and, end to end, the answers the issue
"Answers that hold on any shop" found missing: a description that states the answer is quoted, not reported as
"not recorded"."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ask_engine.answering.ranker import FEATURES, QuestionShape, carries, features, load_ranker
from ask_engine.answering.units import description_units, product_units, usable_value
from ask_engine.engine import Engine
from ask_engine.pqa import convert, parse_attribute
from ask_engine.types import Document, Fact
from tests.shop_helpers import Asker, build_inline_shop, plain, product_links

NOT_RECORDED = "has not recorded"

# ---------------------------------------------------------------------------------------------------- units


def test_a_lead_in_keeps_its_list_and_a_heading_is_context_not_a_unit() -> None:
    body = "\n".join(
        [
            "Key Features.",
            "A stainless steel kettle that boils a full litre in under four minutes on any hob.",
            "This set includes:",
            "Teapot.",
            "Tray.",
            "Two cups.",
            "Hand wash only, and dry it straight away with a soft cloth so the brushed steel keeps its shine for years.",
        ]
    )
    units = description_units(body)
    texts = [u.text for u in units]
    assert "This set includes: Teapot; Tray; Two cups." in texts
    assert not any(t.rstrip(".") == "Key Features" for t in texts)
    assert units[0].context == "Key Features"
    assert texts[-1].startswith("Hand wash only")  # the list ends where prose starts


def test_short_lines_in_a_row_are_list_items_not_headings() -> None:
    units = description_units("Machine Washable.\nQuick Dry.\nUPF 50 fabric.")
    assert [u.text for u in units] == ["Machine Washable.", "Quick Dry.", "UPF 50 fabric."]


def test_placeholders_and_junk_values_are_not_values() -> None:
    assert usable_value("Default Title") == ""
    assert usable_value("string") == ""  # a schema's type name left in an unfilled export field
    assert usable_value("null") == ""
    assert usable_value("String lights") == "String lights"
    assert usable_value("'6") == "6"  # a spreadsheet's text marker
    assert usable_value(" - ") == ""
    assert usable_value("natural rubber") == "natural rubber"


def test_every_recorded_thing_is_a_unit_and_options_carry_their_name() -> None:
    doc = Document(
        id="product:p",
        kind="product",
        title="Yoga Mat",
        url="https://x.example/products/mat",
        link_type="product",
        source="products.json",
        body="Made of natural tree rubber.",
        facts=(
            Fact("price", "Price", "$30.00", "field"),
            Fact("vendor", "Brand", "Calm Co", "field"),
            Fact("thickness_options", "Thicknesses", "4mm, 5mm, 6mm", "field"),
            Fact("title_options", "Titles", "Default Title", "field"),
            Fact("material", "Material", "'6", "metafield"),
        ),
        tags=("yoga", "__label:New"),
    )
    units = {u.text: u for u in product_units(doc)}
    assert "Thickness: 4mm, 5mm, 6mm" in units and units["Thickness: 4mm, 5mm, 6mm"].kind == "option"
    assert "Brand: Calm Co" in units and "Tags: yoga" in units
    assert "Made of natural tree rubber." in units
    assert not any("Default Title" in t or "Price" in t for t in units)  # placeholder; price is commerce
    assert "Material: 6" in units


# ---------------------------------------------------------------------------------------------------- ranker


def test_the_committed_ranker_matches_the_features_and_records_its_embedder() -> None:
    data = json.loads((Path(__file__).parents[1] / "ask_engine/answering/ranker.json").read_text())
    assert data["features"] == list(FEATURES)
    assert data["embedder"].startswith("all-MiniLM-L6-v2")
    assert 0.0 < data["bar"] < 1.0 and data["cross_fitted"]
    ranker = load_ranker()
    assert len(ranker.weights) == len(FEATURES)


def test_a_ranker_fitted_for_another_embedder_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    data = json.loads((Path(__file__).parents[1] / "ask_engine/answering/ranker.json").read_text())
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(data))
    with caplog.at_level("WARNING"):
        load_ranker(path, embedder="some-other-model:123")
    assert "calibrated for embedder" in caplog.text


def test_the_ranker_prefers_the_unit_that_matches_the_question() -> None:
    doc = Document(
        id="product:p",
        kind="product",
        title="Mat",
        url="u",
        link_type="product",
        source="s",
        facts=(Fact("weight", "Weight", "1.2 kg"), Fact("colour", "Colour", "blue")),
    )
    units = product_units(doc)
    shape = QuestionShape.read("how heavy is it?")
    assert shape.quantity
    sims = np.asarray([0.5, 0.2], dtype=np.float32)
    x = features(shape, units, sims, np.asarray([0.6, 0.1], dtype=np.float32))
    p = load_ranker().probabilities(x)
    assert p[0] > p[1]


def test_carries_needs_every_part_and_a_tilde_part_needs_one_word() -> None:
    assert carries("The item weight of X is 1.2 kg.", [["1.2 kg", "~Item weight"]])
    assert not carries("The colour of X is blue.", [["1.2 kg", "~Item weight"]])
    assert carries("No, the X is not fragile.", [["~Is fragile"]])
    assert not carries("anything", [])


# ---------------------------------------------------------------------------------------------------- PQA files


def test_attribute_candidates_become_typed_shopify_metafields() -> None:
    assert parse_attribute("item_weight:  { unit:pounds, normalized_value:{ unit:pounds, value:12 }, value:12 }") == (
        "item_weight",
        "weight",
        json.dumps({"value": 12.0, "unit": "POUNDS"}),
    )
    assert parse_attribute('color:  { value:"white" }; { value:"black" }') == (
        "color",
        "list.single_line_text_field",
        json.dumps(["white", "black"]),
    )
    assert parse_attribute("is_electric:  { value:false }") == ("is_electric", "boolean", "false")
    assert parse_attribute("platform:  { value:nintendo_3ds }") == (
        "platform",
        "single_line_text_field",
        "nintendo 3ds",
    )
    key, mtype, value = parse_attribute('back:  { material:[ { value:"basswood" } ] }') or ("", "", "")
    assert (key, mtype) == ("back", "single_line_text_field") and "basswood" in value
    # the source escapes an inch mark with a backslash, as well as writing it |"
    assert parse_attribute('batteries:  { value:"4-\\"c\\" batteries" }') == (
        "batteries",
        "single_line_text_field",
        '4-"c" batteries',
    )


def test_a_pqa_file_becomes_a_shop_and_cases_with_store_authored_evidence_only(tmp_path: Path) -> None:
    tsv = tmp_path / "mini.tsv"
    rows = [
        ["qid", "ASIN", "qa_pair_id", "question", "candidate", "label", "source", "confidence"],
        ["1", "A1", "1", "does it come with batteries?", "batteries_included:  { value:true }", "1", "attribute", "h"],
        ["1", "A1", "2", "does it come with batteries?", "great toy, batteries included!", "1", "review", "h"],
        ["2", "A1", "3", "is it loud?", "my kids love how loud it is", "1", "CQA", "h"],
        ["2", "A1", "4", "is it loud?", "A friendly robot that sings songs.", "0", "Desc", "h"],
        ["3", "A1", "5", "how big is it?", 'It stands 8\\" tall.', "1", "Desc", "h"],
    ]
    tsv.write_text("\n".join("\t".join(r) for r in rows) + "\n")
    (tmp_path / "LICENSE").write_text("CDLA-Sharing-1.0")
    shop, case_file, count = convert(tsv, tmp_path / "out")
    cases = [json.loads(line) for line in case_file.read_text().splitlines()]
    assert count == 3 and (tmp_path / "out" / "LICENSE").exists()
    by_query = {c["query"]: c for c in cases}
    assert by_query["does it come with batteries?"]["expect"]["answerable"] is True
    assert by_query["is it loud?"]["expect"]["answerable"] is False  # only a community answer says so
    products = json.loads((shop / "products.json").read_text())["products"]
    assert len(products) == 1
    text = json.dumps(products)
    assert "friendly robot" in text and "kids love" not in text and "great toy" not in text
    # an inch mark the source escapes with a backslash is shown, and expected, as the page writes it
    assert "stands 8&quot; tall" in text and "\\\\" not in text
    assert by_query["how big is it?"]["expect"]["evidence_any"] == [['It stands 8" tall']]


# ---------------------------------------------------------------------------------------------------- end to end

SHOP_TOML = """[shop]
name = "Tidewater Supply"
url = "https://tidewater.example"
currency = "USD"
language = "en"
gid_namespace = "tidewater"

[synonyms]
# shoppers' words for what this catalogue calls a domino set
domino = ["bones", "tiles"]
"""


def _product(pid: int, title: str, body: str, *, options: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    opts = options or [{"name": "Title", "position": 1, "values": ["Default Title"]}]
    values = opts[0]["values"]
    return {
        "id": pid,
        "title": title,
        "handle": title.lower().replace(" ", "-"),
        "body_html": body,
        "vendor": "Tidewater",
        "product_type": "",
        "tags": [],
        "options": opts,
        "variants": [
            {"id": pid * 10 + n, "title": v, "option1": v, "price": "24.00", "sku": f"TW-{pid}-{n}", "available": True}
            for n, v in enumerate(values)
        ],
    }


PRODUCTS = [
    _product(
        501,
        "Nitrile Exam Gloves",
        "<p>Powder-free nitrile gloves for cleaning and food prep.</p><p>These gloves are latex-free, so they suit "
        "people with a latex allergy.</p><p>Box of 100.</p>",
    ),
    _product(
        502,
        "Countertop Water Filter",
        "<p>Removes chlorine taste from tap water.</p><p>Replace the filter cartridge every 3 months for best "
        "results.</p><p>Compatible with:</p><ul><li>Tidewater Jug 2L</li><li>Tidewater Tap Mount</li></ul>",
    ),
    _product(
        503,
        "Rose Face Serum",
        "<p>A light serum with 2% hyaluronic acid.</p><p>Comes in a 30 ml glass dropper bottle.</p>",
    ),
    _product(505, "The Daily Balm", "<p>A rich balm for dry hands, with shea butter.</p>"),
    {
        **_product(506, "Cedar Soap Bar", "<p>A cold-process soap with cedarwood oil.</p>"),
        "variants": [{"id": 5060, "title": "Default Title", "price": "6.00", "compare_at_price": "8.00"}],
    },
    _product(
        507,
        "Ridge 2 Tent",
        "<p>A two-pole tent for summer trips.</p>",
        options=[{"name": "Capacity", "position": 1, "values": ["2 person"]}],
    ),
    {
        **_product(509, "Harbour Shell Jacket", "<p>A light shell for wet commutes.</p>"),
        "metafields": [
            {"namespace": "specs", "key": "waterproof", "value": "true", "type": "boolean"},
            {"namespace": "specs", "key": "waterproof_rating", "value": "10,000 mm", "type": "single_line_text_field"},
        ],
    },
    _product(508, "Coastal Sunscreen SPF 30", "<p>A light, high-protection formula for long beach days.</p>"),
    {
        **_product(510, "Porch String Lights 10 m", "<p>Twenty warm bulbs on a weatherproof cable.</p>"),
        "metafields": [
            {"namespace": "specs", "key": "item_package_weight", "value": "1.38 kg", "type": "single_line_text_field"},
            {"namespace": "specs", "key": "batteries_included", "value": "false", "type": "boolean"},
        ],
    },
    {
        **_product(512, "Harbour Domino Set", "<p>A wooden domino set for family games.</p>"),
        "metafields": [
            {
                "namespace": "specs",
                "key": "included_components",
                "value": '["55 double-nine dominoes", "a wooden box", "a score pad"]',
                "type": "list.single_line_text_field",
            },
            {"namespace": "specs", "key": "batteries_included", "value": "false", "type": "boolean"},
            {"namespace": "specs", "key": "number_of_players", "value": "4", "type": "number_integer"},
        ],
    },
    {
        **_product(513, "Youth Shin Guards", "<p>Light shin guards with ankle straps.</p>"),
        "metafields": [
            {"namespace": "specs", "key": "size", "value": "ages 9-12", "type": "single_line_text_field"},
            {"namespace": "specs", "key": "color", "value": "royal", "type": "single_line_text_field"},
        ],
    },
    {
        **_product(511, "Fellside Waterproof Walking Boot", "<p>A leather boot for long days on rough paths.</p>"),
        "metafields": [{"namespace": "specs", "key": "waterproof", "value": "true", "type": "boolean"}],
    },
    {
        **_product(
            514,
            "Pull-Along Caterpillar",
            "<p>A wooden pull-along toy with a friendly painted face.</p><p>For ages 3 years &amp; up.</p>"
            "<p>This toy does not require batteries.</p>",
        ),
        "metafields": [
            {"namespace": "specs", "key": "is_heat_sensitive", "value": "false", "type": "boolean"},
            {"namespace": "specs", "key": "contains_small_parts", "value": "true", "type": "boolean"},
        ],
    },
    _product(
        504,
        "Studio Yoga Mat",
        "<p>A grippy mat for hot and slow classes alike.</p>",
        options=[{"name": "Thickness", "position": 1, "values": ["4mm", "5mm", "6mm"]}],
    ),
]


RETURNS = """---
type: refund_policy
title: Returns
url: https://tidewater.example/policies/returns
---
# Returns

## Returns window

You can return unused items within 21 days of delivery for a full refund.

## How to start a return

Email returns@tidewater.example with your order number. We reply within two working days with a prepaid label.

## Exchanges

Start an exchange by emailing us with the new size you would like.
"""


def _gid(pid: int) -> str:
    return f"gid://tidewater/Product/{pid}"


@pytest.fixture(scope="module")
def ask(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Asker]:
    files = {
        "shop.toml": SHOP_TOML,
        "products.json": json.dumps({"products": PRODUCTS}),
        "policies/returns.md": RETURNS,
    }
    index = build_inline_shop(tmp_path_factory.mktemp("answering") / "tidewater", files, embedder)
    engine = Engine.open(index, embedder=embedder)
    yield Asker(engine, "answering-test")
    engine.close()


@pytest.mark.parametrize(
    ("query", "pid", "expected"),
    [
        ("Are they latex free?", 501, "latex-free"),
        ("How often do I need to change the cartridge?", 502, "3 months"),
        ("Does it fit the Tidewater Jug?", 502, "Tidewater Jug 2L"),
        ("How much hyaluronic acid is in it?", 503, "2%"),
        ("What size is the bottle?", 503, "30 ml"),
        ("How thick is it?", 504, "6mm"),
    ],
)
def test_what_the_description_or_an_option_states_is_answered_not_reported_missing(
    ask: Asker, query: str, pid: int, expected: str
) -> None:
    text = plain(ask(query, [_gid(pid)]))
    assert expected in text, text
    assert NOT_RECORDED not in text, text


def test_a_question_about_one_product_names_no_other(ask: Asker) -> None:
    text = plain(ask("Is it waterproof?", [_gid(503)]))
    assert NOT_RECORDED in text
    for other in ("Gloves", "Filter", "Yoga"):
        assert other not in text, text


def test_the_single_variant_placeholder_never_reaches_an_answer(ask: Asker) -> None:
    for query in ("How much is it?", "What's the SKU?", "Is it in stock?", "Tell me about it"):
        text = plain(ask(query, [_gid(501)]))
        assert "Default Title" not in text, (query, text)


def test_a_section_whose_heading_is_the_question_answers_it(ask: Asker) -> None:
    text = plain(ask("How do I start a return?"))
    assert "returns@tidewater.example" in text, text
    assert "Start an exchange" not in text


def test_do_you_sell_a_named_product_is_yes_with_its_price(ask: Asker) -> None:
    text = plain(ask("Do you sell the Studio Yoga Mat?"))
    assert text.startswith("Yes."), text
    assert "$24.00" in text and NOT_RECORDED not in text


def test_the_product_qa_eval_reports_the_engine_beside_the_cosine_baseline(tmp_path: Path, embedder: Any) -> None:
    from ask_engine.evaluation import load_cases, run_eval
    from ask_engine.indexer import build_index
    from ask_engine.pqa import eval_figures, rates

    tsv = tmp_path / "mini.tsv"
    rows = [
        ["qid", "question", "candidate", "label"],
        ["1", "what is it made of?", 'material:  { value:"bamboo" }', "1"],
        ["1", "what is it made of?", "item_weight:  { unit:pounds, value:2 }", "0"],
        ["2", "does it need batteries?", "batteries_required:  { value:false }", "1"],
        ["3", "is it safe for a toddler?", 'color:  { value:"green" }', "0"],
    ]
    tsv.write_text("\n".join("\t".join(r) for r in rows) + "\n")
    shop, case_file, _ = convert(tsv, tmp_path / "out")
    index = tmp_path / "index"
    build_index(shop, index, embedder=embedder, progress=False)
    engine = Engine.open(index, embedder=embedder)
    cases = load_cases(case_file)
    run = run_eval(engine, cases)
    figures = eval_figures(engine, cases, run)
    assert figures["engine"]["questions"] == 3 and figures["engine"]["answerable"] == 2
    assert set(figures["cosine_baseline"]) >= {"evidence_hit", "abstention", "balanced_accuracy", "threshold"}
    made_of = next(t for t in run.turns if t.query == "what is it made of?")
    assert made_of.evidence_hit is True, made_of.answer  # "bamboo" and the word "material" are carried
    assert rates([(True, True, True), (False, False, False)])["balanced_accuracy"] == 1.0


def test_a_title_with_its_own_article_is_not_given_another(ask: Asker) -> None:
    for query in ("Is it vegan?", "How much is it?", "Tell me about it"):
        text = plain(ask(query, [_gid(505)]))
        assert "The Daily Balm" in text and "the The" not in text and "The The" not in text, (query, text)


def test_tell_me_about_these_with_ids_gives_an_overview_of_each_product_with_its_link(ask: Asker) -> None:
    data = ask("Tell me about these", [_gid(501), _gid(503)])
    text = plain(data)
    assert "nitrile gloves" in text.lower() and "serum" in text.lower(), text
    linked = {link.get("id") for link in data.get("links") or []}
    assert {_gid(501), _gid(503)} <= linked


def test_a_single_variant_price_keeps_its_reduction_without_the_placeholder(ask: Asker) -> None:
    text = plain(ask("How much is it?", [_gid(506)]))
    assert "$6.00, reduced from $8.00" in text and "Default Title" not in text, text


def test_a_model_number_in_the_title_is_not_a_quantity_asked(ask: Asker) -> None:
    # "How heavy is the Ridge 2?" asks a weight the shop never recorded; "2 person" is not one
    text = plain(ask("How heavy is the Ridge 2?", [_gid(507)]))
    assert NOT_RECORDED in text, text


def test_a_sentence_that_only_reads_close_does_not_state_an_attribute_it_never_names(ask: Asker) -> None:
    # the description says what the product is like, never whether it is vegan
    text = plain(ask("Is your SPF 30 sunscreen vegan?", [_gid(508)]))
    assert NOT_RECORDED in text, text
    assert "long beach days" not in text, text


def test_a_second_fact_names_the_product_once(ask: Asker) -> None:
    text = plain(ask("Is it waterproof?", [_gid(509)]))
    assert text.startswith("Yes, the Harbour Shell Jacket is waterproof."), text
    assert "Its waterproof rating is 10,000 mm" in text, text
    assert text.count("Harbour Shell Jacket") == 1, text


def test_a_labelled_line_after_a_list_is_not_one_of_its_items() -> None:
    units = [u.text for u in description_units("Compatible with:\nShimano HG\nSRAM PC\nIncludes: one quick link.")]
    assert units == ["Compatible with: Shimano HG; SRAM PC.", "Includes: one quick link."]


def test_an_indefinite_pronoun_is_not_what_a_question_asks_about(ask: Asker) -> None:
    text = plain(ask("How do I return something?"))
    assert "returns@tidewater.example" in text or "21 days" in text, text


@pytest.mark.parametrize(
    "query",
    ["Is this an LED light?", "Does it come with a dozen?", "Are there several kinds of bulb in the set?"],
)
def test_a_fact_tied_to_the_question_by_a_word_alone_does_not_answer_it(ask: Asker, query: str) -> None:
    # the attribute lexicon ties "light" to the package weight and "come with" to "batteries included"; the ranker
    # puts both far below its calibrated lexicon bar, so neither answers (the description's sentence the ranker
    # ranks first may follow "does not say exactly": still no answer)
    text = plain(ask(query, [_gid(510)]))
    assert text.startswith(("The shop has not recorded", "The shop does not say exactly")), (query, text)
    assert "1.38 kg" not in text, (query, text)


def test_a_thing_and_a_participle_read_as_a_clause_not_an_adjective(ask: Asker) -> None:
    text = plain(ask("Are batteries included?", [_gid(510)]))
    assert text.startswith("No, batteries are not included with the Porch String Lights 10 m"), text
    assert "is not batteries included" not in text, text


def test_an_attribute_word_that_is_also_in_the_title_is_still_what_is_asked(ask: Asker) -> None:
    # "waterproof" is a word of the boot's name, yet "is this one waterproof?" asks it, and "Waterproof: yes" answers
    text = plain(ask("Is this one waterproof?", [_gid(511)]))
    assert text.startswith("Yes, the Fellside Waterproof Walking Boot is waterproof"), text


@pytest.mark.parametrize(
    "query",
    [
        "Do you have a return policy?",
        "Do you offer gift wrapping?",
        # its description names classes, but the question asks for them, not for the mat (as product-QA's "do you
        # have clothes for this doll?" did)
        "Do you have classes for this mat?",
    ],
)
def test_do_you_have_something_else_is_not_do_you_sell_this_product(ask: Asker, query: str) -> None:
    text = plain(ask(query, [_gid(504)]))
    assert not text.startswith("Yes."), (query, text)
    assert "Yes. The Studio Yoga Mat" not in text, (query, text)


def test_do_you_sell_these_with_ids_is_still_yes(ask: Asker) -> None:
    text = plain(ask("Do you sell these?", [_gid(504)]))
    assert text.startswith("Yes."), text


def test_a_yes_or_no_fact_about_something_else_does_not_answer_yes_or_no(ask: Asker) -> None:
    text = plain(ask("Does the set include a blank domino?", [_gid(512)]))
    assert not text.startswith(("No,", "Yes,")), text


def test_a_label_of_the_form_number_of_things_takes_a_singular_verb(ask: Asker) -> None:
    text = plain(ask("How many players is it for?", [_gid(512)]))
    assert "number of players of the Harbour Domino Set is 4" in text, text


def test_a_recorded_size_fact_answers_what_size_without_saying_sizes_are_not_recorded(ask: Asker) -> None:
    # no size option among the variants, but a "Size" fact: that is the answer, with no "not recorded" before it
    for query in ("What size are they?", "What size is the royal blue pair?"):
        text = plain(ask(query, [_gid(513)]))
        assert "ages 9-12" in text and NOT_RECORDED not in text, (query, text)


def test_a_word_the_shop_lists_in_its_synonyms_finds_the_product_its_catalogue_names_otherwise(ask: Asker) -> None:
    # "bones" is nowhere in the catalogue; shop.toml's [synonyms] says shoppers mean its domino set
    data = ask("How many players can play with your bones?")
    text = plain(data)
    assert "Harbour Domino Set" in text and "4" in text, text
    assert [link["url"] for link in product_links(data)] == ["https://tidewater.example/products/harbour-domino-set"]


@pytest.mark.parametrize(
    ("query", "pid", "expected"),
    [
        ("How thick is it?", 504, "The thicknesses of the Studio Yoga Mat are 4mm, 5mm and 6mm."),
        ("Is it tested on animals?", 503, "whether the Rose Face Serum is tested on animals."),
        ("Is it suitable for vegans?", 503, "whether the Rose Face Serum is suitable for vegans."),
    ],
)
def test_an_answer_phrases_the_asked_attribute_in_plain_english(
    ask: Asker, query: str, pid: int, expected: str
) -> None:
    # an option name ending in -ss takes -es ("thicknesses", never "thicknesss"); an attribute word that is the
    # object of a preposition keeps its phrase ("tested on animals", never "is animals")
    text = plain(ask(query, [_gid(pid)]))
    assert expected in text, text


@pytest.mark.parametrize(
    ("query", "pid", "expected"),
    [
        ("How often do I change the cartridge? disinfectant spray only?", 502, "3 months"),
        ("How many players can play? pitch, roll, yaw?", 512, "4"),
        ("Are batteries included? disinfectant spray only?", 510, "not included"),
    ],
)
def test_a_compound_question_answered_in_one_part_does_not_add_an_unnamed_not_recorded(
    ask: Asker, query: str, pid: int, expected: str
) -> None:
    # the other part names nothing the shop could record: "The shop has not recorded that for ..." after the answer
    # only casts doubt on it, and the closest fact it offers repeats the answer
    text = plain(ask(query, [_gid(pid)]))
    assert expected in text, text
    assert NOT_RECORDED not in text, text


def test_a_compound_question_states_each_fact_once(ask: Asker) -> None:
    # the first part's closest recorded fact is the second part's answer: said once, not twice
    text = plain(ask("What are the dimensions? How heavy is the package?", [_gid(510)]))
    assert text.count("1.38 kg") == 1, text


@pytest.mark.parametrize(
    ("query", "pid", "expected"),
    [
        ("Do they come in purple?", 501, "The shop has not recorded any colours for the Nitrile Exam Gloves."),
        ("Is it available in blue?", 504, "The shop has not recorded any colours for the Studio Yoga Mat."),
    ],
)
def test_a_colour_asked_of_a_product_without_colours_is_reported_not_recorded(
    ask: Asker, query: str, pid: int, expected: str
) -> None:
    # silence, or only the other options, would read as if the question was missed
    text = plain(ask(query, [_gid(pid)]))
    assert expected in text, text


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # no age fact, but a description line names the age, below the ranker's own bar and above the bar a fact the
        # lexicon ties to the question needs: quoted, not "not recorded"
        ("Is it OK for my 2 year old?", "For ages 3 years & up."),
        ("Is it suitable for toddlers?", "For ages 3 years & up."),
        ("Would a child of 18 months enjoy it?", "For ages 3 years & up."),
        # a label that is itself a predicate ("Is heat sensitive") reads once, not "is not is heat sensitive"
        ("Is it heat sensitive?", "No, the Pull-Along Caterpillar is not heat sensitive."),
        ("Does it contain small parts?", "Yes, the Pull-Along Caterpillar contains small parts."),
    ],
)
def test_a_description_line_naming_the_asked_attribute_answers_and_predicate_labels_read_well(
    ask: Asker, query: str, expected: str
) -> None:
    text = plain(ask(query, [_gid(514)]))
    assert expected in text, text
    assert NOT_RECORDED not in text, text


@pytest.mark.parametrize(
    "query",
    ["Does it need batteries? If so, what size?", "Does it need batteries? If it does, how long do they last?"],
)
def test_a_conditional_part_after_an_answered_part_adds_no_not_recorded(ask: Asker, query: str) -> None:
    # "if so" holds only if the first part does: its "not recorded" would answer a question the answer rules out
    text = plain(ask(query, [_gid(514)]))
    assert "does not require batteries" in text, text
    assert NOT_RECORDED not in text, text


@pytest.mark.parametrize("query", ["bones", "do you have any bones under $30?", "tiles for family games"])
def test_catalog_search_reads_the_shops_synonyms(ask: Asker, query: str) -> None:
    # shop.toml [synonyms] domino = ["bones", "tiles"]: a search in the shoppers' word finds what the catalogue calls
    # a domino set, as a question does
    from ask_engine.catalog.search import CatalogSearch

    engine = ask.engine
    found = CatalogSearch(engine.index, engine.retriever, engine.embedder).search(query)
    assert [j.doc.title for j in found.results] == ["Harbour Domino Set"], found.results


def test_in_shop_words_replaces_a_synonym_by_the_shops_word() -> None:
    from ask_engine.language import in_shop_words

    synonyms = (("sweater", ("jumper", "pull over")),)
    assert in_shop_words("warm Jumper for winter", synonyms) == "warm sweater for winter"
    assert in_shop_words("a pull  over", synonyms) == "a sweater"
    assert in_shop_words("two jumpers", synonyms) == "two sweater"  # the plural of a listed word too
    assert in_shop_words("a jumpsuit", synonyms) == "a jumpsuit"  # whole words only


@pytest.mark.parametrize("query", ["Is the cable safe for pets to chew?", "Who designed it?"])
def test_not_recorded_offers_no_unrelated_fact_as_the_nearest_one(ask: Asker, query: str) -> None:
    # the ranker puts every recorded fact far from these questions: "Batteries are not included" or the package
    # weight after "not recorded" would be an irrelevant trailing row
    text = plain(ask(query, [_gid(510)]))
    assert NOT_RECORDED in text, text
    assert "atteries" not in text and "1.38" not in text, text


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What sizes does it come in? What age is it for?", "any sizes or the age requirement of The Daily Balm"),
        ("What is it made of? Where is it made?", "the material or the country of origin of The Daily Balm"),
        ("Is it vegan? Does it need batteries?", "whether The Daily Balm is vegan or needs batteries"),
        ("Is it vegan? Is it waterproof?", "whether The Daily Balm is vegan or waterproof"),
    ],
)
def test_several_things_not_recorded_are_said_in_one_sentence_naming_the_product_once(
    ask: Asker, query: str, expected: str
) -> None:
    text = plain(ask(query, [_gid(505)]))
    assert expected in text, text
    assert text.count("The Daily Balm") == 1 and text.count(NOT_RECORDED) == 1, text


# --------------------------------------------------------------------------- counts, measures, empty commerce readings

FIGURES_PRODUCTS = [
    _product(601, "Pretend Fuel Pump", "<p>This pretend gas pump can be used indoors or out.</p>"),
    _product(607, "Stone Garden Gnome", "<p>Frost-proof stone: it can be left outside all year.</p>"),
    {
        **_product(608, "Ball Pit Popper", "<p>Includes a popper base, a chute, a tray and five soft balls.</p>"),
        "variants": [{"id": 6080, "title": "Default Title", "price": None}],  # no price, no stock recorded
    },
    _product(602, "Classic Plush Doll", "<p>A cuddly 16in classic plush doll.</p>"),
    {
        **_product(
            605,
            "Palm Drone",
            "<ul><li>battery type: lithium polymer, batteries for the remote not included</li><li>great for "
            "beginners</li></ul><p>It is small and agile, fast yet precise to control.</p>",
        ),
        "metafields": [
            {
                "namespace": "specs",
                "key": "num_batteries",
                "value": '["quantity 1; type lithium polymer", "quantity 6; type aa"]',
                "type": "list.single_line_text_field",
            },
            {"namespace": "specs", "key": "number_of_channels", "value": "3", "type": "number_integer"},
        ],
    },
    _product(606, "Fold-Flat Play Table", "<p>A play table that folds flat.</p><p>Storage dimensions: 36 x 36 in.</p>"),
    {
        **_product(609, "Trail Phone", "<p>A rugged phone for long walks.</p>"),
        "metafields": [
            {"namespace": "specs", "key": key, "value": value, "type": "single_line_text_field"}
            for key, value in [
                ("display", "size 5.5 inches"),
                ("item_dimensions", "width 3.1 inches; length 6.2 inches; height 0.3 inches"),
                ("item_package_dimensions", "length 8 centimeters; width 16 centimeters; height 4 centimeters"),
                ("item_weight", "285 g"),
                ("item_package_weight", "0.65 kg"),
                ("digital_storage_capacity", "128 GB"),
                ("color", "graphite"),
                ("operating_system", "android 12"),
                ("wireless_carrier", "unlocked"),
                ("model_year", "2022"),
                ("connectivity_technology", "bluetooth, wi-fi, usb"),
                ("included_components", "charging cable, sim tool"),
            ]
        ],
    },
    {
        **_product(604, "Pocket Card Game", "<p>A quick card game for a rainy afternoon.</p>"),
        "metafields": [
            {"namespace": "specs", "key": "number_of_players", "value": "string", "type": "single_line_text_field"}
        ],
    },
]


@pytest.fixture(scope="module")
def ask_figures(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Asker]:
    files = {"shop.toml": SHOP_TOML, "products.json": json.dumps({"products": FIGURES_PRODUCTS})}
    index = build_inline_shop(tmp_path_factory.mktemp("figures") / "tidewater", files, embedder)
    engine = Engine.open(index, embedder=embedder)
    yield Asker(engine, "figures-test")
    engine.close()


def test_where_a_product_may_be_left_is_not_a_stock_question(ask_figures: Asker) -> None:
    data = ask_figures("can this be left outside?", [_gid(601)])
    text = plain(data)
    assert "in stock" not in text, text
    assert "Pretend Fuel Pump" in text or "indoors or out" in text, text
    assert "Gnome" not in text and "all year" not in text, text  # the product asked about, not another one
    assert [link["id"] for link in product_links(data)] == [_gid(601)]


def test_a_stock_reading_with_no_stock_recorded_is_still_answered_about_the_product(ask_figures: Asker) -> None:
    # "available" reads as a stock question; the product records no stock, so its own units answer or are missing
    data = ask_figures("are additional balls available to purchase?", [_gid(608)])
    text = plain(data)
    assert "couldn't find" not in text, text
    assert "Ball Pit Popper" in text or "five soft balls" in text, text
    assert [link["id"] for link in product_links(data)] == [_gid(608)]


def test_a_sentence_stating_the_measure_asked_answers_a_dimensions_question(ask_figures: Asker) -> None:
    text = plain(ask_figures("how tall is it?", [_gid(602)]))
    assert "16in" in text, text
    assert NOT_RECORDED not in text, text


def test_a_count_asked_is_answered_by_the_sentence_giving_that_count() -> None:
    from ask_engine.answering.addressing import counted_stems, states_count, ways_of

    counted = counted_stems("How many pieces is it?")
    assert counted == frozenset({"piec"})
    assert states_count("Artist: R. Vale: item 517: 1000 pieces.", counted)
    assert states_count("For 2-12 players, ages 7 and up.", counted_stems("how many players?"))
    assert states_count("Requires 3 AA batteries (not included).", counted_stems("how many batteries does it take?"))
    # a number before a pause, or another thing counted, is not the count asked
    assert not states_count("Made in 2019, the pieces are cut from thick card.", counted)
    assert not states_count("Comes with 2 spare cards.", counted)
    # a number word gives a count as a figure does (lexicon "number_words")
    players = counted_stems("it is designed for how many players?")
    assert states_count("This is perfect for two players who want quick games.", players)
    assert states_count("Intended for one rider at a time.", counted_stems("how many riders can sit on it?"))
    assert not states_count("The players love it, two thumbs up.", players)
    assert counted_stems("What is it made of?") == frozenset()
    units = description_units(
        "Made in 2019, the pieces are cut from thick card. Artist: R. Vale: item 517: 1000 pieces."
    )
    assert ["measure" in w for w in ways_of("how many pieces is it?", units)] == [False, True]


def test_an_unfilled_export_value_is_not_offered_as_a_fact(ask_figures: Asker) -> None:
    text = plain(ask_figures("how many players can play?", [_gid(604)]))
    assert "string" not in text.lower(), text


def test_a_fact_whose_key_names_the_attribute_in_the_plural_answers_it(ask_figures: Asker) -> None:
    text = plain(ask_figures("does this require batteries?", [_gid(605)]))
    assert "quantity 6; type aa" in text, text  # the recorded fact, not only the description's battery line
    assert NOT_RECORDED not in text, text


def test_what_is_the_size_is_answered_by_a_stated_length_when_no_size_is_an_option(ask_figures: Asker) -> None:
    text = plain(ask_figures("what is the size?", [_gid(606)]))
    assert "36 x 36 in" in text, text
    assert NOT_RECORDED not in text, text


def test_the_measurements_of_a_part_are_answered_by_its_recorded_length(ask_figures: Asker) -> None:
    text = plain(ask_figures("what are the measurements of the screen?", [_gid(609)]))
    assert "size 5.5 inches" in text, text
    assert NOT_RECORDED not in text, text


def test_an_attribute_the_product_records_is_never_said_to_be_missing(ask_figures: Asker) -> None:
    # "capacity" is recorded (as the storage capacity), whether or not the ranker lets that fact answer outright
    text = plain(ask_figures("how much can this hold?", [_gid(609)]))
    assert "not recorded the capacity" not in text, text
    assert "128 GB" in text, text


def test_not_recorded_never_names_an_attribute_the_product_records() -> None:
    from ask_engine.answering.facts import _predicate
    from ask_engine.answering.gaps import product_gaps
    from ask_engine.language import parse_query

    def product(title: str, *facts: Fact) -> Document:
        return Document(
            id=f"product:{title}", kind="product", title=title, url="u", link_type="product", source="s", facts=facts
        )

    doc = product(
        "Trail Phone",
        Fact("digital_storage_capacity", "Digital storage capacity", "128 GB"),
        Fact("color", "Color", "grey"),
    )
    recorded = parse_query("how much can this hold?")
    assert recorded.concepts == ("capacity",)
    # the capacity is recorded: "not recorded" may only say so in the question's own words, or as "that"
    assert "capacity" not in (_predicate(recorded, doc) or "")
    assert all(g.key != "capacity" for g in product_gaps(recorded, doc))
    missing = parse_query("how much does it weigh?")
    assert _predicate(missing, doc) == "the weight of the Trail Phone"
    assert [g.key for g in product_gaps(missing, doc)] == ["weight"]
    # sizes or colours the product is sold in are the commerce answer's; they record no dimensions
    sized = product("Tee", Fact("size_options", "Sizes", "S, M, L", "field"))
    assert _predicate(parse_query("what are the dimensions?"), sized) == "the dimensions of the Tee"


def test_who_makes_it_gets_the_recorded_brand_and_never_that_it_is_missing(ask_figures: Asker) -> None:
    for query in ("Who makes it?", "Who is this by?"):
        text = plain(ask_figures(query, [_gid(601)]))
        # the vendor every test product has ("Tidewater"; the shop's name, "Tidewater Supply", does not count)
        assert re.search(r"[Bb]rand (?:of the Pretend Fuel Pump )?is Tidewater\b", text), (query, text)
        assert "not recorded the brand" not in text, (query, text)
