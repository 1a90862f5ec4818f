"""Fit the answer ranker (`ranker.json`) on public product-QA data, and report it beside the cosine baseline.

    python -m ask_engine.answering.calibrate --pqa ../shared/data/pqa [--out ask_engine/answering/ranker.json]

Every PQA file is turned into a shop exactly as `ask-engine pqa` does; each question is read against the units of
its product exactly as the answerer reads them. A unit is labelled as answering when it carries the labelled
store-authored evidence. Figures are cross-fitted: products are split in two folds, each fold of a development file
scored by a model fitted on the other fold plus the training file, and each fold of the training file by one fitted
on its other fold plus the development files, so no question is scored by weights that saw it. The shipped
weights are then fitted on everything. The bar is the lowest that keeps abstention on unanswerable questions at
`--min-abstention` on every development file, maximising mean balanced accuracy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from ask_engine.answering.addressing import ADDRESSING, ways_of
from ask_engine.answering.query import _title_stems
from ask_engine.answering.ranker import FEATURES, RANKER_FILE, QuestionShape, Ranker, carries, features, lifted
from ask_engine.answering.units import Unit, product_units
from ask_engine.language import Intent

DEV_FILES = ("semipqa-attribute-ranking-dev", "hetpqa-evidence-ranking-dev", "hetpqa-answer-generation-dev")
TRAIN_FILES = ("hetpqa-answer-generation-train",)


@dataclass
class Item:
    """One question against its product's units."""

    file: str
    product: str
    query: str
    answerable: bool
    units: list[Unit]
    x: np.ndarray[Any, Any]
    y: np.ndarray[Any, Any]
    sims: np.ndarray[Any, Any]
    ways: list[frozenset[str]]  # how each unit addresses the question (`addressing.addressed_by`)
    vectors: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]] | None = None  # q, units, labels
    # each unit is a fact the attribute lexicon or its label words tie to the question (`lexicon_flags`)
    lexicon: list[bool] | None = None


def _fold(product: str) -> int:
    return zlib.crc32(product.encode()) % 2


@dataclass
class _Reading:
    """The parts of a question's work that `facts._match_facts` reads: the reading of the question, and similarities
    from the embedding cache (a text not in it is embedded once)."""

    intent: Intent
    rows: dict[str, np.ndarray[Any, Any]]
    embedder: Any

    def similarity(self, texts: Sequence[str], probe: str | None = None) -> np.ndarray[Any, Any]:
        wanted = [*texts, probe or self.intent.text]
        missing = [t for t in dict.fromkeys(wanted) if t not in self.rows]
        if missing:
            self.rows.update(zip(missing, np.asarray(self.embedder.embed_documents(missing)), strict=True))
        matrix = np.vstack([self.rows[t] for t in wanted])
        return np.asarray(matrix[:-1] @ matrix[-1], dtype=np.float32)


def lexicon_flags(query: str, doc: Any, units: Sequence[Unit], rows: dict[str, Any], embedder: Any) -> list[bool]:
    """For each unit, whether it is a fact the answerer's attribute lexicon or label words tie to `query`
    (`facts._match_facts`, read as the answerer reads the question)."""
    from ask_engine.answering.facts import _match_facts
    from ask_engine.answering.query import _attribute_stems, _without_mentions
    from ask_engine.language import parse_query

    intent = _without_mentions(parse_query(query), [doc])
    reading = _Reading(intent, rows, embedder)
    keys = {f.key for f in _match_facts(cast(Any, reading), doc, _attribute_stems(intent, doc))}
    return [u.kind != "description" and u.key in keys for u in units]


