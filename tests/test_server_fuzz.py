"""Property-based fuzzing of the REST and MCP inputs against the real server: arbitrary JSON, wrong types, huge
strings, unicode, junk headers. Never a 5xx; every error comes in the protocol's own shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ask_engine.models import MAX_QUERY_CHARS, schema_errors
from tests.server_helpers import JSONRPC_ACCEPT, KEY_A, Stack, server_stack, tools_call

FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False)
REST_STATUSES = {200, 400, 401, 409, 422, 424, 429, 503}
JSONRPC_CODES = {-32700, -32600, -32602, -32001, -32000}


@pytest.fixture(scope="module")
def stack(sample_index: Path, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with server_stack(sample_index, embedder, tmp_path_factory.mktemp("fuzz")) as running:
        yield running


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=120) as http:
        yield http


# --- strategies --------------------------------------------------------------------------------------

texts = st.text(max_size=60) | st.sampled_from(["", " ", "🥾 waterproof?", "‮rtl", "a\x00b", "ß" * 40])
huge = st.builds(lambda n, c: c * n, st.integers(MAX_QUERY_CHARS - 5, MAX_QUERY_CHARS + 5), st.sampled_from("a€🥾"))
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)
ask_objects = st.fixed_dictionaries(
    {},
    optional={
        "query": texts | huge | json_values,
        "ids": st.lists(
            texts | st.sampled_from(["tarn-wellington-boot", "gid://fjordandfell/Product/7001035"]), max_size=12
        )
        | json_values,
        "conversation": st.fixed_dictionaries({"id": texts | json_values}) | json_values,
        "context": st.dictionaries(
            st.sampled_from(["address_country", "language", "intent", "currency", "eligibility", "x"]), json_values
        )
        | json_values,
        "signals": st.dictionaries(st.sampled_from(["dev.ucp.buyer_ip", "Bad Key", "com.example.x"]), json_values)
        | json_values,
        "extra": json_values,
    },
)
# what an HTTP client can send: visible ASCII and inner spaces (h11 refuses surrounding whitespace)
header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40).map(str.strip)


def profile_headers(stack: Stack) -> st.SearchStrategy[str | None]:
    good = f'profile="{stack.profile()}"'
    return (
        st.none()
        | st.just(good)
        | st.just(good)
        | header_text
        | st.sampled_from(
            ['profile="https://"', "profile=?1", 'profile=("a" "b")', f'profile="{stack.profile("missing")}"']
        )
    )


def check_rest(response: httpx.Response) -> None:
    assert response.status_code in REST_STATUSES, (response.status_code, response.text[:500])
    body = response.json()
    if response.status_code == 200 and "answer" in body:
        assert schema_errors("ask_response", body) == []
    else:
        assert schema_errors("error_response", body) == [], body
    assert response.headers["request-id"]


def check_jsonrpc(response: httpx.Response) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    message = response.json()
    if "result" in message:
        body = message["result"]["structuredContent"]
        assert json.loads(message["result"]["content"][0]["text"]) == body
        name = "ask_response" if "answer" in body else "error_response"
        assert schema_errors(name, body) == [], body
        return
    error = message["error"]
    assert error["code"] in JSONRPC_CODES, error
    data = error.get("data")
    if error["code"] == -32602 and isinstance(data, list):
        for item in data:
            assert item["code"] == "invalid_input" and item["severity"] == "requires_buyer_input"
            assert item.get("path", "$").startswith("$")
    if error["code"] in (-32001, -32000):
        assert isinstance(data["code"], str) and data["content"]


# --- REST --------------------------------------------------------------------------------------------


def test_rest_bodies_and_headers_never_5xx(stack: Stack, client: httpx.Client) -> None:
    @FUZZ
    @given(
        body=ask_objects | json_values,
        ucp_agent=profile_headers(stack),
        key=st.sampled_from([KEY_A, {}, {"X-API-Key": "nope"}]),
        idempotency_key=st.none() | header_text,
        request_id=st.none() | header_text,
    )
    def run(
        body: Any, ucp_agent: str | None, key: dict[str, str], idempotency_key: str | None, request_id: str | None
    ) -> None:
        hdrs = {"Content-Type": "application/json", **key}
        for name, value in (("UCP-Agent", ucp_agent), ("Idempotency-Key", idempotency_key), ("Request-Id", request_id)):
            if value is not None:
                hdrs[name] = value
        raw = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
        check_rest(client.post(stack.url("/api/ucp/v1/ask"), content=raw, headers=hdrs))

    run()


def test_rest_raw_bytes_never_5xx(stack: Stack, client: httpx.Client) -> None:
    hdrs = {"Content-Type": "application/json", "UCP-Agent": f'profile="{stack.profile()}"', **KEY_A}

    @FUZZ
    @given(raw=st.binary(max_size=300) | st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")))
    def run(raw: bytes) -> None:
        check_rest(client.post(stack.url("/api/ucp/v1/ask"), content=raw, headers=hdrs))

    run()


# --- MCP ---------------------------------------------------------------------------------------------


def test_ucp_mcp_arguments_never_5xx(stack: Stack, client: httpx.Client) -> None:
    good_meta = {"ucp-agent": {"profile": stack.profile()}}
    metas = (
        st.just(good_meta)
        | json_values
        | st.fixed_dictionaries(
            {"ucp-agent": st.fixed_dictionaries({"profile": texts | json_values}) | json_values},
            optional={"idempotency-key": texts | json_values},
        )
    )

    @FUZZ
    @given(
        arguments=st.fixed_dictionaries({}, optional={"meta": metas, "ask": ask_objects | json_values}) | json_values
    )
    def run(arguments: Any) -> None:
        response = client.post(
            stack.url("/ucp/mcp"), json=tools_call("ask_business", arguments), headers={**JSONRPC_ACCEPT, **KEY_A}
        )
        check_jsonrpc(response)

    run()


def test_shop_mcp_arguments_never_5xx(stack: Stack, client: httpx.Client) -> None:
    @FUZZ
    @given(arguments=ask_objects | json_values)
    def run(arguments: Any) -> None:
        response = client.post(
            stack.url("/mcp"), json=tools_call("ask_business", arguments), headers={**JSONRPC_ACCEPT, **KEY_A}
        )
        check_jsonrpc(response)

    run()
