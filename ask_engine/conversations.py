"""Conversation history and idempotency records, kept in one SQLite file (fail closed on any storage error)."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ask_engine.errors import StoreError
from ask_engine.types import Turn

CONVERSATION_PREFIX = "conv_"
_ID_BYTES = 24  # 192 random bits; the protocol asks for at least 128
_MAX_ID_CHARS = 256  # longer ids cannot be ours; refuse them without touching the database
_PURGE_EVERY_S = 600.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id          TEXT PRIMARY KEY,
    owner_hash  TEXT NOT NULL,
    created_at  REAL NOT NULL,
    expires_at  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_expiry ON conversations (expires_at);
CREATE TABLE IF NOT EXISTS turns (
    conversation_id TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    turn            TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
CREATE TABLE IF NOT EXISTS idempotency (
    owner_hash    TEXT NOT NULL,
    key           TEXT NOT NULL,
    payload_hash  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('pending', 'done')),
    response      TEXT,
    status        INTEGER,
    lease_until   REAL NOT NULL,
    expires_at    REAL NOT NULL,
    PRIMARY KEY (owner_hash, key)
);
CREATE INDEX IF NOT EXISTS idempotency_expiry ON idempotency (expires_at);
"""


@dataclass(frozen=True)
class IdempotencyResult:
    """What `SqliteStore.begin` decided for one (owner, idempotency key)."""

    state: Literal["new", "replay", "conflict"]
    response: dict[str, Any] | None = None  # for "replay": the stored response
    status: int | None = None  # for "replay": the stored status code


