"""Scale out: three replicas on loopback ports, each its own app (engine, Redis store, Redis rate limiter, chosen by
`store_url` as `ask-engine serve` chooses them), over one index folder and the real local Redis: a conversation
moves between replicas, 300 concurrent retries of one key record one turn, a rate limit holds exactly across them,
and a new index version written to the shared folder reaches all of them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ask_engine.config import Settings
from ask_engine.errors import ConfigError
from ask_engine.indexer import build_index
from ask_engine.indexes import ShopIndex
from ask_engine.redis_store import RedisStore
from ask_engine.server import app as server_app
from ask_engine.server.auth import key_id
from tests.redis_helpers import keys_under, replicas, write_shop
from tests.server_helpers import assert_ask_response, assert_error_response, mcp_client

AGENT_KEYS = {"key-one": "Agent One", "key-two": "Agent Two"}
ONE = {"Authorization": "Bearer key-one"}
TWO = {"Authorization": "Bearer key-two"}
PROFILE = "https://platform.example/profile.json"  # trusted without fetching (trust_profiles)
REST = "/api/ucp/v1/ask"
PRODUCTS = [
    ("Beck Camping Stove", "A compact gas stove that boils a litre of water in four minutes.", "49.00"),
    ("Ridge Trekking Pole", "An aluminium pole that folds to 38 cm for travel.", "29.00"),
]


def settings_for(redis_url: str, prefix: str, **extra: Any) -> Settings:
    fields: dict[str, Any] = {
        "agent_keys": AGENT_KEYS,
        "trust_profiles": True,
        "store_url": redis_url,
        "store_prefix": prefix,
        "rate_limit_per_minute": 100_000,
        "rate_limit_per_hour": 1_000_000,
        "max_concurrency": 2,
    }
    return Settings(**{**fields, **extra})


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    root = tmp_path_factory.mktemp("scale-out")
    out = root / "test-outfitters"
    build_index(write_shop(root / "shop", PRODUCTS), out, embedder=embedder, progress=False)
    return out


@pytest.fixture
def trio(small_index: Path, embedder: Any, redis_url: str, redis_prefix: str) -> Iterator[list[Any]]:
    with replicas(small_index, settings_for(redis_url, redis_prefix), embedder) as servers:
        yield servers


def post(server: Any, body: dict[str, Any], key: dict[str, str] = ONE, **headers: str) -> httpx.Response:
    hdrs = {"UCP-Agent": f'profile="{PROFILE}"', **key, **headers}
    return httpx.post(server.base_url + REST, json=body, headers=hdrs, timeout=60)


def conversation_store(redis_url: str, prefix: str, index: Path) -> RedisStore:
    """The store a replica of `index`'s shop reads: the same Redis and key prefix."""
    return RedisStore(redis_url, prefix=f"{prefix}:{index.name}")


def test_store_url_selects_redis_and_sqlite_stays_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().store_url is None  # SQLite and in-memory limits unless a store_url is given
    monkeypatch.setenv("ASK_ENGINE_STORE_URL", "redis://:s3cret@cache.internal:6380/2")
    loaded = Settings.load()
    assert loaded.store_url == "redis://:s3cret@cache.internal:6380/2"
    assert loaded.redacted_store_url == "redis://:***@cache.internal:6380/2"
    monkeypatch.setenv("ASK_ENGINE_STORE_URL", "")
    assert Settings.load().store_url is None
    for bad in ("postgres://127.0.0.1/db", "127.0.0.1:6379"):
        with pytest.raises(ConfigError, match="store_url must be a Redis URL"):
            Settings.load(store_url=bad)
    with pytest.raises(ConfigError, match="store_prefix"):
        Settings.load(store_prefix="has space")


def test_healthz_names_the_redis_store_and_the_index_version(trio: list[Any], small_index: Path) -> None:
    versions = set()
    for server in trio:
        (shop,) = httpx.get(server.base_url + "/healthz", timeout=30).json()["shops"]
        assert (shop["conversations"], shop["store"]) == ("redis", "ok")
        versions.add(shop["index_version"])
    assert versions == {ShopIndex.current_version(small_index)}

    from ask_engine.server.cli import banner

    settings = trio[0].app.state.settings
    text = banner(trio[0].app.state.services, settings, [str(small_index)])
    assert f"Store: Redis at {settings.store_url} (prefix {settings.store_prefix})" in text


