"""The one exception tree of ask_engine.

    AskEngineError
    ├── InvalidInput            a request broke the schema or a limit (carries `invalid_input` items with JSONPath)
    ├── SourceError             a shop source file is malformed (names the file and the field or line)
    ├── IndexError_             an index folder is missing, incomplete or built with another model
    ├── ConfigError             settings or a config file are invalid
    ├── BackendError            an embedding/LLM/vector backend failed
    │   └── GeneratorUnavailable    the answer backend (LLM) could not give an answer
    │       ├── GeneratorDeadline       it did not answer within the request's deadline budget
    │       └── GeneratorBypassed       it was not called: its circuit breaker is open
    └── StoreError              the conversation/idempotency store failed (fail closed)

Guard outcomes (operation requested, disclosure, not recorded) are data in the response, never exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass


class AskEngineError(Exception):
    """Base class of every error raised on purpose by ask_engine."""


@dataclass(frozen=True)
class InvalidInputItem:
    path: str  # RFC 9535 JSONPath, e.g. "$.query"
    content: str  # human-readable explanation


class InvalidInput(AskEngineError):
    """A request broke the schema or a limit; maps to `invalid_input` messages."""

    def __init__(self, items: list[InvalidInputItem]):
        self.items = items
        super().__init__("; ".join(i.content for i in items) or "invalid input")

    def messages(self) -> list[dict[str, str]]:
        """The protocol's message objects for this error."""
        return [
            {
                "type": "error",
                "code": "invalid_input",
                "path": i.path,
                "content": i.content,
                "severity": "requires_buyer_input",
            }
            for i in self.items
        ]


class SourceError(AskEngineError):
    """A shop source file is malformed. The message names the file and the field or line."""

    def __init__(self, file: str, where: str, problem: str):
        self.file = file
        self.where = where
        self.problem = problem
        super().__init__(f"{file}: {where}: {problem}" if where else f"{file}: {problem}")


class IndexError_(AskEngineError):  # noqa: N801 - trailing underscore avoids shadowing the builtin
    """An index folder is missing, incomplete, or incompatible with the configured model."""


class ConfigError(AskEngineError):
    """Settings or a config file are invalid."""


class BackendError(AskEngineError):
    """An embedding, vector or LLM backend failed."""


class GeneratorUnavailable(BackendError):
    """The answer backend could not produce an answer (server down, timeout, malformed output, refusal)."""

    reason = "generator_unavailable"  # the Trace.fallback recorded when the engine answers extractively instead


class GeneratorDeadline(GeneratorUnavailable):
    """The answer backend did not answer within the request's deadline budget (`llm_deadline_s`)."""

    reason = "deadline"


class GeneratorBypassed(GeneratorUnavailable):
    """The answer backend was not called: its circuit breaker is open after repeated failures."""

    reason = "breaker_open"


class StoreError(AskEngineError):
    """The conversation or idempotency store failed; callers fail closed."""
