"""The most basic text helpers, shared by `language` and `countries`: compact word lists and normalised spacing."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["fold", "normalize", "word_set"]


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of a literal: compact word lists in source code."""
    return frozenset(text.split())


def fold(text: str) -> str:
    """Accents dropped from letters that carry them ("cafetière" → "cafetiere", "Lúcia" → "Lucia"), so a word
    matches however a shopper types it; letters without a decomposition ("ø", "ß") and other scripts are kept."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def normalize(text: str) -> str:
    """NFKC, straight quotes and dashes, single spaces (case kept)."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = text.replace("–", "-").replace("—", " - ")
    return re.sub(r"\s+", " ", text).strip()
