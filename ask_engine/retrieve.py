"""Hybrid retrieval: dense + BM25 candidates fused by reciprocal rank, resolved resources first, as numbered evidence."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ask_engine.catalog.verdicts import lowest_price
from ask_engine.config import Settings
from ask_engine.countries import group_members
from ask_engine.language import (
    ARRIVED_DAMAGED_RE,
    CURRENCY_SIGNS,
    content_stems,
    country_codes_in,
    parse_query,
    text_cue,
)
from ask_engine.towns import named_as_origin, postcode_areas_listed, town_named
from ask_engine.types import Document, Evidence, Hit, Resolution

if TYPE_CHECKING:
    from ask_engine.indexes import ShopIndex
    from ask_engine.protocols import Embedder, Vector

Mode = Literal["hybrid", "dense", "lexical"]
MODES: tuple[Mode, ...] = ("hybrid", "dense", "lexical")

# Plain-English cues for the four well-known policies. A query that names the topic gets that policy's passages
# as one more ranked list in the fusion: a nudge, not an override (the dense and lexical lists still dominate).
_INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "refund_policy",
        re.compile(
            r"\b(?:returns?|returning|returnable|refunds?|refunded|refundable|exchanges?|exchanging|"
            r"(?:send(?:ing)?|post(?:ing)?|mail(?:ing)?|ship(?:ping)?)\s+(?:[\w'-]+\s+){0,3}?back|money\s+back|store\s+credit|"
            r"swap(?:s|ped|ping)?\s+(?:it|them|this|these|that|one|mine|for))\b",
            re.IGNORECASE,
        ),
    ),
    (
        "shipping_policy",
        re.compile(
            r"\b(?:ship|ships|shipping|shipped|deliver|delivers|delivery|deliveries|delivered|dispatch(?:ed|es)?|"
            r"postage|courier|carriers?|send\s+to|arrive|arrives|arrival|customs|import\s+dut(?:y|ies))\b",
            re.IGNORECASE,
        ),
    ),
    (
        "privacy_policy",
        re.compile(
            r"\b(?:privacy|personal\s+(?:data|information|details)|my\s+data|data\s+protection|gdpr|cookies?|"
            r"marketing\s+e-?mails?|unsubscribe)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "terms_of_service",
        re.compile(
            r"\b(?:terms\s+(?:of\s+(?:service|use|sale)|and\s+conditions|&\s+conditions)|t\s*&\s*cs?|"
            r"governing\s+law|liability|legal\s+terms)\b",
            re.IGNORECASE,
        ),
    ),
)


def policy_intents(query: str) -> list[str]:
    """The well-known policy link types a query's wording points at, in a fixed order."""
    return [link_type for link_type, pattern in _INTENTS if pattern.search(query)]


# "Which of your products are on sale?" (lexicon text cue "sale_listing") and "which of your coffees is the
# cheapest?" ("price_extreme"): the products listed come with the evidence, however retrieval ranks them (every
# product page's "Price" matches such a question equally).
_SALE_LISTING = text_cue("sale_listing")
_PRICE_EXTREME = text_cue("price_extreme")
LISTED_EVIDENCE_MAX = 6
PRICE_LIST_MAX = 3


def price_ordered(query: str, documents: Collection[Document]) -> tuple[list[Document], bool] | None:
    """For a question asking for the lowest- or highest-priced products ("your cheapest coffee?", "most expensive
    tent"), the products of the kind it names (its words that name products of this shop by title, type or tags;
    every product when none do), lowest price first (highest for "most expensive"), and whether highest first; None
    for any other question."""
    m = _PRICE_EXTREME.search(query.lower())
    if m is None:
        return None
    # each product's lowest price in stock, else its lowest (`catalog.verdicts.lowest_price`, in minor units)
    prices = {d.id: lowest_price(d.variants, d.currency or "USD") for d in documents if d.kind == "product"}
    products = [d for d in documents if prices.get(d.id) is not None] if prices else []
    words = {d.id: content_stems(" ".join([d.title, d.product_type or "", *d.tags])) for d in products}
    naming = frozenset().union(*words.values())
    kind = (content_stems(query) - content_stems(m.group(0))) & naming
    if kind:
        products = [d for d in products if kind <= words[d.id]]
    high = m.group("high") is not None
    return sorted(products, key=lambda d: (-1 if high else 1) * (prices[d.id] or 0)), high


