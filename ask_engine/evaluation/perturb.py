"""A labelled set for the grounding guard: supported sentences and synthetic perturbations of them.

    python -m ask_engine.evaluation.perturb make --index indexes/fjord-fell --cases eval/fjord-fell.jsonl \\
        --out eval/guard-perturbations.jsonl
    python -m ask_engine.evaluation.perturb score eval/guard-perturbations.jsonl

`make` answers every single-turn case extractively, keeps each claim sentence the guard accepts on its own
evidence (a supported sentence), and writes beside it its perturbations: an added list item (a value another
product records), a flipped negation, a changed number, and another product's name. `score` runs the guard over the
file and reports the precision and recall of "unsupported" (perturbations caught, supported sentences kept).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ask_engine.guard.claims import list_items
from ask_engine.guard.words import content_words
from ask_engine.types import Evidence, Passage, Resolution, Sentence, Task

__all__ = ["make_set", "perturbations", "score_set"]

_AUX = re.compile(r"\b(is|are|can|will|does|do|has|have|was|were)\b(?!\s+not\b)", re.IGNORECASE)
_NOT = re.compile(r"\b(?:not|n't)\b\s*", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?:\.(\d+))?(?![\w])")


def _flip(sentence: str) -> str | None:
    if _NOT.search(sentence):
        flipped = _NOT.sub("", sentence, count=1)
        return flipped if flipped != sentence else None
    match = _AUX.search(sentence)
    if match is None:
        return None
    return sentence[: match.end()] + " not" + sentence[match.end() :]


def _renumber(sentence: str, evidence: str) -> str | None:
    """The first number changed to one the evidence never states (an invented figure, not another recorded one)."""
    match = _NUMBER.search(sentence)
    if match is None:
        return None
    value = int(match.group(1))
    recorded = {int(n) for n in re.findall(r"(?<![\w.])\d+", evidence)}
    changed = value + 1 if value < 10 else value * 2
    while changed in recorded:
        changed += 1
    return sentence[: match.start(1)] + str(changed) + sentence[match.end(1) :]


def _add_item(sentence: str, pool: Sequence[str], evidence_words: set[str], rng: random.Random) -> str | None:
    items = list_items(sentence)
    if len(items) < 2:
        return None
    options = [v for v in pool if content_words(v) and not content_words(v) & evidence_words]
    if not options:
        return None
    extra = rng.choice(options)
    last = items[-1]
    at = sentence.rfind(last)
    if at < 0:
        return None
    return f"{sentence[:at].rstrip().rstrip(',')}, {extra} and {sentence[at:].lstrip()}".replace(" and and ", " and ")


def _swap(sentence: str, title: str, others: Sequence[str], rng: random.Random) -> str | None:
    if not title or title not in sentence or not others:
        return None
    return sentence.replace(title, rng.choice(others))


def perturbations(
    sentence: str,
    title: str,
    pool: Sequence[str],
    titles: Sequence[str],
    evidence_words: set[str],
    seed: int,
    evidence: str = "",
) -> Iterator[tuple[str, str]]:
    """(kind, perturbed sentence) for every perturbation that applies to `sentence`."""
    rng = random.Random(seed)
    for kind, text in (
        ("added_item", _add_item(sentence, pool, evidence_words, rng)),
        ("flipped_negation", _flip(sentence)),
        ("changed_number", _renumber(sentence, evidence)),
        ("swapped_product", _swap(sentence, title, [t for t in titles if t != title], rng)),
    ):
        if text and text != sentence:
            yield kind, text


def make_set(index: str, cases_path: str, out: str) -> int:
    from ask_engine.engine import Engine
    from ask_engine.evaluation.cases import load_cases
    from ask_engine.guard import ground
    from ask_engine.guard.faithfulness import FaithfulnessScorer

    engine = Engine.open(index)
    scorer = FaithfulnessScorer(engine.embedder)
    docs = engine.index.documents
    titles = sorted(d.title for d in docs.values() if d.kind == "product")
    pool = sorted({v for d in docs.values() for _, values in d.options for v in values if len(v) > 2})
    rows = []
    for case in load_cases(cases_path):
        if case.followups or case.category in ("injection", "operation", "off_topic"):
            continue
        request: dict[str, Any] = {"query": case.query}
        if case.ids:
            request["ids"] = list(case.ids)
        _, trace = engine.ask_traced(request)
        if trace.draft is None:
            continue
        resolved = list(dict.fromkeys([*trace.resolution.doc_ids, *trace.resolution.mentioned_doc_ids]))
        task = _task(case.query, trace.evidence, engine.shop.name, resolved)
        evidence = [_passage_json(ev) for ev in trace.evidence]
        evidence_words: set[str] = set()
        for ev in trace.evidence:
            evidence_words |= content_words(ev.passage.text)
        for n, sentence in enumerate(trace.draft.sentences):
            if sentence.kind != "claim":
                continue
            accepted, _ = ground(_one(sentence), task, scorer)
            if not accepted.sentences:
                continue  # only sentences the guard accepts on their own evidence are "supported"
            cited_docs = {ev.passage.doc_id for ev in trace.evidence if ev.number in sentence.cites}
            title = next((docs[d].title for d in cited_docs if d in docs and docs[d].kind == "product"), "")
            base = {"case": case.id, "query": case.query, "cites": list(sentence.cites), "resolved": resolved}
            base["evidence"] = evidence
            rows.append({**base, "sentence": sentence.text, "label": "supported", "kind": "original"})
            seed = zlib.crc32(f"{case.id}:{n}".encode())  # reproducible, unlike hash()
            text_all = "\n".join(ev.passage.text for ev in trace.evidence)
            for kind, text in perturbations(sentence.text, title, pool, titles, evidence_words, seed, text_all):
                rows.append({**base, "sentence": text, "label": "unsupported", "kind": kind})
    with open(out, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(rows)


def _passage_json(ev: Evidence) -> dict[str, Any]:
    return {"number": ev.number, **ev.passage.to_dict()}


def _task(query: str, evidence: Sequence[Evidence], shop: str, resolved: Sequence[str] = ()) -> Task:
    resolution = Resolution(doc_ids=tuple(resolved))
    return Task(query=query, evidence=tuple(evidence), documents={}, resolution=resolution, shop_name=shop)


def _one(sentence: Sentence) -> Any:
    from ask_engine.types import Draft

    return Draft(sentences=(sentence,), kind="answer", generator="perturbation")


def score_set(path: str | Path, embedder: Any = None) -> dict[str, Any]:
    """Run the guard over every sentence of a perturbation file; caught = removed or replaced."""
    from ask_engine.guard import ground
    from ask_engine.guard.faithfulness import FaithfulnessScorer

    if embedder is None:
        from ask_engine.embedders import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    scorer = FaithfulnessScorer(embedder)
    counts: Counter[str] = Counter()
    missed: list[dict[str, str]] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        evidence = tuple(
            Evidence(
                number=p["number"], passage=Passage.from_dict({k: v for k, v in p.items() if k != "number"}), score=1
            )
            for p in row["evidence"]
        )
        task = _task(row["query"], evidence, "", row.get("resolved") or ())
        sentence = Sentence(text=row["sentence"], cites=tuple(row["cites"]))
        grounded, _ = ground(_one(sentence), task, scorer)
        survived = any(s.text == sentence.text for s in grounded.sentences)
        key = f"{row['label']}:{row['kind']}"
        counts[f"{key}:total"] += 1
        if row["label"] == "unsupported" and not survived:
            counts[f"{key}:caught"] += 1
        elif row["label"] == "supported" and survived:
            counts[f"{key}:kept"] += 1
        elif row["label"] == "unsupported":
            missed.append({"kind": row["kind"], "sentence": row["sentence"]})
    perturbed = sum(v for k, v in counts.items() if k.startswith("unsupported") and k.endswith(":total"))
    caught = sum(v for k, v in counts.items() if k.startswith("unsupported") and k.endswith(":caught"))
    supported = counts["supported:original:total"]
    kept = counts["supported:original:kept"]
    false_flags = supported - kept
    kinds = sorted({k.split(":")[1] for k in counts if k.startswith("unsupported")})
    return {
        "supported": supported,
        "perturbed": perturbed,
        "caught": round(caught / perturbed, 4) if perturbed else None,  # recall of "unsupported"
        "kept": round(kept / supported, 4) if supported else None,
        "precision_unsupported": round(caught / (caught + false_flags), 4) if caught + false_flags else None,
        "by_kind": {k: round(counts[f"unsupported:{k}:caught"] / counts[f"unsupported:{k}:total"], 4) for k in kinds},
        "missed": missed[:20],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ask_engine.evaluation.perturb", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make", help="write a perturbation set from an index and a case file")
    p.add_argument("--index", required=True)
    p.add_argument("--cases", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("score", help="score the guard on a perturbation set")
    p.add_argument("file")
    args = parser.parse_args(argv)
    if args.command == "make":
        print(f"{make_set(args.index, args.cases, args.out)} sentences → {args.out}")
        return 0
    json.dump(score_set(args.file), sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
