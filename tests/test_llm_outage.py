"""A hanging or failing LLM server: the per-request deadline, the circuit breaker, the extractive fallback they lead
to, and how the outage shows (Trace.fallback, /healthz), up to 32 concurrent REST clients against a served app.

The hanging server is real: a loopback socket that accepts every connection and never answers."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai  # noqa: F401 - imported once here, so the first request's deadline is not spent importing it
import pytest

from ask_engine.config import Settings
from ask_engine.errors import GeneratorBypassed, GeneratorDeadline, GeneratorUnavailable
from ask_engine.llm import OpenAICompatibleGenerator
from ask_engine.types import Evidence, Passage, Resolution, Task
from tests.server_helpers import assert_ask_response, serve

ASK = "/api/ucp/v1/ask"
QUESTIONS = (
    "Can I return boots if they don't fit?",
    "Do you ship to Norway?",
    "Is the Tarn Wellington Boot waterproof?",
    "How long does a refund take?",
)


class HangingServer:
    """A loopback "LLM server" that accepts every connection and never sends a byte back."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(512)
        self._sock.settimeout(0.1)
        self.port: int = self._sock.getsockname()[1]
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, name=f"hanging-llm-{self.port}", daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def accepted(self) -> int:
        """Connections the clients opened (one per model call: the generator never retries)."""
        with self._lock:
            return len(self._conns)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(OSError):
                    conn.close()


@pytest.fixture
def hanging() -> Iterator[HangingServer]:
    server = HangingServer()
    try:
        yield server
    finally:
        server.close()


def _task(query: str = "Can I send back an unopened tin?") -> Task:
    passage = Passage(
        id="policy:refund#0",
        doc_id="policy:refund",
        text="Unopened tins can be returned within 14 days of delivery.",
        title="Refund policy",
        url="https://shop.example/policies/refund-policy",
        kind="policy",
        link_type="refund_policy",
    )
    evidence = (Evidence(number=1, passage=passage, score=0.9),)
    return Task(query=query, evidence=evidence, documents={}, resolution=Resolution())


def _mock_generator(handler: Callable[[httpx2.Request], httpx2.Response], **settings: Any) -> OpenAICompatibleGenerator:
    from openai import OpenAI

    base_url = f"http://llm-{uuid.uuid4().hex[:8]}.test/v1"
    client = OpenAI(
        base_url=base_url,
        api_key="k",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    return OpenAICompatibleGenerator(Settings(llm_base_url=base_url, **settings), client=client)


# --- the generator ---------------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_a_hanging_server_costs_the_deadline_not_the_http_timeout(hanging: HangingServer) -> None:
    generator = OpenAICompatibleGenerator(
        Settings(llm_base_url=hanging.base_url, llm_timeout_s=600.0, llm_deadline_s=1.0)
    )
    with pytest.raises(GeneratorDeadline, match="1 s deadline") as raised:
        generator.generate(_task())
    assert raised.value.reason == "deadline"
    assert hanging.accepted == 1


@pytest.mark.timeout(60)
def test_repeated_deadlines_open_the_breaker_and_the_server_is_no_longer_called(hanging: HangingServer) -> None:
    generator = OpenAICompatibleGenerator(
        Settings(llm_base_url=hanging.base_url, llm_deadline_s=1.0, llm_breaker_failures=3, llm_breaker_cooldown_s=600)
    )
    for _ in range(3):
        with pytest.raises(GeneratorDeadline):
            generator.generate(_task())
    assert generator.status()["state"] == "breaker_open"
    for _ in range(10):
        with pytest.raises(GeneratorBypassed) as raised:
            generator.generate(_task())
        assert raised.value.reason == "breaker_open"
    assert hanging.accepted == 3
    status = generator.status()
    assert status["bypassed"] == 10 and status["failures"] == 3 and status["opened"] == 1


def _completion(content: str) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }


def test_http_errors_count_against_the_breaker_but_unusable_replies_do_not() -> None:
    replies: list[httpx2.Response] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        return replies.pop(0)

    generator = _mock_generator(handler, llm_breaker_failures=2, llm_breaker_cooldown_s=600)
    for _ in range(4):  # the server is up, the model just said nothing usable
        replies.append(httpx2.Response(200, json=_completion("")))
        with pytest.raises(GeneratorUnavailable) as raised:
            generator.generate(_task())
        assert raised.value.reason == "generator_unavailable"
    assert generator.status()["state"] == "up"
    for _ in range(2):
        replies.append(httpx2.Response(503, json={"error": "overloaded"}))
        with pytest.raises(GeneratorUnavailable, match="503"):
            generator.generate(_task())
    assert generator.status()["state"] == "breaker_open"
    with pytest.raises(GeneratorBypassed):
        generator.generate(_task())
    assert replies == []  # the bypassed request reached no server


