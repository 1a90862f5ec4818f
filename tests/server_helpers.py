"""Shared helpers for the server tests: real uvicorn servers on free loopback ports, test platform profiles,
engine seams, MCP clients and protocol-shape checks."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

from ask_engine.models import CAPABILITY, schema_errors

JSONRPC_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class RunningServer:
    base_url: str
    port: int
    app: Any


@contextlib.contextmanager
def serve(app: Any, *, health_path: str | None = "/healthz", timeout_s: float = 60.0) -> Iterator[RunningServer]:
    """Run `app` with uvicorn on a free loopback port in a background thread; stop it on exit."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"uvicorn on port {port} did not start")
        time.sleep(0.02)
    if health_path is not None:
        response = httpx.get(base + health_path, timeout=10)
        response.raise_for_status()
    try:
        yield RunningServer(base, port, app)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


# --- platform profiles served by a tiny second server ------------------------------------------------


def platform_profile(version: str, ask_versions: list[str]) -> dict[str, Any]:
    """A platform profile at protocol `version` declaring dev.ucp.common.ask at `ask_versions`."""
    return {
        "ucp": {
            "version": version,
            "services": {},
            "capabilities": {
                CAPABILITY: [
                    {
                        "version": v,
                        "spec": f"https://ucp.dev/{v}/specification/common/ask",
                        "schema": f"https://ucp.dev/{v}/schemas/common/ask.json",
                    }
                    for v in ask_versions
                ]
            },
            "payment_handlers": {},
        }
    }


def profile_app(version: str) -> Any:
    """Platform profiles for every negotiation outcome, at /good.json, /old-version.json, /no-ask.json,
    /not-json, /missing (404) and /redirect (302)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
    from starlette.routing import Route

    def fixed(response: Response) -> Any:
        async def endpoint(request: Request) -> Response:
            return response

        return endpoint

    return Starlette(
        routes=[
            Route("/good.json", fixed(JSONResponse(platform_profile(version, [version])))),
            Route("/old-version.json", fixed(JSONResponse(platform_profile("2020-01-01", ["2020-01-01"])))),
            Route("/no-ask.json", fixed(JSONResponse(platform_profile(version, ["2020-01-01"])))),
            Route("/not-json", fixed(PlainTextResponse("<html>not a profile</html>"))),
            Route("/missing", fixed(PlainTextResponse("gone", status_code=404))),
            Route("/redirect", fixed(RedirectResponse("/good.json", status_code=302))),
            Route("/healthz", fixed(PlainTextResponse("ok"))),
        ]
    )


# --- engine seams ------------------------------------------------------------------------------------


class FailingEngine:
    """A real engine whose `ask` raises `error`: the seam for the store-down and unexpected-error rows."""

    def __init__(self, engine: Any, error: BaseException) -> None:
        self._engine = engine
        self._error = error
        self.shop = engine.shop
        self.store = None

    def ask(self, request: Any, *, asker: str = "anonymous", version: str | None = None) -> Any:
        raise self._error

    def close(self) -> None:  # the real engine belongs to another fixture
        pass


class BlockingEngine:
    """Delegates to a real engine but holds every `ask` until `release` is set (admission-control tests)."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.shop = engine.shop
        self.store = None
        self.release = threading.Event()

    def ask(self, request: Any, *, asker: str = "anonymous", version: str | None = None) -> Any:
        self.release.wait(timeout=60)
        return self._engine.ask(request, asker=asker, version=version)

    def close(self) -> None:
        pass


# --- MCP ---------------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def mcp_client(url: str, headers: Mapping[str, str] | None = None) -> AsyncIterator[Any]:
    """The official MCP client over streamable HTTP, sending `headers` (agent keys) on every request."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers=dict(headers or {}), timeout=httpx2.Timeout(120.0)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def tools_call(name: str, arguments: Any, request_id: int = 1) -> dict[str, Any]:
    """A raw JSON-RPC tools/call message (for the cases a client library would refuse to send)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