def payload_hash(obj_or_bytes: Any) -> str:
    """SHA-256 hex of raw bytes (REST bodies) or of the canonical JSON of anything else (MCP `ask` arguments)."""
    if isinstance(obj_or_bytes, bytes | bytearray | memoryview):
        return hashlib.sha256(bytes(obj_or_bytes)).hexdigest()
    canonical = json.dumps(obj_or_bytes, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def rfc3339(epoch_s: float) -> str:
    """Seconds since the epoch as RFC 3339 UTC with second precision: 2026-11-30T12:00:00Z."""
    return datetime.fromtimestamp(int(epoch_s), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def owner_digest(owner: str) -> str:
    """What a store keeps of an owner: owners may include a shopper credential, so only its SHA-256 hex."""
    return hashlib.sha256(owner.encode("utf-8")).hexdigest()


def claim_or_wait(reserve: Callable[[], tuple[str, str | None, int | None]], wait_s: float) -> IdempotencyResult:
    """Run `reserve` (one atomic step of a store) until it settles; the polling every store's `begin` shares.

    `reserve` returns (state, response JSON, status) with state "new", "conflict", "done" or "pending" (another
    request holds the key). Pending is polled with backoff for up to `wait_s`; then StoreError.
    """
    deadline = time.monotonic() + max(0.0, wait_s)
    delay = 0.01
    while True:
        state, response, status = reserve()
        if state == "new":
            return IdempotencyResult("new")
        if state == "conflict":
            return IdempotencyResult("conflict")
        if state == "done":
            try:
                stored = json.loads(response) if response is not None else None
            except ValueError as exc:
                raise StoreError(f"idempotency store holds an unreadable response: {exc}") from exc
            if not isinstance(stored, dict):
                raise StoreError("idempotency store holds an unreadable response")
            return IdempotencyResult("replay", stored, int(status) if status is not None else None)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise StoreError("an earlier request with this idempotency key is still in progress")
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.2)


class SqliteStore:
    """Conversations (per-owner history with a sliding expiry) and idempotency records in one SQLite database.

    One connection guarded by a lock serves every thread of this process; WAL and `busy_timeout` let several
    processes share the file, and the idempotency reservation runs in a `BEGIN IMMEDIATE` transaction so it is
    atomic across them. Every SQLite error is raised as `StoreError`, so callers fail closed.
    """

    backend = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        conversation_ttl_s: int = 86400,
        idempotency_ttl_s: int = 86400,
        clock: Callable[[], float] = time.time,
        max_turns: int = 50,
        pending_lease_s: float = 120.0,
    ) -> None:
        if conversation_ttl_s <= 0 or idempotency_ttl_s <= 0 or max_turns <= 0 or pending_lease_s <= 0:
            raise ValueError("TTLs, max_turns and pending_lease_s must be positive")
        self._conversation_ttl_s = conversation_ttl_s
        self._idempotency_ttl_s = idempotency_ttl_s
        self._clock = clock
        self._max_turns = max_turns
        # A reservation whose request died with its process is taken over after this long.
        self._pending_lease_s = pending_lease_s
        self._lock = threading.RLock()
        self._last_purge = float("-inf")
        target = str(path)
        self._conn: sqlite3.Connection | None = None
        conn: sqlite3.Connection | None = None
        try:
            if target != ":memory:" and not target.startswith("file:"):
                Path(target).parent.mkdir(parents=True, exist_ok=True)
            # autocommit mode: transactions are opened explicitly where they matter
            conn = sqlite3.connect(
                target, timeout=10.0, isolation_level=None, check_same_thread=False, uri=target.startswith("file:")
            )
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            if conn is not None:
                conn.close()
            raise StoreError(f"cannot open the conversation store at {target}: {exc}") from exc
        self._conn = conn

    # --- plumbing ---------------------------------------------------------------------------------------

    @contextmanager
    def _db(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        """The connection under the lock; a write runs in one IMMEDIATE transaction. SQLite errors → StoreError."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError("the conversation store is closed")
            try:
                if write:
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        yield conn
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                    conn.execute("COMMIT")
                else:
                    yield conn
            except sqlite3.Error as exc:
                raise StoreError(f"conversation store failed: {exc}") from exc

    def _maybe_purge(self) -> None:
        if self._clock() - self._last_purge >= _PURGE_EVERY_S:
            self.purge_expired()

    # --- conversations ----------------------------------------------------------------------------------

    def create(self, owner: str) -> tuple[str, str]:
        """Start a conversation owned by `owner`; returns (id, expires_at)."""
        self._maybe_purge()
        now = self._clock()
        conversation_id = CONVERSATION_PREFIX + secrets.token_urlsafe(_ID_BYTES)
        expires = now + self._conversation_ttl_s
        with self._db(write=True) as db:
            db.execute(
                "INSERT INTO conversations (id, owner_hash, created_at, expires_at) VALUES (?, ?, ?, ?)",
                (conversation_id, owner_digest(owner), now, expires),
            )
        return conversation_id, rfc3339(expires)

    def _owned(self, db: sqlite3.Connection, conversation_id: str, owner: str) -> tuple[bool, float] | None:
        """(owned, expires_at) for a conversation this owner holds, None otherwise (unknown or foreign)."""
        if not conversation_id or len(conversation_id) > _MAX_ID_CHARS:
            return None
        row = db.execute("SELECT owner_hash, expires_at FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        if row is None or not hmac.compare_digest(str(row[0]), owner_digest(owner)):
            return None
        return True, float(row[1])

    def history(self, conversation_id: str, owner: str) -> list[Turn] | None:
        """Earlier turns, oldest first; None when the id is unknown, expired or someone else's (indistinguishably)."""
        with self._db() as db:
            held = self._owned(db, conversation_id, owner)
            if held is None or held[1] <= self._clock():
                return None
            rows = db.execute(
                "SELECT turn FROM turns WHERE conversation_id = ? ORDER BY seq", (conversation_id,)
            ).fetchall()
        try:
            return [Turn.from_dict(json.loads(r[0])) for r in rows]
        except (ValueError, TypeError) as exc:
            raise StoreError(f"conversation store holds an unreadable turn: {exc}") from exc

    def append(self, conversation_id: str, owner: str, turn: Turn) -> str:
        """Record a turn and slide the expiry; returns the new expires_at.

        A conversation the owner holds is extended even if it expired a moment ago (a request racing its own
        expiry keeps its history). Raises LookupError for an id this owner does not hold: call `history` first.
        """
        now = self._clock()
        if not turn.created_at:
            turn = replace(turn, created_at=rfc3339(now))
        blob = json.dumps(turn.to_dict(), ensure_ascii=False)
        expires = now + self._conversation_ttl_s
        with self._db(write=True) as db:
            if self._owned(db, conversation_id, owner) is None:
                raise LookupError("no such conversation for this owner")
            (last,) = db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM turns WHERE conversation_id = ?", (conversation_id,)
            ).fetchone()
            db.execute(
                "INSERT INTO turns (conversation_id, seq, turn) VALUES (?, ?, ?)", (conversation_id, last + 1, blob)
            )
            # Only the most recent turns matter for follow-ups; keep storage bounded.
            db.execute(
                "DELETE FROM turns WHERE conversation_id = ? AND seq <= ?",
                (conversation_id, last + 1 - self._max_turns),
            )
            db.execute("UPDATE conversations SET expires_at = ? WHERE id = ?", (expires, conversation_id))
        return rfc3339(expires)

    # --- idempotency ------------------------------------------------------------------------------------

    def _reserve(self, key: str, owner_h: str, payload_h: str) -> tuple[str, str | None, int | None]:
        """One atomic step: reserve the key, or report what holds it: (state, response JSON, status).

        state: "new" (reserved for the caller), "done", "pending" (another request holds it), "conflict".
        """
        now = self._clock()
        with self._db(write=True) as db:
            # A record past its TTL, or a reservation whose holder vanished, no longer binds the key.
            db.execute(
                "DELETE FROM idempotency WHERE owner_hash = ? AND key = ? "
                "AND (expires_at <= ? OR (state = 'pending' AND lease_until <= ?))",
                (owner_h, key, now, now),
            )
            cur = db.execute(
                "INSERT INTO idempotency (owner_hash, key, payload_hash, state, lease_until, expires_at) "
                "VALUES (?, ?, ?, 'pending', ?, ?) ON CONFLICT (owner_hash, key) DO NOTHING",
                (owner_h, key, payload_h, now + self._pending_lease_s, now + self._idempotency_ttl_s),
            )
            if cur.rowcount == 1:
                return "new", None, None
            row = db.execute(
                "SELECT payload_hash, state, response, status FROM idempotency WHERE owner_hash = ? AND key = ?",
                (owner_h, key),
            ).fetchone()
        stored_hash, state, response, status = row
        if not hmac.compare_digest(str(stored_hash), payload_h):
            return "conflict", None, None
        return str(state), response, status

    def begin(self, key: str, owner: str, payload_hash: str, *, wait_s: float = 30.0) -> IdempotencyResult:
        """Reserve an idempotency key for this owner, or find what an earlier request with it left.

        "new": the caller must run the request and then `finish` (or `abandon`). "replay": the stored response of
        an earlier request with the same payload. "conflict": the key was used with another payload. A same-payload
        request still in flight is waited for (up to `wait_s`, polling); if it never completes, StoreError.
        """
        self._maybe_purge()
        owner_h = owner_digest(owner)
        return claim_or_wait(lambda: self._reserve(key, owner_h, payload_hash), wait_s)

    def finish(self, key: str, owner: str, response: dict[str, Any], status: int = 200) -> None:
        """Store the response of a request that `begin` reserved; it is replayed for the idempotency TTL."""
        blob = json.dumps(response, ensure_ascii=False, separators=(",", ":"))
        now = self._clock()
        with self._db(write=True) as db:
            db.execute(
                "UPDATE idempotency SET state = 'done', response = ?, status = ?, expires_at = ? "
                "WHERE owner_hash = ? AND key = ?",
                (blob, status, now + self._idempotency_ttl_s, owner_digest(owner), key),
            )

    def abandon(self, key: str, owner: str) -> None:
        """Release a reservation whose request failed before a response, so a retry can run."""
        with self._db(write=True) as db:
            db.execute(
                "DELETE FROM idempotency WHERE owner_hash = ? AND key = ? AND state = 'pending'",
                (owner_digest(owner), key),
            )

    # --- housekeeping -----------------------------------------------------------------------------------

    def purge_expired(self) -> int:
        """Delete expired conversations (with their turns) and idempotency records; returns how many went."""
        now = self._clock()
        with self._db(write=True) as db:
            db.execute(
                "DELETE FROM turns WHERE conversation_id IN (SELECT id FROM conversations WHERE expires_at <= ?)",
                (now,),
            )
            removed = db.execute("DELETE FROM conversations WHERE expires_at <= ?", (now,)).rowcount
            removed += db.execute(
                "DELETE FROM idempotency WHERE expires_at <= ? OR (state = 'pending' AND lease_until <= ?)",
                (now, now),
            ).rowcount
        self._last_purge = now
        return removed

    def close(self) -> None:
        """Close the database; later calls raise StoreError."""
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error as exc:
                raise StoreError(f"closing the conversation store failed: {exc}") from exc

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
