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
    ├── NegotiationError        UCP profile negotiation failed (carries its REST status and JSON-RPC code)
    └── ProtocolError           a request a transport must refuse: one table gives its HTTP status and JSON-RPC error

Guard outcomes (operation requested, disclosure, not recorded) are data in the response, never exceptions.
"""

from __future__ import annotations

from collections.abc import Mapping
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


@dataclass(frozen=True)
class _Kind:
    http_status: int
    jsonrpc_code: int | None  # None: not an error over MCP but a tool result
    jsonrpc_message: str
    severity: str


_KINDS: dict[str, _Kind] = {
    "invalid_input": _Kind(400, -32602, "Invalid params", "requires_buyer_input"),
    "invalid_profile_url": _Kind(400, -32001, "UCP discovery failed", "unrecoverable"),
    "profile_unreachable": _Kind(424, -32001, "UCP discovery failed", "recoverable"),
    "profile_malformed": _Kind(422, -32001, "UCP discovery failed", "unrecoverable"),
    "version_unsupported": _Kind(422, -32001, "Protocol version not supported", "unrecoverable"),
    "capabilities_incompatible": _Kind(200, None, "", "unrecoverable"),
    "unauthorized": _Kind(401, -32000, "Unauthorized", "unrecoverable"),
    "rate_limited": _Kind(429, -32000, "Rate limit exceeded", "recoverable"),
    "idempotency_conflict": _Kind(409, -32000, "Idempotency key reused with a different payload", "unrecoverable"),
    "unavailable": _Kind(503, -32000, "Service temporarily unavailable", "recoverable"),
    "internal_error": _Kind(500, -32603, "Internal error", "recoverable"),
}


class ProtocolError(AskEngineError):
    """A request the transport must refuse: REST maps it to an HTTP status, MCP to a JSON-RPC error.

    `capabilities_incompatible` is the one exception: a business outcome answered with an error_response body
    (HTTP 200 / a tool result).
    """

    def __init__(
        self,
        code: str,
        content: str,
        *,
        messages: list[dict[str, Any]] | None = None,
        retry_after: int | None = None,
        version: str | None = None,
        continue_url: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(f"{code}: {content}")
        self._headers = dict(headers or {})
        self.code = code
        self.content = content
        self._messages = messages
        self.retry_after = retry_after
        self.version = version
        self.continue_url = continue_url
        self._kind = _KINDS[code]

    @property
    def http_status(self) -> int:
        return self._kind.http_status

    @property
    def jsonrpc_code(self) -> int | None:
        return self._kind.jsonrpc_code

    @property
    def jsonrpc_message(self) -> str:
        return self._kind.jsonrpc_message

    @property
    def is_result(self) -> bool:
        """True when this is answered as a normal result carrying an error_response (capabilities_incompatible)."""
        return self._kind.jsonrpc_code is None

    def messages(self) -> list[dict[str, Any]]:
        if self._messages:
            return self._messages
        return [{"type": "error", "code": self.code, "content": self.content, "severity": self._kind.severity}]

    def body(self, default_version: str) -> dict[str, Any]:
        """The UCP error_response: {ucp: {version, status: "error"}, messages: [...], continue_url?}."""
        ucp: dict[str, Any] = {"version": self.version or default_version, "status": "error"}
        if self.code == "capabilities_incompatible":
            ucp["capabilities"] = {}
        body: dict[str, Any] = {"ucp": ucp, "messages": self.messages()}
        if self.continue_url:
            body["continue_url"] = self.continue_url
        return body

    def jsonrpc_data(self) -> Any:
        """`error.data`: the invalid_input messages for -32602, else {code, content, retry_after?, continue_url?}."""
        if self.code == "invalid_input":
            return self.messages()
        data: dict[str, Any] = {"code": self.code, "content": self.content}
        if self.retry_after is not None:
            data["retry_after"] = self.retry_after
        if self.continue_url:
            data["continue_url"] = self.continue_url
        return data

    def http_headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
        if self.code == "unauthorized":
            headers["WWW-Authenticate"] = 'Bearer realm="ucp"'
        headers.update(self._headers)
        return headers
