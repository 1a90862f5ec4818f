"""Hand-labelled model sentences for the grounding guard: the guard's precision and recall of "unsupported".

    python -m ask_engine.evaluation.labelled extract /tmp/llm-eval/report.json --index indexes/fjord-fell \\
        --out sentences.jsonl
    python -m ask_engine.evaluation.labelled score eval/guard-labelled.jsonl [--half dev|held-out]

`extract` writes every sentence of every raw model draft in an eval report (an `ask-engine eval --generator
openai` run) with the evidence the guard saw (the turn's retrieved passages, by id and in full), unlabelled; a
person then sets `label` ("supported" / "unsupported", judged against the shop's own data) and `reason`.
`score` runs the guard over each labelled sentence on its evidence: the sentence is *flagged* when the guard removes
or replaces it, or when it says the shop has not recorded something and the engine found an answer instead (the
run's `not_recorded_refuted`, recorded with the row). It reports the precision and recall of "unsupported", and the
same for the eval's claim scorer (`claim_score`: a sentence with any unsupported claim is flagged).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ask_engine.evaluation.claim_score import answer_claims
from ask_engine.guard.claims import is_not_recorded
from ask_engine.guard.faithfulness import FaithfulnessScorer, split_sentences
from ask_engine.guard.grounding import ground
from ask_engine.guard.words import passage_subject
from ask_engine.llm.reply import sentence_kind
from ask_engine.types import Draft, Evidence, Passage, Resolution, Sentence, Task

__all__ = ["extract_sentences", "half", "load_labelled", "score_labelled"]

LABELS = ("supported", "unsupported")


def extract_sentences(report: str | Path, index: str | Path) -> list[dict[str, Any]]:
    """One unlabelled row per sentence of each raw model draft in an eval report, with its evidence in full."""
    from ask_engine.indexes import ShopIndex

    shop = ShopIndex.open(index)
    data = json.loads(Path(report).read_text("utf-8"))
    rows: list[dict[str, Any]] = []
    for turn in data["turns"]:
        raw = turn.get("raw_answer")
        if not raw:
            continue
        evidence = []
        for ev in turn["evidence"]:
            passage = shop.passage_by_id.get(ev["passage_id"])
            if passage is not None:
                evidence.append({"number": ev["number"], **passage.to_dict()})
        seen: set[str] = set()
        for sentence in split_sentences(raw):
            if sentence in seen:
                continue
            seen.add(sentence)
            rows.append(
                {
                    "case": turn["case_id"],
                    "turn": turn["turn"],
                    "query": turn["query"],
                    "sentence": sentence,
                    "evidence_ids": [ev["id"] for ev in evidence],
                    "not_recorded_refuted": turn.get("fallback") == "not_recorded_refuted",
                    "resolved": list(turn.get("resolved") or ()),
                    "label": None,
                    "reason": "",
                    "evidence": evidence,
                }
            )
    return rows


def load_labelled(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a labelled file; every row must carry a label and a reason."""
    rows = []
    for n, line in enumerate(Path(path).read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("label") not in LABELS or not str(row.get("reason", "")).strip():
            raise ValueError(f"{path}:{n}: label must be one of {LABELS}, with a reason")
        rows.append(row)
    return rows


def _evidence(row: dict[str, Any]) -> tuple[Evidence, ...]:
    return tuple(
        Evidence(number=p["number"], passage=Passage.from_dict({k: v for k, v in p.items() if k != "number"}), score=1)
        for p in row["evidence"]
    )


def guard_flags(row: dict[str, Any], scorer: FaithfulnessScorer) -> bool:
    """True when the guard keeps this sentence from the buyer (removed, replaced, or its "not recorded" refuted)."""
    evidence = _evidence(row)
    resolution = Resolution(doc_ids=tuple(row.get("resolved") or ()))
    task = Task(query=row["query"], evidence=evidence, documents={}, resolution=resolution, shop_name="")
    text = row["sentence"]
    sentence = Sentence(text=text, kind=sentence_kind(text))
    grounded, _ = ground(Draft(sentences=(sentence,), kind="answer", generator="labelled"), task, scorer)
    survived = any(s.text == text for s in grounded.sentences)
    return not survived or (is_not_recorded(text) and bool(row.get("not_recorded_refuted")))


def claim_scorer_flags(row: dict[str, Any], scorer: FaithfulnessScorer) -> bool:
    """True when the eval's claim scorer finds an unsupported claim in this sentence."""
    evidence = _evidence(row)
    texts = [ev.passage.text for ev in evidence]
    subjects = [passage_subject(ev.passage) for ev in evidence]
    faith = scorer.score_sentences([row["sentence"]], texts, subjects)
    refuted = bool(row.get("not_recorded_refuted"))
    return any(not c.supported for c in answer_claims(faith, texts, subjects, scorer, not_recorded_refuted=refuted))


def _rates(rows: Sequence[dict[str, Any]], flagged: Sequence[bool]) -> dict[str, Any]:
    unsupported = [row["label"] == "unsupported" for row in rows]
    tp = sum(1 for u, f in zip(unsupported, flagged, strict=True) if u and f)
    fp = sum(1 for u, f in zip(unsupported, flagged, strict=True) if not u and f)
    fn = sum(1 for u, f in zip(unsupported, flagged, strict=True) if u and not f)
    return {
        "flagged": tp + fp,
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "precision_unsupported": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall_unsupported": round(tp / (tp + fn), 4) if tp + fn else None,
        "missed": [row["sentence"] for row, u, f in zip(rows, unsupported, flagged, strict=True) if u and not f],
        "wrongly_flagged": [
            row["sentence"] for row, u, f in zip(rows, unsupported, flagged, strict=True) if f and not u
        ],
    }


def half(case: str) -> str:
    """The half of a labelled file a case belongs to, "dev" or "held-out": a fixed hash of its id, so that checks
    developed on one half can be measured on the other."""
    return "dev" if int(hashlib.sha1(f"split:{case}".encode()).hexdigest(), 16) % 2 == 0 else "held-out"


def score_labelled(path: str | Path, embedder: Any = None, *, part: str | None = None) -> dict[str, Any]:
    """The guard's (and the claim scorer's) precision and recall of "unsupported" on a labelled file (or on one
    `half` of it: `part` "dev" or "held-out")."""
    if embedder is None:
        from ask_engine.embedders import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    scorer = FaithfulnessScorer(embedder)
    rows = [row for row in load_labelled(path) if part is None or half(row["case"]) == part]
    supported = sum(1 for row in rows if row["label"] == "supported")
    guard = _rates(rows, [guard_flags(row, scorer) for row in rows])
    return {
        "sentences": len(rows),
        "unsupported": len(rows) - supported,
        "supported_kept": round((supported - guard["false_positives"]) / supported, 4) if supported else None,
        "guard": guard,
        "claim_scorer": _rates(rows, [claim_scorer_flags(row, scorer) for row in rows]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ask_engine.evaluation.labelled", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("extract", help="write the raw model sentences of an eval report, unlabelled")
    p.add_argument("report")
    p.add_argument("--index", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("score", help="the guard's precision and recall of 'unsupported' on a labelled file")
    p.add_argument("file")
    p.add_argument("--half", choices=("dev", "held-out"), help="score one half of the file (by a hash of the case id)")
    args = parser.parse_args(argv)
    if args.command == "extract":
        rows = extract_sentences(args.report, args.index)
        with open(args.out, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{len(rows)} sentences → {args.out}")
        return 0
    json.dump(score_labelled(args.file, part=args.half), sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
