"""Shop sources (Shopify products JSON/CSV, Markdown/HTML pages and policies with front matter, FAQ) → Documents.

A shop folder holds `shop.toml` plus any of: `products.json`, `products/*.json`, `products.csv`, `products/*.csv`,
`policies/*.{md,html}`, `pages/*.{md,html}`, `faq.{json,yaml,yml,md}`, `faq/*.{json,yaml,yml,md}`. The full format
is described in `docs/shop-format.md`. Every problem raises `SourceError(file, where, problem)` with `file` relative to
the shop folder and `where` a field path (`products[3].title`, `front matter: type`) or a line/row number.

Ids: every string in `Document.aliases` is meant to go through `alias_key` before it is stored or looked up;
`alias_keys(doc)` does that for one document and also registers the handle under both `handle:` and `id:`.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import yaml

from ask_engine.errors import SourceError
from ask_engine.markup import strip_tags
from ask_engine.types import Disclosure, Document, Fact, Section, ShopInfo, Variant

__all__ = [
    "POLICY_TYPES",
    "ShopSource",
    "alias_key",
    "alias_keys",
    "load_documents",
    "load_shop_info",
    "slugify",
]

POLICY_TYPES = ("refund_policy", "shipping_policy", "privacy_policy", "terms_of_service")
_TEXT_SUFFIXES = (".md", ".markdown", ".html", ".htm")
_FAQ_SUFFIXES = (".json", ".yaml", ".yml", ".md", ".markdown")
_INACTIVE_STATUSES = {"draft", "archived"}
_SENTENCE_END = (".", "!", "?", ":", ";", "…", "。", "！", "？")


# --------------------------------------------------------------------------------------------------- ids and slugs


def slugify(text: str) -> str:
    """Lower-case, accent-free, hyphen-separated: "Größe & Fit!" → "grosse-fit"; non-Latin letters are kept."""
    chars = []
    for char in text.replace("ß", "ss"):
        base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
        # Accents come off Latin letters only: a Japanese voiced mark changes the letter, it is not decoration.
        chars.append(base if base.isascii() else unicodedata.normalize("NFKC", char))
    return re.sub(r"[\W_]+", "-", "".join(chars).lower()).strip("-")


_PRODUCT_PATH = re.compile(r"(?:^|/)products/([^/]+)")
_HOST_LIKE = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?/", re.IGNORECASE)


def alias_key(raw: str, *, fragment: bool = False) -> str | None:
    """Normalise one id as a shopper or platform sends it; None for an empty one.

    - `gid://...` → unchanged (GIDs are case-sensitive and already canonical).
    - A URL (`http(s)://`, a path starting with `/`, or `host.tld/...`): host, query string and fragment are ignored;
      a path holding `/products/<handle>` (also under `/collections/x/` or a locale prefix such as `/en-gb/`) →
      `handle:<handle>`, any other path → `path:<path>` (lower-case, no trailing slash).
    - Anything else (SKU, handle, numeric id) → `id:<casefolded>`.

    `fragment=True` keeps a URL's `#fragment` on `path:` keys (`path:/pages/faq#returns`): FAQ entries share one page
    URL and are registered that way, so a resolver tries the key with the fragment first, then without it.
    """
    value = raw.strip()
    if not value:
        return None
    if value.startswith("gid://"):
        return value
    lowered = value.lower()
    if lowered.startswith(("http://", "https://", "/")) or _HOST_LIKE.match(value):
        if not lowered.startswith(("http://", "https://", "/")):
            value = "https://" + value
        parts = urlsplit(value)
        path = unquote(parts.path)
        match = _PRODUCT_PATH.search(path)
        if match:
            return "handle:" + match.group(1).lower()
        key = "path:" + (path.rstrip("/").lower() or "/")
        return f"{key}#{unquote(parts.fragment).lower()}" if fragment and parts.fragment else key
    return "id:" + value.casefold()


def alias_keys(doc: Document) -> dict[str, str | None]:
    """alias key → variant GID for keys that name one variant (its GID, SKU, numeric id), None for the document.

    The handle is registered under both `handle:` (from URLs) and `id:` (a bare handle in `ids`). FAQ entries are
    registered under their page path with the entry's fragment (see `alias_key(raw, fragment=True)`).
    """
    keys: dict[str, str | None] = {}
    for alias in doc.aliases:
        key = alias_key(alias, fragment=doc.kind == "faq")
        if key is not None:
            keys.setdefault(key, None)
    if doc.handle:
        keys.setdefault("handle:" + doc.handle.lower(), None)
        keys.setdefault("id:" + doc.handle.casefold(), None)
    for variant in doc.variants:
        for name in (variant.gid, variant.sku, _numeric_tail(variant.gid)):
            variant_key = alias_key(name) if name else None
            if variant_key is not None:
                keys[variant_key] = variant.gid
    return keys


def _numeric_tail(gid: str) -> str | None:
    tail = gid.rsplit("/", 1)[-1]
    return tail if tail.isdigit() else None


def _gid(shop: ShopInfo, kind: str, ident: str) -> str:
    return f"gid://{shop.gid_namespace}/{kind}/{quote(ident, safe='-_.~')}"


def _dedupe(items: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


# --------------------------------------------------------------------------------------------------- shop.toml


def load_shop_info(shop_dir: str | Path) -> ShopInfo:
    """Read `shop.toml`'s `[shop]` table: name, url (required); currency, language, gid_namespace,
    disclosure_namespace (default "disclosures"), facts_namespaces (default: every namespace but the disclosure one).
    """
    path = Path(shop_dir) / "shop.toml"
    if not path.is_file():
        raise SourceError("shop.toml", "", f"missing: every shop folder needs a shop.toml ({Path(shop_dir)})")
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except UnicodeDecodeError as exc:
        raise SourceError("shop.toml", "", f"not UTF-8 text ({exc.reason})") from None
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise SourceError("shop.toml", f"line {line.group(1)}" if line else "", str(exc)) from None
    table = data.get("shop")
    if not isinstance(table, dict):
        raise SourceError("shop.toml", "shop", "missing [shop] table")
    info: dict[str, Any] = {}
    for name in ("name", "url", "currency", "language", "gid_namespace", "disclosure_namespace"):
        value = table.get(name)
        if value is None:
            if name in ("name", "url"):
                raise SourceError("shop.toml", f"shop.{name}", "required")
            continue
        if not isinstance(value, str) or not value.strip():
            raise SourceError("shop.toml", f"shop.{name}", "must be a non-empty string")
        info[name] = value.strip()
    if not re.match(r"^https?://[^/\s]+", info["url"]):
        raise SourceError("shop.toml", "shop.url", f"must be an http(s) URL, got {info['url']!r}")
    info["url"] = info["url"].rstrip("/")
    if "currency" in info:
        info["currency"] = info["currency"].upper()
    if "gid_namespace" in info and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", info["gid_namespace"]):
        raise SourceError("shop.toml", "shop.gid_namespace", "use letters, digits, '.', '_' or '-' only")
    namespaces = table.get("facts_namespaces")
    if namespaces is not None:
        if not isinstance(namespaces, list) or not all(isinstance(n, str) and n for n in namespaces):
            raise SourceError("shop.toml", "shop.facts_namespaces", "must be a list of namespace names")
        info["facts_namespaces"] = tuple(namespaces)
    return ShopInfo.from_dict(info)


# --------------------------------------------------------------------------------------------------- text


@dataclass
class _Block:
    """One line of text, or a heading that starts a section."""

    text: str
    level: int = 0  # 0: a line of text; 1-6: a heading
    anchor: str = ""  # explicit anchor (`id` attribute or `{#id}`)


_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCK_TAGS = {
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "div", "dl",
    "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "hr", "html", "li", "main", "nav",
    "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
}  # fmt: skip
_BLOCKISH = sorted(_BLOCK_TAGS | _HEADINGS)
_SKIP_TAGS = {
    "audio", "button", "canvas", "embed", "head", "iframe", "img", "input", "noscript", "object", "picture",
    "script", "select", "style", "svg", "template", "textarea", "video",
}  # fmt: skip
_EXPLICIT_ANCHOR = re.compile(r"\s*\{#([^\s}]+)[^}]*\}\s*$")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _sentence(line: str) -> str:
    """A line as a sentence: list items, table rows and headings often lack a full stop."""
    stripped = line.rstrip("\"'”’)]*_ ")
    return line if stripped.endswith(_SENTENCE_END) else line + "."


class _HtmlText:
    """Walks parsed HTML into lines (one per paragraph, list item or table row) and section headings."""

    def __init__(self, split_level: int) -> None:
        self.split_level = split_level
        self.blocks: list[_Block] = []
        self._buffer: list[str] = []
        self._pre = 0

    def flush(self) -> None:
        text = "".join(self._buffer)
        self._buffer = []
        for raw in text.split("\n"):
            line = _collapse(raw)
            if line:
                self.blocks.append(_Block(_sentence(line)))

    def walk(self, node: Any) -> None:
        from bs4 import Comment, Declaration, Doctype, NavigableString, ProcessingInstruction, Tag

        for child in node.children:
            if isinstance(child, Comment | Declaration | Doctype | ProcessingInstruction):
                continue
            if isinstance(child, NavigableString):
                self._buffer.append(str(child) if self._pre else str(child).replace("\n", " "))
                continue
            if not isinstance(child, Tag) or child.name in _SKIP_TAGS:
                continue
            name = child.name
            if name == "br":
                self._buffer.append("\n")
            elif name in _HEADINGS:
                self.flush()
                self._heading(child)
            elif name == "table":
                self.flush()
                self._table(child)
            elif name in _BLOCK_TAGS or child.find(_BLOCKISH) is not None:
                self.flush()
                self._pre += name == "pre"
                self.walk(child)
                self._pre -= name == "pre"
                self.flush()
            else:
                self.walk(child)  # inline: links, emphasis, code keep flowing into the current line

    def _heading(self, tag: Any) -> None:
        text = _collapse(tag.get_text())
        anchor = str(tag.get("id") or "")
        match = _EXPLICIT_ANCHOR.search(text)
        if match:
            anchor, text = match.group(1), text[: match.start()].rstrip()
        if not anchor:
            named = tag.find("a", attrs={"id": True}) or tag.find("a", attrs={"name": True})
            if named is not None:
                anchor = str(named.get("id") or named.get("name") or "")
        if not text:
            return
        level = int(tag.name[1])
        if level <= self.split_level:
            self.blocks.append(_Block(text, level, anchor))
        else:
            self.blocks.append(_Block(_sentence(text)))

    def _table(self, table: Any) -> None:
        rows = [
            [_collapse(cell.get_text(" ")) for cell in tr.find_all(["td", "th"], recursive=False)]
            for tr in table.find_all("tr")
        ]
        first = table.find("tr")
        has_header = first is not None and (
            first.find_parent("thead") is not None
            or all(cell.name == "th" for cell in first.find_all(["td", "th"], recursive=False))
        )
        caption = table.find("caption")
        if caption is not None and _collapse(caption.get_text()):
            self.blocks.append(_Block(_sentence(_collapse(caption.get_text()))))
        header = rows.pop(0) if has_header and rows else []
        for cells in rows:
            if not any(cells):
                continue
            if header and len(header) == len(cells):
                parts = [f"{h}: {v}" if h else v for h, v in zip(header, cells, strict=True) if v]
                line = ", ".join(parts)
            else:
                line = " | ".join(c for c in cells if c)
            self.blocks.append(_Block(_sentence(line)))
        if header and not rows:
            self.blocks.append(_Block(_sentence(" | ".join(h for h in header if h))))


def _html_blocks(html: str, split_level: int = 4) -> list[_Block]:
    from bs4 import BeautifulSoup

    walker = _HtmlText(split_level)
    walker.walk(BeautifulSoup(html, "html.parser"))
    walker.flush()
    # The parser decodes entities: "&lt;script&gt;" in the source is now "<script>" in the text. Markup the
    # merchant escaped is still markup, never text to quote.
    blocks: list[_Block] = []
    for block in walker.blocks:
        text = _collapse(strip_tags(block.text, decode=True))
        if text != block.text and not any(ch.isalnum() for ch in text):
            continue  # the line was only markup ("<script>…</script>.")
        block.text = text
        blocks.append(block)
    return blocks


_SHORT_LINE = 60  # addresses, opening hours, "Phone: ..." lines; hard-wrapped prose runs longer


def _markdown_html(text: str) -> str:
    """Markdown → HTML. A paragraph of short lines keeps its line breaks (an address or a contact block), while
    hard-wrapped prose is joined as CommonMark says."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    tokens = md.parse(text)
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        lines = [line.strip() for line in token.content.splitlines() if line.strip()]
        if len(lines) > 1 and all(len(line) <= _SHORT_LINE for line in lines):
            for child in token.children:
                if child.type == "softbreak":
                    child.type = "hardbreak"
    return md.renderer.render(tokens, md.options, {})


