"""Calibration of the faithfulness scorer on labelled (answer, evidence) pairs:
`python -m ask_engine.faithfulness --calibrate eval/calibration.jsonl [--grid] [--show-errors]`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ask_engine.protocols import Embedder
from ask_engine.guard.faithfulness import DEFAULT_MIN_PRECISION, DEFAULT_MIN_SIMILARITY, FaithfulnessScorer

CORRUPTIONS = ("number_changed", "claim_added", "negation_flipped", "entity_swapped", "unit_changed")


@dataclass(frozen=True)
class CalibrationPair:
    id: str
    answer: str
    evidence: tuple[str, ...]
    label: bool
    corruption: str | None


def load_calibration(path: str | Path) -> list[CalibrationPair]:
    """Read a calibration JSONL file; a malformed line raises ValueError naming the line."""
    pairs: list[CalibrationPair] = []
    for number, line in enumerate(Path(path).read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            corruption = row.get("corruption")
            if corruption is not None and corruption not in CORRUPTIONS:
                raise ValueError(f"unknown corruption {corruption!r}")
            if not isinstance(row["label"], bool) or not isinstance(row["evidence"], list):
                raise ValueError("label must be a boolean and evidence a list")
            pairs.append(
                CalibrationPair(str(row["id"]), str(row["answer"]), tuple(row["evidence"]), row["label"], corruption)
            )
        except (json.JSONDecodeError, KeyError, ValueError) as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
    return pairs


def calibration_report(scorer: FaithfulnessScorer, pairs: Sequence[CalibrationPair]) -> dict[str, Any]:
    """Precision and recall of the scorer at detecting unfaithful answers (label false), overall and per corruption.

    Also the false-alarm rate on faithful answers and the accuracy. A pair is flagged when any claim sentence of
    its answer is unsupported.
    """
    flagged = {p.id: scorer.score(p.answer, p.evidence).score < 1.0 for p in pairs}

    def stats(subset: Sequence[CalibrationPair]) -> dict[str, Any]:
        tp = sum(1 for p in subset if not p.label and flagged[p.id])
        fp = sum(1 for p in subset if p.label and flagged[p.id])
        fn = sum(1 for p in subset if not p.label and not flagged[p.id])
        tn = sum(1 for p in subset if p.label and not flagged[p.id])
        n = len(subset)
        return {
            "pairs": n,
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None,
            "accuracy": round((tp + tn) / n, 4) if n else None,
            "false_alarm_rate": round(fp / (fp + tn), 4) if fp + tn else None,
        }

    faithful = [p for p in pairs if p.label]
    on_faithful = stats(faithful)
    report: dict[str, Any] = {
        "overall": stats(pairs),
        "faithful": {k: on_faithful[k] for k in ("pairs", "accuracy", "false_alarm_rate")},
        "by_corruption": {},
    }
    for corruption in CORRUPTIONS:
        subset = [p for p in pairs if p.corruption == corruption]
        if subset:
            # Precision per type: flagged corrupted pairs of this type against all false alarms on faithful pairs.
            report["by_corruption"][corruption] = stats(subset + faithful) | {"pairs": len(subset)}
    report["misclassified"] = [p.id for p in pairs if flagged[p.id] == p.label]
    return report


def _grid(embedder: Embedder | None, pairs: Sequence[CalibrationPair]) -> list[dict[str, Any]]:
    scorer = FaithfulnessScorer(embedder)  # one scorer: its embedding cache serves every setting
    rows = []
    for min_precision in (0.6, 0.65, 0.7, 0.75, 0.8, 0.85):
        for paraphrase in (0.4, 0.5):
            for min_similarity in (0.75, 0.8, 0.85) if embedder else (1.0,):
                scorer.min_precision = min_precision
                scorer.paraphrase_precision = min(paraphrase, min_precision)
                scorer.min_similarity = min_similarity
                overall = calibration_report(scorer, pairs)["overall"]
                rows.append(
                    {
                        "min_precision": min_precision,
                        "paraphrase_precision": paraphrase,
                        "min_similarity": min_similarity,
                        **overall,
                    }
                )
    return sorted(rows, key=lambda r: (-(r["accuracy"] or 0), -(r["recall"] or 0)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ask_engine.faithfulness", description=__doc__.splitlines()[0])
    parser.add_argument("--calibrate", metavar="JSONL", required=True, help="labelled (answer, evidence) pairs")
    parser.add_argument("--grid", action="store_true", help="search thresholds and print the best settings")
    parser.add_argument("--no-embedder", action="store_true", help="lexical checks only")
    parser.add_argument("--min-precision", type=float, default=DEFAULT_MIN_PRECISION)
    parser.add_argument("--min-similarity", type=float, default=DEFAULT_MIN_SIMILARITY)
    parser.add_argument("--show-errors", action="store_true", help="print the misclassified pairs")
    args = parser.parse_args(argv)
    try:
        pairs = load_calibration(args.calibrate)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    embedder: Embedder | None = None
    if not args.no_embedder:
        from ask_engine.embedders import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    if args.grid:
        for row in _grid(embedder, pairs):
            print(json.dumps(row))
        return 0
    scorer = FaithfulnessScorer(embedder, min_precision=args.min_precision, min_similarity=args.min_similarity)
    report = calibration_report(scorer, pairs)
    if args.show_errors:
        by_id = {p.id: p for p in pairs}
        for pid in report["misclassified"]:
            pair = by_id[pid]
            result = scorer.score(pair.answer, pair.evidence)
            print(f"-- {pid} label={pair.label} corruption={pair.corruption} score={result.score:.2f}")
            for s in result.sentences:
                print(
                    f"   [{s.kind} supported={s.supported} p={s.precision} sim={s.similarity} "
                    f"missing={list(s.missing_tokens)}] {s.sentence}\n      best: {s.best_evidence}"
                )
    print(json.dumps({k: v for k, v in report.items() if k != "misclassified"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
