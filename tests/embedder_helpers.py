"""A real embedder wrapped to record what it is asked: the tests that count model calls share it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class RecordingEmbedder:
    """Delegates to `inner` and records every document batch and every query it was asked to embed. `tokens`:
    pass the inner embedder's `token_counts` through (the indexer then batches by tokens); hidden by default."""

    def __init__(self, inner: Any, *, tokens: bool = False) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.batches: list[list[str]] = []
        self.queries: list[str] = []
        if tokens and hasattr(inner, "token_counts"):
            self.token_counts = inner.token_counts

    @property
    def texts(self) -> list[str]:
        """Every text embedded as a document, in order."""
        return [t for batch in self.batches for t in batch]

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.batches.append(list(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        self.queries.append(text)
        return self.inner.embed_query(text)
