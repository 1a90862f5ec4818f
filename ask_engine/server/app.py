"""The ASGI app, the composition root: opens each shop's engine and store, builds its `ShopService`, and mounts the
bindings (UCP REST, UCP MCP, shop MCP, discovery and health) that translate their wire to the service and back.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ask_engine.config import Settings
from ask_engine.errors import AskEngineError
from ask_engine.server.service import ShopService

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from ask_engine.conversations import SqliteStore
    from ask_engine.engine import Engine
    from ask_engine.insights.log import QuestionLog
    from ask_engine.redis_store import RedisStore
    from ask_engine.server.auth import Limiter

    Store = SqliteStore | RedisStore

logger = logging.getLogger("ask_engine.server")

IDEMPOTENCY_WAITERS = 256  # threads that may wait at once on an in-flight identical request
SHOPS_PREFIX = "/shops"
RELOAD_EVERY_S = 30.0  # how often a served index is checked for a newer version (written by `ask-engine index`)
_SHOP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


# --- opening shops and building the app -----------------------------------------------------------


@dataclass
class OpenedShop:
    name: str
    engine: Engine
    store: Store | None
    question_log: QuestionLog | None = None  # opened here (closed with the shop); None: off, or not ours


def shop_name(index_dir: str | Path) -> str:
    name = Path(index_dir).resolve().name
    if not _SHOP_NAME.match(name):
        raise AskEngineError(f"{index_dir}: the index folder name must be a URL-safe shop name (letters, digits, ._-)")
    return name


def _shop_file(setting: str | None, index_dir: str | Path, name: str, suffix: str, *, several: bool) -> Path:
    """`setting` (suffixed with the shop name when several shops share it), else <index>/../<name><suffix>."""
    if setting:
        path = Path(setting)
        return path.with_name(f"{path.stem}.{name}{path.suffix or '.sqlite3'}") if several else path
    return Path(index_dir).resolve().parent / f"{name}{suffix}"


def store_path_for(settings: Settings, index_dir: str | Path, name: str, *, several: bool) -> Path:
    """settings.store_path (suffixed with the shop name when several shops share the setting), else
    <index>/../<name>.sqlite3."""
    return _shop_file(settings.store_path, index_dir, name, ".sqlite3", several=several)


def question_log_path_for(settings: Settings, index_dir: str | Path, name: str, *, several: bool) -> Path:
    """settings.question_log_path (suffixed likewise), else <index>/../<name>.questions.sqlite3, beside the store."""
    return _shop_file(settings.question_log_path, index_dir, name, ".questions.sqlite3", several=several)


def open_question_log(settings: Settings, path: str | Path) -> QuestionLog:
    """The question log at `path`, scrubbing every secret the settings hold from the queries it keeps."""
    from ask_engine.insights.log import QuestionLog

    secrets = [*settings.agent_keys, settings.admin_key or "", settings.llm_api_key]
    return QuestionLog(path, retention_days=settings.question_log_retention_days, secrets=secrets)


def open_store(settings: Settings, index_dir: str | Path, name: str, *, several: bool) -> Store:
    """The shop's conversation and idempotency store: Redis when `store_url` is set (keys under
    `<store_prefix>:<shop name>`, shared by every replica), else the SQLite file of `store_path_for`."""
    if settings.store_url:
        from ask_engine.redis_store import RedisStore

        store = RedisStore(
            settings.store_url,
            prefix=f"{settings.store_prefix}:{name}",
            conversation_ttl_s=settings.conversation_ttl_s,
            idempotency_ttl_s=settings.idempotency_ttl_s,
        )
        if not store.ping():  # start anyway: requests fail closed (503) until Redis answers, then just work
            logger.warning("the store at %s does not answer; asks get 503 until it does", settings.redacted_store_url)
        return store
    from ask_engine.conversations import SqliteStore

    return SqliteStore(
        store_path_for(settings, index_dir, name, several=several),
        conversation_ttl_s=settings.conversation_ttl_s,
        idempotency_ttl_s=settings.idempotency_ttl_s,
    )


def open_shops(index_dirs: Sequence[str | Path], settings: Settings, *, embedder: Any = None) -> list[OpenedShop]:
    """Open an Engine (with its conversation store) for each index folder; names must be unique."""
    from ask_engine.engine import Engine

    names = [shop_name(d) for d in index_dirs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise AskEngineError(f"several indexes share the folder name {', '.join(duplicates)}: rename one")
    opened: list[OpenedShop] = []
    try:
        for index_dir, name in zip(index_dirs, names, strict=True):
            several = len(names) > 1
            store = open_store(settings, index_dir, name, several=several)
            question_log = None
            try:
                if settings.question_log:
                    path = question_log_path_for(settings, index_dir, name, several=several)
                    question_log = open_question_log(settings, path)
                engine = Engine.open(index_dir, settings, embedder=embedder, store=store, question_log=question_log)
            except BaseException:
                store.close()
                if question_log is not None:
                    question_log.close()
                raise
            opened.append(OpenedShop(name, engine, store, question_log))
        # Every index opened (its errors came first): now load each model once, before the first request.
        for shop in opened:
            load = getattr(shop.engine.embedder, "load", None)
            if callable(load):
                load()
    except BaseException:
        close_shops(opened)
        raise
    return opened


def close_shops(shops: Sequence[OpenedShop]) -> None:
    for shop in shops:
        with contextlib.suppress(Exception):
            shop.engine.close()
        if shop.store is not None:
            with contextlib.suppress(Exception):
                shop.store.close()
        if shop.question_log is not None:
            with contextlib.suppress(Exception):
                shop.question_log.close()  # writes what is still queued


def rate_limiter_for(settings: Settings) -> Limiter:
    """Rate limits in Redis (exact across replicas) when `store_url` is set, else in this process's memory."""
    if settings.store_url:
        from ask_engine.server.redis_limits import RedisRateLimiter

        return RedisRateLimiter(
            settings.store_url,
            settings.rate_limit_per_minute,
            settings.rate_limit_per_hour,
            prefix=f"{settings.store_prefix}:rate",
        )
    from ask_engine.server.auth import RateLimiter

    return RateLimiter(settings.rate_limit_per_minute, settings.rate_limit_per_hour)


