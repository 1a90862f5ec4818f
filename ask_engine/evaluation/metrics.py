"""Scoring one turn against its case's expectations, and the metrics over many turns (defined in eval/README.md)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ask_engine.evaluation.cases import Expect, LinkExpect
from ask_engine.evaluation.claim_score import answer_claims, claims_json
from ask_engine.evaluation.results import EvalRun, TurnResult
from ask_engine.faithfulness import FaithfulnessResult, FaithfulnessScorer

RECALL_AT = (1, 3, 6)


def _url_key(url: str) -> str:
    """A URL without its fragment, query, trailing slash or case differences in scheme and host."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), "", ""))


def _link_matches(expected: LinkExpect, actual: dict[str, Any]) -> bool:
    if actual.get("type") != expected.type:
        return False
    if expected.id is not None and actual.get("id") != expected.id:
        return False
    return expected.url is None or _url_key(str(actual.get("url", ""))) == _url_key(expected.url)


def score_turn(
    result: TurnResult,
    expect: Expect,
    scorer: FaithfulnessScorer,
    *,
    raw_answer: str | None = None,
) -> TurnResult:
    """Fill in every score of `result` from its answer, links, messages and evidence."""
    evidence_texts = result.support_texts or [e["text"] for e in result.evidence]
    subjects = result.support_subjects if result.support_texts else None
    faith = scorer.score(result.answer, evidence_texts, subjects)
    result.sentences = [
        {
            "sentence": s.sentence,
            "kind": s.kind,
            "supported": s.supported,
            "precision": s.precision,
            "similarity": s.similarity,
            "missing": list(s.missing_tokens),
            "best_evidence": s.best_evidence,
            "evidence_number": (s.evidence_index + 1) if s.evidence_index is not None else None,
        }
        for s in faith.sentences
    ]
    result.abstained = abstained(faith)
    result.faithfulness = faithfulness_value(faith, expect.answerable)
    claims = answer_claims(faith, evidence_texts, subjects, scorer)
    result.claims = len(claims)
    result.unsupported_claims = claims_json([c for c in claims if not c.supported])
    if raw_answer is not None:
        result.raw_answer = raw_answer
        raw_faith = scorer.score(raw_answer, evidence_texts, subjects)
        result.faithfulness_raw = faithfulness_value(raw_faith, expect.answerable)
        refuted = result.fallback == "not_recorded_refuted"
        raw_claims = answer_claims(raw_faith, evidence_texts, subjects, scorer, not_recorded_refuted=refuted)
        result.raw_claims = len(raw_claims)
        result.raw_unsupported_claims = claims_json([c for c in raw_claims if not c.supported])

    text = f"{result.answer}\n{result.markdown}"
    result.facts_expected = len(expect.facts)
    result.facts_found = [p.source for p in expect.facts if p.found_in(text)]
    result.facts_missing = [p.source for p in expect.facts if not p.found_in(text)]
    result.must_not_hits = [p.source for p in expect.must_not if p.found_in(text)]

    if expect.links is not None:
        result.links_checked = True
        result.links_expected = len(expect.links)
        missing = [e for e in expect.links if not any(_link_matches(e, a) for a in result.links)]
        result.links_matched = len(expect.links) - len(missing)
        result.links_missing = [asdict(e) for e in missing]
        result.links_correct = sum(1 for a in result.links if any(_link_matches(e, a) for e in expect.links))
    if expect.messages is not None:
        result.messages_checked = True
        got = [(m.get("type"), m.get("code")) for m in result.messages]
        wanted = [(m.type, m.code) for m in expect.messages]
        result.messages_expected = len(wanted)
        result.messages_missing = [{"type": t, "code": c} for t, c in wanted if (t, c) not in got]
        result.messages_matched = len(wanted) - len(result.messages_missing)
        result.messages_correct = sum(1 for g in got if g in wanted)

    if expect.evidence_any:
        from ask_engine.answering.ranker import carries

        result.evidence_hit = not result.abstained and carries(result.answer, expect.evidence_any)
    result.expected_evidence = list(expect.evidence)
    ranks = {doc: n for n, doc in enumerate(result.evidence_docs, start=1)}
    result.evidence_found = {doc: ranks[doc] for doc in expect.evidence if doc in ranks}
    result.evidence_rank = min(result.evidence_found.values()) if result.evidence_found else None
    return result