def with_listed_products(
    index: ShopIndex, evidence: Sequence[Evidence], query: str, resolution: Resolution
) -> list[Evidence]:
    """`evidence`, and after it the first passage of each product a question that names no product asks for a list
    of that it lacks: the products with a sale price (up to LISTED_EVIDENCE_MAX in all), or the PRICE_LIST_MAX
    lowest- or highest-priced of the kind it names."""
    out = list(evidence)
    if resolution.doc_ids:
        return out
    if _SALE_LISTING.search(query.lower()):
        wanted = list(index.on_sale)
    else:
        ordered = price_ordered(query, index.documents.values())
        wanted = [d.id for d in ordered[0][:PRICE_LIST_MAX]] if ordered else []
    have = {ev.passage.doc_id for ev in out}
    room = LISTED_EVIDENCE_MAX - sum(1 for d in wanted if d in have)
    for doc_id in wanted:
        if room <= 0:
            break
        passages = index.passages_of(doc_id)
        if doc_id in have or not passages:
            continue
        room -= 1
        out.append(Evidence(len(out) + 1, passages[0], 0.0))
    return out


# A shipping question asking what delivery costs ("how much to ship to Dublin?", "is delivery free to Belfast?") is
# answered by the policy's rates, which retrieval ranks below the lines naming the place: its passages holding two or
# more amounts (a rates table) join the evidence.
COST_RE = re.compile(r"\b(?:how\s+much|cost|costs|price|prices|rates?|charges?|fees?|free|postage)\b", re.IGNORECASE)
# an amount of money: a currency's sign before it ("₹1,150", "Rs 500") or its code on either side ("CHF 12", "99 SEK")
_CODES = "USD|EUR|GBP|CAD|AUD|NZD|CHF|SEK|NOK|DKK|INR|JPY|SGD|HKD|ZAR|MXN|BRL|PLN|CZK|HUF|AED|SAR|ILS|KRW|TRY|CNY|THB|MYR|PHP"
AMOUNT_RE = re.compile(rf"[{CURRENCY_SIGNS}₽]\s?\d|\bRs\.?\s?\d|\b(?:{_CODES})\s?\d|\d[\d.,]*\s?(?:{_CODES})\b")
RATE_EVIDENCE_MAX = 2
SHIPPING_POLICY = "policy:shipping_policy"


