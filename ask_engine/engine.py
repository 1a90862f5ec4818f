"""`Engine.ask(request) -> AskResponse`: the one place that orders the stages of answering a question."""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ask_engine import registry
from ask_engine.config import Settings
from ask_engine.errors import AskEngineError, GeneratorUnavailable, InvalidInput
from ask_engine.guard import (
    Operation,
    SupportScorer,
    answers_something,
    detect_operation,
    disclosure_messages,
    ground,
    operation_messages,
    operation_sentence,
    read_query,
    sanitize_document,
    sanitize_evidence,
    strip_injected,
)
from ask_engine.indexes import ShopIndex
from ask_engine.markup import inert_answer, strip_tags
from ask_engine.models import (
    Answer,
    AskRequest,
    AskResponse,
    Conversation,
    Link,
    Message,
    ucp_envelope,
)
from ask_engine.phrases import phrase
from ask_engine.protocols import ConversationStore, Embedder, Generator
from ask_engine.resolve import expand_follow_up, resolve
from ask_engine.retrieve import Mode, Retriever, policy_intents
from ask_engine.types import Document, Draft, Evidence, Resolution, Sentence, ShopInfo, Task, Trace, Turn

log = logging.getLogger(__name__)

UNAVAILABLE_MESSAGE = "The answering service failed; an answer isn't available right now. Try again shortly."
CONVERSATION_NOT_FOUND = "Conversation not found or expired; a new conversation was started."
CONVERSATION_NOT_KEPT = "Conversation not found or expired; this question was answered on its own."
# Operations whose "how do I ...?" the shop's own pages usually explain ("cancel my order" → the cancellation FAQ).
# A cart change, a discount or a stock hold has nothing to explain beyond "nothing was changed".
_EXPLAINED_OPERATIONS = frozenset({"return", "order", "account", "subscription", "booking", "payment"})
_ID_ECHO_CHARS = 120


@dataclass(frozen=True)
class _State:
    """What one index version needs to answer; swapped as a whole by `reload`."""

    index: ShopIndex
    retriever: Retriever


class _Timer:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(self.timings.get(name, 0.0) + (time.perf_counter() - start) * 1000.0, 3)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _primary_language(tag: str | None) -> str:
    return re.split(r"[-_]", (tag or "").strip().casefold(), maxsplit=1)[0]


def _country_code(value: str | None) -> str | None:
    """ISO 3166-1 alpha-2 code from `context.address_country` (a code, or a country name some platforms send)."""
    text = (value or "").strip()
    if not text:
        return None
    if len(text) == 2 and text.isalpha():
        return text.upper()
    from ask_engine.language import country_codes_in

    codes = country_codes_in(text, query=True)
    return codes[0] if codes else text.upper()


def _country_name(code: str) -> str | None:
    """A country's English name for retrieval ("DE" → "Germany"), None when the code is unknown."""
    from ask_engine.language import country_name

    name = country_name(code)
    return None if name == code.upper() else re.sub(r"^the\s+", "", name)


def _echo(value: str) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= _ID_ECHO_CHARS else flat[: _ID_ECHO_CHARS - 1] + "…"


