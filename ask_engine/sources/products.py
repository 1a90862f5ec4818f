"""Shopify products (storefront or Admin REST JSON, GraphQL, a bare list; the product CSV export) → product Documents."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ask_engine.errors import SourceError
from ask_engine.markup import readable_text
from ask_engine.sources.files import _Reader
from ask_engine.sources.ids import _dedupe, _gid, _numeric_tail, slugify
from ask_engine.sources.markup import _text_lines, html_to_text
from ask_engine.sources.stock import _availability_fact, _stock
from ask_engine.sources.values import (
    _BadValueError,
    _compact,
    _decimal,
    _join_and,
    _json_value,
    _plural,
    _rich_text,
    format_money,
    humanise_label,
    humanise_value,
    unit_from_label,
)
from ask_engine.types import Disclosure, Document, Fact, ShopInfo, Variant

_INACTIVE_STATUSES = {"draft", "archived"}


@dataclass
class _Metafield:
    namespace: str
    key: str
    value: Any
    type: str | None
    where: str
    label: str | None = None  # the merchant's own name for it (CSV column, GraphQL definition name)


@dataclass
class _RawVariant:
    gid: str
    ident: str | None  # numeric id as a string, when the source has one
    title: str
    sku: str | None
    price: str | None
    compare_at_price: str | None
    available: bool | None
    options: tuple[tuple[str, str], ...]
    backorder: bool = False


@dataclass
class _RawProduct:
    title: str
    handle: str
    gid: str
    idents: list[str]
    body_html: str | None
    body_text: str | None
    vendor: str | None
    product_type: str | None
    category: str | None
    tags: list[str]
    options: list[tuple[str, list[str]]]
    variants: list[_RawVariant] = field(default_factory=list)
    metafields: list[_Metafield] = field(default_factory=list)


def _price(reader: _Reader, *names: str) -> str | None:
    name, value = reader.first(*names)
    if isinstance(value, dict):  # GraphQL MoneyV2 {amount, currencyCode}
        value = value.get("amount")
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if _decimal(value) is None:
        raise SourceError(reader.file, reader.path(name), f"not a price: {value!r}")
    return value.strip() if isinstance(value, str) else f"{Decimal(str(value)):.2f}"


def _tags(reader: _Reader) -> list[str]:
    name, value = reader.first("tags")
    if value is None:
        return []
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return [t.strip() for t in value if t.strip()]
    raise SourceError(reader.file, reader.path(name), "expected a list of tags or a comma-separated string")


def _options(reader: _Reader) -> list[tuple[str, list[str]]]:
    path, items = reader.items("options")
    options: list[tuple[str, list[str]]] = []
    for i, raw in enumerate(items):
        opt = _Reader(reader.file, f"{path}[{i}]", raw)
        name = opt.text("name", required=True) or ""
        values_path, values = opt.items("values", "optionValues")
        names = [(v.get("name") if isinstance(v, dict) else v) for v in values]  # GraphQL optionValues are {name}
        if not all(isinstance(v, str | int | float) for v in names):
            raise SourceError(reader.file, values_path, "expected a list of option values")
        options.append((name, [str(v) for v in names]))
    return options


def _metafields(reader: _Reader) -> list[_Metafield]:
    name, value = reader.first("metafields")
    if isinstance(value, dict) and not ({"nodes", "edges"} & value.keys()):
        # {"namespace": {"key": value | {"type": ..., "value": ...}}}: the hand-written shorthand
        found = []
        for namespace, entries in value.items():
            where = reader.path(f"{name}.{namespace}")
            if not isinstance(entries, dict):
                raise SourceError(reader.file, where, "expected an object of key: value")
            for key, entry in entries.items():
                if isinstance(entry, dict) and "value" in entry:
                    found.append(_Metafield(namespace, key, entry["value"], entry.get("type"), f"{where}.{key}"))
                else:
                    found.append(_Metafield(namespace, key, entry, None, f"{where}.{key}"))
        return found
    path, items = reader.items("metafields")
    found = []
    for i, raw in enumerate(items):
        if raw is None:  # the Storefront API's metafields(identifiers: …) lists null for each one not set
            continue
        mf = _Reader(reader.file, f"{path}[{i}]", raw)
        namespace = mf.text("namespace", required=True) or ""
        key = mf.text("key", required=True) or ""
        definition = mf.data.get("definition")
        label = definition.get("name") if isinstance(definition, dict) else None
        mtype = mf.text("type", "value_type")
        found.append(_Metafield(namespace, key, mf.data.get("value"), mtype, mf.path("value"), label))
    return found


def _json_product(file: str, where: str, raw: Any, shop: ShopInfo) -> _RawProduct | None:
    reader = _Reader(file, where, raw)
    status = reader.text("status")
    if status and status.lower() in _INACTIVE_STATUSES:
        return None
    title = reader.text("title")
    if title is None:
        named = ", ".join(f"{k} {reader.data[k]!r}" for k in ("id", "handle") if reader.data.get(k) is not None)
        raise SourceError(file, reader.path("title"), "required" + (f" (product {named})" if named else ""))
    handle = reader.text("handle") or slugify(title)
    if not handle:
        raise SourceError(file, reader.path("handle"), "required (the title gives no usable handle)")
    raw_id = reader.text("id")
    gid = reader.text("admin_graphql_api_id")
    if gid is None and raw_id and raw_id.startswith("gid://"):
        gid = raw_id
    idents = [
        i
        for i in (raw_id, reader.text("legacyResourceId"), _numeric_tail(gid) if gid else None)
        if i and not i.startswith("gid://")
    ]
    if gid is None:
        gid = _gid(shop, "Product", idents[0] if idents else handle)
    options = _options(reader)
    body_html = reader.text("body_html", "descriptionHtml", "bodyHtml")
    product = _RawProduct(
        title=title,
        handle=handle,
        gid=gid,
        idents=list(dict.fromkeys(idents)),
        body_html=body_html,
        body_text=None if body_html else reader.text("description"),
        vendor=reader.text("vendor"),
        product_type=reader.text("product_type", "productType"),
        category=_category(reader),
        tags=_tags(reader),
        options=options,
        metafields=_metafields(reader),
    )
    path, variants = reader.items("variants")
    names = [n for n, _ in options]
    for i, raw_variant in enumerate(variants):
        product.variants.append(_json_variant(_Reader(file, f"{path}[{i}]", raw_variant), names, product, shop, i))
    if not product.options:
        product.options = _options_from_variants(product.variants)
    return product


def _category(reader: _Reader) -> str | None:
    value = reader.data.get("category")
    if isinstance(value, dict):  # GraphQL TaxonomyCategory
        value = value.get("name") or value.get("fullName")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _json_variant(
    reader: _Reader, option_names: list[str], product: _RawProduct, shop: ShopInfo, n: int
) -> _RawVariant:
    raw_id = reader.text("id")
    gid = reader.text("admin_graphql_api_id")
    if gid is None and raw_id and raw_id.startswith("gid://"):
        gid = raw_id
    ident = raw_id if raw_id and not raw_id.startswith("gid://") else (reader.text("legacyResourceId"))
    if ident is None and gid:
        ident = _numeric_tail(gid)
    sku = reader.text("sku")
    options: list[tuple[str, str]] = []
    path, selected = reader.items("selectedOptions")
    for i, raw in enumerate(selected):
        opt = _Reader(reader.file, f"{path}[{i}]", raw)
        options.append((opt.text("name", required=True) or "", opt.text("value", required=True) or ""))
    if not selected:
        for position in (1, 2, 3):
            value = reader.text(f"option{position}")
            if value is not None:
                name = option_names[position - 1] if position <= len(option_names) else f"Option {position}"
                options.append((name, value))
    # Shopify's placeholder for a product without options: exports write it under "Title", or under no name at all
    # (`options: []` with `option1: "Default Title"`), and it is never an option a shopper can choose.
    options = [(k, v) for k, v in options if v != "Default Title"]
    title = reader.text("title") or " / ".join(v for _, v in options) or "Default Title"
    if gid is None:
        gid = _gid(shop, "ProductVariant", ident or sku or f"{product.handle}-{n + 1}")
    available, backorder = _stock(reader)
    return _RawVariant(
        gid=gid,
        ident=ident,
        title=title,
        sku=sku,
        price=_price(reader, "price", "priceV2"),
        compare_at_price=_price(reader, "compare_at_price", "compareAtPrice", "compareAtPriceV2"),
        available=available,
        options=tuple(options),
        backorder=backorder,
    )


def _options_from_variants(variants: Sequence[_RawVariant]) -> list[tuple[str, list[str]]]:
    options: dict[str, list[str]] = {}
    for variant in variants:
        for name, value in variant.options:
            values = options.setdefault(name, [])
            if value not in values:
                values.append(value)
    return list(options.items())


def json_items(file: str, text: str) -> tuple[str, list[Any]]:
    """A products JSON file's product objects, and the path its positions are reported under ("products.nodes")."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(file, f"line {exc.lineno}, column {exc.colno}", exc.msg) from None
    prefix = "products"
    if isinstance(data, dict):
        if isinstance(data.get("data"), dict):  # a GraphQL response
            data = data["data"]
        if "products" in data:
            data = data["products"]
            if isinstance(data, dict):
                for key in ("nodes", "edges"):
                    if isinstance(data.get(key), list):
                        prefix = f"products.{key}"
                        data = [e.get("node") if key == "edges" and isinstance(e, dict) else e for e in data[key]]
                        break
        elif isinstance(data.get("product"), dict):
            prefix, data = "product", [data["product"]]
        elif "title" in data:
            prefix, data = "", [data]
    else:
        prefix = ""
    if not isinstance(data, list):
        raise SourceError(file, "products", 'expected a list of products (or {"products": [...]})')
    return prefix, data