def with_rate_passages(
    index: ShopIndex, evidence: Sequence[Evidence], query: str, resolution: Resolution | None = None
) -> list[Evidence]:
    """`evidence`, and after it what a shipping question naming a town or country needs and retrieval ranked lower:
    the shipping policy's passages naming the town ("Remote covers … Broome") or listing its postcode area (for a
    town the policy never names, those naming its state, province or nation, else its country or a group of it),
    those naming a product in view by its
    title ("The Basecamp 6 Family Cabin Tent is oversize: it ships to Canada and the US only") or its product type
    ("Long freediving fins … not available to the Pacific"), and, when it asks
    what delivery costs, the policy's rates passages (up to RATE_EVIDENCE_MAX of each, most amounts first)."""
    out = list(evidence)
    # "can I get a santoku sent to my sister in Germany?" is a shipping question too, though it names no policy word
    if "shipping_policy" not in policy_intents(query) and not parse_query(query).shipping:
        return out
    town = town_named(query)
    codes = frozenset(country_codes_in(query, query=True))
    if town is None and not codes:
        return out  # no destination named: the rates are for the general selection to weigh
    have = {ev.passage.id for ev in out}
    policy = [p for p in index.passages_of(SHIPPING_POLICY) if p.id not in have]
    place = re.compile(rf"(?<![\w-]){re.escape(town.name)}(?![\w-])", re.IGNORECASE) if town is not None else None
    # ... or listing its postcode area ("Postcodes: IV (except islands below), KW1–KW14" for Inverness)
    areas = set(town.postcode_areas) if town is not None else set()
    named = [
        p
        for p in policy
        if (town is not None and place is not None and place.search(p.text) and not named_as_origin(town.name, p.text))
        or (areas and areas & postcode_areas_listed(p.text))
    ]
    if town is not None and town.region and not named:
        # a town the policy never names, by its state, province or nation ("Northern Ireland" for Belfast)
        region = re.compile(rf"(?<![\w-]){re.escape(town.region)}(?![\w-])", re.IGNORECASE)
        named = [p for p in policy if region.search(p.text)]
    if not named:
        # the passages naming the country (the town's, for "Munich, Germany"), then those naming a group it belongs
        # to ("EU countries" for Germany, "the Channel Islands" for Jersey): the rule for the destination, wherever
        # retrieval ranked it
        codes = codes | ({town.country} if town is not None else set())
        named = [p for p in policy if codes & set(country_codes_in(p.text))]
        named += [
            p for p in policy if p not in named and any(codes & members for members in group_members(p.text).values())
        ]
    if not named and not any(ev.passage.doc_id == SHIPPING_POLICY for ev in out):
        # "can you send books to Japan?", a destination the policy never names, with none of it retrieved: its
        # passage naming the most places says where the shop does ship (and that the destination is not among them)
        named = sorted(policy, key=lambda p: -(len(country_codes_in(p.text)) + 2 * len(group_members(p.text))))[:1]
    docs = [index.documents[d] for d in (resolution.doc_ids if resolution else ()) if d in index.documents]
    titles = [d.title for d in docs]
    own = [p for p in policy if any(t.lower() in p.text.lower() for t in titles if t)]
    # ... or by its kind ("Long freediving fins … not available to the Pacific" for fins of type "Freediving Fins")
    kinds = [k for d in docs if d.kind == "product" and (k := content_stems(d.product_type or ""))]
    own += [p for p in policy if p not in own and any(k <= content_stems(p.text) for k in kinds)]
    tables = [p for p in policy if len(AMOUNT_RE.findall(p.text)) >= 2] if COST_RE.search(query) else []
    tables.sort(key=lambda p: -len(AMOUNT_RE.findall(p.text)))  # stable: the policy's order among equals
    for passage in dict.fromkeys([*own[:RATE_EVIDENCE_MAX], *named[:RATE_EVIDENCE_MAX], *tables[:RATE_EVIDENCE_MAX]]):
        out.append(Evidence(len(out) + 1, passage, 0.0))
    return out


REFUND_POLICY = "policy:refund_policy"
TERMS = "policy:terms_of_service"
_CANCEL = re.compile(r"(?<!noise )(?<!noise-)\bcancel", re.IGNORECASE)  # (not "noise cancelling")
RULE_EVIDENCE_MAX = 2


def _kind_phrases(doc: Document) -> list[str]:
    """The phrases naming a product's kind in a policy: its product type, its title's last two words (its head: the
    "… High-Performance Thermal Paste"), and its tags of two words or more ("thermal paste")."""
    words = doc.title.split()
    phrases = [doc.product_type or "", " ".join(words[-2:]) if len(words) > 2 else ""]
    phrases += [t for t in doc.tags if len(t.split()) > 1]
    return [p.strip().lower() for p in phrases if len(p.strip()) > 3]


def with_own_rule_passages(
    index: ShopIndex, evidence: Sequence[Evidence], query: str, resolution: Resolution | None = None
) -> list[Evidence]:
    """`evidence`, and after it, for a returns or cancelling question about a product in view, the refund policy's
    passages that name the product's kind, and for a cancelling one the terms' sections headed by it (up to
    RULE_EVIDENCE_MAX in all): "I opened the TX-9, can I send it back?" is answered by the restocking table's row
    "Thermal paste and other consumables: … Not returnable once opened", which shares no word with the question; its
    rule, wherever retrieval ranked it. A question saying the goods arrived damaged ("my bag of dates came split
    open") gets the shop's passages saying what happens when goods arrive damaged, when no passage in play says it."""
    out = _with_damage_passages(index, evidence, query)
    cancel = bool(_CANCEL.search(query))
    if resolution is None or not resolution.doc_ids or not ("refund_policy" in policy_intents(query) or cancel):
        return out
    docs = [index.documents[d] for d in resolution.doc_ids if d in index.documents]
    phrases = {p for d in docs if d.kind == "product" for p in _kind_phrases(d)}
    if not phrases:
        return out
    naming = re.compile(rf"(?<![\w-])(?:{'|'.join(re.escape(p) for p in sorted(phrases))})(?:e?s)?(?![\w-])", re.I)
    have = {ev.passage.id for ev in out}
    own = [p for p in index.passages_of(REFUND_POLICY) if p.id not in have and naming.search(p.text)]
    # ... and, asked about cancelling, the terms' section headed by it ("Book Club": "You can cancel at any time and
    # we'll refund the months not yet posted")
    own += [p for p in index.passages_of(TERMS) if cancel and p.id not in have and naming.search(p.title)]
    for passage in own[:RULE_EVIDENCE_MAX]:
        out.append(Evidence(len(out) + 1, passage, 0.0))
    return out