def test_a_conversation_started_on_one_replica_continues_on_the_others(
    trio: list[Any], redis_url: str, redis_prefix: str, small_index: Path
) -> None:
    a, b, c = trio
    first = assert_ask_response(post(a, {"query": "Tell me about the Beck Camping Stove"}).json())
    conversation = first["conversation"]["id"]

    second = assert_ask_response(post(b, {"query": "and how much is it?", "conversation": {"id": conversation}}).json())
    assert second["conversation"]["id"] == conversation
    assert not [m for m in second.get("messages", []) if m["code"] == "not_found"]
    assert "49" in second["answer"]["plain"]  # "it" resolved against the turn recorded by replica A

    async def on_c() -> dict[str, Any]:  # the third replica, over UCP MCP with the official client
        async with mcp_client(c.base_url + "/ucp/mcp", ONE) as client:
            ask = {"query": "and how long does it take to boil water?", "conversation": {"id": conversation}}
            result = await client.call_tool("ask_business", {"meta": {"ucp-agent": {"profile": PROFILE}}, "ask": ask})
            body: dict[str, Any] = result.structured_content
            return body

    third = assert_ask_response(asyncio.run(on_c()))
    assert third["conversation"]["id"] == conversation
    assert "four minutes" in third["answer"]["plain"]

    # Another agent on yet another replica gets a new conversation, and nothing of this one.
    foreign = assert_ask_response(
        post(a, {"query": "and how much is it?", "conversation": {"id": conversation}}, TWO).json()
    )
    assert foreign["conversation"]["id"] != conversation
    assert [m["path"] for m in foreign["messages"] if m["code"] == "not_found"] == ["$.conversation.id"]

    with conversation_store(redis_url, redis_prefix, small_index) as store:
        history = store.history(conversation, key_id("key-one"))
    assert history is not None
    assert [t.query for t in history] == [
        "Tell me about the Beck Camping Stove",
        "and how much is it?",
        "and how long does it take to boil water?",
    ]


def test_300_concurrent_retries_of_one_key_over_three_replicas_record_exactly_one_turn(
    trio: list[Any], redis_url: str, redis_prefix: str, small_index: Path
) -> None:
    body = b'{"query": "How much is the Ridge Trekking Pole?"}'  # REST binds the key to the raw body
    headers = {
        "UCP-Agent": f'profile="{PROFILE}"',
        "Content-Type": "application/json",
        "Idempotency-Key": "retry-3x100",
        **ONE,
    }

    async def storm() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=300, max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:
            requests = [client.post(trio[i % 3].base_url + REST, content=body, headers=headers) for i in range(300)]
            return await asyncio.gather(*requests)

    responses = asyncio.run(storm())
    assert [r.status_code for r in responses] == [200] * 300, {r.status_code for r in responses}
    answers = {r.text for r in responses}
    assert len(answers) == 1  # every retry got the one stored response
    conversation = assert_ask_response(responses[0].json())["conversation"]["id"]
    assert "29" in responses[0].json()["answer"]["plain"]

    with conversation_store(redis_url, redis_prefix, small_index) as store:
        history = store.history(conversation, key_id("key-one"))
    assert history is not None and len(history) == 1
    keys = keys_under(redis_url, f"{redis_prefix}:{small_index.name}")
    assert len([k for k in keys if ":conv:" in k and not k.endswith(":turns")]) == 1  # one conversation in all
    assert len([k for k in keys if ":idem:" in k]) == 1


def test_a_rate_limit_of_n_a_minute_holds_exactly_across_three_replicas(
    small_index: Path, embedder: Any, redis_url: str, redis_prefix: str
) -> None:
    limit = 12
    settings = settings_for(redis_url, redis_prefix, rate_limit_per_minute=limit)
    with replicas(small_index, settings, embedder) as servers:

        async def burst() -> list[httpx.Response]:
            hdrs = {"UCP-Agent": f'profile="{PROFILE}"', **ONE}
            async with httpx.AsyncClient(timeout=120, headers=hdrs) as client:
                requests = [
                    client.post(servers[i % 3].base_url + REST, json={"query": f"Question {i}?"})
                    for i in range(3 * limit)
                ]
                return await asyncio.gather(*requests)

        responses = asyncio.run(burst())
        statuses = [r.status_code for r in responses]
        assert statuses.count(200) == limit, statuses
        assert statuses.count(429) == 2 * limit, statuses
        for refused in (r for r in responses if r.status_code == 429):
            assert 1 <= int(refused.headers["retry-after"]) <= 60
            assert_error_response(refused.json(), "rate_limited")
        # Another agent key has its own window, on every replica.
        assert all(post(s, {"query": "Other agent?"}, TWO).status_code == 200 for s in servers)


def test_a_new_index_version_in_the_shared_folder_reaches_every_replica(
    tmp_path: Path, embedder: Any, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_app, "RELOAD_EVERY_S", 0.2)
    shop, index = tmp_path / "shop", tmp_path / "shared-volume" / "test-outfitters"
    build_index(write_shop(shop, PRODUCTS), index, embedder=embedder, progress=False)
    old = ShopIndex.current_version(index)
    with replicas(index, settings_for(redis_url, redis_prefix), embedder) as servers:
        question = {"query": "How much is the Beck Camping Stove?"}
        assert all("49" in post(s, question).json()["answer"]["plain"] for s in servers)

        repriced = [(title, text, "59.00" if title.startswith("Beck") else price) for title, text, price in PRODUCTS]
        build_index(write_shop(shop, repriced), index, embedder=embedder, progress=False)  # built once, read by all
        new = ShopIndex.current_version(index)
        assert new != old

        deadline = time.monotonic() + 30
        announced: list[str] = []
        while time.monotonic() < deadline:
            announced = [httpx.get(s.base_url + "/healthz").json()["shops"][0]["index_version"] for s in servers]
            if announced == [new] * 3:
                break
            time.sleep(0.1)
        assert announced == [new] * 3
        assert all("59" in post(s, question).json()["answer"]["plain"] for s in servers)
