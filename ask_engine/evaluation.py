"""Eval harness: load JSONL cases, run them through the public Engine, score them, and write the report.

Metrics (defined in eval/README.md): faithfulness (refusals scored by answerability), abstention
precision/recall/F1, fact recall, must-not violations, link and message precision/recall, retrieval recall@k and MRR
over expected evidence documents, latency p50/p95, overall and per category, for hybrid, dense-only and BM25-only
retrieval. An optional LLM judge (`--judge`) verifies extracted claims through the configured OpenAI-compatible
server; it is never needed by the tests.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from ask_engine.errors import AskEngineError
from ask_engine.faithfulness import FaithfulnessResult, FaithfulnessScorer, passage_subject

if TYPE_CHECKING:
    from ask_engine.config import Settings
    from ask_engine.engine import Engine

Mode = Literal["hybrid", "dense", "lexical"]
MODES: tuple[Mode, ...] = ("hybrid", "dense", "lexical")
CATEGORIES = (
    "policy",
    "product_attribute",
    "not_recorded",
    "ids",
    "shipping_country",
    "operation",
    "disclosure",
    "off_topic",
    "injection",
    "unknown_id",
    "followup",
    "empty",
)
RECALL_AT = (1, 3, 6)


class CaseError(AskEngineError):
    """A case file line is malformed; the message names the file and line."""


# --------------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """An expected or forbidden text: a plain string (case-insensitive, whitespace-normalised) or `/regex/flags`."""

    source: str
    regex: re.Pattern[str]

    @classmethod
    def parse(cls, raw: str) -> Pattern:
        match = re.fullmatch(r"/(.*)/([a-z]*)", raw, flags=re.DOTALL)
        if match:
            flags = 0
            for letter in match.group(2):
                if letter not in "ims":
                    raise ValueError(f"unsupported regex flag {letter!r} in {raw!r} (use i, m or s)")
                flags |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}[letter]
            try:
                return cls(raw, re.compile(match.group(1), flags))
            except re.error as exc:
                raise ValueError(f"invalid regex {raw!r}: {exc}") from None
        words = [re.escape(w) for w in _normalise(raw).split()]
        if not words:
            raise ValueError("an expected text must not be empty")
        return cls(raw, re.compile(r"\s+".join(words), re.IGNORECASE))

    def found_in(self, text: str) -> bool:
        return bool(self.regex.search(_normalise(text)))


def _normalise(text: str) -> str:
    """Typographic variants read the same: curly quotes, dashes, non-breaking spaces."""
    return (
        text.replace("’", "'")
        .replace("‘", "'")
        .replace("“", '"')
        .replace("”", '"')
        .replace("\u2013", "-")
        .replace("\u2014", "-")
        .replace("\u00a0", " ")
        .replace("\u202f", " ")
    )


@dataclass(frozen=True)
class LinkExpect:
    type: str
    id: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class MessageExpect:
    type: str
    code: str


@dataclass(frozen=True)
class Expect:
    answerable: bool
    facts: tuple[Pattern, ...] = ()
    must_not: tuple[Pattern, ...] = ()
    links: tuple[LinkExpect, ...] | None = None  # None: links are not checked for this turn
    messages: tuple[MessageExpect, ...] | None = None  # None: messages are not checked for this turn
    evidence: tuple[str, ...] = ()  # document ids that should be among the evidence
    # answer-carries-evidence alternatives (product-QA cases): the answer must carry every text of one of them
    evidence_any: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class FollowUp:
    query: str
    expect: Expect
    ids: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    query: str
    expect: Expect
    ids: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)
    followups: tuple[FollowUp, ...] = ()
    note: str = ""
    line: int = 0

    def turns(self) -> list[tuple[str, tuple[str, ...], dict[str, Any], Expect]]:
        first = [(self.query, self.ids, self.context, self.expect)]
        return first + [(f.query, f.ids, f.context, f.expect) for f in self.followups]


_CASE_KEYS = {"id", "category", "query", "ids", "context", "expect", "followups", "note"}
_EXPECT_KEYS = {"answerable", "facts", "must_not", "links", "messages", "evidence", "evidence_any"}
_FOLLOWUP_KEYS = {"query", "expect", "ids", "context"}


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of strings")
    return tuple(value)


def _parse_expect(raw: Any, where: str) -> Expect:
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be an object")
    unknown = set(raw) - _EXPECT_KEYS
    if unknown:
        raise ValueError(f"{where} has unknown field(s) {sorted(unknown)}; allowed: {sorted(_EXPECT_KEYS)}")
    if not isinstance(raw.get("answerable"), bool):
        raise ValueError(f"{where}.answerable must be true or false")
    links: tuple[LinkExpect, ...] | None = None
    if "links" in raw:
        if not isinstance(raw["links"], list):
            raise ValueError(f"{where}.links must be a list")
        items = []
        for n, link in enumerate(raw["links"]):
            if not isinstance(link, dict) or not isinstance(link.get("type"), str) or set(link) - {"type", "id", "url"}:
                raise ValueError(f"{where}.links[{n}] must be {{type, id?, url?}}")
            items.append(LinkExpect(link["type"], link.get("id"), link.get("url")))
        links = tuple(items)
    messages: tuple[MessageExpect, ...] | None = None
    if "messages" in raw:
        if not isinstance(raw["messages"], list):
            raise ValueError(f"{where}.messages must be a list")
        found = []
        for n, message in enumerate(raw["messages"]):
            if (
                not isinstance(message, dict)
                or set(message) != {"type", "code"}
                or message["type"] not in ("info", "warning", "error")
                or not isinstance(message["code"], str)
            ):
                raise ValueError(f"{where}.messages[{n}] must be {{type: info|warning|error, code}}")
            found.append(MessageExpect(message["type"], message["code"]))
        messages = tuple(found)
    return Expect(
        answerable=raw["answerable"],
        facts=tuple(Pattern.parse(s) for s in _strings(raw.get("facts", []), f"{where}.facts")),
        must_not=tuple(Pattern.parse(s) for s in _strings(raw.get("must_not", []), f"{where}.must_not")),
        links=links,
        messages=messages,
        evidence=_strings(raw.get("evidence", []), f"{where}.evidence"),
        evidence_any=_alternatives(raw.get("evidence_any", []), f"{where}.evidence_any"),
    )


def _alternatives(value: Any, where: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list) or not all(isinstance(g, list) for g in value):
        raise ValueError(f"{where} must be a list of lists of strings")
    return tuple(_strings(g, f"{where}[{n}]") for n, g in enumerate(value))


def parse_case(raw: Any, line: int = 0) -> Case:
    """Validate one case object (a parsed JSONL line); raises ValueError saying what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError("a case must be a JSON object")
    unknown = set(raw) - _CASE_KEYS
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(_CASE_KEYS)}")
    for key in ("id", "category"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"{key} must be a non-empty string")
    if not isinstance(raw.get("query"), str):
        raise ValueError("query must be a string (it may be empty)")
    if "expect" not in raw:
        raise ValueError("expect is required")
    context = raw.get("context", {})
    if not isinstance(context, dict):
        raise ValueError("context must be an object")
    followups = []
    for n, item in enumerate(raw.get("followups", [])):
        where = f"followups[{n}]"
        if not isinstance(item, dict) or set(item) - _FOLLOWUP_KEYS or not isinstance(item.get("query"), str):
            raise ValueError(f"{where} must be {{query, expect, ids?, context?}}")
        followups.append(
            FollowUp(
                query=item["query"],
                expect=_parse_expect(item.get("expect"), f"{where}.expect"),
                ids=_strings(item.get("ids", []), f"{where}.ids"),
                context=dict(item.get("context", {})),
            )
        )
    return Case(
        id=raw["id"],
        category=raw["category"],
        query=raw["query"],
        expect=_parse_expect(raw["expect"], "expect"),
        ids=_strings(raw.get("ids", []), "ids"),
        context=context,
        followups=tuple(followups),
        note=str(raw.get("note", "")),
        line=line,
    )


