"""The lexical half of an index: BM25 (bm25s) over passage title and text, with the tokenizer that reads queries and
passages alike and is saved beside it; it also says which words the shop's text uses (`Bm25Index.uses`)."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ask_engine.errors import IndexUnusable
from ask_engine.parallel import mapped
from ask_engine.plaintext import fold
from ask_engine.types import Hit, Passage

BM25 = "bm25"
_TOKENIZER = "tokenizer.json"
_KNOWN_TOKENS = 1 << 18  # word parts whose tokens a tokenizer keeps (a few tens of MB at most)


# Runs of word characters, optionally joined by - . / (SKUs, model numbers, sizes such as "3.5", URL paths).
_TOKEN_RE = re.compile(r"\w+(?:[-./]\w+)*")
_PART_RE = re.compile(r"\w+")


def _s_stem(word: str) -> str:
    """Harman's S-stemmer: folds English plurals only, so it never mangles names or codes."""
    if len(word) > 3 and word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if len(word) > 2 and word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


def _stemmer(name: str) -> Callable[[str], str]:
    if name == "snowball-english":
        try:
            import Stemmer
        except ImportError as exc:
            raise IndexUnusable(
                "this index's lexical part was built with PyStemmer (Snowball English), which is not installed; "
                "install PyStemmer or rebuild the index"
            ) from exc
        stem: Callable[[str], str] = Stemmer.Stemmer("english").stemWord
        return stem
    if name == "s-stemmer":
        return _s_stem
    if name == "none":
        return lambda word: word
    raise IndexUnusable(f"unknown stemmer {name!r} in the lexical index; rebuild the index")


def _default_stemmer() -> str:
    try:
        import Stemmer  # noqa: F401
    except ImportError:
        return "s-stemmer"
    return "snowball-english"


class Tokenizer:
    """Lower-cased words minus English stopwords, stemmed; joined codes ("TB-42-BLK") kept whole as well as in parts.

    The same tokenizer must read queries and passages, so its stemmer is saved with the index, and so is whether it
    drops accents ("cafetière" and "cafetiere" one token; an index built before that choice was saved keeps them).
    """

    def __init__(self, stemmer: str | None = None, *, fold_accents: bool = True) -> None:
        from bm25s.stopwords import STOPWORDS_EN

        self.fold_accents = fold_accents
        self.stemmer = stemmer or _default_stemmer()
        self._stem = _stemmer(self.stemmer)
        self._stopwords = frozenset(STOPWORDS_EN)
        # Each word part's token ("" for a dropped one), made once per tokenizer: a catalogue repeats its words
        # hundreds of thousands of times, and stemming them was most of a large build's lexical indexing.
        self._tokens: dict[str, str] = {}

    def _token(self, part: str) -> str:
        if part in self._stopwords or (len(part) == 1 and not part.isdigit()):
            return ""
        return part if any(c.isdigit() for c in part) else self._stem(part)

    def __call__(self, text: str) -> list[str]:
        tokens: list[str] = []
        known = self._tokens
        text = unicodedata.normalize("NFKC", text)
        for match in _TOKEN_RE.finditer((fold(text) if self.fold_accents else text).casefold()):
            whole = match.group()
            parts = _PART_RE.findall(whole)
            if len(parts) > 1:
                tokens.append(whole)  # an exact code match outranks documents sharing only its parts
                joined = self._token("".join(parts)) if "." in whole and all(len(p) == 1 for p in parts) else ""
                if joined and joined.isalpha():
                    tokens.append(joined)  # letters with dots between them are one word: "P.O. boxes" is "PO box"
            for part in parts:
                token = known.get(part)
                if token is None:
                    token = self._token(part)
                    if len(known) < _KNOWN_TOKENS:
                        known[part] = token
                if token:
                    tokens.append(token)
        return tokens


def lexical_text(passage: Passage) -> str:
    """What the lexical index reads for a passage: its title (unless the text repeats it) and its text."""
    return passage.text if passage.title and passage.title in passage.text else f"{passage.title}\n{passage.text}"