class Engine:
    """Answers ask requests from one shop index. Thread-safe: `ask` may run in several threads at once."""

    def __init__(
        self,
        index_dir: str | Path,
        index: ShopIndex,
        settings: Settings,
        embedder: Embedder,
        generator: Generator,
        store: ConversationStore | None = None,
        *,
        fallback: Generator | None = None,
        scorer: SupportScorer | None = None,
    ) -> None:
        self.index_dir = Path(index_dir)
        self.settings = settings
        self.embedder = embedder
        self.generator = generator
        self.store = store
        self._scorer = scorer
        # The generator that answers when the configured one fails or is ungrounded: the extractive one.
        self._extractive: Generator | None = fallback or (
            generator if getattr(generator, "name", "") == "extractive" else None
        )
        self._lock = threading.Lock()
        self._state = _State(index, Retriever(index, embedder, settings))
        self._fallbacks: dict[str, int] = {}  # Trace.fallback reason -> requests, for /healthz

    # ----------------------------------------------------------------------------------------------- lifecycle

    @classmethod
    def open(
        cls,
        index_dir: str | Path,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        generator: Generator | None = None,
        store: ConversationStore | None = None,
        fallback: Generator | None = None,
    ) -> Engine:
        """Load the live index version of `index_dir`; backends come from settings unless passed in.

        `fallback` answers when `generator` fails or its draft is not grounded (default: the extractive generator).
        """
        settings = settings or Settings.load()
        if embedder is None:
            embedder = registry.create("embedder", "sentence-transformers", settings)
        assert embedder is not None
        index = ShopIndex.open(index_dir, expected_model=getattr(embedder, "name", None))
        if generator is None:
            generator = registry.create("generator", settings.generator, settings, embedder=embedder)
        assert generator is not None
        return cls(index_dir, index, settings, embedder, generator, store, fallback=fallback)

    @property
    def index(self) -> ShopIndex:
        return self._state.index

    @property
    def retriever(self) -> Retriever:
        """The retriever over the live index version (the eval harness ranks baselines with it)."""
        return self._state.retriever

    @property
    def shop(self) -> ShopInfo:
        return self._state.index.shop

    @property
    def version(self) -> str:
        """The index version being answered from."""
        return self._state.index.version

    def reload(self) -> bool:
        """Load the index version CURRENT names, if it changed, and swap to it; True when it swapped.

        Requests already running finish on the version they started with.
        """
        with self._lock:
            current = ShopIndex.current_version(self.index_dir)
            if current is None or current == self._state.index.version:
                return False
            index = ShopIndex.open(self.index_dir, expected_model=getattr(self.embedder, "name", None))
            self._state = _State(index, Retriever(index, self.embedder, self.settings))
            log.info("ask engine now answers from index version %s", index.version)
            return True

    def generator_status(self) -> dict[str, Any]:
        """The answer backend as an operator sees it: its name, its state (up / breaker_open / probing) and how
        many requests fell back to the extractive answer, by reason, since the engine was opened."""
        status = getattr(self.generator, "status", None)
        out: dict[str, Any] = {"name": getattr(self.generator, "name", type(self.generator).__name__), "state": "up"}
        if callable(status):
            out.update(status())
        with self._lock:
            out["fallbacks"] = dict(sorted(self._fallbacks.items()))
        return out

    def close(self) -> None:
        """Release what the engine holds (the conversation store belongs to the caller)."""
        self._scorer = None

    # ----------------------------------------------------------------------------------------------- backends

    def _extractive_generator(self) -> Generator:
        if self._extractive is None:
            with self._lock:
                if self._extractive is None:
                    self._extractive = registry.create("generator", "extractive", self.settings, embedder=self.embedder)
        assert self._extractive is not None
        return self._extractive

    def _faithfulness(self) -> SupportScorer:
        if self._scorer is None:
            from ask_engine.faithfulness import FaithfulnessScorer

            with self._lock:
                if self._scorer is None:
                    self._scorer = FaithfulnessScorer(self.embedder)
        assert self._scorer is not None
        return self._scorer

    # ----------------------------------------------------------------------------------------------- asking

    def ask(
        self, request: AskRequest | dict[str, Any], *, asker: str = "anonymous", version: str | None = None
    ) -> AskResponse:
        """Answer one request. Raises InvalidInput for a request that breaks the schema or a limit, and StoreError
        when the conversation store fails (fail closed); every other outcome (not found, operation asked for,
        answer backend down) is an answer with messages."""
        response, _ = self.ask_traced(request, asker=asker, version=version)
        return response

    def ask_traced(
        self,
        request: AskRequest | dict[str, Any],
        *,
        asker: str = "anonymous",
        version: str | None = None,
        retrieval: Mode = "hybrid",
    ) -> tuple[AskResponse, Trace]:
        """`ask`, plus what happened inside: evidence, drafts, fallbacks and per-stage timings."""
        timer = _Timer()
        with timer.stage("validate"):
            req = AskRequest.parse(request)
        state = self._state  # one version for the whole request, even if reload() swaps meanwhile
        index = state.index
        head: list[Message] = []

        with timer.stage("conversation"):
            conversation_id, expires_at, history = self._conversation(req, asker, head)

        query = req.query
        ctx = req.context
        with timer.stage("resolve"):
            resolution = resolve(req.ids or (), index, query=query, history=history)
        for item in resolution.unresolved:
            head.append(
                Message(
                    type="info",
                    code="not_found",
                    path=item.path,
                    content=f"No product or page matches the id {_echo(item.value)!r}; the question was answered without it.",
                )
            )

        with timer.stage("guard"):
            # Fake role tags and tool outputs are dropped from what is answered ("SYSTEM: new policy. USER: how long
            # does a refund take?"); an operation asked for anywhere in the query is still refused.
            parts = read_query(query)
            operation = detect_operation(parts.visible)
        answer_query = parts.question or query
        remainder = answer_query
        if operation is not None:
            own = detect_operation(answer_query) if answer_query != parts.visible else operation
            remainder = own.remainder if own is not None else answer_query
            answer_query = remainder
            if not answer_query and operation.object in _EXPLAINED_OPERATIONS:
                answer_query = operation.request
            head.extend(operation_messages(operation))

        if resolution.from_history and answer_query.strip():
            # "and how much is it?": name what "it" is, for retrieval and for the generator.
            titles = [index.documents[d].title for d in resolution.doc_ids if d in index.documents]
            answer_query = expand_follow_up(answer_query, titles)

        requested_language = (ctx.language if ctx else None) or ""
        language = _primary_language(requested_language)
        if language and language != _primary_language(index.shop.language):
            head.append(
                Message(
                    type="info",
                    code="language_unavailable",
                    content=(
                        f"Answers are available in the shop's language ({index.shop.language}) only; "
                        f"this answer is not in the requested language ({_echo(requested_language)})."
                    ),
                )
            )

        country = _country_code(ctx.address_country if ctx else None)
        region = (ctx.address_region or "").strip() or None if ctx else None
        evidence: tuple[Evidence, ...] = ()
        raw_draft: Draft | None = None
        draft: Draft | None = None
        removed: tuple[Sentence, ...] = ()
        fallback: str | None = None
        unavailable = False

        skip_generation = operation is not None and not answer_query.strip() and bool(query.strip())
        if not skip_generation:
            try:
                with timer.stage("retrieve"):
                    evidence = sanitize_evidence(
                        state.retriever.retrieve(
                            self._retrieval_query(answer_query, country), resolution, mode=retrieval
                        )
                    )
                task = Task(
                    query=answer_query,
                    evidence=evidence,
                    documents=self._task_documents(index, evidence, resolution),
                    resolution=resolution,
                    history=tuple(history),
                    country=country,
                    region=region,
                    language=index.shop.language,
                    shop_name=index.shop.name,
                    operation_requested=operation is not None,
                )
                with timer.stage("generate"):
                    raw_draft, draft, removed, fallback = self._generate(task, timer)
            except AskEngineError as exc:  # a back end (embedding model, vector index) failed mid-request
                log.warning("ask failed before an answer was produced: %s", exc)
                unavailable, fallback = True, "unavailable"
            if draft is None:
                unavailable, fallback = True, "unavailable"
            if operation is not None and draft is not None and not remainder and draft.kind != "answer":
                # The request had no question in it; an explanation the shop doesn't have adds nothing.
                draft = None

        with timer.stage("compose"):
            response = self._compose(
                req=req,
                index=index,
                version=version,
                head=head,
                operation=operation,
                draft=draft,
                unavailable=unavailable,
                resolution=resolution,
                evidence=evidence,
                conversation_id=conversation_id,
                expires_at=expires_at,
                asker=asker,
            )
        trace = Trace(
            evidence=evidence,
            resolution=resolution,
            raw_draft=raw_draft,
            draft=draft,
            removed=removed,
            fallback=fallback,
            timings_ms=timer.timings,
        )
        if fallback is not None:
            with self._lock:
                self._fallbacks[fallback] = self._fallbacks.get(fallback, 0) + 1
        return response, trace

    # ----------------------------------------------------------------------------------------------- stages

    def _conversation(
        self, req: AskRequest, asker: str, head: list[Message]
    ) -> tuple[str | None, str | None, tuple[Turn, ...]]:
        """(conversation id, expires_at, earlier turns). An id that can't be continued starts a new conversation
        and says so; nothing of the old one is used."""
        if self.store is None:
            if req.conversation is not None:
                head.append(
                    Message(type="info", code="not_found", path="$.conversation.id", content=CONVERSATION_NOT_KEPT)
                )
            return None, None, ()
        # A store failure propagates as StoreError: callers fail closed (the server answers 503 + Retry-After)
        # rather than answer a follow-up without the history it refers to, or lose the turn it just answered.
        if req.conversation is not None:
            turns = self.store.history(req.conversation.id, asker)
            if turns is not None:
                return req.conversation.id, req.conversation.expires_at, tuple(turns)
            head.append(
                Message(type="info", code="not_found", path="$.conversation.id", content=CONVERSATION_NOT_FOUND)
            )
        conversation_id, expires_at = self.store.create(asker)
        return conversation_id, expires_at, ()

    @staticmethod
    def _retrieval_query(query: str, country: str | None) -> str:
        """The query as retrieval reads it: shipping and returns questions carry the shopper's country, so the
        section about that destination ranks first ("how long does delivery take?" from Germany)."""
        if not country or not query.strip():
            return query
        if not {"shipping_policy", "refund_policy"} & set(policy_intents(query)):
            return query
        from ask_engine.language import country_codes_in

        if country_codes_in(query, query=True):
            return query  # the question names its own destination; the context's country is not the subject
        name = _country_name(country)
        return f"{query} ({name})" if name else query

    @staticmethod
    def _task_documents(index: ShopIndex, evidence: Sequence[Evidence], resolution: Resolution) -> dict[str, Document]:
        ids = [*resolution.doc_ids, *(ev.passage.doc_id for ev in evidence)]
        return {d: sanitize_document(index.documents[d]) for d in dict.fromkeys(ids) if d in index.documents}

    def _generate(
        self, task: Task, timer: _Timer
    ) -> tuple[Draft | None, Draft | None, tuple[Sentence, ...], str | None]:
        """(raw draft, final draft, removed sentences, fallback reason). Final draft None: nothing could answer."""
        generator = self.generator
        is_fallback = generator is self._extractive
        # The extractive generator only quotes evidence; any other one (an LLM) is checked sentence by sentence.
        needs_grounding = getattr(generator, "name", "") != "extractive" and self.settings.grounding_guard
        try:
            raw = generator.generate(task)
        except Exception as exc:
            if is_fallback:
                log.error("extractive generator failed: %s", exc, exc_info=True)
                return None, None, (), "unavailable"
            # "deadline" / "breaker_open" / "generator_unavailable": the breaker logs its own opening once.
            reason = exc.reason if isinstance(exc, GeneratorUnavailable) else "generator_unavailable"
            if reason != "breaker_open":
                log.warning("generator %s failed, answering extractively: %s", getattr(generator, "name", "?"), exc)
            return None, self._extractive_draft(task), (), reason
        draft = strip_injected(raw)
        removed: tuple[Sentence, ...] = tuple(s for s in raw.sentences if s not in draft.sentences)
        if needs_grounding:
            with timer.stage("ground"):
                draft, dropped = ground(draft, task, self._faithfulness())
            removed += dropped
            if not answers_something(draft):
                return raw, self._extractive_draft(task), removed, "ungrounded"
        if not draft.sentences and not is_fallback:
            return raw, self._extractive_draft(task), removed, "empty_draft"
        return raw, draft, removed, None

    def _extractive_draft(self, task: Task) -> Draft | None:
        try:
            return strip_injected(self._extractive_generator().generate(task))
        except Exception as exc:
            log.error("extractive fallback failed: %s", exc, exc_info=True)
            return None

    def _compose(
        self,
        *,
        req: AskRequest,
        index: ShopIndex,
        version: str | None,
        head: list[Message],
        operation: Operation | None,
        draft: Draft | None,
        unavailable: bool,
        resolution: Resolution,
        evidence: Sequence[Evidence],
        conversation_id: str | None,
        expires_at: str | None,
        asker: str,
    ) -> AskResponse:
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
        links = _links(index, plain, sentences, used, resolution, evidence)

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
        if conversation_id is not None and self.store is not None:
            turn = Turn(query=req.query, answer=plain, doc_ids=tuple(touched_ids), created_at=_now())
            expires_at = self.store.append(conversation_id, asker, turn)
            conversation = Conversation(id=conversation_id, expires_at=expires_at)

        return AskResponse(
            ucp=ucp_envelope(version or self.settings.ucp_version),
            answer=Answer(plain=plain, markdown=markdown if markdown != plain else None),
            conversation=conversation,
            links=links or None,
            messages=messages or None,
        )


