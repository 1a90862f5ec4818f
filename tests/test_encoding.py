"""Embedding a build's texts: batches of equal token length, each distinct text once, the vectors unchanged."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from ask_engine.encoding import embed_texts, length_batches, normalised, text_lengths
from ask_engine.errors import BackendError
from tests.embedder_helpers import RecordingEmbedder


def test_length_batches_cover_every_position_once_within_both_limits() -> None:
    rng = random.Random(7)
    lengths = [rng.choice((3, 9, 20, 64, 256, 300)) for _ in range(500)]
    batches = length_batches(lengths, 32, 1024)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths)  # shortest first, so a batch holds similar lengths
    for batch in batches:
        assert len(batch) <= 32
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= 1024
    # a text longer than the budget is a batch of its own, not an error
    assert [len(b) for b in length_batches([5000, 10, 10], 8, 100)] == [2, 1]
    assert [len(b) for b in length_batches([1] * 10, 4, None)] == [4, 4, 2]
    with pytest.raises(ValueError, match="at least one"):
        length_batches([1], 0)


def test_token_counts_are_the_models_own_truncated_lengths(embedder: Any) -> None:
    long = "waterproof " * 600
    counts = embedder.token_counts(["Size: M", long, ""])
    assert counts[0] == len(embedder.load().tokenizer("Size: M")["input_ids"])
    assert counts[1] == embedder.load().max_seq_length
    assert counts[2] == 2  # the special tokens alone
    assert text_lengths(RecordingEmbedder(embedder, tokens=True), ["Size: M"]) == ([counts[0]], True)
    assert text_lengths(RecordingEmbedder(embedder), ["Size: M"]) == ([7], False)


def test_duplicates_are_embedded_once_and_vectors_match_embedding_each_text_alone(embedder: Any) -> None:
    texts = [
        "Size: M",
        "Free UK delivery on orders over £50.",
        "Size: M",
        "Variant Black / 12 (SKU FF-SKID-W-BLK-12): £189.00, in stock.",
        "A warm 700-fill goose down jacket for cold winter days, with a hood and two hand pockets.",
        "Free UK delivery on orders over £50.",
    ]
    counting = RecordingEmbedder(embedder, tokens=True)
    matrix = embed_texts(counting, texts, batch_size=2, budget=40)
    embedded = counting.texts
    assert sorted(embedded) == sorted(set(texts))  # each distinct text exactly once
    assert all(len(b) <= 2 for b in counting.batches)
    alone = np.vstack([embedder.embed_documents([t]) for t in texts])
    np.testing.assert_allclose(matrix, alone, atol=1e-5)  # padding in a batch does not change a vector
    assert np.array_equal(matrix[0], matrix[2]) and np.array_equal(matrix[1], matrix[5])
    assert embed_texts(counting, [], batch_size=4).shape == (0, embedder.dimension)


def test_a_wrong_shape_or_a_non_finite_vector_is_a_backend_error(embedder: Any) -> None:
    class Broken(RecordingEmbedder):
        def __init__(self, inner: Any, bad: Any) -> None:
            super().__init__(inner, tokens=False)
            self.bad = bad

        def embed_documents(self, texts: Sequence[str]) -> Any:
            return self.bad(len(texts))

    for bad in (lambda n: np.zeros((n + 1, embedder.dimension)), lambda n: np.full((n, embedder.dimension), np.nan)):
        with pytest.raises(BackendError, match="expected"):
            embed_texts(Broken(embedder, bad), ["a", "b"], batch_size=8)


def test_normalised_rows_have_unit_length_and_zero_rows_stay_zero() -> None:
    matrix = np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32)
    np.testing.assert_allclose(normalised(matrix), [[0.6, 0.8], [0.0, 0.0]])
