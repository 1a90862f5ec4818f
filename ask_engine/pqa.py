"""Public product-QA data (semiPQA / hetPQA TSV files) → a shop folder plus an eval case file.

Only store-authored evidence becomes part of the shop: `attribute` candidates become typed Shopify metafields
(weight, dimension, volume, boolean, number, list), `bullet` / `Desc` / `OSP` candidates become the product
description. Reviews and community answers never do. A question is answerable when one of its store-authored
candidates is labelled as answering it; its case then lists that evidence (`expect.evidence_any`), and the eval
counts an answer as a hit when it carries it. Other questions expect "not recorded".

The data itself stays outside the package: this module only reads a file the caller names.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from ask_engine.errors import ConfigError
from ask_engine.faithfulness import split_sentences
from ask_engine.sources import humanise_label, humanise_value

__all__ = ["STORE_SOURCES", "Candidate", "convert", "eval_figures", "parse_attribute", "rates", "read_pqa"]

STORE_SOURCES = frozenset({"attribute", "bullet", "Desc", "OSP"})
_TEXT_SOURCES = ("bullet", "Desc", "OSP")
# Amazon's unit words → Shopify's measurement units, by metafield type.
_WEIGHT = {"pounds": "POUNDS", "kilograms": "KILOGRAMS", "grams": "GRAMS", "ounces": "OUNCES", "milligrams": "GRAMS"}
_LENGTH = {
    "inches": "INCHES",
    "centimeters": "CENTIMETERS",
    "millimeters": "MILLIMETERS",
    "meters": "METERS",
    "feet": "FEET",
    "yards": "YARDS",
}
_VOLUME = {
    "milliliters": "MILLILITERS",
    "liters": "LITERS",
    "fluid_ounces": "FLUID_OUNCES",
    "fl_oz": "FLUID_OUNCES",
    "gallons": "GALLONS",
    "quarts": "QUARTS",
    "pints": "PINTS",
}
_SKIP_KEYS = {"normalized_value", "standardized_values", "language_tag", "marketplace_id"}


@dataclass
class Candidate:
    source: str
    text: str
    label: int


@dataclass
class Question:
    qid: str
    product: str
    question: str
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def answerable(self) -> bool:
        return any(c.label == 1 and c.source in STORE_SOURCES for c in self.candidates)


# ------------------------------------------------------------------------------------------ attribute syntax


class _Parser:
    """The source's JSON-like attribute syntax: `{ k:v, k:{...}, k:[ {...} ] }`, bare or quoted scalars."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def value(self) -> Any:
        self.ws()
        if self.i >= len(self.s):
            return ""
        ch = self.s[self.i]
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.arr()
        if ch == '"':
            return self.quoted()
        start = self.i
        while self.i < len(self.s) and self.s[self.i] not in ",}]":
            self.i += 1
        return self.s[start : self.i].strip()

    def quoted(self) -> str:
        self.i += 1
        out = []
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch in "|\\" and self.s[self.i + 1 : self.i + 2] == '"':
                out.append('"')  # |" (or a backslash and ") is an inch mark inside a quoted value
                self.i += 2
                continue
            if ch == '"':
                self.i += 1
                break
            out.append(ch)
            self.i += 1
        return "".join(out)

    def obj(self) -> dict[str, Any]:
        self.i += 1
        out: dict[str, Any] = {}
        while True:
            self.ws()
            if self.i >= len(self.s) or self.s[self.i] == "}":
                self.i += 1
                return out
            if self.s[self.i] == ",":
                self.i += 1
                continue
            start = self.i
            while self.i < len(self.s) and self.s[self.i] not in ":}":
                self.i += 1
            key = self.s[start : self.i].strip()
            if self.i < len(self.s) and self.s[self.i] == ":":
                self.i += 1
            out[key] = self.value()

    def arr(self) -> list[Any]:
        self.i += 1
        out: list[Any] = []
        while True:
            self.ws()
            if self.i >= len(self.s) or self.s[self.i] == "]":
                self.i += 1
                return out
            if self.s[self.i] == ",":
                self.i += 1
                continue
            out.append(self.value())


def _records(text: str) -> list[Any]:
    """`{ ... }; { ... }` → the parsed records."""
    parser = _Parser(text)
    out: list[Any] = []
    while True:
        parser.ws()
        if parser.i >= len(parser.s):
            return out
        if parser.s[parser.i] == ";":
            parser.i += 1
            continue
        before = parser.i
        out.append(parser.value())
        if parser.i == before:
            parser.i += 1