def _blocks(text: str, markdown: bool, split_level: int = 4) -> list[_Block]:
    return _html_blocks(_markdown_html(text) if markdown else text, split_level)


def html_to_text(html: str) -> str:
    """Plain text of an HTML fragment: one line per paragraph, list item, heading or table row."""
    return "\n".join(b.text for b in _html_blocks(html, split_level=0))


def markdown_to_text(text: str) -> str:
    """Plain text of Markdown (or HTML inside Markdown), laid out like `html_to_text`."""
    return html_to_text(_markdown_html(text))


# --------------------------------------------------------------------------------------------------- humanising


_CURRENCY_SYMBOLS = {
    "GBP": "£", "EUR": "€", "USD": "$", "JPY": "¥", "CNY": "CN¥", "INR": "₹", "KRW": "₩", "CAD": "CA$", "AUD": "A$",
    "NZD": "NZ$", "HKD": "HK$", "SGD": "S$", "MXN": "MX$", "BRL": "R$", "ILS": "₪", "PHP": "₱", "VND": "₫",
    "TWD": "NT$", "THB": "฿", "TRY": "₺", "UAH": "₴", "NGN": "₦", "PLN": "zł",
}  # fmt: skip
_ZERO_DECIMAL = {"JPY", "KRW", "VND", "CLP", "ISK", "HUF", "TWD", "UGX", "XAF", "XOF"}
_SUFFIX_SYMBOLS = {"PLN"}  # written after the amount: "89.00 zł"
_UNITS = {
    "GRAMS": "g", "KILOGRAMS": "kg", "OUNCES": "oz", "POUNDS": "lb", "MILLIMETERS": "mm", "CENTIMETERS": "cm",
    "METERS": "m", "INCHES": "in", "FEET": "ft", "YARDS": "yd", "MILLILITERS": "ml", "CENTILITERS": "cl",
    "LITERS": "l", "CUBIC_METERS": "m³", "FLUID_OUNCES": "fl oz", "PINTS": "pt", "QUARTS": "qt", "GALLONS": "gal",
    "IMPERIAL_FLUID_OUNCES": "imp fl oz", "IMPERIAL_PINTS": "imp pt", "IMPERIAL_QUARTS": "imp qt",
    "IMPERIAL_GALLONS": "imp gal", "m3": "m³", "us_fl_oz": "US fl oz", "us_pt": "US pt", "us_qt": "US qt",
    "us_gal": "US gal", "imp_fl_oz": "imp fl oz", "imp_pt": "imp pt", "imp_qt": "imp qt", "imp_gal": "imp gal",
}  # fmt: skip


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = Decimal(str(value).strip().replace(",", ""))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _number(value: Any) -> str:
    number = _decimal(value)
    if number is None:
        return str(value)
    text = format(number.normalize(), "f")
    return "0" if text in ("-0", "") else text


