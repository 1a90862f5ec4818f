"""The grounding guard on hand-labelled SmolLM2 sentences (eval/guard-labelled.jsonl): precision and recall of
"unsupported", held a little below the figures measured on 2026-12-01 (docs/llm.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ask_engine.evaluation.labelled import guard_flags, load_labelled, score_labelled
from ask_engine.faithfulness import FaithfulnessScorer

LABELLED = Path(__file__).parents[1] / "eval" / "guard-labelled.jsonl"


def test_the_labelled_file_is_real_model_sentences_each_with_a_label_and_a_reason() -> None:
    rows = load_labelled(LABELLED)
    assert len(rows) >= 60
    assert {r["label"] for r in rows} == {"supported", "unsupported"}
    assert all(r["evidence_ids"] == [e["id"] for e in r["evidence"]] for r in rows)
    assert len({(r["case"], r["turn"], r["sentence"]) for r in rows}) == len(rows)


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
    scorer = FaithfulnessScorer(embedder)
    assert guard_flags(row, scorer)
    assert not guard_flags({**row, "not_recorded_refuted": False}, scorer)


def test_the_guard_on_the_hand_labelled_model_sentences(embedder: Any) -> None:
    figures = score_labelled(LABELLED, embedder)
    guard = figures["guard"]
    assert figures["sentences"] >= 60
    assert guard["recall_unsupported"] >= RECALL_FLOOR, guard["missed"]
    assert guard["precision_unsupported"] >= PRECISION_FLOOR, guard["wrongly_flagged"]
    # the eval's claim scorer (what `ask-engine eval` reports as unsupported claims) on the same sentences
    claims = figures["claim_scorer"]
    assert claims["recall_unsupported"] >= 0.75, claims["missed"]
    assert claims["precision_unsupported"] >= 0.90, claims["wrongly_flagged"]


# measured 2026-12-01 on the 135 sentences (108 unsupported): guard recall 0.806 (87/108), precision 0.926 (87/94);
# claim scorer recall 0.778 (84/108), precision 0.933 (84/90)
RECALL_FLOOR = 0.78
PRECISION_FLOOR = 0.90
