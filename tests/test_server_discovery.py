"""Discovery, OpenAPI, health and the demo: /.well-known/ucp (dated and draft), no redirects, the OpenAPI document,
/healthz, and the curl printed by `ask-engine serve` working as pasted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ask_engine.config import Settings
from ask_engine.models import CAPABILITY, SERVICE, schema_validator
from tests.server_helpers import RunningServer, assert_ask_response, serve


def _validator(ref: str) -> Any:
    from jsonschema import Draft202012Validator

    from ask_engine.models import _registry

    return Draft202012Validator({"$ref": ref}, registry=_registry(), format_checker=Draft202012Validator.FORMAT_CHECKER)


BUSINESS = _validator("https://ucp.dev/schemas/profile.json#/$defs/business_schema")
PLATFORM = _validator("https://ucp.dev/schemas/profile.json#/$defs/platform_schema")


@pytest.fixture(scope="module")
def server(engine: Any) -> Iterator[RunningServer]:
    from ask_engine.server.app import create_app

    # demo defaults: no agent keys, profiles fetched (the demo one from this server itself)
    app = create_app(settings=Settings(), engines={"fjord-fell": engine, "second-shop": engine})
    with serve(app) as running:
        yield running


def get(server: RunningServer, path: str) -> httpx.Response:
    return httpx.get(server.base_url + path, follow_redirects=False, timeout=30)


def test_business_profile_validates_and_declares_the_service_and_capability(server: RunningServer) -> None:
    response = get(server, "/.well-known/ucp")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=300"
    profile = response.json()
    assert [e.message for e in BUSINESS.iter_errors(profile)] == []
    version = Settings().ucp_version
    ucp = profile["ucp"]
    assert ucp["version"] == version
    assert ucp["payment_handlers"] == {}
    bindings = {b["transport"]: b for b in ucp["services"][SERVICE]}
    assert bindings["rest"]["endpoint"] == server.base_url + "/api/ucp/v1"
    assert bindings["mcp"]["endpoint"] == server.base_url + "/ucp/mcp"
    assert all(b["version"] == version for b in bindings.values())
    (capability,) = ucp["capabilities"][CAPABILITY]
    assert capability["version"] == version
    assert capability["schema"] == f"https://ucp.dev/{version}/schemas/common/ask.json"
    assert capability["spec"].startswith(f"https://ucp.dev/{version}/")


def test_draft_profile_has_version_draft_and_is_otherwise_valid(server: RunningServer) -> None:
    response = get(server, "/.well-known/ucp/draft")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=300"
    profile = response.json()
    assert profile["ucp"]["version"] == "draft"
    # the published schema only admits dated versions; everything else must validate
    problems = [e for e in BUSINESS.iter_errors(profile) if str(e.instance) != "draft"]
    assert problems == []


@pytest.mark.parametrize("path", ["/.well-known/ucp/", "/.well-known/ucp/draft/", "/healthz/", "/api/ucp/v1/ask/"])
def test_variants_of_exact_paths_are_404_never_a_redirect(server: RunningServer, path: str) -> None:
    response = get(server, path)
    assert response.status_code == 404
    assert "location" not in response.headers


def test_prefixed_shops_advertise_their_own_endpoints(server: RunningServer) -> None:
    profile = get(server, "/shops/second-shop/.well-known/ucp").json()
    endpoints = {b["endpoint"] for b in profile["ucp"]["services"][SERVICE]}
    assert endpoints == {
        server.base_url + "/shops/second-shop/api/ucp/v1",
        server.base_url + "/shops/second-shop/ucp/mcp",
        server.base_url + "/shops/second-shop/.well-known/agent-card.json",
    }
    card = get(server, "/shops/second-shop/.well-known/agent-card.json").json()
    assert [i["url"] for i in card["supportedInterfaces"]] == [server.base_url + "/shops/second-shop/a2a"]


def test_openapi_document_is_a_valid_openapi_3_1_description_of_the_rest_route(server: RunningServer) -> None:
    from openapi_spec_validator import validate

    document = get(server, "/openapi.json").json()
    validate(document)
    assert document["openapi"].startswith("3.1")
    assert document["servers"] == [{"url": server.base_url + "/api/ucp/v1"}]
    post = document["paths"]["/ask"]["post"]
    assert set(post["responses"]) == {"200", "400", "401", "409", "422", "424", "429", "500", "503"}
    assert post["responses"]["429"]["headers"]["Retry-After"]
    assert post["responses"]["401"]["headers"]["WWW-Authenticate"]


def test_openapi_error_schema_accepts_what_the_server_sends(server: RunningServer) -> None:
    from jsonschema import Draft202012Validator

    document = get(server, "/openapi.json").json()
    error_schema = document["components"]["schemas"]["ErrorResponse"]
    response = httpx.post(server.base_url + "/api/ucp/v1/ask", content=b"{", timeout=30)
    assert response.status_code == 400
    assert list(Draft202012Validator(error_schema).iter_errors(response.json())) == []
    assert list(schema_validator("error_response").iter_errors(response.json())) == []


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("UCP-Agent", ""),
        ("UCP-Agent", "{demo}"),
        ("Idempotency-Key", ""),
        ("Idempotency-Key", "k" * 255),
        ("Idempotency-Key", "k" * 256),
        ("Idempotency-Key", "two words"),
        ("Request-Id", "r" * 200),
        ("Request-Id", "r" * 201),
    ],
)
def test_openapi_header_schemas_refuse_exactly_what_the_server_refuses(
    server: RunningServer, header: str, value: str
) -> None:
    from jsonschema import Draft202012Validator

    document = get(server, "/openapi.json").json()
    params = {p["name"]: p["schema"] for p in document["paths"]["/ask"]["post"]["parameters"]}
    demo = f'profile="{server.base_url}/.well-known/ucp-demo-agent.json"'
    value = value.replace("{demo}", demo)
    schema_valid = Draft202012Validator(params[header]).is_valid(value)
    headers = {"UCP-Agent": demo, header: value}
    response = httpx.post(server.base_url + "/api/ucp/v1/ask", json={"query": "Opening hours?"}, headers=headers)
    assert (response.status_code == 400) is (not schema_valid), (response.status_code, response.text[:300])
    if header == "Request-Id":  # never refused: echoed when sane, else replaced
        assert (response.headers["request-id"] == value) is (len(value) <= 200)


def test_healthz_names_each_shop_and_its_index(server: RunningServer) -> None:
    body = get(server, "/healthz").json()
    assert body["status"] == "ok"
    shops = {s["name"]: s for s in body["shops"]}
    assert set(shops) == {"fjord-fell", "second-shop"}
    assert shops["fjord-fell"]["shop"] == "Fjord & Fell"
    assert shops["fjord-fell"]["documents"] > 0
    assert shops["fjord-fell"]["index_version"]
    # which process answered, as an opaque id: not the server's operating-system pid
    assert isinstance(body["process"], str) and len(body["process"]) == 12
    assert body["process"] != str(os.getpid()) and get(server, "/healthz").json()["process"] == body["process"]


def test_demo_platform_profile_is_a_valid_platform_profile(server: RunningServer) -> None:
    response = get(server, "/.well-known/ucp-demo-agent.json")
    assert response.status_code == 200
    profile = response.json()
    assert [e.message for e in PLATFORM.iter_errors(profile)] == []
    assert profile["ucp"]["capabilities"][CAPABILITY][0]["version"] == Settings().ucp_version


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_curl_printed_at_startup_works_as_pasted(server: RunningServer, sample_index: Path) -> None:
    from ask_engine.server.cli import banner

    services = server.app.state.services
    settings = Settings(port=server.port)
    text = banner(services, settings, [str(sample_index)])
    assert "Auth: OFF" in text
    start = text.index("curl ")
    command = text[start : text.index("\n\n", start)]
    completed = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60, check=True)
    assert_ask_response(json.loads(completed.stdout))
    # and the MCP host snippet names this server's shop MCP endpoint
    assert f'"url": "http://127.0.0.1:{server.port}/mcp"' in text
