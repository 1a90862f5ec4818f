"""Backend name -> implementation, for every kind of `protocols.py`. Built-ins register the same way as entry-point
plugins (group `ask_engine.<kind>`), so a plug-in is chosen by the same plain name in Settings.

`create(kind, name, settings)` builds the kinds that are made from settings (`embedder`, `generator`); `lookup` gives
the class or factory of any kind (indexes and stores are built from their data, a path or a dimension).
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from ask_engine.errors import ConfigError

# The kinds of backend, one per Protocol in ask_engine/protocols.py.
KINDS: dict[str, str] = {
    "catalog_source": "CatalogSource",
    "embedder": "Embedder",
    "vector_index": "VectorIndex",
    "lexical_index": "LexicalIndex",
    "generator": "Generator",
    "conversation_store": "ConversationStore",
    "idempotency_store": "IdempotencyStore",
}

# kind -> name -> "module:attribute" (imported lazily so heavy backends load only when chosen)
_BUILTINS: dict[str, dict[str, str]] = {
    "catalog_source": {"shop-folder": "ask_engine.sources.shop:ShopSource"},
    "embedder": {
        "onnx": "ask_engine.embedders:OnnxEmbedder",  # the default: the model on ONNX Runtime
        "sentence-transformers": "ask_engine.embedders:SentenceTransformerEmbedder",  # the same model on PyTorch
        "hash": "ask_engine.testing:HashEmbedder",  # a fake: no model, for tests
    },
    "vector_index": {"faiss": "ask_engine.indexes:FaissVectorIndex"},
    "lexical_index": {"bm25": "ask_engine.lexical:Bm25Index"},
    "generator": {
        "extractive": "ask_engine.generators:ExtractiveGenerator",
        "openai": "ask_engine.llm.generator:OpenAICompatibleGenerator",
    },
    "conversation_store": {
        "sqlite": "ask_engine.conversations:SqliteStore",
        "memory": "ask_engine.testing:MemoryStore",
        "redis": "ask_engine.redis_store:RedisStore",  # RedisStore(url, prefix=...): shared by replicas
    },
    "idempotency_store": {
        "sqlite": "ask_engine.conversations:SqliteStore",
        "memory": "ask_engine.testing:MemoryStore",
        "redis": "ask_engine.redis_store:RedisStore",  # RedisStore(url, prefix=...): shared by replicas
    },
}
_REGISTERED: dict[str, dict[str, Any]] = {}


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ConfigError(f"unknown backend kind {kind!r}; known: {', '.join(KINDS)}")


def register(kind: str, name: str, factory: Any) -> None:
    """Register a backend factory (a class or callable taking `settings`) under `kind`/`name`."""
    _check_kind(kind)
    _REGISTERED.setdefault(kind, {})[name] = factory


def builtin_names(kind: str) -> list[str]:
    """The names of the backends that ship with ask_engine."""
    _check_kind(kind)
    return sorted(_BUILTINS.get(kind, {}))


def names(kind: str) -> list[str]:
    """Every name `kind` can be chosen by: built-ins, explicit registrations and entry points."""
    _check_kind(kind)
    found = set(_BUILTINS.get(kind, {})) | set(_REGISTERED.get(kind, {}))
    found |= {ep.name for ep in entry_points(group=f"ask_engine.{kind}")}
    return sorted(found)


def known(kind: str, name: str) -> bool:
    """True when `name` names a backend of `kind` (built-in, registered or an entry point)."""
    _check_kind(kind)
    if name in _BUILTINS.get(kind, {}) or name in _REGISTERED.get(kind, {}):
        return True
    return any(ep.name == name for ep in entry_points(group=f"ask_engine.{kind}"))


def lookup(kind: str, name: str) -> Any:
    """The factory registered for `kind`/`name`: explicit registrations, then built-ins, then entry points."""
    _check_kind(kind)
    if name in _REGISTERED.get(kind, {}):
        return _REGISTERED[kind][name]
    target = _BUILTINS.get(kind, {}).get(name)
    if target is None:
        for ep in entry_points(group=f"ask_engine.{kind}"):
            if ep.name == name:
                return ep.load()
        raise ConfigError(f"unknown {kind} backend {name!r}; known: {', '.join(names(kind)) or 'none'}")
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def create(kind: str, name: str, settings: Any, **kwargs: Any) -> Any:
    """Instantiate the backend `kind`/`name` with `settings`."""
    return lookup(kind, name)(settings=settings, **kwargs)
