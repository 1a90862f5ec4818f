"""Faithfulness scoring: is each answer sentence supported by the evidence? One implementation for eval and guard.

A sentence is *supported* when (1) its content words are found in one evidence sentence (or the union of the two
best), or it is semantically close to one with most of its words found; (2) every hard token in it (number, price,
duration, percentage, size/unit, SKU or model code, allergen term) appears somewhere in the evidence; (3) it does not
negate what its best evidence sentence affirms, or affirm what it negates; (4) every capitalised name in it (product,
place, carrier) appears in the evidence. Sentences that only say what the shop has not recorded, or other fixed
phrases about the answer itself, are not claims. The definition and the calibration figures are in eval/README.md.

`python -m ask_engine.faithfulness --calibrate eval/calibration.jsonl` measures the scorer on the labelled set
(ask_engine.guard.calibration).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ask_engine.protocols import Embedder
from ask_engine.guard.bindings import flipped_label, unbound_figures, unsupported_quantifier
from ask_engine.guard.figures import _SKU_RE, _EvidenceHard, _Hard, _hard_items, _normalise_text, hard_tokens
from ask_engine.guard.sentences import SentenceKind, _lines, _split_line, classify, split_sentences
from ask_engine.guard.words import (
    _attributable,
    _entities,
    _negation_scopes,
    _stem,
    _words,
    attributable,
    content_words,
    missing_acronyms,
    passage_subject,
)

# Chosen from eval/calibration.jsonl (`--calibrate --grid`, eval/README.md). 0.6 scored 0.3 points more accuracy there,
# but the set's corruptions are mostly caught by the hard checks; 0.7 keeps the lexical bar higher for the vaguer
# claims an LLM adds ("ideal for winter mountaineering"), at the same precision and recall within one pair.
DEFAULT_MIN_PRECISION = 0.7
DEFAULT_MIN_SIMILARITY = 0.80
# A semantically close sentence may be a paraphrase with fewer shared words, but never one sharing fewer than this.
DEFAULT_PARAPHRASE_PRECISION = 0.5
# Without an embedder, precision alone decides.
UNION_TOP = 2


@dataclass(frozen=True)
class SentenceSupport:
    sentence: str
    supported: bool
    best_evidence: str | None
    evidence_index: int | None  # index of the evidence item (passage or sentence) the best sentence came from
    precision: float  # share of the sentence's content words found in the best evidence sentence (or top-2 union)
    similarity: float  # embedding cosine to the best evidence sentence (0.0 without an embedder)
    missing_tokens: tuple[str, ...]  # hard tokens and names not found in the evidence, and "negation" when flipped
    kind: SentenceKind


@dataclass(frozen=True)
class FaithfulnessResult:
    score: float  # supported claim sentences / claim sentences (1.0 when there are no claims)
    sentences: tuple[SentenceSupport, ...]
    refusal: bool  # the answer makes no claim and at least one sentence says the shop has no answer

    @property
    def claims(self) -> tuple[SentenceSupport, ...]:
        return tuple(s for s in self.sentences if s.kind == "claim")

    @property
    def abstains(self) -> bool:
        """At least one sentence says the shop has not recorded / cannot find what was asked."""
        return any(s.kind == "refusal" for s in self.sentences)

    @property
    def unsupported(self) -> tuple[SentenceSupport, ...]:
        return tuple(s for s in self.sentences if s.kind == "claim" and not s.supported)


@dataclass(frozen=True)
class _Unit:
    text: str  # the evidence sentence (a list item carries its lead-in)
    source: int  # index of the evidence item it came from
    words: frozenset[str]  # its content words plus those of its passage's title line
    own: frozenset[str]  # its own content words
    title: frozenset[str]  # the content words of its passage's title line (and FAQ question)
    embed_text: str  # what is embedded: title line + sentence
    title_text: str = ""


@dataclass(frozen=True)
class _Source:
    """One evidence item: its words, names and hard tokens."""

    text: str
    words: frozenset[str]  # stems of every word, for the name check
    hard_items: tuple[_Hard, ...]


class _Prepared:
    """Evidence split into sentence units, with words, hard tokens, names and (lazily) embeddings.

    The first line of a multi-line evidence item is its title ("Aldergrove 3L Waterproof Jacket - Men's by ...",
    "Refund Policy — Sale items."); its words count for every sentence of the item, since a fact line such as
    "Waterproof: yes." is about the titled product. Questions (an FAQ entry's question) count the same way.
    After a lead-in line ending in ":" ("we cannot accept returns of:"), the first sentence of each following
    line is read together with the lead-in.
    """

    def __init__(self, evidence: Sequence[str]) -> None:
        units: list[_Unit] = []
        sources: list[_Source] = []
        every: list[_Hard] = []
        for index, item in enumerate(evidence):
            lines = _lines(item)
            sentences: list[tuple[str, str | None]] = []  # (sentence, lead-in)
            lead: str | None = None
            for line, _ in lines:
                parts = [s for s in _split_line(line) if re.search(r"[A-Za-z0-9]", s)]
                for n, sentence in enumerate(parts):
                    sentences.append((sentence, lead if n == 0 else None))
                if parts and parts[-1].rstrip().endswith(":"):
                    lead = parts[-1].strip()
            title_parts: list[str] = []
            body = sentences
            if len(sentences) > 1 and len(lines) > 1:
                title_parts.append(sentences[0][0])
                body = sentences[1:]
            title_parts += [s for s, _ in body if s.rstrip().endswith("?")]
            body = [b for b in body if not b[0].rstrip().endswith("?")] or body
            title = " ".join(title_parts)
            title_words = frozenset(content_words(title))
            for sentence, lead_in in body:
                text = f"{lead_in} {sentence}" if lead_in else sentence
                own = frozenset(content_words(text))
                units.append(_Unit(text, index, own | title_words, own, title_words, f"{title} {text}".strip(), title))
            hard = _hard_items(item)
            every.extend(hard)
            names = {_stem(part) for w in _words(item) for part in (w, w.replace("'s", ""))}
            sources.append(_Source(item, frozenset(names), tuple(hard)))
        self.units = units
        self.sources = sources
        self.hard = _EvidenceHard(every)
        # Names the evidence writes capitalised mid-sentence and never in lower case ("Mastercard", "China"):
        # such a word is a name even at the start of an answer sentence.
        lower: set[str] = set()
        capitalised: set[str] = set()
        for item in evidence:
            text = _normalise_text(item)
            lower.update(re.findall(r"(?<![\w'-])[a-z][a-z'-]*", text))
            for sentence in split_sentences(text):
                capitalised |= _entities(_SKU_RE.sub(" ", sentence))
        self.known_names = frozenset(capitalised - lower)
        self.vectors: np.ndarray[Any, np.dtype[np.float32]] | None = None


def _same_kind(a: _Hard, b: _Hard) -> bool:
    return a.number is not None and b.number is not None and a.unit == b.unit and a.currency == b.currency


_CLAUSE_SPLIT = re.compile(
    r";\s+|,\s+(?=(?:and|but|plus|so|while|although|though|whereas|which)\b)"
    r"|\s+(?=and (?:it|it's|they|they're|we|we'll|you|you'll|the|this|these|there|its|their|our|your|delivery)\b)",
    re.IGNORECASE,
)


def _clauses(sentence: str) -> list[str]:
    """The clauses of a sentence that each state something ("..., and it comes with a lifetime warranty")."""
    return [c for c in _CLAUSE_SPLIT.split(sentence) if len(content_words(c)) >= 2]


def _negation_consistent(sentence: str, sentence_words: set[str], unit: _Unit, prepared: _Prepared) -> bool:
    """False when the sentence negates what its best evidence sentence states about the same words, or states
    what that sentence negates.

    When the negated words are only in the evidence sentence's title (an FAQ question such as "Can I rent
    equipment?"), a negation anywhere in that passage answers it ("No, we don't offer equipment rental.").
    """
    s_scopes = _negation_scopes(sentence)
    e_scopes = _negation_scopes(unit.text)
    for scope in s_scopes:
        if any(scope & e for e in e_scopes):
            continue
        if scope & unit.own:
            return False
        if scope & unit.title:
            context = prepared.sources[unit.source].text
            if not any(scope & c for line in split_sentences(context) for c in _negation_scopes(line)):
                return False
    for scope in e_scopes:
        shared = scope & sentence_words
        if shared and not any(shared & s for s in s_scopes):
            return False
    return True


class FaithfulnessScorer:
    """Scores answer sentences against evidence passages. Thread-safe; caches evidence sentence embeddings."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        min_precision: float = DEFAULT_MIN_PRECISION,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
        paraphrase_precision: float = DEFAULT_PARAPHRASE_PRECISION,
        cache_size: int = 8192,
        language: str = "en",
    ) -> None:
        self.embedder = embedder
        self.language = language  # whose quantifier words and "yes" values the claim checks read (lexicon)
        self.min_precision = min_precision
        self.min_similarity = min_similarity
        self.paraphrase_precision = min(paraphrase_precision, min_precision)
        self._cache: OrderedDict[str, np.ndarray[Any, np.dtype[np.float32]]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    # -- embeddings ---------------------------------------------------------------------------------

    def _vectors(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        embedder = self.embedder
        assert embedder is not None
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        fresh: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}
        if missing:
            computed = embedder.embed_documents(missing)
            fresh = {t: np.asarray(v, dtype=np.float32) for t, v in zip(missing, computed, strict=True)}
            with self._lock:
                self._cache.update(fresh)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        rows = []
        with self._lock:
            for t in texts:
                vector = fresh.get(t)
                if vector is None:
                    vector = self._cache.get(t)
                    if vector is not None:
                        self._cache.move_to_end(t)
                rows.append(vector)
        for i, vector in enumerate(rows):
            if vector is None:  # evicted by a concurrent call between the two locked sections
                rows[i] = np.asarray(embedder.embed_documents([texts[i]])[0], dtype=np.float32)
        if not rows:
            return np.zeros((0, int(getattr(embedder, "dimension", 1))), dtype=np.float32)
        return np.vstack([r for r in rows if r is not None])

    def _prepare(self, evidence: Sequence[str]) -> _Prepared:
        prepared = _Prepared(evidence)
        if self.embedder is not None and prepared.units:
            prepared.vectors = self._vectors([u.embed_text for u in prepared.units])
        return prepared

    # -- public API ---------------------------------------------------------------------------------

    def is_refusal(self, sentence: str) -> bool:
        """True for sentences that are not claims: abstentions ("has not recorded", "couldn't find", "isn't
        available right now") and fixed phrases about the answer ("nothing was changed", "ask a question")."""
        return classify(sentence) != "claim"

    def support(self, sentence: str, evidence: Sequence[str]) -> SentenceSupport:
        """How well one sentence is supported by `evidence` (passages, split into sentences here, or sentences)."""
        return self._support(sentence, self._prepare(evidence))

    def score(self, answer: str, evidence: Sequence[str], subjects: Sequence[str] | None = None) -> FaithfulnessResult:
        """Score every sentence of `answer` against `evidence`; the score counts claim sentences only.

        `subjects`, one per passage (`passage_subject`), lets a sentence that names one product draw only on that
        product's passages and the non-product ones (`attributable`), as the grounding guard does.
        """
        return self.score_sentences(split_sentences(answer), evidence, subjects)

    def score_sentences(
        self, sentences: Sequence[str], evidence: Sequence[str], subjects: Sequence[str] | None = None
    ) -> FaithfulnessResult:
        """As `score`, for an answer already split into sentences (a generator's draft)."""
        prepared = self._prepare(evidence)
        if self.embedder is not None and sentences:
            self._vectors(list(sentences))  # one batch for all answer sentences
        results = tuple(
            self._support(s, prepared if len(own) == len(evidence) else self._prepare(own))
            for s in sentences
            for own in [_attributable(s, evidence, subjects)]
        )
        claims = [r for r in results if r.kind == "claim"]
        score = sum(r.supported for r in claims) / len(claims) if claims else 1.0
        refusal = not claims and any(r.kind == "refusal" for r in results)
        return FaithfulnessResult(score=score, sentences=results, refusal=refusal)

    # -- internals ----------------------------------------------------------------------------------

    def _support(self, sentence: str, prepared: _Prepared) -> SentenceSupport:
        kind = classify(sentence)
        words = content_words(sentence)
        hard = _hard_items(sentence)
        if kind != "claim" or not prepared.units:
            # Refusals and fixed phrases name what was asked about; only their numbers must be real.
            missing = tuple(dict.fromkeys(h.text for h in hard if not prepared.hard.supports(h)))
            supported = kind != "claim" and not missing
            if not prepared.units:
                return SentenceSupport(sentence, supported, None, None, 0.0, 0.0, missing, kind)

        units = prepared.units
        overlaps = [len(words & u.words) for u in units]
        denominator = max(len(words), 1)
        similarities = [0.0] * len(units)
        if prepared.vectors is not None:
            similarities = [float(x) for x in prepared.vectors @ self._vectors([sentence])[0]]
        ranked = sorted(
            range(len(units)), key=lambda i: (overlaps[i] / denominator + similarities[i], overlaps[i]), reverse=True
        )
        best = ranked[0]
        top_score = overlaps[best] / denominator + similarities[best]
        # Among equally good sentences (the same fact line of two products), prefer one the sentence agrees with.
        for i in ranked[1:8]:
            if overlaps[i] / denominator + similarities[i] < top_score - 1e-9:
                break
            if not _negation_consistent(sentence, words, units[best], prepared) and _negation_consistent(
                sentence, words, units[i], prepared
            ):
                best = i
                break
        similarity = similarities[best]
        support_units = [best]
        covered = set(words & units[best].words)
        # The one other sentence that covers most of what the best one leaves out (a claim may join two facts).
        # Numbers never pick it (a changed number must not pull in the passage that happens to contain it), and
        # a name alone picks it only when the name is that passage's title (a product named beside a policy).
        entities = {_stem(e) for e in _entities(sentence, prepared.known_names)}
        rest = {w for w in words - covered if not any(c.isdigit() for c in w)}
        if rest and UNION_TOP > 1:

            def gain(i: int) -> int:
                got = rest & units[i].words
                return len(got) if got - entities or got & units[i].title else 0

            cover = max(range(len(units)), key=lambda i: (gain(i), similarities[i]))
            if gain(cover):
                support_units.append(cover)
                covered |= rest & units[cover].words
        precision = len(covered) / denominator if words else 1.0
        if kind != "claim":
            return SentenceSupport(
                sentence,
                supported,
                units[best].text,
                units[best].source,
                round(precision, 4),
                round(similarity, 4),
                missing,
                kind,
            )

        missing_list = self._missing(sentence, words, hard, prepared, support_units, best)
        lexical = precision >= self.min_precision
        semantic = (
            prepared.vectors is not None
            and similarity >= self.min_similarity
            and precision >= self.paraphrase_precision
        )
        return SentenceSupport(
            sentence=sentence,
            supported=(lexical or semantic) and not missing_list,
            best_evidence=units[best].text,
            evidence_index=units[best].source,
            precision=round(precision, 4),
            similarity=round(similarity, 4),
            missing_tokens=tuple(missing_list),
            kind=kind,
        )

    def _missing(
        self,
        sentence: str,
        words: set[str],
        hard: list[_Hard],
        prepared: _Prepared,
        support_units: list[int],
        best: int,
    ) -> list[str]:
        """Hard tokens and names the evidence lacks, "negation" when the polarity differs, and "clause: ..." for a
        clause no evidence sentence states."""
        units = prepared.units
        sources = {units[i].source for i in support_units}
        local_hard = [h for i in support_units for h in _hard_items(units[i].text)]
        local = _EvidenceHard([*local_hard, *(h for i in support_units for h in _hard_items(units[i].title_text))])
        best_hard = _hard_items(units[best].text)
        mentioned = {h.text for h in hard}
        missing: list[str] = []
        for h in hard:
            if local.supports(h):
                continue
            # A figure where the supporting sentence states a different one of the same kind is a substitution
            # ("under 14" against "under 13"), even if 14 appears somewhere else in the evidence. A bare number
            # is compared with the best sentence only: bare numbers are too common to compare more widely.
            pool = local_hard if (h.unit or h.currency) else best_hard
            substituted = any(_same_kind(h, other) and other.text not in mentioned for other in pool)
            if substituted or not prepared.hard.supports(h):
                missing.append(h.text)
        names = frozenset().union(*(units[i].words for i in support_units))
        names |= frozenset().union(*(prepared.sources[i].words for i in sources))
        missing += sorted(e for e in _entities(sentence, prepared.known_names) if _stem(e) not in names)
        named = [t for i in support_units for t in (units[i].text, units[i].title_text)]
        missing += missing_acronyms(sentence, named + [prepared.sources[i].text for i in sources])
        flipped = any(flipped_label(sentence, units[i].text, self.language) for i in support_units)
        if flipped or not _negation_consistent(sentence, words, units[best], prepared):
            missing.append("negation")
        # every word and number may be in the evidence and still be recombined: a figure bound to the words the
        # evidence binds to another figure, a sweeping "only" / "all" the supporting sentences do not make
        missing += [f for f in unbound_figures(sentence, [s.text for s in prepared.sources]) if f not in missing]
        support_texts = [t for i in support_units for t in (units[i].text, units[i].title_text)]
        quantifier = unsupported_quantifier(sentence, support_texts, self.language)
        if quantifier:
            missing.append(f"quantifier: {quantifier}")
        clauses = _clauses(sentence)
        if len(clauses) > 1:
            for clause in clauses:
                clause_words = content_words(clause)
                top = max(range(len(units)), key=lambda i: len(clause_words & units[i].words))
                found = len(clause_words & units[top].words) / len(clause_words)
                if found < self.paraphrase_precision:
                    missing.append(f"clause: {clause}")
                elif not _negation_consistent(clause, clause_words, units[top], prepared):
                    missing.append("negation")
        return list(dict.fromkeys(missing))


__all__ = [
    "DEFAULT_MIN_PRECISION",
    "DEFAULT_MIN_SIMILARITY",
    "DEFAULT_PARAPHRASE_PRECISION",
    "FaithfulnessResult",
    "FaithfulnessScorer",
    "SentenceKind",
    "SentenceSupport",
    "attributable",
    "classify",
    "content_words",
    "hard_tokens",
    "passage_subject",
    "split_sentences",
]
