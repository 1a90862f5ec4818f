"""Guards over a request and its draft, in the order the engine applies them.

- `untrusted`: instruction-like text in queries, merchant content and drafts is data, never followed or quoted;
- `operations`: the read-only boundary (requests to change carts, orders, accounts are refused, nothing is done);
- `grounding`: an LLM's sentences are kept only where the evidence supports them (`faithfulness`, shared with the
  eval, built on `sentences`, `figures` and `words`);
- `disclosures`: the merchant's allergen / safety / age / prop65 text, always last.
"""

from __future__ import annotations

from ask_engine.guard.disclosures import disclosure_messages
from ask_engine.guard.grounding import SupportResult, SupportScorer, answers_something, claims_not_recorded, ground
from ask_engine.guard.operations import Operation, detect_operation, operation_messages, operation_sentence
from ask_engine.guard.untrusted import (
    QueryParts,
    is_injection,
    read_query,
    sanitize_document,
    sanitize_evidence,
    sanitize_text,
    strip_injected,
)

__all__ = [
    "Operation",
    "QueryParts",
    "SupportResult",
    "SupportScorer",
    "answers_something",
    "claims_not_recorded",
    "detect_operation",
    "disclosure_messages",
    "ground",
    "is_injection",
    "operation_messages",
    "operation_sentence",
    "read_query",
    "sanitize_document",
    "sanitize_evidence",
    "sanitize_text",
    "strip_injected",
]
