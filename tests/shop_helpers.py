"""Shared by the unseen-shop tests: write an inline shop, index it, and ask it through the public Engine."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ask_engine.engine import Engine
from ask_engine.indexer import build_index
from ask_engine.models import schema_errors


def build_inline_shop(folder: Path, files: Mapping[str, str], embedder: Any) -> Path:
    """Write `files` (relative path → text) under `folder`, index the shop beside it and return the index folder."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    out = folder.parent / "index"
    build_index(folder, out, embedder=embedder, progress=False)
    return out


class Asker:
    """Asks once per distinct request; every response is checked against the spec's schema before use."""

    def __init__(self, engine: Engine, asker: str) -> None:
        self.engine = engine
        self.asker = asker
        self._cache: dict[str, dict[str, Any]] = {}

    def __call__(self, query: str, ids: list[str] | None = None, **context: str) -> dict[str, Any]:
        request: dict[str, Any] = {"query": query}
        if ids:
            request["ids"] = ids
        if context:
            request["context"] = context
        key = json.dumps(request, sort_keys=True)
        if key not in self._cache:
            data = self.engine.ask(request, asker=self.asker).to_json()
            assert schema_errors("ask_response", data) == [], (request, data)
            assert data["answer"]["plain"].strip(), request
            self._cache[key] = data
        return self._cache[key]


def plain(data: dict[str, Any]) -> str:
    return str(data["answer"]["plain"])


def product_links(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [link for link in data.get("links") or [] if link["type"] == "product"]


def codes(data: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [m for m in data.get("messages") or [] if m.get("code") == code]


def ask_plain(engine: Engine, query: str, *ids: str, asker: str = "test") -> str:
    """The plain answer to `query` (about `ids`), after checking the response against the spec's schema."""
    request: dict[str, Any] = {"query": query}
    if ids:
        request["ids"] = list(ids)
    data = engine.ask(request, asker=asker).to_json()
    assert schema_errors("ask_response", data) == [], data
    return plain(data)


def assert_says(
    engine: Engine, question: str, ids: Sequence[str], wanted: Sequence[str], unwanted: Sequence[str]
) -> None:
    """The plain answer to `question` (about `ids`) says every one of `wanted` and none of `unwanted`."""
    answer = ask_plain(engine, question, *ids)
    assert all(w in answer for w in wanted), answer
    assert not any(w in answer for w in unwanted), answer


def inline_engine(folder: Path, files: Mapping[str, str], embedder: Any) -> Iterator[Engine]:
    """An engine over the shop `files` written and indexed under `folder`, closed when the generator ends."""
    engine = Engine.open(build_inline_shop(folder, files, embedder), embedder=embedder)
    yield engine
    engine.close()


def _storefront_product(pid: int, title: str, handle: str, body: str, kind: str, vendor: str) -> dict[str, Any]:
    return {"id": pid, "title": title, "handle": handle, "body_html": body, "product_type": kind, "vendor": vendor}


def single_variant_product(
    pid: int, title: str, handle: str, body: str, kind: str, price: str, *, vendor: str, **specs: str
) -> dict[str, Any]:
    """A storefront product of one variant ("Default Title"), its `specs` as single-line metafields."""
    return {
        **_storefront_product(pid, title, handle, body, kind, vendor),
        "variants": [{"id": pid * 10 + 1, "title": "Default Title", "price": price, "available": True}],
        "metafields": [
            {"namespace": "specs", "key": k, "type": "single_line_text_field", "value": v} for k, v in specs.items()
        ],
    }


def one_option_product(
    pid: int, title: str, handle: str, body: str, kind: str, *, vendor: str, option: str, prices: Mapping[str, str]
) -> dict[str, Any]:
    """A storefront product of one option, a variant (in stock) per value at its price."""
    return {
        **_storefront_product(pid, title, handle, body, kind, vendor),
        "options": [{"name": option, "values": list(prices)}],
        "variants": [
            {"id": pid * 10 + n, "title": value, "option1": value, "price": price, "available": True}
            for n, (value, price) in enumerate(prices.items())
        ],
    }


def with_metafields(product: dict[str, Any], *, notices: dict[str, str] | None = None, **specs: str) -> dict[str, Any]:
    """`product` with `specs` as single-line metafields and `notices` as disclosure metafields."""
    fields = [{"namespace": "specs", "key": k, "type": "single_line_text_field", "value": v} for k, v in specs.items()]
    fields += [
        {"namespace": "disclosures", "key": k, "type": "multi_line_text_field", "value": v}
        for k, v in (notices or {}).items()
    ]
    return {**product, "metafields": product.get("metafields", []) + fields}


def options_product(
    pid: int,
    title: str,
    handle: str,
    body: str,
    kind: str,
    options: Mapping[str, list[str]],
    prices: Mapping[tuple[str, ...], tuple[str, bool]],
    *,
    vendor: str,
) -> dict[str, Any]:
    """A storefront product of one or more options, a variant per combination at its (price, in stock)."""
    variants = []
    for n, (values, (price, available)) in enumerate(prices.items()):
        variant = {"id": pid * 100 + n, "title": " / ".join(values), "price": price, "available": available}
        variant.update({f"option{i + 1}": v for i, v in enumerate(values)})
        variants.append(variant)
    return {
        **_storefront_product(pid, title, handle, body, kind, vendor),
        "options": [{"name": name, "values": values} for name, values in options.items()],
        "variants": variants,
    }
