"""The faithfulness scorer shared by the eval and the grounding guard: tokens, sentences, support, calibration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ask_engine.guard.calibration import CORRUPTIONS, calibration_report, load_calibration
from ask_engine.guard.faithfulness import FaithfulnessScorer, classify, content_words, hard_tokens, split_sentences

ROOT = Path(__file__).resolve().parents[1]
CALIBRATION = ROOT / "eval" / "calibration.jsonl"

REFUND = """Refund Policy — Returns window.
You can return full-price items within **30 days of delivery** for a full refund to your original payment method.
Items bought at a reduced price can be returned within 14 days of delivery.
For hygiene and safety reasons we cannot accept returns of:
Food, including trail food, energy bars, dried meals and nut butters.
Gift cards are non-refundable and cannot be exchanged for cash."""
SHIPPING = """Shipping Policy — UK delivery.
Service: UK Standard (Royal Mail Tracked 48 or Evri), Delivery time: 3-5 working days from dispatch, Cost: £3.95, free on orders over £50.
Express delivery is available to UK mainland addresses only.
You can also return online orders in person at any of our stores (Keswick, Fort William and Betws-y-Coed)."""
PRODUCT = """Tarn Wellington Boot by Fjord & Fell (Wellington Boots).
Material: natural rubber.
Weight: 2,100 g (pair, UK 8).
Country of origin: Portugal."""
EVIDENCE = [REFUND, SHIPPING, PRODUCT]


@pytest.fixture(scope="module")
def lexical() -> FaithfulnessScorer:
    return FaithfulnessScorer()


# -------------------------------------------------------------------------------------------- sentences


def test_split_sentences_keeps_abbreviations_decimals_and_addresses_inside_one_sentence() -> None:
    text = "Prices start at £3.95 each, e.g. for socks. Email help@shop.example or see shop.example/returns. Done."
    assert split_sentences(text) == [
        "Prices start at £3.95 each, e.g. for socks.",
        "Email help@shop.example or see shop.example/returns.",
        "Done.",
    ]


def test_split_sentences_treats_list_items_headings_and_label_lines_as_sentences() -> None:
    text = "# Delivery\n- **UK:** free over £50\n- EU: £9.95\n1. Pack it\nWaterproof: yes.\nNo. It isn't."
    assert split_sentences(text) == [
        "Delivery",
        "**UK:** free over £50",
        "EU: £9.95",
        "Pack it",
        "Waterproof: yes.",
        "No.",
        "It isn't.",
    ]


def test_split_sentences_joins_lines_wrapped_mid_sentence_and_splits_table_rows() -> None:
    text = "You can return items within 30 days\nof delivery.\n| Size | Chest |\n|---|---|\n| S | 91-96 |"
    assert split_sentences(text) == ["You can return items within 30 days of delivery.", "Size; Chest", "S; 91-96"]


def test_no_before_a_number_is_an_abbreviation() -> None:
    assert split_sentences("Use stove No. 5 only. Thanks.") == ["Use stove No. 5 only.", "Thanks."]


# -------------------------------------------------------------------------------------------- tokens


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("£3.95, free on orders over £50", {"£3.95", "£50"}),
        ("Price: £189.00", {"£189"}),
        ("3 to 5 working days", {"3-5 working day"}),
        ("a thirty-day window", {"30 day"}),
        ("20,000 mm hydrostatic head", {"20000 mm"}),
        ("Weighs 1,240 g per pair", {"1240 g"}),
        ("200 g/m² fleece", {"200 g/m2"}),
        ("20% icaridin", {"20 %"}),
        ("Comfort 0 °C / Limit -5 °C", {"0 °c", "-5 °c"}),
        ("open 9:00am - 5:30pm, order by 2pm", {"9am", "5:30pm", "2pm"}),
        ("SKU FF-SKID-M-BLK-S or FF-KIRK2, rated IPX6", {"ff-skid-m-blk-s", "ff-kirk2", "ipx6"}),
        ("Contains: peanuts, soya. May contain tree nuts.", {"peanut", "soy", "tree nut"}),
        ("a 2-year warranty", {"2 year"}),
        ("no figures here at all", set()),
    ],
)
def test_hard_tokens_are_canonical(text: str, expected: set[str]) -> None:
    assert hard_tokens(text) == expected


def test_content_words_drop_stopwords_and_share_stems() -> None:
    assert content_words("We shipped the boots") == content_words("shipping boot")
    assert "the" not in content_words("the returns window") and "window" in content_words("the returns window")


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("The shop has not recorded whether the Tarn Wellington Boot is waterproof.", "refusal"),
        ("I couldn't find that in the shop's information.", "refusal"),
        ("An answer isn't available right now.", "refusal"),
        # the sentence shown below the ranker's bar follows this hedge: still an abstention
        ("The shop does not say exactly that for the Tarn Wellington Boot, but it records this.", "refusal"),
        ("Nothing was changed in your cart: I can only answer questions.", "meta"),
        ("What would you like to know?", "meta"),
        ("Gift cards are non-refundable.", "claim"),
        ("We can't refund parcels that don't reach us.", "claim"),
    ],
)
def test_classify_separates_refusals_and_fixed_phrases_from_claims(sentence: str, kind: str) -> None:
    assert classify(sentence) == kind
    assert FaithfulnessScorer().is_refusal(sentence) is (kind != "claim")


# -------------------------------------------------------------------------------------------- support


def test_a_verbatim_and_a_paraphrased_sentence_are_supported(lexical: FaithfulnessScorer) -> None:
    for sentence in (
        "You can return full-price items within 30 days of delivery for a full refund.",
        "Full-price items can be returned for a full refund within 30 days of delivery.",
        "The Tarn Wellington Boot is made of natural rubber.",
    ):
        result = lexical.support(sentence, EVIDENCE)
        assert result.supported, result
        assert result.kind == "claim"


@pytest.mark.parametrize(
    ("sentence", "missing"),
    [
        ("You can return full-price items within 60 days of delivery for a full refund.", "60 day"),
        ("You can return full-price items within 30 weeks of delivery for a full refund.", "30 week"),
        ("UK Standard delivery takes 3-5 working days and costs £4.95.", "£4.95"),
        ("You can return online orders in person at our Ambleside store.", "ambleside"),
        ("We can accept returns of food, including energy bars.", "negation"),
        ("Gift cards are refundable and can be exchanged for cash.", "negation"),
    ],
)
def test_a_corrupted_sentence_is_unsupported_and_says_what_is_missing(
    lexical: FaithfulnessScorer, sentence: str, missing: str
) -> None:
    result = lexical.support(sentence, EVIDENCE)
    assert not result.supported
    assert missing in result.missing_tokens


def test_a_number_from_another_passage_does_not_rescue_a_substituted_figure(lexical: FaithfulnessScorer) -> None:
    # 14 appears in the evidence (sale returns) but the full-price sentence says 30.
    result = lexical.support("You can return full-price items within 14 days of delivery for a full refund.", EVIDENCE)
    assert not result.supported and "14 day" in result.missing_tokens


def test_an_added_unsupported_clause_makes_the_sentence_unsupported(lexical: FaithfulnessScorer) -> None:
    result = lexical.support(
        "Express delivery is available to UK mainland addresses only, and it comes with a lifetime guarantee.",
        EVIDENCE,
    )
    assert not result.supported
    assert any(m.startswith("clause:") for m in result.missing_tokens)


def test_score_counts_claims_only_and_flags_refusals(lexical: FaithfulnessScorer) -> None:
    answer = (
        "The shop has not recorded whether the Tarn Wellington Boot is waterproof. Its material is natural rubber. "
        "It is made in Spain."
    )
    result = lexical.score(answer, EVIDENCE)
    assert [s.kind for s in result.sentences] == ["refusal", "claim", "claim"]
    assert result.score == pytest.approx(0.5)
    assert result.abstains and not result.refusal
    only_refusal = lexical.score("The shop has not recorded whether it is waterproof.", EVIDENCE)
    assert only_refusal.refusal and not only_refusal.claims and only_refusal.score == 1.0


def test_a_refusal_with_an_invented_figure_is_not_supported(lexical: FaithfulnessScorer) -> None:
    result = lexical.support("The shop has not recorded a 90% discount.", EVIDENCE)
    assert result.kind == "refusal" and not result.supported and "90 %" in result.missing_tokens


def test_no_evidence_supports_no_claim(lexical: FaithfulnessScorer) -> None:
    assert not lexical.support("The boot is waterproof.", []).supported


def test_the_embedder_adds_similarity_and_keeps_verdicts(embedder: Any) -> None:
    scorer = FaithfulnessScorer(embedder)
    good = scorer.support("Express delivery is only available to UK mainland addresses.", EVIDENCE)
    bad = scorer.support("Express delivery is available to all addresses in Norway.", EVIDENCE)
    assert good.supported and good.similarity > 0.7
    assert not bad.supported


# -------------------------------------------------------------------------------------------- calibration

# Set a little below the figures measured on eval/calibration.jsonl (see eval/README.md), so a regression fails.
MIN_PRECISION = 0.97  # measured 0.989
MIN_RECALL = 0.92  # measured 0.942
MIN_ACCURACY = 0.94  # measured 0.962
MIN_RECALL_BY_CORRUPTION = {  # measured 1.0, 0.974, 0.921, 0.842, 0.974
    "number_changed": 0.95,
    "unit_changed": 0.92,
    "negation_flipped": 0.87,
    "entity_swapped": 0.78,
    "claim_added": 0.92,
}


def test_the_calibration_set_is_large_labelled_and_covers_every_corruption() -> None:
    pairs = load_calibration(CALIBRATION)
    assert len(pairs) >= 200
    assert sum(p.label for p in pairs) >= 100
    assert {p.corruption for p in pairs if not p.label} == set(CORRUPTIONS)
    assert all(p.corruption is None for p in pairs if p.label)


def _check(report: dict[str, Any], floors: dict[str, float]) -> None:
    overall = report["overall"]
    assert overall["precision"] >= floors["precision"], overall
    assert overall["recall"] >= floors["recall"], overall
    assert overall["accuracy"] >= floors["accuracy"], overall
    for corruption, floor in MIN_RECALL_BY_CORRUPTION.items():
        assert report["by_corruption"][corruption]["recall"] >= floor, (corruption, report["by_corruption"][corruption])


def test_the_lexical_checks_alone_detect_unfaithful_answers_on_the_calibration_set() -> None:
    # measured without an embedder: precision 0.978, recall 0.947, accuracy 0.959
    report = calibration_report(FaithfulnessScorer(), load_calibration(CALIBRATION))
    _check(report, {"precision": 0.96, "recall": 0.92, "accuracy": 0.94})


@pytest.mark.slow
def test_the_scorer_detects_unfaithful_answers_on_the_calibration_set(embedder: Any) -> None:
    # embeds every evidence sentence of 343 pairs: a minute on two cores, hence `slow`
    report = calibration_report(FaithfulnessScorer(embedder), load_calibration(CALIBRATION))
    _check(report, {"precision": MIN_PRECISION, "recall": MIN_RECALL, "accuracy": MIN_ACCURACY})


def test_a_malformed_calibration_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cal.jsonl"
    good = {"id": "a", "answer": "x", "evidence": ["x"], "label": True, "corruption": None}
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"corruption": "typo"}) + "\n", "utf-8")
    with pytest.raises(ValueError, match=r"cal.jsonl:2: unknown corruption"):
        load_calibration(path)