# --- protocol shapes ---------------------------------------------------------------------------------


def assert_ask_response(body: Any) -> dict[str, Any]:
    assert isinstance(body, dict), body
    errors = schema_errors("ask_response", body)
    assert errors == [], errors
    assert body["answer"]["plain"].strip()
    return body


def assert_error_response(body: Any, code: str) -> dict[str, Any]:
    """An error_response (validated against the spec) whose first message has `code`."""
    assert isinstance(body, dict), body
    errors = schema_errors("error_response", body)
    assert errors == [], errors
    assert body["ucp"]["status"] == "error"
    assert body["messages"][0]["code"] == code, body
    return body


def assert_no_leak(text: str, *secrets: str) -> None:
    """Nothing of the server's internals in a response: no traceback, no exception text."""
    assert "Traceback" not in text
    assert 'File "' not in text
    for secret in secrets:
        assert secret not in text


def text_json(result: Any) -> Any:
    """The JSON held by the single text content item of an MCP tool result."""
    assert len(result.content) == 1
    assert result.content[0].type == "text"
    return json.loads(result.content[0].text)


# --- the servers a test module talks to --------------------------------------------------------------

AGENT_KEYS = {"key-a": "Agent A", "key-b": "Agent B"}
KEY_A = {"Authorization": "Bearer key-a"}
KEY_B = {"X-API-Key": "key-b"}
REAL = "fjord-fell"  # the sample shop, with a working conversation store
BROKEN_STORE = "broken-store"  # the same engine, but its idempotency store is closed (StoreError)
FAILING = "failing"  # an engine that raises something unexpected
SECRET = "/srv/secret/internal-path-7f3a"  # text of the unexpected error; must never reach a client


@dataclass
class Stack:
    """The main server (several shops), a low-rate-limit server, and a platform-profile server."""

    main: RunningServer
    limited: RunningServer
    profiles: RunningServer
    store: Any  # the real engine's conversation store
    version: str

    def profile(self, name: str = "good.json") -> str:
        return f"{self.profiles.base_url}/{name}"

    def url(self, path: str, shop: str | None = None) -> str:
        return self.main.base_url + (f"/shops/{shop}" if shop else "") + path


@contextlib.contextmanager
def server_stack(index_dir: Any, embedder: Any, tmp_dir: Any) -> Iterator[Stack]:
    """Start the profile server, the main server and the rate-limited server over the real sample index."""
    from ask_engine.config import Settings
    from ask_engine.conversations import SqliteStore
    from ask_engine.engine import Engine
    from ask_engine.server.app import create_app

    settings = Settings(
        agent_keys=AGENT_KEYS, rate_limit_per_minute=100_000, rate_limit_per_hour=1_000_000, max_concurrency=4
    )
    limited_settings = settings.model_copy(update={"rate_limit_per_minute": 2, "rate_limit_per_hour": 100})
    store = SqliteStore(tmp_dir / "conversations.sqlite3")
    closed = SqliteStore(tmp_dir / "closed.sqlite3")
    closed.close()
    engine = Engine.open(index_dir, settings, embedder=embedder, store=store)
    try:
        engines: dict[str, Any] = {
            REAL: engine,
            BROKEN_STORE: engine,
            FAILING: FailingEngine(engine, RuntimeError(f"boom while reading {SECRET}")),
        }
        stores = {REAL: store, BROKEN_STORE: closed, FAILING: store}
        main_app = create_app(settings=settings, engines=engines, stores=stores)
        limited_app = create_app(settings=limited_settings, engines={REAL: engine}, stores={REAL: store})
        with (
            serve(profile_app(settings.ucp_version)) as profiles,
            serve(main_app) as main,
            serve(limited_app) as limited,
        ):
            yield Stack(main, limited, profiles, store, settings.ucp_version)
    finally:
        engine.close()
        store.close()