def build_services(
    shops: Sequence[OpenedShop], settings: Settings, *, rate_limiter: Limiter | None = None
) -> list[ShopService]:
    """One ShopService per shop; they share the negotiator (profile cache), rate limits and engine workers."""
    import anyio

    from ask_engine.server.negotiation import Negotiator

    negotiator = Negotiator(settings)
    rate_limiter = rate_limiter or rate_limiter_for(settings)
    workers = anyio.CapacityLimiter(settings.max_concurrency)
    threads = anyio.CapacityLimiter(settings.max_concurrency)
    waiters = anyio.CapacityLimiter(IDEMPOTENCY_WAITERS)
    return [
        ShopService(
            shop.name,
            shop.engine,
            settings,
            store=shop.store,
            negotiator=negotiator,
            rate_limiter=rate_limiter,
            workers=workers,
            threads=threads,
            waiters=waiters,
        )
        for shop in shops
    ]


async def _reload_forever(engines: Sequence[Any]) -> None:
    """Pick up index versions written while serving; requests in flight finish on the version they began with."""
    import anyio

    unique = list({id(e): e for e in engines if callable(getattr(e, "reload", None))}.values())
    while True:
        await anyio.sleep(RELOAD_EVERY_S)
        for engine in unique:
            try:
                if await anyio.to_thread.run_sync(engine.reload):
                    logger.info("now answering from index version %s", getattr(engine, "version", "?"))
            except Exception as exc:  # a half-written or broken index must not take the server down
                logger.error("index reload failed; still answering from the loaded version: %s", exc)


