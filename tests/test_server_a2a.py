"""ask_business over A2A with the official a2a-sdk client against a real server: the agent card (declared as the
`a2a` transport of /.well-known/ucp), the UCP answer with links and messages in a DataPart under `a2a.ucp.ask`, a
follow-up in the same conversation through `contextId`, messageId idempotency, and errors in the protocol's shape."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ask_engine.config import Settings
from ask_engine.models import CAPABILITY, SERVICE
from ask_engine.server.auth import key_id
from tests.rfc9421 import seen, verify
from tests.server_helpers import AGENT_KEYS, KEY_A, RunningServer, assert_ask_response, assert_error_response, serve

SHOP = "fjord-fell"
PROFILE = 'profile="https://platform.example/profile.json"'
DATA_KEY = "a2a.ucp.ask"


def A2A_SCHEMA(definition: str) -> Any:  # noqa: N802 (reads as the schema it names)
    """A validator for a definition of UCP's transports/a2a_message.json (bundled with the package's schemas)."""
    from tests.test_server_discovery import _validator

    return _validator(f"https://ucp.dev/schemas/transports/a2a_message.json#/$defs/{definition}")


class A2AStack:
    def __init__(self, server: RunningServer, store: Any) -> None:
        self.server = server
        self.store = store
        self.base = server.base_url


@pytest.fixture(scope="module")
def a2a(sample_index: Path, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[A2AStack]:
    from ask_engine.conversations import SqliteStore
    from ask_engine.engine import Engine
    from ask_engine.server.app import create_app

    settings = Settings(
        agent_keys=AGENT_KEYS, trust_profiles=True, rate_limit_per_minute=100_000, rate_limit_per_hour=1_000_000
    )
    store = SqliteStore(tmp_path_factory.mktemp("a2a") / "conversations.sqlite3")
    engine = Engine.open(sample_index, settings, embedder=embedder, store=store)
    try:
        app = create_app(settings=settings, engines={SHOP: engine}, stores={SHOP: store})
        with serve(app) as running:
            yield A2AStack(running, store)
    finally:
        engine.close()
        store.close()


def user_message(data: Any = None, *, text: str | None = None, context_id: str = "", message_id: str = "") -> Any:
    from a2a.types.a2a_pb2 import Message, Part, Role
    from google.protobuf.struct_pb2 import Value

    parts = []
    if data is not None:
        value = Value()
        value.struct_value.update(data)
        parts.append(Part(data=value))
    if text is not None:
        parts.append(Part(text=text))
    return Message(role=Role.ROLE_USER, message_id=message_id or str(uuid.uuid4()), context_id=context_id, parts=parts)


async def send_all(base: str, messages: list[Any], headers: dict[str, str] | None = None) -> list[Any]:
    """Each message sent in turn with the official client (resolving the agent card first); the agent's replies."""
    from a2a.client import ClientConfig, create_client
    from a2a.types.a2a_pb2 import SendMessageRequest

    sent = {**KEY_A, "UCP-Agent": PROFILE} if headers is None else headers
    replies = []
    async with httpx.AsyncClient(headers=sent, timeout=120) as http:
        client = await create_client(base, ClientConfig(httpx_client=http, streaming=False))
        for message in messages:
            # A follow-up may be built from the previous reply: a callable gets it.
            built = message(replies[-1]) if callable(message) else message
            responses = [r async for r in client.send_message(SendMessageRequest(message=built))]
            assert len(responses) == 1 and responses[0].HasField("message"), responses
            replies.append(responses[0].message)
    return replies


def ucp_body(reply: Any, key: str = DATA_KEY) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict

    data = [MessageToDict(p.data) for p in reply.parts if p.HasField("data")]
    assert len(data) == 1 and set(data[0]) == {key}, data
    body: dict[str, Any] = data[0][key]
    return body


def test_agent_card_declares_the_ucp_extension_and_the_profile_declares_a2a(a2a: A2AStack) -> None:
    from a2a.client import A2ACardResolver

    from ask_engine.server.a2a_binding import extension_uri

    async def card() -> Any:
        async with httpx.AsyncClient() as http:
            return await A2ACardResolver(http, a2a.base).get_agent_card()

    resolved = asyncio.run(card())
    version = Settings().ucp_version
    (interface,) = resolved.supported_interfaces
    assert interface.url == a2a.base + "/a2a" and interface.protocol_binding == "JSONRPC"
    (extension,) = resolved.capabilities.extensions
    assert extension.uri == extension_uri(version) == f"https://ucp.dev/{version}/specification/reference"
    assert resolved.capabilities.streaming is False
    assert "bearer" in resolved.security_schemes
    raw = httpx.get(a2a.base + "/.well-known/agent-card.json", timeout=30)
    card_json = raw.json()
    assert card_json["capabilities"]["extensions"][0]["params"]["capabilities"][CAPABILITY] == [{"version": version}]
    assert [e.message for e in A2A_SCHEMA("agent_card").iter_errors(card_json)] == []
    profile = httpx.get(a2a.base + "/.well-known/ucp", timeout=30).json()
    bindings = {b["transport"]: b for b in profile["ucp"]["services"][SERVICE]}
    assert bindings["a2a"]["endpoint"] == a2a.base + "/.well-known/agent-card.json"
    # the card, like every response, is signed with the profile's keys
    assert verify(seen(raw), profile["keys"])


