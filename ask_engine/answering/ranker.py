"""One scorer for answer units: P(this unit answers this question), a logistic model over general features.

Features of a (question, unit) pair: embedding similarity of the question to the unit and to its attribute label,
where the unit stands among the product's units (rank, margin, z-score), content-word overlap, the unit's kind,
answer-type agreement (a quantity question and a unit with a figure; a yes/no question and a yes/no fact) and
length. The weights, the bar below which an answer says "not recorded", and the fingerprint of the embedder they
were fitted for live in `ranker.json`, written by `python -m ask_engine.answering.calibrate` from public,
human-labelled product-QA data. Nothing here knows a shop.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ask_engine.answering.units import Unit
from ask_engine.language import content_stems

__all__ = ["FEATURES", "Ranker", "carries", "features", "lexicon", "lifted", "load_ranker"]

log = logging.getLogger(__name__)

RANKER_FILE = Path(__file__).with_name("ranker.json")
LEXICON_DIR = Path(__file__).resolve().parent.parent / "lexicon"

FEATURES = (
    "sim",
    "sim_label",
    "sim_best",
    "top1",
    "margin",
    "z",
    "overlap",
    "label_overlap",
    "kind_fact",
    "kind_option",
    "kind_identity",
    "quantity_figure",
    "quantity_no_figure",
    "yes_no_boolean",
    "choice_fact",
    "length",
    "units",
)
_BOOLEAN = frozenset({"yes", "no", "true", "false"})
_FIGURE = re.compile(r"\d")


@lru_cache(maxsize=4)
def lexicon(language: str = "en") -> dict[str, Any]:
    path = LEXICON_DIR / f"{language}.json"
    if not path.exists():
        path = LEXICON_DIR / "en.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _has_cue(text: str, cues: Sequence[str]) -> bool:
    return any(re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", text) for c in cues)


@dataclass(frozen=True)
class QuestionShape:
    yes_no: bool
    quantity: bool
    choice: bool
    stems: frozenset[str]

    @classmethod
    def read(cls, question: str, language: str = "en") -> QuestionShape:
        lex = lexicon(language)
        low = " ".join(question.casefold().split())
        first = re.match(r"[\w']+", low)
        return cls(
            yes_no=bool(first) and first.group(0) in set(lex["yes_no_starts"]) if first else False,
            quantity=_has_cue(low, lex["quantity_cues"]),
            choice=_has_cue(low, lex["choice_cues"]),
            stems=content_stems(question),
        )


def features(
    shape: QuestionShape,
    units: Sequence[Unit],
    sims: np.ndarray[Any, Any],
    label_sims: np.ndarray[Any, Any],
) -> np.ndarray[Any, Any]:
    """The feature matrix (one row per unit, columns as FEATURES) of one question against one product's units."""
    n = len(units)
    out = np.zeros((n, len(FEATURES)), dtype=np.float32)
    if n == 0:
        return out
    best = np.maximum(sims, label_sims)
    order = np.argsort(-best)
    top = float(best[order[0]])
    second = float(best[order[1]]) if n > 1 else 0.0
    mean = float(best.mean())
    std = float(best.std()) or 1.0
    q = shape.stems
    for i, unit in enumerate(units):
        words = content_stems(unit.text)
        label_words = content_stems(f"{unit.label} {unit.key.replace('_', ' ')}") if unit.label else frozenset()
        figure = bool(_FIGURE.search(unit.value))
        structured = unit.kind != "description"
        out[i] = (
            sims[i],
            label_sims[i],
            best[i],
            1.0 if i == order[0] else 0.0,
            best[i] - (second if i == order[0] else top),
            (best[i] - mean) / std if n > 1 else 0.0,
            len(q & words) / len(q) if q else 0.0,
            1.0 if q & label_words else 0.0,
            1.0 if unit.kind == "fact" else 0.0,
            1.0 if unit.kind == "option" else 0.0,
            1.0 if unit.kind == "identity" else 0.0,
            1.0 if shape.quantity and figure else 0.0,
            1.0 if shape.quantity and not figure else 0.0,
            1.0 if shape.yes_no and structured and unit.value.strip(" .").casefold() in _BOOLEAN else 0.0,
            1.0 if shape.choice and structured else 0.0,
            math.log1p(len(unit.text)) / 6.0,
            math.log1p(n) / 4.0,
        )
    return out


