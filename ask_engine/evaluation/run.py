"""Running an eval: every case (and follow-up) through the public Engine per retrieval mode, and `ask-engine eval`."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ask_engine.errors import AskEngineError
from ask_engine.evaluation.cases import MODES, Case, CaseError, Mode, load_cases
from ask_engine.evaluation.judge import judge_run
from ask_engine.evaluation.metrics import score_turn, summarize
from ask_engine.evaluation.report import _THRESHOLDS, _fmt, print_summary, write_report
from ask_engine.evaluation.results import EvalRun, TurnResult
from ask_engine.faithfulness import FaithfulnessScorer, passage_subject

if TYPE_CHECKING:
    from ask_engine.config import Settings
    from ask_engine.engine import Engine


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
            result.resolved = list(dict.fromkeys([*trace.resolution.doc_ids, *trace.resolution.mentioned_doc_ids]))
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