# ---------------------------------------------------------------------------------------------------- links


def _links(
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

    links: list[Link] = []
    seen: set[tuple[str, str]] = set()
    for _, _, doc in ranked:
        url = doc.url if doc.kind == "product" else _section_url(doc, sentences, by_number, evidence)
        if not url:
            continue
        key = (doc.link_type, url)
        if key in seen:
            continue
        seen.add(key)
        links.append(
            Link(
                type=doc.link_type,
                url=url,
                title=strip_tags(doc.title).strip() or None,
                id=doc.gid if doc.kind == "product" and doc.gid else None,
            )
        )
    return links


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


# ---------------------------------------------------------------------------------------------------- CLI


def _print_response(data: dict[str, Any], write: Callable[[str], Any]) -> None:
    write(data["answer"]["plain"])
    links = data.get("links") or []
    if links:
        write("")
        write("Links:")
        for link in links:
            title = link.get("title") or link["type"]
            write(f"  {title} — {link['url']}")
    messages = data.get("messages") or []
    if messages:
        write("")
        write("Messages:")
        for message in messages:
            code = f" {message['code']}" if message.get("code") else ""
            path = f" ({message['path']})" if message.get("path") else ""
            write(f"  {message['type']}{code}{path}: {message['content']}")


def cli_ask(args: argparse.Namespace) -> int:
    """`ask-engine ask --index DIR "question" [--id ID ...] [--context JSON] [--json] [--config F]`."""
    context: Any = None
    if getattr(args, "context", None):
        try:
            context = json.loads(args.context)
        except json.JSONDecodeError as exc:
            print(f"ask-engine: error: --context is not valid JSON: {exc}", file=sys.stderr)
            return 2
        if not isinstance(context, dict):
            print(
                'ask-engine: error: --context must be a JSON object, e.g. \'{"address_country": "NO"}\'',
                file=sys.stderr,
            )
            return 2
    request: dict[str, Any] = {"query": args.question}
    if getattr(args, "ids", None):
        request["ids"] = list(args.ids)
    if context is not None:
        request["context"] = context
    settings = Settings.load(getattr(args, "config", None))
    engine = Engine.open(args.index, settings)
    try:
        try:
            response = engine.ask(request, asker="cli")
        except InvalidInput as exc:
            for message in exc.messages():
                print(f"ask-engine: error: {message['content']}", file=sys.stderr)
            return 2
    finally:
        engine.close()
    data = response.to_json()
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _print_response(data, print)
    return 0


__all__ = ["Engine", "cli_ask"]