class Bm25Index:
    """BM25 (bm25s, Lucene variant) over passages; hits carry source "lexical"."""

    def __init__(self, ids: Sequence[str], retriever: Any | None, tokenizer: Tokenizer) -> None:
        self.ids = list(ids)
        self._retriever = retriever  # None for an empty corpus: bm25s cannot index zero documents
        self.tokenizer = tokenizer

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def build(cls, passages: Sequence[Passage], *, stemmer: str | None = None, processes: int = 1) -> Bm25Index:
        tokenizer = Tokenizer(stemmer)
        ids = [p.id for p in passages]
        if not passages:
            return cls(ids, None, tokenizer)
        import bm25s

        retriever = bm25s.BM25()
        corpus = mapped(lambda p: tokenizer(lexical_text(p)), passages, processes)
        retriever.index(corpus, show_progress=False)
        return cls(ids, retriever, tokenizer)

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        """BM25 score of every passage for `query` (zeros when no query term is known)."""
        scores = np.zeros(len(self.ids), dtype=np.float32)
        if self._retriever is None:
            return scores
        vocab = self._retriever.vocab_dict
        tokens = [t for t in self.tokenizer(query) if t in vocab]
        if not tokens:
            return scores
        return np.asarray(self._retriever.get_scores(tokens), dtype=np.float32)

    def uses(self, word: str) -> int:
        """How many passages use the lower-case `word` (as the index reads words: stemmed); -1 for a stopword, which
        every text may use."""
        if word in self.tokenizer._stopwords:
            return -1
        if self._retriever is None:
            return 0
        row = self._retriever.vocab_dict.get(self.tokenizer._stem(word) if word.isalpha() else word)
        if row is None:
            return 0
        indptr = self._retriever.scores["indptr"]  # bm25s keeps the scores by word: a word's passages are its row
        return int(indptr[row + 1] - indptr[row])

    def search(self, query: str, k: int, where: set[str] | None = None) -> list[Hit]:
        if k <= 0 or not self.ids:
            return []
        scores = self.scores(query)
        if where is not None:
            mask = np.zeros(len(self.ids), dtype=bool)
            mask[[i for i, pid in enumerate(self.ids) if pid in where]] = True
            scores = np.where(mask, scores, 0.0)
        candidates = np.flatnonzero(scores > 0)
        order = candidates[np.argsort(-scores[candidates], kind="stable")][:k]
        return [
            Hit(passage_id=self.ids[int(row)], score=float(scores[row]), rank=rank, source="lexical")
            for rank, row in enumerate(order, start=1)
        ]

    def save(self, folder: str | os.PathLike[str]) -> None:
        target = Path(folder) / BM25
        target.mkdir(parents=True, exist_ok=True)
        if self._retriever is not None:
            self._retriever.save(str(target))
        meta = {
            "stemmer": self.tokenizer.stemmer,
            "fold_accents": self.tokenizer.fold_accents,
            "stopwords": "en",
            "documents": len(self.ids),
        }
        (target / _TOKENIZER).write_text(json.dumps(meta), "utf-8")

    @classmethod
    def load(cls, folder: str | os.PathLike[str], ids: Sequence[str]) -> Bm25Index:
        """Read bm25/ from `folder`, its score matrix memory-mapped (shared by every process serving the index);
        `ids` name its rows (passages.jsonl order)."""
        source = Path(folder) / BM25
        meta = json.loads((source / _TOKENIZER).read_text("utf-8"))
        if meta.get("documents") != len(ids):
            raise ValueError(f"{BM25}/ holds {meta.get('documents')} documents for {len(ids)} passages")
        tokenizer = Tokenizer(meta["stemmer"], fold_accents=bool(meta.get("fold_accents", False)))
        if not ids:
            return cls(ids, None, tokenizer)
        import bm25s

        retriever = bm25s.BM25.load(str(source), mmap=True, load_corpus=False)
        return cls(ids, retriever, tokenizer)
