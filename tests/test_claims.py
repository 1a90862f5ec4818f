"""Claim-level grounding: list items, negative existence, 'not recorded' claims, names and fragments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ask_engine.engine import Engine
from ask_engine.guard import ground
from ask_engine.guard.bindings import stock_states, unsupported_stock
from ask_engine.guard.claims import check_claims, is_not_recorded, list_items, names, negated_thing, unlisted_item
from ask_engine.guard.faithfulness import FaithfulnessScorer
from ask_engine.testing import ScriptedGenerator
from ask_engine.types import Draft, Evidence, Passage, Resolution, Sentence, Task

EVIDENCE = [
    "Trail Runner Jacket by Northfold (Jackets).",
    "Colours: black, blue, purple and red.",
    "We do not offer gift wrapping.",
]


def test_every_item_of_a_list_must_be_in_the_evidence() -> None:
    assert list_items("It comes in black, blue, purple, red and white.") == ["black", "blue", "purple", "red", "white"]
    assert check_claims("It comes in black, blue, purple and red.", EVIDENCE).verdict == "ok"
    added = check_claims("It comes in black, blue, purple, red and white.", EVIDENCE)
    assert (added.verdict, added.detail) == ("unsupported", "white")
    assert check_claims("It is available in black and white.", EVIDENCE).verdict == "unsupported"


TENTS = [
    "Ridge 2 Tent by Northfold (Tents).\nCapacity: two-person.\nAvailability: in stock.",
    "Valley Family Tent by Northfold (Tents).\nCapacity: 4-person.\nAvailability: sold out.",
    "Bivvy Solo Shelter by Northfold (Tents).\nA one-person pack shelter.",
    "Ridge 2 Tent by Northfold (Tents).\nColours: green, grey and sand.",
    "Orders FAQ.\nWhat happens when an item is sold out? We refund it in full.",
    "Shipping Policy — Europe.\nWe ship to France and Germany.",
    "Shipping Policy — Further afield.\nWe also ship to Norway.",
]


def test_the_items_of_one_list_come_from_one_passage_unless_each_names_a_passage() -> None:
    # every item is somewhere in the evidence, but no product has all three: three products' figures in one list
    mixed = check_claims("The full kit includes a 4-person, two-person and one-person pack.", TENTS)
    assert mixed.verdict == "unsupported"
    assert unlisted_item(["4-person", "two-person", "one-person pack"], TENTS) in ("4-person", "one-person pack")
    # chunks of one product (same first line) and sections of one page count as one passage
    assert check_claims("The Ridge 2 Tent is a two-person tent in green, grey and sand.", TENTS).verdict == "ok"
    assert check_claims("We ship to France, Germany and Norway.", TENTS).verdict == "ok"
    # a listing of products: each item names its own passage
    listing = "We sell the Ridge 2 Tent, the Valley Family Tent and the Bivvy Solo Shelter."
    assert check_claims(listing, TENTS).verdict == "ok"
    assert unlisted_item(["green", "purple"], TENTS) == "purple"  # an item in no passage at all


def test_a_stated_stock_state_must_be_the_one_the_products_own_lines_give() -> None:
    ridge = [TENTS[0], TENTS[4]]  # its own lines say in stock; the FAQ mentions "sold out"
    sold_out = check_claims("The Ridge 2 Tent is sold out.", ridge)
    assert (sold_out.verdict, sold_out.detail) == ("unsupported", "stock: out")
    assert check_claims("The Ridge 2 Tent is in stock.", ridge).verdict == "ok"
    assert check_claims("The Valley Family Tent is sold out.", [TENTS[1], TENTS[4]]).verdict == "ok"
    assert unsupported_stock("The Valley Family Tent is in stock.", [TENTS[1]]) == "in"
    # another product's sold-out line does not support it: the sentence names the Ridge 2 Tent
    assert unsupported_stock("The Ridge 2 Tent is sold out.", TENTS) == "out"
    # a phrase of one state inside a longer one of the other counts as the longer one
    assert stock_states("It is not in stock.") == {"out"}
    assert stock_states("Sold out in blue, in stock in red.") == {"in", "out"}
    # some variants sold out: either state can be true of a variant
    mixed = ["Trail Sock.\nAvailability: in stock, except Blue / L (sold out)."]
    assert unsupported_stock("The blue one is sold out.", mixed) is None
    assert unsupported_stock("The red one is in stock.", mixed) is None
    # no stock line in the evidence: nothing to hold the sentence to (the overlap checks judge it)
    assert unsupported_stock("It is sold out.", [TENTS[4]]) is None


def test_a_negative_existence_claim_needs_the_evidence_to_say_so() -> None:
    assert negated_thing("The shop does not have a customer service number.") == "a customer service number"
    lacking = check_claims("The shop does not have a customer service number.", EVIDENCE)
    assert (lacking.verdict, lacking.detail) == ("negative_unsupported", "a customer service number")
    assert check_claims("We don't offer gift wrapping.", EVIDENCE).verdict == "ok"  # the evidence says it


def test_not_recorded_claims_and_fragments() -> None:
    assert is_not_recorded("The shop has not recorded the warranty of the jacket.")
    assert check_claims("The shop has not recorded the warranty of the jacket.", EVIDENCE).verdict == "not_recorded"
    assert check_claims("The shop has not recorded.", EVIDENCE).verdict == "fragment"


def test_a_name_the_evidence_never_gives_is_unsupported() -> None:
    assert names("The Trail Runner Jacket comes in red.") == ["Trail Runner Jacket"]
    assert check_claims("The Trail Runner Jacket comes in red.", EVIDENCE).verdict == "ok"
    swapped = check_claims("The Summit Pro Jacket comes in red.", EVIDENCE)
    assert (swapped.verdict, swapped.detail) == ("unsupported", "Summit Pro Jacket")
    assert names("UK customers get a label (Royal Mail or Evri).") == ["Royal Mail"]


def _task(texts: list[str]) -> Task:
    evidence = tuple(
        Evidence(
            number=n,
            passage=Passage(
                id=f"p#{n}",
                doc_id="p",
                text=text,
                title="Trail Runner Jacket",
                url="u",
                kind="product",
                link_type="product",
            ),
            score=1.0,
        )
        for n, text in enumerate(texts, start=1)
    )
    return Task(query="q", evidence=evidence, documents={}, resolution=Resolution(), shop_name="Northfold")


def test_the_guard_removes_an_added_item_and_rephrases_an_unsupported_negative(embedder: Any) -> None:
    scorer = FaithfulnessScorer(embedder)
    task = _task(
        [
            "Trail Runner Jacket by Northfold (Jackets). Colours: black, blue, purple and red.",
            "Email our customer service team with your order number; we reply within a day.",
        ]
    )
    draft = Draft(
        sentences=(
            Sentence("The Trail Runner Jacket comes in black, blue, purple, red and white.", cites=(1,)),
            Sentence("The Trail Runner Jacket comes in black, blue, purple and red.", cites=(1,)),
            Sentence("The shop does not have a customer service number.", cites=(2,)),
        ),
        generator="model",
    )
    kept, removed = ground(draft, task, scorer)
    texts = [s.text for s in kept.sentences]
    assert "The Trail Runner Jacket comes in black, blue, purple and red." in texts
    assert all("white" not in t for t in texts)
    assert any(
        "couldn't find anything about a customer service number" in s.text and s.kind == "meta" for s in kept.sentences
    )
    assert len(removed) == 2


@pytest.fixture(scope="module")
def refuting_engine(sample_index: Path, embedder: Any) -> Engine:
    model = ScriptedGenerator(lambda task: "The shop has not recorded the warranty of the Tarn Wellington Boot.")
    return Engine.open(sample_index, embedder=embedder, generator=model)


def test_a_model_not_recorded_is_refuted_when_the_extractive_answer_finds_it(refuting_engine: Engine) -> None:
    response, trace = refuting_engine.ask_traced({"query": "What warranty does the Tarn Wellington Boot have?"})
    assert trace.fallback == "not_recorded_refuted"
    assert "warranty" in response.answer.plain and "has not recorded" not in response.answer.plain


def test_the_guard_catches_the_committed_perturbations_and_keeps_the_supported_sentences(embedder: Any) -> None:
    """eval/guard-perturbations.jsonl: sentences the extractive answerer sends on the sample shop, and their
    perturbations (an added list item, a flipped negation, a changed number, another product's name)."""
    from ask_engine.evaluation.perturb import score_set

    figures = score_set(Path(__file__).parents[1] / "eval" / "guard-perturbations.jsonl", embedder)
    assert figures["perturbed"] >= 250 and figures["supported"] >= 150
    assert figures["caught"] >= 0.99, figures["missed"]
    assert figures["kept"] >= 0.90


@pytest.fixture(scope="module")
def figure_engine(sample_index: Path, embedder: Any) -> Engine:
    replies = {
        "How much is the Kirkstone 2 Backpacking Tent?": "The Kirkstone 2 Backpacking Tent is a freestanding two-person tent.",
        "What does the Kirkstone 2 Backpacking Tent cost?": "The Kirkstone 2 Backpacking Tent costs £279.00.",
        "Is the Kirkstone 2 Backpacking Tent freestanding?": "The Kirkstone 2 Backpacking Tent is a freestanding two-person tent.",
        "How long does delivery take to the Scottish Highlands?": "UK Standard delivery takes 3-5 working days.",
    }
    return Engine.open(sample_index, embedder=embedder, generator=ScriptedGenerator(lambda task: replies[task.query]))


def test_a_model_answer_without_the_figure_asked_for_or_with_another_gives_way_to_the_extractive_one(
    figure_engine: Engine,
) -> None:
    # grounded words, but a price question answered without a price: the extractive answer states it
    response, trace = figure_engine.ask_traced({"query": "How much is the Kirkstone 2 Backpacking Tent?"})
    assert trace.fallback == "figure_missing"
    assert "£279" in response.answer.plain
    # the model states the price: its answer stands
    response, trace = figure_engine.ask_traced({"query": "What does the Kirkstone 2 Backpacking Tent cost?"})
    assert trace.fallback is None and "£279.00" in response.answer.plain
    # another row's figure (the mainland's delivery time for a Highlands address): the extractive answer's is sent
    response, trace = figure_engine.ask_traced({"query": "How long does delivery take to the Scottish Highlands?"})
    assert trace.fallback == "figure_differs"
    assert "4-7 working days" in response.answer.plain
    # a question asking for no figure is not held to one
    response, trace = figure_engine.ask_traced({"query": "Is the Kirkstone 2 Backpacking Tent freestanding?"})
    assert trace.fallback is None and "freestanding" in response.answer.plain


def test_what_kind_of_figure_a_question_asks_for_and_whether_an_answer_states_it() -> None:
    from ask_engine.answering.addressing import asked_figure_values, asked_figures

    assert [m.name for m in asked_figures("how much does the long one cost?")] == ["price"]
    assert asked_figure_values("how much does the long one cost?", ["It will be available next week."]) == frozenset()
    assert asked_figure_values("how much does the long one cost?", ["It costs £319.00."]) == {"319"}
    assert asked_figure_values("How much does it weigh?", ["It weighs 410 g."]) == {"410"}  # a weight, not a price
    long = "How long does delivery take to the Highlands?"
    assert asked_figure_values(long, ["We deliver to UK mainland addresses by UK Standard delivery."]) == frozenset()
    assert asked_figure_values(long, ["The delivery time is 4-7 working days."]) == {"4", "7"}
    assert asked_figure_values("Do you price match other shops?", ["No, we don't."]) is None
    assert asked_figure_values("Is it waterproof?", ["Yes."]) is None
    # the values compared with the extractive answer's: whole numbers, whatever the figure's form
    assert asked_figure_values("How much is it?", ["It costs £279.00, or 1,299.50 EUR."]) == {"279", "1299.5"}
    assert asked_figure_values("How long does it take?", ["3-5 working days"]) == {"3", "5"}
