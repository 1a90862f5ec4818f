"""The faithfulness scorer lives in `ask_engine.guard.faithfulness` (one implementation for the eval and the guard);
this module keeps its old imports and `python -m ask_engine.faithfulness --calibrate eval/calibration.jsonl`."""

from __future__ import annotations

import sys

from ask_engine.guard.calibration import CORRUPTIONS, CalibrationPair, calibration_report, load_calibration, main
from ask_engine.guard.faithfulness import (
    FaithfulnessResult,
    FaithfulnessScorer,
    SentenceSupport,
    attributable,
    classify,
    content_words,
    hard_tokens,
    passage_subject,
    split_sentences,
)

__all__ = [
    "CORRUPTIONS",
    "CalibrationPair",
    "FaithfulnessResult",
    "FaithfulnessScorer",
    "SentenceSupport",
    "attributable",
    "calibration_report",
    "classify",
    "content_words",
    "hard_tokens",
    "load_calibration",
    "main",
    "passage_subject",
    "split_sentences",
]

if __name__ == "__main__":
    sys.exit(main())
