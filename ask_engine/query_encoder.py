"""One query straight through a loaded ONNX sentence-transformers model: its own fast tokenizer and its ONNX Runtime
session, mean pooling and L2 normalisation in numpy, the same vector as `SentenceTransformer.encode` gives.

A query is one short text on the answer's hot path, and `encode` spends about a millisecond per call around the
session's run (batching, tensor conversions, module dispatch): as much as everything else an answer does besides the
model. `QueryEncoder.of(model)` reads the loaded model and returns None for any pipeline it cannot reproduce exactly
(another pooling, a dense layer, no session, a slow tokenizer), so the caller keeps `encode` for those.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

__all__ = ["QueryEncoder"]

_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})


class QueryEncoder:
    """Encodes one text with the model's tokenizer and session; thread-safe."""

    def __init__(self, tokenizer: Any, session: Any, inputs: tuple[str, ...], output: str) -> None:
        self._tokenizer = tokenizer
        self._session = session
        self._inputs = inputs
        self._output = output
        self._lock = threading.Lock()  # a Rust tokenizer is not to be used by two threads at once

    @classmethod
    def of(cls, model: Any) -> QueryEncoder | None:
        """The encoder for a loaded `SentenceTransformer` whose pipeline is exactly Transformer (ONNX session, fast
        tokenizer, no lower-casing of its own) → mean pooling → Normalize; None for anything else."""
        try:
            modules = list(model)
        except TypeError:
            return None
        names = [type(m).__name__ for m in modules]
        if names != ["Transformer", "Pooling", "Normalize"]:
            return None
        transformer, pooling = modules[0], modules[1]
        config = pooling.get_config_dict() if hasattr(pooling, "get_config_dict") else {}
        if config.get("pooling_mode") != "mean" or not config.get("include_prompt", True):
            return None
        if getattr(transformer, "do_lower_case", False):
            return None
        session = getattr(getattr(transformer, "auto_model", None), "session", None)
        fast = getattr(getattr(transformer, "tokenizer", None), "_tokenizer", None)
        limit = int(getattr(transformer, "max_seq_length", 0) or 0)
        if session is None or fast is None or limit <= 0:
            return None
        inputs = tuple(i.name for i in session.get_inputs())
        outputs = [o.name for o in session.get_outputs()]
        if not set(inputs) <= _INPUTS or "input_ids" not in inputs or not outputs:
            return None
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(fast.to_str())  # its own copy: truncation set once, never shared
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=limit)
        output = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]
        return cls(tokenizer, session, inputs, output)

    def encode(self, text: str) -> np.ndarray[Any, Any]:
        """The L2-normalised float32 vector of `text`."""
        with self._lock:
            encoding = self._tokenizer.encode(text)
        columns = {
            "input_ids": encoding.ids,
            "attention_mask": encoding.attention_mask,
            "token_type_ids": encoding.type_ids,
        }
        feed = {name: np.asarray([columns[name]], dtype=np.int64) for name in self._inputs}
        hidden = self._session.run([self._output], feed)[0][0]
        mask = np.asarray(encoding.attention_mask, dtype=np.float32)[:, None]
        pooled = (hidden * mask).sum(axis=0) / max(float(mask.sum()), 1e-9)
        norm = float(np.linalg.norm(pooled))
        return np.asarray(pooled / max(norm, 1e-12), dtype=np.float32)
