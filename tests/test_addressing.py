"""How a unit addresses a question (the figure it states, a word it shares), the lowered bar that follows, and the
general reading fixes that came with it (a province named like a country, goods the shop does not sell)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ask_engine.answering.addressing import ADDRESSING, addressed_by, asked_measures
from ask_engine.answering.catalogue import _OFFER_RE, _THING_END_RE
from ask_engine.answering.ranker import lifted, load_ranker
from ask_engine.answering.units import Unit, description_units
from ask_engine.language import country_codes_in, parse_query


def unit(text: str) -> Unit:
    return Unit(text, "description", value=text)


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("How bright is it?", {"brightness"}),
        ("How long does it take?", {"duration", "length"}),
        ("How heavy is the pan?", {"weight"}),
        ("Where is your workshop?", {"place"}),
        ("Is it waterproof?", set()),
    ],
)
def test_the_kind_of_figure_a_question_asks_for(question: str, kinds: set[str]) -> None:
    assert {m.name for m in asked_measures(question)} == kinds


def test_a_unit_stating_the_asked_figure_addresses_the_question() -> None:
    assert "measure" in addressed_by("How bright is it?", unit("Output: 800 lumens on high."))
    assert "measure" in addressed_by("How long does a repair take?", unit("Usually done in 20 minutes."))
    assert "measure" not in addressed_by("How bright is it?", unit("Charging time: 3 hours."))


def test_a_figure_of_another_attribute_does_not_address_the_question() -> None:
    # "how long is it guaranteed for?" asks about the warranty; a waterproof rating in mm is a length, not that
    assert "measure" not in addressed_by(
        "How long is it guaranteed for?", unit("Waterproof rating: 28,000 mm hydrostatic head")
    )


def test_a_shared_word_addresses_unless_it_is_the_product_name_or_the_asked_attribute() -> None:
    replace = unit("Replace the chain once it has stretched by 0.5%.")
    assert "word" in addressed_by("When should I replace it?", replace)
    assert "word" not in addressed_by("Is the Linkwell chain good?", replace, name_stems=frozenset({"chain"}))
    # the attribute's own word ("waterproof") is left to the ranker
    assert "word" not in addressed_by("Is it waterproof?", unit("Waterproof: no, but water resistant."))


def test_an_addressed_unit_is_lifted_to_the_bar_and_others_are_not() -> None:
    ways = [frozenset({"measure"}), frozenset(), frozenset({"word"})]
    out = lifted([0.6, 0.8, 0.85], ways, 0.92, (("measure", 0.5), ("word", 0.9)))
    assert out[0] >= 0.92 and out[1] == pytest.approx(0.8) and out[2] == pytest.approx(0.85)
    # below its way's own bar, nothing changes
    assert lifted([0.4], [frozenset({"measure"})], 0.92, (("measure", 0.5),)) == [pytest.approx(0.4)]


def test_the_shipped_ranker_carries_calibrated_addressed_bars() -> None:
    ranker = load_ranker()
    bars = dict(ranker.addressed_bars)
    assert set(bars) <= set(ADDRESSING) and bars
    assert all(0.0 < b < ranker.bar for b in bars.values())


def test_prose_after_a_list_is_not_one_of_its_items() -> None:
    body = "Includes:\nGear adjustment.\nWheel truing.\nTurnaround is 3 to 5 business days. Parts are extra."
    texts = [u.text for u in description_units(body)]
    assert texts[0] == "Includes: Gear adjustment; Wheel truing."
    assert "Turnaround is 3 to 5 business days." in texts


def test_a_province_named_like_a_country_is_read_as_its_own_country() -> None:
    assert country_codes_in("Zone: British Columbia and Alberta") == ("CA",)
    assert country_codes_in("We ship to Britain") == ("GB",)


def test_a_price_question_about_what_the_price_includes_is_not_a_price_question() -> None:
    assert not parse_query("Does the repair price include the inner tube?").price
    assert parse_query("What is the price of the repair?").price


def test_the_thing_a_sell_question_asks_about() -> None:
    match = _OFFER_RE.search("do you sell bikes for kids?")
    assert match is not None and match.group(1) == "sell"
    assert _THING_END_RE.split(match.group(2), maxsplit=1)[0] == "bikes"
    assert _OFFER_RE.search("do you have a physical store?") is None  # "have" is left to sentence selection


def test_the_shipped_ranker_carries_a_calibrated_lexicon_bar_below_its_bar() -> None:
    ranker = load_ranker()
    assert 0.0 < ranker.lexicon_bar <= ranker.bar


def _item(y: list[int], lexicon: list[bool]) -> Any:
    from ask_engine.answering.calibrate import Item

    units = [Unit(f"Label {i}: value", "fact", label=f"Label {i}", value="value", key=f"k{i}") for i in range(len(y))]
    zeros = np.zeros(len(y), dtype=np.float32)
    return Item("f", "p", "q?", True, units, np.zeros((len(y), 1)), np.asarray(y), zeros, [frozenset()] * len(y),
                lexicon=lexicon)  # fmt: skip


def test_the_calibration_scores_the_unit_the_answerer_would_state() -> None:
    from ask_engine.answering.calibrate import answered_unit

    item = _item([0, 1, 0], [False, True, False])
    scores = np.asarray([0.5, 0.8, 0.2], dtype=np.float32)
    # a lexicon-tied fact at or above the lexicon bar answers although the ranker's bar is higher
    assert answered_unit(item, scores, 0.92, 0.75) == 1
    # below the lexicon bar, nothing clears either bar: "not recorded"
    assert answered_unit(item, scores, 0.92, 0.85) is None
    # a unit above the ranker's bar that scores higher than every tied fact answers instead
    assert answered_unit(item, np.asarray([0.95, 0.8, 0.2], dtype=np.float32), 0.92, 0.75) == 0
    assert answered_unit(_item([1], [False]), np.asarray([0.93], dtype=np.float32), 0.92, 0.75) == 0
    assert answered_unit(_item([], []), np.zeros(0, dtype=np.float32), 0.92, 0.75) is None
