"""Every text the extractive answerer compares with a question, for a whole shop: what the indexer embeds ahead
(`ask_engine.unit_vectors`), so that answering embeds only the question and the probes made from it.

The texts come from the answerer's own functions, over the documents and passages as a request sees them (after
`sanitize_document` / `sanitize_evidence`), so they match the ones asked for at question time byte for byte. A text
missing here is not an error: the answerer embeds it when asked, as it does without stored vectors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ask_engine.answering.catalogue import product_header
from ask_engine.answering.facts import _COMMERCE_KEYS, fact_text
from ask_engine.answering.sentences import passage_units
from ask_engine.answering.shipping import DESTINATIONS_PROBE
from ask_engine.answering.units import product_units
from ask_engine.answering.work import _is_untrusted
from ask_engine.guard import sanitize_document, sanitize_evidence
from ask_engine.types import Document, Evidence, Passage

__all__ = ["answer_texts", "document_texts", "ordered_texts", "own_texts"]


def document_texts(doc: Document) -> list[str]:
    """What a product's answers compare with the question: its units and their labels (the ranker's features), its
    facts as "Label: value" and its catalogue header. Nothing for other kinds of document."""
    if doc.kind != "product":
        return []
    units = product_units(doc, untrusted=_is_untrusted)
    texts = [u.text for u in units] + [u.label for u in units if u.label]
    texts += [fact_text(f) for f in doc.facts if f.key not in _COMMERCE_KEYS]
    texts.append(product_header(doc))
    return texts


def passage_texts(passage: Passage, doc: Document | None) -> list[str]:
    """The quotable sentences of a passage and the headings (FAQ questions, list lead-ins) they are scored with."""
    evidence = sanitize_evidence([Evidence(number=1, passage=passage, score=0.0)])
    units = [u for ev in evidence for u in passage_units(ev, 0, doc)]
    return [u.text for u in units] + [u.context for u in units]


def own_texts(doc: Document, passages: Sequence[Passage]) -> tuple[list[str], list[str]]:
    """One document's part of `answer_texts`: its own texts and those of its passages (in order), as a reindex
    recomputes them for a changed document only (`ask_engine.unit_texts`)."""
    clean = sanitize_document(doc)
    return document_texts(clean), [t for p in passages for t in passage_texts(p, clean)]


def ordered_texts(documents: Iterable[Sequence[str]], passages: Iterable[Sequence[str]]) -> list[str]:
    """The distinct texts, in the stored order: the destinations probe, every document's, then every passage's."""
    texts: dict[str, None] = {DESTINATIONS_PROBE: None}
    for group in (*documents, *passages):
        texts.update(dict.fromkeys(group))
    return list(texts)


def answer_texts(documents: Iterable[Document], passages: Sequence[Passage]) -> list[str]:
    """The distinct texts of every document and passage, in a stable order (documents first, then passages)."""
    docs = {d.id: sanitize_document(d) for d in documents}
    return ordered_texts(
        (document_texts(doc) for doc in docs.values()),
        (passage_texts(passage, docs.get(passage.doc_id)) for passage in passages),
    )
