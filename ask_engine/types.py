"""Internal value types: frozen dataclasses passed between the stages of one request."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ask_engine.unit_vectors import UnitVectors

DocKind = Literal["product", "policy", "page", "faq"]


@dataclass(frozen=True)
class ShopInfo:
    """shop.toml's [shop] table."""

    name: str
    url: str  # base URL, no trailing slash
    currency: str = "USD"
    language: str = "en"
    gid_namespace: str = "shop"
    disclosure_namespace: str = "disclosures"  # metafield namespace whose entries are disclosures, not facts
    facts_namespaces: tuple[str, ...] | None = None  # None: every namespace except the disclosure one
    country: str | None = None  # ISO 3166-1 alpha-2 of the country it sells from (None: its currency's, if one)
    # shop.toml's [synonyms]: (the shop's word, the words shoppers use for it), read into questions
    synonyms: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ShopInfo:
        d = {k: v for k, v in d.items() if k in {f.name for f in fields(cls)}}
        if d.get("facts_namespaces") is not None:
            d["facts_namespaces"] = tuple(d["facts_namespaces"])
        if d.get("synonyms") is not None:
            d["synonyms"] = tuple((str(own), tuple(others)) for own, others in d["synonyms"])
        return cls(**d)


_LEAVES = frozenset({str, int, float, bool, type(None)})


def plain(value: Any) -> Any:
    """`dataclasses.asdict` for these types, many times faster: dataclasses become dicts (fields in order), tuples,
    lists and dicts are rebuilt around their converted items, anything else (str, int, float, bool, None) is itself.
    The types hold no other values, so there is nothing for `asdict`'s deep copy to copy."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    names = _FIELD_NAMES.get(kind)
    if names is not None:
        return {name: plain(getattr(value, name)) for name in names}
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def _tuple_of(cls: type[Any], items: Any) -> tuple[Any, ...]:
    return tuple(cls.from_dict(i) if isinstance(i, dict) else i for i in (items or ()))


@dataclass(frozen=True)
class Fact:
    """One recorded attribute of a product (from a metafield or a core field)."""

    key: str  # snake_case key as recorded: "material", "waterproof", "price"
    label: str  # human label: "Material", "Waterproof"
    value: str  # human-readable value: "natural rubber", "yes", "£89.00"
    source: str = "metafield"  # "metafield" | "field" (core Shopify field) | "variant" | "disclosure"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Fact:
        return cls(**d)


@dataclass(frozen=True)
class Disclosure:
    """A binding notice recorded by the merchant; `content` goes out verbatim."""

    code: str  # "allergens", "safety", "age_restricted", "prop65", ...
    content: str
    content_type: Literal["plain", "markdown"] = "markdown"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Disclosure:
        return cls(**d)


BACKORDER_WORDS = "out of stock, but can still be ordered"


@dataclass(frozen=True)
class Variant:
    gid: str  # gid://<ns>/ProductVariant/<id> (Shopify GIDs kept as they are)
    title: str  # "Black / 42"
    sku: str | None = None
    price: str | None = None  # decimal string as in the source: "89.00"
    compare_at_price: str | None = None
    available: bool | None = None  # None: not recorded
    options: tuple[tuple[str, str], ...] = ()  # (("Colour", "Black"), ("Size", "42"))
    # none in stock, but the shop keeps selling it (Shopify's inventory policy "continue"): available, not in stock
    backorder: bool = False

    @property
    def status(self) -> str | None:
        """UCP's availability status: "in_stock", "backorder" or "out_of_stock"; None when not recorded."""
        if self.available is None:
            return None
        if not self.available:
            return "out_of_stock"
        return "backorder" if self.backorder else "in_stock"

    @property
    def stock_words(self) -> str | None:
        """The variant's stock in words: "in stock", "sold out", or "out of stock, but can still be ordered"."""
        return {"in_stock": "in stock", "out_of_stock": "sold out", "backorder": BACKORDER_WORDS}.get(self.status or "")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Variant:
        d = dict(d)
        d["options"] = tuple(tuple(o) for o in d.get("options") or ())
        return cls(**d)


@dataclass(frozen=True)
class Section:
    """A heading-delimited part of a page, policy or FAQ entry."""

    heading: str
    text: str  # plain text of the section body (no markup)
    url: str  # page URL with the section's #anchor (or the page URL for the lead)
    anchor: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Section:
        return cls(**d)


