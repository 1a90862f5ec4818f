"""UCP MCP (/ucp/mcp) and shop MCP (/mcp) over the official MCP client (streamable HTTP) against a real server:
tools/list, ask_business, every row of the protocol's error table as JSON-RPC errors (with the HTTP status),
conversations and idempotency."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from ask_engine.config import Settings
from ask_engine.models import MAX_CONTEXT_BYTES, MAX_IDS, MAX_QUERY_CHARS
from ask_engine.server.auth import key_id
from tests.server_helpers import (
    BROKEN_STORE,
    FAILING,
    JSONRPC_ACCEPT,
    KEY_A,
    KEY_B,
    SECRET,
    Stack,
    assert_ask_response,
    assert_error_response,
    assert_no_leak,
    mcp_client,
    server_stack,
    text_json,
    tools_call,
)

UCP_MCP = "/ucp/mcp"
SHOP_MCP = "/mcp"


@pytest.fixture(scope="module")
def stack(sample_index: Path, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with server_stack(sample_index, embedder, tmp_path_factory.mktemp("mcp")) as running:
        yield running


def meta(stack: Stack, profile: str = "good.json", **extra: Any) -> dict[str, Any]:
    return {"ucp-agent": {"profile": stack.profile(profile)}, **extra}


async def call(url: str, arguments: Any, *, key: dict[str, str] | None = None, tool: str = "ask_business") -> Any:
    """The tool result, or the MCPError it raised (caught inside the client: leaving it would wrap the error)."""
    async with mcp_client(url, KEY_A if key is None else key) as client:
        try:
            return await client.call_tool(tool, arguments)
        except MCPError as exc:
            return exc


def call_sync(url: str, arguments: Any, **kw: Any) -> Any:
    result = asyncio.run(call(url, arguments, **kw))
    assert not isinstance(result, MCPError), (result.code, result.message, result.data)
    return result


def error_of(url: str, arguments: Any, **kw: Any) -> MCPError:
    result = asyncio.run(call(url, arguments, **kw))
    assert isinstance(result, MCPError), result
    return result


def raw_post(
    stack: Stack, path: str, payload: Any, *, key: dict[str, str] | None = None, shop: str | None = None
) -> httpx.Response:
    hdrs = {**JSONRPC_ACCEPT, **(KEY_A if key is None else key)}
    return httpx.post(stack.url(path, shop), json=payload, headers=hdrs, timeout=60)


def structured(result: Any) -> dict[str, Any]:
    assert result.is_error is False
    body = result.structured_content
    assert text_json(result) == body  # the text item holds the same JSON
    assert isinstance(body, dict)
    return body


# --- tools/list and ask_business ---------------------------------------------------------------------


def test_tools_list_shows_ask_business_with_meta_and_ask_on_the_ucp_route(stack: Stack) -> None:
    async def listing() -> Any:
        async with mcp_client(stack.url(UCP_MCP)) as client:
            return await client.list_tools()

    tools = asyncio.run(listing()).tools
    assert [t.name for t in tools] == ["ask_business", "search_catalog", "lookup_catalog", "get_product"]
    assert all("$ref" not in str(t.input_schema) and t.annotations.read_only_hint for t in tools)
    schema = tools[0].input_schema
    assert set(schema["required"]) == {"meta", "ask"}
    assert "profile" in schema["properties"]["meta"]["properties"]["ucp-agent"]["properties"]
    ask = schema["properties"]["ask"]
    assert {"query", "ids", "conversation", "context", "signals"} <= set(ask["properties"])
    assert ask["properties"]["query"]["maxLength"] == MAX_QUERY_CHARS
    assert "$ref" not in str(schema)  # self-contained: MCP hosts resolve nothing
    assert tools[0].annotations.read_only_hint is True


def test_tools_list_shows_the_ask_fields_directly_on_the_shop_route(stack: Stack) -> None:
    async def listing() -> Any:
        async with mcp_client(stack.url(SHOP_MCP)) as client:
            return await client.list_tools()

    tools = asyncio.run(listing()).tools
    assert [t.name for t in tools] == ["ask_business", "search_products"]
    schema = tools[0].input_schema
    assert schema["required"] == ["query"]
    assert "meta" not in schema["properties"]
    assert schema["properties"]["ids"]["maxItems"] == MAX_IDS


def test_ucp_ask_business_returns_structured_content_and_the_same_json_as_text(stack: Stack) -> None:
    result = call_sync(
        stack.url(UCP_MCP), {"meta": meta(stack), "ask": {"query": "How long do I have to return an item?"}}
    )
    body = assert_ask_response(structured(result))
    assert body["ucp"]["version"] == stack.version
    assert any(link["type"] == "refund_policy" for link in body.get("links", []))


def test_shop_ask_business_takes_the_ask_fields_directly(stack: Stack) -> None:
    result = call_sync(stack.url(SHOP_MCP), {"query": "What is the price of the Tarn Wellington Boot?"})
    body = assert_ask_response(structured(result))
    assert "59" in body["answer"]["plain"]


def test_prefixed_shop_routes_serve_mcp_too(stack: Stack) -> None:
    result = call_sync(
        stack.url(UCP_MCP, "fjord-fell"), {"meta": meta(stack), "ask": {"query": "Do you ship to Norway?"}}
    )
    assert_ask_response(structured(result))


# --- the error table over MCP ------------------------------------------------------------------------


def test_malformed_json_is_a_parse_error(stack: Stack) -> None:
    response = httpx.post(
        stack.url(UCP_MCP), content=b'{"jsonrpc": "2.0", "id": 1, "method": ', headers={**JSONRPC_ACCEPT, **KEY_A}
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


def raw_bytes(stack: Stack, path: str, body: bytes) -> httpx.Response:
    return httpx.post(stack.url(path), content=body, headers={**JSONRPC_ACCEPT, **KEY_A}, timeout=60)


@pytest.mark.parametrize("route", [UCP_MCP, SHOP_MCP])
def test_a_body_over_the_cap_is_a_jsonrpc_32602_error_not_413_text(stack: Stack, route: str) -> None:
    envelope = json.dumps(tools_call("ask_business", {"query": "q"})).encode()
    response = raw_bytes(stack, route, envelope + b" " * (Settings().max_body_bytes + 17 * 1024))
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/json")
    message = response.json()
    assert message["id"] is None and message["error"]["code"] == -32602
    assert message["error"]["data"][0]["code"] == "invalid_input"
    assert "larger than" in message["error"]["data"][0]["content"]


@pytest.mark.parametrize(("route", "wrap"), [(UCP_MCP, True), (SHOP_MCP, False)])
def test_a_lone_surrogate_is_32602_with_the_path_in_the_ask(stack: Stack, route: str, wrap: bool) -> None:
    ask = '{"query": "mug \\ud800 safe?"}'
    arguments = f'{{"meta": {json.dumps(meta(stack))}, "ask": {ask}}}' if wrap else ask
    body = f'{{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {{"name": "ask_business", "arguments": {arguments}}}}}'
    response = raw_bytes(stack, route, body.encode())
    assert response.status_code == 400
    message = response.json()
    assert message["id"] == 7 and message["error"]["code"] == -32602
    assert [m["path"] for m in message["error"]["data"]] == ["$.query"]


@pytest.mark.parametrize("route", [UCP_MCP, SHOP_MCP])
def test_arguments_that_are_not_an_object_are_32602_saying_so(stack: Stack, route: str) -> None:
    response = raw_post(stack, route, tools_call("ask_business", [{"query": "q"}], request_id=3))
    assert response.status_code == 400
    message = response.json()
    assert message["id"] == 3 and message["error"]["code"] == -32602
    data = message["error"]["data"]
    assert data[0]["code"] == "invalid_input" and data[0]["path"] == "$"
    assert "JSON object" in data[0]["content"] and "list" in data[0]["content"]


@pytest.mark.parametrize("bad_id", [{"a": 1}, [1], None, True, 1.5])
def test_a_jsonrpc_id_that_is_not_a_string_or_integer_is_32600(stack: Stack, bad_id: Any) -> None:
    payload = {**tools_call("ask_business", {"query": "q"}), "id": bad_id}
    response = raw_post(stack, SHOP_MCP, payload)
    assert response.status_code == 400
    message = response.json()
    assert message["id"] is None and message["error"]["code"] == -32600


def test_an_ask_within_every_field_limit_passes_the_mcp_cap(stack: Stack) -> None:
    from tests.test_server_rest import worst_case_ask_body

    ask = json.loads(worst_case_ask_body())
    result = call_sync(stack.url(SHOP_MCP), ask)
    assert_ask_response(structured(result))


@pytest.mark.parametrize(
    ("ask", "path"),
    [
        ({"query": "x" * (MAX_QUERY_CHARS + 1)}, "$.query"),
        ({"query": "which?", "ids": [f"sku-{i}" for i in range(MAX_IDS + 1)]}, "$.ids"),
        ({"query": "ship?", "context": {"intent": "x" * (MAX_CONTEXT_BYTES + 1)}}, "$.context"),
        ({"ids": ["tarn-wellington-boot"]}, "$.query"),
        ("not an object", "$"),
    ],
)
def test_invalid_input_is_32602_with_the_messages_as_data(stack: Stack, ask: Any, path: str) -> None:
    for url, arguments in ((stack.url(UCP_MCP), {"meta": meta(stack), "ask": ask}), (stack.url(SHOP_MCP), ask)):
        if not isinstance(arguments, dict):
            continue  # MCP arguments themselves are always an object
        error = error_of(url, arguments)
        assert error.code == -32602
        assert isinstance(error.data, list)
        assert path in [m["path"] for m in error.data]
        assert all(m["code"] == "invalid_input" and m["severity"] == "requires_buyer_input" for m in error.data)


def test_missing_ask_is_32602(stack: Stack) -> None:
    error = error_of(stack.url(UCP_MCP), {"meta": meta(stack)})
    assert error.code == -32602
    assert error.data[0]["code"] == "invalid_input"


@pytest.mark.parametrize(
    ("arguments_meta", "code"),
    [
        (None, "invalid_profile_url"),
        ({}, "invalid_profile_url"),
        ({"ucp-agent": {"profile": 42}}, "invalid_profile_url"),
        ({"ucp-agent": {"profile": "http://example.com/p.json"}}, "invalid_profile_url"),
        ("{missing}", "profile_unreachable"),
        ("{not-json}", "profile_malformed"),
        ("{old-version.json}", "version_unsupported"),
    ],
)
def test_profile_failures_are_32001_with_the_code_in_data(stack: Stack, arguments_meta: Any, code: str) -> None:
    if isinstance(arguments_meta, str):
        arguments_meta = meta(stack, arguments_meta.strip("{}"))
    arguments: dict[str, Any] = {"ask": {"query": "Do you ship to Norway?"}}
    if arguments_meta is not None:
        arguments["meta"] = arguments_meta
    error = error_of(stack.url(UCP_MCP), arguments)
    assert error.code == -32001
    assert error.data["code"] == code
    assert error.data["content"]


def test_profile_failures_also_carry_the_http_status(stack: Stack) -> None:
    payload = tools_call("ask_business", {"meta": meta(stack, "missing"), "ask": {"query": "q"}})
    response = raw_post(stack, UCP_MCP, payload)
    assert response.status_code == 424
    assert response.json()["error"]["data"]["code"] == "profile_unreachable"


def test_no_capability_in_common_is_a_result_with_an_error_response(stack: Stack) -> None:
    result = call_sync(
        stack.url(UCP_MCP), {"meta": meta(stack, "no-ask.json"), "ask": {"query": "Do you ship to Norway?"}}
    )
    assert_error_response(structured(result), "capabilities_incompatible")


@pytest.mark.parametrize("key", [{}, {"Authorization": "Bearer wrong"}, {"X-API-Key": "wrong"}])
@pytest.mark.parametrize("route", [UCP_MCP, SHOP_MCP])
def test_missing_or_wrong_key_is_32000_unauthorized(stack: Stack, key: dict[str, str], route: str) -> None:
    arguments = {"meta": meta(stack), "ask": {"query": "q"}} if route == UCP_MCP else {"query": "q"}
    error = error_of(stack.url(route), arguments, key=key)
    assert error.code == -32000
    assert error.message == "Unauthorized"
    assert error.data["code"] == "unauthorized" and "agent key" in error.data["content"]
    response = raw_post(stack, route, tools_call("ask_business", arguments), key=key)
    # Not 401: in MCP a 401 means "authorize with OAuth", and hosts (the MCP Inspector) start an OAuth flow on it.
    assert response.status_code == 403
    assert "www-authenticate" not in response.headers
    assert response.json()["error"]["message"] == "Unauthorized"


def test_rate_limit_is_32000_with_retry_after(stack: Stack) -> None:
    url = stack.limited.base_url + UCP_MCP
    arguments = {"meta": meta(stack), "ask": {"query": "Do you ship to Norway?"}}

    async def three() -> tuple[list[Any], MCPError]:
        async with mcp_client(url, KEY_B) as client:
            ok = [await client.call_tool("ask_business", arguments) for _ in range(2)]
            with pytest.raises(MCPError) as caught:
                await client.call_tool("ask_business", arguments)
            return ok, caught.value

    ok, error = asyncio.run(three())
    assert [r.is_error for r in ok] == [False, False]
    assert error.code == -32000
    assert error.data["code"] == "rate_limited"
    assert 1 <= error.data["retry_after"] <= 60
    response = httpx.post(
        url, json=tools_call("ask_business", arguments), headers={**JSONRPC_ACCEPT, **KEY_B}, timeout=60
    )
    assert response.status_code == 429
    assert int(response.headers["retry-after"]) >= 1


def test_idempotency_store_down_is_32000_and_503(stack: Stack) -> None:
    arguments = {"meta": meta(stack, **{"idempotency-key": "down-1"}), "ask": {"query": "Do you ship to Norway?"}}
    error = error_of(stack.url(UCP_MCP, BROKEN_STORE), arguments)
    assert error.code == -32000
    assert error.data["code"] == "unavailable"
    assert error.data["retry_after"] >= 1
    response = raw_post(stack, UCP_MCP, tools_call("ask_business", arguments), shop=BROKEN_STORE)
    assert response.status_code == 503
    assert int(response.headers["retry-after"]) >= 1


@pytest.mark.parametrize("route", [UCP_MCP, SHOP_MCP])
def test_unexpected_failure_is_32603_without_internals(stack: Stack, route: str) -> None:
    arguments = {"meta": meta(stack), "ask": {"query": "q"}} if route == UCP_MCP else {"query": "q"}
    error = error_of(stack.url(route, FAILING), arguments)
    assert error.code == -32603
    assert_no_leak(f"{error.message} {error.data}", SECRET, "RuntimeError", "boom")
    response = raw_post(stack, route, tools_call("ask_business", arguments), shop=FAILING)
    assert response.status_code == 500
    assert_no_leak(response.text, SECRET, "RuntimeError", "boom")


def test_an_unknown_tool_is_a_protocol_error(stack: Stack) -> None:
    error = error_of(stack.url(SHOP_MCP), {"query": "q"}, tool="delete_everything")
    assert error.code == -32602


# --- idempotency and conversations -------------------------------------------------------------------


def test_idempotency_key_in_meta_replays_and_conflicts(stack: Stack) -> None:
    url = stack.url(UCP_MCP)
    ask = {"query": "Is the Tarn Wellington Boot waterproof?"}

    async def scenario() -> tuple[Any, Any, MCPError]:
        async with mcp_client(url, KEY_A) as client:
            first = await client.call_tool(
                "ask_business", {"meta": meta(stack, **{"idempotency-key": "m-1"}), "ask": ask}
            )
            again = await client.call_tool(
                "ask_business", {"meta": meta(stack, **{"idempotency-key": "m-1"}), "ask": ask}
            )
            with pytest.raises(MCPError) as caught:
                await client.call_tool(
                    "ask_business", {"meta": meta(stack, **{"idempotency-key": "m-1"}), "ask": {"query": "other?"}}
                )
            return first, again, caught.value

    first, again, conflict = asyncio.run(scenario())
    assert structured(first) == structured(again)
    assert conflict.code == -32000
    assert conflict.data["code"] == "idempotency_conflict"


def test_an_invalid_idempotency_key_in_meta_is_32602(stack: Stack) -> None:
    arguments = {"meta": meta(stack, **{"idempotency-key": "spaces are not allowed"}), "ask": {"query": "q"}}
    error = error_of(stack.url(UCP_MCP), arguments)
    assert error.code == -32602
    assert error.data[0]["code"] == "invalid_input"
    assert "idempotency-key" in error.data[0]["content"]


def test_concurrent_mcp_retries_append_one_turn(stack: Stack) -> None:
    url = stack.url(UCP_MCP)
    first = structured(
        call_sync(url, {"meta": meta(stack), "ask": {"query": "Is the Tarn Wellington Boot waterproof?"}})
    )
    conversation_id = first["conversation"]["id"]
    owner = key_id("key-a")
    before = len(stack.store.history(conversation_id, owner))
    arguments = {
        "meta": meta(stack, **{"idempotency-key": "mcp-retries"}),
        "ask": {"query": "and how much is it?", "conversation": {"id": conversation_id}},
    }

    async def retries() -> list[Any]:
        async with mcp_client(url, KEY_A) as client:
            return list(await asyncio.gather(*[client.call_tool("ask_business", arguments) for _ in range(10)]))

    bodies = [structured(r) for r in asyncio.run(retries())]
    assert all(b == bodies[0] for b in bodies)
    assert len(stack.store.history(conversation_id, owner)) == before + 1


@pytest.mark.parametrize("route", [UCP_MCP, SHOP_MCP])
def test_follow_up_over_mcp_resolves_against_the_previous_turn(stack: Stack, route: str) -> None:
    def arguments(ask: dict[str, Any]) -> dict[str, Any]:
        return {"meta": meta(stack), "ask": ask} if route == UCP_MCP else ask

    async def two_turns() -> tuple[dict[str, Any], dict[str, Any]]:
        async with mcp_client(stack.url(route), KEY_A) as client:
            first = structured(
                await client.call_tool("ask_business", arguments({"query": "Is the Tarn Wellington Boot waterproof?"}))
            )
            follow = {"query": "and how much is it?", "conversation": {"id": first["conversation"]["id"]}}
            second = structured(await client.call_tool("ask_business", arguments(follow)))
            return first, second

    first, second = asyncio.run(two_turns())
    assert_ask_response(second)
    assert second["conversation"]["id"] == first["conversation"]["id"]
    assert "59" in second["answer"]["plain"]


def test_a_foreign_key_replaying_a_conversation_over_mcp_gets_a_new_one(stack: Stack) -> None:
    url = stack.url(UCP_MCP)
    first = structured(
        call_sync(url, {"meta": meta(stack), "ask": {"query": "Is the Tarn Wellington Boot waterproof?"}})
    )
    stolen = first["conversation"]["id"]
    replay = structured(
        call_sync(
            url,
            {"meta": meta(stack), "ask": {"query": "and how much is it?", "conversation": {"id": stolen}}},
            key=KEY_B,
        )
    )
    assert replay["conversation"]["id"] != stolen
    assert any(
        m.get("code") == "not_found" and m.get("path") == "$.conversation.id" for m in replay.get("messages", [])
    )
    assert "Tarn" not in str(replay)
