"""The merchant's report from the question log: unanswered questions grouped into topics, fields shoppers ask for
that the shop has not recorded (per product type), questions answered from an older index version, and the
questions per day by outcome. `build_report` returns the JSON; `insights.render` draws the HTML.

**Topics.** Each distinct question that was not answered (outcome `not_recorded` or `couldnt_find`) is embedded with
the project's embedder (the bundled all-MiniLM-L6-v2 by default) and grouped by agglomerative clustering with
average linkage over cosine distance (`scipy.cluster.hierarchy`), cut where the average similarity between two
groups falls below `TOPIC_SIMILARITY`. A topic is named by its most typical question: the one closest on average to
the others.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ask_engine.insights.log import OUTCOME_LABELS, OUTCOMES, Entry

if TYPE_CHECKING:
    from ask_engine.indexes import ShopIndex
    from ask_engine.protocols import Embedder

TOPIC_SIMILARITY = 0.45  # average cosine similarity within a topic, at least
UNANSWERED = ("not_recorded", "couldnt_find")
MAX_EXAMPLES = 5
MAX_TOPIC_QUESTIONS = 5000  # distinct unanswered questions clustered (the newest): bounds the report's time
NO_TYPE = "(no product type)"
GONE = "(products no longer in the index)"


def build_report(
    entries: Sequence[Entry],
    index: ShopIndex,
    embedder: Embedder,
    *,
    log_path: str | Path | None = None,
    similarity: float = TOPIC_SIMILARITY,
) -> dict[str, Any]:
    """The report's data: everything report.json holds and report.html shows."""
    by_outcome = Counter(e.outcome for e in entries)
    return {
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "shop": {"name": index.shop.name, "url": index.shop.url},
        "log": str(log_path) if log_path is not None else None,
        "index_version": index.version,
        "period": {"from": entries[0].at, "to": entries[-1].at} if entries else None,
        "totals": {"questions": len(entries), "by_outcome": {o: by_outcome.get(o, 0) for o in OUTCOMES}},
        "outcome_labels": OUTCOME_LABELS,
        "topics": topics(entries, index, embedder, similarity=similarity),
        "clustering": {
            "method": "agglomerative, average linkage, cosine distance (scipy.cluster.hierarchy)",
            "min_average_similarity": similarity,
            "model": getattr(embedder, "name", type(embedder).__name__),
        },
        "missing_fields": missing_fields(entries, index),
        "not_mentioned": not_mentioned(entries),
        "couldnt_find": couldnt_find(entries),
        "old_index_versions": old_versions(entries, index.version),
        "per_day": per_day(entries),
    }


# ---------------------------------------------------------------------------------------------------- topics


@dataclass
class _Question:
    text: str
    count: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    products: Counter[str] = field(default_factory=Counter)
    fields: Counter[str] = field(default_factory=Counter)


def topics(
    entries: Sequence[Entry], index: ShopIndex, embedder: Embedder, *, similarity: float = TOPIC_SIMILARITY
) -> list[dict[str, Any]]:
    """The unanswered questions grouped by meaning, largest topic first."""
    distinct: dict[str, _Question] = {}
    for e in entries:
        if e.outcome not in UNANSWERED:
            continue
        q = distinct.setdefault(" ".join(e.query.casefold().split()), _Question(e.query))
        q.count += 1
        q.outcomes[e.outcome] += 1
        q.products.update(e.product_ids)
        q.fields.update(g.field for g in e.missing)
    questions = list(distinct.values())[-MAX_TOPIC_QUESTIONS:]
    if not questions:
        return []
    vectors = _unit_rows(np.asarray(embedder.embed_documents([q.text for q in questions]), dtype=np.float64))
    labels = _clusters(vectors, similarity)
    out = []
    for label in dict.fromkeys(labels):
        members = [i for i, lab in enumerate(labels) if lab == label]
        out.append(_topic([questions[i] for i in members], vectors[members], index))
    out.sort(key=lambda t: (-t["questions"], t["label"]))
    return out


