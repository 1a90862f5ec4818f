"""The most basic text helpers, shared by `language` and `countries`: compact word lists and normalised spacing."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize", "word_set"]


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of a literal: compact word lists in source code."""
    return frozenset(text.split())


def normalize(text: str) -> str:
    """NFKC, straight quotes and dashes, single spaces (case kept)."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = text.replace("–", "-").replace("—", " - ")
    return re.sub(r"\s+", " ", text).strip()
