"""The explained search as data: the verdicts object (shop MCP `search_products`, and the UCP extension) and the
same facts as UCP `messages[]` (understood / ruled out / not stocked). Money is always in minor units."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ask_engine.catalog.search import SearchResult
from ask_engine.catalog.verdicts import Judged

NAMESPACE = "dev.ask-engine"  # the project's own reverse-domain namespace
ANSWER_EXTENSION = f"{NAMESPACE}.shopping.answer"  # extends dev.ucp.shopping.catalog.search
ANSWER_VERSION = "2026-08-25"  # moves only when the shape does
ANSWER_SCHEMA = "answer.json"  # ask_engine/schemas/ext/answer.json
ANSWER_SCHEMA_PATH = f"/schemas/ext/{ANSWER_SCHEMA}"  # where each shop serves it
CODE_UNDERSTOOD = f"{NAMESPACE}.understood"
CODE_RULED_OUT = f"{NAMESPACE}.ruled_out"
CODE_NOT_STOCKED = f"{NAMESPACE}.not_stocked"
MAX_LISTED = 10  # ruled-out products listed (all are counted)


def _money(minor: int, currency: str) -> str:
    from ask_engine.sources.values import _ZERO_DECIMAL, format_money

    exponent = 0 if currency.upper() in _ZERO_DECIMAL else 2
    return format_money(Decimal(minor) / (10**exponent), currency)


def _item(j: Judged, *, passes: int) -> dict[str, Any]:
    out: dict[str, Any] = {"id": j.doc.gid, "handle": j.doc.handle, "title": j.doc.title, "url": j.doc.url}
    out["price_minor"] = j.price_minor
    if passes > 1:
        out["pass"] = j.pass_index + 1
    out["verdicts"] = [v.to_json() for v in j.verdicts]
    return out


def understood_json(result: SearchResult) -> dict[str, Any]:
    u = result.understood
    attributes = [
        {"key": a.key, "value": a.wanted, "said": a.said, **({"pass": n + 1} if len(u.passes) > 1 else {})}
        for n, p in enumerate(u.passes)
        for a in p.attributes
    ]
    options = [
        {"key": o.kind, "value": o.value, "negated": o.negated, **({"pass": n + 1} if len(u.passes) > 1 else {})}
        for n, p in enumerate(u.passes)
        for o in p.options
    ]
    out: dict[str, Any] = {
        "query": u.query,
        "min_price_minor": u.min_price_minor,
        "max_price_minor": u.max_price_minor,
        "required_attributes": attributes,
        "required_options": options,
        "in_stock": u.in_stock,
        "kinds": [p.kind for p in u.passes],
        "context": list(u.context),
    }
    if u.stated_currency:
        out["stated_currency"] = u.stated_currency
    if u.remembered:
        out["remembered"] = [
            {
                "constraint": r.constraint,
                **({"key": r.key} if r.key else {}),
                "wanted": r.wanted,
                "scope": r.scope,
                "said_in": r.said_in,
            }
            for r in u.remembered
        ]
    return out


def answer_object(result: SearchResult, *, limit: int) -> dict[str, Any]:
    """The verdicts object: what was understood, each result's verdicts, and what was turned away."""
    passes = len(result.understood.passes)
    return {
        "understood": understood_json(result),
        "degraded": result.understood.degraded,
        "as_of": result.as_of,
        "currency": result.understood.currency,
        "results": [_item(j, passes=passes) for j in result.results[:limit]],
        "ruled_out": [_item(j, passes=passes) for j in result.ruled_out[:MAX_LISTED]],
        "ruled_out_count": len(result.ruled_out),
        "cheapest_ruled_out_minor": result.cheapest_ruled_out_minor,
        "unrelated_count": result.unrelated_count,
        "relevance_judged": result.relevance_judged,
        "passes": passes,
    }


def _understood_text(result: SearchResult) -> str:
    u = result.understood
    parts: list[str] = []
    if u.max_price_minor is not None:
        parts.append(f"at most {_money(u.max_price_minor, u.stated_currency or u.currency)}")
    if u.min_price_minor is not None:
        parts.append(f"at least {_money(u.min_price_minor, u.stated_currency or u.currency)}")
    for p in u.passes:
        for a in p.attributes:
            parts.append(f"{a.key}={a.wanted}")
        for o in p.options:
            parts.append(f"{o.kind} {'not ' if o.negated else ''}{o.value}")
    if u.in_stock:
        parts.append("in stock")
    kinds = [p.kind for p in u.passes if p.kind]
    read = " and ".join(f'"{k}"' for k in kinds) if kinds else f'"{u.query}"'
    text = f"Read as {read}" + (f", filtered by {', '.join(parts)}." if parts else ", with no constraints.")
    if len(u.passes) > 1:
        text += f" Searched as {len(u.passes)} separate things; a budget holds for each item."
    if u.stated_currency:
        text += (
            f" The price was given in {u.stated_currency} but the shop prices in {u.currency}; it was not converted"
            " and not applied."
        )
    for r in u.remembered:
        text += f" Also applied from earlier in this conversation: {r.constraint} {r.wanted}."
    return text


def messages(result: SearchResult) -> list[dict[str, Any]]:
    """The response-level facts as UCP info messages."""
    out = [{"type": "info", "code": CODE_UNDERSTOOD, "content": _understood_text(result)}]
    currency = result.understood.currency
    if result.ruled_out:
        cheapest = result.cheapest_ruled_out_minor
        content = (
            f"{len(result.ruled_out)} further product{'s' if len(result.ruled_out) != 1 else ''} matched the "
            "description but failed a stated constraint or could not be shown to meet it."
        )
        if cheapest is not None:
            content += f" The cheapest of them is {_money(cheapest, currency)}."
        out.append({"type": "info", "code": CODE_RULED_OUT, "content": content})
    if not result.results and not result.ruled_out and result.unrelated_count > 0:
        kinds = " or ".join(p.kind for p in result.understood.passes if p.kind)
        out.append(
            {
                "type": "info",
                "code": CODE_NOT_STOCKED,
                "content": f"The shop does not appear to sell {kinds or 'this'}: the "
                f"{result.unrelated_count} products the search found are other kinds of thing.",
            }
        )
    return out