def load_cases(path: str | Path) -> list[Case]:
    """Read and validate a JSONL case file; a bad line raises CaseError naming the file and line number."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise CaseError(f"{path}: cannot read: {exc.strerror or exc}") from None
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            case = parse_case(json.loads(line), number)
        except json.JSONDecodeError as exc:
            raise CaseError(f"{path}:{number}: invalid JSON: {exc.msg} (column {exc.colno})") from None
        except ValueError as exc:
            raise CaseError(f"{path}:{number}: {exc}") from None
        if case.id in seen:
            raise CaseError(f"{path}:{number}: duplicate case id {case.id!r} (first on line {seen[case.id]})")
        seen[case.id] = number
        cases.append(case)
    if not cases:
        raise CaseError(f"{path}: no cases")
    return cases


# --------------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------------


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
    if raw_answer is not None:
        result.raw_answer = raw_answer
        result.faithfulness_raw = faithfulness_value(
            scorer.score(raw_answer, evidence_texts, subjects), expect.answerable
        )

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


def _document_texts(engine: Engine, evidence: Sequence[Any]) -> tuple[list[str], list[str]]:
    """The evidence texts and the other passages of the same documents, with each one's subject (see guard)."""
    texts = [ev.passage.text for ev in evidence]
    subjects = [passage_subject(ev.passage) for ev in evidence]
    seen = {ev.passage.id for ev in evidence}
    passages_of = getattr(engine.index, "passages_of", None)
    if passages_of is None:
        return texts, subjects
    for doc_id in dict.fromkeys(ev.passage.doc_id for ev in evidence):
        for passage in passages_of(doc_id):
            if passage.id not in seen:
                seen.add(passage.id)
                texts.append(passage.text)
                subjects.append(passage_subject(passage))
    return texts, subjects


