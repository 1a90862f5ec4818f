"""Draft → AskResponse: the engine's own sentences and messages, links, disclosures and the turn record."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from ask_engine.guard import Operation, disclosure_messages, operation_sentence
from ask_engine.indexes import ShopIndex
from ask_engine.markup import inert_answer, strip_tags
from ask_engine.models import Answer, AskRequest, AskResponse, Conversation, Link, Message, ucp_envelope
from ask_engine.phrases import phrase
from ask_engine.types import Document, Draft, Evidence, Resolution, Sentence, Turn, Unresolved

UNAVAILABLE_MESSAGE = "The answering service failed; an answer isn't available right now. Try again shortly."
CONVERSATION_NOT_FOUND = "Conversation not found or expired; a new conversation was started."
CONVERSATION_NOT_KEPT = "Conversation not found or expired; this question was answered on its own."
_ID_ECHO_CHARS = 120

Record = Callable[[Turn], Conversation]  # stores the turn, returns the conversation the response names


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _echo(value: str) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= _ID_ECHO_CHARS else flat[: _ID_ECHO_CHARS - 1] + "…"


def primary_language(tag: str | None) -> str:
    return re.split(r"[-_]", (tag or "").strip().casefold(), maxsplit=1)[0]


# ---------------------------------------------------------------------------------------------------- messages


def conversation_not_found(*, started_new: bool) -> Message:
    """The conversation id can't be continued: a new one was started, or (no store) the question stands alone."""
    content = CONVERSATION_NOT_FOUND if started_new else CONVERSATION_NOT_KEPT
    return Message(type="info", code="not_found", path="$.conversation.id", content=content)


def not_found_messages(unresolved: Sequence[Unresolved]) -> list[Message]:
    """One `not_found` per id that names nothing in the shop."""
    return [
        Message(
            type="info",
            code="not_found",
            path=item.path,
            content=f"No product or page matches the id {_echo(item.value)!r}; the question was answered without it.",
        )
        for item in unresolved
    ]


def language_messages(requested: str | None, shop_language: str) -> list[Message]:
    """`language_unavailable` when the shopper asked for a language other than the shop's."""
    language = primary_language(requested)
    if not language or language == primary_language(shop_language):
        return []
    return [
        Message(
            type="info",
            code="language_unavailable",
            content=(
                f"Answers are available in the shop's language ({shop_language}) only; "
                f"this answer is not in the requested language ({_echo(requested or '')})."
            ),
        )
    ]


# ---------------------------------------------------------------------------------------------------- response


def response(
    *,
    req: AskRequest,
    index: ShopIndex,
    ucp_version: str,
    head: Sequence[Message],
    operation: Operation | None,
    draft: Draft | None,
    unavailable: bool,
    resolution: Resolution,
    evidence: Sequence[Evidence],
    record: Record | None,
) -> AskResponse:
    """The response: the operation notice, the draft's sentences (or the fixed phrase when there are none), links,
    `head` then the unavailable error then the disclosures (always last), and the turn `record` keeps."""
    sentences: list[Sentence] = []
    if operation is not None:
        sentences.append(operation_sentence(operation))
    if draft is not None:
        sentences.extend(draft.sentences)
    messages = list(head)
    if unavailable:
        sentences.append(Sentence(text=phrase("unavailable"), kind="meta"))
        messages.append(
            Message(type="error", code="ask_unavailable", content=UNAVAILABLE_MESSAGE, severity="recoverable")
        )
    if not sentences:
        sentences.append(Sentence(text=phrase("no_answer", shop=index.shop.name), kind="meta"))
    # Every generator's sentences pass here: whatever a sentence quotes, plain carries no tags and markdown no
    # raw HTML or unsafe link.
    plain, markdown = inert_answer([(s.text, s.markdown or s.text) for s in sentences])

    used = list(draft.used_doc_ids) if draft is not None else []
    found = links(index, plain, sentences, used, resolution, evidence)

    touched_ids = list(dict.fromkeys([*resolution.doc_ids, *used]))
    touched = [index.documents[d] for d in touched_ids if d in index.documents]
    evidence_docs = [index.documents[d] for d in dict.fromkeys(ev.passage.doc_id for ev in evidence)]
    messages.extend(
        disclosure_messages(
            touched,
            query=req.query,
            draft=draft or Draft(sentences=tuple(sentences), kind="unavailable"),
            evidence_docs=evidence_docs,
        )
    )

    conversation: Conversation | None = None
    if record is not None:
        conversation = record(Turn(query=req.query, answer=plain, doc_ids=tuple(touched_ids), created_at=_now()))

    return AskResponse(
        ucp=ucp_envelope(ucp_version),
        answer=Answer(plain=plain, markdown=markdown if markdown != plain else None),
        conversation=conversation,
        links=found or None,
        messages=messages or None,
    )


# ---------------------------------------------------------------------------------------------------- links


def links(
    index: ShopIndex,
    plain: str,
    sentences: Sequence[Sentence],
    used: Sequence[str],
    resolution: Resolution,
    evidence: Sequence[Evidence],
) -> list[Link]:
    """One link per entity the answer names or draws on, in the order the answer names them."""
    by_number = {ev.number: ev for ev in evidence}
    folded = plain.casefold()
    candidates = list(dict.fromkeys(used))
    # A resolved product the answer names by title is linked even when the generator did not list it.
    candidates += [
        d
        for d in resolution.doc_ids
        if d not in candidates and d in index.documents and index.documents[d].title.casefold() in folded
    ]

    def first_position(doc: Document) -> int:
        at = folded.find(doc.title.casefold()) if doc.title else -1
        if at >= 0:
            return at
        offset = 0
        for sentence in sentences:
            if any(by_number[n].passage.doc_id == doc.id for n in sentence.cites if n in by_number):
                return offset
            offset += len(sentence.text) + 1
        return len(plain) + 1

    ranked: list[tuple[int, int, Document]] = []
    for order, doc_id in enumerate(candidates):
        doc = index.documents.get(doc_id)
        if doc is not None:
            ranked.append((first_position(doc), order, doc))
    ranked.sort(key=lambda item: (item[0], item[1]))

    out: list[Link] = []
    seen: set[tuple[str, str]] = set()
    for _, _, doc in ranked:
        url = doc.url if doc.kind == "product" else _section_url(doc, sentences, by_number, evidence)
        if not url:
            continue
        key = (doc.link_type, url)
        if key in seen:
            continue
        seen.add(key)
        out.append(
            Link(
                type=doc.link_type,
                url=url,
                title=strip_tags(doc.title).strip() or None,
                id=doc.gid if doc.kind == "product" and doc.gid else None,
            )
        )
    return out


def _section_url(
    doc: Document, sentences: Sequence[Sentence], by_number: dict[int, Evidence], evidence: Sequence[Evidence]
) -> str:
    """The URL of the section of `doc` the answer cites (its anchor), else of its best evidence passage."""
    for sentence in sentences:
        for n in sentence.cites:
            ev = by_number.get(n)
            if ev is not None and ev.passage.doc_id == doc.id and ev.passage.url:
                return ev.passage.url
    for ev in evidence:
        if ev.passage.doc_id == doc.id and ev.passage.url:
            return ev.passage.url
    return doc.url