@dataclass(frozen=True)
class Ranker:
    """A fitted logistic model over FEATURES and the bar an answer must clear."""

    weights: tuple[float, ...]
    bias: float
    bar: float
    second_bar: float
    embedder: str  # fingerprint of the embedder the weights were fitted with
    mean: tuple[float, ...] = ()
    scale: tuple[float, ...] = ()
    # a unit that addresses the question in one of these ways ("measure", "word") answers from this lower bar
    addressed_bars: tuple[tuple[str, float], ...] = ()
    # a fact the attribute lexicon or its label words tie to the question answers only from this probability
    lexicon_bar: float = 0.0

    def probabilities(self, x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        if len(x) == 0:
            return np.zeros(0, dtype=np.float32)
        z = x
        if self.mean:
            z = (x - np.asarray(self.mean, dtype=np.float32)) / np.asarray(self.scale, dtype=np.float32)
        logits = z @ np.asarray(self.weights, dtype=np.float32) + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-logits)), dtype=np.float32)

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "weights": list(self.weights),
            "bias": self.bias,
            "mean": list(self.mean),
            "scale": list(self.scale),
            "bar": self.bar,
            "second_bar": self.second_bar,
            "addressed_bars": dict(self.addressed_bars),
            "lexicon_bar": self.lexicon_bar,
            "embedder": self.embedder,
        }


def load_ranker(path: str | Path | None = None, *, embedder: str | None = None) -> Ranker:
    """The committed ranker; warns when it was fitted for another embedder than the one in use."""
    data = json.loads(Path(path or RANKER_FILE).read_text(encoding="utf-8"))
    if list(data["features"]) != list(FEATURES):
        raise ValueError(f"{path or RANKER_FILE}: fitted for other features; rerun the calibration")
    ranker = Ranker(
        weights=tuple(float(w) for w in data["weights"]),
        bias=float(data["bias"]),
        bar=float(data["bar"]),
        second_bar=float(data.get("second_bar", 1.0)),
        embedder=str(data.get("embedder", "")),
        mean=tuple(float(m) for m in data.get("mean", ())),
        scale=tuple(float(s) for s in data.get("scale", ())),
        addressed_bars=tuple((str(k), float(v)) for k, v in (data.get("addressed_bars") or {}).items()),
        lexicon_bar=float(data.get("lexicon_bar", 0.0)),
    )
    if embedder and ranker.embedder and embedder != ranker.embedder:
        log.warning(
            "the answer ranker was calibrated for embedder %s, not %s: its bar may not hold; rerun "
            "`python -m ask_engine.answering.calibrate`",
            ranker.embedder,
            embedder,
        )
    return ranker


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w%]+", " ", text.casefold()).split())


def _part_in(part: str, text: str, stems: frozenset[str]) -> bool:
    if part.startswith("~"):  # any content word of the part will do (an attribute named in the answer's words)
        wanted = content_stems(part[1:])
        return not wanted or bool(wanted & stems)
    return f" {_norm(part)} " in text


def carries(answer: str, evidence_any: Sequence[Sequence[str]]) -> bool:
    """True when `answer` carries one of the evidence alternatives: every text of it appears (a `~text` part: any
    of its content words)."""
    text = f" {_norm(answer)} "
    stems = content_stems(answer)
    return any(group and all(_part_in(part, text, stems) for part in group) for group in evidence_any)


def lifted(
    probabilities: Sequence[float] | np.ndarray[Any, Any],
    ways: Sequence[frozenset[str]],
    bar: float,
    addressed_bars: Sequence[tuple[str, float]],
    consider: int = 3,
) -> list[float]:
    """The probabilities with each of the best `consider` units that addresses the question in a way whose bar it
    clears raised to `bar`, so it answers (`addressing.addressed_by`: "how bright?" and "800 lumens" at 0.75)."""
    bars = dict(addressed_bars)
    out = [float(p) for p in probabilities]
    for i in sorted(range(len(out)), key=lambda i: -out[i])[:consider]:
        p = out[i]
        if p < bar and any(p >= bars[w] for w in ways[i] if w in bars):
            out[i] = bar + 1e-4 * p  # at the bar, in their own order ("800 lumens" over "An 800-lumen light")
    return out
