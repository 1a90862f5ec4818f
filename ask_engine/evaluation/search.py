"""Search eval: explained catalog search cases (`ask-engine eval --search CASES.jsonl --index DIR`), scored per check.

One JSON object per line: `{"id", "query", "expect": {...}}`. Each key of `expect` is one check:

| check | passes when |
|---|---|
| `max_price_minor`, `min_price_minor` | `understood` holds that bound (null: none read) |
| `attributes` | `understood.required_attributes` has exactly these `{key, value}` |
| `passes` | the question was read as that many searches |
| `results_include` / `results_exclude` | every handle listed is / none is among `results` |
| `results_empty` | `results` is empty (true) or not (false) |
| `ruled_out_include` | every handle listed is among `ruled_out` |
| `not_stocked` | results empty and `unrelated_count` > 0 (true), or not that (false) |
| `verdicts` | each `{handle, constraint, key?, outcome, source?}` is the verdict given to that product |
| `cheapest_ruled_out_minor` | equals the figure |
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Check = Callable[[Mapping[str, Any], Any], bool]


def _handles(items: list[dict[str, Any]]) -> set[str]:
    return {str(i.get("handle")) for i in items}


def _verdicts(answer: Mapping[str, Any], wanted: list[dict[str, Any]]) -> bool:
    items = {i["handle"]: i for i in [*answer["results"], *answer["ruled_out"]]}
    for want in wanted:
        item = items.get(want["handle"])
        if item is None:
            return False
        match = [
            v
            for v in item["verdicts"]
            if v["constraint"] == want["constraint"] and ("key" not in want or v.get("key") == want["key"])
        ]
        if not match or any(v["outcome"] != want["outcome"] for v in match):
            return False
        if "source" in want and any(v["source"] != want["source"] for v in match):
            return False
    return True


CHECKS: dict[str, Check] = {
    "max_price_minor": lambda a, x: a["understood"]["max_price_minor"] == x,
    "min_price_minor": lambda a, x: a["understood"]["min_price_minor"] == x,
    "attributes": lambda a, x: (
        sorted((r["key"], r["value"]) for r in a["understood"]["required_attributes"])
        == sorted((r["key"], r["value"]) for r in x)
    ),
    "passes": lambda a, x: a["passes"] == x,
    "results_include": lambda a, x: set(x) <= _handles(a["results"]),
    "results_exclude": lambda a, x: not (set(x) & _handles(a["results"])),
    "results_empty": lambda a, x: (not a["results"]) == bool(x),
    "ruled_out_include": lambda a, x: set(x) <= _handles(a["ruled_out"]) if a["ruled_out_count"] <= 10 else True,
    "not_stocked": lambda a, x: (not a["results"] and a["unrelated_count"] > 0) == bool(x),
    "verdicts": _verdicts,
    "cheapest_ruled_out_minor": lambda a, x: a["cheapest_ruled_out_minor"] == x,
}


def load_search_cases(path: str | Path) -> list[dict[str, Any]]:
    cases = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        case = json.loads(line)
        unknown = set(case.get("expect", {})) - set(CHECKS)
        if not isinstance(case.get("query"), str) or unknown:
            raise ValueError(f"{path}:{n}: a search case needs a query and known checks (unknown: {sorted(unknown)})")
        cases.append(case)
    return cases


def score_search(searcher: Any, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Every case through the search; per-check pass rates, the share of cases passing all, and the failures."""
    from ask_engine.catalog.answer import answer_object

    per_check: dict[str, list[bool]] = {}
    failures: list[dict[str, Any]] = []
    whole = 0
    for case in cases:
        answer = answer_object(searcher.search(case["query"]), limit=50)
        failed = []
        for name, expected in case.get("expect", {}).items():
            ok = bool(CHECKS[name](answer, expected))
            per_check.setdefault(name, []).append(ok)
            if not ok:
                failed.append(name)
        whole += not failed
        if failed:
            failures.append({"id": case.get("id"), "query": case["query"], "failed": failed})
    return {
        "cases": len(cases),
        "all_checks_passed": whole / len(cases) if cases else 0.0,
        "checks": {k: {"n": len(v), "pass_rate": sum(v) / len(v)} for k, v in sorted(per_check.items())},
        "failures": failures,
    }


def cli_search_eval(args: argparse.Namespace) -> int:
    """`ask-engine eval --search`: prints per-check pass rates (and writes search.json to --report)."""
    from ask_engine.catalog.search import CatalogSearch
    from ask_engine.config import Settings
    from ask_engine.engine import Engine

    try:
        cases = load_search_cases(args.cases)
    except (OSError, ValueError) as exc:
        print(f"ask-engine eval --search: {exc}", file=sys.stderr)
        return 2
    if args.limit is not None:
        cases = cases[: max(args.limit, 0)]
    engine = Engine.open(args.index, Settings.load(args.config))
    try:
        summary = score_search(CatalogSearch(engine.index, engine.retriever, engine.embedder), cases)
    finally:
        engine.close()
    print(f"search cases: {summary['cases']}, all checks passed: {summary['all_checks_passed']:.3f}")
    for name, figures in summary["checks"].items():
        print(f"  {name:26s} {figures['pass_rate']:.3f}  (n={figures['n']})")
    for failure in summary["failures"]:
        print(f"  FAIL {failure['id']}: {failure['query']!r} -> {', '.join(failure['failed'])}")
    if args.report:
        out = Path(args.report)
        out.mkdir(parents=True, exist_ok=True)
        (out / "search.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0