def abstained(faith: FaithfulnessResult) -> bool:
    """The answer abstains: it makes no claim, or one of its sentences says the shop has no answer."""
    return not faith.claims or faith.abstains


def faithfulness_value(faith: FaithfulnessResult, answerable: bool) -> float:
    """Supported claims / claims; an answer without claims (a refusal) scores 1 only when the case is unanswerable."""
    if not faith.claims:
        return 0.0 if answerable else 1.0
    return faith.score


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 4) if den else None


def _f1(p: float | None, r: float | None) -> float | None:
    if p is None or r is None:
        return None
    return round(2 * p * r / (p + r), 4) if p + r else 0.0


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) by linear interpolation between closest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo), 2)


def claim_figures(turns: Sequence[TurnResult]) -> dict[str, Any]:
    """Unsupported claims (ask_engine.evaluation.claim_score) per answer and as a share of all claims: "raw" over
    the generator's drafts before the guard (turns with a draft), "sent" over the answers sent (turns with one)."""

    def block(answers: int, claims: int, unsupported: int) -> dict[str, Any]:
        return {
            "answers": answers,
            "claims": claims,
            "unsupported": unsupported,
            "unsupported_per_answer": _ratio(unsupported, answers),
            "unsupported_share": _ratio(unsupported, claims),
        }

    drafted = [t for t in turns if t.raw_claims is not None]
    sent = [t for t in turns if t.answer]
    out: dict[str, Any] = {
        "sent": block(len(sent), sum(t.claims for t in sent), sum(len(t.unsupported_claims) for t in sent))
    }
    if drafted:
        out["raw"] = block(
            len(drafted),
            sum(t.raw_claims or 0 for t in drafted),
            sum(len(t.raw_unsupported_claims) for t in drafted),
        )
    return out


def answer_sources(turns: Sequence[TurnResult]) -> dict[str, int]:
    """Where each turn's answer came from: the configured generator ("generator"), the extractive answer it fell
    back to ("fallback"), or no draft at all ("none": the request asked nothing answerable, or nothing could answer)."""
    out = {"generator": 0, "fallback": 0, "none": 0}
    for t in turns:
        if t.draft_kind is None:
            out["none"] += 1
        else:
            out["fallback" if t.fallback else "generator"] += 1
    return out


