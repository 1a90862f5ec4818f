"""What an eval measures: one turn's answer and its scores (`TurnResult`), one pass over a case set (`EvalRun`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class TurnResult:
    """One question of a case (the first, or a follow-up) and everything measured about its answer."""

    case_id: str
    category: str
    turn: int
    query: str
    ids: list[str]
    context: dict[str, Any]
    answerable: bool
    answer: str = ""
    markdown: str = ""
    links: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)  # {number, doc_id, passage_id, title, text}
    evidence_docs: list[str] = field(default_factory=list)  # unique doc ids in evidence order
    resolved: list[str] = field(default_factory=list)  # doc ids the request's ids or the conversation named
    # What faithfulness is scored against: the evidence passages, then the other passages of the same documents
    # (a generator may state a recorded fact of a retrieved product from its fact sheet, not the retrieved passage).
    support_texts: list[str] = field(default_factory=list, repr=False)
    support_subjects: list[str] = field(default_factory=list, repr=False)  # product title per text, "" otherwise
    latency_ms: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)
    fallback: str | None = None
    draft_kind: str | None = None
    error: str | None = None
    # scores
    faithfulness: float = 0.0
    faithfulness_raw: float | None = None  # the generator's draft before the guards (LLM generators only)
    raw_answer: str | None = None
    sentences: list[dict[str, Any]] = field(default_factory=list)
    # claims (ask_engine.evaluation.claim_score): how many the sent answer makes, and the unsupported ones
    claims: int = 0
    unsupported_claims: list[dict[str, Any]] = field(default_factory=list)
    raw_claims: int | None = None  # the same for the generator's draft before the guards (LLM generators only)
    raw_unsupported_claims: list[dict[str, Any]] = field(default_factory=list)
    abstained: bool = False
    facts_expected: int = 0
    facts_found: list[str] = field(default_factory=list)
    facts_missing: list[str] = field(default_factory=list)
    must_not_hits: list[str] = field(default_factory=list)
    links_checked: bool = False
    links_expected: int = 0
    links_matched: int = 0  # expected links found
    links_correct: int = 0  # returned links that match an expectation
    links_missing: list[dict[str, Any]] = field(default_factory=list)
    messages_checked: bool = False
    messages_expected: int = 0
    messages_matched: int = 0
    messages_correct: int = 0
    messages_missing: list[dict[str, str]] = field(default_factory=list)
    expected_evidence: list[str] = field(default_factory=list)
    evidence_rank: int | None = None  # 1-based rank of the first expected document among the evidence
    evidence_found: dict[str, int] = field(default_factory=dict)  # expected doc -> rank
    evidence_hit: bool | None = None  # product-QA cases: the answer carries the labelled evidence
    judge: dict[str, Any] | None = None

    @property
    def failures(self) -> list[str]:
        """Why this turn failed (empty when it passed every check)."""
        reasons = []
        if self.error:
            reasons.append(f"error: {self.error}")
        if self.faithfulness < 1.0:
            reasons.append(f"faithfulness {self.faithfulness:.2f}")
        if self.abstained == self.answerable:
            reasons.append(
                "abstained on an answerable question" if self.abstained else "answered an unanswerable question"
            )
        if self.facts_missing:
            reasons.append(f"missing facts: {self.facts_missing}")
        if self.must_not_hits:
            reasons.append(f"forbidden text: {self.must_not_hits}")
        if self.links_checked and (self.links_matched < self.links_expected or self.links_correct < len(self.links)):
            reasons.append(
                f"links {self.links_matched}/{self.links_expected} expected, {self.links_correct}/{len(self.links)} correct"
            )
        if self.messages_checked and (
            self.messages_matched < self.messages_expected or self.messages_correct < len(self.messages)
        ):
            reasons.append(
                f"messages {self.messages_matched}/{self.messages_expected} expected, "
                f"{self.messages_correct}/{len(self.messages)} correct"
            )
        if self.expected_evidence and len(self.evidence_found) < len(self.expected_evidence):
            reasons.append("expected evidence not retrieved")
        return reasons


@dataclass
class EvalRun:
    """The results of one pass over a case set with one retrieval mode."""

    mode: str
    turns: list[TurnResult]
    cases: int
    started_at: str
    seconds: float
    generator: str = "extractive"
    grounding_guard: bool = True
    retrieval_k: int = 6
    index_version: str = ""
    notes: list[str] = field(default_factory=list)