def test_ask_over_a2a_answers_with_links_and_messages_then_a_follow_up_continues(a2a: A2AStack) -> None:
    first_ask = {"query": "Is the Tarn Wellington Boot waterproof? Please add it to my cart."}
    replies = asyncio.run(
        send_all(
            a2a.base,
            [
                user_message({DATA_KEY: first_ask}),
                # the follow-up names no conversation: the reply's contextId carries it
                lambda previous: user_message(
                    {DATA_KEY: {"query": "and how much is it?"}}, context_id=previous.context_id
                ),
            ],
        )
    )
    first, second = (assert_ask_response(ucp_body(r)) for r in replies)
    assert any(link["type"] == "product" and "tarn" in link["url"] for link in first["links"])
    assert any(m["code"] == "operation_not_performed" for m in first["messages"])
    assert replies[0].context_id == first["conversation"]["id"]
    assert second["conversation"]["id"] == first["conversation"]["id"] == replies[1].context_id
    assert "59" in second["answer"]["plain"]
    # the plain answer also comes as text, for A2A clients that read only text
    assert [p.text for p in replies[1].parts if p.HasField("text")] == [second["answer"]["plain"]]
    history = a2a.store.history(first["conversation"]["id"], key_id("key-a"))
    assert len(history) == 2


def test_a_retried_message_id_replays_without_a_new_turn_and_another_ask_conflicts(a2a: A2AStack) -> None:
    ask = {"query": "Do you ship to Norway?"}
    message_id = str(uuid.uuid4())
    first, again, other = asyncio.run(
        send_all(
            a2a.base,
            [
                user_message({DATA_KEY: ask}, message_id=message_id),
                user_message({DATA_KEY: ask}, message_id=message_id),
                user_message({DATA_KEY: {"query": "Other question?"}}, message_id=message_id),
            ],
        )
    )
    body = assert_ask_response(ucp_body(first))
    assert ucp_body(again) == body
    assert len(a2a.store.history(body["conversation"]["id"], key_id("key-a"))) == 1
    assert_error_response(ucp_body(other), "idempotency_conflict")


def test_a_text_only_message_and_the_capability_key_are_read_too(a2a: A2AStack) -> None:
    text, named = asyncio.run(
        send_all(
            a2a.base,
            [
                user_message(text="What is your return policy?"),
                user_message({CAPABILITY: {"query": "Do you ship to Norway?"}}),
            ],
        )
    )
    assert_ask_response(ucp_body(text))
    assert_ask_response(ucp_body(named, CAPABILITY))


def test_bad_input_comes_back_as_a_ucp_error_response(a2a: A2AStack) -> None:
    empty, bad = asyncio.run(
        send_all(a2a.base, [user_message({"other": 1}), user_message({DATA_KEY: {"query": "x" * 20_000}})])
    )
    assert_error_response(ucp_body(empty), "invalid_input")
    error = assert_error_response(ucp_body(bad), "invalid_input")
    assert error["messages"][0]["path"] == "$.query"


def test_no_agent_key_is_401_with_a_json_rpc_error(a2a: A2AStack) -> None:
    from a2a.client import A2AClientError

    with pytest.raises(A2AClientError):
        asyncio.run(send_all(a2a.base, [user_message({DATA_KEY: {"query": "hi"}})], headers={"UCP-Agent": PROFILE}))
    raw = httpx.post(
        a2a.base + "/a2a",
        json={"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {}},
        headers={"A2A-Version": "1.0"},
        timeout=30,
    )
    assert raw.status_code == 401 and raw.headers["www-authenticate"].startswith("Bearer")
    assert raw.json()["id"] == 7 and raw.json()["error"]["data"]["code"] == "unauthorized"


def test_the_ucp_binding_pages_v0_3_message_send_is_answered(a2a: A2AStack) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {
                "role": "user",
                "parts": [{"kind": "data", "data": {DATA_KEY: {"query": "What is your return policy?"}}}],
                "messageId": str(uuid.uuid4()),
                "kind": "message",
            }
        },
    }
    response = httpx.post(a2a.base + "/a2a", json=request, headers={**KEY_A, "UCP-Agent": PROFILE}, timeout=60)
    assert response.status_code == 200
    assert [e.message for e in A2A_SCHEMA("message_response").iter_errors(response.json())] == []
    result = response.json()["result"]
    data = next(p["data"] for p in result["parts"] if p.get("kind") == "data")
    assert_ask_response(data[DATA_KEY])


def test_answers_are_messages_so_the_server_keeps_no_tasks(a2a: A2AStack) -> None:
    """Message-only replies: nothing accumulates in the SDK's task store however many asks come in."""
    from a2a.client import ClientConfig, create_client
    from a2a.types.a2a_pb2 import ListTasksRequest, SendMessageRequest

    async def scenario() -> Any:
        async with httpx.AsyncClient(headers={**KEY_A, "UCP-Agent": PROFILE}, timeout=120) as http:
            client = await create_client(a2a.base, ClientConfig(httpx_client=http, streaming=False))
            for _ in range(2):
                request = SendMessageRequest(message=user_message({DATA_KEY: {"query": "Do you ship to Norway?"}}))
                _ = [r async for r in client.send_message(request)]
            return await client.list_tasks(ListTasksRequest())

    listed = asyncio.run(scenario())
    assert list(listed.tasks) == []
