"""UCP `dev.ucp.shopping.catalog` wire shapes: request validation against the vendored schemas, products and
variants as `types/product.json` draws them, and the three operations' response bodies."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ask_engine.catalog.answer import ANSWER_EXTENSION, answer_object, messages
from ask_engine.catalog.constraints import minor_units
from ask_engine.catalog.verdicts import Judged
from ask_engine.errors import InvalidInput, InvalidInputItem
from ask_engine.models import MAX_CONTEXT_BYTES, MAX_QUERY_CHARS

if TYPE_CHECKING:
    from ask_engine.catalog.search import CatalogSearch, SearchResult
    from ask_engine.indexes import ShopIndex
    from ask_engine.types import Document, Variant

SERVICE = "dev.ucp.shopping"
SEARCH = "dev.ucp.shopping.catalog.search"
LOOKUP = "dev.ucp.shopping.catalog.lookup"
MAX_LIMIT = 50
DEFAULT_LIMIT = 10
MAX_LOOKUP_IDS = 50

_REFS = {
    "search": "https://ucp.dev/schemas/shopping/catalog_search.json#/$defs/search_request",
    "lookup": "https://ucp.dev/schemas/shopping/catalog_lookup.json#/$defs/lookup_request",
    "product": "https://ucp.dev/schemas/shopping/catalog_lookup.json#/$defs/get_product_request",
    "search_response": "https://ucp.dev/schemas/shopping/catalog_search.json#/$defs/search_response",
    "lookup_response": "https://ucp.dev/schemas/shopping/catalog_lookup.json#/$defs/lookup_response",
    "product_response": "https://ucp.dev/schemas/shopping/catalog_lookup.json#/$defs/get_product_response",
}


@lru_cache(maxsize=8)
def validator(name: str) -> Any:
    """A jsonschema validator for a catalog request or response ('search', 'lookup_response', ...)."""
    from ask_engine.models import _validator

    return _validator(_REFS[name])


def _path(parts: Sequence[Any]) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if str(part).isidentifier() else f"[{part!r}]")
    return out


def validate(name: str, data: Any) -> dict[str, Any]:
    """The request object, or InvalidInput with one item per schema violation or limit broken."""
    if not isinstance(data, dict):
        raise InvalidInput(
            [InvalidInputItem("$", f"The catalog request must be a JSON object (got {type(data).__name__}).")]
        )
    items = [
        InvalidInputItem(_path(e.absolute_path), f"{_path(e.absolute_path)}: {e.message}")
        for e in sorted(validator(name).iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    ][:10]
    query = data.get("query")
    if isinstance(query, str) and len(query) > MAX_QUERY_CHARS:
        items.append(InvalidInputItem("$.query", f"$.query is longer than {MAX_QUERY_CHARS} characters."))
    if name == "search" and not (isinstance(query, str) and query.strip()) and not data.get("filters"):
        items.append(InvalidInputItem("$.query", "A search needs a non-empty `query` or `filters`."))
    ids = data.get("ids")
    if name == "lookup" and isinstance(ids, list) and len(ids) > MAX_LOOKUP_IDS:
        items.append(InvalidInputItem("$.ids", f"At most {MAX_LOOKUP_IDS} ids per lookup (got {len(ids)})."))
    context = data.get("context")
    if isinstance(context, dict) and len(json.dumps(context, ensure_ascii=False).encode()) > MAX_CONTEXT_BYTES:
        items.append(InvalidInputItem("$.context", f"$.context must serialize to at most {MAX_CONTEXT_BYTES} bytes."))
    cursor = (data.get("pagination") or {}).get("cursor") if isinstance(data.get("pagination"), dict) else None
    if cursor is not None and isinstance(cursor, str) and decode_cursor(cursor) is None:
        items.append(InvalidInputItem("$.pagination.cursor", "The cursor is not one this server issued."))
    if items:
        raise InvalidInput(items)
    return data


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"o": offset}).encode()).decode()


def decode_cursor(cursor: str) -> int | None:
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    offset = value.get("o") if isinstance(value, dict) else None
    return offset if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0 else None


# --- products -----------------------------------------------------------------------------------------------


def _price(variant: Variant, currency: str, field: str = "price") -> dict[str, Any] | None:
    raw = getattr(variant, field)
    try:
        return {"amount": minor_units(Decimal(raw), currency), "currency": currency} if raw else None
    except (InvalidOperation, ValueError):
        return None


def variant_json(
    doc: Document, variant: Variant, currency: str, inputs: Sequence[dict[str, str]] = ()
) -> dict[str, Any]:
    price = _price(variant, currency) or {"amount": 0, "currency": currency}
    out: dict[str, Any] = {
        "id": variant.gid,
        "title": variant.title or doc.title,
        "description": {"plain": variant.title or doc.title},
        "price": price,
    }
    if variant.sku:
        out["sku"] = variant.sku
    listed = _price(variant, currency, "compare_at_price")
    if listed is not None and listed["amount"] > price["amount"]:
        out["list_price"] = listed
    if variant.available is not None:
        out["availability"] = {"available": variant.available, "status": variant.status}
    options = [{"name": n, "label": v} for n, v in variant.options if v and v != "Default Title"]
    if options:
        out["options"] = options
    if inputs:
        out["inputs"] = list(inputs)
    return out


def product_json(
    doc: Document,
    currency: str,
    *,
    variants: Sequence[Variant] | None = None,
    inputs: Mapping[str, Sequence[dict[str, str]]] | None = None,
) -> dict[str, Any]:
    """A product as `types/product.json`: its variants (`variants`, best first; default all), price range over all."""
    chosen = list(doc.variants if variants is None else variants)
    prices = [p["amount"] for v in doc.variants if (p := _price(v, currency)) is not None]
    low, high = (min(prices), max(prices)) if prices else (0, 0)
    out: dict[str, Any] = {
        "id": doc.gid or doc.id,
        "handle": doc.handle,
        "title": doc.title,
        "description": {"plain": doc.body or doc.title},
        "url": doc.url,
        "price_range": {"min": {"amount": low, "currency": currency}, "max": {"amount": high, "currency": currency}},
        "variants": [variant_json(doc, v, currency, (inputs or {}).get(v.gid, ())) for v in chosen],
    }
    if doc.product_type:
        out["categories"] = [{"value": doc.product_type, "taxonomy": "merchant"}]
    if doc.options:
        out["options"] = [{"name": n, "values": [{"label": v} for v in values]} for n, values in doc.options if values]
    if doc.tags:
        out["tags"] = list(doc.tags)
    if out["handle"] is None:
        del out["handle"]
    return out


# --- the operations -----------------------------------------------------------------------------------------


def _limit(request: Mapping[str, Any]) -> tuple[int, int]:
    page = request.get("pagination") or {}
    limit = min(int(page.get("limit") or DEFAULT_LIMIT), MAX_LIMIT)
    offset = decode_cursor(page["cursor"]) if page.get("cursor") else 0
    return limit, offset or 0


def run_search(searcher: CatalogSearch, request: Mapping[str, Any], *, history: Sequence[str] = ()) -> SearchResult:
    """The search a catalog request asks for: its query, context intent, category and price filters."""
    context = request.get("context") or {}
    filters = request.get("filters") or {}
    price = filters.get("price") or {}
    shop_currency = searcher.index.shop.currency.upper()
    stated = str(context.get("currency") or shop_currency).upper()
    return searcher.search(
        str(request.get("query") or ""),
        context_intent=context.get("intent") if isinstance(context.get("intent"), str) else None,
        history=history,
        categories=[c for c in filters.get("categories") or () if isinstance(c, str)],
        price_min=price.get("min"),
        price_max=price.get("max"),
        price_applies=stated == shop_currency or not price,
    )


def _page(result: SearchResult, request: Mapping[str, Any]) -> tuple[list[Judged], dict[str, Any]]:
    limit, offset = _limit(request)
    page = result.results[offset : offset + limit]
    more = offset + limit < len(result.results)
    pagination: dict[str, Any] = {"has_next_page": more, "total_count": len(result.results)}
    if more:
        pagination["cursor"] = encode_cursor(offset + limit)
    return page, pagination


def search_body(
    result: SearchResult, request: Mapping[str, Any], envelope: dict[str, Any], *, extension: bool
) -> dict[str, Any]:
    """The search_response: products, pagination, the facts as messages, and the verdicts object under the
    project's extension key when negotiated."""
    currency = result.understood.currency
    page, pagination = _page(result, request)
    body: dict[str, Any] = {
        "ucp": envelope,
        "products": [product_json(j.doc, currency, variants=j.variants) for j in page],
        "pagination": pagination,
        "messages": messages(result),
    }
    if extension:
        body[ANSWER_EXTENSION] = answer_object(result, limit=len(page) or 1)
    return body