def run_eval(
    engine: Engine,
    cases: Sequence[Case],
    *,
    retrieval: Mode = "hybrid",
    scorer: FaithfulnessScorer | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EvalRun:
    """Ask every case (and its follow-ups, in one conversation) through `engine.ask_traced`, and score the answers.

    The generator's draft before the guards is scored too ("faithfulness_raw") when the generator is not the
    extractive one, so a run shows what the grounding guard removed. Open a second engine with
    `settings.grounding_guard=False` to measure an unguarded run end to end.
    """
    scorer = scorer or FaithfulnessScorer(engine.embedder)
    generator = str(getattr(engine.generator, "name", "extractive"))
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    turns: list[TurnResult] = []
    notes: list[str] = []
    has_store = getattr(engine, "store", None) is not None
    for n, case in enumerate(cases):
        conversation: str | None = None
        for turn, (query, ids, context, expect) in enumerate(case.turns()):
            request: dict[str, Any] = {"query": query}
            if ids:
                request["ids"] = list(ids)
            if context:
                request["context"] = dict(context)
            if conversation:
                request["conversation"] = {"id": conversation}
            result = TurnResult(
                case_id=case.id,
                category=case.category,
                turn=turn,
                query=query,
                ids=list(ids),
                context=dict(context),
                answerable=expect.answerable,
            )
            if turn > 0 and not has_store:
                result.error = "follow-up not run: the engine has no conversation store"
                notes.append(f"{case.id}: follow-ups need a conversation store")
                turns.append(result)
                continue
            raw_answer: str | None = None
            start = time.perf_counter()
            try:
                response, trace = engine.ask_traced(request, asker=f"eval:{case.id}", retrieval=retrieval)
            except AskEngineError as exc:
                result.latency_ms = (time.perf_counter() - start) * 1000
                result.error = f"{type(exc).__name__}: {exc}"
                turns.append(score_turn(result, expect, scorer))
                break
            result.latency_ms = (time.perf_counter() - start) * 1000
            data = response.to_json()
            result.answer = data["answer"].get("plain", "")
            result.markdown = data["answer"].get("markdown", "") or ""
            result.links = list(data.get("links", []))
            result.messages = list(data.get("messages", []))
            result.evidence = [
                {
                    "number": ev.number,
                    "doc_id": ev.passage.doc_id,
                    "passage_id": ev.passage.id,
                    "title": ev.passage.title,
                    "text": ev.passage.text,
                    "score": round(float(ev.score), 4),
                }
                for ev in trace.evidence
            ]
            result.evidence_docs = list(dict.fromkeys(ev.passage.doc_id for ev in trace.evidence))
            result.support_texts, result.support_subjects = _document_texts(engine, trace.evidence)
            result.timings_ms = {k: round(v, 2) for k, v in trace.timings_ms.items()}
            result.fallback = trace.fallback
            result.draft_kind = trace.draft.kind if trace.draft else None
            if generator != "extractive" and trace.raw_draft is not None:
                raw_answer = trace.raw_draft.plain
            turns.append(score_turn(result, expect, scorer, raw_answer=raw_answer))
            conversation = (data.get("conversation") or {}).get("id") or conversation
        if progress:
            progress(n + 1, len(cases))
    return EvalRun(
        mode=retrieval,
        turns=turns,
        cases=len(cases),
        started_at=started,
        seconds=round(time.perf_counter() - t0, 2),
        generator=generator,
        grounding_guard=bool(engine.settings.grounding_guard),
        retrieval_k=int(engine.settings.retrieval_k),
        index_version=str(getattr(engine, "version", "")),
        notes=sorted(set(notes)),
    )


# --------------------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------------
# Optional LLM judge (claim extraction + verification through an OpenAI-compatible server)
# --------------------------------------------------------------------------------------------------

_JUDGE_PROMPT = """You check whether an answer is supported by the shop's evidence.
1. Split the ANSWER into atomic factual claims (ignore statements that the shop has not recorded something).
2. For each claim decide whether the EVIDENCE supports it: "supported" or "unsupported".
Reply with JSON only: {"claims": [{"claim": "...", "verdict": "supported" | "unsupported"}]}

EVIDENCE:
<<<
%s
>>>

ANSWER:
<<<
%s
>>>"""


def judge_run(run: EvalRun, settings: Settings) -> dict[str, Any]:
    """RAGAS-style faithfulness by an LLM: supported claims / claims per turn. Never raises; says why it did not run."""
    if not settings.llm_base_url:
        return {"ran": False, "reason": "no LLM server configured (llm_base_url / ASK_ENGINE_LLM_BASE_URL)"}
    try:
        from openai import OpenAI
    except ImportError:
        return {"ran": False, "reason": "the openai package is not installed"}
    client = OpenAI(base_url=settings.llm_base_url, api_key=settings.llm_api_key, timeout=settings.llm_timeout_s)
    scores: list[float] = []
    failures = 0
    for t in run.turns:
        if not t.answer or not t.evidence:
            continue
        evidence = "\n\n".join(f"[{e['number']}] {e['text']}" for e in t.evidence)
        try:
            reply = client.chat.completions.create(
                model=settings.llm_model,
                messages=[{"role": "user", "content": _JUDGE_PROMPT % (evidence, t.answer)}],
                temperature=0,
                max_tokens=600,
            )
            text = reply.choices[0].message.content or ""
            data = json.loads(text[text.index("{") : text.rindex("}") + 1])
            claims = [c for c in data.get("claims", []) if isinstance(c, dict)]
        except Exception as exc:  # a judge failure is reported, never fatal: the judge is optional
            failures += 1
            t.judge = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        supported = sum(1 for c in claims if str(c.get("verdict", "")).lower() == "supported")
        t.judge = {"claims": claims, "score": (supported / len(claims)) if claims else None}
        if claims:
            scores.append(supported / len(claims))
    return {
        "ran": True,
        "model": settings.llm_model,
        "turns_judged": len(scores),
        "failures": failures,
        "faithfulness": round(statistics.fmean(scores), 4) if scores else None,
    }


# --------------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------------

_HEADLINE = (
    ("faithfulness", "Faithfulness"),
    ("faithfulness_raw", "Faithfulness (raw draft)"),
    ("abstention_precision", "Abstention precision"),
    ("abstention_recall", "Abstention recall"),
    ("abstention_f1", "Abstention F1"),
    ("fact_recall", "Fact recall"),
    ("must_not_violations", "Must-not violations"),
    ("link_precision", "Link precision"),
    ("link_recall", "Link recall"),
    ("message_precision", "Message precision"),
    ("message_recall", "Message recall"),
    ("recall@1", "Evidence recall@1"),
    ("recall@3", "Evidence recall@3"),
    ("recall@6", "Evidence recall@6"),
    ("mrr", "Evidence MRR"),
    ("latency_p50_ms", "Latency p50 (ms)"),
    ("latency_p95_ms", "Latency p95 (ms)"),
)


def _histogram(values: Sequence[float], bins: int = 12) -> list[dict[str, float]]:
    if not values:
        return []
    lo, hi = min(values), max(values)
    width = (hi - lo) / bins or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / width), bins - 1)] += 1
    return [
        {"start": round(lo + i * width, 1), "end": round(lo + (i + 1) * width, 1), "count": c}
        for i, c in enumerate(counts)
    ]


