"""`ShopService.handle(call)`: the protocol's steps for one ask, once, whatever the binding.

Every binding (UCP REST, UCP MCP, the shop's MCP) reads a `Call` off its wire and hands it here; the steps run in
the protocol's order: authenticate → rate limit → negotiate → validate → idempotency → answer (in a worker thread)
→ record. Transport-level failures are `ProtocolError`s; each binding maps them to its own wire form (HTTP status /
JSON-RPC error), from one table.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from ask_engine.config import Settings
from ask_engine.errors import InvalidInput, InvalidInputItem, ProtocolError, StoreError
from ask_engine.models import AskRequest
from ask_engine.server.discovery import IDEMPOTENCY_KEY

if TYPE_CHECKING:
    import anyio

    from ask_engine.engine import Engine
    from ask_engine.protocols import IdempotencyStore
    from ask_engine.server.auth import Limiter
    from ask_engine.server.negotiation import Negotiator

logger = logging.getLogger("ask_engine.server")

T = TypeVar("T")

IDEMPOTENCY_WAIT_S = 30.0  # how long a retry waits for the identical request still in flight
QUEUE_WAIT_S = 10.0  # how long a request may wait for a free engine worker before 503
QUEUE_FACTOR = 8  # at most max_concurrency * QUEUE_FACTOR requests wait; more are refused at once
OVERLOAD_RETRY_AFTER_S = 2
STORE_RETRY_AFTER_S = 5
_IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY)
_SURROGATE = re.compile("[\ud800-\udfff]")


# --- transport-level failures ----------------------------------------------------------------------


NEGOTIATION_CODES = frozenset(
    {
        "invalid_profile_url",
        "profile_unreachable",
        "profile_malformed",
        "version_unsupported",
        "capabilities_incompatible",
    }
)


def invalid_input(path: str, content: str) -> ProtocolError:
    return ProtocolError("invalid_input", content, messages=InvalidInput([InvalidInputItem(path, content)]).messages())


def internal_error() -> ProtocolError:
    return ProtocolError("internal_error", "The server hit an unexpected error; nothing was changed. Please retry.")


# --- one call, as a binding read it -----------------------------------------------------------------


def _same(payload: Any) -> Any:
    return payload


@dataclass(frozen=True)
class Call:
    """One ask_business call as a binding read it off its wire. Each part is read when its step comes, so a part
    that can't be read (bad JSON, a malformed UCP-Agent header) fails at the step the protocol puts it."""

    binding: str  # names the binding in logs, e.g. "REST ask (Request-Id …)"
    headers: Mapping[str, str] | None  # None: the trusted local client (stdio): no authentication, no rate limit
    client_host: str | None = None
    payload: Callable[[], Any] = dict  # the request as the binding decodes it (REST: the JSON body)
    profile: Callable[[Any], str | None] | None = None  # the platform's profile URL; None: no negotiation
    ask: Callable[[Any], Any] = _same  # the ask object inside the payload
    key: Callable[[Any], Any] | None = None  # the idempotency key as sent (None: this binding takes none)
    key_name: str = "Idempotency-Key"  # where the key was sent, for the invalid_input message
    digest: Callable[[Any], str] | None = None  # the payload hash an idempotency key is bound to


@dataclass(frozen=True)
class Reply:
    """The outcome of a call: the response body, or the ProtocolError to send, with the version to send it in."""

    version: str
    body: dict[str, Any] | None = None
    error: ProtocolError | None = None


# --- the shared pipeline ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Caller:
    """Who is asking: `asker` owns conversations and idempotency keys; `bucket` is the rate-limit key."""

    asker: str
    bucket: str | None  # None: not rate limited (the local stdio client)


LOCAL_CALLER = Caller(asker="local", bucket=None)


