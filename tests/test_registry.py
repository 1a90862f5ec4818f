"""registry.py: every kind of protocols.py has its built-ins; Settings chooses backends by plain name, so a plug-in
generator registered by a real entry point is selectable, and the guard applies because of what it declares."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ask_engine import protocols, registry
from ask_engine.config import Settings
from ask_engine.engine import Engine
from ask_engine.errors import ConfigError
from ask_engine.generators import ExtractiveGenerator

BOAST = "Every customer gets 90% off the Latrigg Grid Fleece today."

# A plug-in package as a third party would ship it: a module and a dist-info with entry_points.txt.
PLUGIN = f'''
from ask_engine.types import Draft, Sentence


class Boasting:
    """Claims something no evidence says, citing the first passage."""

    name = "boasting"

    def __init__(self, settings=None, *, embedder=None):
        self.settings = settings

    def generate(self, task):
        used = (task.evidence[0].passage.doc_id,) if task.evidence else ()
        return Draft(sentences=(Sentence({BOAST!r}, cites=(1,)),), generator=self.name, used_doc_ids=used)


class Declared(Boasting):
    """The same, but declaring that it only quotes evidence: the guard takes it at its word."""

    name = "declared"
    grounded_by_construction = True
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    (tmp_path / "ask_engine_test_plugin.py").write_text(PLUGIN, "utf-8")
    dist = tmp_path / "ask_engine_test_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ask-engine-test-plugin\nVersion: 1.0\n", "utf-8")
    (dist / "entry_points.txt").write_text(
        "[ask_engine.generator]\n"
        "boasting = ask_engine_test_plugin:Boasting\n"
        "declared = ask_engine_test_plugin:Declared\n",
        "utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("ask_engine_test_plugin", None)


def test_every_protocol_has_a_registry_kind_with_a_builtin() -> None:
    declared = {
        name
        for name, obj in vars(protocols).items()
        if inspect.isclass(obj) and getattr(obj, "_is_protocol", False) and obj.__module__ == protocols.__name__
    }
    assert set(registry.KINDS.values()) == declared
    for kind, protocol_name in registry.KINDS.items():
        assert registry.builtin_names(kind), f"{kind} ({protocol_name}) has no built-in backend"
        for name in registry.builtin_names(kind):
            assert inspect.isclass(registry.lookup(kind, name))


def test_an_unknown_kind_or_name_is_a_config_error_naming_what_is_known() -> None:
    with pytest.raises(ConfigError, match="known: extractive, openai"):
        Settings.load(generator="extractve")
    with pytest.raises(ConfigError, match="sentence-transformers"):
        Settings.load(embedder="nope")
    with pytest.raises(ConfigError, match="unknown backend kind"):
        registry.names("reranker")


def test_the_extractive_generator_declares_it_is_grounded_by_construction() -> None:
    assert ExtractiveGenerator.grounded_by_construction is True
    assert not getattr(registry.lookup("generator", "openai"), "grounded_by_construction", False)


def test_a_plugin_generator_registered_by_entry_point_is_selectable_by_name(
    plugin: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert {"boasting", "declared"} <= set(registry.names("generator"))
    assert Settings(generator="boasting").generator == "boasting"
    monkeypatch.setenv("ASK_ENGINE_GENERATOR", "boasting")
    settings = Settings.load()
    assert settings.generator == "boasting"
    assert type(registry.create("generator", settings.generator, settings)).__name__ == "Boasting"


def test_a_plugin_generator_is_guarded(plugin: None, sample_index: Path, embedder: Any) -> None:
    engine = Engine.open(sample_index, Settings(generator="boasting"), embedder=embedder)
    assert type(engine.generator).__name__ == "Boasting"
    response, trace = engine.ask_traced({"query": "How much is the Latrigg Grid Fleece?"})
    assert trace.raw_draft is not None and trace.raw_draft.sentences[0].text == BOAST
    assert [s.text for s in trace.removed] == [BOAST]
    assert trace.fallback == "ungrounded"
    assert "90%" not in response.answer.plain
    assert trace.draft is not None and trace.draft.generator == "extractive"


def test_the_guard_follows_what_a_generator_declares_not_its_name(
    plugin: None, sample_index: Path, embedder: Any
) -> None:
    engine = Engine.open(sample_index, Settings(generator="declared"), embedder=embedder)
    response, trace = engine.ask_traced({"query": "How much is the Latrigg Grid Fleece?"})
    assert trace.removed == () and trace.fallback is None
    assert BOAST in response.answer.plain


def test_engine_open_takes_the_embedder_from_the_registry_by_settings_name(
    sample_index: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Settings] = []

    def factory(*, settings: Settings) -> Any:
        made.append(settings)
        return embedder

    monkeypatch.setitem(registry._REGISTERED, "embedder", {"session-model": factory})
    settings = Settings(embedder="session-model")
    engine = Engine.open(sample_index, settings)
    assert engine.embedder is embedder and made == [settings]
    assert engine.ask({"query": "Do you ship to Norway?"}).answer.plain
