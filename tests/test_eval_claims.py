"""The eval's claim figures: claims per sentence, unsupported claims raw vs sent, answer sources, fallback reasons."""

from __future__ import annotations

from typing import Any

from ask_engine.evaluation import (
    TurnResult,
    answer_sources,
    claim_figures,
    fallback_reasons,
    metrics,
    parse_case,
    score_turn,
)
from ask_engine.evaluation.claim_score import answer_claims
from ask_engine.evaluation.report import claim_lines
from ask_engine.faithfulness import FaithfulnessScorer

JACKET = "Trail Jacket - Women's\nColours: black, blue and red.\nPrice: £45.00.\nMachine washable: no."
REFUNDS = (
    "Refund Policy — Returns window.\nYou can return full-price items within 30 days of delivery for a full refund."
)
EVIDENCE = [JACKET, REFUNDS]
SUBJECTS = ["Trail Jacket - Women's", ""]


def _claims(answer: str, **kwargs: Any) -> list[tuple[str, str, bool]]:
    scorer = FaithfulnessScorer()
    faith = scorer.score(answer, EVIDENCE, SUBJECTS)
    return [(c.kind, c.text, c.supported) for c in answer_claims(faith, EVIDENCE, SUBJECTS, scorer, **kwargs)]


def test_an_added_list_item_is_one_unsupported_claim_beside_the_supported_ones() -> None:
    assert _claims("The Trail Jacket comes in black, blue and purple.") == [
        ("statement", "The Trail Jacket comes in black, blue and purple.", True),
        ("item", "black", True),
        ("item", "blue", True),
        ("item", "purple", False),
        ("name", "Trail Jacket", True),
    ]


def test_a_stock_state_is_a_claim_the_products_own_lines_decide() -> None:
    evidence = ["Trail Jacket - Women's\nAvailability: in stock.", "Orders FAQ.\nSold out items are refunded in full."]
    subjects = ["Trail Jacket - Women's", ""]
    scorer = FaithfulnessScorer()

    def stock(answer: str) -> list[tuple[str, str, bool]]:
        faith = scorer.score(answer, evidence, subjects)
        claims = answer_claims(faith, evidence, subjects, scorer)
        return [(c.kind, c.text, c.supported) for c in claims if c.kind == "stock"]

    assert stock("The Trail Jacket is sold out.") == [("stock", "out", False)]
    assert stock("The Trail Jacket is in stock.") == [("stock", "in", True)]


def test_numbers_negations_and_names_are_claims_of_their_own() -> None:
    assert _claims("You can return full-price items within 60 days of delivery for a full refund.") == [
        ("statement", "You can return full-price items within 60 days of delivery for a full refund.", True),
        ("number", "60 day", False),
    ]
    assert _claims("The Trail Jacket is not machine washable.") == [
        ("statement", "The Trail Jacket is not machine washable.", True),
        ("name", "Trail Jacket", True),
        ("negation", "machin wash", True),
    ]
    # no negation in the sentence, a negative evidence line: the statement is the wrong way round
    assert _claims("The Trail Jacket is machine washable.") == [
        ("statement", "The Trail Jacket is machine washable.", False),
        ("name", "Trail Jacket", True),
    ]
    assert _claims("The Summit Parka Pro comes in black.")[1] == ("name", "Summit Parka Pro", False)


def test_absence_and_not_recorded_claims() -> None:
    assert _claims("The shop does not offer gift wrapping.") == [("absence", "gift wrapping", False)]
    sentence = "The shop has not recorded whether the Trail Jacket is windproof."
    assert _claims(sentence) == [("not_recorded", sentence, True)]
    assert _claims(sentence, not_recorded_refuted=True) == [("not_recorded", sentence, False)]
    assert _claims("The shop has not recorded.") == []  # a fragment claims nothing


