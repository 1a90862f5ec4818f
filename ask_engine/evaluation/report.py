"""The eval report: `report.json` and a self-contained `report.html`, and the summary printed to the terminal."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ask_engine.evaluation.metrics import summarize
from ask_engine.evaluation.results import EvalRun, TurnResult

_HEADLINE = (
    ("faithfulness", "Faithfulness"),
    ("faithfulness_raw", "Faithfulness (raw draft)"),
    ("unsupported_claims_per_answer", "Unsupported claims per answer"),
    ("unsupported_claims_per_answer_raw", "Unsupported claims per answer (raw draft)"),
    ("unsupported_claim_share", "Unsupported share of claims"),
    ("unsupported_claim_share_raw", "Unsupported share of claims (raw draft)"),
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
        claim_lines=claim_lines(summary["overall"], summary.get("generator", "extractive")),
        unsupported_sent=[(t.case_id, c) for t in main.turns for c in t.unsupported_claims],
    )
    (out / "report.html").write_text(html, "utf-8")


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
    for line in claim_lines(overall, summary.get("generator", "extractive")):
        write(line)


def _claims_text(block: dict[str, Any]) -> str:
    per_answer, share = block["unsupported_per_answer"], block["unsupported_share"]
    return (
        f"{'-' if per_answer is None else f'{per_answer:.2f}'} per answer, "
        f"{'-' if share is None else f'{share:.1%}'} of claims "
        f"({block['unsupported']} of {block['claims']} claims in {block['answers']} answers)"
    )


def claim_lines(overall: dict[str, Any], generator: str) -> list[str]:
    """The unsupported-claim, answer-source and fallback lines of the printed summary."""
    claims = overall.get("claims")
    if not claims:
        return []
    lines = []
    if "raw" in claims:
        lines.append(f"unsupported claims: raw draft {_claims_text(claims['raw'])}")
        lines.append(f"                    sent answer {_claims_text(claims['sent'])}")
    else:
        lines.append(f"unsupported claims: sent answer {_claims_text(claims['sent'])}")
    by = overall.get("answered_by") or {}
    if generator != "extractive":
        lines.append(
            f"answers: {by.get('generator', 0)} from the model ({generator}), {by.get('fallback', 0)} extractive "
            f"fallbacks, {by.get('none', 0)} without a draft"
        )
    reasons = overall.get("fallbacks") or {}
    if reasons:
        lines.append("fallbacks: " + ", ".join(f"{reason} {n}" for reason, n in reasons.items()))
    return lines
