"""A product's own table read against the figure the question gives, as a blind pet-supplies probe shop found it: "my
lab is 32 kg, how much of this a day?" against a feeding table ("Dog's weight: 30–40 kg, Grams per day: 380–470 g")
said "not recorded"; "a 3 month old kitten" was no figure at all; and "which size for a 20 kg dog?" against sizes "up
to 25 kg" and "up to 38 kg" quoted both. A small baby-goods shop of another trade, indexed with the real embedding
model and asked through `Engine.ask`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.answering.measures import measures_in
from ask_engine.engine import Engine
from tests.shop_helpers import ask_plain, inline_engine, one_option_product


def _product(
    pid: int, title: str, handle: str, body: str, kind: str, option: str, values: list[str], price: str
) -> dict[str, Any]:
    return one_option_product(
        pid, title, handle, body, kind, vendor="Acorn Nursery", option=option, prices=dict.fromkeys(values, price)
    )


PORRIDGE_TABLE = (
    "<table><tr><th>Baby's age</th><th>Spoons per serving</th></tr>"
    "<tr><td>6–9 months</td><td>2 level spoons</td></tr>"
    "<tr><td>9–12 months</td><td>3 level spoons</td></tr>"
    "<tr><td>Over 12 months</td><td>4 level spoons</td></tr></table>"
)
CARRIER_TABLE = (
    "<table><tr><th>Size</th><th>Seat width</th><th>Child's weight</th></tr>"
    "<tr><td>S</td><td>30 cm</td><td>up to 9 kg</td></tr>"
    "<tr><td>M</td><td>34 cm</td><td>up to 15 kg</td></tr>"
    "<tr><td>L</td><td>38 cm</td><td>up to 22 kg</td></tr></table>"
)
SUIT_TABLE = (
    "<table><tr><th>Size</th><th>Chest</th><th>Length</th></tr>"
    "<tr><td>S</td><td>40–46 cm</td><td>50–62 cm</td></tr>"
    "<tr><td>M</td><td>46–52 cm</td><td>62–74 cm</td></tr>"
    "<tr><td>L</td><td>52–58 cm</td><td>74–86 cm</td></tr></table>"
)
TEAT_TABLE = (
    "<table><tr><th>Flow</th><th>Age</th><th>Holes</th></tr>"
    "<tr><td>Slow-flow</td><td>0–3 months</td><td>1</td></tr>"
    "<tr><td>Medium-flow</td><td>3–6 months</td><td>2</td></tr>"
    "<tr><td>Fast-flow</td><td>6 months and up</td><td>3</td></tr></table>"
)
FORMULA_TABLE = (
    "<table><tr><th>Baby's weight</th><th>Powder per day</th></tr>"
    "<tr><td>4–6 kg</td><td>90–120 g</td></tr>"
    "<tr><td>6–8 kg</td><td>120–150 g</td></tr>"
    "<tr><td>8–10 kg</td><td>150–170 g</td></tr></table>"
)
PRODUCTS = [
    _product(
        1,
        "Little Oats Baby Porridge",
        "little-oats",
        "<p>Wholegrain oats, milled fine, with nothing added.</p>"
        + PORRIDGE_TABLE
        + "<p>Mix with warm milk and let it cool before serving.</p>",
        "Baby food",
        "Size",
        ["200 g", "500 g"],
        "4.50",
    ),
    _product(
        2,
        "Fellwalker Child Carrier",
        "fellwalker",
        "<p>A framed carrier for hill days, with a sun hood.</p>" + CARRIER_TABLE,
        "Carriers",
        "Size",
        ["S", "M", "L"],
        "189.00",
    ),
    _product(
        3,
        "Snuggle Sleep Suit",
        "snuggle-suit",
        "<p>Brushed cotton with a two-way zip.</p>" + SUIT_TABLE,
        "Sleepwear",
        "Size",
        ["S", "M", "L"],
        "24.00",
    ),
    _product(
        4,
        "Silkflow Bottle Teats",
        "silkflow-teats",
        "<p>Soft silicone teats, two to a pack.</p>"
        + TEAT_TABLE
        + "<p>They fit standard-neck bottles only; our wide-neck teats are sold separately.</p>",
        "Feeding",
        "Flow",
        ["Slow-flow", "Medium-flow", "Fast-flow"],
        "6.50",
    ),
    _product(
        5,
        "Puddle Bath Seat",
        "puddle-bath-seat",
        "<p>A non-slip seat for the big bath.</p>"
        "<p>Sizes: S for babies under 6 kg, M for 6–11 kg and L for 11 kg and over.</p>",
        "Bath",
        "Size",
        ["S", "M", "L"],
        "19.00",
    ),
    _product(
        6,
        "Meadow Follow-on Milk",
        "meadow-milk",
        "<p>Follow-on milk made with whole milk.</p>" + FORMULA_TABLE,
        "Baby food",
        "Size",
        ["400 g", "800 g"],
        "11.00",
    ),
]
FILES = {
    "shop.toml": '[shop]\nname = "Acorn Nursery"\nurl = "https://acorn.example"\ncurrency = "GBP"\n'
    'gid_namespace = "acorn"\n',
    "products.json": json.dumps({"products": PRODUCTS}),
}
PORRIDGE, CARRIER, SUIT, TEATS, BATH_SEAT, MILK = (f"gid://acorn/Product/{n}" for n in range(1, 7))


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("acorn") / "shop", FILES, embedder)


def test_an_age_is_a_figure_in_months() -> None:
    assert measures_in("how much for my 10 month old?") == [(10.0, "month")]
    assert measures_in("for ages 3 yrs and up") == [(36.0, "month")]
    assert measures_in("a 2 m cable") == [(200.0, "cm")]  # metres are still metres


def test_the_tables_row_holding_the_figure_answers(engine: Engine) -> None:
    answer = ask_plain(engine, "how many spoons should my 10 month old have?", PORRIDGE)
    assert "9–12 months" in answer and "3 level spoons" in answer, answer
    assert "6–9 months" not in answer, answer
    answer = ask_plain(engine, "how much porridge for a 14 month old?", PORRIDGE)
    assert "Over 12 months" in answer and "4 level spoons" in answer, answer


def test_a_figure_naming_a_variant_picks_no_row(engine: Engine) -> None:
    answer = ask_plain(engine, "is the 500 g bag in stock?", PORRIDGE)
    assert "spoons" not in answer, answer


def test_of_nested_bounds_only_the_narrowest_fits(engine: Engine) -> None:
    answer = ask_plain(engine, "which size for a 12 kg toddler?", CARRIER)
    assert "up to 15 kg" in answer, answer
    assert "up to 22 kg" not in answer and "up to 9 kg" not in answer, answer


def test_a_measure_the_question_names_reads_only_its_own_column(engine: Engine) -> None:
    # 50 cm is inside S's length (50–62 cm) too, but the question asks about the chest
    answer = ask_plain(engine, "which size for a 50 cm chest?", SUIT)
    assert "Size: M" in answer, answer
    assert "Size: S" not in answer, answer


def test_a_sentence_stating_each_sizes_bound_answers_for_a_figure(engine: Engine) -> None:
    answer = ask_plain(engine, "which size for a 9 kg baby?", BATH_SEAT)
    assert "M for 6–11 kg" in answer, answer


def test_the_named_variants_own_row_answers_what_it_asks(engine: Engine) -> None:
    # "medium flow" names the variant "Medium-flow" (a hyphen and a space join words alike)
    answer = ask_plain(engine, "how many holes does the medium flow teat have?", TEATS)
    assert "Flow: Medium-flow, Age: 3–6 months, Holes: 2" in answer, answer


def test_a_question_about_a_variant_is_no_question_whether_it_comes_in_it(engine: Engine) -> None:
    answer = ask_plain(engine, "will the fast flow one fit my wide-neck bottles?", TEATS)
    assert "comes in" not in answer and not answer.startswith("Yes"), answer
    answer = ask_plain(engine, "do they come in fast flow?", TEATS)
    assert answer.startswith("Yes, the Silkflow Bottle Teats come"), answer


def test_a_column_named_away_from_the_figure_does_not_hide_the_row(engine: Engine) -> None:
    # "a day" names the "Powder per day" column (grams, a weight too), but 7 kg is the baby's weight
    answer = ask_plain(engine, "she is 7 kg now, how much powder a day?", MILK)
    assert "6–8 kg" in answer and "120–150 g" in answer, answer


def test_the_column_a_figure_measures_is_the_one_named_beside_it() -> None:
    from ask_engine.answering.sizing import _beside_figures, _held_in, _ranges

    row = "Dog's weight: 30–40 kg, Grams per day: 380–470 g."
    question = "my lab is 32kg, how much of this should she be getting a day?"
    assert "day" not in _beside_figures(question)  # "a day" is not what 32 kg measures
    assert _held_in(row, _beside_figures(question), [(32.0, "kg")], _ranges(row)) == (30.0, 40.0)
    suit = "Size: M, Chest: 46–52 cm, Length: 62–74 cm."
    assert _held_in(suit, _beside_figures("which size for a 65 cm chest?"), [(65.0, "cm")], _ranges(suit)) is None