def _scalar(value: Any) -> str:
    text = str(value).strip()
    # bare enum tokens ("nintendo_3ds") are written with spaces, as a merchant would
    return text.replace("_", " ") if " " not in text else text


def _number(value: Any) -> float | None:
    try:
        return float(str(value))
    except ValueError:
        return None


def _measure(record: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A `{unit, value}` record as a Shopify measurement metafield (type, value), when its unit is known."""
    unit = str(record.get("unit", "")).lower()
    number = _number(record.get("value"))
    if number is None:
        return None
    for mtype, table in (("weight", _WEIGHT), ("dimension", _LENGTH), ("volume", _VOLUME)):
        if unit in table:
            value = number / 1000 if unit == "milligrams" else number
            return mtype, {"value": value, "unit": table[unit]}
    return None


def _describe(value: Any) -> str:
    """Any parsed value as one readable phrase ("length 3.75 inches; type short sleeve")."""
    if isinstance(value, dict):
        if "value" in value and "unit" in value:
            return f"{_scalar(value['value'])} {_scalar(value['unit'])}"
        if "value" in value and len([k for k in value if k not in _SKIP_KEYS]) == 1:
            return _describe(value["value"])
        parts = [
            f"{k.replace('_', ' ')} {_describe(v)}".strip()
            for k, v in value.items()
            if k not in _SKIP_KEYS and _describe(v)
        ]
        return "; ".join(parts)
    if isinstance(value, list):
        return ", ".join(p for p in (_describe(v) for v in value) if p)
    return _scalar(value)


def parse_attribute(candidate: str) -> tuple[str, str, str] | None:
    """An attribute candidate → (key, metafield type, metafield value as Shopify stores it); None if unreadable."""
    key, sep, rest = candidate.partition(":")
    key = key.strip().strip('"').lower()
    if not sep or not re.fullmatch(r"[a-z0-9_]+", key or "-"):
        return None
    records = [r for r in _records(rest) if r not in ("", {}, [])]
    if not records:
        return None
    if len(records) == 1 and isinstance(records[0], dict):
        record = records[0]
        measured = _measure(record)
        if measured is not None:
            return key, measured[0], json.dumps(measured[1])
        inner = record.get("value")
        if set(record) - _SKIP_KEYS == {"value"} and not isinstance(inner, dict | list):
            text = str(inner).strip()
            if text.lower() in ("true", "false"):
                return key, "boolean", text.lower()
            if re.fullmatch(r"-?\d+", text):
                return key, "number_integer", text
            if re.fullmatch(r"-?\d*\.\d+", text):
                return key, "number_decimal", text
            return key, "single_line_text_field", _scalar(text)
        described = _describe(record)
        return (key, "single_line_text_field", described) if described else None
    values = [v for v in (_describe(r) for r in records) if v]
    if not values:
        return None
    if len(values) == 1:
        return key, "single_line_text_field", values[0]
    return key, "list.single_line_text_field", json.dumps(values)


# ------------------------------------------------------------------------------------------ reading the files


def _rows(path: Path) -> Iterator[dict[str, str]]:
    csv.field_size_limit(sys.maxsize)
    with path.open(encoding="utf-8", newline="") as fh:
        yield from csv.DictReader(fh, delimiter="\t")


def read_pqa(path: str | Path) -> list[Question]:
    """The questions of one PQA file with their candidates, whichever of the three layouts it has."""
    path = Path(path)
    rows = list(_rows(path))
    if not rows:
        raise ConfigError(f"{path}: no rows")
    columns = set(rows[0])
    questions: dict[str, Question] = {}
    if {"qid", "question", "candidate", "label"} <= columns:
        for row in rows:
            qid = row["qid"].strip()
            product = (row.get("ASIN") or "").strip() or f"q{qid}"
            q = questions.setdefault(qid, Question(qid, product, row["question"].strip()))
            source = (row.get("source") or "attribute").strip()
            q.candidates.append(Candidate(source, row["candidate"].strip(), int(row["label"].strip() or 0)))
    elif {"ASIN", "question", "candidate", "source"} <= columns:
        # answer generation: every row is evidence that answers its question
        per_product: dict[str, int] = defaultdict(int)  # questions so far per product: "<ASIN>-<n>" ids
        for row in rows:
            product = row["ASIN"].strip()
            key = f"{product}|{row['question'].strip().casefold()}"
            if key not in questions:
                per_product[product] += 1
                questions[key] = Question(f"{product}-{per_product[product]}", product, row["question"].strip())
            questions[key].candidates.append(Candidate(row["source"].strip(), row["candidate"].strip(), 1))
    else:
        raise ConfigError(f"{path}: not a PQA file (columns {sorted(columns)})")
    return list(questions.values())


# ------------------------------------------------------------------------------------------ the shop


def _product_json(asin: str, questions: Sequence[Question], index: int) -> tuple[dict[str, Any], dict[str, str]]:
    """One Shopify storefront product from the store-authored candidates of its questions, and the humanised text
    each candidate shows in the shop (for the cases' evidence)."""
    metafields: dict[str, dict[str, Any]] = {}
    bullets: list[str] = []
    paragraphs: list[str] = []
    shown: dict[str, str] = {}
    seen_text: set[str] = set()
    for q in questions:
        for c in q.candidates:
            if c.source not in STORE_SOURCES:
                continue
            if c.source == "attribute":
                parsed = parse_attribute(c.text)
                if parsed is None:
                    continue
                key, mtype, value = parsed
                metafields.setdefault(key, {"namespace": "specs", "key": key, "type": mtype, "value": value})
                mf = metafields[key]
                try:
                    human = humanise_value(mf["value"], mf["type"])
                except Exception:
                    continue
                if human:
                    shown[c.text] = json.dumps([humanise_label(key), human])
                continue
            text = _unescaped(c.text)
            if len(text) < 3:
                continue
            shown[c.text] = json.dumps([text])
            if text.casefold() in seen_text:
                continue
            seen_text.add(text.casefold())
            (bullets if c.source == "bullet" else paragraphs).append(text)
    body = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
    if bullets:
        body = "<ul>" + "".join(f"<li>{escape(b)}</li>" for b in bullets) + "</ul>" + body
    product = {
        "id": 9_000_000 + index,
        "title": f"Listing {asin}",
        "handle": f"listing-{asin.lower()}",
        "body_html": body,
        "vendor": "",
        "product_type": "",
        "tags": [],
        "options": [{"name": "Title", "position": 1, "values": ["Default Title"]}],
        "variants": [{"id": 90_000_000 + index, "title": "Default Title", "option1": "Default Title", "price": None}],
        "metafields": list(metafields.values()),
    }
    return product, shown


def _unescaped(text: str) -> str:
    """A text candidate as the product page shows it: the source escapes an inch mark inside text with a backslash."""
    return " ".join(text.replace('\\"', '"').split())


def _evidence(q: Question, shown: dict[str, str]) -> list[list[str]]:
    """What an answer must carry to count as a hit: for each labelled store-authored candidate, the texts that all
    appear in an answer carrying it (an attribute's label and value; a sentence of a description candidate)."""
    out: list[list[str]] = []
    for c in q.candidates:
        if c.label != 1 or c.source not in STORE_SOURCES or c.text not in shown:
            continue
        parts = json.loads(shown[c.text])
        if c.source == "attribute":
            label, value = parts
            # a yes/no fact is carried by an answer naming its attribute ("…is not fragile"); any other by its value
            # and a word of its attribute ("the item weight … is 1.2 kg")
            out.append([f"~{label}"] if value in ("yes", "no") else [value, f"~{label}"])
            continue
        sentences = [s for s in split_sentences(parts[0]) if len(s) >= 12] or [parts[0]]
        out += [[s.rstrip(".!?;: ")] for s in sentences]
    return out


def convert(source: str | Path, out: str | Path, *, name: str | None = None) -> tuple[Path, Path, int]:
    """Write `out/shop/` (shop.toml, products.json) and `out/cases.jsonl`; returns (shop dir, case file, cases)."""
    source = Path(source)
    out = Path(out)
    questions = read_pqa(source)
    by_product: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_product[q.product].append(q)
    shop_dir = out / "shop"
    shop_dir.mkdir(parents=True, exist_ok=True)
    slug = name or re.sub(r"[^a-z0-9]+", "-", source.stem.lower()).strip("-")
    (shop_dir / "shop.toml").write_text(
        "[shop]\n"
        f'name = "PQA {slug}"\n'
        f'url = "https://{slug}.pqa.example"\n'
        'currency = "USD"\nlanguage = "en"\n'
        f'gid_namespace = "{slug.replace("-", "")}"\n',
        encoding="utf-8",
    )
    products = []
    cases = []
    for index, (asin, qs) in enumerate(sorted(by_product.items())):
        product, shown = _product_json(asin, qs, index)
        products.append(product)
        gid = f"gid://{slug.replace('-', '')}/Product/{product['id']}"
        for q in qs:
            evidence = _evidence(q, shown)
            cases.append(
                {
                    "id": f"pqa-{q.qid}",
                    "category": "pqa",
                    "query": q.question,
                    "ids": [gid],
                    "expect": {"answerable": bool(evidence), "evidence_any": evidence},
                }
            )
    (shop_dir / "products.json").write_text(json.dumps({"products": products}, indent=1), encoding="utf-8")
    licence = source.parent / "LICENSE"
    if licence.exists():
        shutil.copyfile(licence, out / "LICENSE")  # CDLA-Sharing: a modified copy keeps the licence beside it
    case_file = out / "cases.jsonl"
    with case_file.open("w", encoding="utf-8") as fh:
        for case in cases:
            fh.write(json.dumps(case, ensure_ascii=False) + "\n")
    return shop_dir, case_file, len(cases)


# ------------------------------------------------------------------------------------------ eval figures


def rates(pairs: Sequence[tuple[bool, bool, bool]]) -> dict[str, float]:
    """(answerable, answered, hit) per question → evidence hit, abstention, balanced accuracy, false abstention."""
    answerable = [p for p in pairs if p[0]]
    unanswerable = [p for p in pairs if not p[0]]
    hit = sum(1 for _, answered, h in answerable if answered and h) / len(answerable) if answerable else 0.0
    abstention = sum(1 for _, answered, _ in unanswerable if not answered) / len(unanswerable) if unanswerable else 1.0
    false_abstention = sum(1 for _, answered, _ in answerable if not answered) / len(answerable) if answerable else 0.0
    return {
        "questions": len(pairs),
        "answerable": len(answerable),
        "evidence_hit": round(hit, 4),
        "abstention": round(abstention, 4),
        "balanced_accuracy": round((hit + abstention) / 2, 4),
        "false_abstention": round(false_abstention, 4),
    }


def eval_figures(engine: Any, cases: Sequence[Any], run: Any) -> dict[str, Any]:
    """The engine's product-QA figures and, in the same run, the trivial baseline's: the single unit closest to
    the question by the engine's embedder, "not recorded" below a threshold, at its best threshold."""
    import numpy as np

    from ask_engine.answering.ranker import carries
    from ask_engine.answering.units import product_units
    from ask_engine.resolve import resolve

    pqa_cases = {c.id: c for c in cases if c.category == "pqa"}
    turns = [t for t in run.turns if t.case_id in pqa_cases and t.turn == 0]
    engine_pairs = [(t.answerable, not t.abstained, bool(t.evidence_hit)) for t in turns]
    scored: list[tuple[bool, float, bool]] = []
    for t in turns:
        case = pqa_cases[t.case_id]
        expect = case.turns()[0][3]
        resolution = resolve(tuple(case.ids), engine.index, query=case.query)
        docs = [engine.index.documents[d] for d in resolution.doc_ids if d in engine.index.documents]
        units = product_units(docs[0]) if docs else []
        if not units:
            scored.append((t.answerable, float("-inf"), False))
            continue
        q = np.asarray(engine.embedder.embed_query(case.query), dtype=np.float32)
        sims = np.asarray(engine.embedder.embed_documents([u.text for u in units]), dtype=np.float32) @ q
        best = int(np.argmax(sims))
        scored.append((t.answerable, float(sims[best]), carries(units[best].text, expect.evidence_any)))
    best_rates: dict[str, Any] = {}
    for threshold in [*sorted({s for _, s, _ in scored if s > float("-inf")}), float("inf")]:
        found = rates([(a, s >= threshold, h) for a, s, h in scored])
        if not best_rates or float(found["balanced_accuracy"]) > float(best_rates["balanced_accuracy"]):
            best_rates = {**found, "threshold": round(threshold, 4) if threshold != float("inf") else None}
    ours = rates(engine_pairs)
    return {
        "engine": ours,
        "cosine_baseline": best_rates,
        "balanced_accuracy_gain": round(float(ours["balanced_accuracy"]) - float(best_rates["balanced_accuracy"]), 4),
    }
