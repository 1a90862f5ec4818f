"""A shop folder: `shop.toml`, its source files in reading order, and `ShopSource`, the folder as a CatalogSource."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ask_engine.errors import SourceError
from ask_engine.parallel import mapped
from ask_engine.sources.files import _read_text
from ask_engine.sources.pages import _faq_documents, _page_document
from ask_engine.sources.products import _csv_products, _product_document, json_item, json_items
from ask_engine.types import Document, ShopInfo

_TEXT_SUFFIXES = (".md", ".markdown", ".html", ".htm")
_FAQ_SUFFIXES = (".json", ".yaml", ".yml", ".md", ".markdown")


def load_shop_info(shop_dir: str | Path) -> ShopInfo:
    """Read `shop.toml`'s `[shop]` table: name, url (required); currency, country, language, gid_namespace,
    disclosure_namespace (default "disclosures"), facts_namespaces (default: every namespace but the disclosure one);
    and the optional `[synonyms]` table.
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
    for name in ("name", "url", "currency", "country", "language", "gid_namespace", "disclosure_namespace"):
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
    if "country" in info:
        info["country"] = _country_code(info["country"])
    if "gid_namespace" in info and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", info["gid_namespace"]):
        raise SourceError("shop.toml", "shop.gid_namespace", "use letters, digits, '.', '_' or '-' only")
    namespaces = table.get("facts_namespaces")
    if namespaces is not None:
        if not isinstance(namespaces, list) or not all(isinstance(n, str) and n for n in namespaces):
            raise SourceError("shop.toml", "shop.facts_namespaces", "must be a list of namespace names")
        info["facts_namespaces"] = tuple(namespaces)
    synonyms = _synonyms(data.get("synonyms"))
    if synonyms:
        info["synonyms"] = synonyms
    return ShopInfo.from_dict(info)


def _country_code(value: str) -> str:
    """shop.toml's `country`: an ISO 3166-1 alpha-2 code ("IE") or a country's name ("Ireland"), as its code."""
    from ask_engine.countries import country_codes_in, country_name

    if re.fullmatch(r"[A-Za-z]{2}", value) and country_name(value) != value.upper():
        return value.upper()
    codes = country_codes_in(value)
    if len(codes) != 1:
        raise SourceError("shop.toml", "shop.country", f"not a country: {value!r} (use its ISO 3166-1 code, e.g. 'IE')")
    return codes[0]


def _synonyms(table: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """shop.toml's optional `[synonyms]` table: the shop's own word (or phrase) = the words shoppers use for it, a
    string or a list of strings (`sweater = ["jumper", "pullover"]`)."""
    if table is None:
        return ()
    if not isinstance(table, dict):
        raise SourceError("shop.toml", "synonyms", "must be a table: the shop's word = [the words shoppers use]")
    out: list[tuple[str, tuple[str, ...]]] = []
    for own, others in table.items():
        words = [others] if isinstance(others, str) else others
        if not own.strip():
            raise SourceError("shop.toml", "synonyms", "a key is empty: name the word the shop uses")
        if not isinstance(words, list) or not words or not all(isinstance(w, str) and w.strip() for w in words):
            raise SourceError("shop.toml", f"synonyms.{own}", "must be a word or a list of words (non-empty strings)")
        out.append((" ".join(own.split()), tuple(" ".join(w.split()) for w in words)))
    return tuple(out)


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

    def __init__(self, shop_dir: str | Path, *, processes: int = 1) -> None:
        self.root = Path(shop_dir)
        self.processes = processes  # a large product file is read over this many processes (`ask_engine.parallel`)
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
            yield from (_csv_documents if path.suffix.lower() == ".csv" else _json_documents)(
                file, text, self.info, self.processes
            )
        elif what == "faq":
            yield from _faq_documents(self.root, path, self.info)
        else:
            yield _page_document(self.root, path, self.info, what)


def _json_documents(file: str, text: str, shop: ShopInfo, processes: int) -> list[Document]:
    """The products of a JSON file, each read and made a document in one step (over `processes` processes for a
    large file), so that the first bad product raises, as read one by one."""
    prefix, items = json_items(file, text)

    def document(item: tuple[int, Any]) -> Document | None:
        raw = json_item(file, prefix, item[0], item[1], shop)
        return None if raw is None else _product_document(file, raw, shop)

    return [doc for doc in mapped(document, list(enumerate(items)), processes) if doc is not None]


def _csv_documents(file: str, text: str, shop: ShopInfo, processes: int) -> list[Document]:
    """The products of a product CSV export: its rows grouped by handle here, each product made a document over
    `processes` processes for a large file; the first bad product raises, as read one by one."""
    raws: list[Any] = []
    try:
        raws.extend(_csv_products(file, text, shop))
    except SourceError:
        for raw in raws:  # a product before the bad row may hold the first problem
            _product_document(file, raw, shop)
        raise
    return mapped(lambda raw: _product_document(file, raw, shop), raws, processes)


def load_documents(shop_dir: str | Path, *, processes: int = 1) -> tuple[ShopInfo, list[Document]]:
    """Read and validate the whole shop folder before anything is returned; duplicate ids raise SourceError. A large
    product file is read over up to `processes` processes, with the same documents and errors."""
    source = ShopSource(shop_dir, processes=processes)
    docs = list(source.documents())
    seen: dict[str, Document] = {}
    for doc in docs:
        other = seen.get(doc.id)
        if other is not None:
            raise SourceError(doc.source, "id", f"duplicate document id {doc.id!r} (also from {other.source})")
        seen[doc.id] = doc
    return source.info, docs