def _with_damage_passages(index: ShopIndex, evidence: Sequence[Evidence], query: str) -> list[Evidence]:
    out = list(evidence)
    if not ARRIVED_DAMAGED_RE.search(query):  # (the question first: it rules out nearly every request)
        return out
    if any(ev.passage.kind != "product" and ARRIVED_DAMAGED_RE.search(ev.passage.text) for ev in out):
        return out
    have = {ev.passage.id for ev in out}
    found = [
        p for p in index.passages if p.kind != "product" and p.id not in have and ARRIVED_DAMAGED_RE.search(p.text)
    ]
    found.sort(key=lambda p: p.kind != "policy")  # (stable: the shop's order; the refund policy's rule first)
    for passage in found[:RULE_EVIDENCE_MAX]:
        out.append(Evidence(len(out) + 1, passage, 0.0))
    return out


_ASKS_ADDRESS = text_cue("asks_address", re.IGNORECASE)  # "where's your store located?"
_STREET_ADDRESS = text_cue("street_address")  # "2150 Frontier Way", "Unit 7, Heron Cross Works"
_ASKS_PHONE = text_cue("asks_phone", re.IGNORECASE)  # "what's your phone number?"
_PHONE_LINE = text_cue("phone_line", re.IGNORECASE)  # "Phone: (715) 555-0143", "call us on 01584 872 100"
ADDRESS_EVIDENCE_MAX = 2


def with_address_passages(
    index: ShopIndex, evidence: Sequence[Evidence], query: str, resolution: Resolution | None = None
) -> list[Evidence]:
    """`evidence`, and after it, when the question asks where the shop is and no page or FAQ passage of it states a
    street address, the shop's own passages that do, its pages' and FAQ entries' before its policies', each in the
    shop's order (up to ADDRESS_EVIDENCE_MAX): "wheres your store located" shares no word with a page's "Address"
    section ("2150 Frontier Way, Suite 104"). Likewise the passages stating a phone number, when the question asks
    for the shop's: "what's your phone number?" reads closer to a privacy policy collecting "your phone number"."""
    out = list(evidence)
    if resolution is not None and resolution.doc_ids:
        return out
    lower = query.lower()
    stating = _STREET_ADDRESS if _ASKS_ADDRESS.search(lower) else _PHONE_LINE if _ASKS_PHONE.search(lower) else None
    if stating is None:
        return out
    # (a policy's address is more often where returns go: a page's or an FAQ entry's says where the shop is)
    if any(ev.passage.kind in ("page", "faq") and stating.search(ev.passage.text) for ev in out):
        return out
    have = {ev.passage.id for ev in out}
    placed = [p for p in index.passages if p.kind != "product" and p.id not in have and stating.search(p.text)]
    placed.sort(key=lambda p: p.kind not in ("page", "faq"))  # (stable: the shop's order among each)
    for passage in placed[:ADDRESS_EVIDENCE_MAX]:
        out.append(Evidence(len(out) + 1, passage, 0.0))
    return out


@dataclass(frozen=True)
class Ranking:
    """Every stage of one general retrieval, for the eval's recall@k / MRR and for debugging."""

    dense: tuple[Hit, ...]
    lexical: tuple[Hit, ...]
    intent: tuple[Hit, ...]
    fused: tuple[Hit, ...]  # the final general ranking of `mode`, after the dense floor
    cosine: dict[str, float]  # passage id -> cosine similarity to the query, for every candidate


_RARE_PASSAGES = 2  # a question's word no more passages use than this names what it is about