class ShopService:
    """One served shop: the transport-neutral steps every binding runs, in the protocol's order."""

    def __init__(
        self,
        name: str,
        engine: Engine,
        settings: Settings,
        *,
        store: IdempotencyStore | None,
        negotiator: Negotiator,
        rate_limiter: Limiter,
        workers: anyio.CapacityLimiter,
        threads: anyio.CapacityLimiter,
        waiters: anyio.CapacityLimiter,
    ) -> None:
        self.name = name
        self.engine = engine
        self.settings = settings
        self.store = store
        self.negotiator = negotiator
        self._rate_limiter = rate_limiter
        self._workers = workers  # requests allowed in the engine at once (admission control)
        self._threads = threads  # the worker threads they run on, apart from anyio's shared default pool
        # Retries blocked on an identical request in flight wait in their own threads, so they can never take
        # the threads the first request needs to finish and record its answer.
        self._waiters = waiters

    @property
    def continue_url(self) -> str | None:
        """The storefront: the spec's fallback hand-off URL when negotiation fails."""
        url = getattr(getattr(self.engine, "shop", None), "url", None)
        return url if isinstance(url, str) and url.startswith(("https://", "http://")) else None

    # the steps, in the protocol's order -------------------------------------------------------------------

    async def handle(self, call: Call, *, caller: Caller | None = None) -> Reply:
        """Authenticate, rate limit, negotiate, validate, then answer (idempotently when a key is sent).

        `caller`: the asker, already authenticated and rate limited by the binding (A2A does both over HTTP,
        before the SDK reads the message)."""
        from ask_engine.server.negotiation import NegotiationError

        version = self.settings.ucp_version
        try:
            try:
                if caller is None:
                    caller = LOCAL_CALLER if call.headers is None else self.authenticate(call.headers, call.client_host)
                    await self.check_rate(caller)
                payload = call.payload()
                if call.profile is not None:
                    version = await self.negotiate(call.profile(payload))
                request = self.parse(call.ask(payload))
                key = self.check_idempotency_key(call.key(payload), call.key_name) if call.key else None
                digest = call.digest(payload) if key and call.digest else None
                idempotency = (key, digest) if key and digest else None
                body = await self.answer(request, caller=caller, version=version, idempotency=idempotency)
            except NegotiationError as exc:
                raise self.negotiation_error(exc) from None
        except ProtocolError as err:
            return Reply(version, error=err)
        except Exception:
            logger.exception("%s failed unexpectedly in shop %s", call.binding, self.name)
            return Reply(version, error=internal_error())
        return Reply(version, body=body)

    # 1. authentication --------------------------------------------------------------------------------

    def authenticate(self, headers: Mapping[str, str], client_host: str | None) -> Caller:
        from ask_engine.server.auth import AuthError, authenticate

        try:
            agent = authenticate(headers, self.settings)
        except AuthError as exc:
            challenge = getattr(exc, "www_authenticate", None)
            raise ProtocolError(
                "unauthorized",
                str(exc) or "A valid agent key is required.",
                headers={"WWW-Authenticate": challenge} if challenge else None,
            ) from None
        if not self.settings.agent_keys:
            # Auth disabled (demo): one shared identity, but rate limits still apply per client address.
            return Caller(asker=agent.key_id, bucket=f"{agent.key_id}@{client_host or 'unknown'}")
        return Caller(asker=agent.key_id, bucket=agent.key_id)

    # 2. rate limit ------------------------------------------------------------------------------------

    async def check_rate(self, caller: Caller) -> None:
        if caller.bucket is None:
            return
        try:
            refused = await self._rate_limiter.admit(caller.bucket)
        except StoreError as exc:  # limits shared through a store that is down: fail closed, never unlimited
            raise self._store_down(exc) from None
        if refused is not None:
            wait, span = refused
            seconds = max(1, int(-(-wait // 1)))  # whole seconds, rounded up
            raise ProtocolError("rate_limited", rate_limit_message(self.settings, span, seconds), retry_after=seconds)

    # 3. negotiation -----------------------------------------------------------------------------------

    async def negotiate(self, profile_url: str | None) -> str:
        """The protocol version to answer with; raises ProtocolError with the negotiation codes."""
        from ask_engine.server.negotiation import NegotiationError

        try:
            negotiated = await self.negotiator.negotiate(profile_url)
        except NegotiationError as exc:
            raise self.negotiation_error(exc) from None
        return negotiated.version

    def negotiation_error(self, exc: Any) -> ProtocolError:
        code = exc.code if exc.code in NEGOTIATION_CODES else "invalid_profile_url"
        return ProtocolError(
            code,
            str(getattr(exc, "content", exc)),
            version=getattr(exc, "version", None),
            continue_url=self.continue_url,
        )

    # 4. validation ------------------------------------------------------------------------------------

    def parse(self, data: Any) -> AskRequest:
        """The validated ask object; raises ProtocolError(invalid_input) with one message per problem."""
        surrogates = unpaired_surrogates(data)
        if surrogates:
            raise ProtocolError("invalid_input", surrogates[0].content, messages=InvalidInput(surrogates).messages())
        try:
            return AskRequest.parse(data)
        except InvalidInput as exc:
            raise ProtocolError("invalid_input", str(exc), messages=exc.messages()) from None

    @staticmethod
    def check_idempotency_key(key: Any, where: str) -> str | None:
        if key is None:
            return None
        if not isinstance(key, str) or not _IDEMPOTENCY_KEY.fullmatch(key):
            content = f"{where} must be 1 to 255 visible ASCII characters."
            # No `path`: the key is transport metadata, not part of the ask object the paths point into.
            message = {"type": "error", "code": "invalid_input", "content": content, "severity": "requires_buyer_input"}
            raise ProtocolError("invalid_input", content, messages=[message])
        return key

    # 5-7. idempotency, answer, record -----------------------------------------------------------------

    async def answer(
        self,
        request: AskRequest,
        *,
        caller: Caller,
        version: str,
        idempotency: tuple[str, str] | None = None,
    ) -> dict[str, Any]:
        """The response JSON; with `idempotency` = (key, payload hash), replayed or recorded exactly once."""
        if idempotency is None:
            return await self._ask(request, caller, version)
        if self.store is None:
            raise ProtocolError(
                "unavailable", "Idempotency keys need the conversation store.", retry_after=STORE_RETRY_AFTER_S
            )
        store = self.store
        key, digest = idempotency
        try:
            begin = partial(store.begin, key, caller.asker, digest, wait_s=IDEMPOTENCY_WAIT_S)
            begun = await self._store_call(begin, limiter=self._waiters)
        except StoreError as exc:
            raise self._store_down(exc) from None
        if begun.state == "conflict":
            raise ProtocolError(
                "idempotency_conflict",
                "This Idempotency-Key was already used with a different request; use a new key for a new request.",
            )
        if begun.state == "replay" and begun.response is not None:
            return begun.response
        try:
            body = await self._ask(request, caller, version)
        except BaseException:
            import anyio

            # Release the key even when the request was cancelled, so a retry can run at once.
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self._store_call(partial(store.abandon, key, caller.asker))
            raise
        try:
            await self._store_call(partial(store.finish, key, caller.asker, body, 200))
        except StoreError as exc:
            raise self._store_down(exc) from None
        return body

    async def run_in_worker(self, fn: Callable[[], T]) -> T:
        """`fn` in an engine worker thread, under admission control: refused (503) when too many already wait."""
        import anyio

        stats = self._workers.statistics()
        if stats.tasks_waiting >= self._workers.total_tokens * QUEUE_FACTOR:
            raise self._overloaded()
        with anyio.move_on_after(QUEUE_WAIT_S) as waited:
            await self._workers.acquire()
        if waited.cancelled_caught:
            raise self._overloaded()
        try:
            return await anyio.to_thread.run_sync(fn, limiter=self._threads)
        finally:
            self._workers.release()

    async def _ask(self, request: AskRequest, caller: Caller, version: str) -> dict[str, Any]:
        try:
            call = partial(self.engine.ask, request, asker=caller.asker, version=version)
            response = await self.run_in_worker(call)
        except InvalidInput as exc:
            raise ProtocolError("invalid_input", str(exc), messages=exc.messages()) from None
        except StoreError as exc:
            raise self._store_down(exc) from None
        except ProtocolError:
            raise
        except Exception as exc:
            logger.exception("ask failed unexpectedly in shop %s", self.name)
            raise internal_error() from exc
        body: dict[str, Any] = response.to_json() if hasattr(response, "to_json") else dict(response)
        return body

    async def _store_call(self, fn: Callable[[], T], *, limiter: anyio.CapacityLimiter | None = None) -> T:
        import anyio

        # Store calls block (SQLite, Redis; and `begin` may wait on an identical request in flight): off the loop.
        return await anyio.to_thread.run_sync(fn, limiter=limiter)

    def _overloaded(self) -> ProtocolError:
        return ProtocolError(
            "unavailable",
            "The server is busy answering other questions; please retry shortly.",
            retry_after=OVERLOAD_RETRY_AFTER_S,
        )

    def _store_down(self, exc: StoreError) -> ProtocolError:
        logger.error("conversation store failed in shop %s: %s", self.name, exc)
        return ProtocolError(
            "unavailable",
            "The conversation store is unavailable; nothing was recorded. Please retry shortly.",
            retry_after=STORE_RETRY_AFTER_S,
        )


def rate_limit_message(settings: Settings, span: float, seconds: int) -> str:
    """Names the limit that refused the request, the setting behind it, and what it is counted per."""
    if span <= 60:
        setting, limit, window = "rate_limit_per_minute", settings.rate_limit_per_minute, "minute"
    else:
        setting, limit, window = "rate_limit_per_hour", settings.rate_limit_per_hour, "hour"
    per = "per agent key" if settings.agent_keys else "per client address, as auth is off"
    return f"Too many requests: at most {limit} a {window} {per} ({setting}); retry after {seconds} s."


def unpaired_surrogates(data: Any, limit: int = 10) -> list[InvalidInputItem]:
    """Strings (keys or values) holding lone UTF-16 surrogates: not Unicode text, so refused at the edge."""
    found: list[InvalidInputItem] = []
    stack: list[tuple[str, Any]] = [("$", data)]
    while stack and len(found) < limit:
        path, value = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                found.append(InvalidInputItem(path, f"{path} holds an unpaired UTF-16 surrogate (not Unicode text)."))
        elif isinstance(value, dict):
            for key, item in value.items():
                child = f"{path}.{key}" if isinstance(key, str) and key.isidentifier() else f"{path}[{key!r}]"
                if isinstance(key, str) and _SURROGATE.search(key):
                    found.append(InvalidInputItem(path, f"{path} has a key with an unpaired UTF-16 surrogate."))
                    continue
                stack.append((child, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(value))
    return found
