"""UCP REST binding (POST /api/ucp/v1/ask) and the plain HTTP routes: discovery, OpenAPI, health, demo profile."""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ask_engine.config import Settings
from ask_engine.server import discovery
from ask_engine.server.service import Call, ProtocolError, Reply, ShopService, internal_error, invalid_input

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute
    from starlette.types import ASGIApp

logger = logging.getLogger("ask_engine.server")


_PROCESS_IDS: dict[int, str] = {}


def process_id() -> str:
    """This process's opaque id for `/healthz`: random, made once per process (a forked worker gets its own)."""
    pid = os.getpid()
    if pid not in _PROCESS_IDS:
        _PROCESS_IDS[pid] = uuid.uuid4().hex[:12]
    return _PROCESS_IDS[pid]


_REQUEST_ID = re.compile(r"^[\x21-\x7e]{1,200}$")
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}$")

Endpoint = Callable[["Request"], Awaitable["Response"]]


def request_id(headers: Any) -> str:
    """The caller's Request-Id when it is a sane header value, else a fresh one (every response carries one)."""
    value = headers.get("request-id")
    return value if isinstance(value, str) and _REQUEST_ID.match(value) else str(uuid.uuid4())


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    from starlette.responses import JSONResponse

    return JSONResponse(body, status_code=status, headers=headers)


