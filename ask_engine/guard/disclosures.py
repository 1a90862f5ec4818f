"""Disclosure messages: the merchant's exact allergen / safety / age / prop65 text, always last in the response."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from ask_engine.guard.untrusted import _norm
from ask_engine.models import Message
from ask_engine.types import Document, Draft

# Query words that ask about a disclosure topic in general ("is this safe for kids?", "any nuts in it?").
_DISCLOSURE_TOPICS: dict[str, tuple[str, ...]] = {
    "allergens": (
        "allergen",
        "allergy",
        "allergic",
        "allergies",
        "nut",
        "nuts",
        "peanut",
        "peanuts",
        "gluten",
        "wheat",
        "dairy",
        "milk",
        "lactose",
        "soy",
        "soya",
        "egg",
        "eggs",
        "sesame",
        "shellfish",
        "fish",
        "celery",
        "mustard",
        "lupin",
        "sulphite",
        "sulfite",
        "coeliac",
        "celiac",
        "vegan",
        "ingredient",
        "ingredients",
        "contain",
        "contains",
        "intolerance",
        "intolerant",
    ),
    "safety": (
        "safe",
        "safety",
        "hazard",
        "hazardous",
        "danger",
        "dangerous",
        "warning",
        "warnings",
        "risk",
        "child",
        "children",
        "kid",
        "kids",
        "baby",
        "babies",
        "toddler",
        "choking",
        "flammable",
        "fire",
        "burn",
        "toxic",
        "poison",
        "battery",
        "batteries",
        "gas",
        "injury",
        "carbon",
        "monoxide",
        "ventilation",
    ),
    "age_restricted": ("age", "adult", "adults", "minor", "minors", "old", "18", "21", "id", "restricted", "under"),
    "prop65": ("prop", "proposition", "65", "california", "cancer", "chemical", "chemicals", "reproductive", "lead"),
}
_WORD = re.compile(r"[a-z0-9]+")


def _query_topics(query: str) -> set[str]:
    words = set(_WORD.findall(_norm(query).casefold()))
    topics = {code for code, cues in _DISCLOSURE_TOPICS.items() if words & set(cues)}
    # A code the merchant invented ("choking_hazard", "battery") is its own topic when the query names it.
    topics |= {f"word:{w}" for w in words}
    return topics


def _code_matches(code: str, topics: set[str]) -> bool:
    if code in topics:
        return True
    return any(f"word:{part}" in topics for part in re.split(r"[^a-z0-9]+", code.casefold()) if len(part) > 2)


def disclosure_messages(
    docs: Sequence[Document],
    *,
    query: str,
    draft: Draft,
    evidence_docs: Sequence[Document] = (),
) -> list[Message]:
    """Disclosure warnings, merchant text verbatim, for every document the answer touches.

    `docs` are the documents the answer is about or draws on (resolved ids, the draft's used documents, pages and
    FAQ entries it used): all their disclosures apply. `evidence_docs` are the other documents retrieved as
    evidence: the disclosures of their pages, policies and FAQ entries apply when the query asks about that
    disclosure's topic (allergens, safety, ...).
    Identical texts are sent once.
    """
    seen_docs: set[str] = set()
    chosen: list[tuple[str, str, Literal["plain", "markdown"]]] = []
    for doc in docs:
        if doc.id in seen_docs:
            continue
        seen_docs.add(doc.id)
        chosen.extend((d.code, d.content, d.content_type) for d in doc.disclosures)
    if draft.kind != "empty_query" and query.strip():
        topics = _query_topics(query)
        for doc in evidence_docs:
            # A product the answer does not name is not the answer's business; a topic page or FAQ entry about
            # allergens or safety is, when that is what the question asks about.
            if doc.id in seen_docs or doc.kind == "product":
                continue
            seen_docs.add(doc.id)
            chosen.extend((d.code, d.content, d.content_type) for d in doc.disclosures if _code_matches(d.code, topics))
    messages: list[Message] = []
    seen_content: set[str] = set()
    for code, content, content_type in chosen:
        key = " ".join(content.split())
        if not key or key in seen_content:
            continue
        seen_content.add(key)
        messages.append(
            Message(
                type="warning",
                code=code,
                content=content,
                content_type=content_type if content_type in ("plain", "markdown") else "markdown",
                presentation="disclosure",
            )
        )
    return messages