def fallback_reasons(turns: Sequence[TurnResult]) -> dict[str, int]:
    """How many turns recorded each `Trace.fallback` reason, most frequent first (ties by name)."""
    counts: dict[str, int] = defaultdict(int)
    for t in turns:
        if t.fallback:
            counts[t.fallback] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def metrics(turns: Sequence[TurnResult]) -> dict[str, Any]:
    """Every metric over a set of turns (see eval/README.md for the definitions)."""
    n = len(turns)
    out: dict[str, Any] = {"turns": n}
    if not n:
        return out
    ran = [t for t in turns if not t.error or t.answer]
    out["errors"] = n - len(ran)
    out["faithfulness"] = round(statistics.fmean(t.faithfulness for t in turns), 4)
    raw = [t.faithfulness_raw for t in turns if t.faithfulness_raw is not None]
    out["faithfulness_raw"] = round(statistics.fmean(raw), 4) if raw else None
    claim_sentences = [s for t in turns for s in t.sentences if s["kind"] == "claim"]
    out["supported_sentences"] = _ratio(sum(s["supported"] for s in claim_sentences), len(claim_sentences))
    claims = claim_figures(turns)
    out["unsupported_claims_per_answer"] = claims["sent"]["unsupported_per_answer"]
    out["unsupported_claim_share"] = claims["sent"]["unsupported_share"]
    raw_claims = claims.get("raw") or {}
    out["unsupported_claims_per_answer_raw"] = raw_claims.get("unsupported_per_answer")
    out["unsupported_claim_share_raw"] = raw_claims.get("unsupported_share")
    out["claims"] = claims
    out["answered_by"] = answer_sources(turns)
    out["fallbacks"] = fallback_reasons(turns)

    should_abstain = [t for t in turns if not t.answerable]
    did_abstain = [t for t in turns if t.abstained]
    correct = sum(1 for t in did_abstain if not t.answerable)
    p, r = _ratio(correct, len(did_abstain)), _ratio(correct, len(should_abstain))
    out["abstention_precision"], out["abstention_recall"], out["abstention_f1"] = p, r, _f1(p, r)
    out["answered_answerable"] = _ratio(
        sum(1 for t in turns if t.answerable and not t.abstained), sum(1 for t in turns if t.answerable)
    )

    facts = sum(t.facts_expected for t in turns)
    out["fact_recall"] = _ratio(sum(len(t.facts_found) for t in turns), facts)
    out["must_not_violations"] = sum(1 for t in turns if t.must_not_hits)

    linked = [t for t in turns if t.links_checked]
    lp = _ratio(sum(t.links_correct for t in linked), sum(len(t.links) for t in linked))
    lr = _ratio(sum(t.links_matched for t in linked), sum(t.links_expected for t in linked))
    out["link_precision"], out["link_recall"] = lp, lr
    messaged = [t for t in turns if t.messages_checked]
    out["message_precision"] = _ratio(sum(t.messages_correct for t in messaged), sum(len(t.messages) for t in messaged))
    out["message_recall"] = _ratio(
        sum(t.messages_matched for t in messaged), sum(t.messages_expected for t in messaged)
    )

    with_evidence = [t for t in turns if t.expected_evidence]
    for k in RECALL_AT:
        out[f"recall@{k}"] = (
            round(
                statistics.fmean(
                    sum(1 for rank in t.evidence_found.values() if rank <= k) / len(t.expected_evidence)
                    for t in with_evidence
                ),
                4,
            )
            if with_evidence
            else None
        )
    out["mrr"] = (
        round(statistics.fmean((1 / t.evidence_rank) if t.evidence_rank else 0.0 for t in with_evidence), 4)
        if with_evidence
        else None
    )
    latencies = [t.latency_ms for t in ran]
    out["latency_p50_ms"] = percentile(latencies, 50)
    out["latency_p95_ms"] = percentile(latencies, 95)
    out["passed"] = sum(1 for t in turns if not t.failures)
    return out


def summarize(run: EvalRun) -> dict[str, Any]:
    """All metrics of a run, overall and per category, plus the failing turns."""
    by_category: dict[str, list[TurnResult]] = defaultdict(list)
    for t in run.turns:
        by_category[t.category].append(t)
    stages: dict[str, list[float]] = defaultdict(list)
    for t in run.turns:
        for stage, ms in t.timings_ms.items():
            stages[stage].append(ms)
    return {
        "mode": run.mode,
        "generator": run.generator,
        "grounding_guard": run.grounding_guard,
        "retrieval_k": run.retrieval_k,
        "index_version": run.index_version,
        "started_at": run.started_at,
        "seconds": run.seconds,
        "cases": run.cases,
        "overall": metrics(run.turns),
        "by_category": {c: metrics(ts) for c, ts in sorted(by_category.items())},
        "stage_p50_ms": {s: percentile(v, 50) for s, v in sorted(stages.items())},
        "failures": [
            {"case": t.case_id, "turn": t.turn, "category": t.category, "query": t.query, "reasons": t.failures}
            for t in run.turns
            if t.failures
        ],
        "notes": run.notes,
    }
