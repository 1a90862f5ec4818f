"""The one exception tree of ask_engine.

    AskEngineError
    ├── InvalidInput            a request broke the schema or a limit (carries `invalid_input` items with JSONPath)
    ├── SourceError             a shop source file is malformed (names the file and the field or line)
    ├── IndexUnusable           an index folder is missing, incomplete, damaged or built with another model
    │                           (`IndexError_` is the old name, kept as an alias)
    ├── ConfigError             settings or a config file are invalid
    ├── BackendError            an embedding/LLM/vector backend failed
    │   └── GeneratorUnavailable    the answer backend (LLM) could not give an answer
    │       ├── GeneratorDeadline       it did not answer within the request's deadline budget
    │       └── GeneratorBypassed       it was not called: its circuit breaker is open
    ├── StoreError              the conversation/idempotency store failed (fail closed)
    ├── CaseError               an eval case file line is malformed (names the file and line)
    ├── AuthError               a served request has no or a wrong agent key (REST 401, MCP -32000)
    └── NegotiationError        UCP profile negotiation failed (carries its REST status and JSON-RPC code)

Guard outcomes (operation requested, disclosure, not recorded) are data in the response, never exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


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


class IndexUnusable(AskEngineError):
    """An index folder is missing, incomplete, damaged, or incompatible with the configured model."""


IndexError_ = IndexUnusable  # the old name, kept for compatibility


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


class CaseError(AskEngineError):
    """A case file line is malformed; the message names the file and line."""


# --- served requests -------------------------------------------------------------------------------

CHALLENGE = 'Bearer realm="ucp"'  # the WWW-Authenticate challenge of a 401


class AuthError(AskEngineError):
    """No or a wrong agent key: REST 401 with `WWW-Authenticate`, MCP -32000 "Unauthorized"."""

    def __init__(self, message: str, *, invalid: bool = False) -> None:
        super().__init__(message)
        # RFC 6750 §3: a presented but wrong token is `invalid_token`; a missing one gets the bare challenge.
        self.www_authenticate = f'{CHALLENGE}, error="invalid_token"' if invalid else CHALLENGE


NegotiationCode = Literal[
    "invalid_profile_url",
    "profile_unreachable",
    "profile_malformed",
    "version_unsupported",
    "capabilities_incompatible",
]

_HTTP_STATUS: dict[str, int] = {
    "invalid_profile_url": 400,
    "profile_unreachable": 424,
    "profile_malformed": 422,
    "version_unsupported": 422,
    "capabilities_incompatible": 200,  # a business outcome: a UCP error_response, not a transport error
}
MCP_DISCOVERY_ERROR = -32001


class NegotiationError(AskEngineError):
    """Negotiation failed; carries what the transports need to answer in the protocol's shape."""

    def __init__(self, code: NegotiationCode, content: str, *, version: str | None = None) -> None:
        super().__init__(f"{code}: {content}")
        self.code: str = code
        self.http_status: int = _HTTP_STATUS[code]
        self.content: str = content
        self.version: str | None = version  # the protocol version in play, when one was selected

    @property
    def mcp_code(self) -> int | None:
        """JSON-RPC error code (-32001), or None for capabilities_incompatible (a tool result, not an error)."""
        return None if self.code == "capabilities_incompatible" else MCP_DISCOVERY_ERROR

    @property
    def mcp_message(self) -> str:
        """JSON-RPC `error.message` as the spec's examples word it."""
        return "Protocol version not supported" if self.code == "version_unsupported" else "UCP discovery failed"

    def copy(self) -> NegotiationError:
        """A fresh instance (cached failures are raised anew, not re-raised with a growing traceback)."""
        return NegotiationError(self.code, self.content, version=self.version)  # type: ignore[arg-type]

    def body(self) -> dict[str, Any]:
        """REST error body and JSON-RPC `error.data`: {"code", "content"}."""
        return {"code": self.code, "content": self.content}

    def error_response(self, version: str) -> dict[str, Any]:
        """The UCP `error_response` form (REST 200 body / MCP structuredContent for capabilities_incompatible)."""
        return {
            "ucp": {"version": self.version or version, "status": "error", "capabilities": {}},
            "messages": [{"type": "error", "code": self.code, "content": self.content, "severity": "unrecoverable"}],
        }
