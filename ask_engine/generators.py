"""The offline default generator: short answers built only from the shop's own words, with citations.

`ExtractiveGenerator` never invents a sentence about the shop. Every claim is either a sentence quoted from the
evidence or a fixed template filled with a recorded value, verbatim. How it answers:

1. **Reading the question** (`language.parse_query`): question shape (yes/no, wh-), and what it asks about: a
   product attribute from a small lexicon of common attributes (waterproof, material, warranty, weight, care,
   warmth, allergens, origin, dimensions, ...), price, stock, options (colours, sizes), shipping to a country,
   a comparison, a catalogue search, or a store process (returns, delivery, payment...).
2. **Products** (resolved by id/mention/history, else named in the question by distinctive title words): the
   asked attribute is matched against the product's recorded facts, first through the lexicon, then by lexical
   overlap with fact labels and by embedding similarity of the question to "Label: value" strings, so a key no
   lexicon knows (`burn_time`) still answers "how long does it burn?". A recorded fact is stated through a
   template that keeps the value verbatim; a description sentence that addresses the question is quoted; when
   neither exists the answer says plainly that the shop has not recorded it, then gives the most related recorded
   fact (never "no"). Price, stock and options come from the variants and price facts; an option the question
   names but the product lacks is reported as not recorded, with the options that are.
3. **Shipping to a country**: the country comes from the question (names, aliases, ISO codes) or, for a delivery
   question, from the buyer's context; sentences naming it (or a region group the policy itself names, e.g. "EU")
   are quoted. A country the shipping policy never names is reported as not listed, with where it does ship.
4. **Everything else** (policies, FAQ, pages): the evidence is split into sentences (label/value lines and table
   rows stay whole; FAQ questions and section headings are never quoted) and each is scored by a blend of
   embedding similarity to the question, similarity of its heading or FAQ question, content-word overlap, passage
   rank and answer-likeness (numbers and durations for "how long/how much"). The best one to three sentences are
   kept in their original order, near-duplicates dropped, within ~450 characters, never cut mid-sentence. A
   returns question about a kind of goods is answered by the policy's list entry naming them ("Items we cannot
   take back: Candles that have been lit."); a bare "Yes." is quoted only for its own FAQ question.
5. **No answer**: when nothing scores above the relevance floor, a fixed phrase says the shop's information does
   not cover it and what the assistant can help with; no evidence text is shown. A name the evidence never
   mentions ("Klarna"), or a two-word thing whose second word it never uses while it uses the first for something
   else ("gift wrapping" against "gift cards"), is reported as not mentioned.
6. **Untrusted text**: sentences that address an AI or try to instruct it are never quoted (`guard.is_injection`
   plus a few broader patterns); an instruction inside the question is dropped from it.
7. **Conversation and compound questions**: "Is it waterproof, and can I return it?" is answered part by part;
   a follow-up that names no attribute ("what about the women's one?") asks what the previous question asked; a
   product question the product does not record falls back to a strongly matching policy or FAQ sentence.

Every threshold below was calibrated on the sample shop's questions plus off-topic ones, and checked on a second,
hand-made shop in the tests; none names anything in a particular shop.

Fixed phrases live in `prompts/phrases.j2`; `phrase(name, **kwargs)` renders one.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from ask_engine.answering.ranker import QuestionShape, Ranker, features, load_ranker
from ask_engine.answering.units import Unit, product_units, usable_value
from ask_engine.chunking import quotable_lines
from ask_engine.faithfulness import split_sentences
from ask_engine.guard import is_injection
from ask_engine.language import (
    CONCEPTS_BY_NAME,
    Intent,
    content_stems,
    country_aliases,
    country_codes_in,
    country_name,
    fact_key_matches,
    group_members,
    join_and,
    normalize,
    parse_query,
    stem,
    third_person,
    word_set,
)
from ask_engine.phrases import phrase
from ask_engine.sources import format_money
from ask_engine.types import Document, Draft, DraftKind, Evidence, Fact, Sentence, Task, Variant

if TYPE_CHECKING:
    from ask_engine.config import Settings
    from ask_engine.protocols import Embedder

__all__ = ["ExtractiveGenerator", "phrase"]

# ----------------------------------------------------------------------------------------------- tunables

MAX_CHARS = 450  # an answer that fits in a conversation
NOT_LISTED_CHARS = 260  # where the shop does ship, after "not listed": a sentence or two, not the whole table
# Relevance floor for quoting a sentence: below it the question is off-topic for this shop (on the calibration set
# every on-topic question scored above 0.42 and every off-topic one - weather, poems, sport, trivia - below 0.39).
MIN_RELEVANCE = 0.40
MIN_SEMANTIC = 0.30
MIN_RELEVANCE_PROCESS = 0.32
MIN_RELEVANCE_GUARDED = 0.55
MIN_SEMANTIC_PROCESS = 0.20
# A fact whose label the question does not mention must be this close to the question to answer it.
FACT_SEMANTIC = 0.50
FACT_SEMANTIC_WITH_WORD = 0.22
RELATED_SEMANTIC = 0.20
# An FAQ question this close to the buyer's question is the same question: its answer is quoted from the start.
FAQ_QUESTION_MATCH = 0.80
FAQ_QUESTION_NEAR = 0.70
# A section heading this close to the question is the question ("How to start a return"): quoted from its start.
HEADING_QUESTION_MATCH = 0.85
# A two-word thing the question asks about reads as the same thing as the shop's ("size chart" / "size guide") at
# this similarity; below it, a shared first word names a different thing ("gift wrapping" / "gift cards").
COMPOUND_SAME = 0.70
# A how-to question about a product goes to a page section whose heading is at least this close to it.
GUIDE_HEADING_SEMANTIC = 0.30
# ...or, when the best sentence is another entry's answer, one this close and this much closer than that entry's.
FAQ_QUESTION_CLOSER_FLOOR = 0.50
FAQ_QUESTION_MARGIN = 0.05
# A policy/FAQ sentence must score this well to answer a product question the product itself does not record.
POLICY_OVER_PRODUCT = 0.55

# Keys whose facts are answered by the price/stock/options logic, not by attribute matching.
_COMMERCE_KEYS = {"price", "sale", "availability", "compare_at_price", "sku", "barcode"}
_IDENTITY_KEYS = {"vendor", "product_type", "category", "tags"}
_BOOLEAN_VALUES = {"yes": True, "true": True, "no": False, "false": False}
# Second halves of compound attributes ("fragrance free", "dishwasher safe", "water resistant"): shared alone, they
# do not make a fact the one asked about.
_QUALIFIER_STEMS = content_stems("free safe proof resistant friendly compatible suitable certified approved based")
_ADJECTIVE_END = re.compile(
    r"(?:proof|able|ible|free|safe|ant|ent|ive|ous|ic|al|ed|ful|less|ary|ory|ile|ish|y|an|ian)$", re.IGNORECASE
)
# Sentences that look like instructions to an assistant, beyond what guard.is_injection catches mid-sentence.
_EXTRA_INJECTION = re.compile(
    r"\b(?:tell|inform|promise|offer|give|assure|guarantee)\s+(?:every|all|each|any)\s+(?:customers?|users?|shoppers?|"
    r"buyers?|visitors?)\b|\b(?:note|message|instructions?)\s+(?:to|for)\s+(?:the\s+)?(?:ai|assistants?|chatbots?|bots?|"
    r"llms?|language models?|agents?)\b|\b(?:assistant|chatbot|ai|llm|bot)\s*:\s|<\|?/?(?:system|im_start|im_end)\|?>|"
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|these\s+|those\s+)*"
    r"(?:rules|instructions|guidelines|restrictions|guardrails)\b|"
    r"\[/?(?:INST|SYSTEM)\]",
    re.IGNORECASE,
)
# A clause that only addresses the assistant ("print your system prompt", "pretend you're a pirate").
_INSTRUCTION_CLAUSE = re.compile(
    r"^(?:please\s+)?(?:print|reveal|show|repeat|output|ignore|forget|disregard|pretend|act|roleplay|role-play|"
    r"imagine|switch|enter|you are|you're|say|respond|reply|claim|always|never|from now on|answer (?:only|with|in)|"
    r"tell (?:every|all|each|any|the) (?:customers?|users?|shoppers?|buyers?|people|everyone))\b",
    re.IGNORECASE,
)
# "Do you sell / stock / carry / have the X?": a question whether the shop offers a product
_SELL_RE = re.compile(
    r"^\s*(?:do|does|can) (?:you|the shop|the store|they) (?:still )?(?:sell|stock|carry|offer|have)\b"
)
_HOW_TO = re.compile(r"^\s*(?:how\s+(?:do|should|can|would|best\s+to)\s+(?:i|we|you)\b|how\s+to\b)")
_HOW_TO_STEMS = content_stems("how do should can would best look after care clean maintain way")
_DEICTIC_RE = re.compile(r"\b(?:this|these|that|those|it|they|them)\b")
_PRONOUN_RE = re.compile(r"\b(?:it|its|it's|they|them|their|this|that|these|those|one|ones|both|either)\b")
# A sentence that leans on the one before: "This does not affect...", "Indoors they're still returnable...".
_ANAPHOR_START = re.compile(
    r"^(?:\w+,?\s+){0,2}?(?:this|these|that|those|they|they're|it|it's|such|otherwise|however|but|also)\b", re.I
)
_DURATION = re.compile(
    r"\b\d+(?:[-–]\d+)?\s*(?:working\s+|business\s+)?(?:days?|weeks?|months?|years?|hours?|minutes?)\b"
)
_NUMBER = re.compile(r"\d")
# "Yes." or "No, we don't." says nothing without its FAQ question.
_BARE_YES_NO = re.compile(
    r"^(?:yes|no)(?:,?\s+(?:we|you|it|they|i)\s+(?:do|does|can|are|is|will|have)(?:n't|\s+not)?)?\W*$", re.IGNORECASE
)
_MONEY = re.compile(r"[$€£¥]\s?\d|\d[\d.,]*\s?(?:USD|EUR|GBP|CAD|AUD|CHF|SEK|NOK|DKK)\b")
_CLOCK = re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\bmidday\b|\bnoon\b|\bmidnight\b", re.I)
_SELF_REFERENCE = re.compile(
    r"\bthis (?:policy|page|section|guide|document|faq)\s+(?:explains|describes|sets out|covers|tells|shows)\b", re.I
)
_MODAL = re.compile(r"\b(?:can|cannot|can't|may|must|could|able to|allowed|only)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|cannot|can't|unable|don't|doesn't|won't|except|excluding)\b", re.I)
_RETURN_STEMS = content_stems("return returns refund refunds exchange exchanges")
# Words of store processes, which name no goods ("can I return a gift card?" names gift cards).
_PROCESS_STEMS = content_stems(
    "return refund exchange send back ship deliver delivery post postage pay payment cancel track claim repair "
    "collect buy order bought purchase purchased can could may allowed possible still"
)
_SHIP_WORDS = re.compile(r"\bship\w*|\bdeliver\w*|\bdestination\w*|\bpostage\b|\bcourier\b|\bdispatch\w*", re.I)
_FUNCTION_WORDS = word_set(
    """
