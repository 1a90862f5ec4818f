"""Fakes that ship, and the contract every backend must keep.

Fakes, for tests of code built on ask_engine (no model, no disk, no network): `HashEmbedder`, `ScriptedGenerator`,
`MemoryStore` (conversations and idempotency keys). Contract kits, one per extension point of `protocols.py`, that
a backend — built-in or plug-in — must pass: `check_embedder`, `check_vector_index`, `check_lexical_index`,
`check_generator`, `check_conversation_store`, `check_idempotency_store`. Each raises `ContractError` naming the
broken promise; call them from your own tests:

    from ask_engine.testing import check_generator
    def test_my_generator_keeps_the_contract(): check_generator(MyGenerator())
"""

from __future__ import annotations

import hashlib
import re
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

import numpy as np

from ask_engine.conversations import IdempotencyResult
from ask_engine.errors import GeneratorUnavailable, StoreError
from ask_engine.protocols import (
    ConversationStore,
    Embedder,
    Generator,
    IdempotencyStore,
    LexicalIndex,
    Matrix,
    Vector,
    VectorIndex,
)
from ask_engine.types import Document, Draft, DraftKind, Evidence, Fact, Passage, Resolution, Sentence, Task, Turn

__all__ = [
    "ContractError",
    "HashEmbedder",
    "MemoryStore",
    "ScriptedGenerator",
    "check_conversation_store",
    "check_embedder",
    "check_generator",
    "check_idempotency_store",
    "check_lexical_index",
    "check_vector_index",
    "sample_task",
]


class ContractError(AssertionError):
    """A backend broke a promise of its Protocol."""


def _expect(condition: bool, promise: str) -> None:
    if not condition:
        raise ContractError(promise)


