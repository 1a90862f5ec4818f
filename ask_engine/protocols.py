"""Extension points: small Protocols a server implementer can satisfy with their own backend."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ask_engine.types import Document, Draft, Hit, Task, Turn

Matrix = npt.NDArray[np.float32]  # shape (n, dim), rows L2-normalised
Vector = npt.NDArray[np.float32]  # shape (dim,), L2-normalised


@runtime_checkable
class CatalogSource(Protocol):
    """Yields the shop's documents (products, policies, pages, FAQ)."""

    def documents(self) -> Iterator[Document]: ...


@runtime_checkable
class Embedder(Protocol):
    name: str  # model identifier recorded in the index manifest
    dimension: int

    def embed_documents(self, texts: Sequence[str]) -> Matrix: ...

    def embed_query(self, text: str) -> Vector: ...


@runtime_checkable
class VectorIndex(Protocol):
    def add(self, ids: Sequence[str], vectors: Matrix) -> None: ...

    def search(self, vector: Vector, k: int, where: set[str] | None = None) -> list[Hit]:
        """Top-k passages by cosine similarity; `where` restricts to these passage ids."""
        ...

    def save(self, folder: str) -> None: ...


@runtime_checkable
class LexicalIndex(Protocol):
    def search(self, query: str, k: int) -> list[Hit]: ...

    def save(self, folder: str) -> None: ...


@runtime_checkable
class Generator(Protocol):
    """Writes the answer's draft. The grounding guard checks every sentence of it, unless the generator declares
    `grounded_by_construction = True` (it only ever quotes the evidence, as the extractive generator does)."""

    name: str

    def generate(self, task: Task) -> Draft:
        """Answer from the task's evidence. Raise GeneratorUnavailable when no answer can be produced."""
        ...


@runtime_checkable
class ConversationStore(Protocol):
    def create(self, owner: str) -> tuple[str, str]:
        """Start a conversation for `owner`; returns (id, expires_at RFC 3339)."""
        ...

    def history(self, conversation_id: str, owner: str) -> list[Turn] | None:
        """Earlier turns, or None when the id is unknown, expired, or owned by someone else."""
        ...

    def append(self, conversation_id: str, owner: str, turn: Turn) -> str:
        """Record a turn; returns the new expires_at."""
        ...


@runtime_checkable
class IdempotencyStore(Protocol):
    """Stores (owner, key) -> payload hash and response; a duplicate replays, another payload conflicts."""

    def begin(self, key: str, owner: str, payload_hash: str, *, wait_s: float = 30.0) -> Any:
        """Reserve the key ("new"), or return the stored response ("replay") or "conflict"."""
        ...

    def finish(self, key: str, owner: str, response: dict[str, Any], status: int = 200) -> None: ...

    def abandon(self, key: str, owner: str) -> None: ...
