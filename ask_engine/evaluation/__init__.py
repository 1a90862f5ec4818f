"""Eval harness: load JSONL cases, run them through the public Engine, score them, and write the report.

Metrics (defined in eval/README.md): faithfulness (refusals scored by answerability), abstention
precision/recall/F1, fact recall, must-not violations, link and message precision/recall, retrieval recall@k and MRR
over expected evidence documents, latency p50/p95, overall and per category, for hybrid, dense-only and BM25-only
retrieval. An optional LLM judge (`--judge`) verifies extracted claims through the configured OpenAI-compatible
server; it is never needed by the tests.

- `cases`: the case format, parsed and checked
- `run`: cases through the Engine per retrieval mode; `cli_eval` (`ask-engine eval`)
- `results`: `TurnResult` (one answered turn and its scores), `EvalRun` (one pass)
- `claim_score`: the claims of each answer sentence (list items, numbers, names, negations), checked one by one
- `metrics`: scoring a turn against its expectations, metrics over turns, the run summary
- `judge`: the optional LLM judge
- `perturb`, `labelled`: the guard's precision and recall on perturbed and on hand-labelled model sentences
- `report`: report.json, report.html and the printed summary
"""

from ask_engine.evaluation.cases import (
    CATEGORIES,
    MODES,
    Case,
    CaseError,
    Expect,
    FollowUp,
    LinkExpect,
    MessageExpect,
    Mode,
    Pattern,
    load_cases,
    parse_case,
)
from ask_engine.evaluation.judge import judge_run
from ask_engine.evaluation.metrics import (
    RECALL_AT,
    abstained,
    answer_sources,
    claim_figures,
    faithfulness_value,
    fallback_reasons,
    metrics,
    percentile,
    score_turn,
    summarize,
)
from ask_engine.evaluation.report import print_summary, write_report
from ask_engine.evaluation.results import EvalRun, TurnResult
from ask_engine.evaluation.run import cli_eval, run_eval

__all__ = [
    "CATEGORIES",
    "MODES",
    "RECALL_AT",
    "Case",
    "CaseError",
    "EvalRun",
    "Expect",
    "FollowUp",
    "LinkExpect",
    "MessageExpect",
    "Mode",
    "Pattern",
    "TurnResult",
    "abstained",
    "answer_sources",
    "claim_figures",
    "cli_eval",
    "faithfulness_value",
    "fallback_reasons",
    "judge_run",
    "load_cases",
    "metrics",
    "parse_case",
    "percentile",
    "print_summary",
    "run_eval",
    "score_turn",
    "summarize",
    "write_report",
]
