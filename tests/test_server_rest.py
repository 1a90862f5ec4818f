"""UCP REST binding over a real uvicorn server and the real sample index: answers, every row of the
protocol's error table, conversations, idempotency under concurrent retries, admission control."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from ask_engine.config import Settings, ask_body_bytes
from ask_engine.models import MAX_CONTEXT_BYTES, MAX_CONVERSATION_ID_CHARS, MAX_ID_CHARS, MAX_IDS, MAX_QUERY_CHARS
from ask_engine.server.auth import key_id
from tests.server_helpers import (
    BROKEN_STORE,
    FAILING,
    KEY_A,
    KEY_B,
    SECRET,
    BlockingEngine,
    Stack,
    assert_ask_response,
    assert_error_response,
    assert_no_leak,
    serve,
    server_stack,
)

ASK = "/api/ucp/v1/ask"


@pytest.fixture(scope="module")
def stack(sample_index: Path, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with server_stack(sample_index, embedder, tmp_path_factory.mktemp("rest")) as running:
        yield running


def headers(
    stack: Stack,
    *,
    profile: str | None = "good.json",
    key: dict[str, str] | None = None,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    out = dict(KEY_A if key is None else key)
    if profile is not None:
        out["UCP-Agent"] = f'profile="{stack.profile(profile)}"'
    out.update(extra or {})
    return out


def ask(
    stack: Stack,
    body: Any,
    *,
    shop: str | None = None,
    raw: bytes | None = None,
    key: dict[str, str] | None = None,
    profile: str | None = "good.json",
    extra: dict[str, str] | None = None,
    hdrs: dict[str, str] | None = None,
) -> httpx.Response:
    hdrs = hdrs or headers(stack, profile=profile, key=key, extra=extra)
    if raw is not None:
        hdrs = {**hdrs, "Content-Type": "application/json"}
        return httpx.post(stack.url(ASK, shop), content=raw, headers=hdrs, timeout=60)
    return httpx.post(stack.url(ASK, shop), json=body, headers=hdrs, timeout=60)


# --- answers ---------------------------------------------------------------------------------------


def test_answer_is_schema_valid_and_echoes_request_id(stack: Stack) -> None:
    response = ask(stack, {"query": "How long do I have to return an item?"}, extra={"Request-Id": "req-42"})
    assert response.status_code == 200
    assert response.headers["request-id"] == "req-42"
    assert response.headers["content-type"].startswith("application/json")
    body = assert_ask_response(response.json())
    assert body["ucp"]["version"] == stack.version
    assert body["ucp"]["capabilities"]["dev.ucp.common.ask"] == [{"version": stack.version}]
    assert any(link["type"] == "refund_policy" for link in body.get("links", [])), body


def test_x_api_key_authenticates_like_bearer_and_a_request_id_is_generated(stack: Stack) -> None:
    response = ask(stack, {"query": "Do you ship to Norway?"}, key=KEY_B)
    assert response.status_code == 200
    assert response.headers["request-id"]
    assert_ask_response(response.json())


def test_every_shop_is_also_served_under_its_prefix(stack: Stack) -> None:
    response = ask(stack, {"query": "What is the price of the Tarn Wellington Boot?"}, shop="fjord-fell")
    assert response.status_code == 200
    assert "59" in assert_ask_response(response.json())["answer"]["plain"]


def test_unknown_fields_are_ignored_not_rejected(stack: Stack) -> None:
    response = ask(stack, {"query": "Do you ship to Norway?", "future_field": {"x": 1}})
    assert response.status_code == 200
    assert_ask_response(response.json())


# --- malformed JSON and invalid_input ----------------------------------------------------------------


@pytest.mark.parametrize("raw", [b"{bad", b"", b"\xff\xfe{}", b'{"query": "x"', b'{"query": NaN}', b"[" * 5000])
def test_malformed_json_is_400_in_the_error_shape(stack: Stack, raw: bytes) -> None:
    response = ask(stack, None, raw=raw)
    assert response.status_code == 400
    body = assert_error_response(response.json(), "invalid_input")
    assert body["messages"][0]["path"] == "$"
    assert body["messages"][0]["severity"] == "requires_buyer_input"


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"query": "x" * (MAX_QUERY_CHARS + 1)}, "$.query"),
        ({"query": "which?", "ids": [f"sku-{i}" for i in range(MAX_IDS + 1)]}, "$.ids"),
        ({"query": "ship?", "context": {"intent": "x" * (MAX_CONTEXT_BYTES + 1)}}, "$.context"),
        ({}, "$.query"),
        ({"query": 42}, "$.query"),
        ({"query": "q", "ids": "not-a-list"}, "$.ids"),
        ({"query": "q", "conversation": {"expires_at": "2030-01-01T00:00:00Z"}}, "$.conversation.id"),
        ({"query": "q", "signals": {"NotReverseDomain": 1}}, "$.signals"),
        (["query"], "$"),
        ("just a string", "$"),
    ],
)
def test_schema_and_limit_violations_are_400_invalid_input_with_a_path(stack: Stack, body: Any, path: str) -> None:
    response = ask(stack, body)
    assert response.status_code == 400
    error = assert_error_response(response.json(), "invalid_input")
    assert path in [m["path"] for m in error["messages"]], error


def test_unpaired_surrogates_are_invalid_input_not_a_crash(stack: Stack) -> None:
    response = ask(stack, None, raw=b'{"query": "boots \\ud800 waterproof?"}')
    assert response.status_code == 400
    assert assert_error_response(response.json(), "invalid_input")["messages"][0]["path"] == "$.query"


def test_a_body_over_the_size_cap_is_refused_without_reading_it(stack: Stack) -> None:
    response = ask(stack, None, raw=b'{"query": "' + b"a" * (2 * 1024 * 1024) + b'"}')
    assert response.status_code == 400
    assert "larger than" in assert_error_response(response.json(), "invalid_input")["messages"][0]["content"]


def _escaped(text: str) -> str:
    """A JSON string with every character in its longest escape (astral characters as surrogate pairs)."""
    units = text.encode("utf-16-be")
    return '"' + "".join(f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2)) + '"'


def worst_case_ask_body() -> bytes:
    """An ask at every documented field limit, every character spelled in its longest JSON escape."""
    ids = ",".join(_escaped(f"{i}" + "🥾" * (MAX_ID_CHARS - 1)) for i in range(MAX_IDS))
    intent = "a" * (MAX_CONTEXT_BYTES - len('{"intent":""}'))
    body = (
        f'{{"query":{_escaped("🥾" * MAX_QUERY_CHARS)},"ids":[{ids}],'
        f'"conversation":{{"id":{_escaped("🥾" * MAX_CONVERSATION_ID_CHARS)}}},'
        f'"context":{{"intent":{_escaped(intent)}}}}}'
    )
    return body.encode("ascii")


def test_a_request_within_every_field_limit_is_never_refused_for_its_size(stack: Stack) -> None:
    body = worst_case_ask_body()
    assert len(body) > 68_729  # larger than the request the old 65,536-byte cap refused
    assert len(body) <= Settings().max_body_bytes == ask_body_bytes()
    response = ask(stack, None, raw=body)
    assert response.status_code == 200, response.text[:500]
    assert_ask_response(response.json())


def test_a_body_one_byte_over_the_derived_cap_is_refused(stack: Stack) -> None:
    body = b'{"query": "Do you ship to Norway?"}'
    response = ask(stack, None, raw=body + b" " * (Settings().max_body_bytes + 1 - len(body)))
    assert response.status_code == 400
    assert "larger than" in assert_error_response(response.json(), "invalid_input")["messages"][0]["content"]


def test_a_context_just_under_the_limit_is_accepted(stack: Stack) -> None:
    context = {"address_country": "GB", "intent": "x" * (MAX_CONTEXT_BYTES - 100)}
    response = ask(stack, {"query": "Do you ship to Norway?", "context": context})
    assert response.status_code == 200
    assert_ask_response(response.json())


# --- negotiation -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ucp_agent", "status", "code"),
    [
        (None, 400, "invalid_profile_url"),
        ("profile=42", 400, "invalid_profile_url"),
        ('profile="not a url"', 400, "invalid_profile_url"),
        ('profile="ftp://example.com/p.json"', 400, "invalid_profile_url"),
        ('profile="http://example.com/p.json"', 400, "invalid_profile_url"),
        ("broken;;header", 400, "invalid_profile_url"),
        ("{missing}", 424, "profile_unreachable"),
        ("{redirect}", 424, "profile_unreachable"),
        ("{not-json}", 422, "profile_malformed"),
        ("{old-version.json}", 422, "version_unsupported"),
    ],
)
def test_profile_failures_map_to_the_protocol_statuses(
    stack: Stack, ucp_agent: str | None, status: int, code: str
) -> None:
    hdrs = headers(stack, profile=None)
    if ucp_agent is not None:
        if ucp_agent.startswith("{"):
            ucp_agent = f'profile="{stack.profile(ucp_agent.strip("{}"))}"'
        hdrs["UCP-Agent"] = ucp_agent
    response = ask(stack, {"query": "Do you ship to Norway?"}, hdrs=hdrs)
    assert response.status_code == status
    body = assert_error_response(response.json(), code)
    assert body["continue_url"] == "https://fjordandfell.example"


def test_no_capability_in_common_is_a_200_error_response(stack: Stack) -> None:
    response = ask(stack, {"query": "Do you ship to Norway?"}, profile="no-ask.json")
    assert response.status_code == 200
    body = assert_error_response(response.json(), "capabilities_incompatible")
    assert body["ucp"]["capabilities"] == {}
    assert "answer" not in body


# --- auth, rate limits, failures ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [{}, {"Authorization": "Bearer wrong-key"}, {"X-API-Key": "wrong-key"}, {"Authorization": "Basic a2V5LWE="}],
)
def test_missing_or_wrong_agent_key_is_401_with_a_bearer_challenge(stack: Stack, key: dict[str, str]) -> None:
    response = ask(stack, {"query": "Do you ship to Norway?"}, key=key)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith('Bearer realm="ucp"')
    assert_error_response(response.json(), "unauthorized")


def test_rate_limit_is_429_with_retry_after(stack: Stack) -> None:
    url = stack.limited.base_url + ASK
    hdrs = headers(stack, key={"X-API-Key": "key-b"})
    statuses = [httpx.post(url, json={"query": "Do you ship to Norway?"}, headers=hdrs, timeout=60) for _ in range(3)]
    assert [r.status_code for r in statuses[:2]] == [200, 200]
    limited = statuses[2]
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    message = assert_error_response(limited.json(), "rate_limited")["messages"][0]["content"]
    assert "per agent key" in message and "rate_limit_per_minute" in message and "at most 2 a minute" in message
    # the limit is per agent key: another key is still served
    other = httpx.post(url, json={"query": "Do you ship to Norway?"}, headers=headers(stack), timeout=60)
    assert other.status_code == 200


def test_rate_limit_without_auth_names_the_client_address_and_the_setting(engine: Any) -> None:
    from ask_engine.config import Settings
    from ask_engine.server.app import create_app

    settings = Settings(rate_limit_per_minute=100, rate_limit_per_hour=1, trust_profiles=True)
    with serve(create_app(settings=settings, engines={"shop": engine}, stores={"shop": None})) as server:
        url = server.base_url + ASK
        assert httpx.post(url, json={"query": "Do you ship to Norway?"}, timeout=60).status_code == 200
        limited = httpx.post(url, json={"query": "Do you ship to Norway?"}, timeout=60)
    assert limited.status_code == 429
    message = assert_error_response(limited.json(), "rate_limited")["messages"][0]["content"]
    assert "per client address" in message and "auth is off" in message and "rate_limit_per_hour" in message
    assert "agent key" not in message


def test_idempotency_store_down_fails_closed_with_503_and_retry_after(stack: Stack) -> None:
    response = ask(stack, {"query": "Do you ship to Norway?"}, shop=BROKEN_STORE, extra={"Idempotency-Key": "k-down"})
    assert response.status_code == 503
    assert int(response.headers["retry-after"]) >= 1
    assert_error_response(response.json(), "unavailable")


def test_unexpected_failure_is_500_without_internals(stack: Stack) -> None:
    response = ask(stack, {"query": "Do you ship to Norway?"}, shop=FAILING)
    assert response.status_code == 500
    assert_error_response(response.json(), "internal_error")
    assert_no_leak(response.text, SECRET, "RuntimeError", "boom")


# --- idempotency -------------------------------------------------------------------------------------


def test_idempotent_retry_replays_the_answer_and_another_payload_conflicts(stack: Stack) -> None:
    body = {"query": "Is the Tarn Wellington Boot waterproof?"}
    first = ask(stack, body, extra={"Idempotency-Key": "rest-idem-1"})
    again = ask(stack, body, extra={"Idempotency-Key": "rest-idem-1"})
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    assert_ask_response(first.json())
    conflict = ask(stack, {"query": "Something else entirely?"}, extra={"Idempotency-Key": "rest-idem-1"})
    assert conflict.status_code == 409
    assert_error_response(conflict.json(), "idempotency_conflict")
    # keys are scoped to the agent: the same key from another agent is a new request
    other = ask(stack, {"query": "Something else entirely?"}, key=KEY_B, extra={"Idempotency-Key": "rest-idem-1"})
    assert other.status_code == 200


def test_an_invalid_idempotency_key_is_invalid_input(stack: Stack) -> None:
    response = ask(stack, {"query": "q"}, extra={"Idempotency-Key": "x" * 300})
    assert response.status_code == 400
    assert_error_response(response.json(), "invalid_input")


def test_fifty_concurrent_retries_give_one_answer_and_append_one_turn(stack: Stack) -> None:
    first = ask(stack, {"query": "Is the Tarn Wellington Boot waterproof?"})
    conversation = assert_ask_response(first.json())["conversation"]
    owner = key_id("key-a")
    turns_before = len(stack.store.history(conversation["id"], owner))
    follow_up = {"query": "and how much is it?", "conversation": {"id": conversation["id"]}}

    async def retries() -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=120) as client:
            hdrs = headers(stack, extra={"Idempotency-Key": "fifty-retries"})
            calls = [client.post(stack.url(ASK), json=follow_up, headers=hdrs) for _ in range(50)]
            return await asyncio.gather(*calls)

    responses = asyncio.run(retries())
    assert {r.status_code for r in responses} == {200}
    bodies = [r.json() for r in responses]
    assert all(b == bodies[0] for b in bodies)
    assert_ask_response(bodies[0])
    assert len(stack.store.history(conversation["id"], owner)) == turns_before + 1


# --- conversations -----------------------------------------------------------------------------------


def test_follow_up_resolves_against_the_previous_turn(stack: Stack) -> None:
    first = assert_ask_response(ask(stack, {"query": "Is the Tarn Wellington Boot waterproof?"}).json())
    conversation = first["conversation"]
    assert conversation["id"] and conversation["expires_at"]
    second = ask(stack, {"query": "and how much is it?", "conversation": {"id": conversation["id"]}})
    body = assert_ask_response(second.json())
    assert body["conversation"]["id"] == conversation["id"]
    assert "59" in body["answer"]["plain"], body["answer"]
    assert not any(m.get("code") == "not_found" for m in body.get("messages", []))


def test_a_foreign_agent_replaying_a_conversation_gets_a_new_one_and_nothing_of_the_old(stack: Stack) -> None:
    first = assert_ask_response(ask(stack, {"query": "Is the Tarn Wellington Boot waterproof?"}).json())
    stolen = first["conversation"]["id"]
    replay = ask(stack, {"query": "and how much is it?", "conversation": {"id": stolen}}, key=KEY_B)
    body = assert_ask_response(replay.json())
    assert body["conversation"]["id"] != stolen
    not_found = [m for m in body.get("messages", []) if m.get("code") == "not_found"]
    assert [m["path"] for m in not_found] == ["$.conversation.id"]
    assert "Tarn" not in replay.text
    # and the owner's conversation is untouched by the attempt
    owner_turns = stack.store.history(stolen, key_id("key-a"))
    assert [t.query for t in owner_turns] == ["Is the Tarn Wellington Boot waterproof?"]


def test_an_unknown_conversation_id_starts_a_new_conversation(stack: Stack) -> None:
    response = ask(stack, {"query": "Do you ship to Norway?", "conversation": {"id": "conv_made_up"}})
    body = assert_ask_response(response.json())
    assert body["conversation"]["id"] != "conv_made_up"
    assert any(m.get("path") == "$.conversation.id" for m in body.get("messages", []))


# --- admission control -------------------------------------------------------------------------------


def test_overload_is_503_and_the_event_loop_keeps_serving(engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from ask_engine.config import Settings
    from ask_engine.server import service as service_module
    from ask_engine.server.app import create_app

    # Only the queue bound may refuse here, never a slow machine: the queued requests wait as long as they need.
    monkeypatch.setattr(service_module, "QUEUE_WAIT_S", 600.0)
    blocking = BlockingEngine(engine)
    settings = Settings(trust_profiles=True, max_concurrency=1)
    app = create_app(settings=settings, engines={"blocking": cast(Any, blocking)})
    workers = app.state.services[0]._workers
    queue = settings.max_concurrency * service_module.QUEUE_FACTOR
    with serve(app) as server:

        async def scenario() -> tuple[list[httpx.Response], httpx.Response, httpx.Response]:
            async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
                held = [
                    asyncio.ensure_future(client.post(ASK, json={"query": "Do you ship to Norway?"}))
                    for _ in range(1 + queue)
                ]
                deadline = time.monotonic() + 30
                while workers.statistics().tasks_waiting < queue:
                    assert time.monotonic() < deadline, workers.statistics()
                    await asyncio.sleep(0.02)
                refused = await client.post(ASK, json={"query": "Do you ship to Norway?"})
                health = await client.get("/healthz")  # answered while the engine is busy
                blocking.release.set()
                return list(await asyncio.gather(*held)), refused, health

        held, refused, health = asyncio.run(scenario())
    assert refused.status_code == 503
    assert int(refused.headers["retry-after"]) >= 1
    assert_error_response(refused.json(), "unavailable")
    assert health.status_code == 200
    assert {r.status_code for r in held} == {200}
