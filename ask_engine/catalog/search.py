"""Catalog search over a shop index: retrieval, the relevance judgment, verdicts, and what was turned away.

Candidates come from the existing hybrid retrieval (`Retriever.rank`): the products behind the nearest passages
(dense) and the lexical matches, for each pass's words and for the kind of thing alone. A candidate is *of the kind
asked for* when every content word of the kind names the product (its title, type or tags, stemmed, synonyms
folded), or when the kind reads close enough to the product's name and type: cosine similarity of the embedded
kind ("kayaks") and the product's header ("Ridgeway 2 Backpacking Tent (Tents)") at least `KIND_BAR`.

`KIND_BAR` was set by measurement (all-MiniLM-L6-v2, the sample shop's 78 products): the best product of 30 nouns
of other trades scored 0.13-0.48, but for "yoga mat" (0.61, against a foam sleeping mat) and "wetsuit" (0.58);
14 everyday names of things the shop does sell, sharing no word with them, scored 0.29-0.49 ("torch" for a headlamp,
"rucksack" for a daypack). No bar separates the two, so the word match comes first and the bar is set where no
unrelated noun but those two passes; the figures are in eval/README.md ("Catalog search").
Candidates not of the kind are counted in `unrelated_count`; with no kind named ("anything vegan") relevance is not
judged and every candidate is judged on its constraints. When some candidates are named by the kind's words, a
product that only reads close must read within `NAMED_MARGIN` of the least similar of them ("tent": a kids' camp
sleeping bag reads 0.52, the tents 0.69-0.74).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ask_engine.catalog.constraints import Pass, Understood, read_constraints, remember
from ask_engine.catalog.verdicts import Judged, judge
from ask_engine.language import in_shop_words, with_shop_synonyms

if TYPE_CHECKING:
    from ask_engine.indexes import ShopIndex
    from ask_engine.protocols import Embedder
    from ask_engine.retrieve import Retriever
    from ask_engine.types import Document

KIND_BAR = 0.50  # see the module docstring
MAX_CANDIDATES = 60  # products judged per pass
NAMED_MARGIN = 0.10  # how much less like the kind than the products named by it a product may read


def product_kind_text(doc: Document) -> str:
    """What a product is, as its kind is compared with the question's: its title and product type."""
    return f"{doc.title} ({doc.product_type})" if doc.product_type else doc.title


@dataclass
class SearchResult:
    understood: Understood
    results: list[Judged]
    ruled_out: list[Judged]
    unrelated_count: int
    relevance_judged: bool
    as_of: str
    candidates: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def cheapest_ruled_out_minor(self) -> int | None:
        """The price of the nearest product turned away: the cheapest turned away by price alone, else the
        cheapest of all turned away."""
        near = [j.price_minor for j in self.ruled_out if j.price_only and j.price_minor is not None]
        every = [j.price_minor for j in self.ruled_out if j.price_minor is not None]
        return min(near or every) if (near or every) else None