def _unit_rows(matrix: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def _clusters(vectors: np.ndarray[Any, Any], similarity: float) -> list[int]:
    """Average-linkage agglomerative clusters, cut at cosine distance 1 - `similarity`."""
    if len(vectors) == 1:
        return [1]
    from scipy.cluster.hierarchy import fcluster, linkage

    tree = linkage(vectors, method="average", metric="cosine")
    return [int(c) for c in fcluster(tree, t=1.0 - similarity, criterion="distance")]


def _topic(members: list[_Question], vectors: np.ndarray[Any, Any], index: ShopIndex) -> dict[str, Any]:
    weights = np.asarray([q.count for q in members], dtype=np.float64)
    typical = int(np.argmax((vectors @ vectors.T) @ weights)) if len(members) > 1 else 0
    outcomes: Counter[str] = Counter()
    products: Counter[str] = Counter()
    fields: Counter[str] = Counter()
    for q in members:
        outcomes.update(q.outcomes)
        products.update(q.products)
        fields.update(q.fields)
    ranked = sorted(members, key=lambda q: -q.count)
    return {
        "label": members[typical].text,
        "questions": int(weights.sum()),
        "distinct": len(members),
        "outcomes": dict(outcomes),
        "examples": [{"query": q.text, "count": q.count} for q in ranked[:MAX_EXAMPLES]],
        "products": [_product(index, doc_id, n) for doc_id, n in products.most_common(MAX_EXAMPLES)],
        "fields": [name for name, _ in fields.most_common(3)],
    }


def _product(index: ShopIndex, doc_id: str, count: int) -> dict[str, Any]:
    doc = index.documents.get(doc_id)
    return {
        "id": doc.gid if doc is not None and doc.gid else doc_id,
        "title": doc.title if doc is not None else doc_id,
        "url": doc.url if doc is not None else None,
        "questions": count,
    }


# ---------------------------------------------------------------------------------------------------- fields


def missing_fields(entries: Sequence[Entry], index: ShopIndex) -> list[dict[str, Any]]:
    """Per product type, the fields questions asked for and the products did not record, most asked first."""
    table: dict[tuple[str, str], dict[str, Any]] = {}
    for e in entries:
        for g in e.missing:
            if g.doc_id is None:
                continue
            doc = index.documents.get(g.doc_id)
            kind = (doc.product_type or NO_TYPE) if doc is not None else GONE
            row = table.setdefault(
                (kind, g.field), {"field": g.field, "key": g.key, "questions": 0, "products": Counter(), "examples": []}
            )
            row["questions"] += 1
            row["products"][g.doc_id] += 1
            if e.query not in row["examples"] and len(row["examples"]) < 3:
                row["examples"].append(e.query)
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (kind, _), row in table.items():
        counted: Counter[str] = row.pop("products")
        row["products"] = [_product(index, d, n) for d, n in counted.most_common()]
        row["summary"] = _advice(row["field"], row["key"], row["questions"], len(counted))
        grouped[kind].append(row)
    out = [
        {"product_type": kind, "questions": sum(r["questions"] for r in rows), "fields": _by_count(rows)}
        for kind, rows in grouped.items()
    ]
    return sorted(out, key=lambda t: (-t["questions"], t["product_type"]))


def _advice(name: str, key: str | None, questions: int, products: int) -> str:
    where = f"record it as a metafield (key `{key}`)" if key else "record it as a metafield, or in the description"
    return f"{name}: {_n(questions, 'question')} across {_n(products, 'product')}; {where}"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _by_count(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (-r["questions"], r["field"]))


def not_mentioned(entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """Things asked for that no product, policy or page mentions ("gift wrapping"), most asked first."""
    rows: dict[str, dict[str, Any]] = {}
    for e in entries:
        for g in e.missing:
            if g.doc_id is None:
                row = rows.setdefault(g.field, {"thing": g.field, "questions": 0, "examples": []})
                row["questions"] += 1
                if e.query not in row["examples"] and len(row["examples"]) < 3:
                    row["examples"].append(e.query)
    return sorted(rows.values(), key=lambda r: (-r["questions"], r["thing"]))


def couldnt_find(entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """Questions nothing in the shop came close to (off-topic, or a subject no page covers), most asked first."""
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for e in entries:
        if e.outcome == "couldnt_find":
            key = " ".join(e.query.casefold().split())
            counts[key] += 1
            first.setdefault(key, e.query)
    return [{"query": first[k], "count": n} for k, n in counts.most_common()]


# ---------------------------------------------------------------------------------------------------- time


def old_versions(entries: Sequence[Entry], current: str) -> dict[str, Any]:
    """Questions answered from an index version older than the one the report reads: the unanswered ones may be
    answerable now."""
    old = [e for e in entries if e.index_version != current]
    unanswered = [e for e in old if e.outcome in UNANSWERED]
    return {
        "current": current,
        "questions": len(old),
        "by_version": dict(Counter(e.index_version for e in old).most_common()),
        "unanswered": [
            {"query": e.query, "outcome": e.outcome, "index_version": e.index_version, "at": e.at}
            for e in unanswered[-50:]
        ],
    }


def per_day(entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """Questions per UTC day, by outcome, oldest day first."""
    days: dict[str, Counter[str]] = defaultdict(Counter)
    for e in entries:
        days[e.day][e.outcome] += 1
    return [{"day": day, **{o: days[day].get(o, 0) for o in OUTCOMES}} for day in sorted(days)]


# ---------------------------------------------------------------------------------------------------- CLI


def cli_report(args: argparse.Namespace) -> int:
    """`ask-engine report --log FILE --index DIR --out DIR`: write report.json and report.html."""
    from ask_engine import registry
    from ask_engine.config import Settings
    from ask_engine.indexes import ShopIndex, live_version
    from ask_engine.insights.log import read_log
    from ask_engine.insights.render import write_report

    entries = read_log(args.log)
    live_version(args.index)  # a missing index fails here, before the model is loaded
    settings = Settings.load(getattr(args, "config", None))
    embedder = registry.create("embedder", settings.embedder, settings)
    index = ShopIndex.open(args.index, expected_model=getattr(embedder, "name", None))
    report = build_report(entries, index, embedder, log_path=args.log)
    html, data = write_report(report, args.out)
    totals = report["totals"]
    unanswered = sum(totals["by_outcome"][o] for o in UNANSWERED)
    print(f"{totals['questions']} questions, {unanswered} unanswered, in {len(report['topics'])} topics")
    print(f"report: {html}\n        {data}")
    return 0