a an the as all our we you your orders order items it its this these they there if when for from in
on at to with within yes no every each most many some any
"""
)
_MARKDOWN_MARKS = re.compile(r"(\*\*|__|`)")
_GENERIC_QUERY_STEMS = content_stems(
    "product products item items thing things buy get need question policy policies information info details page"
)
# Title words that say what kind or version of thing it is, never which product ("Men's", "Pack", "Set").
_COMMON_TITLE_STEMS = content_stems("men's women's kids' unisex pack set box pair kit size ml g kg l")
_COMPARISON_STEMS = content_stems(
    "difference differences differ compare comparison versus vs better best which between"
)
_VAGUE_STEMS = content_stems("stuff something anything everything one ones lot bit kind sort way")
# Verbs of "do you take / accept / offer X?": the question is about X alone.
_OFFER_STEMS = content_stems("take accept use support offer have carry stock sell do")
_CATALOGUE_STEMS = content_stems(
    "sell sells stock stocks carry carries offer offers have got range kind kinds sort type types any "
    "recommend suggest looking show best good which what"
)


def _plain(text: str) -> str:
    return _MARKDOWN_MARKS.sub("", text)


def _is_untrusted(text: str) -> bool:
    return is_injection(text) or bool(_EXTRA_INJECTION.search(text))


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _end(text: str) -> str:
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", ".)", '."', ":")) else text + "."


def _cos(matrix: np.ndarray[Any, Any], vector: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return np.asarray(matrix @ vector, dtype=np.float32) if len(matrix) else np.zeros(0, dtype=np.float32)


# ----------------------------------------------------------------------------------------------- working data


@dataclass
class _Unit:
    """One quotable sentence of an evidence passage."""

    text: str
    evidence: Evidence
    position: int  # sentence index within the passage
    rank: int  # evidence order (0 = best)
    context: str  # heading or FAQ question (scored, never quoted)
    doc: Document | None
    score: float = 0.0
    semantic: float = 0.0
    context_semantic: float = 0.0
    lexical: float = 0.0
    header: bool = False  # a product fact sheet's naming line
    first: bool = False  # the first quotable sentence of its passage
    plain_overlap: bool = False  # shares a question word that is neither a name nor a number
    lead: _Unit | None = None  # the "...:" line a list item belongs to

    @property
    def key(self) -> tuple[int, int]:
        return (self.rank, self.position)


class _VectorCache:
    """Sentence embeddings kept across questions: a shop's policy sentences come back in answer after answer."""

    def __init__(self, size: int = 8192) -> None:
        self._items: OrderedDict[str, np.ndarray[Any, Any]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get_many(self, embedder: Embedder, texts: Sequence[str]) -> dict[str, np.ndarray[Any, Any]]:
        """Vectors for `texts`; the missing ones are computed in one batch."""
        with self._lock:
            found = {t: self._items[t] for t in texts if t in self._items}
            for t in found:
                self._items.move_to_end(t)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            computed = embedder.embed_documents(missing)
            with self._lock:
                for text, vector in zip(missing, computed, strict=True):
                    found[text] = self._items[text] = np.asarray(vector, dtype=np.float32)
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
        return found


@dataclass
class _Work:
    """Per-question state: the task, the reading of the question and the embeddings it needed."""

    task: Task
    intent: Intent
    embedder: Embedder | None
    cache: _VectorCache = field(default_factory=_VectorCache)
    query_vector: np.ndarray[Any, Any] | None = None
    notes: list[str] = field(default_factory=list)
    guarded: bool = False  # the question carried an instruction to the assistant, removed before answering
    asked: frozenset[str] = frozenset()  # the question's content stems, product names included

    def vectors(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        """Embeddings for `texts` (rows in order), computing the missing ones in one batch."""
        if self.embedder is None:
            return np.zeros((len(texts), 1), dtype=np.float32)
        if not texts:
            return np.zeros((0, getattr(self.embedder, "dimension", 1)), dtype=np.float32)
        found = self.cache.get_many(self.embedder, texts)
        return np.vstack([found[t] for t in texts])

    def query(self) -> np.ndarray[Any, Any]:
        if self.query_vector is None:
            if self.embedder is None:
                self.query_vector = np.zeros(1, dtype=np.float32)
            else:
                self.query_vector = np.asarray(self.embedder.embed_query(self.intent.text), dtype=np.float32)
        return self.query_vector

    def similarity(self, texts: Sequence[str], probe: str | None = None) -> np.ndarray[Any, Any]:
        """Cosine similarity of each text to the question (or to `probe`, embedded in the same batch)."""
        if self.embedder is None or not texts:
            return np.zeros(len(texts), dtype=np.float32)
        if probe is None:
            return _cos(self.vectors(texts), self.query())
        matrix = self.vectors([*texts, probe])
        return _cos(matrix[:-1], matrix[-1])


@dataclass
class _Answer:
    """Sentences under construction plus the documents they draw on."""

    sentences: list[Sentence] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)
    not_recorded: bool = False

    def claim(self, text: str, cites: Iterable[int], markdown: str | None = None, doc: str | None = None) -> None:
        text = _end(text)
        md = _end(markdown) if markdown else None
        self.sentences.append(
            Sentence(text=text, cites=tuple(dict.fromkeys(cites)), markdown=md if md != text else None)
        )
        if doc:
            self.use(doc)

    def meta(self, text: str, markdown: str | None = None, doc: str | None = None) -> None:
        self.sentences.append(Sentence(text=text, markdown=markdown if markdown != text else None, kind="meta"))
        if doc:
            self.use(doc)

    def use(self, doc_id: str) -> None:
        if doc_id not in self.docs:
            self.docs.append(doc_id)

    def extend(self, other: _Answer) -> None:
        for s in other.sentences:
            if all(s.text != t.text for t in self.sentences):
                self.sentences.append(s)
        for d in other.docs:
            self.use(d)
        self.not_recorded = self.not_recorded or other.not_recorded


# ----------------------------------------------------------------------------------------------- the generator


class ExtractiveGenerator:
    """Answers from the evidence alone, offline: quoted sentences and verbatim facts, each citing its passage."""

    name = "extractive"
    grounded_by_construction = True  # only ever quotes the evidence: the grounding guard has nothing to check

    def __init__(self, settings: Settings | None = None, *, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self._embedder = embedder
        self._lock = threading.Lock()
        self._vectors = _VectorCache()
        self.max_sentences = max(1, settings.max_answer_sentences) if settings is not None else 4

    @property
    def embedder(self) -> Embedder:
        """The embedder given at construction, or the configured sentence-transformers model, loaded on first use."""
        if self._embedder is None:
            with self._lock:
                if self._embedder is None:
                    from ask_engine.embedders import SentenceTransformerEmbedder

                    self._embedder = SentenceTransformerEmbedder(settings=self.settings)
        return self._embedder

    # -- entry point -----------------------------------------------------------------------------

    def generate(self, task: Task) -> Draft:
        query = _clean_query(task.query or "")
        # What is left of a question that carried an instruction is answered only when clearly on topic.
        guarded = query != normalize(task.query or "")
        if not query:
            if task.query and task.query.strip() and not task.operation_requested:
                return self._no_answer(task, "the question held only instructions to the assistant")
            return self._empty(task)
        first = parse_query(query)
        if not first.stems and not first.countries and not first.product_specific:
            return self._empty(task)  # greetings and thanks: invite a question
        # "Is this waterproof, and can I return it if it doesn't fit?" is two questions: each part is answered on
        # its own, in order, within the sentence budget.
        parts = _question_parts(query)
        budget = max(1, self.max_sentences // len(parts))
        answers: list[_Answer] = []
        notes: list[str] = []
        for part in parts:
            answer, work_notes = self._answer(task, part, guarded=guarded)
            notes += work_notes
            if answer is not None and answer.sentences:
                answer.sentences = answer.sentences[: budget if len(parts) > 1 else self.max_sentences]
                answers.append(answer)
        if not answers:
            return self._no_answer(task, "no evidence sentence is relevant enough", *notes)
        merged = _Answer()
        for answer in answers:
            merged.extend(answer)
        merged.not_recorded = all(a.not_recorded for a in answers)
        sentences = _without_dangling_lead(merged.sentences[: self.max_sentences])
        has_claim = any(s.kind == "claim" for s in sentences)
        kind: DraftKind = "not_recorded" if merged.not_recorded or not has_claim else "answer"
        return Draft(
            sentences=sentences,
            kind=kind,
            generator=self.name,
            used_doc_ids=tuple(merged.docs),
            notes=tuple(notes),
        )

    def _answer(self, task: Task, question: str, *, guarded: bool = False) -> tuple[_Answer | None, list[str]]:
        """Answer one question: shipping to a country, a product, a catalogue search, else sentence selection."""
        intent = parse_query(question)
        if not intent.stems and not intent.countries and not intent.product_specific:
            return None, []
        work = _Work(
            task=task, intent=intent, embedder=self.embedder, cache=self._vectors, guarded=guarded, asked=intent.stems
        )
        targets = self._targets(work)
        # What the question asks is read without the product's name: "Skiddaw 3L Waterproof Jacket" asks nothing.
        work.intent = _with_history(_without_mentions(intent, targets), task)
        answer = (
            self._shipping(work, targets)
            or self._product(work, targets)
            or self._catalogue(work, targets)
            or self._select(work, targets)
        )
        return answer, work.notes

    # -- fixed answers ---------------------------------------------------------------------------

    def _empty(self, task: Task) -> Draft:
        name = "help" if task.operation_requested else "empty_query"
        return Draft(
            sentences=(Sentence(phrase(name, shop=task.shop_name), kind="meta"),),
            kind="empty_query",
            generator=self.name,
        )

    def _no_answer(self, task: Task, why: str, *details: str) -> Draft:
        return Draft(
            sentences=(Sentence(phrase("no_answer", shop=task.shop_name), kind="meta"),),
            kind="no_answer",
            generator=self.name,
            notes=(why, *details),
        )

    # -- what the question is about --------------------------------------------------------------

    def _targets(self, work: _Work) -> list[Document]:
        """Products the question is about: resolved ones (ids, mention, history), else ones it names by title."""
        task, intent = work.task, work.intent
        docs = task.documents
        resolved = [docs[d] for d in task.resolution.doc_ids if d in docs and docs[d].kind == "product"]
        named = _named_products(intent, [d for d in docs.values() if d.kind == "product"])
        if resolved and task.resolution.from_history:
            # A conversation's earlier product counts only while the question still talks about a product.
            if named:
                return named
            refers = bool(_PRONOUN_RE.search(intent.lower)) or intent.elliptical or intent.product_specific
            return resolved if refers else []
        out = list(resolved)
        for doc in named:
            if doc not in out and (intent.comparison or not out):
                out.append(doc)
        return out[:4]

    # -- shipping to a country -------------------------------------------------------------------

    def _shipping(self, work: _Work, targets: list[Document]) -> _Answer | None:
        task, intent = work.task, work.intent
        if not intent.shipping_place or not intent.shipping:
            return None
        region = _region_named(intent.text)
        code = intent.countries[0] if intent.countries else (task.country or "").upper() or None
        if region is None and task.region and code and not intent.countries:
            name = _region_name(code, task.region)  # the buyer's own state or province, from the context
            region = (code, name) if name else None
        if code is None and region is not None:
            code = region[0]  # "Do you ship to Alaska?" is a question about the country Alaska is in
        if code is None:
            return None
        place_name = region[1].lower() if region is not None and region[0] == code else None
        units = [
            u for u in _units(task) if u.evidence.passage.kind != "product" or (u.doc is not None and u.doc in targets)
        ]
        shipping_units = [u for u in units if _is_shipping_unit(u)]
        # a sentence names the destination itself, its region, or sits under a heading that names it ("Canada")
        direct = [
            u
            for u in shipping_units
            if code in country_codes_in(u.text)
            or (place_name is not None and place_name in u.text.lower())
            or code in country_codes_in(u.context)
        ]
        grouped = [
            u
            for u in shipping_units
            if u not in direct and any(code in members for members in group_members(u.text).values())
        ]
        # A product in view may have its own delivery rule ("knives can only be delivered to UK addresses"), which
        # outranks the general destination table.
        kinds = frozenset().union(*(_kind_stems(d) for d in targets))
        restricted = [
            u
            for u in shipping_units
            if u not in direct and u not in grouped and kinds & content_stems(u.text) and _SHIP_WORDS.search(u.text)
        ]
        if direct or grouped or restricted:
            pool = direct + grouped + restricted
            _score(work, pool)
            place = place_name or _place_phrase(intent.text, code)
            for u in pool:
                u.score += 0.15 if u in direct else 0.0
                u.score += 0.1 if place and place in u.text.lower() else 0.0  # "Northern Ireland", not just "UK"
                # "how long?" / "how much?" is answered by the sentence with the duration or the price in it
                u.score += 0.12 if intent.asks_duration and _DURATION.search(u.text) else 0.0
                u.score += 0.12 if intent.price and _MONEY.search(u.text) else 0.0
                u.score += 0.35 if kinds & content_stems(u.text) else 0.0
            pool.sort(key=lambda u: -u.score)
            chosen = [pool[0]]
            for u in pool[1:]:
                if place and place in pool[0].text.lower() and place not in u.text.lower():
                    continue  # the sentence about Alaska answers for Alaska; the mainland rate would mislead
                if len(chosen) < 2 and u.score >= pool[0].score - 0.06 and _fits(chosen, u):
                    chosen.append(u)
            # best first: the sentence naming the buyer's country with the asked figure leads
            answer = _Answer()
            for u in chosen:
                _quote(answer, u)
            for d in targets:
                answer.use(d.id)
            return answer
        # The country appears nowhere in the evidence: is it absent from the whole shipping policy too?
        policy_text = "\n".join(
            [
                *(
                    d.body + "\n" + "\n".join(s.text for s in d.sections)
                    for d in task.documents.values()
                    if d.link_type == "shipping_policy"
                ),
                *(u.text for u in shipping_units),
            ]
        )
        if not policy_text.strip():
            return None
        if code in country_codes_in(policy_text) or any(code in m for m in group_members(policy_text).values()):
            return None  # named in a part of the policy the evidence does not hold: general selection answers
        if not country_codes_in(policy_text) and not group_members(policy_text):
            return None  # the policy names no places at all, so "not listed" would mean nothing
        answer = _Answer()
        answer.meta(phrase("not_listed_country", country=country_name(code)))
        answer.not_recorded = True
        candidates = [u for u in shipping_units if not u.text.rstrip().endswith(":")]
        if candidates:
            probe = "Which countries and destinations do you ship and deliver to?"
            sims = work.similarity([u.text for u in candidates], probe=probe)
            for u, s in zip(candidates, sims, strict=True):
                # the sentence naming the most destinations says best where the shop does ship
                places = len(country_codes_in(u.text)) + 2 * len(group_members(u.text))
                u.score = float(s) + 0.03 * places
            candidates.sort(key=lambda u: -u.score)
            best = candidates[0]
            _quote(answer, best)
            for u in candidates[1:3]:
                if u.score >= best.score - 0.05 and len(best.text) + len(u.text) <= NOT_LISTED_CHARS:
                    _quote(answer, u)
                    break
        for d in task.documents.values():
            if d.link_type == "shipping_policy":
                answer.use(d.id)
        return answer

    # -- products --------------------------------------------------------------------------------

    def _product(self, work: _Work, targets: list[Document]) -> _Answer | None:
        task, intent = work.task, work.intent
        if not targets:
            return None
        has_policy_evidence = any(ev.passage.kind != "product" for ev in task.evidence)
        strong_product = bool(intent.concepts) or intent.options or intent.stock
        if intent.policy and has_policy_evidence and not (strong_product and not _process_words(intent)):
            return None  # "can I return these boots?" is answered by the refund policy
        offer = _SELL_RE.match(intent.lower) and not re.search(r"\bin stock\b|\bavailable\b", intent.lower)
        if offer and not (intent.concepts or intent.price or intent.options or intent.colours):
            # "Do you sell the Tarn boot?" with the product named: it is in the catalogue; say so, with its price
            return self._offered(work, targets)
        if _HOW_TO.match(intent.lower) and not (intent.price or intent.stock or intent.options):
            # "How do I look after a cast iron pan?" is answered by the care guide's "Cast iron" section, not by
            # the pan's recorded facts
            guide = self._guide(work, targets)
            if guide is not None:
                return guide
        if len(targets) > 1:
            return self._compare(work, targets)
        doc = targets[0]
        if not intent.options and _named_option(intent, doc):
            # "what scents does it come in?": an option name the merchant chose (Scent, Finish, Flavour) asks for
            # its values, as "colours" and "sizes" do
            intent = work.intent = replace(intent, options=True)
        answer = _Answer()
        answer.use(doc.id)
        commerce = intent.price or intent.stock or intent.options or bool(intent.colours) or _asks_sku(intent)
        variant = _named_variant(task, doc)
        if (
            variant is not None
            and usable_value(variant.title)
            and len(doc.variants) > 1
            and not (intent.price or intent.stock)
        ):
            # "is this the long leg?" about a variant named by id: say which variant it is
            answer.claim(
                f"This is the {variant.title} variant of the {doc.title}",
                _cites_for(task, doc, variant.title),
                markdown=f"This is the {variant.title} variant of the **{doc.title}**",
                doc=doc.id,
            )
        if commerce:
            answer.extend(self._commerce(work, doc))
        if intent.concepts or not commerce:
            answer.extend(self._attribute(work, doc, standalone=not commerce))
        if not answer.sentences:
            return None
        if answer.not_recorded and commerce:
            # "what size is the bottle?" names no option the product has, but its description may state it
            chosen = _chosen_units(_ranked_units(work, doc))
            if chosen:
                answer = _Answer()
                for n, unit in enumerate(chosen):
                    _state_unit(answer, work, doc, unit, lead=n == 0)
        if answer.not_recorded and has_policy_evidence:
            # The product does not record it, but a policy or FAQ may answer it outright ("do I need ID for a knife?").
            policy = self._select(work, targets, policy_only=True)
            if policy is not None:
                return policy
        return answer

    def _offered(self, work: _Work, targets: list[Document]) -> _Answer:
        answer = _Answer()
        answer.meta("Yes.")
        for doc in targets[:3]:
            answer.use(doc.id)
            price = doc.fact("sale") or doc.fact("price")
            if price is not None:
                _fact_sentence(answer, work, doc, price, lead=False)
            else:
                answer.claim(f"The shop sells the {doc.title}", _cites_for(work.task, doc), doc=doc.id)
        return answer

    def _guide(self, work: _Work, targets: list[Document]) -> _Answer | None:
        """A page or FAQ section whose heading names what a how-to question is about, quoted from its start."""
        units = [u for u in _units(work.task) if u.evidence.passage.kind != "product" and not u.header]
        wanted = work.asked - _GENERIC_QUERY_STEMS - _HOW_TO_STEMS
        units = [u for u in units if wanted & content_stems(u.context)]
        if not units:
            return None
        _score(work, units)
        best = max(units, key=lambda u: (u.context_semantic, u.score))
        if best.context_semantic < GUIDE_HEADING_SEMANTIC:
            return None
        entry = sorted((u for u in units if u.evidence.passage.id == best.evidence.passage.id), key=lambda u: u.key)
        answer = _Answer()
        chosen: list[_Unit] = []
        for u in entry:
            if len(chosen) >= 2 or not _fits(chosen, u):
                break
            chosen.append(u)
            _quote(answer, u)
        for doc in targets:
            answer.use(doc.id)
        return answer if answer.sentences else None

    def _attribute(self, work: _Work, doc: Document, *, standalone: bool) -> _Answer:
        """The recorded fact(s) the question asks about, a description sentence, or "not recorded"."""
        intent = work.intent
        answer = _Answer()
        answer.use(doc.id)
        asked = _attribute_stems(intent, doc)
        if standalone and not intent.concepts and intent.overview:
            return self._overview(work, doc)
        if standalone and not intent.concepts and not asked:
            # no attribute word survives ("what is it compatible with?"): a unit clearing the bar answers, else
            # the overview does
            chosen = _chosen_units(_ranked_units(work, doc))
            if not chosen:
                return self._overview(work, doc)
            for n, unit in enumerate(chosen):
                _state_unit(answer, work, doc, unit, lead=n == 0)
            return answer
        facts = _concept_facts(work, doc) or _match_facts(work, doc, asked)
        if facts:
            first = True
            for fact in facts[:2]:
                _fact_sentence(answer, work, doc, fact, lead=first)
                first = False
            return answer
        # Every recorded unit of the product (facts, options, brand/type/tags, description sentences with their
        # lists) is scored by the calibrated ranker; the best ones above its bar answer.
        ranked = _ranked_units(work, doc)
        chosen = _chosen_units(ranked)
        if chosen:
            first = True
            for unit in chosen:
                _state_unit(answer, work, doc, unit, lead=first)
                first = False
            return answer
        # Not recorded: say so, then what is recorded that comes closest.
        answer.not_recorded = True
        answer.meta(
            phrase("not_recorded", subject=_subject(doc), predicate=_predicate(intent, doc) or ""),
            markdown=phrase(
                "not_recorded", subject=_subject(doc, md=True), predicate=_predicate(intent, doc, md=True) or ""
            ),
        )
        related = _related_facts(work, doc, ranked)
        for fact in related[:1]:
            _fact_sentence(answer, work, doc, fact, lead=False, pronoun=True)
        return answer

    def _overview(self, work: _Work, doc: Document) -> _Answer:
        answer = _Answer()
        answer.use(doc.id)
        description = [s for s in split_sentences(doc.body) if not _is_untrusted(s)]
        for sentence in description[:2]:
            if sum(len(s.text) for s in answer.sentences) + len(sentence) > MAX_CHARS - 80:
                break
            answer.claim(sentence, _cites_for(work.task, doc, sentence), doc=doc.id)
        price = doc.fact("sale") or doc.fact("price")
        if price is not None:
            _fact_sentence(answer, work, doc, price, lead=False)
        if not answer.sentences:
            for fact in [f for f in doc.facts if f.key not in _COMMERCE_KEYS][:2]:
                _fact_sentence(answer, work, doc, fact, lead=False)
        return answer

    def _commerce(self, work: _Work, doc: Document) -> _Answer:
        """Price, stock and options, from the variants and the price facts."""
        task, intent = work.task, work.intent
        answer = _Answer()
        answer.use(doc.id)
        options = _options(doc)
        chosen, missing = _match_options(intent, options)
        named = _named_variant(task, doc)
        variants = [named] if named else _variants_with(doc, chosen) if chosen else []
        title = doc.title
        cites = _cites_for(task, doc)

        for name, _value in missing:
            # The recorded options are the whole list, so an option outside it is answered by the list itself.
            values = list(dict(options).get(name, ()))
            if values:
                sizes = "sizes " if _is_size_option(name) and not _is_colour_option(name) else ""
                answer.claim(
                    f"The {title} comes in {sizes}{join_and(values)} only",
                    cites,
                    markdown=f"The **{title}** comes in {sizes}{join_and(values)} only",
                )

        if intent.price:
            self._price(answer, doc, variants, cites)
        if intent.stock and re.search(r"\bwhen\b|\bhow long\b|\bback in stock\b|\brestock", intent.lower):
            answer.meta(
                phrase("not_recorded", subject=f"the {title}", predicate=f"when the {title} will be back in stock"),
                markdown=phrase(
                    "not_recorded", subject=f"the **{title}**", predicate=f"when the **{title}** will be back in stock"
                ),
            )
            answer.not_recorded = True
        if _asks_sku(intent):
            coded = [v for v in (variants or doc.variants) if v.sku][:4]
            for v in coded:
                which = "" if len(doc.variants) == 1 else f" in {v.title}"
                answer.claim(
                    f"The SKU of the {title}{which} is {v.sku}",
                    cites,
                    markdown=f"The SKU of the **{title}**{which} is {v.sku}",
                )
        if variants and (intent.stock or named):
            _stock_sentences(answer, doc, variants, cites)
        elif intent.stock and not variants:
            availability = doc.fact("availability")
            if availability is not None:
                _fact_sentence(answer, work, doc, availability, lead=False)
            elif doc.variants:
                _stock_sentences(answer, doc, list(doc.variants), cites)
        if chosen and not intent.stock and not intent.price and not missing and intent.yes_no and not named:
            named_values = [v for vals in chosen.values() for v in vals]
            answer.claim(
                f"Yes, the {title} comes in {join_and(named_values)}",
                cites,
                markdown=f"Yes, the **{title}** comes in {join_and(named_values)}",
            )
        wants_list = intent.options and not chosen and not missing
        if wants_list:
            asked = _asked_options(intent, options)
            for option_name, option_values in asked[:2]:
                label = _plural_label(option_name.lower())
                verb = "are" if len(option_values) > 1 else "is"
                listed = join_and(list(option_values))
                answer.claim(
                    f"The {label} of the {title} {verb} {listed}",
                    cites,
                    markdown=f"The {label} of the **{title}** {verb} {listed}",
                )
            word = _OPTION_WORD.search(intent.lower)
            if not options and word:
                # one variant and no options: nothing to list, and silence would read as if the question was missed
                asked_word = _plural_label(word.group(0))
                answer.meta(
                    phrase("not_recorded", subject="", predicate=f"any {asked_word} for the {title}"),
                    markdown=phrase("not_recorded", subject="", predicate=f"any {asked_word} for the **{title}**"),
                )
                answer.not_recorded = not answer.sentences[:-1]
        answer.sentences = _dedupe_sentences(answer.sentences)
        return answer

    def _price(self, answer: _Answer, doc: Document, variants: list[Variant], cites: list[int]) -> None:
        title = doc.title
        currency = doc.currency or "USD"
        if variants and (len(variants) < len(doc.variants) or len(doc.variants) == 1):
            priced = [v for v in variants if v.price is not None][:3]
            prices = {v.price for v in priced}
            if len(doc.variants) == 1 or not all(usable_value(v.title) for v in priced):
                # one variant (Shopify's "Default Title"): its price is the product's price
                priced = priced[:1]
                if priced:
                    value = format_money(priced[0].price, currency)
                    answer.claim(
                        f"The price of the {title} is {value}",
                        cites,
                        markdown=f"The price of the **{title}** is {value}",
                    )
                    return
            if priced and len(prices) == 1 and len(priced) > 1:
                value = format_money(priced[0].price, currency)
                answer.claim(
                    f"The price of the {title} in {join_and([v.title for v in priced])} is {value}",
                    cites,
                    markdown=f"The price of the **{title}** in {join_and([v.title for v in priced])} is {value}",
                )
                return
            for v in priced:
                value = format_money(v.price, currency)
                was = (
                    f", reduced from {format_money(v.compare_at_price, currency)}"
                    if v.compare_at_price and _greater(v.compare_at_price, v.price or "0")
                    else ""
                )
                answer.claim(
                    f"The price of the {title} in {v.title} is {value}{was}",
                    cites,
                    markdown=f"The price of the **{title}** in {v.title} is {value}{was}",
                )
            if priced:
                return
        fact = doc.fact("sale") or doc.fact("price")
        if fact is not None:
            if fact.key == "sale":
                answer.claim(
                    f"The {title} is on sale: {_plain(fact.value)}",
                    cites,
                    markdown=f"The **{title}** is on sale: {fact.value}",
                )
            else:
                answer.claim(
                    f"The {title} is priced {_price_phrase(fact.value)}",
                    cites,
                    markdown=f"The **{title}** is priced {_price_phrase(fact.value)}",
                )
            return
        priced = [v for v in doc.variants if v.price is not None]
        if priced:
            low = min(priced, key=lambda v: float(v.price or 0))
            answer.claim(
                f"The price of the {title} is {format_money(low.price, currency)}",
                cites,
                markdown=f"The price of the **{title}** is {format_money(low.price, currency)}",
            )

    def _compare(self, work: _Work, targets: list[Document]) -> _Answer:
        """One sentence per product for what the question asks (or "not recorded" for that product)."""
        intent = work.intent
        answer = _Answer()
        names = frozenset().union(*(_title_stems(d) for d in targets))
        differing = _differing_key(targets)
        for doc in targets[:4]:
            answer.use(doc.id)
            part = _Answer()
            if intent.price:
                self._price(part, doc, [], _cites_for(work.task, doc))
            if intent.options and not intent.price:
                # "which colours do they come in?": each product's own option list
                part.extend(self._commerce(work, doc))
            elif intent.concepts or not intent.price:
                asked = _attribute_stems(intent, doc) - names - _COMPARISON_STEMS
                facts = _match_facts(work, doc, asked) if (asked or intent.concepts) else []
                if facts:
                    _fact_sentence(part, work, doc, facts[0], lead=False)
                elif intent.concepts or asked:
                    chosen = _chosen_units(_ranked_units(work, doc))
                    if chosen:
                        _state_unit(part, work, doc, chosen[0], lead=False)
                    else:
                        part.meta(
                            phrase("not_recorded", subject=_subject(doc), predicate=_predicate(intent, doc) or ""),
                            markdown=phrase(
                                "not_recorded",
                                subject=_subject(doc, md=True),
                                predicate=_predicate(intent, doc, md=True) or "",
                            ),
                        )
                elif not intent.price:
                    # "what's the difference?": the price, and the first recorded attribute whose values differ
                    price = doc.fact("sale") or doc.fact("price")
                    if price is not None:
                        _fact_sentence(part, work, doc, price, lead=False)
                    fact = doc.fact(differing) if differing else None
                    if fact is not None and len(targets) == 2:
                        _fact_sentence(part, work, doc, _safe_fact(fact), lead=False)
            answer.extend(part)
        if answer.sentences and all(s.kind == "meta" for s in answer.sentences):
            answer.not_recorded = True
        return answer

    # -- catalogue questions ---------------------------------------------------------------------

    def _catalogue(self, work: _Work, targets: list[Document]) -> _Answer | None:
        """ "Do you sell tents?", "which jackets are waterproof?": the matching products, one sentence each."""
        task, intent = work.task, work.intent
        if targets or intent.policy or not intent.catalogue:
            return None
        products: list[Document] = []
        for ev in task.evidence:
            doc = task.documents.get(ev.passage.doc_id)
            if doc is not None and doc.kind == "product" and doc not in products:
                products.append(doc)
        if not products:
            return None
        wanted = {
            w
            for w in intent.stems - _CATALOGUE_STEMS - _GENERIC_QUERY_STEMS - _concept_stems(intent)
            if not w.isdigit()
        }
        headers = [f"{d.title}. {d.product_type or ''}" for d in products]
        sims = work.similarity(headers)
        keep: list[Document] = []
        for doc, sim in zip(products, sims, strict=True):
            words = content_stems(" ".join([doc.title, doc.product_type or "", " ".join(doc.tags)]))
            # most of what the buyer wants must be in the product's name, type or tags ("gift wrapping" is not a
            # gift card)
            # "which of your products are vegan?" names no goods: every product recorded as vegan answers
            if (wanted and len(wanted & words) >= 0.6 * len(wanted)) or sim >= 0.55 or (intent.concepts and not wanted):
                keep.append(doc)
        if not keep:
            return None
        answer = _Answer()
        for doc in keep:
            if len(answer.sentences) >= 3:
                break
            fact = None
            if intent.concepts:
                facts = _match_facts(work, doc, _attribute_stems(intent, doc))
                fact = facts[0] if facts else None
                if fact is None or _BOOLEAN_VALUES.get(fact.value.strip().lower()) is False:
                    continue  # only products recorded as having the asked property
            answer.use(doc.id)
            if fact is not None:
                _fact_sentence(answer, work, doc, fact, lead=False)
            else:
                price = doc.fact("sale") or doc.fact("price")
                if price is not None:
                    _fact_sentence(answer, work, doc, price, lead=False)
                else:
                    first = _first_passage(task, doc)
                    lines = quotable_lines(first.passage) if first is not None else []
                    if lines:
                        answer.claim(lines[0], _cites_for(task, doc), doc=doc.id)
        return answer if answer.sentences else None

    # -- sentence selection ----------------------------------------------------------------------

    def _select(self, work: _Work, targets: list[Document], *, policy_only: bool = False) -> _Answer | None:
        """The best one to three evidence sentences for a policy, FAQ or general question."""
        task, intent = work.task, work.intent
        units = _units(task)
        deictic = not targets and bool(_DEICTIC_RE.search(intent.lower))
        if policy_only:
            # a policy answers a product's question only where it speaks of that product or its kind, and of no other
            kinds = frozenset().union(*(_kind_stems(d) for d in targets))
            others = [d.title.lower() for d in task.documents.values() if d.kind == "product" and d not in targets]
            own = {w.lower() for d in targets for w in re.findall(r"[\w'’]+", d.title)} | {
                w.lower() for w in re.findall(r"[\w'’]+", task.shop_name)
            }
            units = [
                u
                for u in units
                if u.evidence.passage.kind != "product"
                and kinds & content_stems(u.text + " " + u.context)
                and not any(title in u.text.lower() for title in others)
                and not _names_other_product(u.text, own)
            ]
        elif (intent.policy and any(u.evidence.passage.kind != "product" for u in units)) or (
            deictic and intent.product_specific
        ):
            # Process questions are answered by policies and pages, even when a product is in view; and "is this
            # in stock?" about a product nobody could identify is never answered from some other product.
            units = [u for u in units if u.evidence.passage.kind != "product"]
        # "this policy explains how to return it" points at the answer instead of giving it
        units = [u for u in units if not u.header and not _SELF_REFERENCE.search(u.text)]
        if intent.shipping and _SHIP_WORDS.search(intent.lower) and not (intent.stems & _RETURN_STEMS):
            # "How long will delivery take?" is answered by the shipping policy, not by a refund rule that happens
            # to say "delivery date"; shops without a typed shipping policy keep every passage
            shipping = [u for u in units if u.evidence.passage.link_type == "shipping_policy"]
            units = shipping or units
        if not units:
            return None
        if task.resolution.unresolved and deictic and intent.product_specific and not intent.policy:
            work.notes.append("the question is about a product whose id could not be resolved")
            return None
        absent = _absent_names(work.intent.text, task)
        # "these boots" names the product in view, which a policy does not mention: score on the rest of the words
        in_view = frozenset().union(*(_title_stems(d) | content_stems(d.product_type or "") for d in targets))
        _score(work, units, ignore=in_view)
        # A bare "Yes." answers its own FAQ question: unless that question is this one, quoting it would answer this
        # one ("Do you offer click and collect?" - "Yes." from "Do you offer samples?")
        ranked = [
            u
            for u in sorted(units, key=lambda u: -u.score)
            if not (_BARE_YES_NO.match(u.text) and u.context.endswith("?") and u.context_semantic < FAQ_QUESTION_MATCH)
        ]
        if not ranked:
            return None
        best = ranked[0]
        work.notes.append(
            f"best sentence score {best.score:.3f} (similarity {best.semantic:.3f}, "
            f"heading similarity {best.context_semantic:.3f}, overlap {best.lexical:.2f})"
        )
        # A question with a store-process word ("return", "deliver") is about the shop even when the wording is far
        # from the policy's, so a lower floor applies, provided the process word itself is matched.
        process = intent.policy and best.lexical >= 0.3 and not work.guarded
        floor, semantic_floor = (
            (MIN_RELEVANCE_PROCESS, MIN_SEMANTIC_PROCESS) if process else (MIN_RELEVANCE, MIN_SEMANTIC)
        )
        if work.guarded:
            floor = MIN_RELEVANCE_GUARDED
        # A process question about a product in view is answered by the policy's entry naming the product's kind
        # ("Candles that have been lit" under "Items we cannot take back"), however the question is worded.
        specific = _kind_rule(ranked, best, targets, intent) if intent.policy and not work.guarded else None
        if (specific is None or not targets) and (
            best.score < floor or max(best.semantic, best.context_semantic) < semantic_floor
        ):
            return None
        # a sentence or FAQ question that plainly answers is not second-guessed
        plainly = best.semantic >= 0.6 or best.context_semantic >= FAQ_QUESTION_MATCH
        compounds = [] if plainly else _absent_compounds(work, units)
        if compounds:
            # "gift wrapping" against "gift cards": the shop names a different thing sharing a word with the asked one
            answer = _Answer(not_recorded=True)
            answer.meta(phrase("not_mentioned", thing=join_and(compounds), shop=task.shop_name))
            work.notes.append(f"the question asks about {', '.join(compounds)}, which no evidence mentions")
            return answer
        names = _query_names(intent.text)
        if names and not best.plain_overlap and best.semantic < 0.6 and intent.stems - names - _OFFER_STEMS:
            # only a name matched ("the weather in Keswick" against Keswick's address): not what was asked; "do you
            # take Bancontact?" asks about nothing but the name, so a sentence naming it answers
            return None
        key = _key_word(units, intent, ignore=in_view)
        if (
            key
            and specific is None
            and best.semantic < 0.6
            and not any(key in content_stems(u.text + " " + u.context) for u in ranked[:3])
        ):
            # the question's most specific word ("parking") is in the evidence, but not where the best sentences are
            work.notes.append(f"the best sentences do not mention {key!r}")
            return None
        if policy_only and (best.score < POLICY_OVER_PRODUCT or best.lexical < 0.5):
            return None
        section = None if absent or targets else self._section_answer(units, targets)
        if section is not None:
            return section  # a section whose heading is the question answers it, before any list entry
        if specific is not None:
            # The same policy's line naming the product's kind ("Coffee beans and other food" under "What we can't
            # take back", for a bag of beans) is the rule for this product; the general rule, or an FAQ entry about
            # selling such goods, would mislead.
            answer = _Answer()
            _quote(answer, specific, lead="" if _bare_item(specific) else _heading_lead(specific))
            for doc in targets:
                answer.use(doc.id)
            return answer
        faq = None if absent else self._faq_answer(units, best, targets)
        if faq is not None:
            return faq
        chosen = [best]
        for u in ranked[1:]:
            if len(chosen) >= 3:
                break
            same = u.evidence.passage.id == best.evidence.passage.id
            floor = best.score * (0.8 if same else 0.95)
            if not same and u.semantic < 0.5:
                continue  # a second source must be on topic in its own right
            if u.score >= floor and _fits(chosen, u) and not _near_duplicate(u, chosen):
                chosen.append(u)
        chosen = _with_context(units, chosen)
        chosen.sort(key=lambda u: u.key)
        answer = _Answer()
        if absent:
            # "Can I pay with Klarna?": say the shop never mentions it, then what it does say
            answer.meta(phrase("not_mentioned", thing=join_and(absent), shop=task.shop_name))
            work.notes.append(f"the question names {', '.join(absent)}, which no evidence mentions")
        for u in chosen:
            _quote(answer, u)
        for doc in targets:
            answer.use(doc.id)  # the question is about it: the policy answers for this product
        return answer

    @staticmethod
    def _section_answer(units: list[_Unit], targets: Sequence[Document]) -> _Answer | None:
        """A policy or page section whose heading is the question ("How to start a return" for "How do I start a
        return?") answers it from its first sentences, as an FAQ entry whose question matches does."""
        sections = [u for u in units if u.evidence.passage.kind in ("policy", "page") and u.lead is None]
        if not sections:
            return None
        top = max(sections, key=lambda u: (u.context_semantic, u.score))
        if top.context_semantic < HEADING_QUESTION_MATCH:
            return None
        entry = sorted((u for u in units if u.evidence.passage.id == top.evidence.passage.id), key=lambda u: u.key)
        chosen: list[_Unit] = []
        for u in entry:
            if len(chosen) >= 3 or not _fits(chosen, u):
                break
            chosen.append(u)
        if not chosen:
            return None
        answer = _Answer()
        for u in chosen:
            _quote(answer, u)
        for doc in targets:
            answer.use(doc.id)
        return answer

    @staticmethod
    def _faq_answer(units: list[_Unit], best: _Unit, targets: Sequence[Document]) -> _Answer | None:
        """An FAQ entry whose question matches this one is answered by quoting its answer from the start."""
        faq = [u for u in units if u.evidence.passage.kind == "faq" and u.lead is None]
        if not faq:
            return None
        top = max(faq, key=lambda u: (u.context_semantic, u.score))
        # When the best sentence is itself an FAQ answer, the entry whose QUESTION is clearly closer to the query
        # answers it: "Do you have a physical store?" is "Do you have a shop I can visit?", not the wholesale entry
        # whose answer happens to say "stores".
        closer_question = (
            best.evidence.passage.kind == "faq"
            and top.evidence.passage.id != best.evidence.passage.id
            and top.context_semantic >= FAQ_QUESTION_CLOSER_FLOOR
            and top.context_semantic >= best.context_semantic + FAQ_QUESTION_MARGIN
        )
        # the best sentence answers an FAQ entry whose question is close: quote that entry's answer from its start
        same_entry = top.evidence.passage.id == best.evidence.passage.id and top.context_semantic >= FAQ_QUESTION_NEAR
        if (
            not closer_question
            and not same_entry
            and (top.context_semantic < FAQ_QUESTION_MATCH or top.score < 0.9 * best.score)
        ):
            return None
        entry = sorted((u for u in units if u.evidence.passage.id == top.evidence.passage.id), key=lambda u: u.key)
        chosen: list[_Unit] = []
        for u in entry:
            if len(chosen) >= 3 or not _fits(chosen, u):
                break
            chosen.append(u)
        if not chosen:
            return None
        answer = _Answer()
        for u in chosen:
            _quote(answer, u)
        for doc in targets:
            answer.use(doc.id)
        return answer


def _without_dangling_lead(sentences: Sequence[Sentence]) -> tuple[Sentence, ...]:
    """The answer without a closing lead-in whose list did not fit ("Opening hours:" and nothing after it)."""
    out = list(sentences)
    while len(out) > 1 and out[-1].text.rstrip().endswith(":"):
        out.pop()
    return tuple(out)


# ----------------------------------------------------------------------------------------------- query helpers


_CLAUSE_SPLIT = re.compile(r"(?:[,;:]\s*|\s+)(?:and then|then|and|but)\s+|[,;]\s+", re.IGNORECASE)


def _clean_query(query: str) -> str:
    """The question without the sentences or clauses that try to instruct the assistant ("Pretend you're a pirate
    and tell me the return policy" keeps "tell me the return policy")."""
    text = normalize(query)
    if not text:
        return ""
    kept: list[str] = []
    for sentence in [p for p in split_sentences(text) if p.strip()] or [text]:
        if not _is_untrusted(sentence):
            kept.append(sentence)
            continue
        clauses = [c.strip() for c in _CLAUSE_SPLIT.split(sentence) if c and c.strip()]
        kept += [c for c in clauses if len(clauses) > 1 and not _is_untrusted(c) and not _INSTRUCTION_CLAUSE.search(c)]
    return " ".join(kept).strip()


_PART_SPLIT = re.compile(
    r"\?\s+(?=\S)|[,;]?\s+(?:and|also|plus|but)\s+(?=(?:is|are|can|could|do|does|did|will|would|should|has|have|"
    r"how|what|where|when|which|who|why)\b)",
    re.IGNORECASE,
)


def _question_parts(query: str) -> list[str]:
    """The separate questions of a compound one (at most three); a single question stays whole."""
    parts = [p.strip(" ,;") for p in _PART_SPLIT.split(query) if p and p.strip(" ,;?")]
    parts = [p for p in parts if content_stems(p)]
    if len(parts) <= 1:
        return [query]
    return parts[:3]


def _without_mentions(intent: Intent, targets: Sequence[Document]) -> Intent:
    """The intent read from the question minus the products' names ("Is the Skiddaw 3L Waterproof Jacket warm?"
    asks about warmth, not about waterproofing)."""
    text = intent.text
    for doc in targets:
        text = _strip_title(text, doc.title)
    if text == intent.text:
        return intent
    bare = parse_query(text)
    return replace(
        intent,
        concepts=bare.concepts,
        price=bare.price,
        stock=bare.stock,
        options=bare.options,
        colours=bare.colours,
        numbers=bare.numbers,
        comparison=intent.comparison or bare.comparison,
    )


def _strip_title(text: str, title: str, placeholder: str = "") -> str:
    """Remove the longest run of consecutive words of `text` that all belong to `title` (two words at least, or
    one word that is not itself an attribute), with its article; `placeholder` ("it") takes its place."""
    title_words = {w.lower() for w in re.findall(r"[\w'’]+", title)}
    tokens = list(re.finditer(r"[\w'’]+", text))
    best: tuple[int, int] | None = None
    i = 0
    while i < len(tokens):
        j = i
        seen: set[str] = set()
        # a repeated word ends the run: "the Skiddaw waterproof jacket waterproof?" still asks "waterproof"
        while j < len(tokens) and tokens[j].group(0).lower() in title_words - seen:
            seen.add(tokens[j].group(0).lower())
            j += 1
        if j > i and (best is None or j - i > best[1] - best[0]):
            best = (i, j)
        i = max(j, i + 1)
    if best is None:
        return text
    start, end = best
    if end - start < 2:
        word = tokens[start].group(0)
        # one word names the product only if it is not itself what the question asks ("is it waterproof?")
        if len(word) < 4 or parse_query(word).product_specific:
            return text
    before = text[: tokens[start].start()]
    if placeholder:
        before = re.sub(r"\b(?:the|this|that|these|those|a|an|my|your|our)\s+$", "", before, flags=re.IGNORECASE)
    after = text[tokens[end - 1].end() :]
    after = re.sub(r"^\s*(?:-\s*)?(?:men's|women's|kids'|unisex)\b", "", after, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", f"{before} {placeholder} {after}").strip()


def _with_history(intent: Intent, task: Task) -> Intent:
    """A follow-up that names no attribute ("and the women's one?") asks what the previous question asked; one
    about delivery ("and how long does it take?") keeps the previous question's destination."""
    if not task.history:
        return intent
    previous = parse_query(task.history[-1].query)
    short = intent.elliptical or len(intent.lower.split()) <= 6
    delivery = intent.shipping or intent.asks_duration or intent.asks_quantity
    if previous.countries and previous.shipping and short and delivery and not intent.countries:
        return replace(intent, shipping=True, shipping_place=True, countries=previous.countries)
    if intent.product_specific:
        return intent
    if not (intent.elliptical or len(intent.lower.split()) <= 4):
        return intent
    if not previous.product_specific:
        return intent
    return replace(
        intent,
        concepts=previous.concepts,
        price=previous.price,
        stock=previous.stock,
        options=previous.options,
        yes_no=previous.yes_no,
        stems=intent.stems | (previous.stems - _GENERIC_QUERY_STEMS),
    )


def _process_words(intent: Intent) -> bool:
    """True when the question is about a store process (return, deliver...) rather than an attribute word."""
    return bool(
        re.search(
            r"\breturn\w*|\brefund\w*|\bexchang\w*|\bship\w*|\bdeliver\w*|\bpostage\b|\bpay\w*|\bdiscount\w*|"
            r"\bcancel\w*|\btrack\w*|\bclaim\w*|\brepair\w*|\bcollect\w*|\bsend\b",
            intent.lower,
        )
    )


def _concept_stems(intent: Intent) -> frozenset[str]:
    words: set[str] = set()
    for name in intent.concepts:
        concept = CONCEPTS_BY_NAME[name]
        words |= content_stems(" ".join(k.replace("_", " ") for k in concept.keys))
        words |= content_stems(concept.noun)
    return frozenset(words)


def _title_stems(doc: Document) -> frozenset[str]:
    return content_stems(" ".join([doc.title, doc.handle or ""]).replace("-", " "))


def _named_products(intent: Intent, products: list[Document]) -> list[Document]:
    """Products the question names by distinctive title words ("the Tarn wellies", "Skiddaw or Cairngorm?")."""
    if not products:
        return []
    titles = {d.id: content_stems(d.title) for d in products}
    # Words of product types name categories ("boots", "bottles"), never one product.
    category = content_stems(" ".join(d.product_type or "" for d in products))
    frequency: dict[str, int] = {}
    for stems in titles.values():
        for s in stems:
            frequency[s] = frequency.get(s, 0) + 1
    # Men's and women's versions share a name, so a word in two titles can still name the product.
    limit = max(2, len(products) // 3)
    attribute_words = _concept_stems(intent)
    candidates: list[tuple[float, frozenset[str], Document]] = []
    for doc in products:
        stems = titles[doc.id]
        if not stems:
            continue
        matched = stems & intent.stems
        distinctive = {
            s
            for s in matched
            if frequency.get(s, 0) <= limit and s not in attribute_words and s not in category and not s.isdigit()
        }
        share = len(matched) / len(stems)
        if len(matched) == 1 and _part_of_other_name(intent.text, doc.title):
            continue  # "Scafell Pike" is a mountain, not the Scafell trousers
        if (distinctive and (share >= 0.3 or (len(distinctive) >= 1 and any(len(s) >= 4 for s in distinctive)))) or (
            share >= 0.75 and len(matched) >= 2
        ):
            candidates.append((share, frozenset(matched), doc))
    # A product whose matched words are a strict subset of another's is the less specific reading.
    kept = [c for c in candidates if not any(c[1] < other[1] for other in candidates)]
    kept.sort(key=lambda c: -c[0])
    return [doc for _, _, doc in kept[:4]]


def _part_of_other_name(text: str, title: str) -> bool:
    """True when the question writes a title word as part of a longer capitalised name the title does not hold."""
    title_words = {w.lower() for w in re.findall(r"[\w'’]+", title)}
    tokens = re.findall(r"[\w'’]+", text)
    for i, token in enumerate(tokens):
        if token.lower() not in title_words:
            continue
        neighbours = tokens[max(0, i - 1) : i] + tokens[i + 1 : i + 2]
        if any(n[:1].isupper() and n.lower() not in title_words and i > 0 for n in neighbours[-1:]):
            return True
    return False


def _attribute_stems(intent: Intent, doc: Document) -> frozenset[str]:
    """The question's content words left after the product's own name and filler words."""
    return intent.stems - _title_stems(doc) - _GENERIC_QUERY_STEMS


# ----------------------------------------------------------------------------------------------- facts


def _facts(doc: Document) -> list[Fact]:
    return [f for f in doc.facts if f.key not in _COMMERCE_KEYS and not _is_untrusted(f.value)]


def _concept_facts(work: _Work, doc: Document) -> list[Fact]:
    """Facts whose key the attribute lexicon ties to what the question asks ("waterproof" → `waterproof_rating`)."""
    facts = [f for f in doc.facts if f.key not in _COMMERCE_KEYS and not f.key.endswith("_options")]
    hits: list[Fact] = []
    for name in work.intent.concepts:
        for key in CONCEPTS_BY_NAME[name].keys:
            hits += [f for f in facts if fact_key_matches(f.key, key) and f not in hits]
        if hits:
            safe = [_safe_fact(f) for f in hits]
            return [f for f in safe if usable_value(f.value)]
    return []


@lru_cache(maxsize=1)
def _ranker() -> Ranker:
    return load_ranker()


def _ranked_units(work: _Work, doc: Document) -> list[tuple[float, Unit]]:
    """The product's units with the ranker's probability that each answers the question, best first."""
    units = product_units(doc, untrusted=_is_untrusted)
    if not units or work.embedder is None:
        return []
    probe = _attribute_probe(work.intent, doc)
    sims = work.similarity([u.text for u in units], probe=probe)
    labelled = [u.label for u in units if u.label]
    label_values = iter(work.similarity(labelled, probe=probe)) if labelled else iter(())
    label_sims = np.asarray([float(next(label_values)) if u.label else 0.0 for u in units], dtype=np.float32)
    probabilities = _ranker().probabilities(features(QuestionShape.read(probe), units, sims, label_sims))
    ranked = sorted(zip((float(p) for p in probabilities), units, strict=True), key=lambda pu: -pu[0])
    work.notes.append("units: " + "; ".join(f"{p:.2f} {u.text[:40]}" for p, u in ranked[:3]))
    return ranked


def _chosen_units(ranked: Sequence[tuple[float, Unit]]) -> list[Unit]:
    """The best unit when it clears the calibrated bar, and the second when it clears the second bar."""
    ranker = _ranker()
    if not ranked or ranked[0][0] < ranker.bar:
        return []
    chosen = [ranked[0][1]]
    if len(ranked) > 1 and ranked[1][0] >= ranker.second_bar:
        chosen.append(ranked[1][1])
    return chosen


def _state_unit(answer: _Answer, work: _Work, doc: Document, unit: Unit, *, lead: bool) -> None:
    """A recorded fact through its template; an option as the list of its values; a description unit quoted."""
    fact = unit.fact
    if unit.kind == "description" or fact is None:
        answer.claim(unit.text, _cites_for(work.task, doc, unit.text), doc=doc.id)
        return
    if unit.kind == "option":
        values = [v.strip() for v in unit.value.split(",") if v.strip()]
        label = _plural_label(unit.label.lower())
        verb = "are" if len(values) > 1 else "is"
        answer.claim(
            f"The {label} of the {doc.title} {verb} {join_and(values)}",
            _cites_for(work.task, doc),
            markdown=f"The {label} of the **{doc.title}** {verb} {join_and(values)}",
            doc=doc.id,
        )
        return
    _fact_sentence(answer, work, doc, replace(fact, value=unit.value), lead=lead)


def _match_facts(work: _Work, doc: Document, asked: frozenset[str]) -> list[Fact]:
    """Facts that answer the question: lexicon keys first, then label words and embedding similarity."""
    facts = [f for f in doc.facts if f.key not in _COMMERCE_KEYS and not f.key.endswith("_options")]
    hits: list[Fact] = []
    for name in work.intent.concepts:
        # the first concept the product records answers; its keys in the lexicon's order of importance
        for key in CONCEPTS_BY_NAME[name].keys:
            hits += [f for f in facts if fact_key_matches(f.key, key) and f not in hits]
        if hits:
            safe = [_safe_fact(f) for f in hits]
            return [f for f in safe if f.value]
    if not asked:
        return []
    candidates = [f for f in facts if f.key not in _IDENTITY_KEYS and not f.key.endswith("_options")]
    if not candidates:
        return []
    texts = [f"{f.label}: {_plain(f.value)}" for f in candidates]
    probe = _attribute_probe(work.intent, doc)
    sims = work.similarity(texts, probe=probe)
    scored: list[tuple[float, Fact]] = []
    for fact, sim in zip(candidates, sims, strict=True):
        label_words = content_stems(f"{fact.label} {fact.key.replace('_', ' ')}")
        shared = asked & label_words
        if shared <= _QUALIFIER_STEMS and label_words - _QUALIFIER_STEMS:
            shared = frozenset()  # "cruelty-free" is not "fragrance free": the word saying what is free must match
        overlap = len(shared)
        if not overlap and work.intent.yes_no and _is_boolean(fact) is not None:
            continue  # "is it cruelty-free?" is not answered "yes" by "Vegan: yes", however close the two read
        if (overlap and sim >= FACT_SEMANTIC_WITH_WORD) or sim >= FACT_SEMANTIC:
            scored.append((float(sim) + 0.2 * overlap, fact))
    scored.sort(key=lambda x: -x[0])
    return [_safe_fact(f) for _, f in scored[:1] if _safe_fact(f).value]


def _safe_fact(fact: Fact) -> Fact:
    """The fact with any instruction-like sentence removed from its value."""
    if not _is_untrusted(fact.value):
        return fact
    kept = [s for s in split_sentences(fact.value) if not _is_untrusted(s)]
    return replace(fact, value=" ".join(kept))


def _attribute_probe(intent: Intent, doc: Document) -> str:
    """The question with the product's name taken out, so similarity measures the attribute asked about."""
    text = intent.text
    for word in sorted(set(re.findall(r"[\w'-]+", doc.title)), key=len, reverse=True):
        if len(word) > 2:
            text = re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", " ", text, flags=re.IGNORECASE)
    text = re.sub(r"\s+", " ", text).strip()
    return text or intent.text


def _related_facts(work: _Work, doc: Document, ranked: Sequence[tuple[float, Unit]] = ()) -> list[Fact]:
    """What is recorded that comes closest to an unrecorded attribute: the lexicon's related keys, else the most
    similar fact."""
    facts = [
        f
        for f in _facts(doc)
        if f.key not in _IDENTITY_KEYS and not f.key.endswith("_options") and usable_value(f.value)
    ]
    for name in work.intent.concepts:
        for key in CONCEPTS_BY_NAME[name].related:
            for fact in facts:
                if fact_key_matches(fact.key, key) and _safe_fact(fact).value:
                    return [_safe_fact(fact)]
    if not facts:
        return []
    for _, unit in ranked:
        if unit.kind == "fact" and unit.fact is not None:
            return [_safe_fact(unit.fact)]  # the recorded fact the ranker puts nearest the question
    texts = [f"{f.label}: {_plain(f.value)}" for f in facts]
    sims = work.similarity(texts, probe=_attribute_probe(work.intent, doc))
    best = int(np.argmax(sims)) if len(sims) else 0
    if len(sims) and float(sims[best]) >= RELATED_SEMANTIC and _safe_fact(facts[best]).value:
        return [_safe_fact(facts[best])]
    return []


def _differing_key(docs: Sequence[Document]) -> str | None:
    """The first attribute every product records, with different values (in the first product's order)."""
    if len(docs) < 2:
        return None
    for fact in _facts(docs[0]):
        if fact.key in _IDENTITY_KEYS or fact.key.endswith("_options"):
            continue
        values = [d.fact(fact.key) for d in docs[1:]]
        if all(v is not None for v in values) and any(v.value != fact.value for v in values if v is not None):
            return fact.key
    return None


def _is_boolean(fact: Fact) -> bool | None:
    return _BOOLEAN_VALUES.get(fact.value.strip().strip(".").lower())


def _label(fact: Fact) -> str:
    """The label as it reads mid-sentence: lower case, acronyms kept ("SPF", "UPF")."""
    words = fact.label.split()
    return " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in words)


def _adjective_label(label: str) -> bool:
    words = label.split()
    return len(words) <= 3 and bool(_ADJECTIVE_END.search(words[-1])) and not words[-1].endswith("ity")


def _is_plural_title(title: str) -> bool:
    head = re.split(r"\s+-\s+|\(", title)[0].strip()
    words = re.findall(r"[A-Za-z]+", head)
    if not words:
        return False
    last = words[-1].lower()
    return last.endswith("s") and not last.endswith(("ss", "us", "is", "'s"))


def _a(word: str) -> str:
    """The indefinite article for `word` ("a 2-year", "an 8-year", "an 11-year", "a one-year")."""
    low = word.lower()
    if re.match(r"^(?:8|11|18|8\d)(?:\D|$)", low) or (low[:1] in "aeio" and not low.startswith(("one", "eu", "uni"))):
        return "an"
    return "a"


def _fact_sentence(
    answer: _Answer, work: _Work, doc: Document, fact: Fact, *, lead: bool, pronoun: bool = False
) -> None:
    """State one recorded fact in a template that keeps its value verbatim and always reads correctly."""
    cites = _cites_for(work.task, doc, f"{fact.label}: {fact.value}")
    title = doc.title
    plural = _is_plural_title(title)
    be = "are" if plural else "is"
    label = _label(fact)
    value_md = fact.value.strip().rstrip(".") if not fact.value.strip().endswith(("..", "etc.")) else fact.value
    value = _plain(value_md)
    subject = "they" if pronoun and plural else "it" if pronoun else f"the {title}"
    subject_md = subject if pronoun else f"the **{title}**"
    boolean = _is_boolean(fact)
    yes_no = lead and work.intent.yes_no

    def say(text: str, md: str) -> None:
        answer.claim(_sentence_case(text), cites, markdown=_sentence_case(md), doc=doc.id)

    if boolean is not None:
        adjective = _adjective_label(label)
        if boolean:
            prefix = "Yes, " if yes_no else ""
            tail = f"{be} {label}" if adjective else f"{'have' if plural else 'has'} {label}"
        else:
            prefix = "No, " if yes_no else ""
            tail = f"{be} not {label}" if adjective else f"{'do' if plural else 'does'} not have {label}"
        say(f"{prefix}{subject} {tail}", f"{prefix}{subject_md} {tail}")
        return
    if fact.key == "price":
        say(f"{subject} {be} priced {_price_phrase(value)}", f"{subject_md} {be} priced {_price_phrase(value_md)}")
        return
    if fact.key == "sale":
        say(f"{subject} {be} on sale: {value}", f"{subject_md} {be} on sale: {value_md}")
        return
    if fact.key == "availability" and re.match(
        r"^(?:in stock|sold out|out of stock|available|unavailable)", value, re.I
    ):
        say(f"{subject} {be} {value}", f"{subject_md} {be} {value_md}")
        return
    words = content_stems(label)
    # "Runs half a size small - ..." or "Machine wash at 30 °C. Do not..." reads as a sentence of its own
    sentence_like = (
        bool(re.search(r"[.;:!?]\s", value))
        or len(value.split()) > 14
        or (value[:1].isupper() and len(value.split()) > 3 and not value.split()[0].isupper())
    )
    if (
        not sentence_like
        and words
        and words <= content_stems(value)
        and re.match(r"^[\dA-Za-z]", value)
        and not re.match(r"^(?:all|any|every|each|most|both|some|many)\b", value, re.I)  # "has an All skin types"
    ):
        # "2-year manufacturer's warranty against defects" already says what it is
        article = "" if re.match(r"^(?:a|an|the|one|no)\b", value, re.I) else _a(value) + " "
        verb = "have" if plural else "has"
        say(f"{subject} {verb} {article}{value}", f"{subject_md} {verb} {article}{value_md}")
        return
    if sentence_like:
        if pronoun:
            say(f"{fact.label}: {value}", f"{fact.label}: {value_md}")
        else:
            say(f"{fact.label} for the {title}: {value}", f"{fact.label} for the **{title}**: {value_md}")
        return
    verb = "are" if _plural_word(label) else "is"
    if pronoun:
        owner = "their" if plural else "its"
        say(f"{owner} {label} {verb} {value}", f"{owner} {label} {verb} {value_md}")
    else:
        say(f"the {label} of the {title} {verb} {value}", f"the {label} of the **{title}** {verb} {value_md}")


def _plural_word(label: str) -> bool:
    last = label.split()[-1] if label.split() else ""
    return last.endswith("s") and not last.endswith(("ss", "us", "is", "ness", "sis"))


def _plural_label(label: str) -> str:
    if _plural_word(label) or not label[-1:].isalpha():  # "Option 1" has no plural form ("option 1s")
        return label
    if label.endswith("y") and not label.endswith(("ay", "ey", "oy", "uy")):
        return label[:-1] + "ies"
    return label + ("es" if label.endswith(("sh", "ch", "x")) else "s")


def _price_phrase(value: str) -> str:
    return value if value.lower().startswith(("from ", "between ", "at ", "up to ")) else f"at {value}"


def _greater(a: str, b: str) -> bool:
    try:
        return float(a.replace(",", "")) > float(b.replace(",", ""))
    except ValueError:
        return False


def _subject(doc: Document, md: bool = False) -> str:
    return f"the **{doc.title}**" if md else f"the {doc.title}"


def _predicate(intent: Intent, doc: Document, md: bool = False) -> str | None:
    """What the shop has not recorded, phrased from the question: "whether the X is waterproof", "the warranty of
    the X", "how long the X burns". None when no safe phrasing exists (the caller says "that")."""
    subject = _subject(doc, md)
    plural = _is_plural_title(doc.title)
    be = "are" if plural else "is"
    for name in intent.concepts:
        concept = CONCEPTS_BY_NAME[name]
        # "is it waterproof?" asks for the adjective; "what's the waterproof rating?" asks for a value
        if intent.yes_no and concept.adjective and intent.wh in (None, "which"):
            # the shopper's own words ("dishwasher safe") over the concept's fixed adjective ("washable")
            return f"whether {subject} {be} {_asked_adjective(intent, doc) or concept.adjective}"
        if concept.noun.startswith("whether "):
            return f"whether {subject} {be} {concept.noun.split(' is ', 1)[-1]}"
        return f"the {concept.noun} of {subject}"
    text = _strip_title(intent.text, doc.title, placeholder="it").lower().rstrip("?!. ")
    text = re.sub(r"^(?:and|so|but|also|then|please)\s+", "", text)
    pronoun = r"(?:it|they|this|that|these|those|this one|that one|the \w+(?: \w+){0,4}?)"
    rest: str | None = None
    m = re.match(rf"^(?:is|are|was|were)\s+{pronoun}\s+(.+)$", text)
    if m:
        rest = f"whether {subject} {be} {m.group(1)}"
    m = m or None
    if rest is None:
        m = re.match(rf"^(?:does|do|did)\s+{pronoun}\s+(\w+)(.*)$", text)
        if m:
            verb = m.group(1) if plural else third_person(m.group(1))
            rest = f"whether {subject} {verb}{m.group(2)}"
    if rest is None:
        m = re.match(rf"^(?:can|could|will|would|should)\s+{pronoun}\s+(\w+)(.*)$", text)
        if m:
            modal = text.split()[0]
            rest = f"whether {subject} {modal} {m.group(1)}{m.group(2)}"
    if rest is None:
        m = re.match(r"^(?:can|could|may|should)\s+(?:i|we|you)\s+(.+)$", text)
        if m and re.search(r"\b(?:it|them|this|these|those)\b", m.group(1)):
            body = re.sub(r"\b(?:it|them|this|these|those)\b", subject, m.group(1), count=1)
            rest = f"whether you can {body}"
    if rest is None:
        m = re.match(
            rf"^(how \w+|what|where|when|which \w+)\s+(is|are|does|do|can|will)\s+{pronoun}\s+(\w+)(.*)$", text
        )
        if m:
            wh, aux, verb, tail = m.groups()
            if aux in ("does", "do"):
                verb = verb if plural else third_person(verb)
                rest = f"{wh} {subject} {verb}{tail}"
            elif aux in ("is", "are"):
                rest = f"{wh} {subject} {be} {verb}{tail}"
            else:
                rest = f"{wh} {subject} {aux} {verb}{tail}"
    if rest is None or _NUMBER.search(rest) or len(rest) > 120:
        return None
    if re.search(r"\bit\b", rest.replace(subject, "")):
        return None  # the product's name was read as part of something else ("what is the SKU of the large it")
    # the question's own words must not smuggle in the product name twice or any instruction
    if _is_untrusted(rest):
        return None
    return rest


def _asked_adjective(intent: Intent, doc: Document) -> str | None:
    """What "is the X <adjective>?" asks, in the question's words, with any words of the product's name dropped."""
    text = _strip_title(intent.text, doc.title, placeholder="it").lower().rstrip("?!. ")
    m = re.match(r"^(?:is|are)\s+(?:it|they|this|that|these|those|the|this one|that one)\s+(.+)$", text)
    if not m:
        return None
    words = m.group(1).split()
    names = _title_stems(doc) | content_stems(doc.product_type or "")
    while words and (stem(words[0]) in names or words[0] in {"one", "item", "product"}):
        words = words[1:]
    # start where the asked attribute starts: "sun cream vegan" asks "vegan", "dishwasher safe" stays whole
    cues = [cue for name in intent.concepts for cue in CONCEPTS_BY_NAME[name].cues]
    for i in range(len(words)):
        if any(re.match(cue, " ".join(words[i:])) for cue in cues):
            words = words[i:]
            break
    phrase_ = " ".join(words)
    if not words or len(words) > 4 or _NUMBER.search(phrase_) or _is_untrusted(phrase_):
        return None
    return phrase_


# ----------------------------------------------------------------------------------------------- options and variants


def _options(doc: Document) -> list[tuple[str, tuple[str, ...]]]:
    if doc.options:
        return [(name, tuple(values)) for name, values in doc.options]
    found: dict[str, list[str]] = {}
    for v in doc.variants:
        for name, value in v.options:
            found.setdefault(name, [])
            if value not in found[name]:
                found[name].append(value)
    return [(k, tuple(v)) for k, v in found.items()]


_OPTION_WORD = re.compile(
    r"\b(?:colou?rs?|sizes?|shades?|flavou?rs?|styles?|scents?|options?|variants?|versions?|finish(?:es)?)\b",
    re.IGNORECASE,
)


def _asks_sku(intent: Intent) -> bool:
    return bool(re.search(r"\bskus?\b|\bstock[- ]keeping unit\b", intent.lower))


def _named_option(intent: Intent, doc: Document) -> bool:
    """True when the question names one of the product's options by its name ("scents", "finishes")."""
    return any(content_stems(name) & intent.stems for name, values in _options(doc) if len(values) > 1)


def _is_colour_option(name: str) -> bool:
    return bool(re.search(r"colou?r|shade|finish", name, re.I))


def _is_size_option(name: str) -> bool:
    return bool(re.search(r"size|length|width|waist|leg|fit|capacity|volume|weight|amount", name, re.I))


def _match_options(
    intent: Intent, options: list[tuple[str, tuple[str, ...]]]
) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """Option values the question names ({"Colour": ["Olive"]}) and asked values the product lacks."""
    chosen: dict[str, list[str]] = {}
    text = intent.lower
    for name, values in options:
        for value in values:
            low = value.lower()
            if len(low) <= 1:
                hit = bool(re.search(rf"\bsize\s+{re.escape(low)}\b", text)) or bool(
                    re.search(rf"(?<![\w'])({re.escape(value)})(?![\w'])", intent.text)
                )
            else:
                hit = bool(re.search(rf"(?<![\w-]){re.escape(low)}(?![\w-])", text))
            if not hit and _is_colour_option(name):
                hit = any(c in low.split() for c in intent.colours)
            if not hit and _is_size_option(name):
                tokens = re.findall(r"[a-z0-9.]+", low)
                hit = any(n in tokens for n in intent.numbers) and len(values) > 1
            if hit:
                chosen.setdefault(name, []).append(value)
    missing: list[tuple[str, str]] = []
    colour_options = [name for name, _ in options if _is_colour_option(name)]
    if colour_options and not any(n in chosen for n in colour_options):
        for colour in intent.colours:
            missing.append((colour_options[0], colour))
    size_options = [name for name, _ in options if _is_size_option(name)]
    if size_options and not any(n in chosen for n in size_options):
        for number in intent.numbers:
            if re.search(rf"\b(?:size|in|uk|eu|us)\s+{re.escape(number)}\b", text):
                missing.append((size_options[0], number))
    return chosen, missing[:1]


def _asked_options(intent: Intent, options: list[tuple[str, tuple[str, ...]]]) -> list[tuple[str, tuple[str, ...]]]:
    """The options a "what colours/sizes does it come in?" question asks for (all of them when it names none)."""
    asked = []
    for name, values in options:
        stem = content_stems(name)
        if (
            stem & intent.stems
            or (_is_colour_option(name) and re.search(r"colou?r|shade", intent.lower))
            or (_is_size_option(name) and re.search(r"\bsizes?\b", intent.lower))
        ):
            asked.append((name, values))
    return asked or options


def _variants_with(doc: Document, chosen: dict[str, list[str]]) -> list[Variant]:
    out = []
    for v in doc.variants:
        values = dict(v.options)
        if all(values.get(name) in wanted for name, wanted in chosen.items()):
            out.append(v)
    return out


def _named_variant(task: Task, doc: Document) -> Variant | None:
    for v in doc.variants:
        if v.gid in task.resolution.variant_gids:
            return v
    return None


def _stock_sentences(answer: _Answer, doc: Document, variants: list[Variant], cites: list[int]) -> None:
    """ "Black / 42 is in stock; Olive / 37 is sold out." At most three names per status, else the recorded
    availability summary."""
    title = doc.title
    single = len(doc.variants) == 1 and not doc.variants[0].options
    available = [v.title for v in variants if v.available is True]
    sold = [v.title for v in variants if v.available is False]
    unknown = [v.title for v in variants if v.available is None]
    if single:
        v = variants[0]
        if v.available is not None:
            status = "in stock" if v.available else "sold out"
            answer.claim(f"The {title} is {status}", cites, markdown=f"The **{title}** is {status}")
        return
    if len(available) > 3 or len(sold) > 3:
        summary = doc.fact("availability")
        if summary is not None:
            answer.claim(
                f"The {title} is {_plain(summary.value)}",
                cites,
                markdown=f"The **{title}** is {summary.value}",
            )
            return
    if available:
        names = available[:3]
        answer.claim(f"{join_and(names)} {'is' if len(names) == 1 else 'are'} in stock", cites)
    if sold:
        names = sold[:3]
        answer.claim(f"{join_and(names)} {'is' if len(names) == 1 else 'are'} sold out", cites)
    if unknown and not available and not sold:
        answer.meta(phrase("not_recorded", subject=f"the {title}", predicate=f"whether the {title} is in stock"))
        answer.not_recorded = True


# ----------------------------------------------------------------------------------------------- evidence units


def _units(task: Task) -> list[_Unit]:
    """Every quotable sentence of the evidence, in evidence order."""
    out: list[_Unit] = []
    for rank, ev in enumerate(task.evidence):
        passage = ev.passage
        doc = task.documents.get(passage.doc_id)
        context = passage.title.split(" — ", 1)[-1] if passage.kind != "product" else passage.title
        position = 0
        lead: _Unit | None = None
        lines = quotable_lines(passage)
        first = True
        for line in lines:
            line_units: list[_Unit] = []
            for sentence in split_sentences(line):
                position += 1
                text = sentence.strip()
                if not text or _is_untrusted(text) or _is_heading(text, passage.title, doc):
                    continue
                if passage.kind == "product" and re.match(r"^(?:tags|disclosures recorded|sku)\s*:", text, re.I):
                    continue
                unit = _Unit(
                    text=text, evidence=ev, position=position, rank=rank, context=context, doc=doc, first=first
                )
                unit.header = passage.kind == "product" and first
                first = False
                if lead is not None:
                    unit.lead = lead
                    unit.context = f"{context} {lead.text}"
                line_units.append(unit)
            out.extend(line_units)
            stripped = line.strip()
            if stripped.endswith(":") and line_units:
                lead = line_units[-1]
            elif not _looks_like_item(stripped):
                lead = None
    return out


def _looks_like_item(line: str) -> bool:
    """A list item or a short "Label: value" line, which can follow a lead-in ending with a colon."""
    return bool(re.match(r"^(?:[-*•]|\d+[.)])\s", line)) or (len(line) < 90 and ":" in line[:40])


def _is_heading(text: str, title: str, doc: Document | None) -> bool:
    """Headings, FAQ questions and titles repeated as lines are there for retrieval, not for quoting."""
    bare = text.rstrip(" .:?").lower()
    names = {part.strip().lower() for part in re.split(r"\s+—\s+", title)}
    if doc is not None:
        names.add(doc.title.lower())
        names |= {s.heading.lower() for s in doc.sections}
    return bare in {n.rstrip(" .:?") for n in names} or text.rstrip().endswith("?")


_NAME_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:[-'][A-Za-z]+)*|[A-Z]{2,})\b")


# Capitalised words that are not names of things a shop may or may not mention.
_NOT_NAMES = word_set(
    "I OK Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mondays Tuesdays Wednesdays Thursdays Fridays "
    "Saturdays Sundays January February March April May June July August September October November December "
    "Christmas Easter"
)


def _names_in(text: str) -> list[str]:
    return [m.group(1) for m in _NAME_RE.finditer(text.strip()) if m.group(1) not in _NOT_NAMES]


def _names_other_product(text: str, own_words: set[str]) -> bool:
    """True when a sentence names something by a multi-word capitalised name that is not this product's or the
    shop's ("For example, the Coniston Lightweight Hiking Boot runs small" says nothing about the Langdale)."""
    for m in re.finditer(r"\b([A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)+)", text):
        words = [w.lower() for w in m.group(1).split()]
        if m.start() > 0 and not all(w in own_words for w in words):
            return True
    return False


def _key_word(units: Sequence[_Unit], intent: Intent, ignore: frozenset[str]) -> str | None:
    """The question's most specific word that the evidence uses at all: the word found in the fewest sentences
    (never a name, a number or a word naming the product in view)."""
    names = _query_names(intent.text)
    counts: dict[str, int] = {}
    for u in units:
        words = content_stems(u.text + " " + u.context)
        for w in intent.stems - ignore - names - _GENERIC_QUERY_STEMS:
            if w in words and not w.isdigit():
                counts[w] = counts.get(w, 0) + 1
    if len(counts) < 2:
        return None  # one shared word is the whole overlap; nothing more specific to insist on
    rarest = min(counts, key=lambda w: counts[w])
    return rarest if counts[rarest] * 4 <= len(units) else None


def _query_names(text: str) -> frozenset[str]:
    """Stems of the proper names a question capitalises mid-sentence ("Keswick"): not its first word, and not
    acronyms, which are as often ordinary terms ("ID", "SPF", "USB")."""
    return frozenset(stem(name) for name in _names_in(text) if not name.isupper())


def _absent_names(text: str, task: Task) -> list[str]:
    """Names in the question that no evidence passage or document mentions: the evidence is about something else
    ("Do you deliver to BFPO addresses?", "Do you sell Patagonia jackets?")."""
    names = _names_in(text)
    if not names:
        return []
    haystack = " ".join(
        [task.shop_name, *(e.passage.text for e in task.evidence), *(d.title for d in task.documents.values())]
    )
    words = content_stems(haystack)
    codes = set(country_codes_in(haystack))
    absent = []
    for name in names:
        if stem(name) in words or set(country_codes_in(name, query=True)) & codes:
            continue
        absent.append(name)
    return absent


def _absent_compounds(work: _Work, units: Sequence[_Unit]) -> list[str]:
    """Two-word things the question asks about ("gift wrapping") whose second word the evidence never uses, while
    it uses the first only in a different thing ("gift cards") that does not read as the same one."""
    task = work.task
    haystack = " ".join(
        [task.shop_name, *(e.passage.text for e in task.evidence), *(d.title for d in task.documents.values())]
    )
    known = content_stems(haystack)
    # process verbs ("return stuff") and vague nouns name no thing
    ignore = _GENERIC_QUERY_STEMS | _OFFER_STEMS | _PROCESS_STEMS | _VAGUE_STEMS | _query_names(work.intent.text)
    words = re.findall(r"[a-z][a-z'’-]*", work.intent.lower)
    # the shop names its things in headings, FAQ questions, titles and list lines, not in running prose ("leave the
    # same day" names nothing)
    names = {u.context for u in units} | {u.text for u in units if len(u.text.split()) <= 6}
    names |= {d.title for d in task.documents.values()}
    evidence_words = [re.findall(r"[a-z][a-z'’-]*", text.lower()) for text in names]
    found: list[str] = []
    for first, second in pairwise(words):
        head, modifier = content_stems(second), content_stems(first)
        if not head or not modifier or head & ignore or modifier & ignore or head & known or not modifier <= known:
            continue
        rivals = {
            f"{a} {b}"
            for sentence in evidence_words
            for a, b in pairwise(sentence)
            if content_stems(a) == modifier and content_stems(b)
        }
        if not rivals:
            continue
        asked = f"{first} {second}"
        if float(np.max(work.similarity(sorted(rivals), probe=asked))) < COMPOUND_SAME:
            found.append(asked)
    return found


def _kind_stems(doc: Document) -> frozenset[str]:
    """Words that name a product or its kind in merchant text: its product type and its distinctive title words."""
    return (content_stems(doc.product_type or "") | _title_stems(doc)) - _GENERIC_QUERY_STEMS - _COMMON_TITLE_STEMS


def _kind_rule(ranked: list[_Unit], best: _Unit, targets: Sequence[Document], intent: Intent) -> _Unit | None:
    """The best-ranked list entry of the best sentence's policy that names the kind of a product in view, or with
    no product in view every kind of goods the question names ("can I return a gift card?"), if any."""
    if best.evidence.passage.kind == "product":
        return None
    kinds = frozenset().union(*(_kind_stems(d) | _tag_stems(d) for d in targets))
    asked = intent.stems - _PROCESS_STEMS - _GENERIC_QUERY_STEMS - _OFFER_STEMS
    if not targets and not asked:
        return None
    returns = bool(intent.stems & _RETURN_STEMS)
    for u in ranked:
        # the refund policy's list is the rule for a returns question, even when an FAQ entry about the goods scores
        # higher ("Do you sell gift cards?" for "can I return a gift card?")
        same_doc = u.evidence.passage.doc_id == best.evidence.passage.doc_id or (
            returns and u.evidence.passage.link_type == "refund_policy"
        )
        # only a list entry naming kinds of goods ("Gift cards.", "Candles that have been lit."): a full sentence
        # that mentions the kind in passing ("mud on boot soles") is a condition, not the rule for every such product
        if not same_doc or not (_bare_item(u) or _kind_item(u)):
            continue
        words = content_stems(u.text)
        # with no product in view, only a returns question reads its goods against the policy's list
        if (kinds & words) if targets else (returns and asked <= words):
            return u
    return None


# Words of a rule sentence (who may do what, on which condition), as opposed to a list entry naming goods.
_RULE_WORDS = re.compile(
    r"\b(?:we|you|your|our|i|they|it|must|should|can|cannot|can't|will|won't|may|need|needs|please|if|when|unless|"
    r"is|are)\b",
    re.IGNORECASE,
)


def _kind_item(unit: _Unit) -> bool:
    """A list entry under a section heading that names goods with a qualifier ("Opened or used skincare, for
    hygiene reasons", "Candles that have been lit"): read with its heading, it is the rule for those goods."""
    context = unit.context.strip()
    if unit.evidence.passage.kind == "product" or unit.lead is not None or not context or context.endswith("?"):
        return False
    if unit.doc is not None and context.lower() == unit.doc.title.lower():
        return False
    return len(unit.text.split()) <= 10 and not _RULE_WORDS.search(unit.text)


def _heading_lead(unit: _Unit) -> str:
    return f"{unit.context.strip().rstrip(':.')}: "


def _tag_stems(doc: Document) -> frozenset[str]:
    """Words of the product's tags that name a kind of goods ("food", "gift"), not generic ones."""
    return content_stems(" ".join(doc.tags)) - _GENERIC_QUERY_STEMS - _COMMON_TITLE_STEMS


def _place_phrase(text: str, code: str) -> str | None:
    """The place as the question wrote it ("northern ireland"), when that is more specific than the country."""
    low = text.lower()
    plain_name = country_name(code).lower().removeprefix("the ")
    for alias in sorted(country_aliases(code), key=len, reverse=True):
        if alias != plain_name and re.search(rf"(?<![\w-]){re.escape(alias)}(?![\w-])", low):
            return alias
    return None


@lru_cache(maxsize=1)
def _subdivisions() -> dict[str, tuple[str, str]]:
    """Lower-case state/province name → (country code, display name), for names unique worldwide and of the kinds a
    delivery zone names (states, provinces, territories)."""
    import pycountry  # loaded on first use, only for shipping questions

    seen: dict[str, tuple[str, str]] = {}
    clashes: set[str] = set()
    for sub in pycountry.subdivisions:
        if sub.type not in {"State", "Province", "Territory", "Outlying area", "District", "Region"}:
            continue
        name = sub.name.lower()
        if name in seen and seen[name][0] != sub.country_code:
            clashes.add(name)
        seen[name] = (sub.country_code, sub.name)
    return {k: v for k, v in seen.items() if k not in clashes and len(k) > 3}


def _region_named(text: str) -> tuple[str, str] | None:
    """(country code, name) of a state or province the question names ("Do you ship to Alaska?")."""
    words = re.findall(r"[a-z][a-z.'-]*", text.lower())
    table = _subdivisions()
    for size in (3, 2, 1):
        for i in range(len(words) - size + 1):
            hit = table.get(" ".join(words[i : i + size]))
            if hit is not None:
                return hit
    return None


def _region_name(country: str, region: str) -> str | None:
    """The name of `address_region` ("AK" or "Alaska") within `country`."""
    import pycountry

    sub = pycountry.subdivisions.get(code=f"{country}-{region.strip().upper()}")
    if sub is not None:
        return str(sub.name)
    hit = _subdivisions().get(region.strip().lower())
    return hit[1] if hit is not None and hit[0] == country else None


def _is_shipping_unit(unit: _Unit) -> bool:
    if unit.evidence.passage.link_type == "shipping_policy":
        return True
    return bool(_SHIP_WORDS.search(unit.text) or _SHIP_WORDS.search(unit.evidence.passage.title))


def _score(work: _Work, units: list[_Unit], ignore: frozenset[str] = frozenset()) -> None:
    """Relevance of each unit: embedding similarity of the sentence and of its heading, content-word overlap,
    passage rank and answer-likeness."""
    intent = work.intent
    if not units:
        return
    contexts = list(dict.fromkeys(u.context for u in units))
    sims = work.similarity([u.text for u in units] + contexts)
    unit_sims = sims[: len(units)]
    context_sims = dict(zip(contexts, sims[len(units) :], strict=True))
    wanted = (intent.stems - _GENERIC_QUERY_STEMS - ignore) or intent.stems
    if intent.countries and not intent.shipping:
        # "what's the capital of France?" shares a country name with the shipping table, nothing more
        wanted = wanted - _country_stems(intent.countries)
    unit_words = [content_stems(u.text) for u in units]
    # Words the evidence rarely uses ("hire") say more about a match than words it uses everywhere ("tent").
    frequency: dict[str, int] = {}
    for words in unit_words:
        for w in words & wanted:
            frequency[w] = frequency.get(w, 0) + 1
    weight = {w: math.log(1 + len(units) / (1 + frequency[w])) for w in frequency}
    # A name alone ("Keswick" in "what's the weather in Keswick?") is too little overlap to make a sentence relevant.
    names = _query_names(intent.text)
    # a word no sentence uses weighs like an average word: it lowers every sentence alike
    average = sum(weight.values()) / len(weight) if weight else 1.0
    weight.update({w: average for w in wanted if w not in weight})
    if any(not w.isdigit() for w in wanted):
        # a number or a name ("2" in "what is 2+2?", "Keswick" in "the weather in Keswick") says too little alone
        weight.update({w: 0.3 * v for w, v in weight.items() if w.isdigit() or w in names})
    else:
        weight = {w: 0.0 for w in wanted}
    total = sum(weight.values()) or 1.0
    # the retriever's order among the passages in play, as a reciprocal-rank prior (trust its top passage most)
    order = {
        pid: i
        for i, pid in enumerate(dict.fromkeys(u.evidence.passage.id for u in sorted(units, key=lambda u: u.rank)))
    }
    # A name the question gives that some headings carry ("Keswick") picks those sections: the Fort William
    # section's parking is no answer about Keswick.
    heading_names = {n for n in names if any(n in content_stems(u.context) for u in units)}
    for u, sim, words in zip(units, unit_sims, unit_words, strict=True):
        context_words = content_stems(u.context)
        u.plain_overlap = any(not w.isdigit() and w not in names for w in wanted & (words | context_words))
        # a heading word counts almost fully: headings name the topic their sentences leave implicit
        lexical = (
            sum(weight[w] for w in wanted & words) + 0.75 * sum(weight[w] for w in (wanted & context_words) - words)
        ) / total
        bonus = 0.08 / (1 + order[u.evidence.passage.id]) + (0.02 if u.evidence.resolved else 0.0)
        if intent.permission_verb and intent.permission_verb in words and _MODAL.search(u.text):
            bonus += 0.06  # "can I return...?" is answered by a rule: "you can return ... within 30 days"
            if _DURATION.search(u.text):
                bonus += 0.05  # rules come with their limits
        if _ANAPHOR_START.match(u.text):
            bonus -= 0.03  # a sentence that leans on the one before answers less on its own
        if heading_names and not heading_names & context_words:
            bonus -= 0.15
        if intent.overview_policy and (_DURATION.search(u.text) or _MODAL.search(u.text)):
            # "what's your returns policy?" is answered by its rules: who can do what, within when; a rule that says
            # both (who may, and by when) is the policy's core, not a step of its procedure
            bonus += 0.12 if _DURATION.search(u.text) and _MODAL.search(u.text) else 0.06
        if intent.asks_time and _CLOCK.search(u.text):
            bonus += 0.08
        if intent.asks_duration and _DURATION.search(u.text):
            bonus += 0.08
        elif intent.asks_quantity and _NUMBER.search(u.text):
            bonus += 0.06
        if u.text.rstrip().endswith(":"):
            bonus -= 0.08  # a list's lead-in says little on its own
        if re.match(r"^(?:yes|no)\b", u.text, re.I) and float(context_sims[u.context]) < 0.45:
            bonus -= 0.08  # "No, we don't ..." answers its own FAQ question, not necessarily this one
        if u.first:
            bonus += 0.03  # a section's first sentence usually states its rule
        u.semantic = float(sim)
        u.context_semantic = float(context_sims[u.context])
        u.lexical = lexical
        u.score = 0.45 * float(sim) + 0.27 * float(context_sims[u.context]) + 0.28 * lexical + bonus


def _country_stems(codes: Iterable[str]) -> frozenset[str]:
    words: set[str] = set()
    for code in codes:
        for name in country_aliases(code):
            words |= content_stems(name)
    return frozenset(words)


def _fits(chosen: list[_Unit], unit: _Unit) -> bool:
    return sum(len(u.text) for u in chosen) + len(unit.text) <= MAX_CHARS


def _near_duplicate(unit: _Unit, chosen: list[_Unit]) -> bool:
    words = content_stems(unit.text)
    for other in chosen:
        others = content_stems(other.text)
        union = words | others
        if union and len(words & others) / len(union) >= 0.7:
            return True
    return False


def _with_context(units: list[_Unit], chosen: list[_Unit]) -> list[_Unit]:
    """A chosen sentence that leans on the one before ("This does not affect...") brings it along; a list's
    lead-in brings its items."""
    out = list(chosen)
    by_passage: dict[str, list[_Unit]] = {}
    for u in units:
        by_passage.setdefault(u.evidence.passage.id, []).append(u)
    for u in list(out):
        siblings = by_passage[u.evidence.passage.id]
        index = siblings.index(u)
        if _ANAPHOR_START.match(u.text) and index > 0:
            previous = siblings[index - 1]
            if previous not in out and _fits(out, previous):
                out.append(previous)
        lead = u if u.text.rstrip().endswith(":") else u.lead
        if lead is not None:
            # a list is quoted with its lead-in and as many of its items as fit
            if lead not in out and _fits(out, lead):
                out.append(lead)
            for item in siblings:
                # four sentences in all, so the list never pushes the chosen sentences out of the answer
                if item.lead is lead and item not in out and _fits(out, item) and len(out) < 4:
                    out.append(item)
    return out


def _quote(answer: _Answer, unit: _Unit, lead: str = "") -> None:
    """Quote a unit verbatim; a product's fact line is prefixed with the product's name, and a bare list item with
    its section heading ("What we can't take back: Gift cards.")."""
    text = unit.text
    markdown = None
    doc = unit.doc
    if not lead and _bare_item(unit):
        lead = f"{unit.context.strip().rstrip(':.')}: "
    if lead and re.match(r"^[A-Z][a-z]+\b", text) and text.split()[0].lower() in _FUNCTION_WORDS:
        text = text[:1].lower() + text[1:]
    if unit.evidence.passage.kind == "product" and doc is not None and doc.title.lower() not in text.lower():
        markdown = f"{lead}**{doc.title}** — {text}"
        text = f"{lead}{doc.title} — {_plain(text)}"
    else:
        if doc is not None and doc.kind == "product" and doc.title in text:
            markdown = lead + text.replace(doc.title, f"**{doc.title}**", 1)
        text = lead + _plain(text)
    answer.claim(text, (unit.evidence.number,), markdown=markdown, doc=doc.id if doc else unit.evidence.passage.doc_id)


_VERBISH = re.compile(
    r"\b(?:is|are|was|were|be|been|can|cannot|can't|could|will|won't|would|do|does|don't|doesn't|has|have|had|may|"
    r"must|should|need|needs|we|you|i|they|it)\b|\w+(?:ed|es)\b",
    re.IGNORECASE,
)


def _bare_item(unit: _Unit) -> bool:
    """A short verbless line under a section heading ("Gift cards."): alone it says nothing; with its heading it
    is the rule."""
    context = unit.context.strip()
    if unit.evidence.passage.kind == "product" or unit.lead is not None or not context or context.endswith("?"):
        return False
    if unit.doc is not None and context.lower() == unit.doc.title.lower():
        return False
    words = unit.text.split()
    return len(words) <= 6 and not _VERBISH.search(unit.text)


def _first_passage(task: Task, doc: Document) -> Evidence | None:
    for ev in task.evidence:
        if ev.passage.doc_id == doc.id:
            return ev
    return None


def _cites_for(task: Task, doc: Document, text: str | None = None) -> list[int]:
    """Evidence numbers of the document's passages; those containing `text`'s value first (or only)."""
    numbers = [ev.number for ev in task.evidence if ev.passage.doc_id == doc.id]
    if text:
        value = _plain(text.split(": ", 1)[-1]).strip().rstrip(".").lower()[:60]
        holding = [
            ev.number
            for ev in task.evidence
            if ev.passage.doc_id == doc.id and value and value in _plain(ev.passage.text).lower()
        ]
        if holding:
            return holding[:2]
    return numbers[:2]


def _dedupe_sentences(sentences: list[Sentence]) -> list[Sentence]:
    seen: set[str] = set()
    out = []
    for s in sentences:
        if s.text not in seen:
            seen.add(s.text)
            out.append(s)
    return out
