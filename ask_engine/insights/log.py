"""The opt-in question log: one append-only SQLite row per answered question, written off the answer's path.

`Engine.ask` hands each answer's `Observation` to `QuestionLog.record`, which only puts it on a queue; a writer
thread scrubs the query (`insights.scrub`) and inserts rows in batches. A row holds the scrubbed query, the product
ids the question was about, the outcome, the fields asked about that are not recorded, the language, the index
version and the time: no agent key, no conversation id, no answer text. Rows older than the retention are deleted;
no row is ever updated (a trigger refuses UPDATE).
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ask_engine.errors import StoreError
from ask_engine.types import Draft, Gap, Resolution

if TYPE_CHECKING:
    from ask_engine.indexes import ShopIndex

log = logging.getLogger(__name__)

Outcome = Literal["answered", "not_recorded", "couldnt_find", "operation_requested", "unavailable"]
OUTCOMES: tuple[Outcome, ...] = ("answered", "not_recorded", "couldnt_find", "operation_requested", "unavailable")
OUTCOME_LABELS: dict[str, str] = {
    "answered": "answered",
    "not_recorded": "not recorded",
    "couldnt_find": "couldn't find",
    "operation_requested": "operation requested",
    "unavailable": "unavailable",
}
# Observations waiting for the writer; past this new ones are dropped (and counted), never waited on.
QUEUE_SIZE = 10_000
_BATCH = 500
_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")
# the words `answering.gaps` phrases a field with around the query's own ("whether it comes with a rain cover")
_PHRASING = frozenset(
    [
        "whether",
        "it",
        "they",
        "is",
        "are",
        "can",
        "could",
        "will",
        "would",
        "should",
        "you",
        "how",
        "what",
        "where",
        "when",
        "which",
    ]
)
_LANGUAGE_TAG = re.compile(r"^[A-Za-z]{2,8}(?:[-_][A-Za-z0-9]{1,8}){0,4}$")  # a BCP 47-shaped tag, else "und"
_PURGE_EVERY_S = 3600.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS questions (
    id            INTEGER PRIMARY KEY,
    at            TEXT NOT NULL,
    query         TEXT NOT NULL,
    product_ids   TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    missing       TEXT NOT NULL,
    language      TEXT NOT NULL,
    index_version TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS questions_at ON questions (at);
CREATE TRIGGER IF NOT EXISTS questions_append_only BEFORE UPDATE ON questions
BEGIN SELECT RAISE(ABORT, 'the question log is append-only'); END;
"""


@dataclass(frozen=True)
class Observation:
    """What the engine knew of one answer, as handed to the log (the query not yet scrubbed)."""

    query: str
    product_ids: tuple[str, ...]
    outcome: Outcome
    missing: tuple[Gap, ...]
    language: str
    index_version: str
    at: float  # seconds since the epoch
    country: str | None = None  # the shopper's country: read national phone numbers when scrubbing, never stored


@dataclass(frozen=True)
class Entry:
    """One row of the log, as the report reads it."""

    at: str  # RFC 3339 UTC
    query: str
    product_ids: tuple[str, ...]
    outcome: str
    missing: tuple[Gap, ...]
    language: str
    index_version: str

    @property
    def day(self) -> str:
        return self.at[:10]


def outcome_of(draft: Draft | None, *, operation: bool, unavailable: bool) -> Outcome:
    """The answer's outcome from the engine's own result: the final draft's kind, the read-only guard's finding and
    whether the answer backend failed. A greeting or an empty query (kind `empty_query`) counts as answered."""
    if unavailable:
        return "unavailable"
    if operation:
        return "operation_requested"
    if draft is None:
        return "couldnt_find"
    if draft.kind == "not_recorded":
        return "not_recorded"
    if draft.kind == "no_answer":
        return "couldnt_find"
    if draft.kind == "unavailable":
        return "unavailable"
    return "answered"


def observe(
    *,
    query: str,
    index: ShopIndex,
    resolution: Resolution,
    draft: Draft | None,
    operation: bool,
    unavailable: bool,
    language: str | None,
    country: str | None,
) -> Observation:
    """The observation of one answer: cheap, on the answer's path (scrubbing waits for the writer thread)."""
    ids = [
        *resolution.doc_ids,
        *(draft.used_doc_ids if draft else ()),
        *(g.doc_id for g in (draft.gaps if draft else ())),
    ]
    products = tuple(
        d for d in dict.fromkeys(ids) if d and d in index.documents and index.documents[d].kind == "product"
    )
    return Observation(
        query=query,
        product_ids=products,
        outcome=outcome_of(draft, operation=operation, unavailable=unavailable),
        missing=draft.gaps if draft is not None else (),
        language=(language or index.shop.language or "").strip()[:35],
        index_version=index.version,
        at=time.time(),
        country=country,
    )


