"""Merchant insights end to end: eval cases asked of a real served sample shop (uvicorn on loopback, UCP REST and
the official MCP client) with the question log on; then `ask-engine report`, the live admin report, the log's bytes
checked for keys and personal data, and the report opened in Debian's chromium."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from bs4 import BeautifulSoup

from tests.browser_helpers import chromium_path, open_page
from tests.conftest import ROOT
from tests.server_helpers import assert_ask_response, mcp_client, serve

CASES = ROOT / "eval" / "fjord-fell.jsonl"
AGENT_KEY = "agent-key-9f8e7d6c5b4a"
ADMIN_KEY = "admin-key-0a1b2c3d4e5f"
PROFILE = 'profile="https://platform.example/profile.json"'
# What the shopper typed and the log must never keep.
PERSONAL = {
    "key": AGENT_KEY,
    "admin key": ADMIN_KEY,
    "email": "jane.doe@example.com",
    "phone": "7946 0958",
    "order": "100234",
    "token": "sk-live_4f9a8b7c6d5e4f3a2b1c",
}
PERSONAL_QUERIES = [
    f"My key is {AGENT_KEY}; email jane.doe@example.com when the Solo Trekker 1 is back in stock",
    "Call me on +44 20 7946 0958 about order #100234, is it waterproof?",
    f"admin {ADMIN_KEY} token sk-live_4f9a8b7c6d5e4f3a2b1c: what's the warranty on the Buttermere?",
]


def _cases() -> list[dict[str, Any]]:
    """Every not-recorded and off-topic case, and the first case of each other category (a fast subset)."""
    cases = [json.loads(line) for line in CASES.read_text("utf-8").splitlines() if line.strip()]
    seen: set[str] = set()
    out = []
    for case in cases:
        category = case["category"]
        if category in ("not_recorded", "off_topic") or category not in seen:
            out.append(case)
        seen.add(category)
    return out


@dataclass
class Run:
    cases: list[dict[str, Any]]
    asked: int
    log: Path
    report: Path
    index: Any
    admin: dict[str, httpx.Response]


def _ask_body(case: dict[str, Any]) -> dict[str, Any]:
    return {k: case[k] for k in ("query", "ids", "context") if k in case}


async def _mcp_asks(url: str, queries: list[str]) -> None:
    async with mcp_client(url, {"Authorization": f"Bearer {AGENT_KEY}"}) as client:
        for query in queries:
            result = await client.call_tool("ask_business", {"query": query})
            assert not result.is_error, result
            assert_ask_response(result.structured_content)


@pytest.fixture(scope="module")
def run(sample_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    from ask_engine.cli import main
    from ask_engine.config import Settings
    from ask_engine.engine import Engine
    from ask_engine.server.app import create_app

    work = tmp_path_factory.mktemp("insights")
    settings = Settings(
        agent_keys={AGENT_KEY: "platform"},
        admin_key=ADMIN_KEY,
        trust_profiles=True,
        rate_limit_per_minute=100_000,
        rate_limit_per_hour=1_000_000,
        question_log=True,
        question_log_path=str(work / "questions.sqlite3"),
        store_path=str(work / "conversations.sqlite3"),
    )
    cases = _cases()
    app = create_app([sample_index], settings)  # `serve`'s own path: open_shops opens the log from the settings
    headers = {"Authorization": f"Bearer {AGENT_KEY}", "UCP-Agent": PROFILE}
    admin: dict[str, httpx.Response] = {}
    with serve(app) as server, httpx.Client(base_url=server.base_url, timeout=120) as http:
        for case in cases[:-3]:
            assert_ask_response(http.post("/api/ucp/v1/ask", json=_ask_body(case), headers=headers).json())
        # the last cases go through the shop MCP with the official client: every binding lands in the log
        asyncio.run(_mcp_asks(server.base_url + "/mcp", [c["query"] for c in cases[-3:]]))
        for query in PERSONAL_QUERIES:
            assert_ask_response(http.post("/api/ucp/v1/ask", json={"query": query}, headers=headers).json())
        admin["none"] = http.get("/admin/insights")
        admin["agent"] = http.get("/admin/insights", headers={"Authorization": f"Bearer {AGENT_KEY}"})
        admin["html"] = http.get("/admin/insights", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
        admin["json"] = http.get("/admin/insights.json", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    # the server has stopped: its lifespan closed the log, writing what was queued
    log = Path(settings.question_log_path or "")
    out = work / "report"
    assert main(["report", "--log", str(log), "--index", str(sample_index), "--out", str(out)]) == 0
    engine = Engine.open(sample_index, embedder=app.state.services[0].engine.embedder)
    asked = [c for c in cases if c["query"].strip()] + PERSONAL_QUERIES  # a blank query is not logged: nothing asked
    yield Run(cases, len(asked), log, out, engine.index, admin)
    engine.close()


def _soup(run: Run) -> BeautifulSoup:
    return BeautifulSoup((run.report / "report.html").read_text("utf-8"), "html.parser")


def test_every_answer_is_logged_once_with_its_outcome(run: Run) -> None:
    from ask_engine.insights.log import read_log

    entries = read_log(run.log)
    assert len(entries) == run.asked
    outcomes = {e.outcome for e in entries}
    assert {"answered", "not_recorded", "couldnt_find", "operation_requested"} <= outcomes
    assert all(e.index_version == run.index.version and e.language == "en" for e in entries)


def test_report_lists_unrecorded_attributes_by_product_type(run: Run) -> None:
    data = json.loads((run.report / "report.json").read_text("utf-8"))
    soup = _soup(run)
    types_shown = {h.get_text(" ", strip=True).split(" (")[0] for h in soup.select("h3.product-type")}
    rows = soup.select("tr.missing-field")
    # every product type and field of report.json is on the page
    assert {t["product_type"] for t in data["missing_fields"]} == types_shown
    assert len(rows) == sum(len(t["fields"]) for t in data["missing_fields"])
    # the not-recorded cases about one product: that product's type lists the attribute asked about
    expected = 0
    found = 0
    for case in run.cases:
        links = [x for x in case["expect"].get("links", []) if x.get("type") == "product" and x.get("id")]
        if case["category"] != "not_recorded" or len(links) != 1:
            continue
        expected += 1
        doc = next(d for d in run.index.documents.values() if d.gid == links[0]["id"])
        by_type = next((t for t in data["missing_fields"] if t["product_type"] == doc.product_type), None)
        if by_type and any(doc.title in [p["title"] for p in f["products"]] for f in by_type["fields"]):
            found += 1
    assert expected >= 8
    assert found >= expected - 2, (found, expected)  # the engine answers one or two of them from a description
    warranty = [f for t in data["missing_fields"] for f in t["fields"] if f["field"] == "warranty"]
    assert warranty and all(f["summary"].startswith("warranty: ") for f in warranty)
    assert "record it as a metafield" in soup.select_one("#missing-fields").get_text()


def test_report_lists_the_off_topic_questions(run: Run) -> None:
    listed = {td.get_text(strip=True) for td in _soup(run).select("tr.off-topic td:first-child")}
    off_topic = {c["query"] for c in run.cases if c["category"] == "off_topic"}
    assert len(off_topic) == 8
    assert off_topic <= listed


def test_report_groups_unanswered_questions_into_topics_with_plots_inline(run: Run) -> None:
    soup = _soup(run)
    data = json.loads((run.report / "report.json").read_text("utf-8"))
    unanswered = data["totals"]["by_outcome"]["not_recorded"] + data["totals"]["by_outcome"]["couldnt_find"]
    assert sum(t["questions"] for t in data["topics"]) == unanswered
    assert 1 < len(data["topics"]) < unanswered  # grouped, but not into one lump
    assert len(soup.select("div.topic")) == len(data["topics"])
    assert soup.select_one("#plot-per-day svg") is not None and soup.select_one("#plot-fields svg") is not None
    assert not soup.select("script") and not soup.select("link[href]")  # self-contained: viewable offline


def test_log_holds_no_key_email_phone_or_order_number(run: Run) -> None:
    from ask_engine.insights.log import read_log

    raw = b"".join(p.read_bytes() for p in run.log.parent.glob(run.log.name + "*"))
    for what, value in PERSONAL.items():
        assert value.encode() not in raw, what
    assert b"key_" not in raw and b"conv_" not in raw  # no agent key id, no conversation id
    assert b"jane" not in raw.lower()  # nor a piece of the email in a missing field read from the query's words
    kept = [e.query for e in read_log(run.log) if "[" in e.query]
    assert len(kept) == len(PERSONAL_QUERIES)
    assert all(("[key]" in q) or ("[phone]" in q) for q in kept)


def test_live_report_is_admin_only(run: Run) -> None:
    assert run.admin["none"].status_code == 401
    assert run.admin["agent"].status_code == 401  # an agent key never opens the admin endpoint
    assert run.admin["agent"].headers["WWW-Authenticate"].startswith("Bearer")
    assert run.admin["agent"].json()["messages"][0]["code"] == "unauthorized"
    html = run.admin["html"]
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "Fields shoppers ask for that you have not recorded" in html.text
    live = run.admin["json"].json()
    assert live["totals"]["questions"] == run.asked
    assert live["missing_fields"] == json.loads((run.report / "report.json").read_text("utf-8"))["missing_fields"]


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (Debian: apt-get install chromium)")
def test_report_opens_in_headless_chromium_without_console_errors(run: Run, tmp_path: Path) -> None:
    from PIL import Image

    page = open_page((run.report / "report.html").resolve().as_uri())
    assert page.errors == []
    assert page.title.startswith("What shoppers asked")
    shot = tmp_path / "report.png"
    shot.write_bytes(page.screenshot)
    with Image.open(shot) as image:
        assert image.size == (1200, 1600)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # text, plot colours and rules: not a blank page
    shutil.copy(shot, run.report / "report.png")


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (Debian: apt-get install chromium)")
def test_the_browser_check_catches_a_page_with_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text('<title>x</title><img src="missing.png"><script>console.error("broken")</script>', "utf-8")
    errors = open_page(bad.as_uri()).errors
    assert any("broken" in e for e in errors)
    assert any("missing.png" in e for e in errors)