def test_settings_reject_a_non_positive_deadline() -> None:
    from ask_engine.errors import ConfigError

    with pytest.raises(ConfigError, match="llm_deadline_s"):
        Settings.load(llm_deadline_s=0)


# --- the engine ------------------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_the_engine_answers_extractively_and_records_deadline_then_breaker_open(
    hanging: HangingServer, sample_index: Path, embedder: Any, engine: Any
) -> None:
    from ask_engine.engine import Engine

    settings = Settings(generator="openai", llm_base_url=hanging.base_url, llm_deadline_s=0.5, llm_breaker_failures=2)
    llm_engine = Engine.open(sample_index, settings, embedder=embedder)
    question = QUESTIONS[0]
    expected = engine.ask({"query": question}).to_json()
    reasons = []
    for _ in range(4):
        response, trace = llm_engine.ask_traced({"query": question})
        assert response.to_json() == expected
        assert trace.raw_draft is None
        assert trace.draft is not None and trace.draft.generator == "extractive"
        reasons.append(trace.fallback)
    assert reasons == ["deadline", "deadline", "breaker_open", "breaker_open"]
    status = llm_engine.generator_status()
    assert status["name"] == "openai" and status["state"] == "breaker_open"
    assert status["fallbacks"] == {"breaker_open": 2, "deadline": 2}
    # The extractive engine has no breaker: always up, nothing fell back.
    assert engine.generator_status()["state"] == "up"


# --- the served app, 32 concurrent REST clients ----------------------------------------------------


@pytest.mark.timeout(300)
def test_32_concurrent_clients_against_a_hanging_llm_get_the_extractive_answer(
    hanging: HangingServer, sample_index: Path, embedder: Any, engine: Any
) -> None:
    """The audit's case: a hanging model made 96 of 112 requests 503 at 32 concurrent clients. With the default
    deadline and breaker settings, >= 95% must now be 200 with the extractive answer."""
    from ask_engine.engine import Engine
    from ask_engine.server.app import create_app

    settings = Settings(
        generator="openai",
        llm_base_url=hanging.base_url,
        rate_limit_per_minute=100_000,
        rate_limit_per_hour=1_000_000,
    )
    defaults = Settings()
    assert (settings.llm_deadline_s, settings.llm_breaker_failures, settings.max_concurrency) == (
        defaults.llm_deadline_s,
        defaults.llm_breaker_failures,
        defaults.max_concurrency,
    )
    expected = {q: engine.ask({"query": q}).answer.plain for q in QUESTIONS}
    llm_engine = Engine.open(sample_index, settings, embedder=embedder)
    clients, per_client = 32, 4
    app = create_app(settings=settings, engines={"fjord-fell": llm_engine})
    with serve(app) as server:
        agent = {"UCP-Agent": f'profile="{server.base_url}/.well-known/ucp-demo-agent.json"'}
        start = threading.Barrier(clients)

        def client(n: int) -> list[tuple[int, str, Any]]:
            results: list[tuple[int, str, Any]] = []
            with httpx.Client(base_url=server.base_url, headers=agent, timeout=120) as http:
                start.wait()
                for i in range(per_client):
                    question = QUESTIONS[(n + i) % len(QUESTIONS)]
                    response = http.post(ASK, json={"query": question})
                    results.append((response.status_code, question, response.json()))
            return results

        with ThreadPoolExecutor(clients) as pool:
            results = [r for rs in pool.map(client, range(clients)) for r in rs]
        health = httpx.get(server.base_url + "/healthz", timeout=30).json()

    total = clients * per_client
    statuses = Counter(status for status, _, _ in results)
    assert len(results) == total
    assert statuses[200] / total >= 0.95, statuses
    for status, question, body in results:
        if status == 200:
            assert_ask_response(body)
            assert body["answer"]["plain"] == expected[question]
    generator = health["shops"][0]["generator"]
    assert health["status"] == "ok"
    assert generator["name"] == "openai" and generator["state"] == "breaker_open", generator
    fallbacks = generator["fallbacks"]
    assert set(fallbacks) <= {"deadline", "breaker_open"}, fallbacks
    assert fallbacks.get("deadline", 0) + fallbacks.get("breaker_open", 0) == statuses[200]
    # The breaker, not luck: only the first wave (one call per engine worker, plus a few in flight while it opened)
    # reached the hanging server; every later request skipped it.
    assert fallbacks["deadline"] == hanging.accepted
    assert hanging.accepted <= settings.max_concurrency + settings.llm_breaker_failures
    assert fallbacks["breaker_open"] >= total - hanging.accepted - statuses.get(503, 0)
    print(json.dumps({"statuses": dict(statuses), "fallbacks": fallbacks, "llm_calls": hanging.accepted}))
