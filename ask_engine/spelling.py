"""Slips of the keyboard in a question, read as the shop's own word ("caffiene" → "caffeine").

Shoppers type fast: "caffiene", "shiping", "reciept", "yirgachefe". A slipped word matches nothing in the shop's text,
so the question loses its most specific word. A word is read as another only when all of these hold:
- it is not one the shop's text uses (its lexical index knows every word of every passage) nor an English word
  (pyspellchecker's English word list), so real words the shop happens not to use are never changed;
- it is one edit (a letter added, dropped, changed, or two swapped) from a word the shop does use; among several,
  the one most of the shop's passages use wins, then the commoner in English;
- it is not a name: a capitalised word inside a sentence is left as typed, as are words with digits or of fewer
  than four letters.

A word spelled the other side of the Atlantic ("polarized", "aluminum", "color") is read as the shop's spelling
when the shop uses that one and not the asker's, English word or not: the two read the same once stemmed, but the
embedding model compares words as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ask_engine.language import american_spelling, spelling_variants

__all__ = ["spelled"]

# a word of four or more letters, lower case or capitalised; a word in a code or a hyphenated name is left alone
_WORD = re.compile(r"(?<![\w'’.-])[A-Za-z][a-z]{3,}(?![\w'’-])")
_SENTENCE_END = re.compile(r"(?:^|[.?!:;]\s*|\n\s*)$")


@lru_cache(maxsize=1)
def _english() -> Any:
    """pyspellchecker's English word list and edit generator (loaded once, on the first word the shop does not use)."""
    from spellchecker import SpellChecker

    return SpellChecker(language="en", distance=1)


@lru_cache(maxsize=4096)
def _edits(word: str) -> frozenset[str]:
    """The words one edit from a lower-case `word`, kept by word: questions repeat their words, and every word the
    shop does not use is looked at (hundreds of candidates each)."""
    return frozenset(_english().edit_distance_1(word))


def spelled(text: str, uses: Callable[[str], int]) -> str:
    """`text` with each slipped word replaced by the shop's word one edit away (see the module docstring); `uses`
    says how many of the shop's passages use a lower-case word (-1: a function word)."""

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        low = word.lower()
        if uses(low):
            return word
        if word[0].isupper() and not _SENTENCE_END.search(text[: match.start()]):
            return word  # a name: "Do you ship to Wagga Wagga?"
        english = _english()
        # "polarized" where the shop writes "polarised": the shop's spelling of the same word, so the question
        # reads as its text does (similarity compares the words as written)
        edits = _edits(low)
        american = american_spelling(low)
        same = [c for c in {*spelling_variants(low), *edits} if uses(c) > 0 and american_spelling(c) == american]
        if same:
            best = max(same, key=lambda c: (uses(c), c))
            return best.capitalize() if word[0].isupper() else best
        if low in english:
            return word
        # the word the shop uses most ("shipping", not "shining", for "shiping"), then the commoner English word,
        # then the longer ("yirgacheffe", not "yirgacheff", which reads the same once stemmed)
        options = [(n, c) for c in edits if (n := uses(c)) > 0]
        if not options:
            return word
        best = max(options, key=lambda o: (o[0], english.word_usage_frequency(o[1]), len(o[1]), o[1]))[1]
        return best.capitalize() if word[0].isupper() else best

    return _WORD.sub(fix, text)