def load_items(pqa_dir: Path, name: str, embedder: Any, cache_dir: Path) -> list[Item]:
    from ask_engine.pqa import convert
    from ask_engine.sources import ShopSource

    source = pqa_dir / f"{name}.tsv"
    with tempfile.TemporaryDirectory() as tmp:
        shop_dir, case_file, _ = convert(source, tmp)
        docs = {d.gid: d for d in ShopSource(shop_dir).documents() if d.kind == "product"}
        cases = [json.loads(line) for line in case_file.read_text(encoding="utf-8").splitlines()]
    texts: dict[str, None] = {}
    per_case = []
    for case in cases:
        doc = docs[case["ids"][0]]
        units = product_units(doc)
        per_case.append((case, doc, units))
        texts[case["query"]] = None
        for u in units:
            texts[u.text] = None
            if u.label:
                texts[u.label] = None
    ordered = list(texts)
    digest = hashlib.sha256(("\n".join(ordered) + embedder.name).encode()).hexdigest()[:16]
    cached = cache_dir / f"{name}-{digest}.npy"
    if cached.exists():
        matrix = np.load(cached)
    else:
        matrix = embedder.embed_documents(ordered)
        cache_dir.mkdir(parents=True, exist_ok=True)
        np.save(cached, matrix)
    row = {t: i for i, t in enumerate(ordered)}
    rows = {t: matrix[i] for t, i in row.items()}
    items = []
    for case, doc, units in per_case:
        q = matrix[row[case["query"]]]
        sims = np.asarray([matrix[row[u.text]] @ q for u in units], dtype=np.float32)
        label_sims = np.asarray([matrix[row[u.label]] @ q if u.label else 0.0 for u in units], dtype=np.float32)
        shape = QuestionShape.read(case["query"])
        x = features(shape, units, sims, label_sims)
        evidence = case["expect"]["evidence_any"]
        y = np.asarray([1 if carries(u.text, evidence) else 0 for u in units], dtype=np.int8)
        dim = len(q)
        unit_vectors = np.asarray([matrix[row[u.text]] for u in units], dtype=np.float32).reshape(len(units), dim)
        label_vectors = np.asarray(
            [matrix[row[u.label]] if u.label else np.zeros_like(q) for u in units], dtype=np.float32
        ).reshape(len(units), dim)
        vectors = (q, unit_vectors, label_vectors)
        answerable = bool(case["expect"]["answerable"])
        names = _title_stems(doc)
        ways = ways_of(case["query"], units, name_stems=names)
        lexicon = lexicon_flags(case["query"], doc, units, rows, embedder)
        items.append(
            Item(name, doc.gid or doc.id, case["query"], answerable, units, x, y, sims, ways, vectors, lexicon)
        )
    return items


def fit(items: list[Item]) -> Ranker:
    from sklearn.linear_model import LogisticRegression

    rows = [it.x for it in items if len(it.units)]
    x = np.vstack(rows) if rows else np.zeros((0, len(FEATURES)), dtype=np.float32)
    y = np.concatenate([it.y for it in items if len(it.units)])
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced")
    model.fit((x - mean) / scale, y)
    return Ranker(
        weights=tuple(float(w) for w in model.coef_[0]),
        bias=float(model.intercept_[0]),
        bar=0.5,
        second_bar=1.0,
        embedder="",
        mean=tuple(float(m) for m in mean),
        scale=tuple(float(s) for s in scale),
    )


@dataclass
class Outcome:
    top: float  # best score (probability or similarity); -inf with no units
    hit: bool  # the best unit carries the evidence
    hit2: bool  # the best or second unit does
    second: float


def outcomes(items: list[Item], scores: list[np.ndarray[Any, Any]]) -> list[Outcome]:
    out = []
    for it, s in zip(items, scores, strict=True):
        if len(s) == 0:
            out.append(Outcome(float("-inf"), False, False, float("-inf")))
            continue
        order = np.argsort(-s)
        first = int(order[0])
        second = int(order[1]) if len(order) > 1 else -1
        hit = bool(it.y[first])
        hit2 = hit or (second >= 0 and bool(it.y[second]))
        out.append(Outcome(float(s[first]), hit, hit2, float(s[second]) if second >= 0 else float("-inf")))
    return out


def answered_unit(item: Item, scores: np.ndarray[Any, Any], bar: float, lexicon_bar: float) -> int | None:
    """The unit the answerer states (`product._attribute`): a lexicon-tied fact at or above `lexicon_bar`, best by
    score, unless a unit at or above `bar` that is not one scores higher; else the best unit at or above `bar`."""
    if len(scores) == 0:
        return None
    top = int(np.argmax(scores))
    flags = item.lexicon or [False] * len(scores)
    tied = [i for i, flag in enumerate(flags) if flag and scores[i] >= lexicon_bar]
    if tied:
        best = max(tied, key=lambda i: float(scores[i]))
        if scores[top] >= bar and not flags[top] and scores[top] > scores[best]:
            return top
        return best
    return top if scores[top] >= bar else None


