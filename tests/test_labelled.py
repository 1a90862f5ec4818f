"""The grounding guard on hand-labelled SmolLM2 sentences (eval/guard-labelled.jsonl, and the held-out batch
eval/guard-labelled-heldout.jsonl labelled after the claim checks were written): precision and recall of
"unsupported", held a little below the figures measured on 2026-12-01 (docs/llm.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ask_engine.evaluation.labelled import guard_flags, half, load_labelled, score_labelled
from ask_engine.faithfulness import FaithfulnessScorer

LABELLED = Path(__file__).parents[1] / "eval" / "guard-labelled.jsonl"
HELDOUT = Path(__file__).parents[1] / "eval" / "guard-labelled-heldout.jsonl"


@pytest.mark.parametrize("path", [LABELLED, HELDOUT], ids=["labelled", "heldout"])
def test_the_labelled_file_is_real_model_sentences_each_with_a_label_and_a_reason(path: Path) -> None:
    rows = load_labelled(path)
    assert len(rows) >= 60
    assert {r["label"] for r in rows} == {"supported", "unsupported"}
    assert all(r["evidence_ids"] == [e["id"] for e in r["evidence"]] for r in rows)
    assert len({(r["case"], r["turn"], r["sentence"]) for r in rows}) == len(rows)
    assert all(isinstance(r["resolved"], list) for r in rows)


def test_the_halves_split_by_case_and_both_hold_supported_and_unsupported_rows() -> None:
    rows = load_labelled(LABELLED)
    halves = {half(r["case"]) for r in rows}
    assert halves == {"dev", "held-out"}
    for part in halves:
        labels = {r["label"] for r in rows if half(r["case"]) == part}
        assert labels == {"supported", "unsupported"}
    assert all(len({half(r["case"]) for r in rows if r["case"] == case}) == 1 for case in {r["case"] for r in rows})


def test_a_row_without_a_label_or_reason_is_rejected(tmp_path: Path) -> None:
    row = json.loads(LABELLED.read_text("utf-8").splitlines()[0])
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({**row, "label": None}) + "\n", "utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: label"):
        load_labelled(path)
    path.write_text(json.dumps({**row, "reason": " "}) + "\n", "utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: label"):
        load_labelled(path)


def test_a_refuted_not_recorded_sentence_is_flagged(embedder: Any) -> None:
    row = next(r for r in load_labelled(LABELLED) if r["not_recorded_refuted"] and "not recorded" in r["sentence"])
    # only the not-recorded part: what such a sentence goes on to claim is checked on its own (test_guard_bindings)
    row = {**row, "sentence": row["sentence"].split(",")[0] + "."}
    scorer = FaithfulnessScorer(embedder)
    assert guard_flags(row, scorer)
    assert not guard_flags({**row, "not_recorded_refuted": False}, scorer)


def test_the_guard_on_the_hand_labelled_model_sentences(embedder: Any) -> None:
    figures = score_labelled(LABELLED, embedder)
    guard = figures["guard"]
    assert figures["sentences"] >= 60
    assert guard["recall_unsupported"] >= RECALL_FLOOR, guard["missed"]
    assert guard["precision_unsupported"] >= PRECISION_FLOOR, guard["wrongly_flagged"]
    assert figures["supported_kept"] >= KEPT_FLOOR, guard["wrongly_flagged"]
    # the eval's claim scorer (what `ask-engine eval` reports as unsupported claims) on the same sentences
    claims = figures["claim_scorer"]
    assert claims["recall_unsupported"] >= 0.80, claims["missed"]
    assert claims["precision_unsupported"] >= 0.90, claims["wrongly_flagged"]


def test_the_guard_on_the_held_out_batch(embedder: Any) -> None:
    figures = score_labelled(HELDOUT, embedder)
    guard = figures["guard"]
    assert guard["recall_unsupported"] >= HELDOUT_RECALL_FLOOR, guard["missed"]
    assert guard["precision_unsupported"] >= PRECISION_FLOOR, guard["wrongly_flagged"]
    assert figures["supported_kept"] >= 0.75, guard["wrongly_flagged"]


# measured 2026-12-01 on the 135 sentences (108 unsupported): guard recall 0.926 (100/108), precision 0.935
# (100/107), supported kept 20/27; claim scorer recall 0.824 (89/108), precision 0.937 (89/95). Before the claim
# checks of issue 15: guard 0.806 / 0.926, claim scorer 0.778 / 0.933.
# held-out batch, 61 sentences (46 unsupported): guard recall 0.870 (40/46), precision 0.930 (40/43), kept 12/15
# (before the claim checks: 0.783 / 0.923, kept 12/15).
RECALL_FLOOR = 0.90
HELDOUT_RECALL_FLOOR = 0.84
PRECISION_FLOOR = 0.90
KEPT_FLOOR = 0.70
