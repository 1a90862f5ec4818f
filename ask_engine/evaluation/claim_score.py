"""The eval's claim scorer: each answer sentence split into the claims it makes, each checked against the evidence.

A sentence can be mostly right and still carry one wrong claim: an added colour, a changed price, another product's
name, a flipped "not". Scoring sentences hides that; here every claim sentence (`classify(...) == "claim"`) counts

- one **statement**: the sentence as a whole, supported by word overlap or a close paraphrase (the faithfulness
  scorer's bar), with every clause and single-word name in it found;
- one **item** per member of a list ("black, blue and red"): its words must be in the evidence, and the items of one
  list in one passage unless each names a passage (`ask_engine.guard.claims.unlisted_item`);
- one **number** per hard token (number, price, size, duration, SKU): the evidence must state it;
- one **name** per run of two or more capitalised words ("Lone Rover 2 Tent"): one evidence line must give it;
- one **negation** per negated phrase ("is not machine washable"): the evidence must say it the same way round; a
  sentence without a negation that contradicts a negative evidence line fails its statement instead;
- one **stock** claim for a stated stock state ("is sold out"): the product's own stock lines must give it;
- one **absence** for "the shop does not have / offer X": the evidence must say so;
- one **not recorded** for "the shop has not recorded X" (otherwise not a claim): false when the extractive answerer
  found an answer the engine sent instead (`Trace.fallback == "not_recorded_refuted"`).

These are the checks the grounding guard applies (`ask_engine.guard.claims`, `ask_engine.guard.faithfulness`); the
eval applies them to the raw model draft and to the answer sent, so a run shows how many unsupported claims the guard
kept from the buyer and how many still got through. Other refusals and fixed phrases are not claims.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from ask_engine.guard.bindings import stock_states, unsupported_stock
from ask_engine.guard.claims import check_claims, is_not_recorded, list_items, names, negated_thing, unlisted_item
from ask_engine.guard.faithfulness import FaithfulnessResult, FaithfulnessScorer, SentenceSupport
from ask_engine.guard.figures import _hard_items
from ask_engine.guard.words import _attributable, _negation_scopes, content_words

__all__ = ["Claim", "answer_claims", "claims_json", "sentence_claims"]

ClaimKind = Literal["statement", "item", "number", "name", "negation", "absence", "stock", "not_recorded"]


@dataclass(frozen=True)
class Claim:
    """One claim of one answer sentence and whether the evidence supports it."""

    sentence: str
    kind: ClaimKind
    text: str
    supported: bool


def _lines(evidence: Sequence[str]) -> list[set[str]]:
    return [content_words(line) for text in evidence for line in re.split(r"\n|(?<=[.!?])\s+", text) if line.strip()]


def sentence_claims(support: SentenceSupport, evidence: Sequence[str], scorer: FaithfulnessScorer) -> list[Claim]:
    """The claims of one scored sentence; `evidence` is what the sentence may draw on (its attributable passages)."""
    sentence = support.sentence
    if support.kind != "claim":
        return []
    missing = set(support.missing_tokens)
    check = check_claims(sentence, evidence)
    claims: list[Claim] = []

    items = [item for item in list_items(sentence) if content_words(item)]
    wrong_item = unlisted_item(items, evidence)
    evidence_words: set[str] = set()
    for text in evidence:
        evidence_words |= content_words(text)
    for item in items:
        ok = content_words(item) <= evidence_words and item != wrong_item
        claims.append(Claim(sentence, "item", item, ok))

    stated = stock_states(sentence)
    if stated:
        claims.append(
            Claim(sentence, "stock", ", ".join(sorted(stated)), unsupported_stock(sentence, evidence) is None)
        )

    numbers = {h.text for h in _hard_items(sentence)}
    for number in sorted(numbers):
        claims.append(Claim(sentence, "number", number, number not in missing))

    lines = _lines(evidence)
    given = names(sentence)
    for name in given:
        words = content_words(name)
        ok = not words or any(words <= line for line in lines)
        claims.append(Claim(sentence, "name", name, ok))

    # said the other way round, or a negation of what the evidence never mentions ("is not reef safe")
    polarity = "negation" in missing or (
        check.verdict == "unsupported" and (check.detail == "polarity" or check.detail.startswith("negation"))
    )
    thing = negated_thing(sentence)
    scopes = [scope for scope in _negation_scopes(sentence) if scope]
    if thing is not None:
        claims.append(Claim(sentence, "absence", thing, check.verdict != "negative_unsupported"))
    else:
        for scope in scopes:
            claims.append(Claim(sentence, "negation", " ".join(sorted(scope)), not polarity))

    # what is left for the statement: the overlap bar, clauses, and single-word names not counted as a name claim
    inside_names = " ".join(given).lower()
    rest = [
        m
        for m in missing
        if m not in numbers and m != "negation" and (m.startswith("clause:") or m.lower() not in inside_names)
    ]
    if thing is not None:
        return claims  # "the shop does not have X" states nothing beside its absence claim
    # an unsupported item or name is one claim, not also the statement's: the statement is judged without it
    wrong = [c.text for c in claims if not c.supported and c.kind in ("item", "name")]
    if wrong:
        reduced = sentence
        for text in wrong:
            reduced = re.sub(re.escape(text), " ", reduced, flags=re.IGNORECASE)
        support = scorer.support(re.sub(r"\s+", " ", reduced).strip(), evidence)
    lexical = support.precision >= scorer.min_precision
    semantic = (
        scorer.embedder is not None
        and support.similarity >= scorer.min_similarity
        and support.precision >= scorer.paraphrase_precision
    )
    statement_ok = (lexical or semantic) and not rest and not (polarity and not scopes)
    claims.insert(0, Claim(sentence, "statement", sentence, statement_ok))
    return claims


def answer_claims(
    faith: FaithfulnessResult,
    evidence: Sequence[str],
    subjects: Sequence[str] | None,
    scorer: FaithfulnessScorer,
    *,
    not_recorded_refuted: bool = False,
) -> list[Claim]:
    """Every claim of a scored answer, each sentence checked against the passages it may draw on (a sentence
    naming one product only that product's and the non-product passages, as in the guard).

    `not_recorded_refuted`: the engine found an answer where this answer says the shop has not recorded one.
    """
    out: list[Claim] = []
    for support in faith.sentences:
        sentence = support.sentence
        if support.kind != "claim":
            if is_not_recorded(sentence) and check_claims(sentence, ()).verdict == "not_recorded":
                out.append(Claim(sentence, "not_recorded", sentence, not not_recorded_refuted))
            continue
        out += sentence_claims(support, _attributable(sentence, evidence, subjects), scorer)
    return out


def claims_json(claims: Sequence[Claim]) -> list[dict[str, Any]]:
    return [asdict(c) for c in claims]
