"""How shoppers write, as two more blind probe shops found it (a skincare brand's product CSV and a coffee roaster's
Admin REST JSON, written by someone who had not read the answerer): accents typed or left out ("cafetiere"), a state's
code taken for a country ("shipping to LA?" read as Laos), a size asked for by a word ("the smaller bag"), a question
asking the opposite of a "… free" label ("is there fragrance in it?" against "Fragrance free: no"), the wrong line of
a notice, and a "not recorded" sentence that restated the question in the asker's words ("keep me up at night"). A
small shop of a different trade, indexed with the real embedding model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.countries import country_codes_in, named_by_state_code
from ask_engine.engine import Engine
from ask_engine.language import content_stems
from ask_engine.lexical import Tokenizer
from ask_engine.resolve import resolve
from tests.shop_helpers import ask_plain, inline_engine


def _variant(pid: int, n: int, size: str, price: str, qty: int) -> dict[str, Any]:
    return {
        "id": pid * 10 + n,
        "title": size,
        "option1": size,
        "price": price,
        "inventory_quantity": qty,
        "inventory_management": "shopify",
        "inventory_policy": "deny",
    }


def _product(
    pid: int,
    title: str,
    body: str,
    kind: str,
    sizes: list[tuple[str, str, int]],
    option_name: str = "Size",
    **extra: Any,
) -> Any:
    option = [{"name": option_name, "values": [s for s, _, _ in sizes]}] if len(sizes) > 1 else []
    variants = [_variant(pid, n, s, p, q) for n, (s, p, q) in enumerate(sizes)]
    if len(sizes) == 1:
        variants[0].update(title="Default Title", option1="Default Title")
    return {
        "id": pid,
        "title": title,
        "handle": f"p{pid}",
        "body_html": body,
        "product_type": kind,
        "vendor": "Pâtisserie Lumen",
        "tags": "",
        "options": option,
        "variants": variants,
        **extra,
    }


PRODUCTS = [
    _product(
        1,
        "Valrhona Manjari Couverture 64%",
        "<p>Fruity dark couverture with red-berry notes, in callets that melt evenly for tempering.</p>",
        "Chocolate",
        [("500 g", "18.50", 12), ("3 kg", "96.00", 0)],
    ),
    _product(
        2,
        "Crème Brûlée Blowtorch",
        "<p>A refillable butane torch with an adjustable flame for caramelising sugar.</p>"
        "<p>Final sale: a torch that has been filled can't be returned.</p>",
        "Kitchen tools",
        [("One size", "39.00", 5)],
        metafields=[
            {
                "namespace": "disclosures",
                "key": "safety_warning",
                "type": "multi_line_text_field",
                "value": "Not for use by children under 16. Stop using it at once if you smell gas.",
            },
        ],
    ),
    _product(
        3,
        "Rose Water Hand Balm",
        "<p>A rich balm for hands that bake all day, with shea butter.</p>",
        "Hand care",
        [("30 ml", "9.00", 4), ("100 ml", "21.00", 7)],
        metafields=[
            {"namespace": "custom", "key": "fragrance_free", "type": "boolean", "value": "false"},
            {
                "namespace": "disclosures",
                "key": "safety_warning",
                "type": "multi_line_text_field",
                "value": "Can increase sun sensitivity: use a sunscreen daily. Stop using it 1 week before waxing. "
                "Not for use during pregnancy or while breastfeeding. Keep out of reach of children.",
            },
        ],
    ),
    _product(
        4,
        "Lumen Cafetière",
        "<p>A glass French press for eight cups.</p>",
        "Brewers",
        [("One size", "29.00", 3)],
    ),
    _product(
        6,
        "Cucumber Eye Gel",
        "<p>A cooling gel for tired eyes.</p><ul><li>Ophthalmologist-tested and safe for contact lens wearers</li></ul>",
        "Eye care",
        [("15 ml", "45.00", 6)],
    ),
    _product(
        5,
        "House Blend Coffee",
        "<p>Chocolatey and round, for any brewer.</p><p>Use the Valrhona couverture for a mocha: melt "
        "20 g into a double shot, then add the milk.</p>",
        "Coffee",
        [("Whole bean", "12.00", 9), ("Cafetière grind", "12.00", 9)],
        option_name="Grind",
        metafields=[
            {"namespace": "custom", "key": "process", "type": "single_line_text_field", "value": "Washed"},
            {"namespace": "custom", "key": "caffeine_level", "type": "single_line_text_field", "value": "High"},
            {"namespace": "custom", "key": "finish", "type": "single_line_text_field", "value": "long and sweet"},
        ],
    ),
    _product(
        7,
        "Silicone Spatula",
        "<p>A flexible spatula for folding meringue.</p>",
        "Kitchen tools",
        [("Red", "25.00", 3), ("Sage", "25.00", 0), ("Black", "25.00", 8)],
        option_name="Colour",
    ),
]
FILES = {
    "shop.toml": '[shop]\nname = "Patisserie Lumen"\nurl = "https://lumen.example"\ncurrency = "USD"\n'
    'gid_namespace = "lumen"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
    "faq.yaml": """- question: How can I contact you?
  answer: Email hello@lumen.example or call us on weekdays; we reply within one working day.
