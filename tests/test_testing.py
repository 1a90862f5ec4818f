"""testing.py: the shipped fakes, and the contract kits run against every built-in backend (and the fakes)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2
import pytest

from ask_engine import registry
from ask_engine.config import Settings
from ask_engine.engine import Engine
from ask_engine.errors import GeneratorUnavailable
from ask_engine.testing import (
    ContractError,
    HashEmbedder,
    MemoryStore,
    ScriptedGenerator,
    check_conversation_store,
    check_embedder,
    check_generator,
    check_idempotency_store,
    check_lexical_index,
    check_vector_index,
    sample_task,
)
from ask_engine.types import Passage

# --------------------------------------------------------------------------------------------- embedders


def test_the_real_embedder_keeps_the_embedder_contract(embedder: Any) -> None:
    check_embedder(embedder)


def test_the_hash_embedder_keeps_the_embedder_contract() -> None:
    check_embedder(HashEmbedder())
    check_embedder(registry.create("embedder", "hash", Settings()))


def test_a_broken_embedder_fails_the_contract_naming_the_promise() -> None:
    class Unnormalised(HashEmbedder):
        def embed_query(self, text: str) -> Any:
            return super().embed_query(text) * 2

    with pytest.raises(ContractError, match="L2-normalised"):
        check_embedder(Unnormalised())


# --------------------------------------------------------------------------------------------- indexes


@pytest.mark.parametrize("name", registry.builtin_names("vector_index"))
def test_every_builtin_vector_index_keeps_the_contract(name: str) -> None:
    factory = registry.lookup("vector_index", name)
    check_vector_index(lambda dimension: factory(dimension))


def _passages(rows: Sequence[tuple[str, str]]) -> list[Passage]:
    return [Passage(id=i, doc_id=i, text=t, title="", url="", kind="page", link_type="page") for i, t in rows]


@pytest.mark.parametrize("name", registry.builtin_names("lexical_index"))
def test_every_builtin_lexical_index_keeps_the_contract(name: str) -> None:
    factory = registry.lookup("lexical_index", name)
    check_lexical_index(lambda rows: factory.build(_passages(rows)))


# --------------------------------------------------------------------------------------------- generators


def _llm_stub(content: str) -> Any:
    """The OpenAI-compatible generator over an HTTP seam that answers every completion with `content`."""
    from openai import OpenAI

    from ask_engine.llm import OpenAICompatibleGenerator

    def handler(request: httpx2.Request) -> httpx2.Response:
        message = {"role": "assistant", "content": content}
        body = {"id": "c", "object": "chat.completion", "created": 0, "model": "m"}
        body["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
        return httpx2.Response(200, json=body)

    base_url = f"http://llm-{uuid.uuid4().hex[:8]}.test/v1"
    client = OpenAI(
        base_url=base_url,
        api_key="k",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    return OpenAICompatibleGenerator(Settings(llm_base_url=base_url), client=client)


def test_every_builtin_generator_keeps_the_contract(embedder: Any) -> None:
    assert registry.builtin_names("generator") == ["extractive", "openai"]
    check_generator(registry.create("generator", "extractive", Settings(), embedder=embedder))
    check_generator(_llm_stub(json.dumps({"answer": "Yes, the Tarn boot is waterproof [1].", "citations": [1]})))
    # no server configured: GeneratorUnavailable is the contract's way of saying "cannot answer"
    check_generator(registry.create("generator", "openai", Settings()))


def test_the_scripted_generator_keeps_the_contract_and_says_what_it_is_told() -> None:
    generator = ScriptedGenerator(["It is waterproof.", "It is rubber."])
    check_generator(generator)
    draft = generator.generate(sample_task())
    assert [s.text for s in draft.sentences] == ["It is waterproof.", "It is rubber."]
    assert {s.cites for s in draft.sentences} == {(1,)} and draft.used_doc_ids == ("tarn",)
    assert generator.tasks[-1].query == "Are the Tarn boots waterproof?"


def test_a_generator_citing_evidence_it_was_not_given_fails_the_contract() -> None:
    from ask_engine.types import Draft, Sentence

    with pytest.raises(ContractError, match="cites only evidence numbers"):
        check_generator(ScriptedGenerator(lambda task: Draft(sentences=(Sentence("Yes.", cites=(7,)),))))


def test_a_scripted_generator_is_guarded_and_a_failing_one_falls_back(sample_index: Path, embedder: Any) -> None:
    boast = ScriptedGenerator("Every customer gets 90% off the Latrigg Grid Fleece today.")
    response, trace = Engine.open(sample_index, embedder=embedder, generator=boast).ask_traced(
        {"query": "How much is the Latrigg Grid Fleece?"}
    )
    assert trace.fallback == "ungrounded" and "90%" not in response.answer.plain

    def down(task: Any) -> Any:
        raise GeneratorUnavailable("down")

    _, trace = Engine.open(sample_index, embedder=embedder, generator=ScriptedGenerator(down)).ask_traced(
        {"query": "Do you ship to Norway?"}
    )
    assert trace.fallback == "generator_unavailable" and trace.draft is not None


# --------------------------------------------------------------------------------------------- stores


def _store(kind: str, name: str, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    factory = registry.lookup(kind, name)
    if name == "sqlite":
        return factory(tmp_path / f"{name}.sqlite3")
    if name == "redis":  # skipped, saying why, where no Redis answers
        return factory(request.getfixturevalue("redis_url"), prefix=request.getfixturevalue("redis_prefix"))
    return factory()


@pytest.mark.parametrize("name", registry.builtin_names("conversation_store"))
def test_every_builtin_conversation_store_keeps_the_contract(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    check_conversation_store(_store("conversation_store", name, tmp_path, request))


@pytest.mark.parametrize("name", registry.builtin_names("idempotency_store"))
def test_every_builtin_idempotency_store_keeps_the_contract(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    check_idempotency_store(_store("idempotency_store", name, tmp_path, request))


def test_the_builtin_stores_are_the_sqlite_default_redis_and_the_memory_fake() -> None:
    for kind in ("conversation_store", "idempotency_store"):
        assert registry.builtin_names(kind) == ["memory", "redis", "sqlite"]
        assert registry.lookup(kind, "memory") is MemoryStore


def test_the_memory_store_carries_a_conversation_through_the_engine(sample_index: Path, embedder: Any) -> None:
    engine = Engine.open(sample_index, embedder=embedder, store=MemoryStore())
    first = engine.ask({"query": "Tell me about the Tarn Wellington Boot"}, asker="agent-1")
    assert first.conversation is not None
    follow = engine.ask(
        {"query": "and how much is it?", "conversation": {"id": first.conversation.id}}, asker="agent-1"
    )
    assert follow.conversation is not None and follow.conversation.id == first.conversation.id
    assert "£" in follow.answer.plain
