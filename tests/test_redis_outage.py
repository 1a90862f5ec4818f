"""Redis stopped mid-run under two replicas: every ask fails closed (REST 503 + Retry-After, MCP -32000 with
retry_after), nothing is answered twice or recorded twice, and the replicas recover by themselves when Redis is
back. The Redis here is a throwaway `redis-server` of the test's own (the machine's shared one is never stopped)."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from ask_engine.config import Settings
from ask_engine.engine import Engine
from ask_engine.indexer import build_index
from ask_engine.redis_store import RedisStore
from ask_engine.server.app import create_app
from ask_engine.server.auth import key_id
from tests.redis_helpers import ThrowawayRedis, replicas, throwaway_redis, write_shop
from tests.server_helpers import assert_ask_response, assert_error_response, mcp_client, serve

# Skipped where redis-server is not installed, except under .ci/run (REQUIRE_REDIS), where that is a failure.
pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None and not os.environ.get("REQUIRE_REDIS"),
    reason="needs redis-server (apt install redis-server)",
)

AGENT_KEYS = {"key-one": "Agent One"}
ONE = {"Authorization": "Bearer key-one"}
PROFILE = "https://platform.example/profile.json"
REST = "/api/ucp/v1/ask"
PRODUCTS = [("Beck Camping Stove", "A compact gas stove that boils a litre of water in four minutes.", "49.00")]


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    root = tmp_path_factory.mktemp("outage")
    out = root / "test-outfitters"
    build_index(write_shop(root / "shop", PRODUCTS), out, embedder=embedder, progress=False)
    return out


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[ThrowawayRedis]:
    with throwaway_redis(tmp_path) as server:
        yield server


def settings_for(url: str) -> Settings:
    return Settings(
        agent_keys=AGENT_KEYS,
        trust_profiles=True,
        store_url=url,
        store_prefix="outage",
        rate_limit_per_minute=1000,
        rate_limit_per_hour=10_000,
        max_concurrency=2,
    )


def post(server: Any, body: dict[str, Any], **headers: str) -> httpx.Response:
    hdrs = {"UCP-Agent": f'profile="{PROFILE}"', **ONE, **headers}
    return httpx.post(server.base_url + REST, json=body, headers=hdrs, timeout=60)


async def mcp_ask(server: Any, ask: dict[str, Any], key: str | None = None) -> Any:
    meta: dict[str, Any] = {"ucp-agent": {"profile": PROFILE}}
    if key is not None:
        meta["idempotency-key"] = key
    async with mcp_client(server.base_url + "/ucp/mcp", ONE) as client:
        try:
            return await client.call_tool("ask_business", {"meta": meta, "ask": ask})
        except MCPError as exc:
            return exc


def turns(url: str, shop: str, conversation: str) -> int | None:
    with RedisStore(url, prefix=f"outage:{shop}") as store:
        history = store.history(conversation, key_id("key-one"))
    return None if history is None else len(history)


def test_redis_down_fails_closed_and_the_replicas_recover_when_it_is_back(
    redis_server: ThrowawayRedis, small_index: Path, embedder: Any
) -> None:
    shop = small_index.name
    with replicas(small_index, settings_for(redis_server.url), embedder, count=2) as (a, b):
        started = assert_ask_response(post(a, {"query": "How much is the Beck Camping Stove?"}).json())
        conversation = started["conversation"]["id"]
        follow = post(b, {"query": "and how much is it?", "conversation": {"id": conversation}})
        assert follow.status_code == 200 and turns(redis_server.url, shop, conversation) == 2

        redis_server.kill()
        retried = {"query": "Does it boil water quickly?", "conversation": {"id": conversation}}
        for server in (a, b, a, b):  # plain asks and retries of one key: all refused, on every replica
            for extra in ({}, {"Idempotency-Key": "during-outage"}):
                refused = post(server, retried, **extra)
                assert refused.status_code == 503, refused.text
                assert refused.headers["retry-after"] == "5"
                assert_error_response(refused.json(), "unavailable")
        error = asyncio.run(mcp_ask(b, retried, key="during-outage"))
        assert isinstance(error, MCPError), error
        assert (error.code, error.data["code"], error.data["retry_after"]) == (-32000, "unavailable", 5)
        health = httpx.get(a.base_url + "/healthz", timeout=30)
        assert health.status_code == 200  # the replica is up; it answers 503 + Retry-After itself
        assert health.json()["shops"][0]["store"] == "unreachable"

        redis_server.start()  # the same port, and nothing kept: this Redis had no persistence
        assert httpx.get(b.base_url + "/healthz", timeout=30).json()["shops"][0]["store"] == "ok"
        first = post(a, retried, **{"Idempotency-Key": "during-outage"})
        assert first.status_code == 200, first.text
        body = assert_ask_response(first.json())
        # The conversation went with the unpersisted Redis: said plainly, and a new one started.
        assert [m["path"] for m in body["messages"] if m["code"] == "not_found"] == ["$.conversation.id"]
        again = post(b, retried, **{"Idempotency-Key": "during-outage"})
        assert again.status_code == 200 and again.json() == body  # replayed, not answered twice
        replayed = asyncio.run(mcp_ask(a, retried))
        assert not isinstance(replayed, MCPError)
        assert turns(redis_server.url, shop, body["conversation"]["id"]) == 1  # the refused tries left nothing


class StoreDiesDuringAsk:
    """A real engine whose Redis is killed just as its first `ask` starts (after the idempotency key was taken)."""

    def __init__(self, engine: Engine, redis_server: ThrowawayRedis) -> None:
        self._engine = engine
        self._redis = redis_server
        self.shop = engine.shop
        self.store = engine.store
        self.killed = False

    def ask(self, request: Any, *, asker: str = "anonymous", version: str | None = None) -> Any:
        if not self.killed:
            self.killed = True
            self._redis.kill()
        return self._engine.ask(request, asker=asker, version=version)

    def close(self) -> None:
        self._engine.close()


def test_a_request_whose_redis_dies_mid_answer_is_refused_and_its_retry_runs_once(
    redis_server: ThrowawayRedis, small_index: Path, embedder: Any
) -> None:
    settings = settings_for(redis_server.url)
    store = RedisStore(redis_server.url, prefix=f"outage:{small_index.name}")
    engine = StoreDiesDuringAsk(Engine.open(small_index, settings, embedder=embedder, store=store), redis_server)
    app = create_app(settings=settings, engines={small_index.name: engine}, stores={small_index.name: store})
    try:
        with serve(app) as server:
            ask = {"query": "How much is the Beck Camping Stove?"}
            refused = post(server, ask, **{"Idempotency-Key": "mid-answer"})
            assert engine.killed and refused.status_code == 503  # the answer was not sent without its record
            assert refused.headers["retry-after"] == "5"
            redis_server.start()
            answered = [post(server, ask, **{"Idempotency-Key": "mid-answer"}) for _ in range(3)]
            assert [r.status_code for r in answered] == [200] * 3
            assert len({r.text for r in answered}) == 1
            conversation = answered[0].json()["conversation"]["id"]
            assert turns(redis_server.url, small_index.name, conversation) == 1
    finally:
        store.close()
