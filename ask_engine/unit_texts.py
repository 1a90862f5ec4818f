"""The answer texts of a build (`answering.embedded`), each document's taken over from the live version when neither
the document, its passages nor the code that makes the texts changed.

Making them reads every sentence of every document through the answerer's guards (about 17 ms a product on the
shared 2-core machine), which on a large catalogue outweighs everything a 1% reindex embeds. So a version records
where each document's texts are among its rows:

    <version>/unit_sources.json   {"code": digest of the package's code and data,
                                   "documents": {doc id: [key, [rows of its own texts], [rows of its passages' texts]]}}

`key` digests the document's content hash and its passages; a document whose key matches, in a version made by the
same code, gets its texts back from the live version's `unit_texts.json`; every other document has them made again.
The order of the texts is the one `answer_texts` gives, so the fingerprint and the stored rows are the same either way.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ask_engine.types import Document, Passage

UNIT_SOURCES = "unit_sources.json"

__all__ = ["UNIT_SOURCES", "AnswerTexts", "code_digest", "load_sources"]


@functools.cache
def code_digest() -> str:
    """Digest of every Python and JSON file of the installed package: any change to the code can change the texts."""
    root = Path(__file__).parent
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json") and p.is_file()):
        digest.update(str(path.relative_to(root)).encode("utf-8") + b"\x00")
        digest.update(path.read_bytes() + b"\x00")
    return digest.hexdigest()


def _key(content_hash: str, passages: Sequence[Passage]) -> str:
    raw = json.dumps([content_hash, [p.to_dict() for p in passages]], sort_keys=True, ensure_ascii=False, default=list)
    return hashlib.blake2b(raw.encode("utf-8"), digest_size=16).hexdigest()


def load_sources(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A version's record of its documents' rows, when it has one made by this very code (else None)."""
    path = Path(folder) / UNIT_SOURCES
    try:
        record = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("code") != code_digest():
        return None
    documents = record.get("documents")
    return documents if isinstance(documents, dict) else None


class AnswerTexts:
    """The distinct answer texts of a build, in `answer_texts` order, and the record a new version stores."""

    def __init__(
        self,
        documents: Sequence[Document],
        by_doc: dict[str, list[Passage]],
        hashes: dict[str, str],
        previous: tuple[dict[str, Any], Sequence[str]] | None = None,
        *,
        processes: int = 1,
    ) -> None:
        from ask_engine.answering.embedded import ordered_texts, own_texts
        from ask_engine.parallel import mapped

        old_rows, old_texts = previous if previous is not None else ({}, ())
        own: dict[str, list[str]] = {}
        of_passages: dict[str, list[str]] = {}
        keys: dict[str, str] = {}
        todo: list[Document] = []
        for doc in documents:
            keys[doc.id] = key = _key(hashes[doc.id], by_doc[doc.id])
            texts = _taken(old_rows.get(doc.id), key, old_texts)
            if texts is None:
                todo.append(doc)
            else:
                own[doc.id], of_passages[doc.id] = texts
        # Making them is most of a large build's work besides embedding: over `processes` processes when it pays.
        for doc, texts in zip(todo, mapped(lambda d: own_texts(d, by_doc[d.id]), todo, processes), strict=True):
            own[doc.id], of_passages[doc.id] = texts
        self.made = len(todo)  # documents whose texts were made again (the others came from the live version)
        self.texts = ordered_texts((own[d.id] for d in documents), (of_passages[d.id] for d in documents))
        row = {text: i for i, text in enumerate(self.texts)}
        self.record: dict[str, Any] = {
            "code": code_digest(),
            "documents": {
                doc.id: [keys[doc.id], [row[t] for t in own[doc.id]], [row[t] for t in of_passages[doc.id]]]
                for doc in documents
            },
        }

    def save(self, folder: str | os.PathLike[str]) -> None:
        (Path(folder) / UNIT_SOURCES).write_text(json.dumps(self.record, separators=(",", ":")), "utf-8")


def _taken(entry: Any, key: str, texts: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """A document's texts from the live version's rows, or None when they cannot be trusted to be the same."""
    if not isinstance(entry, list) or len(entry) != 3 or entry[0] != key:
        return None
    try:
        return [texts[i] for i in entry[1]], [texts[i] for i in entry[2]]
    except (IndexError, TypeError):
        return None
