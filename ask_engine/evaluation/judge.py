"""The optional LLM judge: claim extraction and verification through an OpenAI-compatible server (`--judge`)."""

from __future__ import annotations

import json
import statistics
from typing import TYPE_CHECKING, Any

from ask_engine.evaluation.results import EvalRun

if TYPE_CHECKING:
    from ask_engine.config import Settings


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
