"""Ids of shop documents: slugs, generated GIDs, and the alias keys that ids are stored and looked up under.

Every string in `Document.aliases` is meant to go through `alias_key` before it is stored or looked up;
`alias_keys(doc)` does that for one document and also registers the handle under both `handle:` and `id:`;
`shop_aliases(documents)` gives the whole shop's alias table, as the indexer stores it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from urllib.parse import quote, unquote, urlsplit

from ask_engine.types import Document, ShopInfo


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


def shop_aliases(documents: Sequence[Document]) -> tuple[dict[str, tuple[str, str | None]], list[str]]:
    """Alias key -> (doc id, variant GID), and warnings about ids that name several products.

    A key shared by one product and other documents (a handle that is also a page slug) names the product: ids in
    requests are mostly product ids. A key naming several products, or several non-product documents only (FAQ
    entries sharing their page's URL), resolves to none; several products sharing a SKU or handle is a catalogue
    mistake worth a warning.
    """
    claims: dict[str, list[tuple[Document, str | None]]] = {}
    for doc in documents:
        for key, variant in alias_keys(doc).items():
            claims.setdefault(key, []).append((doc, variant))
    aliases: dict[str, tuple[str, str | None]] = {}
    warnings: list[str] = []
    for key, owners in claims.items():
        products = [(doc, variant) for doc, variant in owners if doc.kind == "product"]
        chosen = products or owners
        if len(chosen) == 1:
            aliases[key] = (chosen[0][0].id, chosen[0][1])
        elif products:
            names = {doc.id for doc, _ in products}
            warnings.append(f"id {key!r} names {len(names)} products ({_some(names)}); it resolves to none")
    return aliases, sorted(warnings)


def _some(names: set[str], shown: int = 3) -> str:
    ordered = sorted(names)
    return ", ".join(ordered[:shown]) + (", …" if len(ordered) > shown else "")


def _numeric_tail(gid: str) -> str | None:
    tail = gid.rsplit("/", 1)[-1]
    return tail if tail.isdigit() else None


def _gid(shop: ShopInfo, kind: str, ident: str) -> str:
    return f"gid://{shop.gid_namespace}/{kind}/{quote(ident, safe='-_.~')}"


def _dedupe(items: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))