def search_products_body(result: SearchResult, request: Mapping[str, Any]) -> dict[str, Any]:
    """The shop MCP's `search_products`: the same products, with the verdicts object inline beside them."""
    currency = result.understood.currency
    page, pagination = _page(result, request)
    body: dict[str, Any] = {
        "products": [product_json(j.doc, currency, variants=j.variants) for j in page],
        "pagination": pagination,
        "messages": messages(result),
    }
    answer = answer_object(result, limit=len(page))
    answer["results"] = answer["results"][: len(page)]
    body.update(answer)
    return body


def _filtered(doc: Document, variants: Sequence[Variant], filters: Mapping[str, Any], currency: str) -> list[Variant]:
    price = filters.get("price") or {}
    low, high = price.get("min"), price.get("max")
    kept = []
    for v in variants:
        p = _price(v, currency)
        amount = p["amount"] if p else None
        if amount is not None and ((low is not None and amount < low) or (high is not None and amount > high)):
            continue
        kept.append(v)
    return kept


def lookup_body(index: ShopIndex, request: Mapping[str, Any], envelope: dict[str, Any]) -> dict[str, Any]:
    """lookup_response: each id resolved (product GID, variant GID, SKU, handle, URL) once per product, every
    variant carrying the request ids that reached it; unknown ids as info `not_found` messages."""
    from ask_engine.resolve import _lookup

    currency = index.shop.currency
    filters = request.get("filters") or {}
    found: dict[str, dict[str, list[dict[str, str]]]] = {}
    missing: list[str] = []
    for raw in dict.fromkeys(str(i) for i in request.get("ids") or ()):
        target = _lookup(raw, index)
        doc = index.documents.get(target[0]) if target else None
        if doc is None or doc.kind != "product" or not doc.variants:
            missing.append(raw)
            continue
        inputs = found.setdefault(doc.id, {})
        variant_gid = target[1] if target else None
        if variant_gid:
            inputs.setdefault(variant_gid, []).append({"id": raw, "match": "exact"})
        else:
            featured = _filtered(doc, doc.variants, filters, currency) or list(doc.variants)
            inputs.setdefault(featured[0].gid, []).append({"id": raw, "match": "featured"})
    products = []
    for doc_id, inputs in found.items():
        doc = index.documents[doc_id]
        chosen = [v for v in _filtered(doc, doc.variants, filters, currency) if v.gid in inputs]
        if chosen:
            products.append(product_json(doc, currency, variants=chosen, inputs=inputs))
        else:
            missing += [i["id"] for ids in inputs.values() for i in ids]
    body: dict[str, Any] = {"ucp": envelope, "products": products}
    if missing:
        body["messages"] = [{"type": "info", "code": "not_found", "content": raw} for raw in missing]
    return body


