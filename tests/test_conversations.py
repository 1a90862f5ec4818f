"""The conversation stores' contract kit, run on every backend (SQLite, and Redis where one answers): conversation
ownership and expiry, idempotency under concurrent retries, fail-closed storage; then what is backend-specific."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ask_engine.conversations import IdempotencyResult, SqliteStore, payload_hash, rfc3339
from ask_engine.errors import StoreError
from ask_engine.protocols import ConversationStore, IdempotencyStore
from ask_engine.redis_store import RedisStore
from ask_engine.types import Turn
from tests.redis_helpers import keys_under
from tests.server_helpers import free_port

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z
BACKENDS = ("sqlite", "redis")

Store = SqliteStore | RedisStore


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[Callable[..., Store]]:
    """Opens stores of one backend over one shared place (one SQLite file, one Redis key prefix), on `clock`."""
    made: list[Store] = []
    place: dict[str, Any] = {}
    if request.param == "redis":
        place = {"url": request.getfixturevalue("redis_url"), "prefix": request.getfixturevalue("redis_prefix")}

    def make(**options: Any) -> Store:
        options.setdefault("clock", clock)
        store: Store
        if request.param == "sqlite":
            store = SqliteStore(tmp_path / "store.sqlite3", **options)
        else:
            store = RedisStore(place["url"], prefix=place["prefix"], **options)
        made.append(store)
        return store

    yield make
    for store in made:
        with contextlib.suppress(StoreError):
            store.close()


@pytest.fixture
def store(make_store: Callable[..., Store]) -> Store:
    return make_store(conversation_ttl_s=3600, idempotency_ttl_s=7200)


def turn(q: str, *doc_ids: str) -> Turn:
    return Turn(query=q, answer=f"answer to {q}", doc_ids=doc_ids)


# --- conversations --------------------------------------------------------------------------------------


def test_store_satisfies_the_store_protocols(store: Store) -> None:
    assert isinstance(store, ConversationStore)
    assert isinstance(store, IdempotencyStore)


def test_create_returns_opaque_id_and_rfc3339_expiry(store: Store) -> None:
    cid, expires_at = store.create("agent-a")
    assert cid.startswith("conv_")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", expires_at)
    assert expires_at == rfc3339(T0 + 3600)
    assert store.history(cid, "agent-a") == []


def test_conversation_ids_carry_at_least_128_random_bits(store: Store) -> None:
    ids = {store.create("agent-a")[0] for _ in range(200)}
    assert len(ids) == 200
    for cid in ids:
        body = cid.removeprefix("conv_")
        assert re.fullmatch(r"[A-Za-z0-9_-]+", body)
        assert len(body) * 6 >= 128  # base64url: 6 bits per character


def test_append_keeps_turns_in_order_and_round_trips_fields(store: Store, clock: Clock) -> None:
    cid, _ = store.create("agent-a")
    store.append(cid, "agent-a", turn("is it waterproof?", "product:gid://shop/Product/1"))
    clock.now += 10
    store.append(cid, "agent-a", Turn(query="and the price?", answer="£89.00", created_at="2027-01-01T00:00:00Z"))
    history = store.history(cid, "agent-a")
    assert history is not None
    assert [t.query for t in history] == ["is it waterproof?", "and the price?"]
    assert history[0].doc_ids == ("product:gid://shop/Product/1",)
    assert history[0].created_at == rfc3339(T0)  # filled in when the caller left it empty
    assert history[1].created_at == "2027-01-01T00:00:00Z"


def test_foreign_owner_sees_nothing_and_cannot_append(store: Store) -> None:
    cid, _ = store.create("agent-a|shopper-1")
    store.append(cid, "agent-a|shopper-1", turn("secret question"))
    assert store.history(cid, "agent-b") is None
    assert store.history(cid, "agent-a|shopper-2") is None
    with pytest.raises(LookupError):
        store.append(cid, "agent-b", turn("hijack"))
    history = store.history(cid, "agent-a|shopper-1")
    assert history is not None and [t.query for t in history] == ["secret question"]


def test_unknown_and_absurd_ids_look_like_any_other_miss(store: Store) -> None:
    assert store.history("conv_doesnotexist", "agent-a") is None
    assert store.history("", "agent-a") is None
    assert store.history("x" * 100_000, "agent-a") is None


def test_conversation_expires_after_ttl_and_append_slides_the_expiry(store: Store, clock: Clock) -> None:
    cid, first_expiry = store.create("agent-a")
    clock.now += 3000
    new_expiry = store.append(cid, "agent-a", turn("q1"))
    assert new_expiry == rfc3339(clock.now + 3600)
    assert new_expiry > first_expiry
    clock.now += 3000  # past the first expiry, within the slid one
    assert store.history(cid, "agent-a") is not None
    clock.now += 601
    assert store.history(cid, "agent-a") is None


def test_sqlite_keeps_the_owner_as_a_digest_not_in_clear(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "s.sqlite3"
    with SqliteStore(path, clock=clock) as s:
        s.create("agent-a|shopper-token-123")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite3*"))
    assert raw  # the store wrote something
    assert b"shopper-token-123" not in raw


def test_history_is_bounded_to_the_most_recent_turns(make_store: Callable[..., Store]) -> None:
    s = make_store(max_turns=3)
    cid, _ = s.create("a")
    for i in range(7):
        s.append(cid, "a", turn(f"q{i}"))
    history = s.history(cid, "a")
    assert history is not None and [t.query for t in history] == ["q4", "q5", "q6"]


def test_purge_expired_removes_conversations_and_idempotency_records(store: Store, clock: Clock) -> None:
    old, _ = store.create("a")
    store.append(old, "a", turn("q"))
    assert store.begin("k1", "a", payload_hash(b"x")).state == "new"
    store.finish("k1", "a", {"answer": 1})
    fresh, _ = store.create("a")
    clock.now += 1800
    store.append(fresh, "a", turn("q"))  # slides `fresh` to T0 + 5400
    clock.now += 1801
    assert store.purge_expired() == 1  # the old conversation; the idempotency record lives 7200 s
    assert store.purge_expired() == 0
    clock.now += 3600
    assert store.purge_expired() == 2  # the second conversation and the idempotency record
    assert store.history(fresh, "a") is None
    assert store.begin("k1", "a", payload_hash(b"other")).state == "new"  # the key is free again


def test_sqlite_store_purges_expired_rows_on_its_own(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "s.sqlite3"
    with SqliteStore(path, conversation_ttl_s=60, clock=clock) as s:
        for _ in range(5):
            s.create("a")
        clock.now += 3600
        s.create("a")  # writes purge now and then, so the file cannot grow without bound
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM conversations").fetchone() == (1,)


# --- idempotency ----------------------------------------------------------------------------------------


def test_payload_hash_hashes_raw_bytes_and_canonical_json() -> None:
    assert payload_hash(b'{"query": "hi"}') != payload_hash(b'{"query":"hi"}')  # REST: raw body bytes
    assert payload_hash({"query": "hi", "ids": ["a"]}) == payload_hash({"ids": ["a"], "query": "hi"})
    assert payload_hash({"query": "é"}) != payload_hash({"query": "e"})
    assert re.fullmatch(r"[0-9a-f]{64}", payload_hash({"query": "hi"}))


def test_idempotency_new_then_replay_returns_stored_response(store: Store) -> None:
    h = payload_hash({"query": "hi"})
    assert store.begin("key-1", "agent-a", h) == IdempotencyResult("new")
    store.finish("key-1", "agent-a", {"answer": {"plain": "Hello"}}, status=200)
    again = store.begin("key-1", "agent-a", h)
    assert again == IdempotencyResult("replay", {"answer": {"plain": "Hello"}}, 200)


def test_idempotency_key_reused_with_other_payload_conflicts(store: Store) -> None:
    assert store.begin("key-1", "agent-a", payload_hash(b"one")).state == "new"
    assert store.begin("key-1", "agent-a", payload_hash(b"two")).state == "conflict"  # even while pending
    store.finish("key-1", "agent-a", {"n": 1})
    assert store.begin("key-1", "agent-a", payload_hash(b"two")).state == "conflict"


def test_idempotency_keys_are_scoped_per_owner(store: Store) -> None:
    h = payload_hash(b"same")
    assert store.begin("shared-key", "agent-a", h).state == "new"
    store.finish("shared-key", "agent-a", {"for": "a"})
    assert store.begin("shared-key", "agent-b", h).state == "new"  # never agent a's response
    store.finish("shared-key", "agent-b", {"for": "b"})
    assert store.begin("shared-key", "agent-a", h).response == {"for": "a"}
    assert store.begin("shared-key", "agent-b", h).response == {"for": "b"}


def test_abandon_lets_a_retry_run(store: Store) -> None:
    h = payload_hash(b"p")
    assert store.begin("k", "a", h).state == "new"
    store.abandon("k", "a")
    assert store.begin("k", "a", h).state == "new"


def test_abandon_does_not_drop_a_completed_record(store: Store) -> None:
    h = payload_hash(b"p")
    store.begin("k", "a", h)
    store.finish("k", "a", {"done": True})
    store.abandon("k", "a")
    assert store.begin("k", "a", h) == IdempotencyResult("replay", {"done": True}, 200)


def test_pending_request_that_never_finishes_raises_store_error(store: Store) -> None:
    h = payload_hash(b"p")
    assert store.begin("k", "a", h).state == "new"
    with pytest.raises(StoreError):
        store.begin("k", "a", h, wait_s=0.05)


def test_reservation_of_a_vanished_request_is_taken_over_after_its_lease(
    make_store: Callable[..., Store], clock: Clock
) -> None:
    s = make_store(pending_lease_s=60)
    h = payload_hash(b"p")
    assert s.begin("k", "a", h).state == "new"
    clock.now += 59
    with pytest.raises(StoreError):
        s.begin("k", "a", h, wait_s=0)  # still held
    clock.now += 2
    assert s.begin("k", "a", h, wait_s=0).state == "new"


def test_waiting_retry_takes_over_when_the_first_request_abandons(store: Store) -> None:
    h = payload_hash(b"p")
    assert store.begin("k", "a", h).state == "new"
    results: list[IdempotencyResult] = []
    waiter = threading.Thread(target=lambda: results.append(store.begin("k", "a", h, wait_s=10)))
    waiter.start()
    store.abandon("k", "a")
    waiter.join(10)
    assert [r.state for r in results] == ["new"]


def test_concurrent_retries_run_once_and_all_replay_the_same_response(store: Store) -> None:
    h = payload_hash({"query": "is it waterproof?"})
    barrier = threading.Barrier(50)
    results: list[IdempotencyResult] = []
    lock = threading.Lock()
    runs = 0

    def request(i: int) -> None:
        nonlocal runs
        barrier.wait()
        r = store.begin("retry-key", "agent-a", h, wait_s=20)
        if r.state == "new":
            with lock:
                runs += 1
            store.finish("retry-key", "agent-a", {"answer": {"plain": f"computed by {i}"}}, status=200)
        with lock:
            results.append(r)

    threads = [threading.Thread(target=request, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 50
    assert runs == 1
    states = sorted(r.state for r in results)
    assert states.count("new") == 1 and states.count("replay") == 49
    replayed = {str(r.response) for r in results if r.state == "replay"}
    assert len(replayed) == 1
    final = store.begin("retry-key", "agent-a", h)
    assert final.state == "replay" and str(final.response) in replayed


def test_two_store_instances_on_one_backend_share_conversations_and_reservations(
    make_store: Callable[..., Store],
) -> None:
    one, two = make_store(), make_store()  # as two replicas: one SQLite file, or one Redis and key prefix
    h = payload_hash(b"p")
    assert one.begin("k", "a", h).state == "new"
    assert two.begin("k", "a", payload_hash(b"q")).state == "conflict"
    one.finish("k", "a", {"from": "one"})
    assert two.begin("k", "a", h).response == {"from": "one"}
    cid, _ = one.create("a")
    assert two.history(cid, "a") == []
    two.append(cid, "a", turn("asked of two"))
    history = one.history(cid, "a")
    assert history is not None and [t.query for t in history] == ["asked of two"]
    assert two.history(cid, "b") is None


def test_idempotency_record_expires_after_its_ttl(store: Store, clock: Clock) -> None:
    store.begin("k", "a", payload_hash(b"p"))
    store.finish("k", "a", {"x": 1})
    clock.now += 7199
    assert store.begin("k", "a", payload_hash(b"other")).state == "conflict"
    clock.now += 2
    assert store.begin("k", "a", payload_hash(b"other")).state == "new"


# --- failing closed -------------------------------------------------------------------------------------


def test_sqlite_unwritable_path_raises_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError):
        SqliteStore(blocker / "store.sqlite3")


def test_sqlite_corrupted_database_file_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.sqlite3"
    path.write_bytes(b"this is not an sqlite database at all" * 200)
    with pytest.raises(StoreError):
        SqliteStore(path)


def test_sqlite_database_broken_under_a_running_store_raises_store_error(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "s.sqlite3"
    with SqliteStore(path, clock=clock) as s:
        cid, _ = s.create("a")
        s.append(cid, "a", turn("q"))
        with sqlite3.connect(path) as other:
            other.execute("DROP TABLE turns")
        with pytest.raises(StoreError):
            s.history(cid, "a")
        with pytest.raises(StoreError):
            s.append(cid, "a", turn("q2"))


def test_sqlite_unreadable_stored_response_raises_store_error(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "s.sqlite3"
    with SqliteStore(path, clock=clock) as s:
        s.begin("k", "a", "h")
        s.finish("k", "a", {"ok": True})
        with sqlite3.connect(path) as other:
            other.execute("UPDATE idempotency SET response = '{not json'")
        with pytest.raises(StoreError):
            s.begin("k", "a", "h")


def test_closed_store_raises_store_error(make_store: Callable[..., Store]) -> None:
    s = make_store()
    s.close()
    calls: list[Any] = [
        lambda: s.create("a"),
        lambda: s.history("conv_x", "a"),
        lambda: s.begin("k", "a", "h"),
        lambda: s.finish("k", "a", {}),
    ]
    for call in calls:
        with pytest.raises(StoreError):
            call()


def test_sqlite_memory_database_keeps_the_same_semantics(clock: Clock) -> None:
    with SqliteStore(":memory:", clock=clock) as s:
        cid, _ = s.create("a")
        s.append(cid, "a", turn("q"))
        assert s.history(cid, "b") is None
        assert s.begin("k", "a", "h").state == "new"


# --- Redis only -----------------------------------------------------------------------------------------


@pytest.fixture
def redis_store(redis_url: str, redis_prefix: str) -> Iterator[RedisStore]:
    with RedisStore(redis_url, prefix=redis_prefix, conversation_ttl_s=3600, idempotency_ttl_s=7200) as s:
        yield s


def test_redis_keeps_the_owner_as_a_digest_and_every_key_expires(
    redis_store: RedisStore, redis_url: str, redis_prefix: str
) -> None:
    import redis

    cid, _ = redis_store.create("agent-a|shopper-token-123")
    redis_store.append(cid, "agent-a|shopper-token-123", turn("q"))
    redis_store.begin("k", "agent-a|shopper-token-123", "h")
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        keys = keys_under(redis_url, redis_prefix)
        assert len(keys) == 3  # the conversation, its turns, the idempotency record
        for key in keys:
            assert "shopper-token-123" not in key
            dumped = client.hgetall(key) if client.type(key) == "hash" else client.lrange(key, 0, -1)
            assert "shopper-token-123" not in repr(dumped)
            assert 0 < client.pttl(key) <= 7200 * 1000  # Redis collects it even if nothing ever purges
    finally:
        client.close()


def test_redis_unreadable_stored_response_raises_store_error(
    redis_store: RedisStore, redis_url: str, redis_prefix: str
) -> None:
    import redis

    redis_store.begin("k", "a", "h")
    redis_store.finish("k", "a", {"ok": True})
    (key,) = keys_under(redis_url, redis_prefix)
    client = redis.Redis.from_url(redis_url)
    try:
        client.hset(key, "response", "{not json")
    finally:
        client.close()
    with pytest.raises(StoreError):
        redis_store.begin("k", "a", "h")


def test_redis_nobody_listening_raises_store_error_on_every_call(clock: Clock) -> None:
    with RedisStore(f"redis://127.0.0.1:{free_port()}/0", prefix="nobody", clock=clock) as s:
        assert s.ping() is False
        calls: list[Callable[[], Any]] = [
            lambda: s.create("a"),
            lambda: s.history("conv_" + "x" * 32, "a"),
            lambda: s.append("conv_" + "x" * 32, "a", turn("q")),
            lambda: s.begin("k", "a", "h"),
            lambda: s.finish("k", "a", {}),
            lambda: s.abandon("k", "a"),
        ]
        for call in calls:
            with pytest.raises(StoreError):
                call()