def _turn_json(t: TurnResult) -> dict[str, Any]:
    data = asdict(t)
    data.pop("support_texts", None)
    data.pop("support_subjects", None)
    data["failures"] = t.failures
    return data


def write_report(
    summary: dict[str, Any],
    runs_by_mode: dict[str, EvalRun],
    out_dir: str | Path,
    *,
    judge: dict[str, Any] | None = None,
) -> None:
    """Write report.json and a self-contained report.html (inline CSS and SVG, no external assets)."""
    import jinja2

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    main = runs_by_mode.get(summary["mode"]) or next(iter(runs_by_mode.values()))
    baselines = {mode: summarize(run) for mode, run in runs_by_mode.items()}
    report = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "summary": summary,
        "baselines": {mode: {"overall": s["overall"], "seconds": s["seconds"]} for mode, s in baselines.items()},
        "judge": judge or {"ran": False, "reason": "not requested (--judge)"},
        "turns": [_turn_json(t) for t in main.turns],
    }
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ask_engine", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("report.html.j2")
    failing = [t for t in main.turns if t.failures]
    html = template.render(
        report=report,
        summary=summary,
        headline=[(key, label, summary["overall"].get(key)) for key, label in _HEADLINE],
        baselines=baselines,
        histogram=_histogram([t.latency_ms for t in main.turns if t.latency_ms]),
        failing=failing,
        categories=summary["by_category"],
    )
    (out / "report.html").write_text(html, "utf-8")