def base_url(request: Request, settings: Settings, prefix: str = "") -> str:
    """scheme://host[:port][root path][prefix] of this server as the caller reached it (or the configured one)."""
    configured = settings.public_base_url
    if configured:
        return str(configured).rstrip("/") + prefix
    return str(request.base_url).rstrip("/") + prefix


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (invalid_input) past `limit` bytes without reading the rest."""
    from ask_engine.server.streams import read_capped

    too_big = invalid_input("$", f"The request body is larger than {limit} bytes.")
    return await read_capped(request.stream(), request.headers.get("content-length"), limit, too_big)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(body: bytes) -> Any:
    """Strict JSON (no NaN/Infinity, UTF-8); malformed input → 400 invalid_input at `$`."""
    if not body.strip():
        raise invalid_input("$", 'The request body is empty: send the ask object as JSON, e.g. {"query": "..."}.')
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise invalid_input("$", "The request body is not UTF-8 encoded JSON.") from None
    except json.JSONDecodeError as exc:
        raise invalid_input(
            "$", f"The request body is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."
        ) from None
    except (ValueError, RecursionError):
        raise invalid_input("$", "The request body is not valid JSON (or nests too deeply).") from None


def ask_endpoint(service: ShopService) -> Endpoint:
    """POST <prefix>/api/ucp/v1/ask: the HTTP request → a service Call; its Reply → the HTTP response."""
    from starlette.requests import ClientDisconnect

    from ask_engine.conversations import payload_hash
    from ask_engine.server.negotiation import parse_ucp_agent_header

    settings = service.settings

    async def ask(request: Request) -> Response:
        rid = request_id(request.headers)
        try:
            body = await read_body(request, settings.max_body_bytes)
        except ProtocolError as err:
            return _respond(Reply(settings.ucp_version, error=err), rid)
        except ClientDisconnect:
            disconnected = invalid_input("$", "The client disconnected.")
            return json_response(disconnected.body(settings.ucp_version), 400, {"Request-Id": rid})
        except Exception:
            logger.exception("REST ask failed unexpectedly (Request-Id %s)", rid)
            return _respond(Reply(settings.ucp_version, error=internal_error()), rid)
        call = Call(
            binding=f"REST ask (Request-Id {rid})",
            headers=request.headers,
            client_host=request.client.host if request.client else None,
            payload=lambda: parse_json(body),
            profile=lambda _: parse_ucp_agent_header(request.headers.get("ucp-agent")),
            key=lambda _: request.headers.get("idempotency-key"),
            key_name="Idempotency-Key",
            digest=lambda _: payload_hash(body),
        )
        return _respond(await service.handle(call), rid)

    return ask


def _respond(reply: Reply, rid: str) -> Response:
    err = reply.error
    if err is None:
        return json_response(reply.body, 200, {"Request-Id": rid})
    if err.is_result:
        return json_response(err.body(reply.version), 200, {"Request-Id": rid})
    return json_response(err.body(reply.version), err.http_status, {**err.http_headers(), "Request-Id": rid})


def _cached(body: dict[str, Any]) -> Response:
    return json_response(body, 200, {"Cache-Control": discovery.CACHE_CONTROL})


def shop_routes(
    prefix: str,
    service: ShopService,
    *,
    ucp_mcp: ASGIApp,
    shop_mcp: ASGIApp,
    keys: Sequence[dict[str, str]] = (),
) -> list[BaseRoute]:
    """The routes of one shop under `prefix` ("" for the root shop, "/shops/<name>" for every shop); `keys`: the
    public JWKs its profile publishes."""
    from starlette.routing import Route

    settings = service.settings
    current = settings.ucp_version
    older = [v for v in service.negotiator.business_versions() if v != current and _DATED.match(v)]

    def profile(version: str) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            base = base_url(request, settings, prefix)
            others = {v: f"{base}{discovery.PROFILE_PATH}/{v}" for v in older} if version == current else None
            return _cached(discovery.business_profile(base, version, older_versions=others, keys=keys))

        return endpoint

    async def openapi(request: Request) -> Response:
        return json_response(discovery.openapi_document(base_url(request, settings, prefix), current))

    # Stateless streamable HTTP: every exchange is one POST; there is no session to stream to (GET) or end (DELETE).
    mcp_methods = ["POST"]
    routes: list[BaseRoute] = [
        Route(f"{prefix}{discovery.REST_PATH}/ask", ask_endpoint(service), methods=["POST"]),
        Route(f"{prefix}{discovery.UCP_MCP_PATH}", ucp_mcp, methods=mcp_methods),
        Route(f"{prefix}{discovery.SHOP_MCP_PATH}", shop_mcp, methods=mcp_methods),
        Route(f"{prefix}{discovery.PROFILE_PATH}", profile(current), methods=["GET"]),
        Route(f"{prefix}{discovery.PROFILE_PATH}/{discovery.DRAFT}", profile(discovery.DRAFT), methods=["GET"]),
        Route(f"{prefix}/openapi.json", openapi, methods=["GET"]),
    ]
    routes += [Route(f"{prefix}{discovery.PROFILE_PATH}/{v}", profile(v), methods=["GET"]) for v in older]
    return routes


def _shop_health(service: ShopService) -> dict[str, Any]:
    """What /healthz says of one shop: which index version it answers from, how much is in it, and its store.

    Every replica announces its index version, so a rollout over replicas sharing one index folder can be watched
    until all name the same one. A store that does not answer shows as `"store": "unreachable"` while the status
    stays 200: the replica is up and answers 503 + Retry-After itself, which a balancer should pass on rather than
    drop every replica of a shared store at once. Blocking (the store's ping): call off the event loop.
    """
    engine = service.engine
    info: dict[str, Any] = {"name": service.name, "shop": engine.shop.name, "url": engine.shop.url}
    index = getattr(engine, "index", None)
    if index is not None:
        info["index_version"] = index.version
        info["documents"] = len(index.documents)
        info["passages"] = len(index.passages)
    store = service.store
    info["conversations"] = getattr(store, "backend", "custom") if store is not None else "off"
    ping = getattr(store, "ping", None)
    if callable(ping):
        info["store"] = "ok" if ping() else "unreachable"
    status = getattr(engine, "generator_status", None)
    if callable(status):
        info["generator"] = status()  # an LLM outage shows here (state breaker_open) while answers stay 200
    return info


def global_routes(services: Sequence[ShopService], settings: Settings) -> list[BaseRoute]:
    """Routes shared by every shop: /healthz and the demo platform profile."""
    from starlette.routing import Route

    from ask_engine import __version__

    async def healthz(request: Request) -> Response:
        import anyio

        shops = []
        ok = True
        for service in services:
            try:
                shops.append(await anyio.to_thread.run_sync(_shop_health, service))
            except Exception as exc:
                ok = False
                logger.error("health check of shop %s failed: %s", service.name, exc)
                shops.append({"name": service.name, "ok": False})
        # `process`: which worker answered, when `serve --workers N` runs several on one port (an opaque id, not the
        # operating system's process id, which a public endpoint has no reason to tell)
        body = {"status": "ok" if ok else "degraded", "version": __version__, "process": process_id(), "shops": shops}
        return json_response(body, 200 if ok else 503)

    async def demo_agent(request: Request) -> Response:
        versions = services[0].negotiator.business_versions()
        return _cached(discovery.demo_agent_profile(settings.ucp_version, versions))

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route(discovery.DEMO_AGENT_PATH, demo_agent, methods=["GET"]),
    ]