def answerer_outcomes(
    items: list[Item], scores: list[np.ndarray[Any, Any]], bar: float, lexicon_bar: float
) -> list[Outcome]:
    """Outcomes of the answerer's choice (`answered_unit`): scored as answered at any bar above -inf."""
    out = []
    for it, s in zip(items, scores, strict=True):
        chosen = answered_unit(it, s, bar, lexicon_bar)
        if chosen is None:
            out.append(Outcome(float("-inf"), False, False, float("-inf")))
        else:
            out.append(Outcome(float("inf"), bool(it.y[chosen]), bool(it.y[chosen]), float("-inf")))
    return out


def _lexicon_bar(
    dev: dict[str, list[Item]], scores: dict[str, list[np.ndarray[Any, Any]]], bar: float, min_abstention: float
) -> float:
    """The probability a lexicon-tied fact needs to answer, chosen like the bar: the highest mean balanced accuracy on
    the development files, among the bars keeping abstention >= `min_abstention` on each where any does."""
    results = []
    for lexicon_bar in np.round(np.arange(0.0, bar + 1e-9, 0.05), 3):
        per = [figures(dev[n], answerer_outcomes(dev[n], scores[n], bar, float(lexicon_bar)), 0.0) for n in DEV_FILES]
        mean = float(np.mean([f["balanced_accuracy"] for f in per]))
        results.append((min(f["abstention"] for f in per) >= min_abstention, mean, -float(lexicon_bar)))
    return -max(results)[2]


def figures(items: list[Item], outs: list[Outcome], bar: float, second_bar: float = 1.0) -> dict[str, float]:
    """Evidence hit (answerable), abstention (unanswerable), balanced accuracy, false abstentions: the same rates
    `ask-engine eval` reports (`pqa.rates`)."""
    from ask_engine.pqa import rates

    return rates(
        [
            (it.answerable, o.top >= bar, o.hit or (o.second >= second_bar and o.hit2))
            for it, o in zip(items, outs, strict=True)
        ]
    )


def best_threshold(items: list[Item], outs: list[Outcome]) -> tuple[float, dict[str, float]]:
    """The baseline at its best threshold (balanced accuracy), as the issue defines it."""
    candidates = sorted({o.top for o in outs if o.top > float("-inf")})
    best: tuple[float, float, dict[str, float]] = (-1.0, 0.0, {})
    for t in [*candidates, float("inf")]:
        f = figures(items, outs, t)
        if f["balanced_accuracy"] > best[0]:
            best = (f["balanced_accuracy"], t, f)
    return best[1], best[2]


def _cross_fitted(scored: dict[str, list[Item]], extra: list[Item]) -> dict[str, list[np.ndarray[Any, Any]]]:
    """Probabilities for every item of `scored`: each fold by weights fitted on `extra` plus the other fold."""
    out: dict[str, list[np.ndarray[Any, Any]]] = {name: [np.zeros(0)] * len(items) for name, items in scored.items()}
    for fold in (0, 1):
        fitted = fit(extra + [it for items in scored.values() for it in items if _fold(it.product) != fold])
        for name, items in scored.items():
            for i, it in enumerate(items):
                if _fold(it.product) == fold:
                    out[name][i] = fitted.probabilities(it.x)
    return out


def _lift(
    items: list[Item], scores: list[np.ndarray[Any, Any]], bar: float, addressed: tuple[tuple[str, float], ...]
) -> list[np.ndarray[Any, Any]]:
    """Each item's probabilities as the answerer uses them: addressed units raised to the bar (`ranker.lifted`)."""
    if not addressed:
        return scores
    return [
        np.asarray(lifted(s, it.ways, bar, addressed), dtype=np.float32) for it, s in zip(items, scores, strict=True)
    ]