# --------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------

_THRESHOLDS = (
    ("min_faithfulness", "faithfulness"),
    ("min_fact_recall", "fact_recall"),
    ("min_abstention_f1", "abstention_f1"),
    ("min_link_recall", "link_recall"),
    ("min_message_recall", "message_recall"),
    ("min_recall_at_k", "recall@6"),
)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if value <= 1.0 else f"{value:.1f}"
    return str(value)


def print_summary(summary: dict[str, Any], baselines: dict[str, dict[str, Any]], write: Callable[[str], Any]) -> None:
    """A rich table of the overall and per-category metrics, and the retrieval baselines."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=sys.stdout, width=160)
    overall = summary["overall"]
    table = Table(title=f"ask-engine eval: {summary['cases']} cases, {overall['turns']} turns ({summary['mode']})")
    columns = (
        "faithfulness",
        "abstention_f1",
        "fact_recall",
        "must_not_violations",
        "link_recall",
        "link_precision",
        "message_recall",
        "message_precision",
        "recall@6",
        "mrr",
        "latency_p50_ms",
        "passed",
    )
    labels = {
        "faithfulness": "faith",
        "abstention_f1": "abst F1",
        "fact_recall": "facts",
        "must_not_violations": "must-not",
        "link_recall": "link R",
        "link_precision": "link P",
        "message_recall": "msg R",
        "message_precision": "msg P",
        "recall@6": "R@6",
        "mrr": "MRR",
        "latency_p50_ms": "p50 ms",
        "passed": "passed",
    }
    table.add_column("category")
    table.add_column("turns", justify="right")
    for column in columns:
        table.add_column(labels[column], justify="right")
    for name, m in [*summary["by_category"].items(), ("ALL", overall)]:
        table.add_row(
            name, str(m["turns"]), *(_fmt(m.get(c)) for c in columns), style="bold" if name == "ALL" else None
        )
    console.print(table)
    if len(baselines) > 1:
        base = Table(title="Retrieval baselines")
        base.add_column("retrieval")
        # No latency column: later runs reuse the embedder's query cache, so their timings are not comparable.
        base_columns = ("recall@1", "recall@3", "recall@6", "mrr", "fact_recall", "faithfulness", "abstention_f1")
        for column in base_columns:
            base.add_column(column, justify="right")
        for mode, s in baselines.items():
            m = s["overall"]
            base.add_row(mode, *(_fmt(m.get(c)) for c in base_columns))
        console.print(base)
    if overall.get("faithfulness_raw") is not None:
        write(f"faithfulness: raw draft {overall['faithfulness_raw']:.3f} → sent answer {overall['faithfulness']:.3f}")


def _open_engine(args: argparse.Namespace, settings: Settings, store_dir: Path) -> Engine:
    from ask_engine.engine import Engine

    store = None
    try:
        from ask_engine.conversations import SqliteStore

        store = SqliteStore(store_dir / "eval.sqlite3")
    except ImportError:  # conversations not available: follow-ups are reported as not run
        store = None
    return Engine.open(args.index, settings, store=store)


def cli_eval(args: argparse.Namespace) -> int:
    """`ask-engine eval`: 0 when every threshold holds, 1 when one fails, 2 on bad input."""
    from ask_engine.config import Settings

    try:
        cases = load_cases(args.cases)
    except CaseError as exc:
        print(f"ask-engine eval: {exc}", file=sys.stderr)
        return 2
    if args.category:
        cases = [c for c in cases if c.category in set(args.category)]
    if args.limit is not None:
        cases = cases[: max(args.limit, 0)]
    if not cases:
        print("ask-engine eval: no cases left after --category/--limit", file=sys.stderr)
        return 2
    overrides: dict[str, Any] = {}
    if args.generator:
        overrides["generator"] = args.generator
    settings = Settings.load(args.config, **overrides)
    modes: list[Mode] = ["hybrid"] if args.no_baselines else list(MODES)
    runs: dict[str, EvalRun] = {}
    with tempfile.TemporaryDirectory(prefix="ask-engine-eval-") as tmp:
        engine = _open_engine(args, settings, Path(tmp))
        try:
            scorer = FaithfulnessScorer(engine.embedder)
            for mode in modes:
                print(f"running {len(cases)} cases with {mode} retrieval ...", file=sys.stderr)
                runs[mode] = run_eval(engine, cases, retrieval=mode, scorer=scorer)
            pqa_figures = None
            if any(c.category == "pqa" for c in cases):
                from ask_engine.pqa import eval_figures

                pqa_figures = eval_figures(engine, cases, runs["hybrid"])
        finally:
            engine.close()
            close = getattr(engine.store, "close", None)
            if callable(close):
                close()
    summary = summarize(runs["hybrid"])
    if pqa_figures is not None:
        summary["pqa"] = pqa_figures
    judge = judge_run(runs["hybrid"], settings) if getattr(args, "judge", False) else None
    baselines = {mode: summarize(run) for mode, run in runs.items()}
    print_summary(summary, baselines, print)
    if "pqa" in summary:
        print("product-QA (answer carries the labelled evidence; same-run cosine baseline at its best threshold):")
        print(json.dumps(summary["pqa"], indent=1))
    if judge is not None:
        print(f"LLM judge: {json.dumps(judge)}")
    if args.report:
        write_report(summary, runs, args.report, judge=judge)
        print(f"report: {Path(args.report) / 'report.html'}")
    failed = False
    for option, metric in _THRESHOLDS:
        threshold = getattr(args, option, None)
        if threshold is None:
            continue
        value = summary["overall"].get(metric)
        if value is None or value < threshold:
            print(f"FAIL: {metric} {_fmt(value)} < {threshold}", file=sys.stderr)
            failed = True
    return 1 if failed else 0
