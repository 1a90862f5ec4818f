"""Embedding an index build's texts: each distinct text once, in batches of texts of about the same token length.

A transformer pads every text of a batch to the batch's longest, so the work of a batch is its size times its
longest text. Sorting by characters (what sentence-transformers does inside one `encode` call) is a poor guide to
tokens for catalogue text full of SKUs, sizes and prices; sorting by the model's own token counts and capping the
padded tokens of a batch keeps that waste to a few per cent. The sample shop's build embedded 1.3–2.1× as fast
this way, depending on the machine's load; a synthetic catalogue, whose texts vary less in length, 1.0–1.2×
(bench/README.md, "Faster builds").
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ask_engine.errors import BackendError
from ask_engine.protocols import Embedder

__all__ = ["TOKEN_BUDGET", "embed_texts", "length_batches", "normalised", "text_lengths"]

# Padded tokens (texts × the longest) per batch: 16 texts of a model's full 256 tokens, or 200 of 20.
TOKEN_BUDGET = 4096


def text_lengths(embedder: Embedder, texts: Sequence[str]) -> tuple[list[int], bool]:
    """The length of each text in the embedder's tokens, and True; or in characters, and False, for an embedder that
    cannot count its tokens (`token_counts`)."""
    count = getattr(embedder, "token_counts", None)
    if callable(count) and texts:
        lengths = [int(n) for n in count(texts)]
        if len(lengths) == len(texts):
            return lengths, True
    return [len(t) for t in texts], False


def length_batches(lengths: Sequence[int], max_texts: int, budget: int | None = TOKEN_BUDGET) -> list[list[int]]:
    """Positions of `lengths` grouped into batches of similar lengths, shortest first: at most `max_texts` a batch
    and, when `budget` is set, at most `budget` padded tokens (texts × the longest), unless one text alone is longer.
    Every position is in exactly one batch."""
    if max_texts < 1:
        raise ValueError(f"a batch holds at least one text, got {max_texts}")
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])  # stable: equal lengths keep their order
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        full = len(current) >= max_texts or (budget is not None and (len(current) + 1) * lengths[i] > budget)
        if current and full:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def embed_texts(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    batch_size: int,
    budget: int | None = TOKEN_BUDGET,
    progress: bool = False,
    desc: str = "Embedding",
) -> npt.NDArray[np.float32]:
    """The embedder's vectors of `texts`, rows in `texts` order, exactly as `embed_documents` returned them.

    A text that occurs more than once is embedded once. BackendError when the embedder returns the wrong shape or a
    vector that is not finite."""
    matrix = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    if not texts:
        return matrix
    first: dict[str, int] = {}
    for i, text in enumerate(texts):
        first.setdefault(text, i)
    distinct = list(first)
    lengths, tokens = text_lengths(embedder, distinct)
    batches = length_batches(lengths, batch_size, budget if tokens else None)
    vectors = np.zeros((len(distinct), embedder.dimension), dtype=np.float32)
    from tqdm import tqdm

    with tqdm(total=len(distinct), desc=desc, unit="text", disable=not progress, file=sys.stderr, leave=False) as bar:
        for rows in batches:
            batch = [distinct[i] for i in rows]
            got = np.asarray(embedder.embed_documents(batch), dtype=np.float32)
            if got.shape != (len(batch), embedder.dimension) or not np.isfinite(got).all():
                raise BackendError(
                    f"embedder {embedder.name} returned {got.shape} vectors for {len(batch)} texts "
                    f"(expected {(len(batch), embedder.dimension)}, all finite)"
                )
            vectors[rows] = got
            bar.update(len(batch))
    row = {text: i for i, text in enumerate(distinct)}
    matrix[:] = vectors[[row[t] for t in texts]]
    return matrix


def normalised(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length (zero rows kept): cosine search needs them, and a third-party embedder may not
    normalise."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)
