"""Slips of the keyboard in a question, read as the shop's own word ("caffiene" → "caffeine").

Shoppers type fast: "caffiene", "shiping", "reciept", "yirgachefe". A slipped word matches nothing in the shop's text,
so the question loses its most specific word. A word is read as another only when all of these hold:
- it is not one the shop's text uses (its lexical index knows every word of every passage) nor an English word
  (pyspellchecker's English word list), so real words the shop happens not to use are never changed;
- it is one edit (a letter added, dropped, changed, or two swapped) from a word the shop does use (of a four-letter
  word, no letter changed: "amex" is no "apex"); among several, the one most of the shop's passages use wins, then
  the commoner in English;
- it is not a name: a capitalised word inside a sentence is left as typed, as are words with digits or of fewer
  than four letters.

A word spelled the other side of the Atlantic ("polarized", "aluminum", "color") is read as the shop's spelling
when the shop uses that one and not the asker's, English word or not: the two read the same once stemmed, but the
embedding model compares words as written.

A word the shop writes with a hyphen may be typed without it ("xfull" for "X-Full", "tshirt" for "T-shirt"): it is
read as the shop's word, not as a slip for the word after the hyphen.

A thing the shop writes as one word may be typed as two, and the other way round: "life jacket" for the shop's
"lifejacket", "giftwrap" for its "gift wrap". `compounds` gives the shop's form beside the asker's, in the shape of
the shop's own synonyms ("giftwrap (gift wrap)"), so neither reading is lost.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ask_engine.language import _STOPWORDS, INFORMAL_WORDS, ShopSynonyms, american_spelling, spelling_variants

__all__ = ["compounds", "english_word", "spelled"]

# a word of four or more letters, lower case or capitalised; a word in a code or a hyphenated name is left alone
_WORD = re.compile(r"(?<![\w'’.-])[A-Za-z][a-z]{3,}(?![\w'’-])")
_SENTENCE_END = re.compile(r"(?:^|[.?!:;]\s*|\n\s*)$")
# a word long enough to be two of four letters or more (not a prefix: "neocolor" is no "neo color"), and two words of
# three letters or more side by side
_JOINED = re.compile(r"(?<![\w'’.-])[A-Za-z][a-z]{7,}(?![\w'’-])")
_PAIR = re.compile(r"(?<![\w'’.-])(?=([A-Za-z][a-z]{2,})\s+([A-Za-z][a-z]{2,})(?![\w'’-]))")


@lru_cache(maxsize=1)
def _english() -> Any:
    """pyspellchecker's English word list and edit generator (loaded once, on the first word the shop does not use)."""
    from spellchecker import SpellChecker

    return SpellChecker(language="en", distance=1)


def english_word(word: str) -> bool:
    """`word` (lower case) is in pyspellchecker's English word list, which holds common place names too."""
    return word in _english()


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
        if uses(low) or low in INFORMAL_WORDS:  # ("cals" is read as "calories", not corrected to "calls")
            return word
        if low in _STOPWORDS:
            return word  # a function word written without its apostrophe ("dont") is no slip for a shop's word ("don")
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
        # "xfull" for the shop's "X-Full", "tshirt" for its "T-shirt": the shop's hyphenated word, the hyphen left out
        hyphened = [h for i in range(1, len(low)) if uses(h := f"{low[:i]}-{low[i:]}") > 0]
        if hyphened:
            return max(hyphened, key=lambda h: (uses(h), h))
        if low in english:
            return word
        # the word the shop uses most ("shipping", not "shining", for "shiping"), then the commoner English word,
        # then the longer ("yirgacheffe", not "yirgacheff", which reads the same once stemmed)
        # (a four-letter word with one letter changed keeps only three: "amex" is no slip for "apex")
        options = [(n, c) for c in edits if (n := uses(c)) > 0 and not _changed_short(low, c)]
        if not options:
            return word
        best = max(options, key=lambda o: (o[0], english.word_usage_frequency(o[1]), len(o[1]), o[1]))[1]
        return best.capitalize() if word[0].isupper() else best

    return _WORD.sub(fix, text)


def _changed_short(word: str, other: str) -> bool:
    """`other` is `word` of four letters with one letter changed for another (not added, dropped or swapped)."""
    return len(word) == len(other) == 4 and sorted(word) != sorted(other)


def compounds(text: str, uses: Callable[[str], int]) -> ShopSynonyms:
    """The shop's form of each compound `text` writes otherwise, as (shop's form, (asker's form,)) pairs for
    `with_shop_synonyms`: a word neither the shop nor English uses whose two halves (four letters or more each) the
    shop uses, split where the rarer half is commonest ("giftwrap": "gift wrap"); two words side by side that the
    shop writes as one, and apart no more often ("life jacket": "lifejacket"). `uses` as for `spelled`."""
    pairs: list[tuple[str, tuple[str, ...]]] = []
    for match in _JOINED.finditer(text):
        word = match.group(0).lower()
        if uses(word) or word in _english():
            continue
        splits = [
            (min(left, right), word[:i], word[i:])
            for i in range(4, len(word) - 3)
            if (left := uses(word[:i])) > 0 and (right := uses(word[i:])) > 0
        ]
        if splits:
            _, first, second = max(splits)
            pairs.append((f"{first} {second}", (word,)))
    for match in _PAIR.finditer(text):
        first, second = match.group(1).lower(), match.group(2).lower()
        joined, apart = uses(first + second), min(uses(first), uses(second))
        # (the shop writes them apart no more often than joined: "Fort William" is a town, though its shop's email
        # address is fortwilliam@…)
        if joined > 0 and 0 <= apart <= joined:
            pairs.append((first + second, (f"{first} {second}",)))
    return tuple(pairs)