@dataclass(frozen=True)
class Document:
    """One merchant resource: a product, a policy, a page or an FAQ entry.

    `id` is stable across reindexing: "product:<gid>", "policy:<type>", "page:<slug>", "faq:<anchor>".
    """

    id: str
    kind: DocKind
    title: str
    url: str
    link_type: str  # "product" | "refund_policy" | ... | "faq" | "page" | "size_guide" | ...
    source: str  # file the document came from (relative to the shop folder)
    gid: str | None = None  # product GID; None for pages
    handle: str | None = None
    body: str = ""  # plain text: product description, or the whole page text
    sections: tuple[Section, ...] = ()
    facts: tuple[Fact, ...] = ()
    variants: tuple[Variant, ...] = ()
    disclosures: tuple[Disclosure, ...] = ()
    aliases: tuple[str, ...] = ()  # every id form that resolves here: GIDs, variant GIDs, SKUs, handle, URL path
    vendor: str | None = None
    product_type: str | None = None
    tags: tuple[str, ...] = ()
    options: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (("Size", ("S","M")),)
    currency: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return plain(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Document:
        d = dict(d)
        d["sections"] = _tuple_of(Section, d.get("sections"))
        d["facts"] = _tuple_of(Fact, d.get("facts"))
        d["variants"] = _tuple_of(Variant, d.get("variants"))
        d["disclosures"] = _tuple_of(Disclosure, d.get("disclosures"))
        d["aliases"] = tuple(d.get("aliases") or ())
        d["tags"] = tuple(d.get("tags") or ())
        d["options"] = tuple((n, tuple(v)) for n, v in d.get("options") or ())
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    def content_hash(self) -> str:
        """Hash of everything that affects passages and answers (for incremental indexing)."""
        blob = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, default=list)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def fact(self, key: str) -> Fact | None:
        for f in self.facts:
            if f.key == key:
                return f
        return None


@dataclass(frozen=True)
class Passage:
    """The unit of retrieval: a product fact sheet, a policy/page section, an FAQ entry."""

    id: str  # f"{doc_id}#{n}"
    doc_id: str
    text: str  # what is embedded, indexed lexically and shown as evidence
    title: str  # document title, plus " — section heading" for sections
    url: str  # the section URL (or the document URL)
    kind: DocKind
    link_type: str
    gid: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return plain(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Passage:
        return cls(**d)


# The fields `plain` converts without asking `dataclasses` (a document's parts, and what an index stores).
_FIELD_NAMES: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls)) for cls in (ShopInfo, Fact, Disclosure, Variant, Section, Document, Passage)
}


@dataclass(frozen=True)
class Hit:
    """A scored passage from one retriever (or from fusion)."""

    passage_id: str
    score: float
    rank: int = 0
    source: str = "dense"  # "dense" | "lexical" | "fused" | "resolved"


@dataclass(frozen=True)
class Evidence:
    """A passage chosen to support an answer, numbered for citation."""

    number: int  # 1-based, as shown to a generator
    passage: Passage
    score: float
    resolved: bool = False  # True when the passage belongs to a resource named in ids/history


@dataclass(frozen=True)
class Unresolved:
    path: str  # JSONPath of the unresolved input, e.g. "$.ids[2]"
    value: str


@dataclass(frozen=True)
class Resolution:
    """What the question is about: documents named by ids or by the conversation."""

    doc_ids: tuple[str, ...] = ()  # in request order, de-duplicated
    variant_gids: tuple[str, ...] = ()  # variants named explicitly (by variant GID or SKU)
    from_history: bool = False  # True when doc_ids came from earlier turns, not from ids
    unresolved: tuple[Unresolved, ...] = ()
    mentioned_doc_ids: tuple[str, ...] = ()  # products named by title in the query (also in doc_ids, after ids)


@dataclass(frozen=True)
class Turn:
    """One past question and answer of a conversation."""

    query: str
    answer: str
    doc_ids: tuple[str, ...] = ()  # the resources the turn was about (resolved + linked)
    created_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Turn:
        d = dict(d)
        d["doc_ids"] = tuple(d.get("doc_ids") or ())
        return cls(**d)