def format_money(amount: Any, currency: str) -> str:
    """Money as shoppers read it: £89.00, €1,250.00, ¥1,200, 89.00 CHF (ISO code when no symbol is well known)."""
    number = _decimal(amount)
    if number is None:
        return f"{amount} {currency}".strip()
    code = currency.upper()
    text = f"{number:,.0f}" if code in _ZERO_DECIMAL else f"{number:,.2f}"
    symbol = _CURRENCY_SYMBOLS.get(code)
    if symbol is None:
        return f"{text} {code}"
    return f"{text} {symbol}" if code in _SUFFIX_SYMBOLS else f"{symbol}{text}"


def _join_and(items: Sequence[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def humanise_label(key: str) -> str:
    """Label from a key: country_of_origin → "Country of origin", careInstructions → "Care instructions"."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key).replace("_", " ").replace("-", " ").replace(".", " ")
    words = _collapse(words)
    if not words:
        return key
    parts = [w if (w.isupper() and len(w) > 1) else w.lower() for w in words.split(" ")]
    first = parts[0]
    parts[0] = first[:1].upper() + first[1:]
    return " ".join(parts)


def _rich_inline(node: Any, markdown: bool) -> str:
    if not isinstance(node, dict):
        return ""
    if node.get("type") == "text":
        value = str(node.get("value", ""))
        return f"**{value}**" if markdown and value.strip() and node.get("bold") else value
    inner = "".join(_rich_inline(c, markdown) for c in node.get("children") or ())
    if node.get("type") == "link" and markdown and node.get("url"):
        return f"[{inner}]({node['url']})"
    return inner


def _rich_text(root: Any, markdown: bool) -> str:
    """Text of a Shopify rich_text_field JSON tree; Markdown when `markdown` (disclosures keep their layout)."""
    if not isinstance(root, dict) or root.get("type") != "root":
        raise _BadValueError('expected a rich text tree {"type": "root", "children": [...]}')
    blocks: list[str] = []
    for node in root.get("children") or ():
        if not isinstance(node, dict):
            continue
        if node.get("type") == "list":
            items = [_collapse(_rich_inline(i, markdown)) for i in node.get("children") or ()]
            ordered = node.get("listType") == "ordered"
            if markdown:
                blocks.append("\n".join(f"{n}. {i}" if ordered else f"- {i}" for n, i in enumerate(items, 1) if i))
            else:
                blocks.append(_sentence(_join_and(items)) if items else "")
        elif node.get("type") == "heading" and markdown:
            blocks.append("#" * int(node.get("level") or 3) + " " + _collapse(_rich_inline(node, markdown)))
        else:
            blocks.append(_collapse(_rich_inline(node, markdown)))
    return ("\n\n" if markdown else " ").join(b for b in blocks if b)


class _BadValueError(ValueError):
    """A metafield value that does not match its declared type."""


def _json_value(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise _BadValueError(f"not valid JSON ({exc.msg})") from None
    return value


def humanise_value(value: Any, mtype: str | None, currency: str = "USD") -> str | None:
    """A metafield value as a shopper reads it; None when there is nothing to show (empty, a reference).

    Raises _BadValueError when the value does not match its type.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    mtype = (mtype or "").strip().lower()
    if mtype.endswith("_reference"):
        return None  # GIDs of other resources mean nothing to a shopper
    if mtype.startswith("list."):
        items = _json_value(value)
        if not isinstance(items, list):
            raise _BadValueError("expected a JSON list")
        inner = [humanise_value(item, mtype[5:], currency) for item in items]
        return _join_and([i for i in inner if i]) or None
    if mtype == "boolean":
        if isinstance(value, bool):
            return "yes" if value else "no"
        text = str(value).strip().lower()
        if text not in ("true", "false"):
            raise _BadValueError("expected true or false")
        return "yes" if text == "true" else "no"
    if mtype in ("dimension", "weight", "volume"):
        data = _json_value(value)
        if not isinstance(data, dict) or "value" not in data:
            raise _BadValueError('expected {"value": ..., "unit": ...}')
        unit = str(data.get("unit") or "")
        return f"{_number(data['value'])} {_UNITS.get(unit, unit)}".strip()
    if mtype == "rating":
        data = _json_value(value)
        if not isinstance(data, dict) or "value" not in data:
            raise _BadValueError('expected {"value": ..., "scale_max": ...}')
        scale = data.get("scale_max")
        return f"{_number(data['value'])} out of {_number(scale)}" if scale is not None else _number(data["value"])
    if mtype == "money":
        data = _json_value(value)
        if not isinstance(data, dict) or "amount" not in data:
            raise _BadValueError('expected {"amount": ..., "currency_code": ...}')
        return format_money(data["amount"], str(data.get("currency_code") or data.get("currencyCode") or currency))
    if mtype == "rich_text_field":
        return _rich_text(_json_value(value), markdown=False) or None
    if mtype == "json":
        return _compact(_json_value(value)) or None
    if mtype in ("number_integer", "number_decimal"):
        if _decimal(value) is None:
            raise _BadValueError("expected a number")
        return str(value).strip()
    if mtype == "multi_line_text_field" or (isinstance(value, str) and "\n" in value.strip()):
        lines = [_collapse(line) for line in str(value).splitlines() if line.strip()]
        return "; ".join(line.rstrip(";") for line in lines)
    if not mtype:
        return _untyped(value)
    return _collapse(str(value)) if isinstance(value, str) else _compact(value)


def _untyped(value: Any) -> str | None:
    """Values without a declared type (CSV columns, hand-written JSON): guess booleans, JSON and GIDs."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, str):
        return _compact(value) or None
    text = value.strip()
    if text.lower() in ("true", "false"):
        return "yes" if text.lower() == "true" else "no"
    if text.startswith("gid://"):
        return None
    if text[:1] in "[{":
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            return _collapse(text)
        if isinstance(parsed, dict) and {"value", "unit"} <= parsed.keys():
            return humanise_value(parsed, "dimension")
        if isinstance(parsed, dict) and "amount" in parsed:
            return humanise_value(parsed, "money")
        if isinstance(parsed, dict) and parsed.get("type") == "root":
            return humanise_value(parsed, "rich_text_field")
        return _compact(parsed) or None
    return _collapse(text)


def _compact(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{humanise_label(str(k))}: {_compact(v)}" for k, v in value.items() if _compact(v))
    if isinstance(value, list):
        return _join_and([_compact(v) for v in value])
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return ""
    return _collapse(str(value))


def _plural(word: str, language: str) -> str:
    if not language.lower().startswith("en") or not word or word[-1:] in "sS" or not word[-1:].isalpha():
        return word
    if re.search(r"[^aeiou]y$", word, re.IGNORECASE):
        return word[:-1] + "ies"
    if re.search(r"(ch|sh|x|z)$", word, re.IGNORECASE):
        return word + "es"
    return word + "s"


# --------------------------------------------------------------------------------------------------- products


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


class _Reader:
    """Field access on one JSON object with errors that name the file and the field path."""

    def __init__(self, file: str, where: str, data: Any) -> None:
        if not isinstance(data, dict):
            raise SourceError(file, where, f"expected an object, got {type(data).__name__}")
        self.file, self.where, self.data = file, where, data

    def path(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def first(self, *names: str) -> tuple[str, Any]:
        """The first of `names` present with a non-null value: (name, value)."""
        for name in names:
            if self.data.get(name) is not None:
                return name, self.data[name]
        return names[0], None

    def text(self, *names: str, required: bool = False) -> str | None:
        name, value = self.first(*names)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise SourceError(self.file, self.path(name), "required")
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise SourceError(self.file, self.path(name), f"expected text, got {type(value).__name__}")
        return str(value).strip()

    def items(self, *names: str) -> tuple[str, list[Any]]:
        """A list, a GraphQL connection (`nodes` / `edges[].node`), or nothing."""
        name, value = self.first(*names)
        path = self.path(name)
        if value is None:
            return path, []
        if isinstance(value, dict):
            if isinstance(value.get("nodes"), list):
                return path + ".nodes", value["nodes"]
            if isinstance(value.get("edges"), list):
                return path + ".edges", [e.get("node") if isinstance(e, dict) else e for e in value["edges"]]
        if not isinstance(value, list):
            raise SourceError(self.file, path, f"expected a list, got {type(value).__name__}")
        return path, value


def _price(reader: _Reader, *names: str) -> str | None:
    name, value = reader.first(*names)
    if isinstance(value, dict):  # GraphQL MoneyV2 {amount, currencyCode}
        value = value.get("amount")
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if _decimal(value) is None:
        raise SourceError(reader.file, reader.path(name), f"not a price: {value!r}")
    return value.strip() if isinstance(value, str) else f"{Decimal(str(value)):.2f}"


def _availability(reader: _Reader) -> bool | None:
    for name in ("available", "availableForSale", "available_for_sale"):
        value = reader.data.get(name)
        if isinstance(value, bool):
            return value
    tracked = reader.data.get("inventory_management", ...)
    item = reader.data.get("inventoryItem")
    if tracked is None or (isinstance(item, dict) and item.get("tracked") is False):
        return True  # inventory not tracked: Shopify always sells it
    _, qty = reader.first("inventory_quantity", "inventoryQuantity")
    if qty is None:
        return None
    number = _decimal(qty)
    if number is None:
        raise SourceError(reader.file, reader.path("inventory_quantity"), f"not a number: {qty!r}")
    _, policy = reader.first("inventory_policy", "inventoryPolicy")
    return number > 0 or str(policy or "").lower() == "continue"


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
    return _RawVariant(
        gid=gid,
        ident=ident,
        title=title,
        sku=sku,
        price=_price(reader, "price", "priceV2"),
        compare_at_price=_price(reader, "compare_at_price", "compareAtPrice", "compareAtPriceV2"),
        available=_availability(reader),
        options=tuple(options),
    )


def _options_from_variants(variants: Sequence[_RawVariant]) -> list[tuple[str, list[str]]]:
    options: dict[str, list[str]] = {}
    for variant in variants:
        for name, value in variant.options:
            values = options.setdefault(name, [])
            if value not in values:
                values.append(value)
    return list(options.items())


def _json_products(file: str, text: str, shop: ShopInfo) -> Iterator[_RawProduct]:
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
    for i, raw in enumerate(data):
        if isinstance(raw, dict) and set(raw) == {"node"}:
            raw = raw["node"]
        product = _json_product(file, f"{prefix}[{i}]" if prefix != "product" else prefix, raw, shop)
        if product is not None:
            yield product


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
    if "Variant Inventory Tracker" in get and not get["Variant Inventory Tracker"]:
        available = True  # not tracked: always for sale
    elif get.get("Variant Inventory Qty"):
        qty = _decimal(get["Variant Inventory Qty"]) or Decimal(0)
        available = qty > 0 or get.get("Variant Inventory Policy", "").lower() == "continue"
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
            continue
        if shop.facts_namespaces is not None and mf.namespace not in shop.facts_namespaces:
            continue
        try:
            value = humanise_value(mf.value, mf.type, shop.currency)
        except _BadValueError as exc:
            raise SourceError(file, mf.where, f"{exc} (type {mf.type})") from None
        fact = Fact(mf.key, mf.label or humanise_label(mf.key), value, "metafield") if value else None
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


def _text_lines(text: str) -> list[str]:
    return [_sentence(_collapse(line)) for line in strip_tags(text, decode=True).splitlines() if line.strip()]


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
                f"{v.title} at {format_money(p, currency)}, reduced from {format_money(c, currency)}"
                for v, p, c in sale
            ]
            text = "; ".join(shown[:12]) + (f"; and {len(shown) - 12} more variants" if len(shown) > 12 else "")
        facts.append(Fact("sale", "Sale", text, "field"))
    return facts


def _availability_fact(variants: Sequence[_RawVariant]) -> Fact | None:
    known = [v for v in variants if v.available is not None]
    if not known:
        return None
    sold_out = [v.title for v in known if not v.available]
    if not sold_out:
        value = "in stock"
    elif len(sold_out) == len(known):
        value = "sold out"
    else:
        names = _join_and(sold_out) if len(sold_out) <= 20 else f"{len(sold_out)} variants"
        value = f"in stock, except {names} (sold out)"
    return Fact("availability", "Availability", value, "field")


# --------------------------------------------------------------------------------------------------- pages


class _Meta(dict[str, Any]):
    """Front matter fields, plus the file line each top-level field is on (for error messages)."""

    lines: dict[str, int]

    def at(self, name: str) -> str:
        line = self.lines.get(name)
        return f" (line {line})" if line else ""


def _front_matter(file: str, text: str) -> tuple[_Meta, str]:
    """YAML front matter between `---` lines at the very top, and the body after it."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    meta = _Meta()
    meta.lines = {}
    if not lines or lines[0].strip() != "---":
        return meta, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        raise SourceError(file, "front matter", "no closing '---' line")
    try:
        data = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"front matter: line {mark.line + 2}" if mark is not None else "front matter"
        raise SourceError(file, where, str(getattr(exc, "problem", None) or exc)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SourceError(file, "front matter", "must be a mapping of field: value")
    meta.update(data)
    for number, line in enumerate(lines[1:end], start=2):
        match = re.match(r"^([^\s#:][^:]*?)\s*:", line)
        if match:
            meta.lines.setdefault(match.group(1).strip("'\""), number)
    return meta, "".join(lines[end + 1 :])


def _fm_text(file: str, meta: _Meta, name: str) -> str | None:
    value = meta.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float) or not str(value).strip():
        raise SourceError(file, f"front matter: {name}", "must be a non-empty string" + meta.at(name))
    return str(value).strip()


def _disclosures(file: str, where: str, value: Any) -> tuple[Disclosure, ...]:
    """`{code: text}` or `[{code, content, content_type?}]`."""
    if value is None:
        return ()
    found: list[Disclosure] = []
    if isinstance(value, dict):
        for code, content in value.items():
            if not isinstance(content, str) or not content.strip():
                raise SourceError(file, f"{where}.{code}", "must be the disclosure text")
            found.append(Disclosure(code=str(code), content=content.strip()))
        return tuple(found)
    if not isinstance(value, list):
        raise SourceError(file, where, "expected {code: text} or a list of {code, content}")
    for i, item in enumerate(value):
        path = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise SourceError(file, path, "expected {code, content}")
        for name in ("code", "content"):
            if not isinstance(item.get(name), str) or not item[name].strip():
                raise SourceError(file, f"{path}.{name}", "required")
        content_type = item.get("content_type", "markdown")
        if content_type not in ("plain", "markdown"):
            raise SourceError(file, f"{path}.content_type", "must be 'plain' or 'markdown'")
        found.append(Disclosure(code=item["code"].strip(), content=item["content"].strip(), content_type=content_type))
    return tuple(found)


def _absolute_url(file: str, where: str, url: str, shop: ShopInfo) -> str:
    if url.startswith("/"):
        return shop.url + url
    if re.match(r"^https?://", url):
        return url
    raise SourceError(file, where, f"must be an absolute http(s) URL or a path starting with '/', got {url!r}")


def _url_path(url: str) -> str:
    return urlsplit(url).path or "/"


def _sections(blocks: list[_Block], title: str | None, url: str) -> tuple[str | None, list[Section]]:
    """Group blocks into sections; a first H1 before any text is the page title. Returns (h1 title, sections)."""
    h1: str | None = None
    if blocks and blocks[0].level == 1:
        h1 = blocks.pop(0).text
    heading = title or h1 or ""
    current: tuple[str, str] = (heading, "")
    lines: list[str] = []
    sections: list[Section] = []
    used: set[str] = set()

    def close() -> None:
        text = "\n".join(lines)
        if text:
            name, anchor = current
            sections.append(Section(name, text, f"{url}#{anchor}" if anchor else url, anchor))

    for block in blocks:
        if block.level:
            close()
            lines = []
            anchor = block.anchor or slugify(block.text) or "section"
            base, n = anchor, 1
            while anchor in used and not block.anchor:
                anchor, n = f"{base}-{n}", n + 1
            used.add(anchor)
            current = (block.text, anchor)
        else:
            lines.append(block.text)
    close()
    return h1, sections


def _is_markdown(path: Path) -> bool:
    return path.suffix.lower() in (".md", ".markdown")


def _page_document(root: Path, path: Path, shop: ShopInfo, kind: str) -> Document:
    file = path.relative_to(root).as_posix()
    meta, body = _front_matter(file, _read_text(root, path))
    if kind == "policy":
        raw_type = _fm_text(file, meta, "type") or path.stem
        link_type = slugify(raw_type).replace("-", "_")
        if link_type not in POLICY_TYPES:
            problem = f"must be one of {', '.join(POLICY_TYPES)}"
            if "type" in meta:
                problem += f", got {meta['type']!r}{meta.at('type')}"
            else:
                problem += f" (required: the file name {path.name!r} names no policy type)"
            raise SourceError(file, "front matter: type", problem)
        slug = link_type.replace("_", "-")
        default_url = f"{shop.url}/policies/{slug}"
    else:
        link_type = slugify(_fm_text(file, meta, "type") or "page").replace("-", "_") or "page"
        slug = slugify(path.stem)
        if not slug:
            raise SourceError(file, "", "the file name gives no usable page slug")
        default_url = f"{shop.url}/pages/{slug}"
    url_text = _fm_text(file, meta, "url")
    url = _absolute_url(file, "front matter: url", url_text, shop) if url_text else default_url
    title = _fm_text(file, meta, "title")
    blocks = _blocks(body, markdown=_is_markdown(path))
    h1, sections = _sections(blocks, title, url)
    title = title or h1
    if not title:
        raise SourceError(file, "front matter: title", "required (or start the page with a first-level heading)")
    if not sections:
        raise SourceError(file, "body", "no text")
    text = "\n".join(f"{_sentence(s.heading)}\n{s.text}" if s.anchor else s.text for s in sections)
    return Document(
        id=f"{kind}:{link_type if kind == 'policy' else slug}",
        kind="policy" if kind == "policy" else "page",
        title=title,
        url=url,
        link_type=link_type,
        source=file,
        body=text,
        sections=tuple(sections),
        disclosures=_disclosures(file, "front matter: disclosures", meta.get("disclosures")),
        aliases=_dedupe([_url_path(url)]),
        tags=_string_list(file, "front matter: tags", meta.get("tags")),
    )


def _string_list(file: str, where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise SourceError(file, where, "expected a list of strings")
    return tuple(str(v).strip() for v in value if str(v).strip())


# --------------------------------------------------------------------------------------------------- FAQ


def _faq_documents(root: Path, path: Path, shop: ShopInfo) -> Iterator[Document]:
    file = path.relative_to(root).as_posix()
    text = _read_text(root, path)
    default_url = f"{shop.url}/pages/faq"
    if _is_markdown(path):
        yield from _faq_markdown(file, text, shop, default_url)
        return
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SourceError(file, f"line {exc.lineno}, column {exc.colno}", exc.msg) from None
    else:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}" if mark is not None else ""
            raise SourceError(file, where, str(getattr(exc, "problem", None) or exc)) from None
    prefix = ""
    page_url = default_url
    if isinstance(data, dict):
        if data.get("url") is not None:
            if not isinstance(data["url"], str):
                raise SourceError(file, "url", "must be a string")
            page_url = _absolute_url(file, "url", data["url"].strip(), shop)
        if "entries" not in data:
            raise SourceError(file, "entries", "required: a list of {question, answer}")
        prefix, data = "entries", data["entries"]
    if not isinstance(data, list):
        raise SourceError(file, prefix or "", "expected a list of {question, answer}")
    used: set[str] = set()
    for i, raw in enumerate(data):
        entry = _Reader(file, f"{prefix}[{i}]", raw)
        question = entry.text("question", required=True) or ""
        answer = entry.text("answer", required=True) or ""
        anchor = entry.text("anchor")
        entry_url = entry.text("url")
        url = _absolute_url(file, entry.path("url"), entry_url, shop) if entry_url else ""
        anchor = anchor or urlsplit(url).fragment or _unique(slugify(question) or f"question-{i + 1}", used)
        used.add(anchor)
        url = url or f"{page_url}#{anchor}"
        yield _faq_document(
            file,
            question,
            markdown_to_text(answer),
            url,
            anchor,
            _disclosures(file, entry.path("disclosures"), entry.data.get("disclosures")),
            _string_list(file, entry.path("tags"), entry.data.get("tags")),
        )


def _unique(anchor: str, used: set[str]) -> str:
    base, n = anchor, 1
    while anchor in used:
        anchor, n = f"{base}-{n}", n + 1
    return anchor


def _faq_markdown(file: str, text: str, shop: ShopInfo, default_url: str) -> Iterator[Document]:
    """Front matter (url, title, disclosures for every entry) + one `## Question` heading per entry."""
    meta, body = _front_matter(file, text)
    url_text = _fm_text(file, meta, "url")
    page_url = _absolute_url(file, "front matter: url", url_text, shop) if url_text else default_url
    disclosures = _disclosures(file, "front matter: disclosures", meta.get("disclosures"))
    tags = _string_list(file, "front matter: tags", meta.get("tags"))
    entries: list[tuple[_Block, list[str]]] = []
    for block in _blocks(body, markdown=True, split_level=2):
        if block.level == 2:
            entries.append((block, []))
        elif block.level == 1:
            continue  # the page title or a group heading: not a question
        elif entries:
            entries[-1][1].append(block.text)
    if not entries:
        raise SourceError(file, "body", "no '## Question' headings")
    used: set[str] = set()
    for heading, lines in entries:
        if not lines:
            raise SourceError(file, f"question {heading.text!r}", "has no answer")
        anchor = heading.anchor or _unique(slugify(heading.text) or "question", used)
        used.add(anchor)
        yield _faq_document(file, heading.text, "\n".join(lines), f"{page_url}#{anchor}", anchor, disclosures, tags)


def _faq_document(
    file: str,
    question: str,
    answer: str,
    url: str,
    anchor: str,
    disclosures: tuple[Disclosure, ...],
    tags: tuple[str, ...],
) -> Document:
    if not answer.strip():
        raise SourceError(file, f"question {question!r}", "has no answer")
    return Document(
        id=f"faq:{anchor}",
        kind="faq",
        title=question,
        url=url,
        link_type="faq",
        source=file,
        body=answer,
        sections=(Section(question, answer, url, anchor),),
        disclosures=disclosures,
        aliases=_dedupe([_url_path(url) + (f"#{urlsplit(url).fragment}" if urlsplit(url).fragment else "")]),
        tags=tags,
    )


# --------------------------------------------------------------------------------------------------- the folder


def _read_text(root: Path, path: Path) -> str:
    file = path.relative_to(root).as_posix()
    try:
        return path.read_text("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(file, f"byte {exc.start}", "not UTF-8 text") from None
    except OSError as exc:
        raise SourceError(file, "", f"unreadable ({exc.strerror})") from None


def _visible(paths: Iterable[Path], suffixes: Sequence[str]) -> list[Path]:
    """Files with one of `suffixes`, sorted; names starting with '.' or '_' and READMEs are notes, not content."""
    return sorted(
        p
        for p in paths
        if p.is_file()
        and p.suffix.lower() in suffixes
        and not p.name.startswith((".", "_"))
        and p.stem.lower() != "readme"
    )


class ShopSource:
    """A shop folder as a `protocols.CatalogSource`: products, then policies, pages and FAQ entries."""

    def __init__(self, shop_dir: str | Path) -> None:
        self.root = Path(shop_dir)
        if not self.root.is_dir():
            raise SourceError(str(shop_dir), "", "not a folder")
        self.info: ShopInfo = load_shop_info(self.root)

    def files(self) -> list[tuple[str, Path]]:
        """(what, path) for every source file, in reading order."""
        root = self.root
        found: list[tuple[str, Path]] = []
        for suffix in (".json", ".csv"):
            found += [("products", p) for p in _visible([root / f"products{suffix}"], (suffix,))]
            found += [("products", p) for p in _visible((root / "products").glob("*"), (suffix,))]
        found += [("policy", p) for p in _visible((root / "policies").glob("*"), _TEXT_SUFFIXES)]
        found += [("page", p) for p in _visible((root / "pages").glob("*"), _TEXT_SUFFIXES)]
        found += [("faq", p) for p in _visible(root.glob("faq.*"), _FAQ_SUFFIXES)]
        found += [("faq", p) for p in _visible((root / "faq").glob("*"), _FAQ_SUFFIXES)]
        return found

    def documents(self) -> Iterator[Document]:
        """Every document; raises SourceError at the first bad file (or when the folder holds none)."""
        count = 0
        for what, path in self.files():
            for doc in self._read(what, path):
                count += 1
                yield doc
        if count == 0:
            raise SourceError(
                ".", "", "no documents: add products.json/products.csv, policies/, pages/ or faq.* next to shop.toml"
            )

    def _read(self, what: str, path: Path) -> Iterator[Document]:
        file = path.relative_to(self.root).as_posix()
        if what == "products":
            text = _read_text(self.root, path)
            csv_file = path.suffix.lower() == ".csv"
            raws = _csv_products(file, text, self.info) if csv_file else _json_products(file, text, self.info)
            for raw in raws:
                yield _product_document(file, raw, self.info)
        elif what == "faq":
            yield from _faq_documents(self.root, path, self.info)
        else:
            yield _page_document(self.root, path, self.info, what)


def load_documents(shop_dir: str | Path) -> tuple[ShopInfo, list[Document]]:
    """Read and validate the whole shop folder before anything is returned; duplicate ids raise SourceError."""
    source = ShopSource(shop_dir)
    docs = list(source.documents())
    seen: dict[str, Document] = {}
    for doc in docs:
        other = seen.get(doc.id)
        if other is not None:
            raise SourceError(doc.source, "id", f"duplicate document id {doc.id!r} (also from {other.source})")
        seen[doc.id] = doc
    return source.info, docs
