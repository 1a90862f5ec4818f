"""The eval harness: case validation, each metric on hand-made turns, a real smoke run, the report and the CLI."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ask_engine.evaluation import (
    CaseError,
    EvalRun,
    Pattern,
    TurnResult,
    cli_eval,
    load_cases,
    metrics,
    parse_case,
    percentile,
    run_eval,
    score_turn,
    summarize,
    write_report,
)
from ask_engine.faithfulness import FaithfulnessScorer

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "eval" / "smoke.jsonl"
FULL = ROOT / "eval" / "fjord-fell.jsonl"
EVIDENCE = {
    "number": 1,
    "doc_id": "policy:refund_policy",
    "passage_id": "policy:refund_policy#1",
    "title": "Refund Policy",
    "text": "Refund Policy — Returns window.\nYou can return full-price items within 30 days of delivery for a full refund.",
}


def _write(tmp_path: Path, *rows: Any) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", "utf-8")
    return path


def _case(**extra: Any) -> dict[str, Any]:
    return {"id": "c1", "category": "policy", "query": "q", "expect": {"answerable": True}} | extra


def _turn(answer: str, **fields: Any) -> TurnResult:
    base: dict[str, Any] = {
        "case_id": "c",
        "category": "policy",
        "turn": 0,
        "query": "q",
        "ids": [],
        "context": {},
        "answerable": True,
        "answer": answer,
        "evidence": [EVIDENCE],
        "evidence_docs": ["policy:refund_policy"],
        "latency_ms": 10.0,
    }
    return TurnResult(**(base | fields))


def _scored(answer: str, expect: dict[str, Any], **fields: Any) -> TurnResult:
    case = parse_case(_case(expect=expect))
    return score_turn(_turn(answer, answerable=case.expect.answerable, **fields), case.expect, FaithfulnessScorer())


# -------------------------------------------------------------------------------------------- cases


def test_the_shipped_case_sets_load_and_cover_every_category() -> None:
    cases = load_cases(FULL)
    assert len(cases) >= 150
    assert {c.category for c in cases} >= {
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
    }
    smoke = load_cases(SMOKE)
    assert 10 <= len(smoke) <= 20
    assert {c.id for c in smoke} <= {c.id for c in cases}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"cases.jsonl:2: invalid JSON"),
        (json.dumps(_case(id="c2", extra=1)), r"cases.jsonl:2: unknown field\(s\) \['extra'\]"),
        (
            json.dumps(_case(id="c2", expect={"answerable": "yes"})),
            r"cases.jsonl:2: expect.answerable must be true or false",
        ),
        (json.dumps(_case(id="c2", expect={"answerable": True, "facts": ["/([/"]})), r"cases.jsonl:2: invalid regex"),
        (json.dumps(_case(id="c2", expect={"answerable": True, "messages": [{"type": "info"}]})), r"messages\[0\]"),
        (json.dumps(_case()), r"cases.jsonl:2: duplicate case id 'c1' \(first on line 1\)"),
    ],
)
def test_a_bad_case_line_is_rejected_with_its_line_number(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(CaseError, match=message):
        load_cases(_write(tmp_path, _case(), line))


def test_patterns_match_plain_text_loosely_and_regexes_exactly() -> None:
    assert Pattern.parse("30 days").found_in("within 30\u00a0Days of delivery")
    assert Pattern.parse("don't").found_in("we don’t price match")
    assert not Pattern.parse("/^yes/").found_in("Yes, we do")
    assert Pattern.parse("/^yes/i").found_in("Yes, we do")


# -------------------------------------------------------------------------------------------- metrics


def test_a_missing_fact_lowers_fact_recall() -> None:
    turn = _scored("You can return items within 30 days.", {"answerable": True, "facts": ["30 days", "/full refund/i"]})
    assert turn.facts_missing == ["/full refund/i"]
    assert metrics([turn])["fact_recall"] == 0.5


def test_a_forbidden_text_counts_as_a_violation() -> None:
    turn = _scored("Yes, everything is 90% off.", {"answerable": True, "must_not": ["/90% off/"]})
    assert turn.must_not_hits == ["/90% off/"]
    assert metrics([turn])["must_not_violations"] == 1


def test_a_refusal_scores_faithfulness_by_answerability() -> None:
    refusal = "The shop has not recorded whether it is waterproof."
    right = _scored(refusal, {"answerable": False})
    wrong = _scored(refusal, {"answerable": True})
    assert right.abstained and wrong.abstained
    assert right.faithfulness == 1.0 and wrong.faithfulness == 0.0


def test_faithfulness_is_the_share_of_supported_claims() -> None:
    turn = _scored(
        "You can return full-price items within 30 days of delivery. Returns are free worldwide for 90 days.",
        {"answerable": True},
    )
    assert turn.faithfulness == 0.5
    assert [s["supported"] for s in turn.sentences] == [True, False]


def test_abstention_precision_and_recall() -> None:
    refusal = "The shop has not recorded that."
    answer = "You can return full-price items within 30 days of delivery."
    turns = [
        _scored(refusal, {"answerable": False}),  # correct abstention
        _scored(refusal, {"answerable": True}),  # abstained on an answerable case
        _scored(answer, {"answerable": False}),  # answered an unanswerable case
        _scored(answer, {"answerable": True}),
    ]
    m = metrics(turns)
    assert m["abstention_precision"] == 0.5 and m["abstention_recall"] == 0.5 and m["abstention_f1"] == 0.5


def test_links_match_on_type_and_id_or_url_without_fragment() -> None:
    expect = {
        "answerable": True,
        "links": [
            {"type": "product", "id": "gid://shop/Product/1"},
            {"type": "faq", "url": "https://shop.example/pages/faq#returns"},
            {"type": "refund_policy"},
        ],
    }
    links = [
        {"type": "product", "id": "gid://shop/Product/1", "url": "https://shop.example/products/a"},
        {"type": "faq", "url": "https://shop.example/pages/faq#other"},
        {"type": "product", "id": "gid://shop/Product/2", "url": "https://shop.example/products/b"},
    ]
    turn = _scored("You can return full-price items within 30 days of delivery.", expect, links=links)
    assert (turn.links_matched, turn.links_expected, turn.links_correct) == (2, 3, 2)
    m = metrics([turn])
    assert m["link_recall"] == round(2 / 3, 4) and m["link_precision"] == round(2 / 3, 4)


def test_messages_match_on_type_and_code_and_an_unchecked_turn_does_not_count() -> None:
    messages = [{"type": "warning", "code": "allergens"}, {"type": "info", "code": "not_found"}]
    checked = _scored(
        "x", {"answerable": True, "messages": [{"type": "warning", "code": "allergens"}]}, messages=messages
    )
    unchecked = _scored("x", {"answerable": True}, messages=messages)
    m = metrics([checked, unchecked])
    assert m["message_recall"] == 1.0 and m["message_precision"] == 0.5
    assert not unchecked.messages_checked


def test_retrieval_recall_at_k_and_mrr_follow_evidence_order() -> None:
    docs = ["faq:a", "policy:refund_policy", "page:b", "faq:c"]
    first = _scored("x", {"answerable": True, "evidence": ["policy:refund_policy", "faq:c"]}, evidence_docs=docs)
    second = _scored("x", {"answerable": True, "evidence": ["page:missing"]}, evidence_docs=docs)
    assert first.evidence_found == {"policy:refund_policy": 2, "faq:c": 4}
    m = metrics([first, second])
    assert m["recall@1"] == 0.0
    assert m["recall@3"] == 0.25  # (1/2 + 0) / 2
    assert m["recall@6"] == 0.5
    assert m["mrr"] == 0.25  # (1/2 + 0) / 2


def test_percentiles_interpolate() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 95) == 5
    assert percentile([], 50) is None


# -------------------------------------------------------------------------------------------- a real run


@pytest.fixture(scope="module")
def smoke_run(sample_index: Path, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvalRun]:
    from ask_engine.conversations import SqliteStore
    from ask_engine.engine import Engine

    store = SqliteStore(tmp_path_factory.mktemp("eval") / "store.sqlite3")
    engine = Engine.open(sample_index, embedder=embedder, store=store)
    try:
        yield run_eval(engine, load_cases(SMOKE), scorer=FaithfulnessScorer(embedder))
    finally:
        engine.close()
        store.close()


def test_the_smoke_set_runs_through_a_real_engine_with_follow_ups(smoke_run: EvalRun) -> None:
    cases = load_cases(SMOKE)
    assert smoke_run.cases == len(cases)
    assert len(smoke_run.turns) == sum(1 + len(c.followups) for c in cases)
    assert not [t for t in smoke_run.turns if t.error]
    follow_ups = [t for t in smoke_run.turns if t.turn > 0]
    assert follow_ups and all(t.answer for t in follow_ups)
    assert all(t.latency_ms > 0 and t.evidence_docs for t in smoke_run.turns if t.category in ("policy", "ids"))


def test_the_smoke_summary_has_every_metric_in_range(smoke_run: EvalRun) -> None:
    summary = summarize(smoke_run)
    overall = summary["overall"]
    for key in ("faithfulness", "abstention_f1", "fact_recall", "link_recall", "recall@6", "mrr"):
        assert overall[key] is not None and 0.0 <= overall[key] <= 1.0, key
    assert overall["latency_p50_ms"] <= overall["latency_p95_ms"]
    assert set(summary["by_category"]) == {c.category for c in load_cases(SMOKE)}
    assert summary["overall"]["turns"] == sum(m["turns"] for m in summary["by_category"].values())
    # the empty query is unanswerable and the engine asks for a question: a correct abstention
    empty = next(t for t in smoke_run.turns if t.category == "empty")
    assert empty.abstained and empty.faithfulness == 1.0


def test_the_report_is_written_as_json_and_self_contained_html(smoke_run: EvalRun, tmp_path: Path) -> None:
    summary = summarize(smoke_run)
    write_report(summary, {"hybrid": smoke_run}, tmp_path)
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert report["summary"]["overall"] == json.loads(json.dumps(summary["overall"]))
    assert len(report["turns"]) == len(smoke_run.turns)
    html = (tmp_path / "report.html").read_text("utf-8")
    assert "<svg" in html and "By category" in html and "Retrieval baselines" in html
    assert "<script" not in html and "http-equiv" not in html
    assert 'src="http' not in html and 'href="http' not in html  # no external assets
    for failure in summary["failures"]:
        assert failure["case"] in html


def test_cli_eval_exits_2_on_a_bad_case_file(tmp_path: Path, sample_index: Path) -> None:
    args = _args(_write(tmp_path, "{oops"), sample_index)
    assert cli_eval(args) == 2


def test_cli_eval_exits_1_below_a_threshold_and_0_without_one(tmp_path: Path, sample_index: Path) -> None:
    cases = tmp_path / "two.jsonl"
    cases.write_text("\n".join(SMOKE.read_text("utf-8").splitlines()[:2]) + "\n", "utf-8")
    assert cli_eval(_args(cases, sample_index, min_fact_recall=1.01)) == 1
    assert cli_eval(_args(cases, sample_index, report=str(tmp_path / "rep"))) == 0
    assert (tmp_path / "rep" / "report.html").is_file()


def _args(cases: Path, index: Path, **extra: Any) -> argparse.Namespace:
    base: dict[str, Any] = {
        "cases": str(cases),
        "index": str(index),
        "report": None,
        "config": None,
        "generator": None,
        "min_faithfulness": None,
        "min_fact_recall": None,
        "min_abstention_f1": None,
        "min_link_recall": None,
        "min_message_recall": None,
        "min_recall_at_k": None,
        "limit": None,
        "category": None,
        "no_baselines": True,
        "judge": False,
    }
    return argparse.Namespace(**(base | extra))