def json_item(file: str, prefix: str, i: int, raw: Any, shop: ShopInfo) -> _RawProduct | None:
    """The product at position `i` of a products JSON file (None for one that is not sold, such as a draft)."""
    if isinstance(raw, dict) and set(raw) == {"node"}:
        raw = raw["node"]
    return _json_product(file, f"{prefix}[{i}]" if prefix != "product" else prefix, raw, shop)


_CSV_METAFIELD = re.compile(r"^(.*?)\s*\(product\.metafields\.([^.\s()]+)\.([^\s()]+)\)\s*$")


def _csv_products(file: str, text: str, shop: ShopInfo) -> Iterator[_RawProduct]:
    """A Shopify product export: rows grouped by Handle, the first row of a handle carries the product fields."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise SourceError(file, "row 1", f"unreadable CSV ({exc})") from None
    header = [h.strip() for h in header]
    reader.fieldnames = header
    if "Handle" not in header:
        raise SourceError(file, "row 1", "header row has no 'Handle' column (expected a Shopify product export)")
    metafield_columns: list[tuple[str, str, str, str]] = [
        (col, m.group(1), m.group(2), m.group(3)) for col in header if (m := _CSV_METAFIELD.match(col))
    ]
    current: _RawProduct | None = None
    skipped: set[str] = set()
    line = 1  # spreadsheet row number: the header is row 1
    try:
        for row in reader:
            line += 1
            get = {k: (v or "").strip() for k, v in row.items() if k is not None and isinstance(v, str)}
            handle = get.get("Handle", "")
            if not handle:
                if not any(get.values()):
                    continue
                raise SourceError(file, f"row {line}, column Handle", "required")
            if handle in skipped:
                continue
            if current is None or current.handle != handle:
                if current is not None:
                    yield current
                current = _csv_first_row(file, line, get, handle, shop, metafield_columns)
                if current is None:
                    skipped.add(handle)
                    continue
            variant = _csv_variant(file, line, get, current, shop)
            if variant is not None:
                current.variants.append(variant)
    except csv.Error as exc:
        raise SourceError(file, f"row {line + 1}", f"unreadable CSV ({exc})") from None
    if current is not None:
        yield current


def _csv_first_row(
    file: str,
    line: int,
    get: dict[str, str],
    handle: str,
    shop: ShopInfo,
    metafield_columns: list[tuple[str, str, str, str]],
) -> _RawProduct | None:
    status = get.get("Status", "").lower()
    if status in _INACTIVE_STATUSES or get.get("Published", "").lower() == "false":
        return None
    title = get.get("Title", "")
    if not title:
        raise SourceError(file, f"row {line}, column Title", f"required on the first row of handle {handle!r}")
    options: list[tuple[str, list[str]]] = []
    for n in (1, 2, 3):
        name = get.get(f"Option{n} Name", "")
        if name and not (name == "Title" and get.get(f"Option{n} Value") == "Default Title"):
            options.append((name, []))
    product = _RawProduct(
        title=title,
        handle=handle,
        gid=_gid(shop, "Product", handle),
        idents=[],
        body_html=get.get("Body (HTML)") or None,
        body_text=None,
        vendor=get.get("Vendor") or None,
        product_type=get.get("Type") or None,
        category=get.get("Product Category") or None,
        tags=[t.strip() for t in get.get("Tags", "").split(",") if t.strip()],
        options=options,
    )
    for column, label, namespace, key in metafield_columns:
        if get.get(column):
            product.metafields.append(
                _Metafield(namespace, key, get[column], None, f"row {line}, column {column}", label or None)
            )
    return product


def _csv_variant(file: str, line: int, get: dict[str, str], product: _RawProduct, shop: ShopInfo) -> _RawVariant | None:
    values = [get.get(f"Option{n} Value", "") for n in (1, 2, 3)]
    if not (any(values) or get.get("Variant SKU") or get.get("Variant Price")):
        return None  # an image-only continuation row
    options = []
    for n, value in enumerate(values):
        if not value or value == "Default Title":
            continue
        if n >= len(product.options):
            raise SourceError(
                file, f"row {line}, column Option{n + 1} Value", f"no Option{n + 1} Name on the product's first row"
            )
        name, seen = product.options[n]
        options.append((name, value))
        if value not in seen:
            seen.append(value)
    for column in ("Variant Price", "Variant Compare At Price", "Variant Inventory Qty"):
        if get.get(column) and _decimal(get[column]) is None:
            raise SourceError(file, f"row {line}, column {column}", f"not a number: {get[column]!r}")
    available: bool | None = None
    backorder = False
    if "Variant Inventory Tracker" in get and not get["Variant Inventory Tracker"]:
        available = True  # not tracked: always for sale
    elif get.get("Variant Inventory Qty"):
        qty = _decimal(get["Variant Inventory Qty"]) or Decimal(0)
        backorder = qty <= 0 and get.get("Variant Inventory Policy", "").lower() == "continue"
        available = qty > 0 or backorder
    sku = get.get("Variant SKU") or None
    n = len(product.variants) + 1
    return _RawVariant(
        gid=_gid(shop, "ProductVariant", sku or f"{product.handle}-{n}"),
        ident=None,
        title=" / ".join(v for _, v in options) or "Default Title",
        sku=sku,
        price=get.get("Variant Price") or None,
        compare_at_price=get.get("Variant Compare At Price") or None,
        available=available,
        options=tuple(options),
        backorder=backorder,
    )


def _product_document(file: str, raw: _RawProduct, shop: ShopInfo) -> Document:
    facts: list[Fact] = []
    disclosures: list[Disclosure] = []
    if raw.vendor:
        facts.append(Fact("vendor", "Brand", raw.vendor, "field"))
    if raw.product_type:
        facts.append(Fact("product_type", "Type", raw.product_type, "field"))
    if raw.category:
        facts.append(Fact("category", "Category", raw.category, "field"))
    facts.extend(_price_facts(raw.variants, shop.currency))
    for mf in raw.metafields:
        if mf.namespace == shop.disclosure_namespace:
            content = _disclosure_text(file, mf)
            if content:
                disclosures.append(Disclosure(code=mf.key, content=content, content_type="markdown"))
                # the notice is also a recorded fact, so a question it answers ("does it contain nuts?", "can my
                # 16-year-old buy it?") is answered from it, not only warned about
                notice = readable_text(content)
                if notice:
                    facts.append(Fact(mf.key, mf.label or humanise_label(mf.key), notice, "disclosure"))
            continue
        if shop.facts_namespaces is not None and mf.namespace not in shop.facts_namespaces:
            continue
        try:
            value = humanise_value(mf.value, mf.type, shop.currency)
        except _BadValueError as exc:
            raise SourceError(file, mf.where, f"{exc} (type {mf.type})") from None
        label = mf.label or humanise_label(mf.key)
        if value:
            label, value = unit_from_label(label, value)  # "dha_mg": 480 → "Dha: 480 mg"
        fact = Fact(mf.key, label, value, "metafield") if value else None
        if fact is not None and fact not in facts:
            facts.append(fact)
    for name, raw_values in raw.options:
        values = [v for v in raw_values if v != "Default Title"]
        if values and name != "Title":
            key = slugify(name).replace("-", "_") + "_options"
            facts.append(Fact(key, _plural(name, shop.language), ", ".join(values), "field"))
    availability = _availability_fact(raw.variants)
    if availability is not None:
        facts.append(availability)
    variants = tuple(
        Variant(
            gid=v.gid,
            title=v.title,
            sku=v.sku,
            price=v.price,
            compare_at_price=v.compare_at_price,
            available=v.available,
            options=v.options,
            backorder=v.backorder,
        )
        for v in raw.variants
    )
    url = f"{shop.url}/products/{raw.handle}"
    aliases = _dedupe(
        [raw.gid]
        + [v.gid for v in raw.variants]
        + [v.sku for v in raw.variants]
        + [raw.handle]
        + raw.idents
        + [v.ident for v in raw.variants]
        + [f"/products/{raw.handle}"]
    )
    body = html_to_text(raw.body_html) if raw.body_html else "\n".join(_text_lines(raw.body_text or ""))
    return Document(
        id=f"product:{raw.gid}",
        kind="product",
        title=raw.title,
        url=url,
        link_type="product",
        source=file,
        gid=raw.gid,
        handle=raw.handle,
        body=body,
        facts=tuple(facts),
        variants=variants,
        disclosures=tuple(disclosures),
        aliases=aliases,
        vendor=raw.vendor,
        product_type=raw.product_type,
        tags=tuple(raw.tags),
        options=tuple(
            (name, tuple(v for v in values if v != "Default Title"))
            for name, values in raw.options
            if name != "Title" and any(v != "Default Title" for v in values)
        ),
        currency=shop.currency,
    )


def _disclosure_text(file: str, mf: _Metafield) -> str:
    if mf.value is None:
        return ""
    if (mf.type or "").lower() == "rich_text_field" or (isinstance(mf.value, dict) and mf.value.get("type") == "root"):
        try:
            return _rich_text(_json_value(mf.value), markdown=True)
        except _BadValueError as exc:
            raise SourceError(file, mf.where, str(exc)) from None
    if isinstance(mf.value, str):
        return mf.value.strip()  # verbatim: disclosures go out exactly as the merchant wrote them
    return _compact(mf.value)


def _price_facts(variants: Sequence[_RawVariant], currency: str) -> list[Fact]:
    priced = [(v, p) for v in variants if (p := _decimal(v.price)) is not None]
    if not priced:
        return []
    low = min(p for _, p in priced)
    high = max(p for _, p in priced)
    value = (
        format_money(low, currency)
        if low == high
        else f"from {format_money(low, currency)} to {format_money(high, currency)}"
    )
    facts = [Fact("price", "Price", value, "field")]
    sale = [(v, p, c) for v, p in priced if (c := _decimal(v.compare_at_price)) is not None and c > p]
    if sale:
        pairs = {(p, c) for _, p, c in sale}
        if len(sale) == len(priced) and len(pairs) == 1:
            p, c = next(iter(pairs))
            text = f"{format_money(p, currency)}, reduced from {format_money(c, currency)}"
        else:
            shown = [
                f"{name} at {format_money(p, currency)}, reduced from {format_money(c, currency)}"
                for name, p, c in _sale_groups(sale, [v for v, _ in priced])
            ]
            text = "; ".join(shown[:12]) + (f"; and {len(shown) - 12} more variants" if len(shown) > 12 else "")
        facts.append(Fact("sale", "Sale", text, "field"))
    return facts


def _sale_groups(
    sale: Sequence[tuple[_RawVariant, Decimal, Decimal]], variants: Sequence[_RawVariant]
) -> list[tuple[str, Decimal, Decimal]]:
    """The variants on sale as (name, price, was), one entry per price pair when an option value names exactly the
    variants at that pair ("S at CA$39.99, reduced from CA$49.99" for every colour of size S), else one per variant."""
    pairs: dict[tuple[Decimal, Decimal], list[_RawVariant]] = {}
    for v, p, c in sale:
        pairs.setdefault((p, c), []).append(v)
    holders: dict[tuple[int, str], set[str]] = {}  # (option position, value) -> the variants that have it
    for v in variants:
        for position, (_, value) in enumerate(v.options):
            holders.setdefault((position, value), set()).add(v.gid)
    out: list[tuple[str, Decimal, Decimal]] = []
    for (p, c), group in pairs.items():
        ids = {g.gid for g in group}
        name = None
        for position in range(len(group[0].options)):
            values = list(dict.fromkeys(_option_at(g, position) or "" for g in group))
            # the values at this option are the group's own: every variant with one of them is in the group
            if all(value and holders.get((position, value), set()) <= ids for value in values):
                name = _join_and(values)
                break
        if name is not None and len(group) > 1:
            out.append((name, p, c))
        else:
            out += [(v.title, p, c) for v in group]
    return out


def _option_at(variant: _RawVariant, position: int) -> str | None:
    return variant.options[position][1] if position < len(variant.options) else None