def _turn(**fields: Any) -> TurnResult:
    base: dict[str, Any] = {
        "case_id": "c",
        "category": "product",
        "turn": 0,
        "query": "q",
        "ids": [],
        "context": {},
        "answerable": True,
        "answer": "an answer",
        "draft_kind": "answer",
    }
    return TurnResult(**(base | fields))


def _unsupported(n: int) -> list[dict[str, Any]]:
    return [{"sentence": "s", "kind": "item", "text": f"x{i}", "supported": False} for i in range(n)]


TURNS = [
    # the model answered: 4 of its 10 claims unsupported, 1 of the 8 it sent
    _turn(claims=8, unsupported_claims=_unsupported(1), raw_claims=10, raw_unsupported_claims=_unsupported(4)),
    _turn(fallback="ungrounded", claims=3, raw_claims=4, raw_unsupported_claims=_unsupported(4)),
    _turn(fallback="ungrounded", claims=5, raw_claims=2, raw_unsupported_claims=_unsupported(1)),
    _turn(fallback="generator_unavailable", claims=4),
    _turn(fallback="not_recorded_refuted", claims=2, raw_claims=1, raw_unsupported_claims=_unsupported(1)),
    _turn(answer="", draft_kind=None, claims=0),  # an operation-only request: nothing generated, nothing sent
]


def test_claim_figures_count_unsupported_claims_raw_and_sent() -> None:
    assert claim_figures(TURNS) == {
        "sent": {
            "answers": 5,
            "claims": 22,
            "unsupported": 1,
            "unsupported_per_answer": 0.2,
            "unsupported_share": 0.0455,
        },
        "raw": {
            "answers": 4,
            "claims": 17,
            "unsupported": 10,
            "unsupported_per_answer": 2.5,
            "unsupported_share": 0.5882,
        },
    }
    # an extractive run has no drafts to score: no "raw" block
    assert "raw" not in claim_figures([_turn(claims=3)])
    assert claim_figures([])["sent"]["unsupported_share"] is None


def test_answer_sources_and_fallback_reasons() -> None:
    assert answer_sources(TURNS) == {"generator": 1, "fallback": 4, "none": 1}
    assert fallback_reasons(TURNS) == {"ungrounded": 2, "generator_unavailable": 1, "not_recorded_refuted": 1}


def test_the_summary_and_the_printed_lines_carry_the_figures() -> None:
    overall = metrics(TURNS)
    assert overall["unsupported_claims_per_answer"] == 0.2
    assert overall["unsupported_claim_share"] == 0.0455
    assert overall["unsupported_claims_per_answer_raw"] == 2.5
    assert overall["unsupported_claim_share_raw"] == 0.5882
    assert overall["answered_by"] == {"generator": 1, "fallback": 4, "none": 1}
    assert claim_lines(overall, "openai") == [
        "unsupported claims: raw draft 2.50 per answer, 58.8% of claims (10 of 17 claims in 4 answers)",
        "                    sent answer 0.20 per answer, 4.5% of claims (1 of 22 claims in 5 answers)",
        "answers: 1 from the model (openai), 4 extractive fallbacks, 1 without a draft",
        "fallbacks: ungrounded 2, generator_unavailable 1, not_recorded_refuted 1",
    ]


def test_score_turn_scores_the_claims_of_the_draft_and_of_the_sent_answer() -> None:
    case = parse_case({"id": "c", "category": "product", "query": "q", "expect": {"answerable": True}})
    evidence = [{"number": 1, "doc_id": "p", "passage_id": "p#1", "title": "Trail Jacket - Women's", "text": JACKET}]
    turn = _turn(answer="The Trail Jacket comes in black, blue and red.", evidence=evidence, fallback=None)
    scored = score_turn(
        turn, case.expect, FaithfulnessScorer(), raw_answer="The Trail Jacket comes in black, green and red."
    )
    assert (scored.claims, scored.unsupported_claims) == (5, [])
    assert scored.raw_claims == 5
    assert [(c["kind"], c["text"]) for c in scored.raw_unsupported_claims] == [("item", "green")]