def _addressed_bars(
    dev: dict[str, list[Item]], cross: dict[str, list[np.ndarray[Any, Any]]], bar: float, min_abstention: float
) -> tuple[tuple[str, float], ...]:
    """The lower bar for each way a unit can address the question (`addressing.ADDRESSING`), chosen like the bar:
    the highest mean balanced accuracy on the development files with abstention >= `min_abstention` on each. A
    way whose lowered bar never helps keeps the ranker's bar (it is left out)."""
    grids = {"measure": np.round(np.arange(0.30, bar, 0.05), 3), "word": np.round(np.arange(0.80, bar, 0.01), 3)}
    best: tuple[float, tuple[tuple[str, float], ...]] = (
        float(np.mean([figures(dev[n], outcomes(dev[n], cross[n]), bar)["balanced_accuracy"] for n in DEV_FILES])),
        (),
    )
    combos: list[tuple[tuple[str, float], ...]] = [()]
    for way in ADDRESSING:
        combos = [(*c, (way, float(b))) for c in combos for b in grids.get(way, ())] + combos
    for combo in combos:
        if not combo:
            continue
        per = [figures(dev[n], outcomes(dev[n], _lift(dev[n], cross[n], bar, combo)), bar) for n in DEV_FILES]
        if min(f["abstention"] for f in per) < min_abstention:
            continue
        mean = float(np.mean([f["balanced_accuracy"] for f in per]))
        if mean > best[0] + 1e-9:
            best = (mean, combo)
    return best[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ask_engine.answering.calibrate", description=__doc__)
    parser.add_argument("--pqa", type=Path, required=True, help="folder holding the PQA .tsv files")
    parser.add_argument("--out", type=Path, default=RANKER_FILE, help="where to write the fitted ranker")
    parser.add_argument("--cache", type=Path, default=Path(".cache/pqa-embeddings"), help="embedding cache folder")
    parser.add_argument("--min-abstention", type=float, default=0.87)
    parser.add_argument("--report", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)

    from ask_engine.embedders import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    data = {name: load_items(args.pqa, name, embedder, args.cache) for name in (*DEV_FILES, *TRAIN_FILES)}
    train = [it for name in TRAIN_FILES for it in data[name]]
    dev = {name: data[name] for name in DEV_FILES}

    # cross-fitted probabilities for every development question
    cross = _cross_fitted(dev, train)
    outs = {name: outcomes(items, cross[name]) for name, items in dev.items()}
    # the training split, cross-fitted the same way, so each of the four files has figures (not used for the bar)
    held: dict[str, list[Item]] = {name: data[name] for name in TRAIN_FILES}
    held_cross = _cross_fitted(held, [it for items in dev.values() for it in items])
    outs.update({name: outcomes(items, held_cross[name]) for name, items in held.items()})

    # the bar: highest mean balanced accuracy with abstention >= min on every file
    grid = np.round(np.arange(0.30, 0.99, 0.005), 3)
    chosen = (-1.0, 0.5)
    for bar in grid:
        per = [figures(dev[n], outs[n], float(bar)) for n in DEV_FILES]
        if min(f["abstention"] for f in per) < args.min_abstention:
            continue
        mean = sum(f["balanced_accuracy"] for f in per) / len(per)
        if mean > chosen[0]:
            chosen = (mean, float(bar))
    bar = chosen[1]
    second_bar = min(0.99, bar + 0.15)
    addressed = _addressed_bars(dev, cross, bar, args.min_abstention)
    lifted_scores: dict[str, list[np.ndarray[Any, Any]]] = {}
    for name in outs:
        items = data[name]
        scores = cross[name] if name in cross else held_cross[name]
        lifted_scores[name] = _lift(items, scores, bar, addressed)
        outs[name] = outcomes(items, lifted_scores[name])
    lexicon_bar = _lexicon_bar(dev, lifted_scores, bar, args.min_abstention)

    report: dict[str, Any] = {
        "bar": bar,
        "second_bar": second_bar,
        "addressed_bars": dict(addressed),
        "lexicon_bar": lexicon_bar,
        "files": {},
    }
    for name in (*DEV_FILES, *TRAIN_FILES):
        items = data[name]
        base_outs = outcomes(items, [it.sims for it in items])
        threshold, base = best_threshold(items, base_outs)
        ours = figures(items, outs[name], bar, second_bar)
        answerer = figures(items, answerer_outcomes(items, lifted_scores[name], bar, lexicon_bar), 0.0)
        ungated = figures(items, answerer_outcomes(items, lifted_scores[name], bar, 0.0), 0.0)
        report["files"][name] = {
            "ranker": ours,
            "answerer": answerer,
            "answerer_ungated": ungated,
            "cosine_baseline": {**base, "threshold": round(threshold, 4)},
        }
    final = fit(train + [it for items in dev.values() for it in items])
    shipped = Ranker(
        final.weights, final.bias, bar, second_bar, embedder.name, final.mean, final.scale, addressed, lexicon_bar
    )
    payload = {
        **shipped.to_json(),
        "fitted_on": [*DEV_FILES, *TRAIN_FILES],
        "min_abstention": args.min_abstention,
        "cross_fitted": report["files"],
    }
    args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    if args.report:
        args.report.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