@dataclass(frozen=True)
class Sentence:
    """One sentence of a draft answer and the evidence numbers it cites."""

    text: str
    cites: tuple[int, ...] = ()  # Evidence.number values
    markdown: str | None = None  # markdown rendering of the same sentence, when different
    # "claim": states a fact and must be supported by evidence; "meta": a fixed phrase about the answer itself
    # (not recorded, nothing was changed, what the shop can help with), checked for numbers only.
    kind: Literal["claim", "meta"] = "claim"


DraftKind = Literal["answer", "not_recorded", "no_answer", "empty_query", "unavailable"]


@dataclass(frozen=True)
class Gap:
    """Something a question asked for that the shop has not recorded: a product's attribute, or (no `doc_id`) a
    thing no product, policy or page mentions. Read by the question log; never shown to the shopper."""

    field: str  # what was asked for, in words: "warranty", "rain cover"
    key: str | None = None  # a fact key that would answer it ("warranty"), when the attribute lexicon knows one
    doc_id: str | None = None  # the product it was asked about


@dataclass(frozen=True)
class Draft:
    """A generator's answer before the guards: sentences with citations."""

    sentences: tuple[Sentence, ...]
    kind: DraftKind = "answer"
    generator: str = "extractive"
    used_doc_ids: tuple[str, ...] = ()  # documents the answer names (links come from these)
    notes: tuple[str, ...] = field(default=())  # diagnostics (why a fallback happened, ...)
    gaps: tuple[Gap, ...] = ()  # what the question asked for that is not recorded (kind "not_recorded")

    @property
    def plain(self) -> str:
        return " ".join(s.text for s in self.sentences).strip()

    @property
    def markdown(self) -> str:
        return " ".join((s.markdown or s.text) for s in self.sentences).strip()


@dataclass(frozen=True)
class QueryVector:
    """One query embedding made during a request: the exact text, its vector and the embedder that made it."""

    text: str
    vector: Any
    embedder: Any

    def reusable(self, text: str, embedder: Any) -> Any:
        """The vector when `embedder` would embed `text` to it (same text, same embedder object), else None."""
        return self.vector if text == self.text and embedder is self.embedder else None


@dataclass(frozen=True)
class Task:
    """Everything a generator may use to answer one question."""

    query: str
    evidence: tuple[Evidence, ...]
    documents: dict[str, Document]  # doc_id -> Document for every evidence passage
    resolution: Resolution
    history: tuple[Turn, ...] = ()
    country: str | None = None  # context.address_country, upper-case ISO 3166-1 alpha-2
    region: str | None = None
    language: str | None = None
    shop_name: str = ""
    shop_currency: str | None = None  # shop.toml's currency: where a shipping question's "Perth" most likely is
    shop_country: str | None = None  # shop.toml's country, where it says (else its currency's country is home)
    vendors: frozenset[str] = frozenset()  # the catalogue's vendor names, lower case
    # the labels of the attributes the catalogue's products record as metafields, two words or more ("Bed temperature")
    fact_labels: tuple[str, ...] = ()
    # the stems of the catalogue's product types ("Saddles", "Fly Repellents")
    kind_words: frozenset[str] = frozenset()
    # the stems of every product's title, type and vendor: a name the question gives that the catalogue uses
    catalogue_words: frozenset[str] = frozenset()
    operation_requested: bool = False  # the read-only guard found an operation in the query
    # The index's stored vectors of the texts a generator compares with the question (None: embed them when asked).
    unit_vectors: UnitVectors | None = field(default=None, compare=False, repr=False)
    # The query embedding retrieval made for this request: a generator embedding the same text with the same
    # embedder reuses it instead of calling the model again.
    query_vector: QueryVector | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Trace:
    """What happened inside one `Engine.ask`: for the eval harness, benchmarks and debugging."""

    evidence: tuple[Evidence, ...] = ()
    resolution: Resolution = field(default_factory=Resolution)
    raw_draft: Draft | None = None  # the generator's draft before the guards
    draft: Draft | None = None  # what was sent (after guards / fallback)
    removed: tuple[Sentence, ...] = ()  # sentences the grounding guard removed
    # why the extractive fallback was used: "generator_unavailable", "deadline", "breaker_open", "ungrounded", ...
    fallback: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)  # stage -> milliseconds