# ---------------------------------------------------------------------------------------------------- fakes

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Deterministic bag-of-words vectors (each word and its character trigrams hashed into `dimension` buckets),
    L2-normalised: texts sharing words are close. No model: for tests and offline plumbing, not for shoppers."""

    def __init__(self, dimension: int = 256, *, settings: Any = None) -> None:
        if dimension <= 0:
            raise ValueError("dimension must be positive")
        self.dimension = dimension
        self.name = f"hash-embedder:{dimension}"

    def _vector(self, text: str) -> Vector:
        vector = np.zeros(self.dimension, dtype=np.float32)
        for word in _WORD.findall(text.casefold()):
            for feature in (word, *(word[i : i + 3] for i in range(len(word) - 2))):
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                vector[int.from_bytes(digest, "little") % self.dimension] += 1.0 if feature == word else 0.5
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0  # no words: a fixed unit vector, never a zero one
            return vector
        return vector / norm

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> Vector:
        return self._vector(text)


Script = str | Sequence[str] | Callable[[Task], "Draft | str | Sequence[str]"]


class ScriptedGenerator:
    """A generator that says what it is told: a fixed sentence (or sentences), or whatever `script(task)` returns.

    Each sentence cites the first evidence passage (when there is one); every task is kept in `tasks`. Raise from
    `script` (e.g. GeneratorUnavailable) to test a failing backend. It is checked by the grounding guard like any
    LLM unless `grounded_by_construction=True`.
    """

    def __init__(
        self,
        script: Script = "",
        *,
        name: str = "scripted",
        grounded_by_construction: bool = False,
        settings: Any = None,
        embedder: Any = None,
    ) -> None:
        self.script = script
        self.name = name
        self.grounded_by_construction = grounded_by_construction
        self.tasks: list[Task] = []

    def generate(self, task: Task) -> Draft:
        self.tasks.append(task)
        said = self.script(task) if callable(self.script) else self.script
        if isinstance(said, Draft):
            return said
        texts = [said] if isinstance(said, str) else list(said)
        texts = [t for t in texts if t.strip()]
        if not texts:
            return Draft(sentences=(), kind="no_answer", generator=self.name)
        first = task.evidence[0] if task.evidence else None
        cites = (first.number,) if first is not None else ()
        used = (first.passage.doc_id,) if first is not None else ()
        return Draft(sentences=tuple(Sentence(t, cites=cites) for t in texts), generator=self.name, used_doc_ids=used)


def _rfc3339(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class _Conversation:
    owner: str
    expires_at: float
    turns: list[Turn] = field(default_factory=list)


@dataclass
class _Key:
    payload_hash: str
    done: bool = False
    response: dict[str, Any] | None = None
    status: int | None = None
    expires_at: float = 0.0


class MemoryStore:
    """Conversations and idempotency records in memory, with `SqliteStore`'s semantics (owners, sliding expiry,
    replay / conflict, waiting on an identical request in flight). Thread-safe; gone when the process ends."""

    backend = "memory"

    def __init__(
        self,
        *,
        conversation_ttl_s: int = 86400,
        idempotency_ttl_s: int = 86400,
        clock: Callable[[], float] = time.time,
        max_turns: int = 50,
        settings: Any = None,
    ) -> None:
        self._conversation_ttl_s = conversation_ttl_s
        self._idempotency_ttl_s = idempotency_ttl_s
        self._clock = clock
        self._max_turns = max_turns
        self._conversations: dict[str, _Conversation] = {}
        self._keys: dict[tuple[str, str], _Key] = {}
        self._changed = threading.Condition()

    # --- conversations ----------------------------------------------------------------------------------

    def create(self, owner: str) -> tuple[str, str]:
        expires = self._clock() + self._conversation_ttl_s
        conversation_id = "conv_" + secrets.token_urlsafe(18)
        with self._changed:
            self._conversations[conversation_id] = _Conversation(owner, expires)
        return conversation_id, _rfc3339(expires)

    def history(self, conversation_id: str, owner: str) -> list[Turn] | None:
        with self._changed:
            held = self._conversations.get(conversation_id)
            if held is None or held.owner != owner or held.expires_at <= self._clock():
                return None
            return list(held.turns)

    def append(self, conversation_id: str, owner: str, turn: Turn) -> str:
        now = self._clock()
        with self._changed:
            held = self._conversations.get(conversation_id)
            if held is None or held.owner != owner:
                raise LookupError("no such conversation for this owner")
            held.turns.append(turn if turn.created_at else replace(turn, created_at=_rfc3339(now)))
            del held.turns[: -self._max_turns]
            held.expires_at = now + self._conversation_ttl_s
            return _rfc3339(held.expires_at)

    # --- idempotency ------------------------------------------------------------------------------------

    def begin(self, key: str, owner: str, payload_hash: str, *, wait_s: float = 30.0) -> IdempotencyResult:
        deadline = time.monotonic() + max(0.0, wait_s)
        with self._changed:
            while True:
                record = self._keys.get((owner, key))
                if record is not None and record.done and record.expires_at <= self._clock():
                    record = None
                if record is None:
                    self._keys[(owner, key)] = _Key(payload_hash)
                    return IdempotencyResult("new")
                if record.payload_hash != payload_hash:
                    return IdempotencyResult("conflict")
                if record.done:
                    return IdempotencyResult("replay", record.response, record.status)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise StoreError("an earlier request with this idempotency key is still in progress")
                self._changed.wait(remaining)

    def finish(self, key: str, owner: str, response: dict[str, Any], status: int = 200) -> None:
        with self._changed:
            record = self._keys.get((owner, key))
            if record is not None:
                record.done, record.response, record.status = True, dict(response), status
                record.expires_at = self._clock() + self._idempotency_ttl_s
            self._changed.notify_all()

    def abandon(self, key: str, owner: str) -> None:
        with self._changed:
            record = self._keys.get((owner, key))
            if record is not None and not record.done:
                del self._keys[(owner, key)]
            self._changed.notify_all()


# ---------------------------------------------------------------------------------------------------- contract kits


def _unit_rows(matrix: Any, rows: int, dimension: int, what: str) -> None:
    array = np.asarray(matrix)
    _expect(array.shape == (rows, dimension), f"{what} has shape ({rows}, {dimension}), not {array.shape}")
    _expect(array.dtype == np.float32, f"{what} is float32, not {array.dtype}")
    _expect(bool(np.isfinite(array).all()), f"{what} holds only finite numbers")
    if rows:
        norms = np.linalg.norm(array, axis=1)
        _expect(bool(np.allclose(norms, 1.0, atol=1e-3)), f"{what} rows are L2-normalised (norms {norms})")


def check_embedder(embedder: Embedder) -> None:
    """Name and dimension; unit float32 rows of the right shape, for none, one or many texts; deterministic; a
    text is nearer to itself than to an unrelated one."""
    _expect(isinstance(embedder.name, str) and bool(embedder.name), "`name` is a non-empty string")
    dim = embedder.dimension
    _expect(isinstance(dim, int) and dim > 0, "`dimension` is a positive int")
    texts = ["Waterproof rubber boots for wet walks.", "Chocolate cake baked fresh daily.", ""]
    _unit_rows(embedder.embed_documents(texts), len(texts), dim, "embed_documents(3 texts)")
    _unit_rows(embedder.embed_documents([]), 0, dim, "embed_documents([])")
    query = np.asarray(embedder.embed_query("waterproof boots"))
    _unit_rows(query[None, :] if query.ndim == 1 else query, 1, dim, "embed_query(text)")
    again = np.asarray(embedder.embed_query("waterproof boots"))
    _expect(bool(np.allclose(query, again, atol=1e-5)), "embed_query is deterministic")
    docs = np.asarray(embedder.embed_documents(texts[:2]))
    _expect(float(docs[0] @ query) > float(docs[1] @ query), "a query is nearer to a text sharing its words")


def _axis(dimension: int, i: int) -> Vector:
    vector = np.zeros(dimension, dtype=np.float32)
    vector[i % dimension] = 1.0
    return vector


def _check_hits(hits: Sequence[Any], k: int, what: str) -> None:
    _expect(len(hits) <= k, f"{what} returns at most k={k} hits, not {len(hits)}")
    scores = [h.score for h in hits]
    _expect(scores == sorted(scores, reverse=True), f"{what} returns hits best first (scores {scores})")
    _expect(len({h.passage_id for h in hits}) == len(hits), f"{what} returns each passage once")
    ranks = [h.rank for h in hits]
    _expect(ranks == list(range(1, len(hits) + 1)), f"{what} ranks hits 1..n (ranks {ranks})")


def check_vector_index(make: Callable[[int], VectorIndex], dimension: int = 8) -> None:
    """`make(dimension)` gives an empty index: it finds the nearest vectors best first, at most k, honours
    `where`, answers k=0 and an empty index with nothing, and saves to a folder."""
    empty = make(dimension)
    _expect(list(empty.search(_axis(dimension, 0), 3)) == [], "an empty index finds nothing")
    index = make(dimension)
    ids = ["p0", "p1", "p2", "p3"]
    near = _axis(dimension, 0) * 0.8 + _axis(dimension, 1) * 0.6  # close to p0, then p1
    index.add(ids, np.stack([_axis(dimension, i) for i in range(len(ids))]))
    hits = index.search(near, 2)
    _check_hits(hits, 2, "search(vector, 2)")
    _expect([h.passage_id for h in hits] == ["p0", "p1"], f"search finds the nearest first, not {hits}")
    _expect(abs(hits[0].score - 0.8) < 1e-3, f"scores are cosine similarities (0.8, not {hits[0].score})")
    where = index.search(near, 3, where={"p1", "p2"})
    _check_hits(where, 3, "search(where=...)")
    _expect({h.passage_id for h in where} <= {"p1", "p2"}, f"`where` restricts the hits, not {where}")
    _expect(where[0].passage_id == "p1", "within `where` the nearest comes first")
    _expect(list(index.search(near, 0)) == [], "k=0 finds nothing")
    with tempfile.TemporaryDirectory() as folder:
        index.save(folder)
        _expect(any(Path(folder).rglob("*")), "save writes the index into the folder")


def check_lexical_index(build: Callable[[Sequence[tuple[str, str]]], LexicalIndex]) -> None:
    """`build([(passage id, text), ...])` gives an index: it ranks passages sharing the query's words first, at
    most k, finds nothing for words it has never seen, and saves to a folder."""
    index = build(
        [
            ("boots", "Waterproof rubber boots for wet walks."),
            ("cake", "Chocolate cake baked fresh daily."),
            ("socks", "Wool socks for walking boots."),
        ]
    )
    hits = index.search("waterproof boots", 2)
    _check_hits(hits, 2, "search(query, 2)")
    _expect(bool(hits) and hits[0].passage_id == "boots", f"the passage sharing most query words comes first: {hits}")
    _expect("cake" not in {h.passage_id for h in hits}, "a passage sharing no query word is not a hit")
    _expect(list(index.search("zyzzyva quuxle", 3)) == [], "words the index has never seen find nothing")
    _expect(list(index.search("boots", 0)) == [], "k=0 finds nothing")
    with tempfile.TemporaryDirectory() as folder:
        index.save(folder)
        _expect(any(Path(folder).rglob("*")), "save writes the index into the folder")


def sample_task(query: str = "Are the Tarn boots waterproof?", *, evidence: bool = True) -> Task:
    """A small task over one product, for generator contracts and tests."""
    doc = Document(
        id="tarn",
        kind="product",
        title="Tarn Wellington Boot",
        url="https://shop.example/products/tarn",
        link_type="product",
        source="products.json",
        gid="gid://shop/Product/1",
        handle="tarn",
        body="A tall boot for wet walks. Made from natural rubber.",
        facts=(Fact(key="waterproof", label="Waterproof", value="yes"), Fact("material", "Material", "natural rubber")),
    )
    passage = Passage(
        id="tarn#0",
        doc_id="tarn",
        text="Tarn Wellington Boot\nWaterproof: yes\nMaterial: natural rubber\nA tall boot for wet walks.",
        title=doc.title,
        url=doc.url,
        kind="product",
        link_type="product",
        gid=doc.gid,
    )
    found = (Evidence(number=1, passage=passage, score=0.8),) if evidence else ()
    return Task(
        query=query,
        evidence=found,
        documents={"tarn": doc} if evidence else {},
        resolution=Resolution(),
        language="en",
        shop_name="Example Shop",
    )


def check_generator(generator: Generator, task: Task | None = None) -> None:
    """A name; for a task with evidence and one without, a Draft (or GeneratorUnavailable, never another error)
    whose sentences cite only the task's evidence numbers and whose documents are the task's own."""
    _expect(isinstance(generator.name, str) and bool(generator.name), "`name` is a non-empty string")
    for each in (task or sample_task(), sample_task(evidence=False)):
        try:
            draft = generator.generate(each)
        except GeneratorUnavailable:
            continue
        _expect(isinstance(draft, Draft), f"generate returns a Draft, not {type(draft).__name__}")
        _expect(draft.kind in get_args(DraftKind), f"Draft.kind is one of {get_args(DraftKind)}, not {draft.kind!r}")
        numbers = {ev.number for ev in each.evidence}
        known = set(each.documents) | {ev.passage.doc_id for ev in each.evidence}
        for sentence in draft.sentences:
            _expect(isinstance(sentence, Sentence) and bool(sentence.text.strip()), "every sentence has text")
            _expect(set(sentence.cites) <= numbers, f"{sentence.text!r} cites only evidence numbers {numbers}")
        _expect(set(draft.used_doc_ids) <= known, f"used_doc_ids {draft.used_doc_ids} are the task's documents")


def check_conversation_store(store: ConversationStore) -> None:
    """Conversations belong to their owner: a new one is empty, turns come back in order, another owner or an
    unknown id gets None, and appending slides the expiry."""
    conversation_id, expires_at = store.create("owner-a")
    _expect(bool(conversation_id) and bool(expires_at), "create returns (id, expires_at)")
    _expect(store.history(conversation_id, "owner-a") == [], "a new conversation has no turns")
    _expect(store.history(conversation_id, "owner-b") is None, "another owner cannot read a conversation")
    _expect(store.history("no-such-conversation", "owner-a") is None, "an unknown id has no history")
    first = Turn(query="Are they waterproof?", answer="Yes.", doc_ids=("tarn",), created_at="2026-01-01T00:00:00Z")
    second = Turn(query="And the price?", answer="£89.", doc_ids=("tarn",), created_at="2026-01-01T00:01:00Z")
    _expect(bool(store.append(conversation_id, "owner-a", first)), "append returns the new expires_at")
    store.append(conversation_id, "owner-a", second)
    turns = store.history(conversation_id, "owner-a") or []
    got = [(t.query, t.answer, tuple(t.doc_ids)) for t in turns]
    want = [(t.query, t.answer, t.doc_ids) for t in (first, second)]
    _expect(got == want, f"history returns the turns in order: {got}")
    other, _ = store.create("owner-b")
    _expect(other != conversation_id, "every conversation gets its own id")
    try:
        store.append(conversation_id, "owner-b", first)
    except (LookupError, StoreError):
        pass
    else:
        raise ContractError("appending to another owner's conversation is refused")


def check_idempotency_store(store: IdempotencyStore) -> None:
    """A key is reserved once ("new"), replays its finished response for the same payload, conflicts for another
    payload, belongs to its owner, and is free again after `abandon`."""
    key = "key-" + secrets.token_hex(4)
    _expect(store.begin(key, "owner-a", "hash-1").state == "new", "a fresh key is reserved: state 'new'")
    response = {"answer": {"plain": "Yes."}}
    store.finish(key, "owner-a", response, 200)
    replay = store.begin(key, "owner-a", "hash-1", wait_s=1.0)
    _expect(replay.state == "replay" and replay.response == response, "the same payload replays the response")
    _expect(store.begin(key, "owner-a", "hash-2").state == "conflict", "another payload with the key conflicts")
    _expect(store.begin(key, "owner-b", "hash-1").state == "new", "keys belong to their owner")
    store.abandon(key, "owner-b")
    _expect(store.begin(key, "owner-b", "hash-1").state == "new", "an abandoned key can be reserved again")
    store.abandon(key, "owner-b")
