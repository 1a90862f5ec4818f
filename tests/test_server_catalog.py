"""The catalog capability through the served app (uvicorn on loopback): UCP REST `catalog/search|lookup|product`,
the UCP MCP tools and the shop MCP's `search_products` over the official MCP client, on the real sample index and
embedding model; every response is validated against the vendored catalog schemas and the shipped answer schema."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from ask_engine.catalog.answer import ANSWER_EXTENSION, ANSWER_VERSION, CODE_NOT_STOCKED, CODE_RULED_OUT
from ask_engine.catalog.ucp import LOOKUP, SEARCH, validator
from tests.server_helpers import KEY_A, mcp_client, serve

REST = "/api/ucp/v1/catalog"


def _platform(version: str, *, extension: bool) -> dict[str, Any]:
    caps: dict[str, Any] = {
        name: [{"version": version, "spec": "https://ucp.dev/x", "schema": "https://ucp.dev/y"}]
        for name in (SEARCH, LOOKUP)
    }
    if extension:
        caps[ANSWER_EXTENSION] = [{"version": ANSWER_VERSION, "extends": SEARCH, "schema": "https://example.invalid/s"}]
    return {"ucp": {"version": version, "services": {}, "capabilities": caps, "payment_handlers": {}}}


def _profiles(version: str) -> Any:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, PlainTextResponse
    from starlette.routing import Route

    def fixed(body: Any) -> Any:
        async def endpoint(_: Any) -> Any:
            return body

        return endpoint

    return Starlette(
        routes=[
            Route("/catalog.json", fixed(JSONResponse(_platform(version, extension=False)))),
            Route("/catalog-answer.json", fixed(JSONResponse(_platform(version, extension=True)))),
            Route("/healthz", fixed(PlainTextResponse("ok"))),
        ]
    )


class Servers:
    def __init__(self, main: str, profiles: str) -> None:
        self.main = main
        self.profiles = profiles

    def agent(self, name: str = "catalog.json") -> dict[str, str]:
        return {**KEY_A, "UCP-Agent": f'profile="{self.profiles}/{name}"'}


@pytest.fixture(scope="module")
def servers(sample_index: Path, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    from ask_engine.config import Settings
    from ask_engine.conversations import SqliteStore
    from ask_engine.engine import Engine
    from ask_engine.server.app import create_app

    settings = Settings(agent_keys={"key-a": "Agent A"}, rate_limit_per_minute=100_000, rate_limit_per_hour=1_000_000)
    store = SqliteStore(tmp_path_factory.mktemp("catalog") / "c.sqlite3")
    engine = Engine.open(sample_index, settings, embedder=embedder, store=store)
    try:
        app = create_app(settings=settings, engines={"fjord-fell": engine}, stores={"fjord-fell": store})
        with serve(_profiles(settings.ucp_version)) as profiles, serve(app) as main:
            yield Servers(main.base_url, profiles.base_url)
    finally:
        store.close()


def _valid(name: str, body: Any) -> dict[str, Any]:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator(name).iter_errors(body)]
    assert errors == [], errors
    assert isinstance(body, dict)
    return body


def _valid_answer(answer: Any) -> dict[str, Any]:
    from jsonschema import Draft202012Validator

    from ask_engine.server.catalog_routes import answer_schema

    errors = [
        f"{list(e.absolute_path)}: {e.message}" for e in Draft202012Validator(answer_schema()).iter_errors(answer)
    ]
    assert errors == [], errors
    assert isinstance(answer, dict)
    return answer


def _post(servers: Servers, op: str, body: Any, profile: str = "catalog.json") -> httpx.Response:
    return httpx.post(f"{servers.main}{REST}/{op}", json=body, headers=servers.agent(profile), timeout=60)


def _shop_search(servers: Servers, arguments: dict[str, Any]) -> dict[str, Any]:
    async def go() -> Any:
        async with mcp_client(f"{servers.main}/mcp", KEY_A) as client:
            return await client.call_tool("search_products", arguments)

    result = asyncio.run(go())
    assert not result.is_error, result
    body = result.structured_content
    _valid("search_response", {"ucp": {"version": "2026-08-25"}, **{k: body[k] for k in ("products", "messages")}})
    return _valid_answer(
        {k: v for k, v in body.items() if k not in ("products", "pagination", "messages", "conversation")}
    )


# --- the three cases of the issue, on the shop's own MCP ----------------------------------------------------


def test_waterproof_boots_under_100_pounds_reads_the_budget_and_rules_out_the_dearer_pairs(servers: Servers) -> None:
    body = _shop_search(servers, {"query": "waterproof boots under £100"})
    understood = body["understood"]
    assert understood["max_price_minor"] == 10000
    assert {"key": "waterproof", "value": "true"}.items() <= understood["required_attributes"][0].items()
    assert body["currency"] == "GBP" and body["results"]
    for result in body["results"]:
        assert result["price_minor"] <= 10000
        assert {v["outcome"] for v in result["verdicts"]} == {"satisfied"}
        sources = {v["constraint"]: v["source"] for v in result["verdicts"]}
        assert sources == {"attribute": "enrichment", "max_price": "live_price"}
    over = [
        r
        for r in body["ruled_out"]
        if any(v["constraint"] == "max_price" and v["outcome"] == "failed" for v in r["verdicts"])
    ]
    assert over, body["ruled_out"]
    assert body["cheapest_ruled_out_minor"] == min(r["price_minor"] for r in over) > 10000
    # a boot the shop has recorded nothing about waterproofing for is left out, and not called "not waterproof"
    unknown = [v for r in body["ruled_out"] for v in r["verdicts"] if v["outcome"] == "not_assessed"]
    assert all(v["source"] in ("not_recorded", "unenriched") for v in unknown)


def test_kayaks_are_not_stocked_results_empty_and_unrelated_counted(servers: Servers) -> None:
    body = _shop_search(servers, {"query": "Do you sell kayaks?"})
    assert body["results"] == [] and body["ruled_out_count"] == 0
    assert body["unrelated_count"] > 0 and body["relevance_judged"] is True
    rest = _valid("search_response", _post(servers, "search", {"query": "Do you sell kayaks?"}).json())
    assert rest["products"] == []
    assert CODE_NOT_STOCKED in {m.get("code") for m in rest["messages"]}


def test_a_waterproof_jacket_and_warm_gloves_is_two_passes_each_held_to_its_own_requirement(servers: Servers) -> None:
    body = _shop_search(servers, {"query": "a waterproof jacket and warm gloves"})
    assert body["passes"] == 2
    attrs = {(a["key"], a["pass"]) for a in body["understood"]["required_attributes"]}
    assert attrs == {("waterproof", 1), ("warmth", 2)}
    for result in body["results"]:
        keys = {v.get("key") for v in result["verdicts"]}
        assert keys == ({"waterproof"} if result["pass"] == 1 else {"warmth"})
    assert {r["pass"] for r in body["results"]} == {1, 2}


def test_a_search_in_a_conversation_remembers_the_budget_of_an_earlier_message(servers: Servers) -> None:
    first = _shop_search(servers, {"query": "boots under £70"})
    assert first["understood"]["max_price_minor"] == 7000

    async def go() -> Any:
        async with mcp_client(f"{servers.main}/mcp", KEY_A) as client:
            one = await client.call_tool("search_products", {"query": "boots under £70"})
            two = await client.call_tool(
                "search_products",
                {"query": "what about waterproof ones?", "conversation": one.structured_content["conversation"]},
            )
            return two.structured_content

    second = asyncio.run(go())
    remembered = {r["constraint"]: r for r in second["understood"]["remembered"]}
    assert remembered["max_price"]["wanted"] == 7000 and remembered["max_price"]["scope"] == "conversation"
    assert second["understood"]["max_price_minor"] == 7000
    assert all(r["price_minor"] <= 7000 for r in second["results"])


# --- UCP REST ---------------------------------------------------------------------------------------------


def test_rest_search_sends_messages_and_the_verdicts_object_only_when_the_profile_declares_it(servers: Servers) -> None:
    plain = _valid("search_response", _post(servers, "search", {"query": "waterproof boots under £100"}).json())
    assert ANSWER_EXTENSION not in plain and ANSWER_EXTENSION not in plain["ucp"]["capabilities"]
    assert CODE_RULED_OUT in {m.get("code") for m in plain["messages"]}
    assert all(p["price_range"]["min"]["amount"] <= 10000 for p in plain["products"])
    declared = _valid(
        "search_response",
        _post(servers, "search", {"query": "waterproof boots under £100"}, "catalog-answer.json").json(),
    )
    assert declared["ucp"]["capabilities"][ANSWER_EXTENSION] == [{"version": ANSWER_VERSION}]
    answer = _valid_answer(declared[ANSWER_EXTENSION])
    assert answer["understood"]["max_price_minor"] == 10000
    assert [r["id"] for r in answer["results"]] == [p["id"] for p in declared["products"]]


def test_rest_lookup_and_product_resolve_ids_and_say_what_was_not_found(servers: Servers) -> None:
    found = _valid("search_response", _post(servers, "search", {"query": "tent"}).json())["products"][0]
    variant = found["variants"][0]["id"]
    body = _valid("lookup_response", _post(servers, "lookup", {"ids": [found["id"], variant, "no-such-thing"]}).json())
    assert [p["id"] for p in body["products"]] == [found["id"]]
    assert body["messages"] == [{"type": "info", "code": "not_found", "content": "no-such-thing"}]
    product = _valid("product_response", _post(servers, "product", {"id": variant}).json())["product"]
    assert product["variants"][0]["id"] == variant
    missing = _post(servers, "product", {"id": "gid://nowhere/Product/1"})
    assert missing.status_code == 200
    assert missing.json()["ucp"]["status"] == "error" and missing.json()["messages"][0]["severity"] == "unrecoverable"


def test_rest_get_product_narrows_variants_to_the_selected_option_with_availability_signals(servers: Servers) -> None:
    first = _valid("search_response", _post(servers, "search", {"query": "waterproof jacket"}).json())["products"][0]
    option = first["options"][0]
    label = option["values"][0]["label"]
    body = _valid(
        "product_response",
        _post(servers, "product", {"id": first["id"], "selected": [{"name": option["name"], "label": label}]}).json(),
    )
    product = body["product"]
    assert {"name": option["name"], "label": label} in product["selected"]
    assert all({"name": option["name"], "label": label} in v["options"] for v in product["variants"])
    assert all("exists" in value for opt in product["options"] for value in opt["values"])


def test_rest_catalog_refuses_bad_input_in_the_protocols_shape(servers: Servers) -> None:
    for body in ({"query": ""}, {"query": 5}, {"pagination": {"limit": 0}, "query": "x"}, ["not", "an", "object"]):
        response = _post(servers, "search", body)
        assert response.status_code == 400, (body, response.text)
        assert response.json()["messages"][0]["code"] == "invalid_input"
    assert _post(servers, "lookup", {"ids": []}).status_code == 400
    no_agent = httpx.post(f"{servers.main}{REST}/search", json={"query": "tent"}, headers=KEY_A, timeout=30)
    assert no_agent.status_code == 400 and no_agent.json()["messages"][0]["code"] == "invalid_profile_url"
    unauthorized = httpx.post(f"{servers.main}{REST}/search", json={"query": "tent"}, timeout=30)
    assert unauthorized.status_code == 401


def test_discovery_declares_the_catalog_capabilities_and_the_answer_extension_with_its_schema(servers: Servers) -> None:
    profile = httpx.get(f"{servers.main}/.well-known/ucp", timeout=30).json()["ucp"]
    assert {SEARCH, LOOKUP, ANSWER_EXTENSION} <= set(profile["capabilities"])
    [entry] = profile["capabilities"][ANSWER_EXTENSION]
    assert entry["extends"] == SEARCH
    schema = httpx.get(entry["schema"], timeout=30)
    assert schema.status_code == 200 and schema.json()["name"] == ANSWER_EXTENSION
    assert {s["transport"] for s in profile["services"]["dev.ucp.shopping"]} == {"rest", "mcp"}


# --- UCP MCP --------------------------------------------------------------------------------------------------


def test_ucp_mcp_lists_and_serves_the_three_catalog_tools(servers: Servers) -> None:
    meta = {"ucp-agent": {"profile": f"{servers.profiles}/catalog.json"}}

    async def go() -> tuple[Any, ...]:
        async with mcp_client(f"{servers.main}/ucp/mcp", KEY_A) as client:
            tools = await client.list_tools()
            search = await client.call_tool(
                "search_catalog", {"meta": meta, "catalog": {"query": "waterproof boots under £100"}}
            )
            ids = [p["id"] for p in search.structured_content["products"]]
            lookup = await client.call_tool("lookup_catalog", {"meta": meta, "catalog": {"ids": ids}})
            product = await client.call_tool("get_product", {"meta": meta, "catalog": {"id": ids[0]}})
            with pytest.raises(MCPError) as bad:
                await client.call_tool("search_catalog", {"meta": meta, "catalog": {"query": 7}})
            return tools, search, lookup, product, bad.value

    tools, search, lookup, product, bad = asyncio.run(go())
    assert {"ask_business", "search_catalog", "lookup_catalog", "get_product"} <= {t.name for t in tools.tools}
    body = _valid("search_response", search.structured_content)
    assert body["products"] and ANSWER_EXTENSION not in body
    assert body["ucp"]["capabilities"] == {SEARCH: [{"version": body["ucp"]["version"]}]}
    assert len(_valid("lookup_response", lookup.structured_content)["products"]) == len(body["products"])
    assert _valid("product_response", product.structured_content)["product"]["id"] == body["products"][0]["id"]
    assert bad.error.code == -32602 and bad.error.data[0]["code"] == "invalid_input"


# --- a shop's own synonyms (shop.toml [synonyms]) in a served catalog search -------------------------------------

_SYNONYM_SHOP = """[shop]
name = "Harbour Outfitters"
url = "https://harbour.example"
currency = "GBP"
language = "en"
gid_namespace = "harbour"