class Retriever:
    """Ranks an index's passages for a query; `retrieve` hands the generator numbered evidence."""

    def __init__(
        self,
        index: ShopIndex,
        embedder: Embedder,
        settings: Settings | None = None,
        *,
        intent_boost: bool = True,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.settings = settings or Settings()
        self.intent_boost = intent_boost

    # -------------------------------------------------------------------------------------- general ranking

    def _cosines(self, vector: Vector, pids: set[str]) -> dict[str, float]:
        if not pids:
            return {}
        return {h.passage_id: h.score for h in self.index.vectors.search(vector, len(pids), where=pids)}

    def _rare_word_agreement(self, query: str, dense: tuple[Hit, ...], lexical: tuple[Hit, ...]) -> tuple[Hit, ...]:
        """The passage both retrievers rank first, where it holds a word of the question that at most two passages
        use: "do you take klarna?" is about the one FAQ answer naming Klarna, though a name the embedding model
        never learnt leaves every cosine under the floor."""
        if not dense or not lexical or dense[0].passage_id != lexical[0].passage_id:
            return ()
        words = set(re.findall(r"[^\W\d_]{4,}", query.casefold()))
        if not any(0 < self.index.lexical.uses(w) <= _RARE_PASSAGES for w in words):
            return ()
        return (lexical[0],)

    def rank(self, query: str, *, mode: Mode = "hybrid", vector: Vector | None = None) -> Ranking:
        """The general ranking (no resolved resources) of up to `candidate_k` passages per retriever.

        Dense-only candidates under `min_dense_score` are dropped; when no candidate reaches it the ranking is
        empty (nothing in the shop is about the question).
        """
        if mode not in MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; use one of {', '.join(MODES)}")
        empty = Ranking((), (), (), (), {})
        if not query.strip():
            return empty
        s = self.settings
        floor = s.min_dense_score
        if mode == "lexical":
            lexical = tuple(self.index.lexical.search(query, s.candidate_k))
            return Ranking((), lexical, (), lexical, {})
        qv = self.embedder.embed_query(query) if vector is None else vector
        dense = tuple(self.index.vectors.search(qv, s.candidate_k))
        cosine = {h.passage_id: h.score for h in dense}
        if mode == "dense":
            kept = tuple(h for h in dense if h.score >= floor)
            return Ranking(dense, (), (), kept, cosine)
        lexical = tuple(self.index.lexical.search(query, s.candidate_k))
        cosine.update(self._cosines(qv, {h.passage_id for h in lexical} - cosine.keys()))
        if not any(score >= floor for score in cosine.values()):
            return Ranking(dense, lexical, (), self._rare_word_agreement(query, dense, lexical), cosine)
        intent: tuple[Hit, ...] = ()
        if self.intent_boost:
            types = policy_intents(query)
            if types:
                pids = {p.id for p in self.index.passages if p.link_type in types}
                intent = tuple(self.index.vectors.search(qv, s.candidate_k, where=pids))
                cosine.update({h.passage_id: h.score for h in intent})
        lexical_ids = {h.passage_id for h in lexical}
        fused_scores: dict[str, float] = {}
        for hits in (dense, lexical, intent):
            for rank, hit in enumerate(hits, start=1):
                fused_scores[hit.passage_id] = fused_scores.get(hit.passage_id, 0.0) + 1.0 / (s.rrf_k + rank)
        # A passage only the embedding found must clear the floor; a lexical match stands on its own terms.
        candidates = [pid for pid in fused_scores if pid in lexical_ids or cosine.get(pid, 0.0) >= floor]
        candidates.sort(key=lambda pid: (-fused_scores[pid], -cosine.get(pid, 0.0), pid))
        if intent and dense and lexical and dense[0].passage_id == lexical[0].passage_id:
            # the passage both retrievers rank first leads, whatever the policy the question's words suggest adds to
            # its own passages ("can I collect my order myself to save on delivery?": the FAQ entry "Can I collect
            # my order from the workshop?", not the shipping policy's sections, each of which the boost counts again)
            # (a passage about that policy's matter keeps its fused place: "Which countries do you ship to?")
            top = dense[0].passage_id
            passage = self.index.passage_by_id[top]
            if (
                top in candidates
                and top not in {h.passage_id for h in intent}
                and not set(types) & set(policy_intents(passage.text))
            ):
                candidates.remove(top)
                candidates.insert(0, top)
        fused = tuple(
            Hit(passage_id=pid, score=fused_scores[pid], rank=rank, source="fused")
            for rank, pid in enumerate(candidates, start=1)
        )
        return Ranking(dense, lexical, intent, fused, cosine)

    # -------------------------------------------------------------------------------------- with resolution

    def _resolved_order(self, vector: Vector | None, resolution: Resolution) -> list[tuple[str, float]]:
        """Passages of the resolved documents: each document's best passage first (in resolution order), then
        each one's second best, and so on, so that several named products all get a place."""
        per_doc: list[list[tuple[str, float]]] = []
        for doc_id in resolution.doc_ids:
            pids = {p.id for p in self.index.passages_of(doc_id)}
            if not pids:
                continue
            if vector is not None:
                hits = self.index.vectors.search(vector, len(pids), where=pids)
                # The best passage of a resolved document always comes; its other passages must be about the
                # question, so a long policy named in the conversation does not crowd out everything else.
                floor = self.settings.min_dense_score
                per_doc.append([(h.passage_id, h.score) for n, h in enumerate(hits) if n == 0 or h.score >= floor])
            else:
                per_doc.append([(p.id, 0.0) for p in self.index.passages_of(doc_id)])
        order: list[tuple[str, float]] = []
        depth = 0
        while any(depth < len(items) for items in per_doc):
            order.extend(items[depth] for items in per_doc if depth < len(items))
            depth += 1
        return order

    def needs_vector(self, query: str, resolution: Resolution, *, mode: Mode = "hybrid", k: int | None = None) -> bool:
        """True when `retrieve` embeds the query before ranking (every mode but lexical, and any resolved resource)."""
        k = self.settings.retrieval_k if k is None else k
        return k > 0 and bool(query.strip()) and (mode != "lexical" or bool(resolution.doc_ids))

    def retrieve_ranked(
        self, query: str, resolution: Resolution | None = None, *, mode: Mode = "hybrid", k: int | None = None
    ) -> list[str]:
        """Passage ids in evidence order (resolved resources first), up to `k` (default: every candidate)."""
        limit = k if k is not None else self.settings.candidate_k * 3
        return [ev.passage.id for ev in self.retrieve(query, resolution or Resolution(), mode=mode, k=limit)]

    def retrieve(
        self,
        query: str,
        resolution: Resolution,
        *,
        mode: Mode = "hybrid",
        k: int | None = None,
        vector: Vector | None = None,
    ) -> list[Evidence]:
        """Up to `k` (default `retrieval_k`) evidence passages numbered from 1.

        The passages of resolved resources come first, ranked by similarity among themselves, but they leave room
        for the best general hits ("can I return this?" about a product needs the product and the refund policy).
        An empty query, or one nothing in the shop is about and that names no resource, gives no evidence.
        `vector` is the query's embedding when the caller has made it already (see `needs_vector`).
        """
        k = self.settings.retrieval_k if k is None else k
        if k <= 0 or not query.strip():
            return []
        if not self.needs_vector(query, resolution, mode=mode, k=k):
            vector = None
        elif vector is None:
            vector = self.embedder.embed_query(query)
        ranking = self.rank(query, mode=mode, vector=vector)
        cosine = dict(ranking.cosine)
        resolved = self._resolved_order(vector, resolution)
        cosine.update({pid: score for pid, score in resolved if vector is not None})
        general = [h.passage_id for h in ranking.fused]
        resolved_ids = [pid for pid, _ in resolved]
        resolved_set = set(resolved_ids)
        general = [pid for pid in general if pid not in resolved_set]
        reserve = min(len(general), max(1, k // 3)) if resolved_ids else len(general)
        take_resolved = resolved_ids[: max(0, k - reserve)]
        chosen = take_resolved + general[: k - len(take_resolved)]
        if mode == "lexical" and vector is None and chosen:
            # Evidence scores are cosines in every mode, so generators can compare them with the floor.
            qv = self.embedder.embed_query(query)
            cosine.update(self._cosines(qv, set(chosen)))
        return [
            Evidence(
                number=n,
                passage=self.index.passage_by_id[pid],
                score=float(cosine.get(pid, 0.0)),
                resolved=pid in resolved_set,
            )
            for n, pid in enumerate(chosen, start=1)
        ]
