"""The README and docs/ as a newcomer reads them: links resolve inside the repository, the example product is the
sample shop's, every Settings field is documented, and the MCP client examples run against a served sample shop."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, SAMPLE_SHOP

README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "eval" / "README.md", ROOT / "bench" / "README.md"]
DEMO = "http://127.0.0.1:8000"


def _blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text("utf-8"), re.S)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve_inside_the_repository(doc: Path) -> None:
    text = doc.read_text("utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (doc.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{doc.name} links to {target}, which does not exist"
        assert path.is_relative_to(ROOT), f"{doc.name} links to {target}, outside the repository"
    if doc == README:
        assert "../shared" not in text  # a clone has no ../shared


def test_readme_says_how_to_run_ask_engine_from_a_plain_shell() -> None:
    assert "source .venv/bin/activate" in README.read_text("utf-8")


def test_readme_example_products_are_the_sample_shops() -> None:
    full = {p["id"]: p for p in json.loads((SAMPLE_SHOP / "products.json").read_text("utf-8"))["products"]}
    block = next(b for b in _blocks(README, "json") if '"products"' in b)
    shown = json.loads(block)["products"]
    assert "tarn-wellington-boot" in {p["handle"] for p in shown}
    for product in shown:
        real = full[product["id"]]
        for key, value in product.items():
            if key == "variants":
                variants = {v["id"]: v for v in real["variants"]}
                for variant in value:
                    assert variant.items() <= variants[variant["id"]].items(), variant
            elif key == "metafields":
                for field in value:
                    assert field in real["metafields"], field
            elif key == "options":
                for option in value:
                    same = next(o for o in real["options"] if o["name"] == option["name"])
                    assert set(option["values"]) <= set(same["values"]) and option["position"] == same["position"]
            elif key == "body_html":  # trimmed: every piece of text shown is the shop's
                for piece in re.split(r"<[^>]+>", value):
                    assert piece.strip() in real["body_html"], piece
            else:
                assert real[key] == value, key


def test_every_settings_field_is_documented_in_the_readme() -> None:
    from ask_engine.config import Settings

    text = README.read_text("utf-8")
    missing = [name for name in Settings.model_fields if f"| `{name}` |" not in text]
    assert missing == []


@pytest.fixture(scope="module")
def demo_servers(sample_index: Path, embedder: Any) -> Iterator[dict[str, str]]:
    """The sample shop served as `make serve` serves it (auth off), and with the agent key docs/server.md uses."""
    from ask_engine.config import Settings
    from ask_engine.engine import Engine
    from ask_engine.server.app import create_app
    from tests.server_helpers import serve

    engine = Engine.open(sample_index, embedder=embedder)
    try:
        keyed = Settings(agent_keys={"demo-key-1": "Demo Platform"})
        with (
            serve(create_app(settings=Settings(), engines={"fjord-fell": engine})) as open_demo,
            serve(create_app(settings=keyed, engines={"fjord-fell": engine})) as keyed_demo,
        ):
            yield {"open": open_demo.base_url, "keyed": keyed_demo.base_url}
    finally:
        engine.close()


def _run(code: str, base: str) -> str:
    assert DEMO in code
    done = subprocess.run(
        [sys.executable, "-c", code.replace(DEMO, base)], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("doc", [README, ROOT / "docs" / "server.md"], ids=lambda p: p.name)
def test_mcp_client_examples_run_against_the_served_sample_shop(doc: Path, demo_servers: dict[str, str]) -> None:
    examples = [b for b in _blocks(doc, "python") if "from mcp import Client" in b]
    assert examples
    for code in examples:
        assert "async def main()" in code and "asyncio.run(main())" in code
        base = demo_servers["keyed" if "Bearer demo-key-1" in code else "open"]
        out = _run(code, base)
        assert "The shop has not recorded whether the Tarn Wellington Boot is waterproof" in out, out


def test_a2a_client_example_runs_against_the_served_sample_shop(
    sample_index: Path, embedder: Any, tmp_path: Path
) -> None:
    """The README's A2A example against the sample shop served as `make serve` serves it (auth off, a store)."""
    from ask_engine.config import Settings
    from ask_engine.conversations import SqliteStore
    from ask_engine.engine import Engine
    from ask_engine.server.app import create_app
    from tests.server_helpers import serve

    (code,) = [b for b in _blocks(README, "python") if "from a2a.client import" in b]
    assert "async def main()" in code and "asyncio.run(main())" in code
    store = SqliteStore(tmp_path / "conversations.sqlite3")
    engine = Engine.open(sample_index, embedder=embedder, store=store)
    try:
        with serve(
            create_app(settings=Settings(), engines={"fjord-fell": engine}, stores={"fjord-fell": store})
        ) as demo:
            out = _run(code, demo.base_url)
    finally:
        engine.close()
        store.close()
    first, follow_up = out.strip().splitlines()[-2:]
    assert "The shop has not recorded whether the Tarn Wellington Boot is waterproof" in first
    assert "59" in follow_up  # the follow-up resolved against the first turn: the boot's price