def product_body(index: ShopIndex, request: Mapping[str, Any], envelope: dict[str, Any]) -> dict[str, Any] | None:
    """get_product_response for one product or variant id, with option selection and availability signals; None
    when the id resolves to no product (the caller answers the not_found error_response)."""
    from ask_engine.resolve import _lookup

    currency = index.shop.currency
    target = _lookup(str(request.get("id")), index)
    doc = index.documents.get(target[0]) if target else None
    if doc is None or doc.kind != "product" or not doc.variants:
        return None
    variant_gid = target[1] if target else None
    by_gid = {v.gid: v for v in doc.variants}
    named_variant = variant_gid is not None and variant_gid in by_gid
    selected = dict(by_gid[variant_gid].options) if named_variant and variant_gid else _relaxed(doc, request)
    names = [n for n, _ in doc.options]
    selected = {n: v for n, v in selected.items() if n in names}
    matching = [v for v in doc.variants if all(dict(v.options).get(n) == val for n, val in selected.items())]
    if variant_gid and variant_gid in by_gid:
        matching = [by_gid[variant_gid]] + [v for v in matching if v.gid != variant_gid]
    matching = _filtered(doc, matching, request.get("filters") or {}, currency) or matching
    product = product_json(doc, currency, variants=matching or list(doc.variants))
    if doc.options:
        product["options"] = [_signals(doc, name, values, selected) for name, values in doc.options if values]
        if not selected:
            featured = (matching or list(doc.variants))[0]
            selected = {n: v for n, v in featured.options if n in names}
        product["selected"] = [{"name": n, "label": v} for n, v in selected.items()]
    return {"ucp": envelope, "product": product}


def _relaxed(doc: Document, request: Mapping[str, Any]) -> dict[str, str]:
    """The requested selections, dropping options from the end of `preferences` until some variant matches."""
    wanted = {str(s.get("name")): str(s.get("label")) for s in request.get("selected") or () if isinstance(s, dict)}
    order = [p for p in request.get("preferences") or () if p in wanted] + [
        n for n in wanted if n not in (request.get("preferences") or ())
    ]
    while wanted:
        if any(all(dict(v.options).get(n) == val for n, val in wanted.items()) for v in doc.variants):
            return wanted
        drop = order.pop() if order else next(reversed(wanted))
        wanted.pop(drop, None)
    return {}


def _signals(doc: Document, name: str, values: Sequence[str], selected: Mapping[str, str]) -> dict[str, Any]:
    others = {n: v for n, v in selected.items() if n != name}
    out = []
    for value in values:
        variants = [
            v
            for v in doc.variants
            if dict(v.options).get(name) == value and all(dict(v.options).get(n) == x for n, x in others.items())
        ]
        out.append(
            {"label": value, "available": any(v.available is not False for v in variants), "exists": bool(variants)}
        )
    return {"name": name, "values": out}