class CatalogSearch:
    """Searches one index version; product vectors are embedded once per version and reused."""

    def __init__(self, index: ShopIndex, retriever: Retriever, embedder: Embedder) -> None:
        self.index = index
        self.retriever = retriever
        self.embedder = embedder
        self._vectors: dict[str, np.ndarray[Any, Any]] = {}
        self._lock = threading.Lock()

    # --- relevance ----------------------------------------------------------------------------------------

    def _product_vectors(self, docs: Sequence[Document]) -> np.ndarray[Any, Any]:
        missing = [d for d in docs if d.id not in self._vectors]
        if missing:
            matrix = np.asarray(self.embedder.embed_documents([product_kind_text(d) for d in missing]))
            with self._lock:
                for doc, row in zip(missing, matrix, strict=True):
                    self._vectors[doc.id] = row
        return np.stack([self._vectors[d.id] for d in docs]) if docs else np.zeros((0, 1), dtype=np.float32)

    def kind_similarity(self, kind: str, docs: Sequence[Document]) -> list[float]:
        if not docs:
            return []
        query = np.asarray(self.embedder.embed_query(with_shop_synonyms(kind, self.index.shop.synonyms)))
        return [float(s) for s in self._product_vectors(docs) @ query]

    def names_kinds(self, kind: str, docs: Sequence[Document]) -> list[bool]:
        """`names_kind` for each product, the kind also read in the shop's own words ("jumpers" names the shop's
        "Sweater" range: shop.toml [synonyms])."""
        kinds = dict.fromkeys([kind, in_shop_words(kind, self.index.shop.synonyms)])
        return [any(self.names_kind(k, doc) for k in kinds) for doc in docs]

    @staticmethod
    def names_kind(kind: str, doc: Document) -> bool:
        from ask_engine.answering.query import _GENERIC_QUERY_STEMS, _head, _heads, _product_words
        from ask_engine.language import content_stems

        # every word asked for is the product's, and the last one names what it is ("bikes" are not "Bike Lights")
        wanted = content_stems(kind) - _GENERIC_QUERY_STEMS
        return bool(wanted) and wanted <= _product_words(doc) and _head(kind) in _heads(doc)

    # --- retrieval ----------------------------------------------------------------------------------------

    def candidates(self, part: Pass) -> list[Document]:
        """Products behind the fused ranking, then the nearest passages, for the pass and for its kind."""
        order: list[str] = []
        # with the shop's own word beside a synonym the shopper used (shop.toml [synonyms])
        synonyms = self.index.shop.synonyms
        texts = [with_shop_synonyms(t, synonyms) for t in dict.fromkeys([part.text, part.kind]) if t.strip()]
        for text in texts:
            ranking = self.retriever.rank(text)
            for hits in (ranking.fused, ranking.dense):
                order += [self.index.passage_by_id[h.passage_id].doc_id for h in hits]
        docs = [self.index.documents[d] for d in dict.fromkeys(order) if d in self.index.documents]
        return [d for d in docs if d.kind == "product"][:MAX_CANDIDATES]

    def all_products(self) -> list[Document]:
        return [d for d in self.index.documents.values() if d.kind == "product"]

    # --- the search ---------------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        context_intent: str | None = None,
        history: Sequence[str] = (),
        categories: Sequence[str] = (),
        price_min: int | None = None,
        price_max: int | None = None,
        price_applies: bool = True,
    ) -> SearchResult:
        """Read the question, judge every candidate of each pass, and sort them into results and ruled out.

        `price_min` / `price_max` (minor units of the shop's currency) are the request's own filters: they win
        over bounds read from the question. `history` holds earlier messages of the conversation, latest first."""
        currency = self.index.shop.currency
        understood = read_constraints(query, currency, context_intent=context_intent)
        earlier = [read_constraints(q, currency) for q in history]
        understood = remember(understood, earlier)
        if price_min is not None or price_max is not None:
            from dataclasses import replace

            understood = replace(
                understood,
                min_price_minor=price_min if price_min is not None else understood.min_price_minor,
                max_price_minor=price_max if price_max is not None else understood.max_price_minor,
            )
        if not price_applies:
            from dataclasses import replace

            understood = replace(understood, degraded=True)
        apply_price = understood.price_applied and price_applies
        browse = not query.strip()
        results: list[list[Judged]] = []
        ruled_out: list[Judged] = []
        seen: set[str] = set()
        found: set[str] = set()
        related_any: set[str] = set()
        judged_relevance = False
        for n, part in enumerate(understood.passes):
            docs = self.all_products() if browse else self.candidates(part)
            if categories:
                docs = [d for d in docs if _in_categories(d, categories)]
            found.update(d.id for d in docs)
            if part.kind:
                judged_relevance = True
                sims = self.kind_similarity(part.kind, docs)
                names = self.names_kinds(part.kind, docs)
                named = [s for s, yes in zip(sims, names, strict=True) if yes]
                # products the shop files under the word asked for set the standard for those that only read close
                bar = max(KIND_BAR, min(named) - NAMED_MARGIN) if named else KIND_BAR
                related = [d for d, s, yes in zip(docs, sims, names, strict=True) if yes or s >= bar]
            else:
                related = docs
            related_any.update(d.id for d in related)
            qualified: list[Judged] = []
            for doc in related:
                verdict = judge(doc, n, part, understood, apply_price=apply_price)
                if verdict.qualifies:
                    if doc.id not in seen:
                        qualified.append(verdict)
                        seen.add(doc.id)
                elif doc.id not in seen:
                    ruled_out.append(verdict)
            results.append(qualified)
        qualified_ids = {j.doc.id for part in results for j in part}
        ruled_out = [j for j in _dedupe(ruled_out) if j.doc.id not in qualified_ids]
        unrelated = len(found - related_any) if judged_relevance else 0
        as_of = str(self.index.manifest.get("created_at", ""))
        return SearchResult(
            understood=understood,
            results=_interleave(results),
            ruled_out=ruled_out,
            unrelated_count=unrelated,
            relevance_judged=judged_relevance,
            as_of=as_of,
            candidates=len(found),
        )


def _in_categories(doc: Document, categories: Sequence[str]) -> bool:
    wanted = {c.strip().casefold() for c in categories if c.strip()}
    have = {(doc.product_type or "").casefold(), *(t.casefold() for t in doc.tags)}
    return bool(wanted & have) or any(w in (doc.product_type or "").casefold() for w in wanted)


def _dedupe(judged: list[Judged]) -> list[Judged]:
    out: dict[str, Judged] = {}
    for j in judged:
        out.setdefault(j.doc.id, j)
    return list(out.values())


def _interleave(per_pass: list[list[Judged]]) -> list[Judged]:
    """Results of several passes, one from each in turn, so every thing asked for shows near the top."""
    out: list[Judged] = []
    depth = 0
    while any(depth < len(p) for p in per_pass):
        out += [p[depth] for p in per_pass if depth < len(p)]
        depth += 1
    return out
