"""The offline default generator, `ExtractiveGenerator`: short answers built only from the shop's own words, with
citations. It lives in `ask_engine.answering` (`extractive.py` and one module per answer kind); this module keeps
the name the registry, the entry point and existing imports use. `phrase(name, **kwargs)` renders a fixed phrase."""

from __future__ import annotations

from ask_engine.answering.extractive import ExtractiveGenerator
from ask_engine.phrases import phrase

__all__ = ["ExtractiveGenerator", "phrase"]
