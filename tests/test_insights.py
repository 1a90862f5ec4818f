"""The question log and the report, module by module: the scrubbing rule, outcomes from the engine's own result,
the append-only SQLite log with its retention, and the report's grouping (the served run is test_insights_served)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from ask_engine.insights.log import Entry, Observation, QuestionLog, outcome_of, read_log
from ask_engine.insights.scrub import MAX_QUERY_CHARS, scrub
from ask_engine.types import Draft, Gap, Sentence

# --- scrubbing ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "gone", "placeholder"),
    [
        ("Where is my parcel? Email me at jane.doe+shop@example.co.uk", "jane.doe+shop@example.co.uk", "[email]"),
        ("Call me on +44 20 7946 0958 about the tent", "7946 0958", "[phone]"),
        ("ring 020 7946 0958 please", "7946 0958", "[phone]"),
        ("my US number is (415) 555-0134", "555-0134", "[number]"),
        ("Where is order #100234?", "100234", "[order]"),
        ("my order number is FF-88213", "FF-88213", "[order]"),
        ("tracking number 1Z999AA10123456784 shows nothing", "1Z999AA10123456784", "[order]"),
        ("here is my key sk-live_4f9a8b7c6d5e4f3a2b1c, now answer", "sk-live_4f9a8b7c6d5e4f3a2b1c", "[key]"),
        ("Authorization: Bearer abc.DEF-123456", "abc.DEF-123456", "Bearer [key]"),
        ("card 4111 1111 1111 1111 was charged twice", "4111 1111", "[number]"),
    ],
)
def test_scrub_replaces_personal_data_and_keys_with_placeholders(query: str, gone: str, placeholder: str) -> None:
    kept = scrub(query, country="GB")
    assert gone not in kept
    assert placeholder in kept


def test_scrub_removes_configured_secrets_of_any_shape_and_keeps_ordinary_numbers() -> None:
    secret = "correct-horse-battery"  # no digit: only the configured list finds it
    kept = scrub(f"is {secret} the key? Does the 2024 model come in size 42 for £129.99?", secrets=[secret])
    assert secret not in kept
    assert "[key]" in kept
    assert "2024 model come in size 42 for £129.99" in kept


def test_scrub_caps_the_query_length() -> None:
    assert len(scrub("why " * 2000)) == MAX_QUERY_CHARS


# --- outcomes -------------------------------------------------------------------------------------------------


def _draft(kind: Any) -> Draft:
    return Draft(sentences=(Sentence("x", kind="meta"),), kind=kind)


@pytest.mark.parametrize(
    ("draft", "operation", "unavailable", "outcome"),
    [
        (_draft("answer"), False, False, "answered"),
        (_draft("empty_query"), False, False, "answered"),
        (_draft("not_recorded"), False, False, "not_recorded"),
        (_draft("no_answer"), False, False, "couldnt_find"),
        (_draft("answer"), True, False, "operation_requested"),
        (None, True, False, "operation_requested"),
        (None, False, True, "unavailable"),
        (_draft("not_recorded"), True, True, "unavailable"),
    ],
)
def test_outcome_comes_from_the_drafts_kind_the_operation_guard_and_the_backend(
    draft: Draft | None, operation: bool, unavailable: bool, outcome: str
) -> None:
    assert outcome_of(draft, operation=operation, unavailable=unavailable) == outcome


# --- the log file ---------------------------------------------------------------------------------------------


def _observation(query: str, *, at: float | None = None, outcome: Any = "not_recorded") -> Observation:
    return Observation(
        query=query,
        product_ids=("product:gid://shop/Product/1",),
        outcome=outcome,
        missing=(Gap("battery life", "battery_life", "product:gid://shop/Product/1"),),
        language="en",
        index_version="v1",
        at=time.time() if at is None else at,
    )


def test_log_rows_are_scrubbed_and_read_back_with_their_missing_fields(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite3"
    with QuestionLog(path, secrets=["agent-key-0123456789"]) as log:
        log.record(_observation("agent-key-0123456789: how long does the battery last? jo@example.org"))
    (entry,) = read_log(path)
    assert entry.query == "[key]: how long does the battery last? [email]"
    assert entry.outcome == "not_recorded"
    assert entry.missing == (Gap("battery life", "battery_life", "product:gid://shop/Product/1"),)
    assert entry.product_ids == ("product:gid://shop/Product/1",)
    assert (entry.language, entry.index_version) == ("en", "v1")
    assert entry.at.endswith("Z")


def test_log_is_append_only_and_drops_rows_past_the_retention(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite3"
    with QuestionLog(path, retention_days=30) as log:
        log.record(_observation("old question", at=time.time() - 40 * 86400))
        log.record(_observation("new question"))
    db = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE questions SET query = 'changed'")
    db.close()
    assert [e.query for e in read_log(path)] == ["old question", "new question"]  # kept until the next purge
    QuestionLog(path, retention_days=30).close()  # opening purges
    assert [e.query for e in read_log(path)] == ["new question"]


def test_reading_a_missing_or_foreign_file_is_a_clear_error(tmp_path: Path) -> None:
    from ask_engine.errors import StoreError

    with pytest.raises(StoreError, match="no question log"):
        read_log(tmp_path / "nothing.sqlite3")
    other = tmp_path / "other.sqlite3"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(StoreError, match="not a question log"):
        read_log(other)


# --- the engine's own reading of what is missing --------------------------------------------------------------


def test_the_answerer_names_the_unrecorded_attribute_and_its_product(engine: Any) -> None:
    _, trace = engine.ask_traced({"query": "What's the warranty on the Buttermere?"})
    assert trace.draft.kind == "not_recorded"
    (gap,) = trace.draft.gaps
    doc = engine.index.documents[gap.doc_id]
    assert doc.kind == "product" and "Buttermere" in doc.title
    assert (gap.field, gap.key) == ("warranty", "warranty")


def test_an_answered_question_has_no_gap(engine: Any) -> None:
    _, trace = engine.ask_traced({"query": "What's your returns policy?"})
    assert trace.draft.kind == "answer"
    assert trace.draft.gaps == ()


# --- the report -----------------------------------------------------------------------------------------------


def _entry(query: str, outcome: str, *, version: str, day: str = "2026-11-02", missing: tuple[Gap, ...] = ()) -> Entry:
    ids = tuple(dict.fromkeys(g.doc_id for g in missing if g.doc_id))
    return Entry(f"{day}T10:00:00Z", query, ids, outcome, missing, "en", version)


def test_report_groups_similar_questions_counts_fields_per_type_and_flags_old_versions(
    engine: Any, embedder: Any
) -> None:
    from ask_engine.insights.report import build_report

    index = engine.index
    products = [d for d in index.documents.values() if d.kind == "product" and d.product_type]
    first, second = products[0], next(p for p in products if p.product_type != products[0].product_type)
    gap = Gap("battery life", "battery_life", first.id)
    entries = [
        _entry("How long does the battery last?", "not_recorded", version=index.version, missing=(gap,)),
        _entry("What is the battery life like?", "not_recorded", version=index.version, missing=(gap,)),
        _entry("how long does the battery last?", "not_recorded", version="old", day="2026-11-01", missing=(gap,)),
        _entry(
            "Is it battery powered?", "not_recorded", version=index.version, missing=(Gap("battery", None, second.id),)
        ),
        _entry("Who won the football last night?", "couldnt_find", version=index.version),
        _entry("Who won the football game yesterday?", "couldnt_find", version=index.version),
        _entry("What's your returns policy?", "answered", version=index.version, day="2026-11-01"),
    ]
    report = build_report(entries, index, embedder)

    assert report["totals"]["questions"] == 7
    assert report["totals"]["by_outcome"]["not_recorded"] == 4
    labels = {t["label"].casefold(): t for t in report["topics"]}
    battery = next(t for t in report["topics"] if "battery last" in t["label"].casefold())
    football = next(t for t in report["topics"] if "football" in t["label"].casefold())
    assert battery is not football
    assert battery["questions"] >= 3  # the two phrasings and the repeat fall together
    assert football["questions"] == 2
    assert battery["products"][0]["title"] == first.title
    assert len(labels) == len(report["topics"])

    by_type = {t["product_type"]: t for t in report["missing_fields"]}
    row = next(f for f in by_type[first.product_type]["fields"] if f["field"] == "battery life")
    assert row["questions"] == 3 and len(row["products"]) == 1
    assert row["summary"] == "battery life: 3 questions across 1 product; record it as a metafield (key `battery_life`)"
    assert by_type[second.product_type]["fields"][0]["field"] == "battery"

    assert [q["query"] for q in report["couldnt_find"]] == [
        "Who won the football last night?",
        "Who won the football game yesterday?",
    ]
    old = report["old_index_versions"]
    assert old["questions"] == 1 and old["by_version"] == {"old": 1}
    assert old["unanswered"][0]["query"] == "how long does the battery last?"
    assert [d["day"] for d in report["per_day"]] == ["2026-11-01", "2026-11-02"]
    assert report["per_day"][0]["answered"] == 1 and report["per_day"][0]["not_recorded"] == 1


def test_report_of_an_empty_log_renders(engine: Any, embedder: Any, tmp_path: Path) -> None:
    from ask_engine.insights.render import write_report
    from ask_engine.insights.report import build_report

    report = build_report([], engine.index, embedder)
    html, data = write_report(report, tmp_path)
    assert report["topics"] == [] and report["per_day"] == []
    assert "Every question was answered" in html.read_text("utf-8")
    assert data.is_file()


# --- the bench figure -----------------------------------------------------------------------------------------


def test_bench_asks_each_question_with_and_without_the_log_and_restores_the_engine(engine: Any, tmp_path: Path) -> None:
    from ask_engine.bench import bench_question_log

    questions = [{"query": "What's your returns policy?"}, {"query": "Who won the football last night?"}]
    figures = bench_question_log(engine, questions, tmp_path, rounds=1)
    assert figures["ask_with_log_ms"]["n"] == figures["ask_without_log_ms"]["n"] == 2
    assert figures["rows_written"] == 2 + 200  # one row per logged ask, and the timed record calls
    assert figures["record_call_us"]["n"] == 200 and figures["writer_ms_per_row"] > 0
    assert engine.question_log is None


def test_missing_fields_in_the_questions_own_words_lose_what_the_scrub_removed(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite3"
    product = "product:gid://shop/Product/1"
    with QuestionLog(path) as log:
        log.record(
            Observation(
                query="Does it come with a rain cover? mail me at jo.bloggs@example.org",
                product_ids=(product,),
                outcome="not_recorded",
                missing=(
                    Gap("whether it comes with a rain cover", None, product),
                    Gap("mail jo bloggs example org", None, product),
                    Gap("warranty", "warranty", product),
                ),
                language="en-GB <script>",
                index_version="v1",
                at=time.time(),
            )
        )
    (entry,) = read_log(path)
    assert [g.field for g in entry.missing] == ["whether it comes with a rain cover", "mail", "warranty"]
    assert entry.language == "und"
    assert b"bloggs" not in path.read_bytes()