[synonyms]
"rain jacket" = ["cagoule", "kagool"]
"""


def _synonym_product(pid: int, title: str, product_type: str, price: str) -> dict[str, Any]:
    return {
        "id": pid,
        "title": title,
        "handle": title.lower().replace(" ", "-"),
        "body_html": f"<p>{title}, made for wet days on the coast path.</p>",
        "vendor": "Harbour",
        "product_type": product_type,
        "tags": [],
        "options": [{"name": "Title", "position": 1, "values": ["Default Title"]}],
        "variants": [{"id": pid * 10, "title": "Default Title", "price": price, "available": True}],
    }


@pytest.fixture(scope="module")
def synonym_server(embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    import json

    from ask_engine.config import Settings
    from ask_engine.engine import Engine
    from ask_engine.server.app import create_app
    from tests.shop_helpers import build_inline_shop

    products = [
        _synonym_product(1, "Harbour Packable Rain Jacket", "Rain jackets", "79.00"),
        _synonym_product(2, "Harbour Enamel Mug", "Mugs", "12.00"),
        _synonym_product(3, "Harbour Fleece Hat", "Hats", "18.00"),
    ]
    files = {"shop.toml": _SYNONYM_SHOP, "products.json": json.dumps({"products": products})}
    index = build_inline_shop(tmp_path_factory.mktemp("synonyms") / "harbour", files, embedder)
    settings = Settings(agent_keys={"key-a": "Agent A"}, rate_limit_per_minute=100_000, rate_limit_per_hour=1_000_000)
    engine = Engine.open(index, settings, embedder=embedder)
    app = create_app(settings=settings, engines={"harbour": engine})
    with serve(_profiles(settings.ucp_version)) as profiles, serve(app) as main:
        yield Servers(main.base_url, profiles.base_url)


@pytest.mark.parametrize("query", ["cagoules under £100", "do you sell a kagool?"])
def test_a_served_search_in_the_shoppers_word_finds_what_the_catalogue_calls_it(
    synonym_server: Servers, query: str
) -> None:
    rest = _valid("search_response", _post(synonym_server, "search", {"query": query}).json())
    assert [p["title"] for p in rest["products"]] == ["Harbour Packable Rain Jacket"], rest
    body = _shop_search(synonym_server, {"query": query})
    assert [r["title"] for r in body["results"]] == ["Harbour Packable Rain Jacket"], body["results"]
