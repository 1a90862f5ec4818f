"""The per-question working data of the extractive generator (`_Work`, `_Answer`, `_Unit`, the vector cache)
and the small helpers every answer kind uses.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from ask_engine.guard import is_injection
from ask_engine.language import Intent, content_stems, text_cue
from ask_engine.types import Document, Evidence, Gap, Sentence, Task

if TYPE_CHECKING:
    from ask_engine.protocols import Embedder
    from ask_engine.unit_vectors import UnitVectors


MAX_CHARS = 450  # an answer that fits in a conversation
# Sentences that look like instructions to an assistant, beyond what guard.is_injection catches mid-sentence.
_EXTRA_INJECTION = text_cue("injection", re.IGNORECASE)
_NUMBER = re.compile(r"\d")
_MARKDOWN_MARKS = re.compile(r"(\*\*|__|`)")


def _plain(text: str) -> str:
    return _MARKDOWN_MARKS.sub("", text)


@lru_cache(maxsize=1 << 15)  # a pure function of its text, asked of the same merchant sentences request after request
def _is_untrusted(text: str) -> bool:
    return is_injection(text) or bool(_EXTRA_INJECTION.search(text))


_DOUBLE_ARTICLE = re.compile(r"\b[Tt]he (\*\*)?(?=The\b)")


def _articles(text: str) -> str:
    """A template's "the" before a name that starts with its own ("the The Ordinary Serum") is left out."""
    return _DOUBLE_ARTICLE.sub(lambda m: m.group(1) or "", text)


def _end(text: str) -> str:
    # a list entry's own separator ("… with a broken seal or missing product;", "…, and") ends with the sentence
    text = re.sub(r"\s*[;,](?:\s*(?:and|or))?$", "", _articles(text.rstrip()))
    return text if text.endswith((".", "!", "?", ".)", '."', ":")) else text + "."


def _cos(matrix: np.ndarray[Any, Any], vector: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return np.asarray(matrix @ vector, dtype=np.float32) if len(matrix) else np.zeros(0, dtype=np.float32)


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
    # a lead-in that is only a label ("Covered:", "This includes:"): the sentence before it on its line, which says
    # what the list is ("Our own cookware can be returned within 100 days, even if you've cooked with it.")
    opener: str = ""
    line_first: _Unit | None = None  # the first sentence of its line, for a later one ("… $35 to NZ. Not available …")

    def lead_in(self) -> str:
        """The lead-in as quoted before its items: with its opener when it is only a label."""
        return f"{self.opener} {self.text.strip()}" if self.opener else self.text.strip()

    @property
    def key(self) -> tuple[int, int]:
        return (self.rank, self.position)


class _VectorCache:
    """Sentence embeddings kept across questions: a shop's policy sentences come back in answer after answer (an index
    built with unit vectors holds them all already; this keeps what it lacks, and the probes made from questions)."""

    def __init__(self, size: int = 8192) -> None:
        self._items: OrderedDict[str, np.ndarray[Any, Any]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get_many(
        self, embedder: Embedder, texts: Sequence[str], stored: UnitVectors | None = None
    ) -> dict[str, np.ndarray[Any, Any]]:
        """Vectors for `texts`: the index's stored ones first (read in place), then this cache; the missing ones are
        computed in one batch."""
        found: dict[str, np.ndarray[Any, Any]] = dict(stored.lookup(texts)) if stored is not None else {}
        if len(found) < len(texts):
            with self._lock:
                cached = {t: self._items[t] for t in texts if t in self._items and t not in found}
                for t in cached:
                    self._items.move_to_end(t)
            found.update(cached)
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
    listing: list[Document] = field(default_factory=list)
    plain_match: bool = False  # sentence selection found a sentence or FAQ question that plainly answers  # "which of your … are made by X?": the products it names
    # the question without each product's name, by (question, document id): read by the ranker, the fact matcher and
    # the attribute-label reading of one product question alike
    probes: dict[tuple[str, str], str] = field(default_factory=dict)

    def vectors(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        """Embeddings for `texts` (rows in order), computing the missing ones in one batch."""
        if self.embedder is None:
            return np.zeros((len(texts), 1), dtype=np.float32)
        if not texts:
            return np.zeros((0, getattr(self.embedder, "dimension", 1)), dtype=np.float32)
        found = self.cache.get_many(self.embedder, texts, self.task.unit_vectors)
        return np.vstack([found[t] for t in texts])

    def query(self) -> np.ndarray[Any, Any]:
        if self.query_vector is None:
            if self.embedder is None:
                self.query_vector = np.zeros(1, dtype=np.float32)
            else:
                made = (
                    self.task.query_vector.reusable(self.intent.text, self.embedder) if self.task.query_vector else None
                )
                vector = self.embedder.embed_query(self.intent.text) if made is None else made
                self.query_vector = np.asarray(vector, dtype=np.float32)
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
    gaps: list[Gap] = field(default_factory=list)  # what was asked for and is not recorded (for the question log)
    # its "not recorded" names nothing missing ("The shop has not recorded that for the X"): the question's words
    # matched no attribute the answerer knows
    unnamed: bool = False
    # the (passage, heading) of every section a quoted line came from: its heading leads only the first of them
    sections: set[tuple[str, str]] = field(default_factory=set)
    settled: bool = False  # it answers the whole question: no other reading adds to it

    def claim(self, text: str, cites: Iterable[int], markdown: str | None = None, doc: str | None = None) -> None:
        text = _end(text)
        md = _end(markdown) if markdown else None
        self.sentences.append(
            Sentence(text=text, cites=tuple(dict.fromkeys(cites)), markdown=md if md != text else None)
        )
        if doc:
            self.use(doc)

    def meta(self, text: str, markdown: str | None = None, doc: str | None = None) -> None:
        text = _articles(text)
        markdown = _articles(markdown) if markdown else None
        self.sentences.append(Sentence(text=text, markdown=markdown if markdown != text else None, kind="meta"))
        if doc:
            self.use(doc)

    def use(self, doc_id: str) -> None:
        if doc_id not in self.docs:
            self.docs.append(doc_id)

    def extend(self, other: _Answer) -> None:
        # still only an unnamed "not recorded" (and its closest fact) when both are, or one adds nothing
        self.unnamed = other.unnamed if not self.sentences else self.unnamed and (other.unnamed or not other.sentences)
        for s in other.sentences:
            if all(s.text != t.text for t in self.sentences):
                self.sentences.append(s)
        for d in other.docs:
            self.use(d)
        self.not_recorded = self.not_recorded or other.not_recorded
        self.gaps += [g for g in other.gaps if g not in self.gaps]


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


def said_of(answer: _Answer, stems: frozenset[str]) -> int:
    """How many of `stems` the answer's stated sentences use."""
    return len(stems & content_stems(" ".join(s.text for s in answer.sentences if s.kind == "claim")))