- question: Can I return opened products?
  answer: Opened food and hand care can't be returned for hygiene reasons; tools can within 30 days.
""",
    "policies/shipping.md": """---
type: shipping_policy
title: Shipping Policy
url: https://lumen.example/policies/shipping-policy
---
# Shipping Policy
## Rates
Zone 1 (Northeast): $6.95, 2-3 business days. Zone 2 (Central): $7.95, 3-5 business days. Zone 3 (Pacific and
Mountain states): $8.95, 4-6 business days.
## International
We also ship to Germany for $24.00, 6-10 business days.
""",
}
COUVERTURE, TORCH, BALM, CAFETIERE, BLEND, EYE_GEL, SPATULA = (f"gid://lumen/Product/{n}" for n in range(1, 8))


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("lumen") / "shop", FILES, embedder)


def test_accented_words_match_however_they_are_typed() -> None:
    assert content_stems("cafetière crème") == content_stems("cafetiere creme")
    assert "re" not in content_stems("cafetière")  # was split at the accent into "cafeti" and "re"
    assert Tokenizer("none")("Crème Brûlée") == Tokenizer("none")("creme brulee")
    # an index built before accents were folded keeps reading its words as it wrote them
    assert Tokenizer("none", fold_accents=False)("Crème") == ["crème"]


def test_a_product_is_found_by_its_name_typed_without_accents(engine: Engine) -> None:
    answer = ask_plain(engine, "how much is the creme brulee blowtorch?")
    assert "$39.00" in answer, answer


def test_an_option_word_of_the_product_in_view_names_no_other_product(engine: Engine) -> None:
    resolution = resolve((BLEND,), engine.index, query="do you have it ground for cafetière?")
    assert resolution.doc_ids == (f"product:{BLEND}",), resolution
    answer = ask_plain(engine, "do you have it ground for cafetière?", BLEND)
    assert "Lumen Cafetière" not in answer, answer


def test_a_state_code_is_no_country_the_policy_never_names(engine: Engine) -> None:
    assert named_by_state_code("how much is shipping to LA?", "LA")
    assert not named_by_state_code("do you ship to Laos?", "LA")
    assert not named_by_state_code("ship to the UK?", "GB")
    assert country_codes_in("do you ship to DE?", query=True) == ("DE",)
    answer = ask_plain(engine, "how much is shipping to LA and how long does it take?")
    assert "Laos" not in answer, answer
    # a code the policy does name is still that country
    answer = ask_plain(engine, "do you ship to DE? how much?")
    assert "$24.00" in answer, answer


def test_a_size_asked_for_by_a_word_picks_the_smallest_or_the_largest(engine: Engine) -> None:
    answer = ask_plain(engine, "how much is the smaller bag?", COUVERTURE)
    assert "$18.50" in answer and "$96.00" not in answer, answer
    answer = ask_plain(engine, "is the big bag in stock?", COUVERTURE)
    assert "3 kg" in answer and "sold out" in answer, answer
    assert "500 g" not in answer, answer
    answer = ask_plain(engine, "what does the bigger tube cost?", BALM)
    assert "$21.00" in answer and "$9.00" not in answer, answer


def test_a_question_asking_the_opposite_of_a_free_label_gets_no_reversed_yes_or_no(engine: Engine) -> None:
    answer = ask_plain(engine, "is there any fragrance in it?", BALM)
    assert "not fragrance free" in answer, answer
    assert not answer.startswith("No"), answer
    answer = ask_plain(engine, "is it fragrance free?", BALM)
    assert answer.startswith("No"), answer


def test_the_notice_line_closest_to_the_question_answers_it(engine: Engine) -> None:
    answer = ask_plain(engine, "I just found out I'm pregnant, should I stop using this?", BALM)
    assert "pregnancy" in answer, answer
    assert "waxing" not in answer, answer


@pytest.mark.parametrize(
    ("question", "wanted", "unwanted"),
    [
        ("will this keep me awake at night?", "keep you awake", "keep me"),
        ("can you engrave it for me?", "whether the shop can engrave", "whether you can engrave"),
        ("is this one dishwasher safe?", "is dishwasher safe", "is one dishwasher"),
        ("what are the blue bits?", None, "is bits"),
    ],
)
def test_a_not_recorded_sentence_says_the_question_back_in_the_shops_voice(
    engine: Engine, question: str, wanted: str | None, unwanted: str
) -> None:
    answer = ask_plain(engine, question, CAFETIERE)
    assert "not recorded" in answer, answer
    assert unwanted not in answer, answer
    if wanted is not None:
        assert wanted in answer, answer


def test_a_size_given_as_a_measure_written_another_way_is_that_size(engine: Engine) -> None:
    for question in ("how much is the 3kg bag?", "how much is the 3000 g bag?"):
        answer = ask_plain(engine, question, COUVERTURE)
        assert "$96.00" in answer and "$18.50" not in answer, (question, answer)


def test_the_cheapest_or_dearest_products_are_listed_by_price(engine: Engine) -> None:
    answer = ask_plain(engine, "what is the cheapest thing you sell?")
    assert answer.startswith("By price, lowest first"), answer
    assert answer.index("Rose Water Hand Balm") < answer.index("House Blend Coffee") < answer.index("Valrhona"), answer
    assert "Blowtorch" not in answer, answer  # the dearest of five is not among the three cheapest
    answer = ask_plain(engine, "what's your most expensive kitchen tool?")
    assert answer.startswith("By price, highest first"), answer
    assert "Blowtorch" in answer and "Hand Balm" not in answer, answer  # only the kind it names


def test_a_word_read_as_a_policy_question_that_no_policy_answers_leaves_it_to_the_product(engine: Engine) -> None:
    # "contact" reads as "how do I contact you?"; no policy line answers, the product's own does
    answer = ask_plain(engine, "I wear contact lenses, is it going to be a problem?", EYE_GEL)
    assert "safe for contact lens wearers" in answer, answer


@pytest.mark.parametrize(
    ("question", "product", "said", "unsaid"),
    [
        ("do you do it in a smaller bag? how much?", COUVERTURE, ["$18.50"], "$96.00"),
        # a part naming no variant leaves "how much?" a question of its own about the product
        ("is it fragrance free? how much?", BALM, ["not fragrance free", "$9.00", "$21.00"], None),
    ],
)
def test_how_much_after_a_part_naming_a_variant_asks_the_price_of_that_variant(
    engine: Engine, question: str, product: str, said: list[str], unsaid: str | None
) -> None:
    answer = ask_plain(engine, question, product)
    assert all(part in answer for part in said), answer
    assert unsaid is None or unsaid not in answer, answer


def test_a_products_own_return_terms_answer_before_the_policys_general_rule(engine: Engine) -> None:
    answer = ask_plain(engine, "if I fill it and don't like it, can I return it?", TORCH)
    assert "Final sale" in answer, answer
    assert "30 days" not in answer, answer  # the FAQ's rule for tools in general


def test_a_colour_word_in_a_choice_a_recorded_fact_answers_lists_no_options(engine: Engine) -> None:
    answer = ask_plain(engine, "is it washed or natural?", BLEND)
    assert "Washed" in answer, answer
    assert "Whole bean" not in answer, answer  # "natural" read as a colour asked for listed the grinds


def test_the_options_are_listed_once_when_a_second_part_asks_for_a_colour_not_among_them(engine: Engine) -> None:
    answer = ask_plain(engine, "what colours does it come in? I want the coral one", SPATULA)
    assert answer.count("Red, Sage and Black") == 1, answer


def test_a_product_the_question_only_mentions_gets_no_not_recorded_beside_the_answer_for_the_id(
    engine: Engine,
) -> None:
    answer = ask_plain(engine, "I already bake with your Manjari couverture - can I make a mocha with this?", BLEND)
    assert "20 g" in answer, answer
    assert "not recorded" not in answer, answer


def test_a_fact_stating_no_figure_is_the_nearest_fact_for_a_question_asking_one(engine: Engine) -> None:
    answer = ask_plain(engine, "roughly how many milligrams of caffeine are in a cup?", BLEND)
    assert "not recorded" in answer and "High" in answer, answer
    answer = ask_plain(engine, "how much caffeine does it have?", BLEND)
    assert "not recorded" not in answer and "High" in answer, answer
    # a word of the question's own answers it ("how long?" and "long and sweet")
    answer = ask_plain(engine, "how long is the finish?", BLEND)
    assert "not recorded" not in answer and "long and sweet" in answer, answer
