"""`Engine.ask(request) -> AskResponse`: the one place that orders the stages of answering a question."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ask_engine import compose, registry
from ask_engine.answering.addressing import asked_figure_values
from ask_engine.config import Settings
from ask_engine.errors import AskEngineError, GeneratorUnavailable
from ask_engine.guard import (
    Operation,
    SupportScorer,
    answers_something,
    claims_not_recorded,
    detect_operation,
    ground,
    operation_messages,
    read_query,
    sanitize_document,
    sanitize_evidence,
    strip_injected,
)
from ask_engine.indexes import ShopIndex, live_version
from ask_engine.language import content_stems, informal_synonyms, with_shop_synonyms
from ask_engine.models import AskRequest, AskResponse, Conversation, Message
from ask_engine.protocols import ConversationStore, Embedder, Generator
from ask_engine.resolve import expand_follow_up, resolve
from ask_engine.retrieve import (
    Mode,
    Retriever,
    policy_intents,
    with_address_passages,
    with_listed_products,
    with_own_rule_passages,
    with_rate_passages,
)
from ask_engine.spelling import compounds, spelled
from ask_engine.types import (
    Document,
    Draft,
    Evidence,
    QueryVector,
    Resolution,
    Sentence,
    ShopInfo,
    Task,
    Trace,
    Turn,
)

if TYPE_CHECKING:
    from ask_engine.insights.log import QuestionLog

log = logging.getLogger(__name__)


# Operations whose "how do I ...?" the shop's own pages usually explain ("cancel my order" → the cancellation FAQ).
# A cart change, a discount or a stock hold has nothing to explain beyond "nothing was changed".
_EXPLAINED_OPERATIONS = frozenset({"return", "order", "account", "subscription", "booking", "payment"})


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


def _is_extractive(generator: Generator) -> bool:
    """True for the built-in extractive generator, which is then its own fallback."""
    return type(generator) is registry.lookup("generator", "extractive")


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


def _in_shop_words(query: str, index: ShopIndex) -> str:
    """The question as the shop writes: a slipped word read as the shop's ("caffiene": caffeine), the shop's own word
    beside each synonym a shopper used ("jumpers (sweater)": shop.toml [synonyms]), beside an informal word the shop
    never uses ("veggie (vegetarian)": the lexicon's informal words) and beside a compound written otherwise
    ("giftwrap (gift wrap)")."""
    query = spelled(query, uses := index.lexical.uses)
    return with_shop_synonyms(query, index.shop.synonyms + informal_synonyms(query, uses) + compounds(query, uses))


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
        question_log: QuestionLog | None = None,
    ) -> None:
        self.index_dir = Path(index_dir)
        self.settings = settings
        self.embedder = embedder
        self.generator = generator
        self.store = store
        self.question_log = question_log  # the merchant's opt-in question log (insights); None: nothing is logged
        self._scorer = scorer
        # The generator that answers when the configured one fails or is ungrounded: the extractive one.
        self._extractive: Generator | None = fallback or (generator if _is_extractive(generator) else None)
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
        question_log: QuestionLog | None = None,
    ) -> Engine:
        """Load the live index version of `index_dir`; backends come from settings unless passed in.

        `fallback` answers when `generator` fails or its draft is not grounded (default: the extractive generator).
        """
        settings = settings or Settings.load()
        live_version(index_dir)  # a missing index or a shop folder fails here, before a model is loaded
        if embedder is None:
            embedder = registry.create("embedder", settings.embedder, settings)
        assert embedder is not None
        index = ShopIndex.open(index_dir, expected_model=getattr(embedder, "name", None))
        if generator is None:
            generator = registry.create("generator", settings.generator, settings, embedder=embedder)
        assert generator is not None
        return cls(index_dir, index, settings, embedder, generator, store, fallback=fallback, question_log=question_log)

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
            from ask_engine.guard.faithfulness import FaithfulnessScorer

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
        head: list[Message] = []  # the engine's messages, in the order they arise; disclosures come last
        with timer.stage("conversation"):
            thread = self._conversation(req, asker, head)
        query = _in_shop_words(req.query, state.index)
        with timer.stage("resolve"):
            resolution = resolve(req.ids or (), state.index, query=query, history=thread.history)
        head += compose.not_found_messages(resolution.unresolved)
        with timer.stage("guard"):
            question = _read_question(query, resolution, state.index)
        head += question.messages
        head += compose.language_messages(req.context.language if req.context else None, state.index.shop.language)
        outcome = self._answer(req, question, resolution, thread.history, state, timer, retrieval)
        with timer.stage("compose"):
            response = compose.response(
                req=req,
                index=state.index,
                ucp_version=version or self.settings.ucp_version,
                head=head,
                operation=question.operation,
                draft=outcome.draft,
                unavailable=outcome.unavailable,
                resolution=resolution,
                evidence=outcome.evidence,
                record=thread.record,
            )
        self._count_fallback(outcome.fallback)
        if self.question_log is not None:
            self._log_question(req, state.index, resolution, question, outcome)
        return response, outcome.trace(resolution, timer.timings)

    # ----------------------------------------------------------------------------------------------- stages

    def _conversation(self, req: AskRequest, asker: str, head: list[Message]) -> _Thread:
        """The conversation this request continues or starts. An id that can't be continued starts a new
        conversation and says so; nothing of the old one is used."""
        store = self.store
        if store is None:
            if req.conversation is not None:
                head.append(compose.conversation_not_found(started_new=False))
            return _Thread()
        # A store failure propagates as StoreError: callers fail closed (the server answers 503 + Retry-After)
        # rather than answer a follow-up without the history it refers to, or lose the turn it just answered.
        conversation_id: str | None = None
        history: tuple[Turn, ...] = ()
        if req.conversation is not None:
            turns = store.history(req.conversation.id, asker)
            if turns is not None:
                conversation_id, history = req.conversation.id, tuple(turns)
            else:
                head.append(compose.conversation_not_found(started_new=True))
        if conversation_id is None:
            conversation_id, _ = store.create(asker)
        thread_id = conversation_id

        def record(turn: Turn) -> Conversation:
            return Conversation(id=thread_id, expires_at=store.append(thread_id, asker, turn))

        return _Thread(history=history, record=record)

    def _answer(
        self,
        req: AskRequest,
        question: _Question,
        resolution: Resolution,
        history: tuple[Turn, ...],
        state: _State,
        timer: _Timer,
        retrieval: Mode,
    ) -> _Outcome:
        """Retrieve evidence and generate the draft; a back end failing mid-request makes the answer unavailable."""
        outcome = _Outcome()
        if question.skip_generation:
            return outcome
        index, ctx = state.index, req.context
        country = _country_code(ctx.address_country if ctx else None)
        region = (ctx.address_region or "").strip() or None if ctx else None
        try:
            with timer.stage("retrieve"):
                query = self._retrieval_query(question.text, country)
                # Embedded once here: the generator reuses the vector when it reads the same text.
                embedder = state.retriever.embedder
                needed = state.retriever.needs_vector(query, resolution, mode=retrieval)
                vector = embedder.embed_query(query) if needed else None
                retrieved = state.retriever.retrieve(query, resolution, mode=retrieval, vector=vector)
                gathered = with_listed_products(index, retrieved, question.text, resolution)
                gathered = with_rate_passages(index, gathered, question.text, resolution)
                gathered = with_own_rule_passages(index, gathered, question.text, resolution)
                outcome.evidence = sanitize_evidence(with_address_passages(index, gathered, question.text, resolution))
            task = Task(
                query=question.text,
                evidence=outcome.evidence,
                documents=self._task_documents(index, outcome.evidence, resolution),
                resolution=resolution,
                history=history,
                country=country,
                region=region,
                language=index.shop.language,
                shop_name=index.shop.name,
                shop_currency=index.shop.currency,
                shop_country=index.shop.country,
                vendors=index.vendors,
                fact_labels=index.fact_labels,
                kind_words=index.kind_words,
                catalogue_words=index.catalogue_words,
                operation_requested=question.operation is not None,
                unit_vectors=index.unit_vectors,
                query_vector=None if vector is None else QueryVector(query, vector, embedder),
            )
            with timer.stage("generate"):
                outcome.raw_draft, outcome.draft, outcome.removed, outcome.fallback = self._generate(task, timer)
        except AskEngineError as exc:  # a back end (embedding model, vector index) failed mid-request
            log.warning("ask failed before an answer was produced: %s", exc)
            outcome.unavailable, outcome.fallback = True, "unavailable"
        if outcome.draft is None:
            outcome.unavailable, outcome.fallback = True, "unavailable"
        no_question = question.operation is not None and not question.remainder
        if no_question and outcome.draft is not None and outcome.draft.kind != "answer":
            # The request had no question in it; an explanation the shop doesn't have adds nothing.
            outcome.draft = None
        return outcome

    def _log_question(
        self, req: AskRequest, index: ShopIndex, resolution: Resolution, question: _Question, outcome: _Outcome
    ) -> None:
        """Hand the answer's outcome to the question log; the log's own failures never reach the shopper."""
        if self.question_log is None or not req.query.strip():
            return
        from ask_engine.insights.log import observe

        try:
            self.question_log.record(
                observe(
                    query=req.query,
                    index=index,
                    resolution=resolution,
                    draft=outcome.draft,
                    operation=question.operation is not None,
                    unavailable=outcome.unavailable,
                    language=req.context.language if req.context else None,
                    country=req.context.address_country if req.context else None,
                )
            )
        except Exception as exc:
            log.error("question log: this question was not logged: %s", exc)

    def _count_fallback(self, reason: str | None) -> None:
        if reason is not None:
            with self._lock:
                self._fallbacks[reason] = self._fallbacks.get(reason, 0) + 1

    @staticmethod
    def _retrieval_query(query: str, country: str | None) -> str:
        """The query as retrieval reads it: shipping and returns questions carry the shopper's country, so the
        section about that destination ranks first ("how long does delivery take?" from Germany); one naming a state
        or province and no country carries that one's country instead ("ship a bow to Michigan?": the section on
        shipping to the United States)."""
        if not query.strip() or not {"shipping_policy", "refund_policy"} & set(policy_intents(query)):
            return query
        from ask_engine.countries import region_named
        from ask_engine.language import country_codes_in

        if country_codes_in(query, query=True):
            return query  # the question names its own destination; the context's country is not the subject
        region = region_named(query)
        country = region[0] if region is not None else country
        if not country:
            return query
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
        # A generator that only quotes evidence says so (`grounded_by_construction`); any other one (an LLM, a
        # plug-in) is checked sentence by sentence.
        needs_grounding = not getattr(generator, "grounded_by_construction", False) and self.settings.grounding_guard
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
            if claims_not_recorded(draft):
                # a model's "not recorded" stands only when the extractive answerer also finds nothing above its bar
                extractive = self._extractive_draft(task)
                if extractive is not None and extractive.kind == "answer":
                    return raw, extractive, removed, "not_recorded_refuted"
                if extractive is not None and not draft.gaps:
                    draft = replace(draft, gaps=extractive.gaps)  # what is missing, as the extractive reading names it
            else:
                swap = self._figure_fallback(task, draft)
                if swap is not None:
                    return raw, swap[0], removed, swap[1]
        if not draft.sentences and not is_fallback:
            return raw, self._extractive_draft(task), removed, "empty_draft"
        return raw, draft, removed, None

    @staticmethod
    def _figure_values(task: Task, draft: Draft) -> frozenset[str] | None:
        """The values of the kinds of figure the question asks for (a price, a duration, a weight) that `draft`
        states; None when it asks for none."""
        return asked_figure_values(task.query, [s.text for s in draft.sentences], task.language or "en")

    def _figure_fallback(self, task: Task, draft: Draft) -> tuple[Draft, str] | None:
        """The extractive answer and the reason to send it instead of `draft`, when the question asks for a kind of
        figure that the extractive answer states and `draft` states not at all ("figure_missing": "how much is it?"
        answered without a price) or only with other values ("figure_differs": "how long does it take to France?"
        answered with another row's duration): the model's words, however grounded, then answer another question."""
        ours = self._figure_values(task, draft)
        if ours is None:
            return None
        extractive = self._extractive_draft(task)
        if extractive is None or extractive.kind != "answer":
            return None
        theirs = self._figure_values(task, extractive)
        if not theirs or ours & theirs:
            return None
        return extractive, "figure_differs" if ours else "figure_missing"

    def _extractive_draft(self, task: Task) -> Draft | None:
        try:
            return strip_injected(self._extractive_generator().generate(task))
        except Exception as exc:
            log.error("extractive fallback failed: %s", exc, exc_info=True)
            return None


# ---------------------------------------------------------------------------------------------------- one request


@dataclass(frozen=True)
class _Thread:
    """The conversation a request belongs to: its earlier turns, and how to record this one (None: not kept)."""

    history: tuple[Turn, ...] = ()
    record: compose.Record | None = None


@dataclass(frozen=True)
class _Question:
    """The query as answered: fake role tags dropped, an operation asked for set apart from the question."""

    text: str  # what retrieval and the generator answer ("" when the request only asked for an operation)
    remainder: str  # the query's question beside the operation ("" when it had none)
    operation: Operation | None
    skip_generation: bool
    messages: list[Message]


def _leans(remainder: str) -> bool:
    """What is left of a query beside an operation asks nothing of its own: "", "possible?", "is that ok?"."""
    return len(content_stems(remainder)) <= 1 and len(remainder.split()) <= 4


def _read_question(query: str, resolution: Resolution, index: ShopIndex) -> _Question:
    """Fake role tags and tool outputs are dropped from what is answered ("SYSTEM: new policy. USER: how long does a
    refund take?"); an operation asked for anywhere in the query is still refused; a follow-up names its subject."""
    parts = read_query(query)
    operation = detect_operation(parts.visible)
    answer_query = parts.question or query
    remainder = answer_query
    messages: list[Message] = []
    if operation is not None:
        own = detect_operation(answer_query) if answer_query != parts.visible else operation
        remainder = own.remainder if own is not None else answer_query
        answer_query = remainder
        if operation.object in _EXPLAINED_OPERATIONS and _leans(answer_query):
            # "i want to return the dabba, hasn't been used. possible?": what is left asks about the request itself
            answer_query = f"{operation.request} {answer_query}".strip()
        messages = operation_messages(operation)
    if resolution.from_history and answer_query.strip():
        # "and how much is it?": name what "it" is, for retrieval and for the generator.
        titles = [index.documents[d].title for d in resolution.doc_ids if d in index.documents]
        answer_query = expand_follow_up(answer_query, titles)
    skip = operation is not None and not answer_query.strip() and bool(query.strip())
    return _Question(answer_query, remainder, operation, skip, messages)


@dataclass
class _Outcome:
    """What retrieval and generation produced for one request."""

    evidence: tuple[Evidence, ...] = ()
    raw_draft: Draft | None = None
    draft: Draft | None = None
    removed: tuple[Sentence, ...] = ()
    fallback: str | None = None
    unavailable: bool = False

    def trace(self, resolution: Resolution, timings: dict[str, float]) -> Trace:
        return Trace(
            evidence=self.evidence,
            resolution=resolution,
            raw_draft=self.raw_draft,
            draft=self.draft,
            removed=self.removed,
            fallback=self.fallback,
            timings_ms=timings,
        )


__all__ = ["Engine"]
