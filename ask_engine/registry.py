"""Backend name -> implementation. Built-ins register the same way as entry-point plugins (`ask_engine.<kind>`)."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from ask_engine.errors import ConfigError

# kind -> name -> "module:attribute" (imported lazily so heavy backends load only when chosen)
_BUILTINS: dict[str, dict[str, str]] = {
    "generator": {
        "extractive": "ask_engine.generators:ExtractiveGenerator",
        "openai": "ask_engine.llm:OpenAICompatibleGenerator",
    },
    "embedder": {
        "sentence-transformers": "ask_engine.embedders:SentenceTransformerEmbedder",
    },
}
_REGISTERED: dict[str, dict[str, Any]] = {}


def register(kind: str, name: str, factory: Any) -> None:
    """Register a backend factory (a class or callable taking `settings`) under `kind`/`name`."""
    _REGISTERED.setdefault(kind, {})[name] = factory


def names(kind: str) -> list[str]:
    found = set(_BUILTINS.get(kind, {})) | set(_REGISTERED.get(kind, {}))
    found |= {ep.name for ep in entry_points(group=f"ask_engine.{kind}")}
    return sorted(found)


def lookup(kind: str, name: str) -> Any:
    """The factory registered for `kind`/`name`: explicit registrations, then built-ins, then entry points."""
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
