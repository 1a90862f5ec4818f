"""The answer-unit vectors stored with an index version: every text the extractive answerer embeds (product units
and their labels, evidence sentences and their headings), embedded at index time so an answer embeds only its
question.

    <version>/unit_vectors.npy   float32 (texts, dimension), exactly what `Embedder.embed_documents` returned;
                                 memory-mapped read-only, so the server's workers share one copy in the page cache
    <version>/unit_texts.json    the text of each row, in row order

Both files are covered by the manifest's checksums like every other file of the version. A version without them
(built before they existed) still answers: the answerer embeds what it needs at question time, as it used to.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

UNIT_VECTORS = "unit_vectors.npy"
UNIT_TEXTS = "unit_texts.json"

__all__ = ["UNIT_TEXTS", "UNIT_VECTORS", "UnitVectors", "updated_unit_vectors"]


class UnitVectors:
    """Text → vector, read-only: rows of a (memory-mapped) matrix looked up by their exact text."""

    def __init__(self, texts: Sequence[str], matrix: npt.NDArray[np.float32]) -> None:
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise ValueError(f"{matrix.shape} unit vectors for {len(texts)} texts")
        self.texts = list(texts)
        self.matrix = matrix
        self._rows = {text: row for row, text in enumerate(self.texts)}
        if len(self._rows) != len(self.texts):
            raise ValueError("duplicate unit texts")

    def __len__(self) -> int:
        return len(self.texts)

    def __contains__(self, text: object) -> bool:
        return text in self._rows

    @property
    def dimension(self) -> int:
        return int(self.matrix.shape[1])

    def row(self, text: str) -> int | None:
        return self._rows.get(text)

    def lookup(self, texts: Iterable[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of those `texts` that have one (views of the matrix's rows, nothing copied)."""
        rows = self._rows
        return {text: self.matrix[rows[text]] for text in texts if text in rows}

    def save(self, folder: str | os.PathLike[str]) -> None:
        target = Path(folder)
        with (target / UNIT_VECTORS).open("wb") as fh:
            np.save(fh, np.ascontiguousarray(self.matrix, dtype=np.float32), allow_pickle=False)
        (target / UNIT_TEXTS).write_text(json.dumps(self.texts, ensure_ascii=False), "utf-8")

    @classmethod
    def load(cls, folder: str | os.PathLike[str], *, dimension: int) -> UnitVectors | None:
        """The version's unit vectors, memory-mapped; None when the version has none (an older build).

        Raises ValueError (or OSError) when the files are there but do not fit together."""
        source = Path(folder)
        if not (source / UNIT_VECTORS).exists() and not (source / UNIT_TEXTS).exists():
            return None
        texts = json.loads((source / UNIT_TEXTS).read_text("utf-8"))
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"{UNIT_TEXTS} is not a list of texts")
        matrix: Any = np.load(source / UNIT_VECTORS, mmap_mode="r", allow_pickle=False)
        if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[1] != dimension:
            raise ValueError(f"{UNIT_VECTORS} is {matrix.dtype} {matrix.shape}, expected float32 (n, {dimension})")
        return cls(texts, matrix)


def updated_unit_vectors(
    texts: Sequence[str],
    previous: UnitVectors | None,
    embed: Callable[[Sequence[str]], npt.NDArray[np.float32]],
    dimension: int,
) -> tuple[UnitVectors, list[str]]:
    """Vectors for `texts` (distinct): rows of `previous` are reused by exact text, only the others are embedded.

    Returns the new store and the texts that were embedded (none on a rebuild that changed nothing they read)."""
    matrix = np.zeros((len(texts), dimension), dtype=np.float32)
    reused: list[int] = []
    rows: list[int] = []
    todo: list[int] = []
    for i, text in enumerate(texts):
        row = previous.row(text) if previous is not None else None
        if row is None:
            todo.append(i)
        else:
            reused.append(i)
            rows.append(row)
    if reused and previous is not None:
        matrix[reused] = previous.matrix[rows]
    missing = [texts[i] for i in todo]
    if todo:
        matrix[todo] = embed(missing)
    return UnitVectors(texts, matrix), missing