def create_app(
    index_dirs: Sequence[str | Path] | None = None,
    settings: Settings | None = None,
    *,
    engines: Mapping[str, Engine] | None = None,
    stores: Mapping[str, Store | None] | None = None,
    embedder: Any = None,
) -> Starlette:
    """The ASGI app serving every shop under /shops/<name>/..., and the first one also at the root paths.

    Give `index_dirs` (engines and stores are opened here, and closed on shutdown; `embedder`: a loaded one to
    share, else one from settings) or ready `engines` keyed by shop name, with `stores` (idempotency stores by shop
    name; default: the engine's own `store`, if any).
    """
    from starlette.applications import Starlette
    from starlette.middleware import Middleware

    from ask_engine.server import a2a_binding, catalog_routes, rest
    from ask_engine.server.admin import admin_routes
    from ask_engine.server.mcp_binding import McpEndpoint, build_shop_server, build_ucp_server
    from ask_engine.server.signing import Signer, SigningMiddleware, load_keys

    settings = settings or Settings.load()
    keys = load_keys(settings) if settings.sign_responses else None  # a bad key fails before any index opens
    jwks = keys.jwks() if keys else []
    owned: list[OpenedShop] = []
    if engines is None:
        if not index_dirs:
            raise AskEngineError("create_app needs index_dirs or engines")
        owned = open_shops(index_dirs, settings, embedder=embedder)
        shops = list(owned)
    else:
        shops = [
            OpenedShop(name, engine, (stores or {}).get(name, getattr(engine, "store", None)))
            for name, engine in engines.items()
        ]
    if not shops:
        raise AskEngineError("create_app needs at least one shop")
    for shop in shops:
        if not _SHOP_NAME.match(shop.name):
            raise AskEngineError(f"{shop.name!r} is not a URL-safe shop name (letters, digits, ._-)")

    rate_limiter = rate_limiter_for(settings)
    services = build_services(shops, settings, rate_limiter=rate_limiter)

    routes: list[Any] = []
    endpoints: list[McpEndpoint] = []
    mounts = [("", services[0])] + [(f"{SHOPS_PREFIX}/{s.name}", s) for s in services]
    catalogs = {id(s): catalog_routes.CatalogService(s) for s in services}
    for prefix, service in mounts:
        catalog = catalogs[id(service)]
        ucp_mcp = McpEndpoint(
            build_ucp_server(service, catalog_routes.ucp_tools(catalog)), settings, ask_argument="ask"
        )
        shop_mcp = McpEndpoint(build_shop_server(service, extra_tools=catalog_routes.shop_tools(catalog)), settings)
        endpoints += [ucp_mcp, shop_mcp]
        routes += rest.shop_routes(prefix, service, ucp_mcp=ucp_mcp, shop_mcp=shop_mcp, keys=jwks)
        routes += a2a_binding.routes(prefix, service, lambda request, at: rest.base_url(request, settings, at))
        routes += catalog_routes.rest_routes(prefix, catalog)
        routes += admin_routes(prefix, service)
    routes += rest.global_routes(services, settings)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        import anyio

        async with contextlib.AsyncExitStack() as stack:
            for endpoint in endpoints:
                await stack.enter_async_context(endpoint.run())
            try:
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(_reload_forever, [s.engine for s in shops])
                    yield
                    tasks.cancel_scope.cancel()
            finally:
                close_shops(owned)
                aclose = getattr(rate_limiter, "aclose", None)
                if aclose is not None:
                    with contextlib.suppress(Exception):
                        await aclose()

    # Signing sits inside Starlette's error middleware but outside its exception handlers: 404s, 405s and the
    # bindings' own errors are signed like answers (and an unhandled error becomes a signed 500 there).
    signing = (
        [] if keys is None else [Middleware(SigningMiddleware, signer=Signer(keys), base=settings.public_base_url)]
    )
    app = Starlette(routes=routes, lifespan=lifespan, middleware=signing)
    # Exact paths only: a trailing-slash variant is a 404, never a redirect (discovery must not redirect).
    app.router.redirect_slashes = False
    app.state.services = services
    app.state.settings = settings
    app.state.signing_keys = keys
    return app
