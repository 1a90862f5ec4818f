"""Claim-level grounding: list items, negative existence, 'not recorded' claims, names and fragments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ask_engine.engine import Engine
from ask_engine.guard import ground
from ask_engine.guard.claims import check_claims, is_not_recorded, list_items, names, negated_thing
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