def _iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _kept_gaps(gaps: Iterable[Gap], scrubbed_query: str) -> list[Gap]:
    """The missing fields as the log keeps them. A field the attribute lexicon names (it has a `key`) is the
    lexicon's word. Any other is made of the query's words (with "whether it …" around them), so it keeps only the
    words the scrubbed query still holds, or their third-person form: the pieces of an email or a key went with it."""
    words = set(_WORD.findall(scrubbed_query.casefold()))

    def allowed(word: str) -> bool:
        forms = {word, word[:-1], word[:-2], word[:-3] + "y"} if word.endswith("s") else {word}
        return word in _PHRASING or bool(forms & words)

    kept = []
    for gap in gaps:
        if gap.key is None:
            field = " ".join(w for w in gap.field.split() if allowed(w.casefold()))
            if not field.strip() or all(w in _PHRASING for w in field.split()):
                continue
            gap = Gap(field=field, key=None, doc_id=gap.doc_id)
        if gap not in kept:
            kept.append(gap)
    return kept


def _gap_json(gaps: Iterable[Gap]) -> str:
    return json.dumps([{"field": g.field, "key": g.key, "product_id": g.doc_id} for g in gaps], ensure_ascii=False)


class QuestionLog:
    """The question log of one shop in one SQLite file. `record` never blocks and never raises."""

    def __init__(self, path: str | Path, *, retention_days: int = 90, secrets: Sequence[str] = ()) -> None:
        self.path = Path(path)
        self.retention_s = retention_days * 86400.0
        self._secrets = tuple(secrets)
        self._queue: queue.Queue[Observation | None] = queue.Queue(QUEUE_SIZE)
        self.dropped = 0  # observations refused because the writer fell QUEUE_SIZE behind
        self._last_purge = 0.0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._purge()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"question log {self.path}: {exc}") from None
        self._writer = threading.Thread(target=self._run, name=f"question-log:{self.path.name}", daemon=True)
        self._writer.start()

    def record(self, observation: Observation) -> None:
        """Queue one observation for the writer thread."""
        try:
            self._queue.put_nowait(observation)
        except queue.Full:
            self.dropped += 1

    def flush(self) -> None:
        """Wait until every observation queued so far is written."""
        self._queue.join()

    def close(self) -> None:
        """Write what is queued, stop the writer and close the file."""
        if self._writer.is_alive():
            self._queue.put(None)
            self._writer.join(timeout=30)
        with contextlib.suppress(sqlite3.Error):
            self._db.close()

    def __enter__(self) -> QuestionLog:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------- writer thread

    def _run(self) -> None:
        from ask_engine.insights.scrub import scrub

        scrub("+1 202 555 0100")  # load the phone metadata now, not while the first answers are being written
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = None in batch
            try:
                self._write([o for o in batch if o is not None])
            except Exception as exc:  # a full disk or a broken file must not stop the writer (nor any answer)
                log.error("question log %s: %d question(s) not written: %s", self.path, len(batch), exc)
            finally:
                for _ in batch:
                    self._queue.task_done()

    def _write(self, batch: Sequence[Observation]) -> None:
        from ask_engine.insights.scrub import scrub

        if not batch:
            return
        rows = []
        for o in batch:
            query = scrub(o.query, secrets=self._secrets, country=o.country)
            rows.append(
                (
                    _iso(o.at),
                    query,
                    json.dumps(list(o.product_ids)),
                    o.outcome,
                    _gap_json(_kept_gaps(o.missing, query)),
                    o.language if _LANGUAGE_TAG.match(o.language) else "und",
                    o.index_version,
                )
            )
        self._db.execute("BEGIN")
        try:
            self._db.executemany(
                "INSERT INTO questions (at, query, product_ids, outcome, missing, language, index_version) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        if time.time() - self._last_purge > _PURGE_EVERY_S:
            self._purge()

    def _purge(self) -> None:
        self._last_purge = time.time()
        self._db.execute("DELETE FROM questions WHERE at < ?", (_iso(time.time() - self.retention_s),))


def read_log(path: str | Path, *, limit: int | None = None) -> list[Entry]:
    """The log's rows, oldest first (the newest `limit` when given); StoreError when the file can't be read."""
    file = Path(path)
    if not file.is_file():
        raise StoreError(f"{file}: no question log there (serve with question_log = true to write one)")
    try:
        db = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
        try:
            sql = "SELECT at, query, product_ids, outcome, missing, language, index_version FROM questions"
            sql += " ORDER BY id DESC LIMIT ?" if limit else " ORDER BY id DESC LIMIT -1"
            rows = db.execute(sql, (limit,) if limit else ()).fetchall()
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise StoreError(f"{file}: not a question log ({exc})") from None
    return [_entry(row) for row in reversed(rows)]


def _entry(row: tuple[str, str, str, str, str, str, str]) -> Entry:
    at, query, product_ids, outcome, missing, language, version = row
    gaps = tuple(
        Gap(field=str(g.get("field", "")), key=g.get("key"), doc_id=g.get("product_id"))
        for g in json.loads(missing or "[]")
        if isinstance(g, dict)
    )
    return Entry(at, query, tuple(json.loads(product_ids or "[]")), outcome, gaps, language, version)
